"""A topic's config values as the controller checks them, following the cases of Kafka's
LogConfigTest that kraftsim models: every topic config refusing values of the wrong
type or out of range, the compaction lags against each other, the throttled replica
lists, and the remote storage configs while tiered storage is off in the cluster
(Kafka's default, and kraftsim's only setting).

Not ported:
- ensureNoStaticInitializationOrderDependency, testToHtmlTable, testToHtml,
  testToEnrichedRst, testToRst, testGetConfigValue: Java class initialisation and
  ConfigDef's documentation output; kraftsim's configs are a table.
- testKafkaConfigToProps, testTimestampBeforeMaxMsUsesDeprecatedConfig,
  testOverriddenConfigsAsLoggableString: a broker's static config (KafkaConfig: hours
  read as milliseconds, defaults of topic configs from broker configs, deprecated
  fallbacks, redacted logging); kraftsim models no broker-side static config.
- testLocalLogRetentionDerivedProps, testLocalLogRetentionDerivedDefaultProps,
  testLocalLogRetentionProps: the values a broker's LogConfig derives (the local
  retention taken from retention when not set); no log on a broker reads them.
- testValidateBrokerLogConfigs, testEnableRemoteLogStorageOnCompactedTopic, the
  tiered-storage-on half of testEnableRemoteLogStorage, testTopicCreationWithInvalidRetentionTime
  and testTopicCreationWithInvalidRetentionSize, and the local retention against
  retention cases of testInvalidLocalLogRetentionProps: they need tiered storage on in
  the cluster (remote.log.storage.system.enable), which kraftsim does not model; with it
  off any ``remote.storage.enable=true`` is refused first (ported below).
- testInValidRemoteConfigsInZK: ZooKeeper mode.
- testValidateWithMetadataVersionJbodSupport: a broker's log directories (JBOD) against
  metadata.version; kraftsim's brokers have no log directories.
- the ``message.format.version`` case of testFromPropsInvalid: kraftsim leaves out that
  deprecated config (an unknown topic config name to it).
"""

from __future__ import annotations

import pytest

from controller.errors import ApiError
from controller.operations import CreateTopics, NewTopic
from controller.operations.config_defs import TOPIC_CONFIGS, validate_config, validate_topic_config
from metadata.delta import TOPIC_RESOURCE
from metadata.schema import ConfigRecord

from .kafka_cases import brokers, image_of, refusal, run

# testFromPropsInvalid's values, by name; every other config: "not_a_number" and "-1"
INVALID: dict[str, tuple[str, ...]] = {
    "unclean.leader.election.enable": ("not a boolean",),
    "retention.bytes": ("not_a_number",),
    "retention.ms": ("not_a_number",),
    "cleanup.policy": ("true", "foobar"),
    "min.cleanable.dirty.ratio": ("not_a_number", "-0.1", "1.2"),
    "min.insync.replicas": ("not_a_number", "0", "-1"),
    "remote.storage.enable": ("not_a_boolean",),
    "local.retention.ms": ("not_a_number", "-3"),
    "local.retention.bytes": ("not_a_number", "-3"),
    "compression.gzip.level": ("not_a_number", "-2"),
    "compression.lz4.level": ("not_a_number", "-1"),
    "compression.zstd.level": ("not_a_number", "-0.1"),
    "remote.log.copy.disable": ("not_a_number", "remove", "0"),
    "remote.log.delete.on.disable": ("not_a_number", "remove", "0"),
}

KAFKA_TOPIC_CONFIGS = {
    "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes",
    "flush.messages", "flush.ms", "retention.bytes", "retention.ms", "max.message.bytes",
    "index.interval.bytes", "delete.retention.ms", "min.compaction.lag.ms",
    "max.compaction.lag.ms", "file.delete.delay.ms", "min.cleanable.dirty.ratio",
    "cleanup.policy", "unclean.leader.election.enable", "min.insync.replicas",
    "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level", "preallocate", "message.format.version",
    "message.timestamp.type", "message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
    "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
    "message.downconversion.enable", "remote.storage.enable", "local.retention.ms",
    "local.retention.bytes", "remote.log.copy.disable", "remote.log.delete.on.disable"}
"""Kafka's LogConfig.configNames (its LogConfigDef), in which testFromPropsInvalid goes."""


def test_kraftsim_has_kafkas_topic_configs() -> None:
    assert set(TOPIC_CONFIGS) == KAFKA_TOPIC_CONFIGS - {"message.format.version"}


@pytest.mark.parametrize("name", list(TOPIC_CONFIGS))
def test_from_props_invalid(name: str) -> None:
    """testFromPropsInvalid: each value refused, as INVALID_CONFIG with ConfigException's
    words, alone and in a whole topic config (what CreateTopics and IncrementalAlterConfigs
    check)."""
    for value in INVALID.get(name, ("not_a_number", "-1")):
        with pytest.raises(ApiError) as refused:
            validate_config(TOPIC_RESOURCE, name, value)
        assert refused.value.code == "INVALID_CONFIG"
        assert refused.value.message.startswith("Invalid value ")
        assert f" for configuration {name}: " in refused.value.message
        with pytest.raises(ApiError) as whole:
            validate_topic_config({name: value})
        assert whole.value.message == refused.value.message


