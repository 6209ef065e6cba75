"""Config changes through IncrementalAlterConfigs, following the cases of Kafka's
DynamicConfigChangeTest that kraftsim models: what the controller accepts and records
for a topic and for a broker (per broker and the cluster default ""), and what it
refuses. Kafka's test then waits for the brokers to apply the change (a log's config,
a quota manager's bound); kraftsim's brokers publish the same ConfigRecords, so these
cases stop at the committed image.

Not ported:
- testMessageFormatVersionChange, testConfigChangeOnNonExistingTopic,
  testProcessNotification: ZooKeeper only (message.format.version is deprecated and not
  a kraftsim topic config).
- testQuotaConfigChange (the helper of the next six), testClientIdQuotaConfigChange,
  testUserQuotaConfigChange, testUserClientIdQuotaChange,
  testDefaultClientIdQuotaConfigChange, testDefaultUserQuotaConfigChange,
  testDefaultUserClientIdQuotaConfigChange, testQuotaInitialization,
  testIpQuotaInitialization, testIpQuotaConfigChange, testIpHandlerUnresolvableAddress:
  client quotas enforced by a broker's quota managers are not modelled.
- testAlterDefaultTopicConfig: legacy AlterConfigs is not modelled (its incremental
  twin is ported).
- testBrokerIdConfigChangeAndDelete, testDefaultBrokerIdConfigChangeAndDelete,
  testDefaultAndBrokerIdConfigChange: they set the replication throttle rates
  (leader.replication.throttled.rate and its kin), which kraftsim does not model
  (refused as unknown broker configs); the same per-broker/default set, delete and
  precedence are ported with min.insync.replicas
  (test_broker_config_set_and_delete_per_broker_and_default). For the same reason:
  shouldParseReplicationQuotaProperties, shouldParseWildcardReplicationQuotaProperties,
  shouldParseRegardlessOfWhitespaceAroundValues and shouldParseReplicationQuotaReset, the
  parsing of the throttled-replica lists (leader.replication.throttled.replicas).
- testDynamicGroupConfigChange, testDynamicShareGroupConfigChange,
  testIncrementalAlterDefaultGroupConfig: no GROUP config resources.
- testEnableRemoteLogStorageOnTopic, testEnableRemoteLogStorageOnTopicOnAlreadyEnabledTopic:
  tiered storage is off in kraftsim (a topic cannot turn remote storage on).
"""

from __future__ import annotations

from controller.operations import IncrementalAlterConfigs
from controller.operations.configs import ConfigChange
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, MetadataRecord, TopicRecord

from .kafka_cases import brokers, image_of, refusal, run


def _image(*topic_configs: tuple[str, str]) -> MetadataImage:
    """Brokers 0, 1 and 2; topic test with ``topic_configs``."""
    records: list[MetadataRecord] = [*brokers(0, 1, 2),
                                     TopicRecord("test", "TESTTESTTESTTESTTESTTA")]
    records.extend(ConfigRecord(TOPIC_RESOURCE, "test", k, v) for k, v in topic_configs)
    return image_of(records)


def _alter(kind: int, name: str, key: str, value: str | None) -> IncrementalAlterConfigs:
    change = ConfigChange(key, value) if value is not None else ConfigChange(key, None, "DELETE")
    return IncrementalAlterConfigs(kind, name, (change,))


def test_config_change() -> None:
    """testConfigChange, its topic half: flush.messages from 100000 to 200000. (Its broker
    half sets log.flush.interval.ms on the cluster default, which kraftsim does not model:
    refused as an unknown broker config.)"""
    image, records, _ = run(_alter(TOPIC_RESOURCE, "test", "flush.messages", "200000"),
                            _image(("flush.messages", "100000")))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "test", "flush.messages", "200000")]
    assert image.configs[(TOPIC_RESOURCE, "test")]["flush.messages"] == "200000"
    error = refusal(_alter(BROKER_RESOURCE, "", "log.flush.interval.ms", "200000"), _image())
    assert (error.code, error.message) == (
        "INVALID_CONFIG", "Unknown broker config name: log.flush.interval.ms")


def test_dynamic_topic_config_change() -> None:
    """testDynamicTopicConfigChange: segment.bytes from 1000 to 2000."""
    image, records, _ = run(_alter(TOPIC_RESOURCE, "test", "segment.bytes", "2000"),
                            _image(("segment.bytes", "1000")))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "test", "segment.bytes", "2000")]
    assert dict(image.configs[(TOPIC_RESOURCE, "test")]) == {"segment.bytes": "2000"}


def test_config_change_on_non_existing_topic_with_admin_client() -> None:
    """testConfigChangeOnNonExistingTopicWithAdminClient."""
    error = refusal(_alter(TOPIC_RESOURCE, "testTopic42", "flush.messages", "10000"), _image())
    assert (error.code, error.message) == (
        "UNKNOWN_TOPIC_OR_PARTITION", "The topic 'testTopic42' does not exist.")


def test_incremental_alter_default_topic_config() -> None:
    """testIncrementalAlterDefaultTopicConfig: topics have no default resource."""
    error = refusal(_alter(TOPIC_RESOURCE, "", "flush.messages", "200000"), _image())
    assert (error.code, error.message) == (
        "INVALID_REQUEST", "Default topic resources are not allowed.")


def test_broker_config_set_and_delete_per_broker_and_default() -> None:
    """testBrokerIdConfigChangeAndDelete, testDefaultBrokerIdConfigChangeAndDelete,
    testDefaultAndBrokerIdConfigChange, with min.insync.replicas for the throttle rates:
    a value set on broker 0 and on the default "" lives in two resources (a broker's own
    value wins over the default where the broker reads them); a DELETE removes each."""
    image, _, _ = run(_alter(BROKER_RESOURCE, "0", "min.insync.replicas", "2"), _image())
    image, _, _ = run(_alter(BROKER_RESOURCE, "", "min.insync.replicas", "3"), image)
    assert dict(image.configs[(BROKER_RESOURCE, "0")]) == {"min.insync.replicas": "2"}
    assert dict(image.configs[(BROKER_RESOURCE, "")]) == {"min.insync.replicas": "3"}
    assert (BROKER_RESOURCE, "1") not in image.configs
    for name in ("0", ""):
        image, records, _ = run(_alter(BROKER_RESOURCE, name, "min.insync.replicas", None),
                                image)
        assert records == [ConfigRecord(BROKER_RESOURCE, name, "min.insync.replicas", None)]
        assert not image.configs.get((BROKER_RESOURCE, name))
    error = refusal(_alter(BROKER_RESOURCE, "0", "leader.replication.throttled.rate",
                           "100000"), image)
    assert (error.code, error.message) == (
        "INVALID_CONFIG", "Unknown broker config name: leader.replication.throttled.rate")
