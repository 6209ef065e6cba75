"""The ``/image`` nodes of the shell, following Kafka's ``image/node`` tests:
``ClusterImageNodeTest``, ``ClusterImageBrokersNodeTest``,
``ClusterImageControllersNodeTest``, ``ConfigurationImageNodeTest``,
``ConfigurationsImageNodeTest``, ``ClientQuotasImageNodeTest``,
``ScramCredentialDataNodeTest``, ``TopicImageNodeTest`` and
``printer/MetadataNodeRedactionCriteriaTest``.

Each case builds an image from records and walks :func:`shell.image_tree.image_dir`
as ``ls`` and ``cat`` do: a directory's child names, a missing child (None), and a
file's text (what ``cat`` prints). Kafka's node classes are kraftsim's directories
and files; where a Kafka case checks a child's class, the case here checks that the
child is a file or a directory.

Fixed on the way (the old code printed otherwise): a broker and a controller print
as Kafka's registrations do (listeners as Endpoints, features as version ranges, the
rack as an Optional, a broker's directories sorted); a partition's directories print
without Python's quotes, and one MIGRATING id per replica when its record named none;
a config resource of a type id Kafka does not know is named UNKNOWN, and a child name
such as ``BROKER:`` is read as Kafka reads it; and a config that Kafka's NORMAL criteria
call sensitive (a PASSWORD config or one the config schema does not know) prints
``[redacted]`` unless secrets are shown.

Where kraftsim differs on purpose (its shell docs say so): a client quota entity of a
type Kafka does not know is named ``TYPE(NAME)`` (Kafka's shell refuses it: "Invalid
entity type foobar"); ``ls`` sorts child names (Kafka's node lists ``name``, ``id``,
then the partitions; its ``ls`` sorts them too).

Not ported:
- ClientQuotasImageNodeTest.testErrorOnInvalidEmptyEntityName: kraftsim's shell names
  an entity only from an image, and no replayed ClientQuotaRecord leaves one with no
  parts to name.
- ClientQuotasImageNodeTest.testErrorOnInvalidEntityType: a kept difference (above).
- ConfigurationImageNodeTest's test schema (with a PASSWORD ``secret.config``): its cases
  run over the shell's own schema, whose secret there is a config the schema does not know.
  MetadataNodeRedactionCriteriaTest's configs are taken from Kafka's test schema, as that
  test takes them (the shell's own broker schema is checked in
  ``test_broker_config_redaction``).

Whole classes not modelled:
- ``printer/NodeStringifierTest`` (3 cases): kraftsim has no printer object that nodes
  call back (enterNode, leaveNode, output); each file formats its own text, checked above.
- ``metadata/util/RecordRedactorTest`` (5 cases): Kafka's controller redacts records in
  its debug log lines. kraftsim writes no such log; its record printers are the shell's
  ``log NODE`` of a simulated node (whose controller refuses unknown configs and has no
  SCRAM operation, so its log holds no secret) and ``kraftsim dump-log``, which prints
  every field, as Kafka's ``kafka-dump-log`` does.

RecordRedactorTest's cases, left out above: testTopicRecordToString,
testUserScramCredentialRecordToString,
testUserScramCredentialRecordToStringWithNullName, testSensitiveConfigRecordToString,
testNonSensitiveConfigRecordToString.
"""

from __future__ import annotations

import pytest

from controller.operations.config_defs import ConfigKey
from metadata.image import MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    ClientQuotaRecord,
    ConfigRecord,
    EntityData,
    FeatureLevelRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    TopicRecord,
    UserScramCredentialRecord,
)
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE
from shell import redaction
from shell.image_tree import image_dir
from shell.redaction import RedactionCriteria, is_sensitive_config
from shell.security_tree import quota_entity_name
from shell.tree import Dir, File, Node
from tests.metadata.kafka_image_cases import image_of

