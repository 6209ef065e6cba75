"""Kafka's transaction coordinator configs: names, types, defaults and bounds.

Two of Kafka's ``ConfigDef`` tables (Kafka's ``transaction-coordinator``
module) are kept here, each config with its type, default and lower bound:

- ``TransactionStateManagerConfig``: transaction.max.timeout.ms (15 minutes),
  transactional.id.expiration.ms (7 days), the two cleanup intervals (10 s and
  1 h), every one an INT of at least 1; and KIP-939's
  transaction.two.phase.commit.enable (BOOLEAN, false);
- ``TransactionLogConfig``: the ``__transaction_state`` topic's partitions (50),
  replication factor (SHORT, 3), min ISR (2), segment bytes and load buffer size,
  transaction.partition.verification.enable (BOOLEAN, true) and the producer-id
  expiration settings of the data partitions (a day, checked every 10 minutes;
  :class:`sim.txn_cluster.TxnCluster` runs the check), every number at least 1.

:class:`~broker.txn.coordinator.TxnCoordinatorConfig` holds the values kraftsim
uses (its fields name their config, :data:`TXN_CONFIGS` maps each config to its
field); the configs with no field (``field`` None: segment bytes, load buffer
size) are parsed and checked as
Kafka does but change nothing in the simulation. A value is refused with
Kafka's ``ConfigException`` text, ``Invalid value V for configuration K:
REASON`` (:class:`InvalidTxnConfig`).
"""

from __future__ import annotations

from typing import NamedTuple

from metadata.java_int import parse_java_int
from raft.config import ConfigError

INT_MAX = 2**31 - 1
"""Java's Integer.MAX_VALUE: the largest INT config value."""
SHORT_MAX = 2**15 - 1
"""Java's Short.MAX_VALUE: the largest SHORT config value."""
_BOUNDS = {"INT": (-(2**31), INT_MAX), "SHORT": (-(2**15), SHORT_MAX)}
_JAVA_TRIMMED = "".join(map(chr, range(33)))  # Java's String.trim: every char <= ' '


class TxnConfigDef(NamedTuple):
    """One config: Kafka's type, default and ``Range.atLeast`` bound; kraftsim's field."""

    type: str
    """INT, SHORT or BOOLEAN (Kafka's ConfigDef.Type)."""
    default: int | bool
    minimum: int | None
    """The least value allowed (Kafka's Range.atLeast), None: no bound."""
    field: str | None
    """The TxnCoordinatorConfig field that holds it; None: checked, not modelled."""


STATE_MANAGER_CONFIGS: dict[str, TxnConfigDef] = {
    "transactional.id.expiration.ms":
        TxnConfigDef("INT", 604_800_000, 1, "transactional_id_expiration_ms"),
    "transaction.max.timeout.ms": TxnConfigDef("INT", 900_000, 1, "max_timeout_ms"),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms":
        TxnConfigDef("INT", 10_000, 1, "abort_timed_out_interval_ms"),
    "transaction.remove.expired.transaction.cleanup.interval.ms":
        TxnConfigDef("INT", 3_600_000, 1, "remove_expired_interval_ms"),
    "transaction.two.phase.commit.enable":
        TxnConfigDef("BOOLEAN", False, None, "two_phase_commit_enable"),
}
"""Kafka's TransactionStateManagerConfig (with KIP-939's two-phase-commit switch)."""

LOG_CONFIGS: dict[str, TxnConfigDef] = {
    "transaction.state.log.min.isr": TxnConfigDef("INT", 2, 1, "state_log_min_isr"),
    "transaction.state.log.load.buffer.size": TxnConfigDef("INT", 5 * 1024 * 1024, 1, None),
    "transaction.state.log.replication.factor":
        TxnConfigDef("SHORT", 3, 1, "state_log_replication_factor"),
    "transaction.state.log.num.partitions": TxnConfigDef("INT", 50, 1, "num_partitions"),
    "transaction.state.log.segment.bytes": TxnConfigDef("INT", 100 * 1024 * 1024, 1, None),
    "transaction.partition.verification.enable":
        TxnConfigDef("BOOLEAN", True, None, "partition_verification_enable"),
    "producer.id.expiration.ms":
        TxnConfigDef("INT", 86_400_000, 1, "producer_id_expiration_ms"),
    "producer.id.expiration.check.interval.ms":
        TxnConfigDef("INT", 600_000, 1, "producer_id_expiration_check_interval_ms"),
}
"""Kafka's TransactionLogConfig."""

TXN_CONFIGS: dict[str, TxnConfigDef] = {**STATE_MANAGER_CONFIGS, **LOG_CONFIGS}
"""Every transaction config kraftsim knows, by Kafka name."""


class InvalidTxnConfig(ConfigError):
    """A transaction config value Kafka's ConfigDef refuses; ``str()`` is Kafka's text."""

    def __init__(self, name: str, value: object, reason: str) -> None:
        super().__init__(name, reason)
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        self.args = (f"Invalid value {shown} for configuration {name}: {reason}",)


def check_txn_config(name: str, value: int | bool) -> None:
    """Raise InvalidTxnConfig if ``value`` is not a valid value of config ``name``."""
    definition = TXN_CONFIGS[name]
    if definition.type == "BOOLEAN":
        if not isinstance(value, bool):
            raise InvalidTxnConfig(name, value, "Expected value to be either true or false")
        return
    low, high = _BOUNDS[definition.type]
    if isinstance(value, bool) or not low <= value <= high:
        raise InvalidTxnConfig(name, value, f"Not a number of type {definition.type}")
    if definition.minimum is not None and value < definition.minimum:
        raise InvalidTxnConfig(name, value, f"Value must be at least {definition.minimum}")


def parse_txn_config(name: str, text: str) -> int | bool:
    """Config ``name``'s ``text`` parsed by its type (Java's trim first) and checked."""
    definition = TXN_CONFIGS.get(name)
    if definition is None:
        raise ConfigError(name, "not a transaction config")
    trimmed = text.strip(_JAVA_TRIMMED)
    value: int | bool
    if definition.type == "BOOLEAN":
        if trimmed.lower() not in ("true", "false"):
            raise InvalidTxnConfig(name, text, "Expected value to be either true or false")
        value = trimmed.lower() == "true"
    else:
        parsed = parse_java_int(trimmed)  # Short.parseShort reads as parseInt, then bounds
        if parsed is None:
            raise InvalidTxnConfig(name, text, f"Not a number of type {definition.type}")
        value = parsed
    check_txn_config(name, value)
    return value
