"""Cases of Kafka's TransactionLogConfigTest, in kraftsim's terms.

Kafka class followed: ``TransactionLogConfigTest``
(``transaction-coordinator/src/test/java/org/apache/kafka/coordinator/transaction``).
Kafka's ``TransactionLogConfig`` is the ConfigDef of the ``__transaction_state``
topic (partitions, replication factor, min ISR, segment bytes, load buffer size)
and of the data partitions' producer state (partition verification, producer-id
expiration). kraftsim's table is ``broker.txn.config.LOG_CONFIGS``; the values
it uses are fields of :class:`~broker.txn.coordinator.TxnCoordinatorConfig`
(partitions, replication factor and min ISR, which ``sim.txn_cluster`` creates
the topic with, as tests/sim/test_txn_scenarios.py checks; the producer-id expiration
and its check interval, which ``sim.txn_cluster`` expires producers with, as
tests/sim/test_kafka_producer_id_expiration_cases.py checks). Segment bytes, load
buffer size and partition verification are parsed and checked as Kafka does but not
modelled (the simulated logs have no segments to size, load at once and do not verify
partitions), so they keep no value.

Not ported:

- ShouldGetDynamicValueFromAbstractConfig: Kafka's config object reads the two dynamic
  configs again at each call (a mock counts the reads); kraftsim's brokers read a
  dynamic producer.id.expiration.ms from their metadata image instead
  (tests/sim/test_kafka_producer_id_expiration_cases.py), and partition verification is
  not modelled; the two values' parsing is tested below.
"""

from __future__ import annotations

import pytest

from broker.txn.config import LOG_CONFIGS, InvalidTxnConfig, parse_txn_config
from broker.txn.coordinator import TxnCoordinatorConfig

KAFKA_NAMES = {
    "transaction.state.log.num.partitions",
    "transaction.state.log.segment.bytes",
    "transaction.state.log.replication.factor",
    "transaction.state.log.min.isr",
    "transaction.state.log.load.buffer.size",
    "transaction.partition.verification.enable",
    "producer.id.expiration.ms",
    "producer.id.expiration.check.interval.ms",
}
"""The eight configs of Kafka's TransactionLogConfig (commit 1eb7644)."""


def test_should_define_all_config_in_config_def() -> None:
    """ShouldDefineAllConfigInConfigDef: the table has exactly Kafka's configs, with
    Kafka's types and defaults; the modelled ones default to the config's fields."""
    assert set(LOG_CONFIGS) == KAFKA_NAMES
    assert {name: (d.type, d.default) for name, d in LOG_CONFIGS.items()} == {
        "transaction.state.log.num.partitions": ("INT", 50),
        "transaction.state.log.segment.bytes": ("INT", 100 * 1024 * 1024),
        "transaction.state.log.replication.factor": ("SHORT", 3),
        "transaction.state.log.min.isr": ("INT", 2),
        "transaction.state.log.load.buffer.size": ("INT", 5 * 1024 * 1024),
        "transaction.partition.verification.enable": ("BOOLEAN", True),
        "producer.id.expiration.ms": ("INT", 86_400_000),
        "producer.id.expiration.check.interval.ms": ("INT", 600_000),
    }
    defaults = TxnCoordinatorConfig()
    for name, definition in LOG_CONFIGS.items():
        assert defaults.kafka_config(name) == definition.default
        if definition.field is not None:
            assert getattr(defaults, definition.field) == definition.default


def test_should_get_static_value_from_class_attribute() -> None:
    """ShouldGetStaticValueFromClassAttribute: the modelled values given are the values
    held; the others are checked and accepted."""
    config = TxnCoordinatorConfig.from_kafka({
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.load.buffer.size": "2",
        "transaction.state.log.replication.factor": "3",
        "transaction.state.log.num.partitions": "4",
        "transaction.state.log.segment.bytes": "5",
        "producer.id.expiration.check.interval.ms": "6",
    })
    assert (config.state_log_min_isr, config.state_log_replication_factor,
            config.num_partitions, config.producer_id_expiration_check_interval_ms) == \
        (1, 3, 4, 6)


@pytest.mark.parametrize("name", sorted(n for n, d in LOG_CONFIGS.items() if d.type != "BOOLEAN"))
def test_every_number_must_be_at_least_one(name: str) -> None:
    """Kafka's ``atLeast(1)`` on every numeric TransactionLogConfig."""
    with pytest.raises(InvalidTxnConfig) as refused:
        TxnCoordinatorConfig.from_kafka({name: "0"})
    assert str(refused.value) == \
        f"Invalid value 0 for configuration {name}: Value must be at least 1"


def test_the_replication_factor_is_a_short() -> None:
    with pytest.raises(InvalidTxnConfig, match="Not a number of type SHORT"):
        TxnCoordinatorConfig.from_kafka({"transaction.state.log.replication.factor": "32768"})
    with pytest.raises(InvalidTxnConfig, match="Not a number of type SHORT"):
        TxnCoordinatorConfig.from_kafka({"transaction.state.log.replication.factor": "-32769"})
    with pytest.raises(InvalidTxnConfig, match="Value must be at least 1"):
        TxnCoordinatorConfig.from_kafka({"transaction.state.log.replication.factor": "-32768"})
    assert TxnCoordinatorConfig.from_kafka(
        {"transaction.state.log.replication.factor": "32767"}
    ).state_log_replication_factor == 32767


def test_the_dynamic_configs_parse_as_kafka_types() -> None:
    """The values ShouldGetDynamicValueFromAbstractConfig reads: false and 88."""
    assert parse_txn_config("transaction.partition.verification.enable", "false") is False
    assert parse_txn_config("producer.id.expiration.ms", "88") == 88
