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
legacy (non-incremental) AlterConfigs. Kafka 4.1's eligible leader replica cases
(KIP-966) are ported at the end: testMaybeGenerateElrSafetyRecords (without a static
min.insync.replicas: kraftsim's controller has none but Kafka's default),
testRejectMinIsrChangeWhenElrEnabled and testElrUpgrade.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from controller.errors import ApiError
from controller.operations import Operation, OperationContext, UpdateFeatures
from controller.operations.brokers import BROKER_FEATURES
from controller.operations.cluster import FeatureUpdate
from controller.operations.config_defs import java_double, validate_config
from controller.operations.configs import ConfigChange, IncrementalAlterConfigs
from controller.operations.elr import ELR_FEATURE, elr_enabled
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import (
    ClearElrRecord,
    ConfigRecord,
    FeatureLevelRecord,
    MetadataRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE


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
     "UNKNOWN_TOPIC_OR_PARTITION", "The topic 'u' does not exist."),
    (IncrementalAlterConfigs(BROKER_RESOURCE, "b1", (ConfigChange("min.insync.replicas", "1"),)),
     "INVALID_REQUEST", "Unable to parse broker name as a base 10 number."),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", ()), "INVALID_REQUEST", "no config change"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", "1", "MERGE"),)),
     "INVALID_REQUEST", "unsupported config operation MERGE"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", "1", "APPEND"),)),
     "INVALID_CONFIG", "Can't APPEND to key retention.ms because its type is not LIST."),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("cleanup.policy", None,
                                                                "SUBTRACT"),)),
     "INVALID_REQUEST", "Null value not supported for : cleanup.policy"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", "1"),
                                                   ConfigChange("retention.ms", None, "DELETE"))),
     "INVALID_REQUEST", "Error due to duplicate config keys"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("retention.ms", None),)),
     "INVALID_REQUEST", "Null value not supported for : retention.ms"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "t", (ConfigChange("no.such", "1"),)),
     "INVALID_CONFIG", "Unknown topic config name: no.such"),
    (IncrementalAlterConfigs(BROKER_RESOURCE, "", (ConfigChange("retention.ms", "1"),)),
     "INVALID_CONFIG", "Unknown broker config name: retention.ms"),
    (IncrementalAlterConfigs(7, "x", (ConfigChange("retention.ms", "1"),)),
     "INVALID_REQUEST", "Unknown resource type UNKNOWN"),
])
def test_refusals_name_what_is_wrong(op: IncrementalAlterConfigs, code: str,
                                     message: str) -> None:
    with pytest.raises(ApiError) as refused:
        _generate(op)
    assert refused.value.code == code and message in refused.value.message


