"""How the controller checks a config resource and its configs, following the cases of
Kafka's ControllerConfigurationValidatorTest that kraftsim models: a topic resource's
name (not the default "", by Kafka's topic name rules), a broker resource's name (a
Java int, not negative), the resource types kept (TOPIC and BROKER), null topic config
values, unknown topic config names, and turning a topic's remote storage off. As in
Kafka's ConfigurationControlManager, these checks come before the resource's existence
is (a topic not there with a bad config is INVALID_CONFIG, not UNKNOWN_TOPIC_OR_PARTITION).

Not ported:
- testValidClientMetricsConfig, testInvalidSubscriptionNameClientMetricsConfig,
  testInvalidIntervalClientMetricsConfig, testUndefinedConfigClientMetricsConfig,
  testInvalidMatchClientMetricsConfig: no CLIENT_METRICS config resources (KIP-714);
  kraftsim refuses the type (see test_unknown_resource_type).
- testValidGroupConfig, testInvalidGroupNameGroupConfig, testNullGroupConfigValue,
  testInvalidGroupConfig: no GROUP config resources (KIP-848 group configs); refused
  as an unknown resource type too.

Kafka's ConfigSynonymTest (testHoursToMilliseconds, testMinutesToMilliseconds) is not
ported: kraftsim has no config synonyms (a broker config read from another name, e.g.
log.retention.hours for log.retention.ms); each config has one name
(:mod:`controller.operations.config_defs`).
"""

from __future__ import annotations

import pytest

from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, MetadataRecord, TopicRecord

from .kafka_cases import brokers, image_of, refusal, run

FOO = "FOOFOOFOOFOOFOOFOOFOOA"


def _image(*configs: tuple[str, str]) -> MetadataImage:
    """Brokers 0 and 1, topic foo with ``configs`` set."""
    records: list[MetadataRecord] = [*brokers(0, 1), TopicRecord("foo", FOO)]
    records.extend(ConfigRecord(TOPIC_RESOURCE, "foo", k, v) for k, v in configs)
    return image_of(records)


def _alter(kind: int, name: str, *changes: tuple[str, str | None]) -> IncrementalAlterConfigs:
    return IncrementalAlterConfigs(kind, name, tuple(
        ConfigChange(k, v) if v is not None else ConfigChange(k, None, "DELETE")
        for k, v in changes))


def _refused(op: IncrementalAlterConfigs | CreateTopics, image: MetadataImage
             ) -> tuple[str, str]:
    error = refusal(op, image)
    return error.code, error.message


def test_default_topic_resource_is_rejected() -> None:
    """testDefaultTopicResourceIsRejected: the topic resource "" (a default, which
    brokers have and topics have not)."""
    assert _refused(_alter(TOPIC_RESOURCE, "", ("segment.jitter.ms", "10")), _image()) == (
        "INVALID_REQUEST", "Default topic resources are not allowed.")


@pytest.mark.parametrize(("name", "reason"), [
    ("(<-invalid->)", "'(<-invalid->)' contains one or more characters other than ASCII "
                      "alphanumerics, '.', '_' and '-'"),
    ("..", "'..' is not allowed"),
    ("a" * 250, f"the length of '{'a' * 250}' is longer than the max allowed length 249"),
])
def test_invalid_topic_name_rejected(name: str, reason: str) -> None:
    """testInvalidTopicNameRejected: Kafka's Topic.validate on the resource's name, before
    the topic's existence is checked."""
    assert _refused(_alter(TOPIC_RESOURCE, name, ("segment.ms", "10")), _image()) == (
        "INVALID_TOPIC_EXCEPTION", f"Topic name is invalid: {reason}")


@pytest.mark.parametrize(("kind", "shown"), [
    (8, "BROKER_LOGGER"), (16, "CLIENT_METRICS"), (32, "GROUP"), (0, "UNKNOWN"),
    (7, "UNKNOWN")])
def test_unknown_resource_type(kind: int, shown: str) -> None:
    """testUnknownResourceType: BROKER_LOGGER (never persisted in the metadata) and the
    types kraftsim does not keep configs for; an id Kafka does not know is UNKNOWN."""
    assert _refused(_alter(kind, "foo", ("segment.ms", "10")), _image()) == (
        "INVALID_REQUEST", f"Unknown resource type {shown}")


def test_null_topic_config_value() -> None:
    """testNullTopicConfigValue: a CreateTopics config with a null value (an
    IncrementalAlterConfigs DELETE is a deletion, never a null value)."""
    op = CreateTopics((NewTopic("bar", 1, 1, (("segment.jitter.ms", "10"),
                                              ("segment.bytes", None),
                                              ("segment.ms", None))),))
    assert _refused(op, _image()) == (
        "INVALID_CONFIG", "Null value not supported for topic configs: segment.bytes,segment.ms")


def test_valid_topic_config() -> None:
    """testValidTopicConfig: on an existing topic, and on a topic created with them."""
    changes = (("segment.jitter.ms", "1000"), ("segment.bytes", "67108864"))
    image, records, _ = run(_alter(TOPIC_RESOURCE, "foo", *changes), _image())
    assert records == [ConfigRecord(TOPIC_RESOURCE, "foo", k, v) for k, v in changes]
    assert dict(image.configs[(TOPIC_RESOURCE, "foo")]) == dict(changes)
    image, _, _ = run(CreateTopics((NewTopic("bar", 1, 1, changes),)), _image())
    assert dict(image.configs[(TOPIC_RESOURCE, "bar")]) == dict(changes)


