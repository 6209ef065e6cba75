"""IncrementalAlterConfigs alone: the ConfigRecords of SET, DELETE, APPEND and SUBTRACT,
and the refusals of unknown resources, names, operations and values (Kafka's
ConfigurationControlManager and each config's validator: a range's edges, a choice, a
list, a ratio, a boolean).

Follows Kafka's ConfigurationControlManagerTest: testIncrementalAlterConfigs,
testIncrementalAlterConfig and testIncrementalAlterMultipleConfigValues are ported
below with kraftsim's configs (``cleanup.policy`` is a LIST, ``retention.ms`` is not);
testReplay is covered by the image tests (tests/metadata/kafka_image_cases.py,
ConfigurationsImageTest); testIncrementalAlterConfigsWithoutExistence by the unknown
resource refusals here; testIncrementalAlterConfigsWithPolicy and
testLegacyAlterConfigs are set aside: kraftsim has no AlterConfigPolicy plug-in and no
legacy (non-incremental) AlterConfigs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from controller.errors import ApiError
from controller.operations import OperationContext
from controller.operations.configs import (
    ConfigChange,
    IncrementalAlterConfigs,
    validate_config,
)
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, MetadataRecord, RegisterBrokerRecord, TopicRecord


def _generate(op: IncrementalAlterConfigs, configs: Sequence[ConfigRecord] = ()
              ) -> tuple[list[MetadataRecord], object]:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all([TopicRecord("t", "AAAAAAAAAAAAAAAAAAAAAA"),
                      RegisterBrokerRecord(2, "inc-2", broker_epoch=10), *configs])
    generated = op.generate(OperationContext(delta.apply(0, 1), random.Random(1), 1, 0))
    return list(generated.records), generated.response


def _topic(*changes: ConfigChange) -> IncrementalAlterConfigs:
    return IncrementalAlterConfigs(TOPIC_RESOURCE, "t", changes)


def test_set_and_delete_write_one_config_record_each() -> None:
    op = _topic(ConfigChange("retention.ms", "100"), ConfigChange("cleanup.policy", None, "DELETE"))
    assert op.describe() == "IncrementalAlterConfigs(TOPIC:t retention.ms=100 -cleanup.policy)"
    records, response = _generate(op, [ConfigRecord(TOPIC_RESOURCE, "t", "cleanup.policy",
                                                    "compact")])
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "retention.ms", "100"),
                       ConfigRecord(TOPIC_RESOURCE, "t", "cleanup.policy", None)]
    assert response == {"resource": "TOPIC:t"}
    for broker in ("", "2"):  # the cluster default, or one registered broker
        records, response = _generate(IncrementalAlterConfigs(
            BROKER_RESOURCE, broker, (ConfigChange("min.insync.replicas", "2"),)))
        assert records == [ConfigRecord(BROKER_RESOURCE, broker, "min.insync.replicas", "2")]
        assert response == {"resource": f"BROKER:{broker}"}


@pytest.mark.parametrize(("op", "code", "message"), [
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "u", (ConfigChange("retention.ms", "1"),)),
     "UNKNOWN_TOPIC_OR_PARTITION", "Topic u does not exist"),
    (IncrementalAlterConfigs(BROKER_RESOURCE, "b1", (ConfigChange("min.insync.replicas", "1"),)),
     "INVALID_REQUEST", "broker id must be a number, not 'b1'"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", ()), "INVALID_REQUEST", "no config change"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", "1", "MERGE"),)),
     "INVALID_REQUEST", "unsupported config operation MERGE"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", "1", "APPEND"),)),
     "INVALID_CONFIG", "Can't APPEND to key retention.ms because its type is not LIST."),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("cleanup.policy", None,
                                                                "SUBTRACT"),)),
     "INVALID_CONFIG", "SUBTRACT cleanup.policy needs a value"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", "1"),
                                                   ConfigChange("retention.ms", None, "DELETE"))),
     "INVALID_REQUEST", "Error due to duplicate config keys"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", None),)),
     "INVALID_CONFIG", "SET retention.ms needs a value"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("no.such", "1"),)),
     "INVALID_CONFIG", "Unknown topic config name: no.such"),
    (IncrementalAlterConfigs(BROKER_RESOURCE, "", (ConfigChange("retention.ms", "1"),)),
     "INVALID_CONFIG", "Unknown broker config name: retention.ms"),
    (IncrementalAlterConfigs(7, "x", (ConfigChange("retention.ms", "1"),)),
     "INVALID_REQUEST", "unsupported config resource type 7"),
])
def test_refusals_name_what_is_wrong(op: IncrementalAlterConfigs, code: str,
                                     message: str) -> None:
    with pytest.raises(ApiError) as refused:
        _generate(op)
    assert refused.value.code == code and message in refused.value.message


@pytest.mark.parametrize(("key", "good", "bad"), [
    ("min.insync.replicas", ["1", "3"], ["0", "-1", "one", "", "1.5"]),
    ("retention.ms", ["-1", "0", "604800000"], ["-2"]),
    ("local.retention.ms", ["-2"], ["-3"]),
    ("segment.bytes", ["14"], ["13"]),
    ("compression.type", ["zstd", "producer"], ["ZSTD", "brotli"]),
    ("cleanup.policy", ["delete", "compact", "compact,delete", "delete, compact"],
     ["", "compact,", "remove"]),
    ("min.cleanable.dirty.ratio", ["0", "0.5", "1"], ["1.01", "-0.1", "half"]),
    # Kafka's ConfigDef reads a BOOLEAN trimmed and in any case
    ("unclean.leader.election.enable", ["true", "false", "True", " FALSE "],
     ["yes", "", "1", "t"]),
    ("leader.replication.throttled.replicas", ["", "0:1,1:2", "*"], []),
])
def test_each_topic_config_value_is_checked(key: str, good: list[str], bad: list[str]) -> None:
    for value in good:
        validate_config(TOPIC_RESOURCE, key, value)
    for value in bad:
        with pytest.raises(ApiError) as refused:
            validate_config(TOPIC_RESOURCE, key, value)
        assert refused.value.code == "INVALID_CONFIG"
        assert refused.value.message == f"Invalid value {value} for configuration {key}"
    validate_config(TOPIC_RESOURCE, key, None)  # a deletion has no value to check


def test_a_delete_ignores_any_value_it_carries() -> None:
    """Kafka's AlterConfigOp DELETE removes the key whatever value the request carries: the
    record is a deletion (null value), never a SET of that value."""
    records, _ = _generate(IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (
        ConfigChange("retention.ms", "100", "DELETE"),)),
        [ConfigRecord(TOPIC_RESOURCE, "t", "retention.ms", "5")])
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "retention.ms", None)]


def _replayed(records: Sequence[MetadataRecord]) -> list[ConfigRecord]:
    return [r for r in records if isinstance(r, ConfigRecord)]


def test_append_to_a_list_then_delete_it() -> None:
    """Kafka's testIncrementalAlterConfigs / testIncrementalAlterConfig: APPEND to a LIST
    key, SUBTRACT from a key that is not a LIST refused, DELETE writes null."""
    records, _ = _generate(_topic(ConfigChange("leader.replication.throttled.replicas",
                                               "0:1", "APPEND")))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "leader.replication.throttled.replicas",
                                    "0:1")]
    refused = _topic(ConfigChange("retention.ms", "abc", "SUBTRACT"))
    with pytest.raises(ApiError, match=r"Can't SUBTRACT to key retention\.ms because its "
                                       r"type is not LIST\."):
        _generate(refused, _replayed(records))
    records, _ = _generate(_topic(ConfigChange("leader.replication.throttled.replicas", "xyz",
                                               "DELETE")), _replayed(records))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "leader.replication.throttled.replicas",
                                    None)]


def test_append_and_subtract_several_items() -> None:
    """Kafka's testIncrementalAlterMultipleConfigValues: items already there are not
    appended again, items not there are not subtracted, and no change writes nothing."""
    key = "follower.replication.throttled.replicas"
    state: list[ConfigRecord] = []

    def alter(op: str, value: str) -> list[MetadataRecord]:
        records, _ = _generate(_topic(ConfigChange(key, value, op)), state)
        state.extend(_replayed(records))
        return records

    assert alter("APPEND", "0:1,0:2,0:3") == [ConfigRecord(TOPIC_RESOURCE, "t", key,
                                                           "0:1,0:2,0:3")]
    assert alter("APPEND", "0:1,0:2") == []
    assert alter("SUBTRACT", "0:1,0:2") == [ConfigRecord(TOPIC_RESOURCE, "t", key, "0:3")]
    assert alter("SUBTRACT", "0:9") == []
    assert state[-1].value == "0:3"


def test_a_list_not_set_starts_from_its_default() -> None:
    records, _ = _generate(_topic(ConfigChange("cleanup.policy", "compact", "APPEND")))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "cleanup.policy", "delete,compact")]
    records, _ = _generate(_topic(ConfigChange("cleanup.policy", "compact,", "APPEND")))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "cleanup.policy", "delete,compact")]
    # the value left is checked as a SET of it would be: cleanup.policy may not be empty
    with pytest.raises(ApiError, match=r"Invalid value  for configuration cleanup\.policy"):
        _generate(_topic(ConfigChange("cleanup.policy", "delete", "SUBTRACT")))


def test_a_topic_key_left_as_it_was_writes_nothing_a_broker_key_always_does() -> None:
    """A topic's SET of its value and DELETE of a key not set write nothing (and are not
    checked); a broker resource gets its records anyway (KAFKA-14136)."""
    setting = [ConfigRecord(TOPIC_RESOURCE, "t", "retention.ms", "100"),
               ConfigRecord(BROKER_RESOURCE, "2", "min.insync.replicas", "2")]
    same = _topic(ConfigChange("retention.ms", "100"), ConfigChange("no.such", None, "DELETE"))
    assert _generate(same, setting) == ([], {"resource": "TOPIC:t"})
    broker = IncrementalAlterConfigs(BROKER_RESOURCE, "2",
                                     (ConfigChange("min.insync.replicas", "2"),))
    assert _generate(broker, setting)[0] == [ConfigRecord(BROKER_RESOURCE, "2",
                                                          "min.insync.replicas", "2")]
    with pytest.raises(ApiError, match=r"Unknown broker config name: no\.such"):
        _generate(IncrementalAlterConfigs(BROKER_RESOURCE, "2",
                                          (ConfigChange("no.such", None, "DELETE"),)), setting)
