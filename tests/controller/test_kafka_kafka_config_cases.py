"""The broker config checks of Kafka's KafkaConfigTest that apply to a broker config
changed at runtime, as kraftsim's controller makes them.

Kafka's KafkaConfigTest builds a broker's whole config from properties and checks what
it refuses. A dynamic broker config goes through the same checks: the broker builds its
config with the change (DynamicBrokerConfig) before it lets it through, and answers a
refusal INVALID_REQUEST. kraftsim makes them at the controller, on an
IncrementalAlterConfigs of the cluster default broker resource "" (or a broker's own),
for the dynamic broker configs it models (``BROKER_CONFIGS`` and
``BROKER_REQUIREMENTS`` of :mod:`controller.operations.config_defs`). Kafka's cases on
static configs (read at start-up, refused as read-only when changed at runtime) do not
apply.

Not ported:
- testLogRetentionTimeHoursProvided, testLogRetentionTimeMinutesProvided,
  testLogRetentionTimeMsProvided, testLogRetentionTimeNoConfigProvided,
  testLogRetentionTimeBothMinutesAndHoursProvided,
  testLogRetentionTimeBothMinutesAndMsProvided, testLogRollTimeBothMsAndHoursProvided,
  testLogRollTimeNoConfigProvided: config synonyms and their defaults
  (log.retention.hours and .minutes, log.roll.hours): not modelled; only the .ms names
  are dynamic (test_kafka_dynamic_broker_config_cases.py).
- testAdvertiseDefaults, testAdvertiseConfigured, testDuplicateListeners,
  testIPv4AndIPv6SamePortListeners, testControlPlaneListenerName,
  testControllerListenerNames, testControlPlaneListenerNameNotAllowedWithKRaft,
  testControllerListenerDefinedForKRaftController,
  testControllerListenerDefinedForKRaftBroker,
  testEffectAdvertiseControllerListenerForControllerWithAdvertisement,
  testEffectAdvertiseControllerListenerForControllerWithoutAdvertisement,
  testEffectAdvertiseControllerListenerForControllerWithMixedAdvertisement,
  testPortInQuorumVotersNotRequiredToMatchFirstControllerListenerPortForThisKRaftController,
  testSeparateControllerListenerDefinedForKRaftBrokerController,
  testControllerListenerNameMapsToPlaintextByDefaultForKRaft,
  testMultipleControllerListenerNamesMapToPlaintextByDefaultForKRaft,
  testControllerListenerNameDoesNotMapToPlaintextByDefaultForNonKRaft,
  testBadListenerProtocol, testListenerNamesWithAdvertisedListenerUnset,
  testListenerAndAdvertisedListenerNames,
  testListenerNameMissingFromListenerSecurityProtocolMap,
  testInterBrokerListenerNameMissingFromListenerSecurityProtocolMap,
  testInterBrokerListenerNameAndSecurityProtocolSet,
  testCaseInsensitiveListenerProtocol, testListenerDefaults,
  testEqualAdvertisedListenersProtocol, testInvalidAdvertisedListenersProtocol,
  testNonroutableAdvertisedListeners,
  testDistinctControllerAndAdvertisedListenersAllowedForKRaftBroker,
  testControllerListenersCanBeAdvertisedForKRaftCombined,
  testAdvertisedListenersAllowedForKRaftControllerOnlyRole,
  testEarlyStartListenersDefault, testEarlyStartListeners,
  testEarlyStartListenersMustBeListeners: listeners and advertised listeners (static
  broker configs, not modelled).
- testVersionConfiguration, testSpecificProperties, testCustomMetadataLogDir,
  testDefaultMetadataLogDir, testMetadataMaxSnapshotInterval: static server properties
  (log dirs, snapshot interval, versions) read at start-up.
- testDefaultCompressionType: a broker's static default (kraftsim shows no broker config
  defaults).
- testInvalidInterBrokerSecurityProtocol,
  testInterBrokerVersionMessageFormatCompatibility, testSaslJwksEndpointRetryDefaults,
  testInvalidAuthorizerClassName, testInvalidSecurityInterBrokerProtocol,
  testIgnoreUserInterBrokerProtocolVersionKRaft,
  testInvalidInterBrokerProtocolVersionKRaft,
  testDefaultInterBrokerProtocolVersionKRaft: inter-broker protocol, security and the
  authorizer class (static; not modelled).
- testDynamicLogConfigs: KafkaConfig handing dynamic log configs to LogConfig with
  remote storage on (tiered storage is off in kraftsim).
- testGetKafkaConfigFromArgs, testGetKafkaConfigFromArgsNonArgsAtTheEnd,
  testGetKafkaConfigFromArgsNonArgsOnly, testGetKafkaConfigFromArgsNonArgsAtTheBegging:
  kafka-server-start's command line (kraftsim nodes are built from ClusterConfig).
- testBrokerRoleNodeIdValidation, testControllerRoleNodeIdValidation,
  testCombinedRoleNodeIdValidation, testIsKRaftCombinedMode,
  testMustContainQuorumVotersIfUsingProcessRoles: process.roles, node.id and
  controller.quorum.voters of a server.properties (a simulated node's role and id come from
  the cluster's assembly, combined nodes are not modelled).
- testKafkaSslPasswords, testKafkaSslPasswordsWithSymbols,
  testConnectionsMaxReauthMsDefault, testConnectionsMaxReauthMsExplicit, and the ZooKeeper
  client's TLS configs (testZkSslClientEnable, testZkSslKeyStoreLocation,
  testZkSslTrustStoreLocation, testZookeeperKeyStorePassword,
  testZookeeperTrustStorePassword, testZkSslKeyStoreType, testZkSslTrustStoreType,
  testZkSslProtocol, testZkSslEnabledProtocols, testZkSslCipherSuites,
  testZkSslEndpointIdentificationAlgorithm, testZkSslCrlEnable, testZkSslOcspEnable):
  security and ZooKeeper configs (static; not modelled).
- testControllerQuorumVoterStringsToNodes, testInvalidQuorumVoterConfig,
  testValidEmptyQuorumVotersParsing, testValidQuorumVotersParsingWithIpAddress,
  testValidQuorumVotersParsingWithMultipleHost, testParseQuorumBootstrapServers: parsing
  controller.quorum.voters and bootstrap servers (static; kraftsim's quorum comes from
  its cluster set-up).
- testAcceptsLargeNodeIdForRaftBasedCase,
  testRejectsNegativeNodeIdForRaftBasedBrokerCaseWithAutoGenEnabled,
  testRejectsNegativeNodeIdForRaftBasedControllerCaseWithAutoGenEnabled,
  testRejectsNegativeNodeIdForRaftBasedCaseWithAutoGenDisabled,
  testRejectsLargeNodeIdForZkBasedCaseWithAutoGenEnabled,
  testAcceptsNegativeOneNodeIdForZkBasedCaseWithAutoGenEnabled,
  testRejectsNegativeTwoNodeIdForZkBasedCaseWithAutoGenEnabled,
  testAcceptsLargeNodeIdForZkBasedCaseWithAutoGenDisabled,
  testRejectsNegativeNodeIdForZkBasedCaseWithAutoGenDisabled,
  testZookeeperConnectRequiredIfEmptyProcessRoles,
  testZookeeperConnectNotRequiredIfNonEmptyProcessRoles, testPopulateSynonymsOnEmptyMap,
  testPopulateSynonymsOnMapWithoutNodeId, testPopulateSynonymsOnMapWithoutBrokerId,
  testNodeIdMustNotBeDifferentThanBrokerId, testNodeIdOrBrokerIdMustBeSetWithKraft,
  testNodeIdIsInferredByBrokerIdWithKraft, testBrokerIdIsInferredByNodeIdWithKraft,
  testMigrationCannotBeEnabledWithJBOD,
  testMigrationCannotBeEnabledWithBrokerIdGeneration, testMigrationEnabledKRaftMode,
  testConsumerGroupMigrationPolicy: node.id and broker.id rules, ZooKeeper and migration
  (static configs; no ZooKeeper).
- testConsumerGroupSessionTimeoutValidation,
  testConsumerGroupHeartbeatIntervalValidation, testGroupCoordinatorRebalanceProtocols,
  testShareGroupSessionTimeoutValidation, testShareGroupHeartbeatIntervalValidation,
  testShareGroupRecordLockDurationValidation: group coordinator configs (static; not
  modelled).
- testSingleLogDirectoryWithRemoteLogStorage: tiered storage and JBOD (not modelled).
"""

