"""A node's ``meta.properties`` and ``quorum-state``, following Kafka's
``MetaPropertiesTest``, ``MetaPropertiesEnsembleTest`` and ``FileQuorumStateStoreTest``.

Ported: each version of ``meta.properties`` written and read back as Kafka's
``MetaProperties`` has it: version 0 (a ZooKeeper-era broker) names the node
``broker.id`` and may lack it and the cluster id; version 1 names it ``node.id`` and
must have both (testV0Serialization*, testV1Serialization*, testClusterIdRequiredInV1,
testNodeIdRequiredInV1). ``quorum-state`` written at either KRaft version and read
back: version 0 keeps the voters and drops a voted directory id, version 1 keeps the
directory id and has no voters (testWriteReadElectedLeader, testWriteReadVotedCandidate,
testWriteReadUnknownLeader, testReload); a ``data_version`` other than 0 and 1 is
refused (testCantReadVersionQuorumState, testSupportedVersion).

Fixed on the way: kraftsim read a ``quorum-state`` without a field of its version as if
the field held its default; Kafka's JSON reader refuses it ("unable to locate field
'leaderEpoch', which is mandatory in version 1"), as kraftsim now does
(``test_node_state.py``). It now also reads the file as Kafka's FileQuorumStateStore
does: the first line alone (a JSON object spread over lines is refused, anything after
it ignored), ``data_version`` as Jackson's ``shortValue`` (a string or null is 0, a
fraction cut off, wrapped to 16 bits), integers within int32 (``appliedOffset`` int64),
and a version outside 0-1 refused with Kafka's words ("data_version (2) is not within
the min (0) and max (1) supported version").

Fixed on the way: kraftsim read and wrote a version-0 ``meta.properties``'s node id as
``node.id`` (Kafka: ``broker.id``), accepted a version-1 file without ``cluster.id`` or
``node.id``, any version number and a ``directory.id`` that is not a Uuid.
It now also reads the version and the node id as Kafka does (Java's trim and
``Integer.parseInt``: no ``_``, no spaces around a node id, int32) and refuses in Kafka's
order with Kafka's words: a version-1 file without ``node.id`` is "Failed to find
node.id" (Kafka's reader of the file looks for the node id first; Kafka's
testNodeIdRequiredInV1 builds without a file and gets build()'s "node.id was not
found."), a node id it cannot read "Unable to read node.id as a base-10 number.".

Not ported:
- MetaPropertiesTest's toString and hashCode checks: kraftsim prints a
  ``meta.properties`` as its fields (``kraftsim dump-log``), not as Kafka's toString.
- FileQuorumStateStoreTest.testCreateAndClear: kraftsim writes ``quorum-state`` in one
  write (no ``.tmp`` file to check) and never deletes it (Kafka's ``clear`` is for its
  tests).
- MetaPropertiesEnsembleTest (all 32 cases): not modelled. A kraftsim node has one log
  directory, its metadata log directory, and reads that directory's
  ``meta.properties`` alone; there is no ensemble of log directories to verify at
  start-up (empty, failed or mismatched directories), no copier writing new
  ``meta.properties`` files and no directory ids to generate.

MetaPropertiesEnsembleTest's cases, left out above: testEmptyLogDirsForFoo,
testEmptyLogDirsForEmpty, testErrorLogDirsForFoo, testErrorLogDirsForEmpty,
testLogDirPropsForFoo, testLogDirPropsForEmpty, testNonFailedDirectoryPropsForFoo,
testNonFailedDirectoryPropsForEmpty, testMetadataLogDirForFoo,
testMetadataLogDirForEmpty, testNodeIdForFoo, testNodeIdForEmpty, testClusterIdForFoo,
testClusterIdForEmpty, testSuccessfulVerification,
testSuccessfulVerificationWithClusterId,
testSuccessfulVerificationWithClusterIdAndNodeId, testVerificationFailureOnRequireV0,
testVerificationFailureOnRequireAtLeastOneValid,
testVerificationFailureOnLackOfMetadataLogDir,
testVerificationFailureOnMetadataLogDirWithError, testMetaPropertiesEnsembleLoad,
testMetaPropertiesEnsembleLoadEmpty, testMetaPropertiesEnsembleLoadError,
testCopierWithoutModifications, testCopyFooItemByItem,
testCopierGenerateValidDirectoryId, testCopierVerificationFailsOnEmptyAndErrorOverlap,
testCopierVerificationFailsOnEmptyAndLogDirsOverlap,
testCopierVerificationFailsOnErrorAndLogDirsOverlap, testCopierWriteLogDirChanges,
testCopierWriteChanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format.errors import DecodeError, DecodeFailure
from kafka_format.files import (
    read_meta_properties,
    read_quorum_state,
    write_meta_properties,
    write_quorum_state,
)
from kafka_format.node_state import (
    MetaProperties,
    QuorumState,
    format_meta_properties,
    parse_meta_properties,
    parse_properties,
    parse_quorum_state,
)
from metadata.uuids import ZERO_UUID

CLUSTER_ID = "zd2vLVrZQlCLJj8-k7A10w"
DIRECTORY_ID = "3Adc4FjfTeypRWROmQDNIQ"

# ------------------------------------------------------------------ MetaPropertiesTest


@pytest.mark.parametrize(("cluster_id", "node_id", "directory_id", "entries"), [
    (None, None, None, {"version": "0"}),
    (CLUSTER_ID, None, None, {"version": "0", "cluster.id": CLUSTER_ID}),
    (None, 0, None, {"version": "0", "broker.id": "0"}),
    (CLUSTER_ID, 0, None, {"version": "0", "cluster.id": CLUSTER_ID, "broker.id": "0"}),
    (CLUSTER_ID, 0, DIRECTORY_ID, {"version": "0", "cluster.id": CLUSTER_ID, "broker.id": "0",
                                   "directory.id": DIRECTORY_ID}),
], ids=["testV0SerializationWithNothing", "testV0SerializationWithJustClusterId",
        "testV0SerializationWithJustNodeId", "testV0SerializationWithJustClusterIdAndNodeId",
        "testV0SerializationWithAll"])
def test_version_0_meta_properties_round_trip(cluster_id: str | None, node_id: int | None,
                                              directory_id: str | None,
                                              entries: dict[str, str]) -> None:
    """Version 0 writes the node id as ``broker.id`` and reads it back from there."""
    meta = MetaProperties(version=0, cluster_id=cluster_id, node_id=node_id,
                          directory_id=directory_id, comments=())
    text = format_meta_properties(meta)
    assert parse_properties(text)[0] == entries
    assert parse_meta_properties(text) == meta


@pytest.mark.parametrize(("node_id", "cluster_id", "directory_id"), [
    (0, CLUSTER_ID, None), (1, CLUSTER_ID, DIRECTORY_ID), (2, "my@cluster@id", None),
], ids=["testV1SerializationWithoutDirectoryId", "testV1SerializationWithDirectoryId",
        "testV1SerializationWithNonUuidClusterId"])
def test_version_1_meta_properties_round_trip(node_id: int, cluster_id: str,
                                              directory_id: str | None) -> None:
    """Version 1 writes the node id as ``node.id``; a cluster id need not be a Uuid."""
    meta = MetaProperties(version=1, cluster_id=cluster_id, node_id=node_id,
                          directory_id=directory_id, comments=())
    text = format_meta_properties(meta)
    expected = {"version": "1", "cluster.id": cluster_id, "node.id": str(node_id)}
    if directory_id is not None:
        expected["directory.id"] = directory_id
    assert parse_properties(text)[0] == expected
    assert parse_meta_properties(text) == meta


def test_version_0_reads_the_node_id_from_broker_id_alone() -> None:
    """Kafka reads a version-0 file's ``broker.id`` and ignores a ``node.id`` in it."""
    meta = parse_meta_properties("version=0\nnode.id=5\nbroker.id=7\n")
    assert meta.node_id == 7
    assert parse_meta_properties("version=0\nnode.id=5\n").node_id is None
    assert parse_meta_properties("cluster.id=c\nbroker.id=3\n") == MetaProperties(
        version=0, cluster_id="c", node_id=3, comments=())  # no version: 0