def test_invalid_topic_config() -> None:
    """testInvalidTopicConfig: an unknown name among valid ones; checked before the
    topic's existence (Kafka's validator runs before its ConfigResourceExistenceChecker),
    which is checked once the configs pass."""
    changes = (("segment.jitter.ms", "1000"), ("segment.bytes", "67108864"), ("foobar", "abc"))
    for name in ("foo", "notthere"):
        assert _refused(_alter(TOPIC_RESOURCE, name, *changes), _image()) == (
            "INVALID_CONFIG", "Unknown topic config name: foobar")
    assert _refused(_alter(TOPIC_RESOURCE, "notthere", ("segment.bytes", "1")), _image()) == (
        "INVALID_CONFIG", "Invalid value 1 for configuration segment.bytes: Value must be at "
                          "least 14")
    assert _refused(_alter(TOPIC_RESOURCE, "notthere", *changes[:2]), _image()) == (
        "UNKNOWN_TOPIC_OR_PARTITION", "The topic 'notthere' does not exist.")


DISABLE_REFUSED = (
    "INVALID_CONFIG", "It is invalid to disable remote storage without deleting remote data. "
    "If you want to keep the remote data and turn to read only, please set "
    "`remote.storage.enable=true,remote.log.copy.disable=true`. If you want to disable "
    "remote storage and delete all remote data, please set "
    "`remote.storage.enable=false,remote.log.delete.on.disable=true`.")


@pytest.mark.parametrize("was_remote_storage_enabled", [True, False])
def test_disabling_remote_storage_topic_config(was_remote_storage_enabled: bool) -> None:
    """testDisablingRemoteStorageTopicConfig: a topic whose remote storage was on (a
    record replayed from a cluster that had tiered storage; kraftsim's own cluster
    refuses to turn it on) may not turn it off, by a SET to false or a DELETE, unless
    ``remote.log.delete.on.disable`` is true in its new config."""
    off = ("remote.storage.enable", "false")
    if was_remote_storage_enabled:
        image = _image(("remote.storage.enable", "true"))
        assert _refused(_alter(TOPIC_RESOURCE, "foo", off), image) == DISABLE_REFUSED
        assert _refused(_alter(TOPIC_RESOURCE, "foo", ("remote.storage.enable", None)),
                        image) == DISABLE_REFUSED
        assert _refused(_alter(TOPIC_RESOURCE, "foo", off,
                               ("remote.log.delete.on.disable", "false")),
                        image) == DISABLE_REFUSED
        _, records, _ = run(_alter(TOPIC_RESOURCE, "foo", off,
                                   ("remote.log.delete.on.disable", "true")), image)
        assert len(records) == 2
        # Kafka reads the old value with Boolean.parseBoolean: in any case, not trimmed
        assert _refused(_alter(TOPIC_RESOURCE, "foo", off),
                        _image(("remote.storage.enable", "TRUE"))) == DISABLE_REFUSED
        run(_alter(TOPIC_RESOURCE, "foo", off), _image(("remote.storage.enable", " true")))
        # left on, it is refused: tiered storage is off in the cluster
        code, message = _refused(_alter(TOPIC_RESOURCE, "foo", ("retention.ms", "5")), image)
        assert code == "INVALID_CONFIG"
        assert message.startswith("Tiered Storage functionality is disabled in the broker")
    else:
        for image in (_image(), _image(off)):
            _, records, _ = run(_alter(TOPIC_RESOURCE, "foo", off, ("retention.ms", "5")),
                                image)
            assert ConfigRecord(TOPIC_RESOURCE, "foo", "retention.ms", "5") in records


@pytest.mark.parametrize("name", ["blah", "1_0", " 1", "1.0", "", "2147483648", "\u00b2"])
def test_invalid_broker_entity(name: str) -> None:
    """testInvalidBrokerEntity: a broker resource's name is read as Java's
    Integer.valueOf does (a superscript digit is not one: Python's isdigit takes it);
    "" is the cluster default."""
    op = _alter(BROKER_RESOURCE, name, ("min.insync.replicas", "2"))
    if not name:
        run(op, _image())
        return
    assert _refused(op, _image()) == (
        "INVALID_REQUEST", "Unable to parse broker name as a base 10 number.")


def test_invalid_negative_broker_id() -> None:
    """testInvalidNegativeBrokerId; a name with a sign or leading zeros is a node id as
    Java reads it (the record keeps the name as given, as Kafka's does), then the node
    must be a broker or a controller."""
    for name in ("-1", "-2147483648"):
        assert _refused(_alter(BROKER_RESOURCE, name, ("min.insync.replicas", "2")),
                        _image()) == ("INVALID_REQUEST", "Invalid negative broker ID.")
    for name in ("+1", "-0", "01"):
        _, records, _ = run(_alter(BROKER_RESOURCE, name, ("min.insync.replicas", "2")),
                            _image())
        assert records == [ConfigRecord(BROKER_RESOURCE, name, "min.insync.replicas", "2")]
    assert _refused(_alter(BROKER_RESOURCE, "+7", ("min.insync.replicas", "2")), _image()) == (
        "BROKER_ID_NOT_REGISTERED", "No node with id 7 found.")
