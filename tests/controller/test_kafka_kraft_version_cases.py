"""kraft.version levels and what they need, following Kafka's ``KRaftVersionTest``
(server-common/src/test/java/org/apache/kafka/server/common/).

kraftsim has no ``KRaftVersion`` enum: kraft.version is a feature whose levels are
``SUPPORTED_FEATURES["kraft.version"]`` (0 and 1), whose level 1 needs metadata.version
3.9-IV0 (``FEATURE_DEPENDENCIES``), and whose control records (KRaftVersionRecord and
VotersRecord, :mod:`kafka_format.control_records`) a log or snapshot carries only from
level 1. The simulated quorum has static voters, so a run is at kraft.version 0.

Ported: the levels are 0 and 1, each its own number, and no other level is known
(testFeatureLevel, testFromFeatureLevel); level 1 needs 3.9-IV0 and level 0 nothing above
the first KRaft version (testBootstrapMetadataVersion; level 0 at 3.0-IV1 is also
``test_level_zero_is_allowed_at_the_earliest_metadata_version`` of
``test_kafka_quorum_features_cases.py``); the quorum-state version of a level is that level:
a saved run (kraft.version 0) has a version-0 quorum-state with its voters
(testQuorumStateVersion; both versions are read and written in
``tests/kafka_format/test_kafka_node_file_cases.py``); KRaftVersionRecord and VotersRecord
are written at version 0 from kraft.version 1, and at kraft.version 0 a snapshot carries
neither (testKraftVersionRecordVersion, tesVotersRecordVersion).

Fixed while porting (failed on the old code): a saved run wrote its quorum-state at
version 1, Kafka's version of kraft.version 1; Kafka's ``QuorumState`` writes the version
of the partition's kraft.version (``KRaftVersion.quorumStateVersion``), so at kraft.version
0 it is version 0 and lists the voters (``currentVoters``).

Not ported: none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.operations.cluster import FEATURE_DEPENDENCIES, FeatureUpdate, UpdateFeatures
from kafka_format.control_records import encode_control_value
from kafka_format.errors import EncodeError
from kafka_format.files import read_quorum_state
from kafka_format.node_state import QuorumState
from kafka_format.snapshot_codec import snapshot_batches
from metadata.image import MetadataImage
from metadata.schema import FeatureLevelRecord
from metadata.versions import LEVELS, MINIMUM_BOOTSTRAP, MINIMUM_KRAFT, SUPPORTED_FEATURES
from raft import Snapshot, SnapshotId
from raft.batch import KRaftVersionRecord, Voter, VotersRecord
from sim.save import save_simulation

from .conftest import cluster
from .kafka_cases import brokers, generate, image_of, refusal

KRAFT = "kraft.version"


def _at(level: int) -> MetadataImage:
    return image_of(brokers(1, level=level))


def test_feature_levels() -> None:
    """KRaftVersionTest.testFeatureLevel and testFromFeatureLevel: the levels are 0 and 1;
    a level beyond them is not one the controller knows."""
    assert SUPPORTED_FEATURES[KRAFT] == (0, 1)
    image = _at(LEVELS["3.9-IV0"])
    for level in (0, 1):
        records, _ = generate(UpdateFeatures((FeatureUpdate(KRAFT, level),)), image)
        assert records == [FeatureLevelRecord(KRAFT, level)]
    error = refusal(UpdateFeatures((FeatureUpdate(KRAFT, 2),)), image)
    assert (error.code, error.message) == (
        "INVALID_UPDATE_VERSION", "Invalid update version 2 for feature kraft.version. "
        "Local controller 0 only supports versions 0-1")


def test_bootstrap_metadata_version() -> None:
    """KRaftVersionTest.testBootstrapMetadataVersion: level 1 needs 3.9-IV0, level 0 no
    more than the first KRaft version."""
    assert FEATURE_DEPENDENCIES[(KRAFT, 1)] == LEVELS["3.9-IV0"]
    assert (KRAFT, 0) not in FEATURE_DEPENDENCIES
    assert LEVELS["3.0-IV1"] == MINIMUM_KRAFT
    error = refusal(UpdateFeatures((FeatureUpdate(KRAFT, 1),)), _at(LEVELS["3.8-IV0"]))
    assert error.message.endswith("depends on metadata.version level 21")
    records, _ = generate(UpdateFeatures((FeatureUpdate(KRAFT, 1),)), _at(LEVELS["3.9-IV0"]))
    assert records == [FeatureLevelRecord(KRAFT, 1)]
    generate(UpdateFeatures((FeatureUpdate(KRAFT, 0),)), _at(MINIMUM_BOOTSTRAP))


def test_quorum_state_version(tmp_path: Path) -> None:
    """KRaftVersionTest.testQuorumStateVersion: a saved run is at kraft.version 0 (static
    voters, no KRaftVersionRecord), so each node's quorum-state is version 0 and names the
    voters, as Kafka's ``ElectionState.toQuorumStateData(0)`` writes it."""
    c = cluster(seed=5)
    assert c.run_until(c.idle, 10_000)
    for node_dir in save_simulation(c.sim, tmp_path / "run"):
        state = read_quorum_state(node_dir / "__cluster_metadata-0" / "quorum-state")
        assert isinstance(state, QuorumState)
        assert state.data_version == 0
        assert state.current_voters == tuple(sorted(c.sim.voter_ids))


@pytest.mark.parametrize("record", [
    KRaftVersionRecord(kraft_version=1),
    VotersRecord(voters=(Voter(voter_id=1, voter_directory_id="y2MUp2ibRQ-5obKvPS4aTg"),)),
])
def test_control_record_versions(record: KRaftVersionRecord | VotersRecord) -> None:
    """KRaftVersionTest.testKraftVersionRecordVersion and tesVotersRecordVersion: at
    kraft.version 1 both records are written at version 0 (the value's first int16)."""
    assert encode_control_value(record)[:2] == b"\x00\x00"


@pytest.mark.parametrize("controls", [
    (KRaftVersionRecord(kraft_version=0),),
    (KRaftVersionRecord(kraft_version=0),
     VotersRecord(voters=(Voter(voter_id=1, voter_directory_id="y2MUp2ibRQ-5obKvPS4aTg"),))),
])
def test_kraft_version_0_has_no_control_records(controls: tuple[object, ...]) -> None:
    """KRaftVersionTest.testKraftVersionRecordVersion and tesVotersRecordVersion, level 0:
    Kafka has no record version there (IllegalStateException); a snapshot at kraft.version
    0 carries neither record."""
    snapshot = Snapshot(SnapshotId(10, 1), ())
    with pytest.raises(EncodeError, match=r"kraft\.version 0"):
        snapshot_batches(snapshot, control_records=controls)