from __future__ import annotations

import pytest

from controller.operations import IncrementalAlterConfigs
from controller.operations.config_defs import BROKER_CONFIGS
from controller.operations.configs import ConfigChange
from controller.operations.leadership import unclean_allowed
from metadata.delta import BROKER_RESOURCE
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, TopicRecord

from .kafka_cases import brokers, image_of, refusal, run


def _image() -> MetadataImage:
    """Brokers 0 and 1, topic t without configs."""
    return image_of([*brokers(0, 1), TopicRecord("t", "TTTTTTTTTTTTTTTTTTTTTA")])


def _set(key: str, value: str, name: str = "") -> IncrementalAlterConfigs:
    return IncrementalAlterConfigs(BROKER_RESOURCE, name, (ConfigChange(key, value),))


def _accepted(key: str, value: str) -> None:
    _, records, _ = run(_set(key, value), _image())
    assert records == [ConfigRecord(BROKER_RESOURCE, "", key, value)]


def _refused(key: str, value: str) -> tuple[str, str]:
    error = refusal(_set(key, value), _image())
    return error.code, error.message


def test_log_retention_unlimited() -> None:
    """testLogRetentionUnlimited: -1 (any negative) is unlimited; 0 is refused. (The
    minutes and hours synonyms are not dynamic.)"""
    for value in ("-1", "-100"):
        _accepted("log.retention.ms", value)
    assert _refused("log.retention.ms", "0") == (
        "INVALID_REQUEST", "requirement failed: log.retention.ms must be unlimited (-1) or, "
                           "greater than or equal to 1")


