"""Which broker config values the shell's ``NORMAL`` criteria hide: the ones Kafka's broker
schema (its broker ``ConfigDef``, :mod:`metadata.kafka_config_types`) calls sensitive, a
PASSWORD config or one it does not know, as Kafka's ``KafkaConfigSchema.isSensitive``.

Fixed on the way (the old code printed otherwise): the shell's broker schema was the
controller's 13 configs, so a broker config Kafka knows and prints, such as
``log.flush.interval.ms``, printed ``[redacted]``.
"""

from __future__ import annotations

import pytest

from controller.operations.config_defs import BROKER_CONFIGS, TOPIC_CONFIGS
from metadata.kafka_config_types import BROKER_CONFIG_TYPES
from metadata.schema import ConfigRecord, FeatureLevelRecord
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE
from shell.image_tree import image_dir
from shell.redaction import REDACTED, RedactionCriteria, is_sensitive_config
from shell.tree import Dir, File
from tests.metadata.kafka_image_cases import image_of

BROKER, TOPIC = 4, 2

KNOWN_TO_KAFKA = {  # broker configs kraftsim's controller does not check
    "log.flush.interval.ms": "1000",
    "log.cleaner.io.max.bytes.per.second": "1048576.0",
    "log.retention.check.interval.ms": "300000",
    "auto.create.topics.enable": "false",
    "ssl.keystore.location": "/var/ssl/kafka.keystore.jks",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
}
PASSWORDS = {
    "delegation.token.secret.key", "password.encoder.old.secret", "password.encoder.secret",
    "sasl.jaas.config", "ssl.key.password", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.keystore.password", "ssl.truststore.certificates",
    "ssl.truststore.password", "zookeeper.ssl.keystore.password",
    "zookeeper.ssl.truststore.password",
}
"""Every PASSWORD config of Kafka's broker ConfigDef, checked by hand against its source."""
UNKNOWN = "listener.name.external.ssl.keystore.password"  # a per-listener name: not in the schema
DYNAMIC_QUOTAS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                  "replica.alter.log.dirs.io.max.bytes.per.second")
"""Dynamic broker configs Kafka keeps out of its broker ConfigDef (its schema calls them
sensitive)."""

SETTINGS = {**KNOWN_TO_KAFKA, "ssl.keystore.password": "s3cret", UNKNOWN: "s3cret",
            DYNAMIC_QUOTAS[0]: "10485760"}
IMAGE = image_of([FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS["3.9-IV0"])]
                 + [ConfigRecord(BROKER, "1", key, value) for key, value in SETTINGS.items()])


def cat(key: str, redact: bool | RedactionCriteria = True) -> str:
    """What ``cat /image/configs/BROKER:1/KEY`` prints."""
    node = image_dir(IMAGE, redact=redact)
    for name in ("configs", "BROKER:1", key):
        assert isinstance(node, Dir), name
        child = node.child(name)
        assert child is not None, name
        node = child
    assert isinstance(node, File), key
    return node.text()


@pytest.mark.parametrize("key", sorted(KNOWN_TO_KAFKA))
def test_a_broker_config_kafka_knows_prints(key: str) -> None:
    assert key not in BROKER_CONFIGS
    assert not is_sensitive_config(BROKER, key)
    assert cat(key) == KNOWN_TO_KAFKA[key]


@pytest.mark.parametrize("key", ["ssl.keystore.password", UNKNOWN, DYNAMIC_QUOTAS[0]])
def test_a_password_or_unknown_broker_config_is_hidden(key: str) -> None:
    assert is_sensitive_config(BROKER, key)
    assert cat(key) == REDACTED
    assert cat(key, redact=False) == SETTINGS[key]
    assert cat(key, redact=RedactionCriteria.STRICT) == REDACTED


def test_every_password_config_is_sensitive() -> None:
    assert {key for key, kind in BROKER_CONFIG_TYPES.items() if kind == "PASSWORD"} == PASSWORDS
    assert all(is_sensitive_config(BROKER, key) for key in PASSWORDS)


def test_dynamic_broker_quotas_are_not_in_kafkas_broker_schema() -> None:
    for key in DYNAMIC_QUOTAS:
        assert key not in BROKER_CONFIG_TYPES
        assert is_sensitive_config(BROKER, key)


def test_every_kraftsim_broker_config_is_in_the_table_with_its_type() -> None:
    for key, config in BROKER_CONFIGS.items():
        assert BROKER_CONFIG_TYPES.get(key) == config.type, key
        assert not is_sensitive_config(BROKER, key)


def test_the_table_is_sorted_and_typed() -> None:
    assert list(BROKER_CONFIG_TYPES) == sorted(BROKER_CONFIG_TYPES)
    assert set(BROKER_CONFIG_TYPES.values()) == {
        "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}
    assert len(BROKER_CONFIG_TYPES) == 338


def test_topic_configs_keep_the_controllers_schema() -> None:
    """TOPIC is still judged by the controller's topic table, which lacks only Kafka's
    deprecated ``message.format.version``."""
    assert all(not is_sensitive_config(TOPIC, key) for key in TOPIC_CONFIGS)
    assert is_sensitive_config(TOPIC, "message.format.version")
    assert is_sensitive_config(TOPIC, "log.flush.interval.ms")  # a broker name, not a topic's