def test_version_0_broker_id_goes_where_javas_hash_order_puts_it() -> None:
    """Kafka's writer emits keys in its hash table's order: ``broker.id`` after ``node.id``'s
    slot and before ``directory.id``."""
    meta = MetaProperties(version=0, cluster_id=CLUSTER_ID, node_id=4,
                          directory_id=DIRECTORY_ID, comments=())
    assert format_meta_properties(meta).splitlines() == [
        "broker.id=4", f"directory.id={DIRECTORY_ID}", "version=0", f"cluster.id={CLUSTER_ID}"]


@pytest.mark.parametrize(("text", "message"), [
    ("version=1\nnode.id=1\n", "cluster.id was not found."),
    (f"version=1\ncluster.id={CLUSTER_ID}\n", "Failed to find node.id"),
    ("version=1\n", "Failed to find node.id"),
], ids=["testClusterIdRequiredInV1", "testNodeIdRequiredInV1", "neither"])
def test_version_1_requires_cluster_and_node_ids(text: str, message: str) -> None:
    """A version-1 file without its cluster id or node id is refused, with the words of
    Kafka's reader of the file: its Builder(Properties) reads ``node.id`` first (a missing
    one: "Failed to find node.id"; Kafka's test builds without one and gets build()'s
    "node.id was not found."), then build() checks ``cluster.id``."""
    with pytest.raises(DecodeError, match=message):
        parse_meta_properties(text)