def test_log_retention_valid() -> None:
    """testLogRetentionValid: 0 is refused, by log.retention.ms; log.retention.minutes
    and .hours are refused dynamically whatever their value."""
    assert _refused("log.retention.ms", "0")[0] == "INVALID_REQUEST"
    for key in ("log.retention.minutes", "log.retention.hours"):
        assert _refused(key, "0") == (
            "INVALID_REQUEST", f"Cannot update these configs dynamically: Set({key})")
    _accepted("log.retention.ms", "1")


def test_unclean_leader_election_default() -> None:
    """testUncleanLeaderElectionDefault: with nothing set, unclean election is off."""
    assert not unclean_allowed(_image(), "t")


@pytest.mark.parametrize("value", ["false", "true"])
def test_unclean_election_disabled_and_enabled(value: str) -> None:
    """testUncleanElectionDisabled, testUncleanElectionEnabled: the cluster default set
    either way, and what a topic without its own setting then gets."""
    image, _, _ = run(_set("unclean.leader.election.enable", value), _image())
    assert unclean_allowed(image, "t") is (value == "true")


def test_unclean_election_invalid() -> None:
    """testUncleanElectionInvalid."""
    assert _refused("unclean.leader.election.enable", "invalid") == (
        "INVALID_REQUEST", "Invalid value invalid for configuration "
                           "unclean.leader.election.enable: Expected value to be either true "
                           "or false")


def test_log_roll_time_ms_provided() -> None:
    """testLogRollTimeMsProvided: 30 minutes."""
    _accepted("log.roll.ms", "1800000")


@pytest.mark.parametrize("value", ["gzip", "producer", "uncompressed", "zstd"])
def test_valid_compression_type(value: str) -> None:
    """testValidCompressionType."""
    _accepted("compression.type", value)


def test_invalid_compression_type() -> None:
    """testInvalidCompressionType."""
    assert _refused("compression.type", "abc") == (
        "INVALID_REQUEST", "Invalid value abc for configuration compression.type: String "
                           "must be one of: uncompressed, zstd, lz4, snappy, gzip, producer")


@pytest.mark.parametrize(("key", "too_high", "reason"), [
    ("compression.gzip.level", "10", "Value must be between 1 and 9 or equal to -1"),
    ("compression.lz4.level", "18", "Value must be no more than 17"),
    ("compression.zstd.level", "23", "Value must be no more than 22"),
])
def test_invalid_compression_level(key: str, too_high: str, reason: str) -> None:
    """testInvalidGzipCompressionLevel, testInvalidLz4CompressionLevel,
    testInvalidZstdCompressionLevel: one above the codec's highest level."""
    assert _refused(key, too_high) == (
        "INVALID_REQUEST", f"Invalid value {too_high} for configuration {key}: {reason}")


def test_max_connections_per_ip_prop() -> None:
    """testMaxConnectionsPerIpProp: 0 only with per-host overrides, which kraftsim does
    not model (max.connections.per.ip.overrides is refused as unknown)."""
    assert _refused("max.connections.per.ip", "0") == (
        "INVALID_REQUEST", "requirement failed: max.connections.per.ip can be set to zero "
                           "only if max.connections.per.ip.overrides property is set.")
    assert _refused("max.connections.per.ip.overrides", "127.0.0.1:100") == (
        "INVALID_CONFIG", "Unknown broker config name: max.connections.per.ip.overrides")


FROM_PROPS_INVALID: dict[str, tuple[str, ...]] = {
    "num.io.threads": ("not_a_number", "0"),
    "background.threads": ("not_a_number", "0"),
    "num.network.threads": ("not_a_number", "0"),
    "log.segment.bytes": ("not_a_number", "11"),
    "log.roll.ms": ("not_a_number", "0"),
    "log.retention.ms": ("not_a_number", "0"),
    "log.retention.bytes": ("not_a_number",),
    "min.insync.replicas": ("not_a_number", "0"),
    "num.replica.fetchers": ("not_a_number",),
    "unclean.leader.election.enable": ("not_a_boolean", "0"),
    "compression.gzip.level": ("not_a_number", "0"),
    "compression.lz4.level": ("not_a_number", "0"),
    "compression.zstd.level": ("not_a_number", "23"),
}
"""testFromPropsInvalid's bad values for the broker configs kraftsim models; the others
get its default pair ("not_a_number", "-1")."""


@pytest.mark.parametrize("key", sorted(BROKER_CONFIGS))
def test_from_props_invalid(key: str) -> None:
    """testFromPropsInvalid, for each dynamic broker config kraftsim checks: Kafka's bad
    values are refused, per broker and cluster-wide."""
    for value in FROM_PROPS_INVALID.get(key, ("not_a_number", "-1")):
        for name in ("", "1"):
            error = refusal(_set(key, value, name), _image())
            assert error.code == "INVALID_REQUEST", (value, error.message)
