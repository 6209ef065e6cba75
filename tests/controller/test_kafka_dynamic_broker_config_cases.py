"""Which broker configs may be changed at runtime, following Kafka's
DynamicBrokerConfigTest where kraftsim models it.

Kafka's DynamicBrokerConfig checks a change to a broker's config (per broker, the
resource named by its id, or cluster-wide, the default resource "") before the broker
forwards it: a config that is read-only (in the broker's schema but not dynamic) or an
SSL store config without a listener prefix is refused, naming them; then the values
are parsed and the whole broker config is built (its cross checks); any refusal is
INVALID_REQUEST. kraftsim makes these checks at the controller on an
IncrementalAlterConfigs of a BROKER resource (Kafka's schema and its dynamic names:
:mod:`metadata.kafka_config_types`; the values: ``BROKER_CONFIGS`` and
``BROKER_REQUIREMENTS`` of :mod:`controller.operations.config_defs`). A refused
request writes nothing. kraftsim checks the values of the dynamic broker configs it
models only, and refuses the others as unknown (INVALID_CONFIG): the listener-prefixed
(``listener.name.NAME.``) and other dynamic configs it does not model, and custom names,
which Kafka stores.

Not ported:
- testConfigUpdate, testPasswordConfigEncryption, testPasswordConfigEncoderSecretChange,
  testDynamicListenerConfig: SSL keystores per listener, password encoding and
  listeners are not modelled.
- testUpdateDynamicThreadPool, testConfigUpdateWithReconfigurableValidationFailure,
  testReconfigurableValidation: thread pool resizing and the broker's reconfigurable
  components (and their own checks, such as a thread count at most doubled) are not
  modelled; kraftsim checks the thread counts' validators only.
- testConnectionRateQuota: max.connection.creation.rate and listener-prefixed connection
  limits are not modelled (refused as unknown broker configs).
- testAuthorizerConfig, testCombinedControllerAuthorizerConfig,
  testIsolatedControllerAuthorizerConfig: reconfiguring a pluggable authorizer class.
- testSynonyms, testDynamicLogConfigHandlesSynonymsCorrectly: config synonyms (e.g.
  log.retention.hours for log.retention.ms) are not modelled.
- testDynamicConfigInitializationWithoutConfigsInZK: ZooKeeper.
- testImproperConfigsAreRemoved: a broker loading stored configs with bad values skips
  them; kraftsim's controller refuses them, and its brokers do not apply these configs.
- testUpdateMetricReporters, testUpdateMetricReportersNoJmxReporter: metrics.
- testNonInternalValuesDoesNotExposeInternalConfigs: the broker's internal config map.
- testDynamicLogLocalRetentionMsConfig, testDynamicLogLocalRetentionSizeConfig,
  testDynamicLogLocalRetentionSkipsOnInvalidConfig,
  testDynamicLogLocalRetentionThrowsOnIncorrectConfig, testDynamicRemoteFetchMaxWaitMsConfig,
  testDynamicRemoteListOffsetsRequestTimeoutMsConfig,
  testUpdateDynamicRemoteLogManagerConfig, testRemoteLogManagerCopyQuotaUpdates,
  testRemoteLogManagerFetchQuotaUpdates, testRemoteLogManagerMultipleConfigUpdates:
  tiered storage is off in kraftsim (its broker configs are not modelled).
"""

from __future__ import annotations

import pytest

from controller.operations import IncrementalAlterConfigs
from controller.operations.config_defs import BROKER_CONFIGS
from controller.operations.configs import ConfigChange
from controller.operations.leadership import unclean_allowed
from metadata.delta import BROKER_RESOURCE
from metadata.image import MetadataImage
from metadata.kafka_config_types import BROKER_CONFIG_TYPES, DYNAMIC_BROKER_CONFIGS
from metadata.schema import ConfigRecord, TopicRecord

from .kafka_cases import brokers, image_of, refusal, run

LEVELS = ["0", ""]
"""A broker's own config and the cluster default (Kafka's perBrokerConfig true, false)."""


def _image() -> MetadataImage:
    """Brokers 0 and 1, topic t without configs."""
    return image_of([*brokers(0, 1), TopicRecord("t", "TTTTTTTTTTTTTTTTTTTTTA")])