def test_a_missing_id_is_a_failure_of_the_file(tmp_path: Path) -> None:
    """Reading a refused file names it and the reason."""
    path = tmp_path / "meta.properties"
    path.write_text("version=1\nnode.id=1\n", encoding="utf-8")
    failure = read_meta_properties(path)
    assert isinstance(failure, DecodeFailure)
    assert failure.message == "cluster.id was not found."


@pytest.mark.parametrize(("text", "message"), [
    ("version=2\ncluster.id=c\nnode.id=1\n", "Unknown meta.properties version number 2"),
    ("version=one\n", "Invalid meta.properties version string 'one'"),
    ("version=1\ncluster.id=c\nnode.id=1\ndirectory.id=not-a-uuid\n",
     "Unable to read directory.id as a Uuid"),
])
def test_a_version_or_directory_id_kafka_cannot_read_is_refused(text: str,
                                                                message: str) -> None:
    """Beyond Kafka's cases: Kafka's MetaPropertiesVersion and Uuid refusals."""
    with pytest.raises(DecodeError, match=message):
        parse_meta_properties(text)


def test_meta_properties_file_round_trips(tmp_path: Path) -> None:
    """A version-0 file written and read back through the node's files."""
    meta = MetaProperties(version=0, cluster_id=CLUSTER_ID, node_id=9)
    path = write_meta_properties(tmp_path / "meta.properties", meta)
    assert read_meta_properties(path) == meta


# ----------------------------------------------------------- FileQuorumStateStoreTest

VOTERS = (1, 2, 3)
VOTER_DIRECTORY = "y2MUp2ibRQ-5obKvPS4aTg"


def write_and_read(tmp_path: Path, state: QuorumState) -> QuorumState:
    """``state`` written to ``quorum-state`` and read back."""
    read = read_quorum_state(write_quorum_state(tmp_path / "quorum-state", state))
    assert isinstance(read, QuorumState)
    return read


@pytest.mark.parametrize("kraft_version", [0, 1])
def test_write_read_elected_leader(tmp_path: Path, kraft_version: int) -> None:
    """FileQuorumStateStoreTest.testWriteReadElectedLeader: version 0 keeps the voters,
    version 1 has none."""
    state = QuorumState(leader_id=1, leader_epoch=2, data_version=kraft_version,
                        current_voters=VOTERS if kraft_version == 0 else None)
    read = write_and_read(tmp_path, state)
    assert read == state
    assert read.current_voters == (VOTERS if kraft_version == 0 else None)


