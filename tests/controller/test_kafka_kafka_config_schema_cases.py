"""Kafka's KafkaConfigSchemaTest, against the parts of kraftsim that play Kafka's
``KafkaConfigSchema``: which configs are secrets (:func:`shell.redaction.is_sensitive_config`,
what the shell hides), which ones APPEND and SUBTRACT may change
(:func:`controller.operations.config_defs.is_splittable`) and what an APPEND to a key not
set starts from (``LIST_DEFAULTS``).

Kafka class followed: ``KafkaConfigSchemaTest``
(``metadata/src/test/java/org/apache/kafka/metadata``).
Kafka's test builds a small schema of its own (``foo.bar``, ``baz``, ``quuux``, ...);
kraftsim's schema is Kafka's real one, so the cases use real names of the same types.

Ported: testIsSplittable (a LIST config is, any other or unknown one is not; kraftsim
answered an APPEND to a broker's LIST config, ``log.cleanup.policy``, "its type is not
LIST", as its table of broker LIST configs was empty; the broker schema's types decide
now, and the change is refused as a broker config kraftsim does not model),
testGetConfigValueDefault (an APPEND to a LIST key not set starts from its default; a
key with no default from nothing), testIsSensitive.

Left out: testTranslateConfigTypes, testTranslateConfigSources and
testResolveEffectiveTopicConfig (DescribeConfigs' config entries, types, sources and
synonyms: kraftsim answers no DescribeConfigs).
"""

from __future__ import annotations

import random

import pytest

from controller.errors import ApiError
from controller.operations import OperationContext
from controller.operations.config_defs import is_splittable
from controller.operations.configs import ConfigChange, IncrementalAlterConfigs
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, MetadataRecord, TopicRecord
from shell.redaction import is_sensitive_config


def _records(op: IncrementalAlterConfigs) -> list[MetadataRecord]:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all([TopicRecord("t", "AAAAAAAAAAAAAAAAAAAAAA")])
    return list(op.generate(OperationContext(delta.apply(0, 1), random.Random(1), 1, 0))
                .records)


@pytest.mark.parametrize(("resource", "key", "splittable"), [
    (BROKER_RESOURCE, "log.cleanup.policy", True),      # LIST
    (BROKER_RESOURCE, "sasl.enabled.mechanisms", True),
    (BROKER_RESOURCE, "log.retention.ms", False),        # LONG
    (BROKER_RESOURCE, "foo.baz.quux", False),            # unknown
    (TOPIC_RESOURCE, "cleanup.policy", True),
    (TOPIC_RESOURCE, "leader.replication.throttled.replicas", True),
    (TOPIC_RESOURCE, "retention.ms", False),
    (TOPIC_RESOURCE, "log.cleanup.policy", False),       # a broker name, not a topic's
])
def test_is_splittable(resource: int, key: str, splittable: bool) -> None:
    assert is_splittable(resource, key) is splittable


def test_an_append_to_a_broker_list_config_is_not_refused_for_its_type() -> None:
    with pytest.raises(ApiError) as refused:
        _records(IncrementalAlterConfigs(BROKER_RESOURCE, "", (
            ConfigChange("log.cleanup.policy", "compact", "APPEND"),)))
    assert "not LIST" not in refused.value.message
    assert (refused.value.code, refused.value.message) == (
        "INVALID_CONFIG", "Unknown broker config name: log.cleanup.policy")
    with pytest.raises(ApiError, match=r"Can't APPEND to key log\.retention\.ms because its "
                                       r"type is not LIST\."):
        _records(IncrementalAlterConfigs(BROKER_RESOURCE, "", (
            ConfigChange("log.retention.ms", "5", "APPEND"),)))


def test_get_config_value_default() -> None:
    # cleanup.policy defaults to delete: an APPEND to it unset keeps the default
    assert _records(IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (
        ConfigChange("cleanup.policy", "compact", "APPEND"),))) == [
        ConfigRecord(TOPIC_RESOURCE, "t", "cleanup.policy", "delete,compact")]
    # the throttled replicas default to an empty list
    assert _records(IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (
        ConfigChange("follower.replication.throttled.replicas", "0:1", "APPEND"),))) == [
        ConfigRecord(TOPIC_RESOURCE, "t", "follower.replication.throttled.replicas", "0:1")]


def test_is_sensitive() -> None:
    assert not is_sensitive_config(BROKER_RESOURCE, "log.cleanup.policy")     # a LIST
    assert is_sensitive_config(BROKER_RESOURCE, "ssl.keystore.password")      # PASSWORD
    assert is_sensitive_config(BROKER_RESOURCE, "sasl.jaas.config")           # PASSWORD
    assert is_sensitive_config(BROKER_RESOURCE, "unknown.config.key")
    assert not is_sensitive_config(TOPIC_RESOURCE, "cleanup.policy")