BROKER, TOPIC = 4, 2
MV = FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS["3.9-IV0"])
MV_FEATURE = BrokerFeature(METADATA_VERSION_FEATURE, 1, 4)


def walk(image: MetadataImage, path: str,
         redact: bool | RedactionCriteria = True) -> Node | None:
    """The node at ``path`` under ``/image`` (None where a child is missing)."""
    node: Node | None = image_dir(image, redact=redact)
    for name in path.split("/"):
        if not name:
            continue
        assert isinstance(node, Dir), f"{name!r} looked up in a file"
        node = node.child(name)
        if node is None:
            return None
    return node


def text(image: MetadataImage, path: str, redact: bool | RedactionCriteria = True) -> str:
    """What ``cat /image/PATH`` prints."""
    node = walk(image, path, redact)
    assert isinstance(node, File), path
    return node.text()


def names(image: MetadataImage, path: str) -> list[str]:
    """What ``ls /image/PATH`` lists."""
    node = walk(image, path)
    assert isinstance(node, Dir), path
    return node.names()


# ------------------------------------------------------------------ ClusterImageNodeTest

def test_cluster_node_child_names() -> None:
    """ClusterImageNodeTest.testChildNames."""
    assert names(MetadataImage.EMPTY, "cluster") == ["brokers", "controllers"]


@pytest.mark.parametrize("child", ["brokers", "controllers"])
def test_cluster_node_brokers_and_controllers_children(child: str) -> None:
    """ClusterImageNodeTest.testBrokersChild and testControllersChild: directories, empty
    in the empty image."""
    assert names(MetadataImage.EMPTY, f"cluster/{child}") == []


def test_cluster_node_unknown_child() -> None:
    """ClusterImageNodeTest.testUnknownChild."""
    assert walk(MetadataImage.EMPTY, "cluster/unknown") is None


# ------------------------------------------------------------ ClusterImageBrokersNodeTest

BROKER_1 = RegisterBrokerRecord(
    broker_id=1, incarnation_id="MJkaH0j0RwuC3W2GHQHtWA", broker_epoch=1001,
    features=(MV_FEATURE,), fenced=False,
    log_dirs=("anCdBWcFTlu8gE1wP6bh3g", "JsnDDNVyTL289kYk6sPzig"))
BROKERS = image_of([MV, BROKER_1])


def test_brokers_node_child_names() -> None:
    """ClusterImageBrokersNodeTest.testChildNames."""
    assert names(BROKERS, "cluster/brokers") == ["1"]


def test_brokers_node_prints_kafkas_broker_registration() -> None:
    """ClusterImageBrokersNodeTest.testNode1Child: Kafka's BrokerRegistration text, its
    directories sorted by Kafka's Uuid order."""
    assert text(BROKERS, "cluster/brokers/1") == (
        "BrokerRegistration(id=1, epoch=1001, incarnationId=MJkaH0j0RwuC3W2GHQHtWA, "
        "listeners=[], supportedFeatures={metadata.version: 1-4}, rack=Optional.empty, "
        "fenced=false, inControlledShutdown=false, isMigratingZkBroker=false, "
        "directories=[JsnDDNVyTL289kYk6sPzig, anCdBWcFTlu8gE1wP6bh3g])")


def test_brokers_node_prints_listeners_rack_and_version_ranges_as_kafka() -> None:
    """Beyond Kafka's case: listeners sorted by name, each as Kafka's Endpoint prints (with
    its security protocol's name), a rack as ``Optional[...]``, a one-version range as
    its number and a range to the largest int16 as ``N+``."""
    broker = RegisterBrokerRecord(
        broker_id=2, incarnation_id="MJkaH0j0RwuC3W2GHQHtWA", broker_epoch=7,
        end_points=(BrokerEndpoint("SSL", "b2", 9093, 1),
                    BrokerEndpoint("PLAINTEXT", "b2", 9092, 0)),
        features=(MV_FEATURE, BrokerFeature("kraft.version", 0, 0),
                  BrokerFeature("group.version", 1, 32767)),
        rack="r1", in_controlled_shutdown=True)
    shown = text(image_of([MV, broker]), "cluster/brokers/2")
    assert ("listeners=[Endpoint(listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, "
            "host='b2', port=9092), Endpoint(listenerName='SSL', securityProtocol=SSL, "
            "host='b2', port=9093)]") in shown
    assert ("supportedFeatures={group.version: 1+, kraft.version: 0, "
            "metadata.version: 1-4}, rack=Optional[r1], fenced=true, "
            "inControlledShutdown=true") in shown