@pytest.mark.parametrize("kraft_version", [0, 1])
def test_write_read_voted_candidate(tmp_path: Path, kraft_version: int) -> None:
    """FileQuorumStateStoreTest.testWriteReadVotedCandidate: version 1 keeps the voted
    candidate's directory id, version 0 drops it."""
    state = QuorumState(leader_epoch=2, voted_id=1, voted_directory_id=VOTER_DIRECTORY,
                        data_version=kraft_version,
                        current_voters=VOTERS if kraft_version == 0 else None)
    read = write_and_read(tmp_path, state)
    assert (read.voted_id, read.leader_id, read.leader_epoch) == (1, -1, 2)
    assert read.voted_directory_id == (VOTER_DIRECTORY if kraft_version == 1 else ZERO_UUID)


@pytest.mark.parametrize("kraft_version", [0, 1])
def test_write_read_unknown_leader(tmp_path: Path, kraft_version: int) -> None:
    """FileQuorumStateStoreTest.testWriteReadUnknownLeader."""
    state = QuorumState(leader_epoch=2, data_version=kraft_version,
                        current_voters=VOTERS if kraft_version == 0 else None)
    read = write_and_read(tmp_path, state)
    assert read == state
    assert (read.leader_id, read.voted_id) == (-1, -1)


def test_reload(tmp_path: Path) -> None:
    """FileQuorumStateStoreTest.testReload: a second reader of the file sees the state."""
    state = QuorumState(leader_epoch=2, data_version=1)
    path = write_quorum_state(tmp_path / "quorum-state", state)
    assert read_quorum_state(path) == read_quorum_state(Path(str(path))) == state


def test_cant_read_version_2_quorum_state() -> None:
    """FileQuorumStateStoreTest.testCantReadVersionQuorumState."""
    text = ('{"leaderId":9990,"leaderEpoch":3012,"votedId":-1,"appliedOffset": 0,'
            '"currentVoters":[{"voterId":9990},{"voterId":9991},{"voterId":9992}],'
            '"data_version":2}')
    with pytest.raises(DecodeError, match=r"^data_version \(2\) is not within the min \(0\) "
                                          r"and max \(1\) supported version$") as refused:
        parse_quorum_state(text)
    assert refused.value.kind == "unsupported"


@pytest.mark.parametrize("version", [-1, 2, 3])
def test_supported_versions_are_0_and_1(version: int) -> None:
    """FileQuorumStateStoreTest.testSupportedVersion: QuorumStateData's versions are 0 to 1."""
    assert parse_quorum_state(
        '{"leaderId":-1,"leaderEpoch":0,"votedId":-1,"votedDirectoryId":'
        '"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}').data_version == 1
    assert parse_quorum_state(
        '{"clusterId":"","leaderId":-1,"leaderEpoch":0,"votedId":-1,"appliedOffset":0,'
        '"currentVoters":null,"data_version":0}').data_version == 0
    with pytest.raises(DecodeError, match=r"is not within the min \(0\) and max \(1\)"):
        parse_quorum_state(f'{{"leaderId":-1,"leaderEpoch":0,"data_version":{version}}}')


V1_STATE = ('{"leaderId":1,"leaderEpoch":5,"votedId":-1,'
            '"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')
V0_FIELDS = '"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,' \
    '"currentVoters":null'


