"""Cases of Kafka's TransactionStateManagerConfigTest, in kraftsim's terms.

Kafka class followed: ``TransactionStateManagerConfigTest``
(``transaction-coordinator/src/test/java/org/apache/kafka/coordinator/transaction``).
Kafka's ``TransactionStateManagerConfig`` is a ``ConfigDef`` of four INT configs
(each ``atLeast(1)``) read once into fields. kraftsim's counterpart is the table
``broker.txn.config.STATE_MANAGER_CONFIGS`` (which also holds KIP-939's
transaction.two.phase.commit.enable, a later addition to Kafka's class) and the
frozen :class:`~broker.txn.coordinator.TxnCoordinatorConfig`, built from
Kafka-named properties by ``from_kafka`` and checked by ``validate``. Kafka's
test checks that every declared name is in the ConfigDef and that the values
are read once; here, that every name maps to a field with Kafka's default and
that the values given are the values used. The bounds themselves are checked
too, through the coordinator: transaction.max.timeout.ms decides which
InitProducerId timeouts get INVALID_TRANSACTION_TIMEOUT.

Not ported: none (the read-once part of ShouldGetStaticValueFromClassAttribute,
Mockito's call counts, has no counterpart: the config is a frozen value).
"""

from __future__ import annotations

import pytest

from broker.txn.config import STATE_MANAGER_CONFIGS, InvalidTxnConfig
from broker.txn.coordinator import TransactionCoordinator, TxnCoordinatorConfig, TxnResult
from raft.config import ConfigError

KAFKA_NAMES = {
    "transaction.max.timeout.ms",
    "transactional.id.expiration.ms",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms",
    "transaction.remove.expired.transaction.cleanup.interval.ms",
}
"""The four configs of Kafka's TransactionStateManagerConfig (commit 1eb7644)."""


def test_should_define_all_config_in_config_def() -> None:
    """ShouldDefineAllConfigInConfigDef: every config has a field, a type and Kafka's
    default, and the defaults are the config's defaults."""
    assert set(STATE_MANAGER_CONFIGS) == KAFKA_NAMES | {"transaction.two.phase.commit.enable"}
    defaults = TxnCoordinatorConfig()
    assert {name: defaults.kafka_config(name) for name in STATE_MANAGER_CONFIGS} == {
        "transaction.max.timeout.ms": 15 * 60 * 1000,
        "transactional.id.expiration.ms": 7 * 24 * 3600 * 1000,
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": 10 * 1000,
        "transaction.remove.expired.transaction.cleanup.interval.ms": 3600 * 1000,
        "transaction.two.phase.commit.enable": False,
    }
    for definition in STATE_MANAGER_CONFIGS.values():
        assert definition.field is not None
        assert getattr(defaults, definition.field) == definition.default
        assert definition.minimum == (None if definition.type == "BOOLEAN" else 1)


def test_should_get_static_value_from_class_attribute() -> None:
    """ShouldGetStaticValueFromClassAttribute: the values given are the values held."""
    config = TxnCoordinatorConfig.from_kafka({
        "transaction.max.timeout.ms": "1",
        "transactional.id.expiration.ms": "2",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "3",
        "transaction.remove.expired.transaction.cleanup.interval.ms": "4",
    })
    assert (config.max_timeout_ms, config.transactional_id_expiration_ms,
            config.abort_timed_out_interval_ms, config.remove_expired_interval_ms) == (1, 2, 3, 4)
    assert config.kafka_config("transaction.max.timeout.ms") == 1


def test_properties_that_are_not_transaction_configs_are_ignored() -> None:
    """A broker's other configs pass through ``from_kafka`` untouched (a broker ignores
    what it does not know); fields can be given alongside."""
    config = TxnCoordinatorConfig.from_kafka({"log.retention.ms": "1", "node.id": "x"},
                                             num_partitions=3)
    assert config == TxnCoordinatorConfig(num_partitions=3)


@pytest.mark.parametrize("name", sorted(KAFKA_NAMES))
@pytest.mark.parametrize("value", ["0", "-1"])
def test_each_interval_and_timeout_must_be_at_least_one(name: str, value: str) -> None:
    """Kafka's ``atLeast(1)`` on each config, with ConfigException's text."""
    with pytest.raises(InvalidTxnConfig) as refused:
        TxnCoordinatorConfig.from_kafka({name: value})
    assert str(refused.value) == \
        f"Invalid value {value} for configuration {name}: Value must be at least 1"
    assert refused.value.field == name


@pytest.mark.parametrize(("value", "reason"), [
    ("2147483648", "Not a number of type INT"),
    ("15m", "Not a number of type INT"),
    ("", "Not a number of type INT"),
    ("1.5", "Not a number of type INT"),
])
def test_a_value_must_be_a_java_int(value: str, reason: str) -> None:
    """Kafka parses INT configs as Java ints: past Integer.MAX_VALUE, units or a
    fraction are refused."""
    with pytest.raises(InvalidTxnConfig) as refused:
        TxnCoordinatorConfig.from_kafka({"transaction.max.timeout.ms": value})
    assert str(refused.value) == \
        f"Invalid value {value} for configuration transaction.max.timeout.ms: {reason}"