def test_brokers_node_unknown_child() -> None:
    """ClusterImageBrokersNodeTest.testUnknownChild; a name is read as Java's
    Integer.parseInt reads it (kraftsim failed on ``²``, which Python calls a digit)."""
    assert walk(BROKERS, "cluster/brokers/2") is None
    for name in ("one", "²", "+", "1.0", " 1", "4294967297"):
        assert walk(BROKERS, f"cluster/brokers/{name}") is None, name
    for name in ("01", "+1", "\uff11"):  # the last a fullwidth 1, a decimal digit in Java
        assert isinstance(walk(BROKERS, f"cluster/brokers/{name}"), File), name


# -------------------------------------------------------- ClusterImageControllersNodeTest

CONTROLLERS = image_of([MV, RegisterControllerRecord(
    controller_id=2, incarnation_id="adGo6sTPS0uJshjvdTUmqQ", features=(MV_FEATURE,))])


def test_controllers_node_child_names() -> None:
    """ClusterImageControllersNodeTest.testChildNames."""
    assert names(CONTROLLERS, "cluster/controllers") == ["2"]


def test_controllers_node_prints_kafkas_controller_registration() -> None:
    """ClusterImageControllersNodeTest.testNode1Child."""
    assert text(CONTROLLERS, "cluster/controllers/2") == (
        "ControllerRegistration(id=2, incarnationId=adGo6sTPS0uJshjvdTUmqQ, "
        "zkMigrationReady=false, listeners=[], supportedFeatures={metadata.version: 1-4})")


def test_controllers_node_unknown_child() -> None:
    """ClusterImageControllersNodeTest.testUnknownChild."""
    assert walk(CONTROLLERS, "cluster/controllers/1") is None


# ------------------------------------------------------------- ConfigurationImageNodeTest

BROKER_DEFAULTS = image_of([
    MV, ConfigRecord(BROKER, "", "num.io.threads", "12"),
    ConfigRecord(BROKER, "", "listener.name.internal.ssl.keystore.password", "123")])
SECRET = "listener.name.internal.ssl.keystore.password"


def test_configuration_node_non_secret_child() -> None:
    """ConfigurationImageNodeTest.testNonSecretChild: a config the schema knows prints."""
    assert text(BROKER_DEFAULTS, "configs/BROKER/num.io.threads") == "12"


def test_configuration_node_secret_child() -> None:
    """ConfigurationImageNodeTest.testSecretChild: a sensitive config prints redacted (in
    text and in JSON), and as it is with secrets shown."""
    assert text(BROKER_DEFAULTS, f"configs/BROKER/{SECRET}") == "[redacted]"
    node = walk(BROKER_DEFAULTS, f"configs/BROKER/{SECRET}")
    assert isinstance(node, File) and node.json() == "[redacted]"
    assert text(BROKER_DEFAULTS, f"configs/BROKER/{SECRET}", redact=False) == "123"
    assert names(BROKER_DEFAULTS, "configs/BROKER") == [SECRET, "num.io.threads"]


def test_configuration_node_unknown_child() -> None:
    """ConfigurationImageNodeTest.testUnknownChild: a config not set has no node."""
    assert walk(BROKER_DEFAULTS, "configs/BROKER/num.network.threads") is None


