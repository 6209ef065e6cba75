"""IncrementalAlterConfigs alone: the ConfigRecords of SET and DELETE, and the refusals of
unknown resources, names, operations and values (Kafka's ConfigurationControlManager and
each config's validator: a range's edges, a choice, a list, a ratio, a boolean)."""

from __future__ import annotations

import random

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


def _generate(op: IncrementalAlterConfigs) -> tuple[list[MetadataRecord], object]:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all([TopicRecord("t", "AAAAAAAAAAAAAAAAAAAAAA"),
                      RegisterBrokerRecord(2, "inc-2", broker_epoch=10)])
    generated = op.generate(OperationContext(delta.apply(0, 1), random.Random(1), 1, 0))
    return list(generated.records), generated.response


def test_set_and_delete_write_one_config_record_each() -> None:
    op = IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (
        ConfigChange("retention.ms", "100"), ConfigChange("cleanup.policy", None, "DELETE")))
    assert op.describe() == "IncrementalAlterConfigs(TOPIC:t retention.ms=100 -cleanup.policy)"
    records, response = _generate(op)
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
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", "1", "APPEND"),)),
     "INVALID_REQUEST", "unsupported config operation APPEND"),
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
        ConfigChange("retention.ms", "100", "DELETE"),)))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "retention.ms", None)]