def test_values_are_trimmed_and_booleans_take_any_case() -> None:
    config = TxnCoordinatorConfig.from_kafka({
        "transaction.max.timeout.ms": " 2147483647\t",
        "transaction.two.phase.commit.enable": "TRUE"})
    assert (config.max_timeout_ms, config.two_phase_commit_enable) == (2**31 - 1, True)
    # Integer.parseInt reads a sign and decimal digits of any script (not superscripts)
    assert TxnCoordinatorConfig.from_kafka(
        {"transaction.max.timeout.ms": "+\u0661\u0662"}).max_timeout_ms == 12
    with pytest.raises(InvalidTxnConfig, match="Not a number of type INT"):
        TxnCoordinatorConfig.from_kafka({"transaction.max.timeout.ms": "1\u00b2"})
    with pytest.raises(InvalidTxnConfig, match="Not a number of type INT"):
        TxnCoordinatorConfig.from_kafka({"transaction.max.timeout.ms": "!1"})  # not trimmed
    with pytest.raises(InvalidTxnConfig, match="Expected value to be either true or false"):
        TxnCoordinatorConfig.from_kafka({"transaction.two.phase.commit.enable": "yes"})


@pytest.mark.parametrize("field", ["max_timeout_ms", "transactional_id_expiration_ms",
                                   "abort_timed_out_interval_ms", "remove_expired_interval_ms",
                                   "num_partitions", "offsets_num_partitions"])
def test_a_coordinator_refuses_a_config_below_the_bounds(field: str) -> None:
    """``validate`` (run by every coordinator) refuses what Kafka's ConfigDef refuses,
    also when the config is built from fields rather than properties."""
    config = TxnCoordinatorConfig(**{field: 0})
    with pytest.raises(ConfigError, match="Value must be at least 1"):
        config.validate()
    with pytest.raises(ConfigError):
        TransactionCoordinator(0, config, lambda *_: None, lambda: ("NONE", 1))


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("max_timeout_ms", 2**31 - 1, None),
    ("max_timeout_ms", 2**31, "Not a number of type INT"),
    ("max_timeout_ms", -2**31, "Value must be at least 1"),
    ("max_timeout_ms", -2**31 - 1, "Not a number of type INT"),
    ("state_log_replication_factor", 2**15 - 1, None),
    ("state_log_replication_factor", 2**15, "Not a number of type SHORT"),
    ("state_log_replication_factor", -2**15, "Value must be at least 1"),
    ("state_log_replication_factor", -2**15 - 1, "Not a number of type SHORT"),
], ids=["int-max", "past-int-max", "int-min", "below-int-min", "short-max",
        "past-short-max", "short-min", "below-short-min"])
def test_a_config_built_from_fields_holds_its_java_type(field: str, value: int,
                                                       reason: str | None) -> None:
    """A value given as a field is checked as Kafka checks the config's value: within its
    Java type (INT, SHORT) to both ends, then at least 1."""
    config = TxnCoordinatorConfig(**{field: value})
    if reason is None:
        config.validate()
        return
    with pytest.raises(ConfigError) as refused:
        config.validate()
    assert str(refused.value).endswith(f"Invalid value {value} for configuration "
                                       f"{refused.value.field}: {reason}")


def _init_timeout(max_timeout_ms: int, timeout_ms: int) -> TxnResult:
    coordinator = TransactionCoordinator(
        0, TxnCoordinatorConfig.from_kafka({
            "transaction.max.timeout.ms": str(max_timeout_ms),
            "transaction.state.log.num.partitions": "1"}),
        lambda _p, _t, done: done("NONE"), lambda: ("NONE", 7))
    coordinator.become_leader(0, 0, [], 0)
    out: list[TxnResult] = []
    coordinator.handle_init_producer_id("t", timeout_ms, None, 5, out.append)
    return out[0]


@pytest.mark.parametrize(("max_timeout_ms", "timeout_ms", "error"), [
    (900_000, 900_000, "NONE"),
    (900_000, 900_001, "INVALID_TRANSACTION_TIMEOUT"),
    (900_000, 1, "NONE"),
    (900_000, 0, "INVALID_TRANSACTION_TIMEOUT"),
    (900_000, -1, "INVALID_TRANSACTION_TIMEOUT"),
    (1, 1, "NONE"),
    (1, 2, "INVALID_TRANSACTION_TIMEOUT"),
    (60_000, 60_001, "INVALID_TRANSACTION_TIMEOUT"),
])
def test_transaction_max_timeout_bounds_the_init_producer_id_timeout(
        max_timeout_ms: int, timeout_ms: int, error: str) -> None:
    """transaction.max.timeout.ms: a producer's transaction.timeout.ms above it (or not
    positive) gets INVALID_TRANSACTION_TIMEOUT (Kafka's validateTransactionTimeoutMs)
    and nothing is stored."""
    result = _init_timeout(max_timeout_ms, timeout_ms)
    assert result.error == error
    if error == "NONE":
        assert (result.producer_id, result.producer_epoch) == (7, 0)