# ------------------------------------------------------------ ConfigurationsImageNodeTest

RESOURCES = [(BROKER, ""), (BROKER, "0"), (TOPIC, ""), (TOPIC, "foobar"),
             (TOPIC, ":colons:"), (TOPIC, "__internal")]
CONFIGS = image_of([MV, *(ConfigRecord(kind, name, "min.insync.replicas", str(index + 1))
                          for index, (kind, name) in enumerate(RESOURCES))])


def test_configurations_node_child_names() -> None:
    """ConfigurationsImageNodeTest.testNodeChildNames: ``TYPE:NAME``, the bare type for
    the default resource."""
    assert sorted(names(CONFIGS, "configs")) == [
        "BROKER", "BROKER:0", "TOPIC", "TOPIC::colons:", "TOPIC:__internal", "TOPIC:foobar"]


def test_configurations_node_child_name_parsing() -> None:
    """ConfigurationsImageNodeTest.testNodeChildNameParsing: each name finds its own
    resource (a name holding colons too)."""
    shown = {name: text(CONFIGS, f"configs/{name}/min.insync.replicas")
             for name in names(CONFIGS, "configs")}
    assert shown == {"BROKER": "1", "BROKER:0": "2", "TOPIC": "3", "TOPIC:foobar": "4",
                     "TOPIC::colons:": "5", "TOPIC:__internal": "6"}
    assert walk(CONFIGS, "configs/TOPIC:colons:") is None


def test_configurations_node_reads_names_as_kafka_does() -> None:
    """Beyond Kafka's cases, its ``resourceFromName``: ``BROKER:`` is the default resource
    too, a name must continue with ``:`` after its type, and ``BROKER_LOGGER`` is not
    taken for ``BROKER``."""
    image = image_of([MV, ConfigRecord(BROKER, "", "num.io.threads", "8"),
                      ConfigRecord(8, "0", "kafka.server", "DEBUG")])
    assert text(image, "configs/BROKER:/num.io.threads") == "8"
    assert walk(image, "configs/BROKERS") is None
    assert walk(image, "configs/BROKER_LOGGER:0") is not None
    assert walk(image, "configs/BROKER_LOGGER:0/num.io.threads") is None
    assert walk(image, "configs/NOTATYPE:0") is None


def test_configurations_node_names_an_unknown_type_unknown() -> None:
    """Beyond Kafka's cases: a resource type id Kafka does not know is its UNKNOWN type
    (kraftsim named it ``UNKNOWN(ID)``); two such ids share one directory, as they share
    one resource in Kafka's image, and their configs are redacted (no schema)."""
    image = image_of([MV, ConfigRecord(0, "x", "a", "1"), ConfigRecord(7, "x", "b", "2")])
    assert names(image, "configs") == ["UNKNOWN:x"]
    assert names(image, "configs/UNKNOWN:x") == ["a", "b"]
    assert text(image, "configs/UNKNOWN:x/b") == "[redacted]"
    assert text(image, "configs/UNKNOWN:x/b", redact=False) == "2"


# -------------------------------------------------------------- ClientQuotasImageNodeTest

@pytest.mark.parametrize(("name", "escaped"), [
    ("", ""),
    ("abracadabra", "abracadabra"),
    ("\\foo\\bar", "\\\\foo\\\\bar"),
    ("(bob's name)", "\\(bob's name\\)"),
], ids=["testEscapeEmptyString", "testEscapeNormalString", "testEscapeBackslashes",
        "testEscapeParentheses"])
def test_client_quota_entity_names_escape(name: str, escaped: str) -> None:
    """ClientQuotasImageNodeTest.testEscape*: backslashes and parentheses are escaped."""
    assert quota_entity_name((("user", name),)) == f"user({escaped})"