@pytest.mark.parametrize(("text", "expected"), [
    (V1_STATE + "\nanything at all", 1),                   # the first line alone is read
    (V1_STATE + " trailing", 1),                           # and what follows the object on it
    ("{" + V0_FIELDS + ',"data_version":"1"}', 0),         # shortValue of a string is 0
    ("{" + V0_FIELDS + ',"data_version":null}', 0),
    (V1_STATE.replace('"data_version":1', '"data_version":1.9'), 1),  # a fraction cut off
    (V1_STATE.replace('"data_version":1', '"data_version":65537'), 1),  # wrapped to 16 bits
], ids=["first-line", "trailing", "string-version", "null-version", "fraction", "wrapped"])
def test_quorum_state_read_as_kafkas_file_store_reads_it(text: str, expected: int) -> None:
    """Beyond Kafka's cases: FileQuorumStateStore parses the first line only, and reads
    ``data_version`` with Jackson's ``shortValue``."""
    assert parse_quorum_state(text).data_version == expected


@pytest.mark.parametrize("text", [
    "",
    "\n" + V1_STATE,                                          # the first line is empty
    V1_STATE[:30] + "\n" + V1_STATE[30:],                     # JSON across two lines
    V1_STATE.replace('"leaderEpoch":5', '"leaderEpoch":2147483648'),  # beyond an int
    V1_STATE.replace('"leaderEpoch":5', '"leaderEpoch":5.0'),
    V1_STATE.replace('"leaderEpoch":5', '"leaderEpoch":NaN'),
    V1_STATE.replace('"data_version":1', '"data_version":65538'),  # 2 once wrapped
    "{" + V0_FIELDS.replace('"appliedOffset":0', '"appliedOffset":9223372036854775808')
    + ',"data_version":0}',
    V1_STATE.replace('"votedId":-1', '"votedId":-2147483649'),  # below an int
    "{" + V0_FIELDS.replace('"appliedOffset":0', '"appliedOffset":-9223372036854775809')
    + ',"data_version":0}',
], ids=["empty", "empty-first-line", "two-lines", "epoch-beyond-int32", "epoch-fraction",
        "nan", "wrapped-to-2", "offset-beyond-int64", "voted-below-int32",
        "offset-below-int64"])
def test_quorum_state_kafka_refuses(text: str) -> None:
    """Beyond Kafka's cases: what FileQuorumStateStore fails to read (the file as a whole:
    position 0)."""
    with pytest.raises(DecodeError) as refused:
        parse_quorum_state(text)
    assert refused.value.position == 0


def test_quorum_state_integers_reach_the_ends_of_their_java_types() -> None:
    """Beyond Kafka's cases: the ids and epoch are read as Java ints, the applied offset as
    a Java long, each to both ends of its range."""
    low = parse_quorum_state(
        "{" + V0_FIELDS.replace('"leaderId":1', '"leaderId":-2147483648')
        .replace('"appliedOffset":0', '"appliedOffset":-9223372036854775808')
        + ',"data_version":0}')
    assert (low.leader_id, low.applied_offset) == (-2**31, -2**63)
    high = parse_quorum_state(
        "{" + V0_FIELDS.replace('"leaderEpoch":5', '"leaderEpoch":2147483647')
        .replace('"appliedOffset":0', '"appliedOffset":9223372036854775807')
        + ',"data_version":0}')
    assert (high.leader_epoch, high.applied_offset) == (2**31 - 1, 2**63 - 1)


def test_meta_properties_bytes_are_read_as_latin_1(tmp_path: Path) -> None:
    """Beyond Kafka's cases: Kafka loads meta.properties from its bytes, one ISO-8859-1
    character each, so bytes that are not UTF-8 still read, and a non-ASCII value Kafka
    (and kraftsim) wrote as UTF-8 comes back as its Latin-1 reading."""
    path = tmp_path / "meta.properties"
    path.write_bytes(b"version=1\nnode.id=1\ncluster.id=caf\xe9\n")
    meta = read_meta_properties(path)
    assert isinstance(meta, MetaProperties) and meta.cluster_id == "caf\u00e9"
    write_meta_properties(path, MetaProperties(version=1, cluster_id="caf\u00e9", node_id=1))
    meta = read_meta_properties(path)
    assert isinstance(meta, MetaProperties) and meta.cluster_id == "caf\u00c3\u00a9"
