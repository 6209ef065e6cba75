"""The upper bounds of what a user can type, in one place.

Every size, time and count that reaches the simulation from a command line,
a shell command or an experiment parameter is checked against one of these
before any work starts, so that a typo of many digits is a one-line error,
never a hang, a memory blow-up or a traceback.
"""

from __future__ import annotations

MAX_DURATION_MS = 30 * 24 * 3_600_000
"""The longest simulated time a run, a tick, a timeout or a fault time may name: 30 days."""
MAX_NODE_ID = (1 << 31) - 1
"""Node ids are Kafka broker/controller ids: int32."""
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
"""A signed 64-bit integer (Spark's LongType, Parquet's INT64): an experiment's seeds."""
MAX_SEED = 10**40 - 1
"""A run's seed only names its random streams: any integer of up to 40 digits."""
MAX_VOTERS = 9
"""Controllers (voters) of one quorum."""
MAX_OBSERVERS = 50
"""Brokers (observers) of one cluster."""
MAX_RANDOM_FAULTS = 1000
"""Faults ``--random-faults`` may draw."""
MAX_PARTITIONS = 1_000_000
"""Partitions (records) one operation may create in total."""
MAX_REPLICATION_FACTOR = MAX_OBSERVERS
"""A replica per broker at most."""