@pytest.mark.parametrize(("entity", "expected"), [
    ({"client-id": "foo"}, "clientId(foo)"),
    ({"client-id": ""}, "clientId()"),
    ({"user": "my-user-name"}, "user(my-user-name)"),
    ({"user": ""}, "user()"),
    ({"user": "bob", "client-id": "reports12345"}, "clientId(reports12345)_user(bob)"),
    ({"ip": "127.0.0.1"}, "ip(127.0.0.1)"),
    ({"ip": ""}, "ip()"),
    ({"user": "foo\\bar"}, "user(foo\\\\bar)"),
    ({"client-id": "(this )one)"}, "clientId(\\(this \\)one\\))"),
], ids=["clientIdEntityRoundTrip", "defaultClientIdEntityRoundTrip", "userEntityRoundTrip",
        "defaultUserEntityRoundTrip", "clientIdAndUserEntityRoundTrip", "ipEntityRoundTrip",
        "defaultIpEntityRoundTrip", "testUserEntityWithBackslashesInNameRoundTrip",
        "testClientIdEntityWithParentheses"])
def test_client_quota_entity_round_trip(entity: dict[str, str], expected: str) -> None:
    """ClientQuotasImageNodeTest's round trips: the entity's name, and the name finds the
    entity's quotas again."""
    record = ClientQuotaRecord(
        entity=tuple(EntityData(kind, name) for kind, name in entity.items()),
        key="request_percentage", value=25.0)
    image = image_of([MV, record])
    assert names(image, "clientQuotas") == [expected]
    assert text(image, f"clientQuotas/{expected}/request_percentage") == "25.0"


def test_client_quota_names_are_decoded_as_kafka_decodes_them() -> None:
    """Kafka's ``decodeEntity``: the parts in any order, a backslash taking any character
    as it is; a name that does not parse finds nothing."""
    record = ClientQuotaRecord(entity=(EntityData("user", "bob"),
                                       EntityData("client-id", "reports12345")),
                               key="request_percentage", value=25.0)
    image = image_of([MV, record])
    for name in ("clientId(reports12345)_user(bob)", "user(bob)_clientId(reports12345)",
                 "user(b\\ob)_clientId(reports12345)"):
        assert text(image, f"clientQuotas/{name}/request_percentage") == "25.0", name
    for name in ("user(bob)", "user(bob)_clientId(reports12345", "user(bob)-clientId(x)",
                 "user(bob)_clientId(reports12345)_", "group(bob)"):
        assert walk(image, f"clientQuotas/{name}") is None, name


def test_client_quota_default_entity_names_as_an_empty_name() -> None:
    """Beyond Kafka's cases: a default entity (no name) is named as an empty name is."""
    record = ClientQuotaRecord(entity=(EntityData("client-id", None),),
                               key="request_percentage", value=25.0)
    assert names(image_of([MV, record]), "clientQuotas") == ["clientId()"]


# ------------------------------------------------------------ ScramCredentialDataNodeTest

SCRAM_IMAGE = image_of([MV, UserScramCredentialRecord(
    name="alice", mechanism=1, salt=bytes.fromhex("4f1d6ea31e58c5ad3aaeb3266f55cce6"),
    stored_key=bytes.fromhex("3cfa1c3421b512d1d1dfc3355138b4ad"),
    server_key=bytes.fromhex("2d9781209073e8d03aee3cbc63a1d4ca"), iterations=16)])


def test_scram_node_prints_redacted() -> None:
    """ScramCredentialDataNodeTest.testPrintRedacted (the STRICT and NORMAL criteria)."""
    for criteria in (RedactionCriteria.STRICT, RedactionCriteria.NORMAL):
        assert text(SCRAM_IMAGE, "scram/SCRAM-SHA-256/alice", criteria) == (
            "ScramCredentialData(salt=[redacted], storedKey=[redacted], "
            "serverKey=[redacted], iterations=[redacted])")