@pytest.mark.parametrize(("key", "good", "bad"), [
    ("min.insync.replicas", ["1", "3", " 2 ", "+2", "2147483647"], {
        "0": "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        "-1": "Invalid value -1 for configuration min.insync.replicas: Value must be at least 1",
        "one": "Invalid value one for configuration min.insync.replicas: Not a number of type "
               "INT",
        "": "Invalid value  for configuration min.insync.replicas: Not a number of type INT",
        "1.5": "Invalid value 1.5 for configuration min.insync.replicas: Not a number of type "
               "INT",
        "1_000": "Invalid value 1_000 for configuration min.insync.replicas: Not a number of "
                 "type INT",
        "2147483648": "Invalid value 2147483648 for configuration min.insync.replicas: Not a "
                      "number of type INT"}),
    ("retention.ms", ["-1", "0", "604800000", "9223372036854775807"], {
        "-2": "Invalid value -2 for configuration retention.ms: Value must be at least -1",
        "9223372036854775808": "Invalid value 9223372036854775808 for configuration "
                               "retention.ms: Not a number of type LONG"}),
    # no validator: any 64-bit number
    ("retention.bytes", ["-1", "-2", "-9223372036854775808"], {
        "lots": "Invalid value lots for configuration retention.bytes: Not a number of type "
                "LONG"}),
    ("local.retention.ms", ["-2"], {
        "-3": "Invalid value -3 for configuration local.retention.ms: Value must be at least -2"}),
    ("segment.bytes", ["14"], {
        "13": "Invalid value 13 for configuration segment.bytes: Value must be at least 14"}),
    ("compression.type", ["zstd", "producer", " lz4 "], {
        "ZSTD": "Invalid value ZSTD for configuration compression.type: String must be one of: "
                "uncompressed, zstd, lz4, snappy, gzip, producer"}),
    ("compression.gzip.level", ["1", "9", "-1"], {
        "0": "Invalid value 0 for configuration compression.gzip.level: Value must be between "
             "1 and 9 or equal to -1"}),
    ("compression.zstd.level", ["-131072", "22"], {
        "23": "Invalid value 23 for configuration compression.zstd.level: Value must be no "
              "more than 22"}),
    # a LIST: split at commas (white space around them dropped), each item checked; empty
    # is an empty list, which Kafka's ValidList takes
    ("cleanup.policy", ["delete", "compact", "compact,delete", "delete , compact", ""], {
        "compact,": "Invalid value  for configuration cleanup.policy: String must be one of: "
                    "compact, delete",
        "delete,remove": "Invalid value remove for configuration cleanup.policy: String must "
                         "be one of: compact, delete"}),
    ("min.cleanable.dirty.ratio", ["0", "0.5", "1", "1e-1", ".5", "NaN"], {
        "1.01": "Invalid value 1.01 for configuration min.cleanable.dirty.ratio: Value must be "
                "no more than 1",
        "-0.1": "Invalid value -0.1 for configuration min.cleanable.dirty.ratio: Value must be "
                "at least 0",
        "2e10": "Invalid value 2.0E10 for configuration min.cleanable.dirty.ratio: Value must "
                "be no more than 1",
        "half": "Invalid value half for configuration min.cleanable.dirty.ratio: Not a number "
                "of type DOUBLE"}),
    # Kafka's ConfigDef reads a BOOLEAN trimmed and in any case
    ("unclean.leader.election.enable", ["true", "false", "True", " FALSE "], {
        value: f"Invalid value {value} for configuration unclean.leader.election.enable: "
               f"Expected value to be either true or false" for value in ("yes", "", "1")}),
    ("leader.replication.throttled.replicas", ["", "0:1,1:2", "*", " 0:1 , 2:3 "], {
        "0:1,x": "Invalid value [0:1, x] for configuration leader.replication.throttled."
                 "replicas: leader.replication.throttled.replicas must be the literal '*' or a "
                 "list of replicas in the following format: [partitionId]:[brokerId],"
                 "[partitionId]:[brokerId],...",
        "*,0:1": "Invalid value [*, 0:1] for configuration leader.replication.throttled."
                 "replicas: leader.replication.throttled.replicas must be the literal '*' or a "
                 "list of replicas in the following format: [partitionId]:[brokerId],"
                 "[partitionId]:[brokerId],..."}),
])
def test_each_topic_config_value_is_checked(key: str, good: list[str],
                                             bad: dict[str, str]) -> None:
    """Kafka's ConfigDef: the value trimmed, parsed by the config's type, then checked by
    its validator; a refusal is INVALID_CONFIG with ConfigException's text."""
    for value in good:
        validate_config(TOPIC_RESOURCE, key, value)
    for value, message in bad.items():
        with pytest.raises(ApiError) as refused:
            validate_config(TOPIC_RESOURCE, key, value)
        assert (refused.value.code, refused.value.message) == ("INVALID_CONFIG", message)
    validate_config(TOPIC_RESOURCE, key, None)  # a deletion has no value to check


def test_broker_configs_have_kafkas_types_and_ranges() -> None:
    for key, value in (("num.replica.fetchers", "0"), ("log.retention.ms", "-5"),
                       ("log.retention.bytes", "-7"), ("max.connections", "0"),
                       ("producer.id.expiration.ms", "1")):
        validate_config(BROKER_RESOURCE, key, value)
    for key, value, reason in (("num.io.threads", "0", "Value must be at least 1"),
                               ("producer.id.expiration.ms", "0", "Value must be at least 1"),
                               ("message.max.bytes", "3000000000", "Not a number of type INT")):
        with pytest.raises(ApiError, match=f"Invalid value {value} for configuration {key}: "
                                           f"{reason}"):
            validate_config(BROKER_RESOURCE, key, value)


def test_a_topic_config_is_checked_whole() -> None:
    """Kafka's LogConfig.validate on the topic's config as it would be: the compaction lags
    against each other (from the values already set too), and no remote storage while
    tiered storage is off (Kafka's default)."""
    lags = [ConfigRecord(TOPIC_RESOURCE, "t", "max.compaction.lag.ms", "100")]
    with pytest.raises(ApiError) as refused:
        _generate(_topic(ConfigChange("min.compaction.lag.ms", "101")), lags)
    assert (refused.value.code, refused.value.message) == (
        "INVALID_CONFIG", "conflict topic config setting min.compaction.lag.ms (101) > "
                          "max.compaction.lag.ms (100)")
    assert _generate(_topic(ConfigChange("min.compaction.lag.ms", "100")), lags)[0] == [
        ConfigRecord(TOPIC_RESOURCE, "t", "min.compaction.lag.ms", "100")]
    # both in one request, or the max deleted (back to its default, Long.MAX_VALUE)
    with pytest.raises(ApiError, match="conflict topic config setting"):
        _generate(_topic(ConfigChange("min.compaction.lag.ms", "5"),
                         ConfigChange("max.compaction.lag.ms", "4")))
    assert len(_generate(_topic(ConfigChange("min.compaction.lag.ms", "500"),
                                ConfigChange("max.compaction.lag.ms", None, "DELETE")),
                         lags)[0]) == 2
    with pytest.raises(ApiError) as refused:
        _generate(_topic(ConfigChange("remote.storage.enable", " TRUE")))
    assert (refused.value.code, refused.value.message) == (
        "INVALID_CONFIG", "Tiered Storage functionality is disabled in the broker. Topic "
                          "cannot be configured with remote log storage.")
    assert _generate(_topic(ConfigChange("remote.storage.enable", "false")))[0] == [
        ConfigRecord(TOPIC_RESOURCE, "t", "remote.storage.enable", "false")]


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
    # every item taken away leaves an empty list (Kafka's ValidList takes it)
    records, _ = _generate(_topic(ConfigChange("cleanup.policy", "delete", "SUBTRACT")))
    assert records == [ConfigRecord(TOPIC_RESOURCE, "t", "cleanup.policy", "")]


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


