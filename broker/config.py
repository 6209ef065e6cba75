"""Settings of a broker, with Kafka's names and defaults."""

from __future__ import annotations

import msgspec

from raft.config import ConfigError


class BrokerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """How a broker heartbeats, replicates and answers clients (simulated milliseconds)."""

    heartbeat_interval_ms: int = 2_000
    """broker.heartbeat.interval.ms: time between two BrokerHeartbeat requests."""
    controlled_shutdown_timeout_ms: int = 30_000
    """How long a controlled shutdown may wait for the controller before stopping anyway."""
    replica_lag_time_max_ms: int = 30_000
    """replica.lag.time.max.ms: a follower not caught up for this long leaves the ISR."""
    replica_fetch_backoff_ms: int = 100
    """replica.fetch.backoff.ms: how long a follower waits before fetching again after an
    error."""
    replica_fetch_wait_max_ms: int = 500
    """replica.fetch.wait.max.ms: how long a leader holds a follower's fetch that found
    nothing new (Kafka's DelayedFetch); 0 answers at once."""
    replica_fetch_max_records: int = 500
    """Records one follower fetch returns per partition at most."""
    request_timeout_ms: int = 30_000
    """request.timeout.ms: an acks=all produce not acknowledged by then fails
    REQUEST_TIMED_OUT; an AlterPartition the controller has not answered by then is sent
    again (Kafka's controller channel)."""
    min_insync_replicas: int = 1
    """min.insync.replicas, the cluster default (a topic config overrides it)."""

    def validate(self) -> BrokerConfig:
        """Return self, or raise ConfigError naming the bad setting."""
        for name in ("heartbeat_interval_ms", "replica_lag_time_max_ms",
                     "replica_fetch_backoff_ms", "replica_fetch_max_records",
                     "request_timeout_ms", "min_insync_replicas"):
            if getattr(self, name) < 1:
                raise ConfigError(f"broker.{name}", "must be at least 1")
        if self.replica_fetch_wait_max_ms < 0:
            raise ConfigError("broker.replica_fetch_wait_max_ms", "must be at least 0")
        if self.replica_fetch_wait_max_ms >= self.request_timeout_ms // 10:
            raise ConfigError("broker.replica_fetch_wait_max_ms",
                              "must be below a tenth of request_timeout_ms (a follower's "
                              "fetch times out then)")
        return self