def test_scram_node_prints_unredacted() -> None:
    """ScramCredentialDataNodeTest.testPrintUnredacted (the DISABLED criteria)."""
    assert text(SCRAM_IMAGE, "scram/SCRAM-SHA-256/alice", RedactionCriteria.DISABLED) == (
        "ScramCredentialData(salt=4f1d6ea31e58c5ad3aaeb3266f55cce6, "
        "storedKey=3cfa1c3421b512d1d1dfc3355138b4ad, "
        "serverKey=2d9781209073e8d03aee3cbc63a1d4ca, iterations=16)")


# ---------------------------------------------------------------------- TopicImageNodeTest

TOPIC_ID = "Mb5Qh3ENTU-ZCSMbj0o6LQ"
MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"
TOPIC_IMAGE = image_of([
    MV, TopicRecord("topic-image-node-test-topic", TOPIC_ID),
    PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=(2, 3, 4), isr=(2, 3),
                    leader=2, leader_epoch=1, partition_epoch=345,
                    directories=(MIGRATING,) * 3)])
TOPIC_PATH = "topics/byName/topic-image-node-test-topic"


def test_topic_node_child_names() -> None:
    """TopicImageNodeTest.testChildNames (``ls`` sorts them)."""
    assert sorted(names(TOPIC_IMAGE, TOPIC_PATH)) == ["0", "id", "name"]


def test_topic_node_name_and_id_children_are_files() -> None:
    """TopicImageNodeTest.testNameChild and testIdChild: leaves holding the name and id,
    under ``byName`` and ``byId`` alike."""
    assert text(TOPIC_IMAGE, f"{TOPIC_PATH}/name") == "topic-image-node-test-topic"
    assert text(TOPIC_IMAGE, f"{TOPIC_PATH}/id") == TOPIC_ID
    assert text(TOPIC_IMAGE, f"topics/byId/{TOPIC_ID}/name") == "topic-image-node-test-topic"


def test_topic_node_unknown_child() -> None:
    """TopicImageNodeTest.testUnknownChild."""
    assert walk(TOPIC_IMAGE, f"{TOPIC_PATH}/unknown") is None


def test_topic_node_partition_child() -> None:
    """TopicImageNodeTest.testChildPartitionId: Kafka's PartitionRegistration text, the
    directory ids without quotes."""
    assert text(TOPIC_IMAGE, f"{TOPIC_PATH}/0") == (
        f"PartitionRegistration(replicas=[2, 3, 4], "
        f"directories=[{MIGRATING}, {MIGRATING}, {MIGRATING}], isr=[2, 3], "
        "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, "
        "leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=345)")


def test_a_partition_record_without_directories_prints_migrating_ones() -> None:
    """Beyond Kafka's case: as Kafka's PartitionRegistration fills them in, a record that
    names no directories (older metadata.versions, kraftsim's own controller) prints one
    MIGRATING (zero) id per replica; the JSON keeps what the record holds."""
    image = image_of([MV, TopicRecord("t", TOPIC_ID), PartitionRecord(
        partition_id=0, topic_id=TOPIC_ID, replicas=(2, 3), isr=(2, 3), leader=2,
        leader_epoch=0, partition_epoch=0)])
    assert f"directories=[{MIGRATING}, {MIGRATING}], isr=[2, 3]" in text(
        image, "topics/byName/t/0")
    node = walk(image, "topics/byName/t/0")
    assert isinstance(node, File) and node.json()["directories"] == []


def test_topic_node_missing_partition_children() -> None:
    """TopicImageNodeTest.testChildPartitionIdNull."""
    assert walk(TOPIC_IMAGE, f"{TOPIC_PATH}/1") is None
    assert walk(TOPIC_IMAGE, f"{TOPIC_PATH}/a") is None


# --------------------------------------------------------- MetadataNodeRedactionCriteriaTest