# Kafka's definitions (LogConfig, KafkaConfig): (resource, key, type, lowest value taken)
KAFKA_LOWEST = [
    (TOPIC_RESOURCE, "segment.bytes", "INT", 14), (TOPIC_RESOURCE, "segment.ms", "LONG", 1),
    (TOPIC_RESOURCE, "segment.jitter.ms", "LONG", 0),
    (TOPIC_RESOURCE, "segment.index.bytes", "INT", 4),
    (TOPIC_RESOURCE, "flush.messages", "LONG", 1), (TOPIC_RESOURCE, "flush.ms", "LONG", 0),
    (TOPIC_RESOURCE, "retention.ms", "LONG", -1),
    (TOPIC_RESOURCE, "max.message.bytes", "INT", 0),
    (TOPIC_RESOURCE, "index.interval.bytes", "INT", 0),
    (TOPIC_RESOURCE, "delete.retention.ms", "LONG", 0),
    (TOPIC_RESOURCE, "min.compaction.lag.ms", "LONG", 0),
    (TOPIC_RESOURCE, "max.compaction.lag.ms", "LONG", 1),
    (TOPIC_RESOURCE, "file.delete.delay.ms", "LONG", 0),
    (TOPIC_RESOURCE, "min.insync.replicas", "INT", 1),
    (TOPIC_RESOURCE, "compression.lz4.level", "INT", 1),
    (TOPIC_RESOURCE, "compression.zstd.level", "INT", -131072),
    (TOPIC_RESOURCE, "message.timestamp.difference.max.ms", "LONG", 0),
    (TOPIC_RESOURCE, "message.timestamp.before.max.ms", "LONG", 0),
    (TOPIC_RESOURCE, "message.timestamp.after.max.ms", "LONG", 0),
    (TOPIC_RESOURCE, "local.retention.ms", "LONG", -2),
    (TOPIC_RESOURCE, "local.retention.bytes", "LONG", -2),
    (BROKER_RESOURCE, "background.threads", "INT", 1),
    (BROKER_RESOURCE, "log.cleaner.threads", "INT", 0),
    (BROKER_RESOURCE, "log.segment.bytes", "INT", 14),
    (BROKER_RESOURCE, "max.connections", "INT", 0),
    (BROKER_RESOURCE, "message.max.bytes", "INT", 0),
    (BROKER_RESOURCE, "min.insync.replicas", "INT", 1),
    (BROKER_RESOURCE, "num.io.threads", "INT", 1),
    (BROKER_RESOURCE, "num.network.threads", "INT", 1),
]


@pytest.mark.parametrize(("resource", "key", "kind", "lowest"), KAFKA_LOWEST,
                         ids=[case[1] for case in KAFKA_LOWEST])
def test_each_number_config_takes_kafkas_range(resource: int, key: str, kind: str,
                                               lowest: int) -> None:
    validate_config(resource, key, str(lowest))
    with pytest.raises(ApiError) as refused:
        validate_config(resource, key, str(lowest - 1))
    assert refused.value.message == (f"Invalid value {lowest - 1} for configuration {key}: "
                                     f"Value must be at least {lowest}")
    too_big = 2**31 if kind == "INT" else 2**63
    with pytest.raises(ApiError, match=f"Not a number of type {kind}"):
        validate_config(resource, key, str(too_big))


def test_no_compaction_lag_bound_is_long_max() -> None:
    """With ``max.compaction.lag.ms`` unset (Long.MAX_VALUE), any min is below it."""
    assert len(_generate(_topic(ConfigChange("min.compaction.lag.ms", str(2**63 - 1))))[0]) == 1


