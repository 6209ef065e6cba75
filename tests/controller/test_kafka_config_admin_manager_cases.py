"""The request checks of Kafka's ConfigAdminManagerTest that kraftsim models.

In Kafka a broker receives IncrementalAlterConfigs, checks it (ConfigAdminManager's
preprocess: a config key given twice, a null value, the resource type, and for a
BROKER resource whether the change is allowed dynamically and its values) and forwards
what passes to the controller. kraftsim has no forwarding broker: a client's
IncrementalAlterConfigs goes to the active controller, whose operation
(:class:`~controller.operations.configs.IncrementalAlterConfigs`) makes the same checks,
with Kafka's errors, before it writes ConfigRecords. One kraftsim operation carries one
resource, so Kafka's "one request, many resources" cases have no counterpart.

Not ported:
- testCopyWithoutPreprocessedForIncremental, testCopyWithoutPreprocessedForLegacy,
  testReassembleIncrementalResponse, testReassembleLegacyResponse: the request split
  between a broker and the controller and the responses merged; kraftsim has no
  forwarding broker and one resource per operation.
- testValidateResourceNameIsCurrentNodeId: a broker checks that a BROKER resource names
  itself; kraftsim's controller takes any registered broker or controller id (see
  test_kafka_controller_configuration_validator_cases.py).
- testPreprocessIncrementalWithUnauthorizedBrokerLoggerChanges,
  testPreprocessIncrementalWithLoggerChanges, testPreprocessLegacyWithBrokerLoggerChanges:
  BROKER_LOGGER (log4j levels) is not modelled; kraftsim refuses the resource type.
- testPreprocessIncrementalWithDuplicates, testPreprocessLegacyWithDuplicates: the same
  resource twice in one request; a kraftsim operation has one resource.
- testPreprocessLegacyWithNulls, testPreprocessLegacyWithUnknownResource: legacy
  AlterConfigs (the whole config replaced) is not modelled, only IncrementalAlterConfigs.
- testPreprocessIncrementalWithUnknownResource: Kafka's broker names the type by its id
  ("Unknown resource type 0"); kraftsim answers as Kafka's controller does, by name
  ("Unknown resource type UNKNOWN", ported in
  test_kafka_controller_configuration_validator_cases.py::test_unknown_resource_type).
"""

from __future__ import annotations

import pytest

from controller.operations import IncrementalAlterConfigs
from controller.operations.configs import ConfigChange
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, TopicRecord

from .kafka_cases import brokers, image_of, refusal, run


def _image() -> MetadataImage:
    """Brokers 0, 1 and 2; topic a."""
    return image_of([*brokers(0, 1, 2), TopicRecord("a", "AAAAAAAAAAAAAAAAAAAAAA")])


@pytest.mark.parametrize(("kind", "name", "key", "op"), [
    (BROKER_RESOURCE, "2", "min.insync.replicas", "SET"),
    (BROKER_RESOURCE, "", "min.insync.replicas", "SET"),
    (TOPIC_RESOURCE, "a", "retention.ms", "SET"),
    (TOPIC_RESOURCE, "a", "cleanup.policy", "APPEND"),
    (TOPIC_RESOURCE, "a", "cleanup.policy", "SUBTRACT"),
])
def test_preprocess_incremental_with_nulls(kind: int, name: str, key: str, op: str) -> None:
    """testPreprocessIncrementalWithNulls: a change other than a DELETE without a value
    is INVALID_REQUEST, naming the keys; on any resource type, before the resource's name
    or the value is looked at."""
    changes = (ConfigChange(key, None, op),)
    error = refusal(IncrementalAlterConfigs(kind, name, changes), _image())
    assert (error.code, error.message) == (
        "INVALID_REQUEST", f"Null value not supported for : {key}")
    # ahead of a bad resource name and of the other keys' values
    error = refusal(IncrementalAlterConfigs(BROKER_RESOURCE, "x", (
        ConfigChange("min.insync.replicas", "0"), ConfigChange("message.max.bytes", None),
        ConfigChange("num.io.threads", None, "DELETE"),
        ConfigChange("background.threads", None, "APPEND"))), _image())
    assert (error.code, error.message) == (
        "INVALID_REQUEST", "Null value not supported for : message.max.bytes, "
                           "background.threads")


def test_preprocess_incremental_delete_needs_no_value() -> None:
    """testPreprocessIncrementalWithNulls, its other side: a DELETE has no value and
    passes."""
    image, _, _ = run(IncrementalAlterConfigs(BROKER_RESOURCE, "1", (
        ConfigChange("min.insync.replicas", "2"),)), _image())
    image, records, _ = run(IncrementalAlterConfigs(BROKER_RESOURCE, "1", (
        ConfigChange("min.insync.replicas", None, "DELETE"),)), image)
    assert records == [ConfigRecord(BROKER_RESOURCE, "1", "min.insync.replicas", None)]
    assert not image.configs.get((BROKER_RESOURCE, "1"))


@pytest.mark.parametrize(("keys", "duplicated"), [
    (("foo",), False),
    (("foo", "foo"), True),
    (("foo", "bar", "baz"), False),
    (("foo", "bar", "baz", "foo"), True),
])
def test_contains_duplicates(keys: tuple[str, ...], duplicated: bool) -> None:
    """testContainsDuplicates: a key given twice in one resource's changes is refused
    (INVALID_REQUEST) whatever the changes are; otherwise the keys go on to be checked
    (these names are no topic's configs). Kafka's empty list is not a case: kraftsim
    refuses an operation without changes."""
    changes = tuple(ConfigChange(key, "1") for key in keys)
    error = refusal(IncrementalAlterConfigs(TOPIC_RESOURCE, "a", changes), _image())
    if duplicated:
        assert (error.code, error.message) == (
            "INVALID_REQUEST", "Error due to duplicate config keys")
    else:
        assert (error.code, error.message) == (
            "INVALID_CONFIG", f"Unknown topic config name: {keys[0]}")