TEST_SCHEMA = {
    BROKER: {"non.secret": ConfigKey("STRING"),
             "secret.config": ConfigKey("PASSWORD")},
    TOPIC: {"topic.secret.config": ConfigKey("PASSWORD")},
}


@pytest.fixture
def test_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's test schema: one plain and one PASSWORD broker config, one PASSWORD topic
    config."""
    monkeypatch.setattr(redaction, "CONFIG_SCHEMA", TEST_SCHEMA)


@pytest.mark.parametrize(("criteria", "redacts"), [
    (RedactionCriteria.STRICT, True), (RedactionCriteria.NORMAL, True),
    (RedactionCriteria.DISABLED, False),
])
def test_criteria_redact_scram_and_delegation_tokens(criteria: RedactionCriteria,
                                                     redacts: bool) -> None:
    """testStrictRedactsScram, testNormalRedactsScram, testDisabledDoesNotRedactScram,
    testStrictRedactsDelegationToken, testNormalRedactsDelegationToken and
    testDisabledDoesNotRedactDelegationToken."""
    assert criteria.redacts_scram is redacts
    assert criteria.redacts_delegation_tokens is redacts


@pytest.mark.usefixtures("test_schema")
@pytest.mark.parametrize(("criteria", "key", "redacts"), [
    (RedactionCriteria.STRICT, "non.secret", True),
    (RedactionCriteria.NORMAL, "non.secret", False),
    (RedactionCriteria.DISABLED, "non.secret", False),
    (RedactionCriteria.STRICT, "secret.config", True),
    (RedactionCriteria.NORMAL, "secret.config", True),
    (RedactionCriteria.DISABLED, "secret.config", False),
    (RedactionCriteria.STRICT, "unknown.config", True),
    (RedactionCriteria.NORMAL, "unknown.config", True),
    (RedactionCriteria.DISABLED, "unknown.config", False),
], ids=["testStrictRedactsNonSensitiveConfig", "testNormalDoesNotRedactNonSensitiveConfig",
        "testDisabledDoesNotRedactNonSensitiveConfig", "testStrictRedactsSensitiveConfig",
        "testNormalDoesRedactsSensitiveConfig", "testDisabledDoesNotRedactSensitiveConfig",
        "testStrictRedactsUnknownConfig", "testNormalDoesRedactsUnknownConfig",
        "testDisabledDoesNotRedactUnknownConfig"])
def test_criteria_redact_configs(criteria: RedactionCriteria, key: str,
                                 redacts: bool) -> None:
    """MetadataNodeRedactionCriteriaTest's config cases, over Kafka's test schema."""
    assert criteria.redacts_config(BROKER, key) is redacts


@pytest.mark.usefixtures("test_schema")
def test_sensitivity_follows_the_resource_types_schema() -> None:
    """A config is sensitive per resource type; a type with no schema is all sensitive."""
    assert is_sensitive_config(TOPIC, "topic.secret.config")
    assert is_sensitive_config(TOPIC, "non.secret")
    assert is_sensitive_config(8, "non.secret")  # BROKER_LOGGER: no schema


def test_kraftsims_schema_hides_only_what_it_does_not_know() -> None:
    """kraftsim's own schema: every topic and broker config it knows prints, anything else
    is hidden."""
    assert not is_sensitive_config(TOPIC, "retention.ms")
    assert not is_sensitive_config(BROKER, "num.io.threads")
    assert is_sensitive_config(BROKER, "ssl.keystore.password")
    assert is_sensitive_config(BROKER, "sasl.jaas.config")
    assert RedactionCriteria.of(True) is RedactionCriteria.NORMAL
    assert RedactionCriteria.of(False) is RedactionCriteria.DISABLED


def test_strict_criteria_redact_every_config_value() -> None:
    """STRICT (Kafka's ``MetadataNode.stringify``) hides even a known config."""
    assert text(BROKER_DEFAULTS, "configs/BROKER/num.io.threads",
                RedactionCriteria.STRICT) == "[redacted]"