@pytest.mark.parametrize(("value", "shown"), [
    (1.01, "1.01"), (2.0, "2.0"), (0.001, "0.001"), (1234567.0, "1234567.0"),
    (1e7, "1.0E7"), (0.0001, "1.0E-4"), (-2.5e-5, "-2.5E-5"), (1.5e300, "1.5E300"),
    (0.0, "0.0"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"),
    (float("nan"), "NaN")])
def test_doubles_print_as_java_prints_them(value: float, shown: str) -> None:
    assert java_double(value) == shown


# -------------------------------------------- eligible leader replicas (Kafka 4.1's cases)

def _features_image(level: int, *configs: ConfigRecord) -> MetadataImage:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all([FeatureLevelRecord(METADATA_VERSION_FEATURE, level),
                      RegisterBrokerRecord(1, "inc-1", broker_epoch=10, fenced=False,
                                           features=BROKER_FEATURES), *configs])
    return delta.apply(0, 1)


def _run_op(op: Operation, image: MetadataImage) -> tuple[MetadataImage, list[MetadataRecord]]:
    generated = op.generate(OperationContext(image, random.Random(1), image.offset + 1, 0))
    delta = MetadataDelta(image)
    delta.replay_all(generated.records)
    return delta.apply(image.offset + len(generated.records), 1), list(generated.records)


def _elr_on() -> UpdateFeatures:
    return UpdateFeatures((FeatureUpdate(ELR_FEATURE, 1),))


def test_maybe_generate_elr_safety_records() -> None:
    """testMaybeGenerateElrSafetyRecords (its case without a static min.insync.replicas:
    kraftsim's controller has Kafka's default, 1): broker 1's own min.insync.replicas 3 is
    written while ELR is off; turning ELR on first sets the cluster's to 1 and removes
    broker 1's, then writes the feature level."""
    image = _features_image(LEVELS["4.0-IV1"])
    image, records = _run_op(IncrementalAlterConfigs(BROKER_RESOURCE, "1", (
        ConfigChange("min.insync.replicas", "3"),)), image)
    assert records == [ConfigRecord(BROKER_RESOURCE, "1", "min.insync.replicas", "3")]
    image, records = _run_op(_elr_on(), image)
    assert records == [ConfigRecord(BROKER_RESOURCE, "", "min.insync.replicas", "1"),
                       ConfigRecord(BROKER_RESOURCE, "1", "min.insync.replicas", None),
                       FeatureLevelRecord(ELR_FEATURE, 1)]
    assert (BROKER_RESOURCE, "1") not in image.configs
    assert elr_enabled(image)
    _, again = _run_op(_elr_on(), image)  # safe to repeat: nothing more to set
    assert again == [FeatureLevelRecord(ELR_FEATURE, 1)]


@pytest.mark.parametrize("removal", [False, True])
def test_reject_min_isr_change_when_elr_enabled(removal: bool) -> None:
    """testRejectMinIsrChangeWhenElrEnabled: with ELR on, a broker's own
    min.insync.replicas may be neither set nor removed; the cluster's may be set (a
    ClearElrRecord for every topic follows) but not removed."""
    image, _ = _run_op(_elr_on(), _features_image(LEVELS["4.0-IV1"]))
    change = ConfigChange("min.insync.replicas", None, "DELETE") if removal \
        else ConfigChange("min.insync.replicas", "3")
    with pytest.raises(ApiError) as broker:
        _run_op(IncrementalAlterConfigs(BROKER_RESOURCE, "1", (change,)), image)
    assert (broker.value.code, broker.value.message) == (
        "INVALID_CONFIG", "Broker-level min.insync.replicas cannot be altered while ELR is "
                          "enabled.")
    if removal:
        with pytest.raises(ApiError) as cluster:
            _run_op(IncrementalAlterConfigs(BROKER_RESOURCE, "", (change,)), image)
        assert (cluster.value.code, cluster.value.message) == (
            "INVALID_CONFIG", "Cluster-level min.insync.replicas cannot be removed while ELR "
                              "is enabled.")
    else:
        _, records = _run_op(IncrementalAlterConfigs(BROKER_RESOURCE, "", (change,)), image)
        assert records == [ConfigRecord(BROKER_RESOURCE, "", "min.insync.replicas", "3"),
                           ClearElrRecord("")]


@pytest.mark.parametrize("level", ["4.0-IV0", "4.0-IV1"])
def test_elr_upgrade(level: str) -> None:
    """testElrUpgrade: eligible.leader.replicas.version 1 is accepted at metadata.version
    4.0-IV1 (ELR then on), refused below (INVALID_UPDATE_VERSION)."""
    image = _features_image(LEVELS[level])
    assert not elr_enabled(image)
    if level == "4.0-IV0":
        with pytest.raises(ApiError) as refused:
            _run_op(_elr_on(), image)
        assert refused.value.code == "INVALID_UPDATE_VERSION"
    else:
        image, _ = _run_op(_elr_on(), image)
        assert elr_enabled(image)