def _set(name: str, *changes: tuple[str, str]) -> IncrementalAlterConfigs:
    return IncrementalAlterConfigs(BROKER_RESOURCE, name, tuple(
        ConfigChange(k, v) for k, v in changes))


def _refused(op: IncrementalAlterConfigs) -> tuple[str, str]:
    error = refusal(op, _image())
    return error.code, error.message


VALID = ("min.insync.replicas", "2")


@pytest.mark.parametrize("name", LEVELS)
@pytest.mark.parametrize(("invalid", "message"), [
    (("ssl.keystore.type", "PKCS12"), "These security configs can be dynamically updated "
                                      "only per-listener using the listener prefix: "
                                      "Set(ssl.keystore.type)"),
    (("zookeeper.connect", "somehost:2181"),
     "Cannot update these configs dynamically: Set(zookeeper.connect)"),
    (("log.cleaner.threads", "invalid"),
     "Invalid value invalid for configuration log.cleaner.threads: Not a number of type INT"),
    (("log.message.format.version", "0.10.2"),
     "Cannot update these configs dynamically: Set(log.message.format.version)"),
])
def test_config_update_with_some_invalid_configs(name: str, invalid: tuple[str, str],
                                                 message: str) -> None:
    """testConfigUpdateWithSomeInvalidConfigs: a valid config with an SSL store config
    not per listener, a read-only one (zookeeper.connect; the deprecated
    log.message.format.version, which Kafka leaves out of the dynamic log configs), or
    one of the wrong type: the request is refused whole, the valid config with it (the
    valid one here is min.insync.replicas: kraftsim does not model Kafka's
    listener-prefixed keystore)."""
    for changes in ((VALID, invalid), (invalid, VALID)):
        assert _refused(_set(name, *changes)) == ("INVALID_REQUEST", message)
    _, records, _ = run(_set(name, VALID), _image())
    assert records == [ConfigRecord(BROKER_RESOURCE, name, *VALID)]


def test_read_only_and_listener_checks_come_before_values() -> None:
    """testConfigUpdateWithSomeInvalidConfigs: Kafka looks at the names (read-only, then
    SSL without a listener prefix) before any value; several read-only names are named
    together, in the order given."""
    assert _refused(_set("0", ("log.cleaner.threads", "invalid"), ("ssl.key.password", "x"),
                         ("broker.id", "5"), ("log.dirs", "/tmp"))) == (
        "INVALID_REQUEST", "Cannot update these configs dynamically: Set(broker.id, log.dirs)")
    assert _refused(_set("0", ("log.cleaner.threads", "invalid"),
                         ("ssl.key.password", "x"))) == (
        "INVALID_REQUEST", "These security configs can be dynamically updated only "
                           "per-listener using the listener prefix: Set(ssl.key.password)")


def test_read_only_config_may_be_deleted() -> None:
    """A DELETE names no value: Kafka's check of read-only names looks at the config as it
    would be after the change, which a deletion leaves without the key. kraftsim still
    refuses the key as unknown to it (it does not model Kafka's read-only configs)."""
    error = refusal(IncrementalAlterConfigs(BROKER_RESOURCE, "0", (
        ConfigChange("broker.id", None, "DELETE"),)), _image())
    assert (error.code, error.message) == ("INVALID_CONFIG",
                                           "Unknown broker config name: broker.id")


def test_kraftsim_broker_configs_are_dynamic_in_kafka() -> None:
    """Every broker config kraftsim takes is a dynamic one of Kafka's broker schema; the
    dynamic names are all in the schema."""
    assert set(BROKER_CONFIGS) <= DYNAMIC_BROKER_CONFIGS <= set(BROKER_CONFIG_TYPES)


def test_enable_default_unclean_leader_election() -> None:
    """testEnableDefaultUncleanLeaderElection: unclean.leader.election.enable set true at
    the cluster default takes effect for a topic without its own setting (Kafka's
    controller then looks for leaderless partitions: kraftsim's periodic unclean check,
    :mod:`controller.unclean_elections`)."""
    assert not unclean_allowed(_image(), "t")
    image, records, _ = run(_set("", ("unclean.leader.election.enable", "true")), _image())
    assert records == [ConfigRecord(BROKER_RESOURCE, "", "unclean.leader.election.enable",
                                    "true")]
    assert unclean_allowed(image, "t") and unclean_allowed(image, "t", node_id=3000)