def test_invalid_compaction_lag_config() -> None:
    """testInvalidCompactionLagConfig."""
    with pytest.raises(ApiError) as refused:
        validate_topic_config({"max.compaction.lag.ms": "100", "min.compaction.lag.ms": "200"})
    assert (refused.value.code, refused.value.message) == (
        "INVALID_CONFIG", "conflict topic config setting min.compaction.lag.ms (200) > "
                          "max.compaction.lag.ms (100)")


@pytest.mark.parametrize("key", ["leader.replication.throttled.replicas",
                                 "follower.replication.throttled.replicas"])
def test_should_validate_throttled_replicas_config(key: str) -> None:
    """shouldValidateThrottledReplicasConfig, through the config's LIST parsing (Kafka's
    test calls the validator on the value split at commas: the same answers)."""
    for value in ("*", "* ", "", " ", "100:10", "100:10,12:10", "100:10,12:10,15:1",
                  "100:10,12:10,15:1  ", "100:0,"):
        validate_config(TOPIC_RESOURCE, key, value)
    for value in ("100", "100:", "100:0,10", "100:0,10:", "100:0,10:   ", "100 :0,10:   ",
                  "100: 0,10:   ", "100:0,10 :   ", "*,100:10", "* ,100:10"):
        with pytest.raises(ApiError) as refused:
            validate_config(TOPIC_RESOURCE, key, value)
        assert refused.value.code == "INVALID_CONFIG"
        assert refused.value.message.endswith(
            f"{key} must be the literal '*' or a list of replicas in the following format: "
            f"[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def test_enable_remote_log_storage() -> None:
    """testEnableRemoteLogStorage, tiered storage off in the cluster: a topic may not
    turn remote storage on, whatever its cleanup policy."""
    for configs in ({"remote.storage.enable": "true"},
                    {"remote.storage.enable": "true", "cleanup.policy": "compact"}):
        with pytest.raises(ApiError) as refused:
            validate_topic_config(configs)
        assert refused.value.code == "INVALID_CONFIG"
        assert "Tiered Storage functionality is disabled in the broker" in refused.value.message


@pytest.mark.parametrize("was_remote_storage_enabled", [True, False])
def test_disable_remote_log_storage(was_remote_storage_enabled: bool) -> None:
    """testDisableRemoteLogStorage: turning it off is refused unless
    ``remote.log.delete.on.disable`` is true."""
    configs = {"remote.storage.enable": "false"}
    if was_remote_storage_enabled:
        with pytest.raises(ApiError) as refused:
            validate_topic_config(configs, {"remote.storage.enable": "true"})
        assert (refused.value.code, refused.value.message.split(".")[0]) == (
            "INVALID_CONFIG", "It is invalid to disable remote storage without deleting "
                              "remote data")
        validate_topic_config({**configs, "remote.log.delete.on.disable": "true"},
                              {"remote.storage.enable": "true"})
    else:
        validate_topic_config(configs)
        validate_topic_config(configs, {"remote.storage.enable": "false"})


def test_topic_creation_with_invalid_retention_time_and_size() -> None:
    """testTopicCreationWithInvalidRetentionTime and testTopicCreationWithInvalidRetentionSize,
    tiered storage off: a retention below the broker's local retention is taken."""
    configs = (("remote.storage.enable", "false"), ("retention.ms", "500"),
               ("retention.bytes", "128"))
    image, _, _ = run(CreateTopics((NewTopic("foo", 1, 1, configs),)), image_of(brokers(0)))
    assert dict(image.configs[(TOPIC_RESOURCE, "foo")]) == dict(configs)


@pytest.mark.parametrize("value", ["true", "false"])
def test_valid_remote_log_copy_disabled_and_delete_on_disable(value: str) -> None:
    """testValidRemoteLogCopyDisabled and testValidRemoteLogDeleteOnDisable: either value
    (kraftsim is KRaft: ZooKeeper mode's refusal does not apply)."""
    for key in ("remote.log.copy.disable", "remote.log.delete.on.disable"):
        validate_topic_config({key: value})
        _, records, _ = run(CreateTopics((NewTopic("foo", 1, 1, ((key, value),)),)),
                            image_of(brokers(0)))
        assert ConfigRecord(TOPIC_RESOURCE, "foo", key, value) in records


def test_invalid_local_log_retention_props() -> None:
    """testInvalidLocalLogRetentionProps, its cases below Kafka's range (-2 is the least:
    "the same as retention"); the others need tiered storage on."""
    for key in ("local.retention.ms", "local.retention.bytes"):
        error = refusal(CreateTopics((NewTopic("foo", 1, 1, (
            ("remote.storage.enable", "true"), ("retention.bytes", "2"),
            ("retention.ms", "500"), (key, "-3"))),)), image_of(brokers(0)))
        assert (error.code, error.message) == (
            "INVALID_CONFIG", f"Invalid value -3 for configuration {key}: Value must be at "
                              f"least -2")