@pytest.mark.parametrize("name", LEVELS)
@pytest.mark.parametrize("key", ["ssl.keystore.location", "ssl.keystore.type",
                                 "ssl.keystore.password", "ssl.key.password"])
def test_security_configs(name: str, key: str) -> None:
    """testSecurityConfigs, the refused half: an SSL store config without a listener
    prefix, per broker or cluster-wide. (The prefixed names, which Kafka takes per
    broker only, are not modelled: kraftsim refuses them as unknown.)"""
    assert _refused(_set(name, (key, "ks.jks"))) == (
        "INVALID_REQUEST", f"These security configs can be dynamically updated only "
                           f"per-listener using the listener prefix: Set({key})")
    assert _refused(_set(name, (f"listener.name.external.{key}", "ks.jks"))) == (
        "INVALID_CONFIG", f"Unknown broker config name: listener.name.external.{key}")


@pytest.mark.parametrize("name", LEVELS)
def test_connection_quota(name: str) -> None:
    """testConnectionQuota: max.connections.per.ip and max.connections per broker and
    cluster-wide; max.connections.per.ip may be 0 only with per-host overrides, which
    kraftsim does not model (so 0 is always refused, as Kafka refuses it without them)."""
    for key in ("max.connections.per.ip", "max.connections"):
        _, records, _ = run(_set(name, (key, "100")), _image())
        assert records == [ConfigRecord(BROKER_RESOURCE, name, key, "100")]
    assert _refused(_set(name, ("max.connections.per.ip", "0"))) == (
        "INVALID_REQUEST", "requirement failed: max.connections.per.ip can be set to zero "
                           "only if max.connections.per.ip.overrides property is set.")
    run(_set(name, ("max.connections", "0")), _image())


@pytest.mark.parametrize("name", LEVELS)
def test_log_retention_time_minutes_is_not_dynamically_reconfigurable(name: str) -> None:
    """testLogRetentionTimeMinutesIsNotDynamicallyReconfigurable: of the retention time's
    synonyms only log.retention.ms is dynamic (Kafka's broker drops log.retention.minutes
    from a stored dynamic config; asked to set it, it refuses); log.roll.hours likewise
    against log.roll.ms."""
    for key in ("log.retention.minutes", "log.retention.hours", "log.roll.hours"):
        assert _refused(_set(name, (key, "3"))) == (
            "INVALID_REQUEST", f"Cannot update these configs dynamically: Set({key})")
    run(_set(name, ("log.retention.ms", "180000"), ("log.roll.ms", "60000")), _image())


@pytest.mark.parametrize(("key", "value", "reason"), [
    ("log.roll.ms", "0", "log.roll.ms must be greater than or equal to 1"),
    ("log.roll.ms", "-5", "log.roll.ms must be greater than or equal to 1"),
    ("log.retention.ms", "0",
     "log.retention.ms must be unlimited (-1) or, greater than or equal to 1"),
])
def test_whole_broker_config_requirements(key: str, value: str, reason: str) -> None:
    """The checks of Kafka's whole broker config that apply to a dynamic log config
    (DynamicBrokerConfig builds the broker's config with the change, and KafkaConfig
    checks it); any negative retention is unlimited."""
    assert _refused(_set("", (key, value))) == ("INVALID_REQUEST",
                                                f"requirement failed: {reason}")
    for retention in ("-1", "-2", "1"):
        run(_set("", ("log.retention.ms", retention)), _image())


@pytest.mark.parametrize("name", LEVELS)
def test_the_shortest_log_roll_is_one_ms(name: str) -> None:
    """KafkaConfig's requirement on log.roll.ms is at least 1: 1 ms itself is taken."""
    _, records, _ = run(_set(name, ("log.roll.ms", "1")), _image())
    assert records == [ConfigRecord(BROKER_RESOURCE, name, "log.roll.ms", "1")]
