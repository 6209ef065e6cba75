"""The cases of Kafka's ``kafka.server.OffsetsForLeaderEpochRequestTest``.

Kafka sends OffsetsForLeaderEpoch requests (as a follower would) to brokers of
a cluster and checks each partition's error code. kraftsim has no wire for the
request: each broker's :class:`~broker.replica_manager.ReplicaManager` answers
:meth:`~broker.replica_manager.ReplicaManager.last_offset_for_leader_epoch`
in-process, and the cluster is :class:`tests.broker.replica_cell.Cell`, whose
metadata images are written by hand. Killing the first leader is a leader
change in the image (the new leader's epoch is one more); the killed broker
stays up, which changes nothing for the brokers asked. A request with no
current leader epoch passes -1 (Kafka's NO_PARTITION_LEADER_EPOCH). No Kafka
test method is left out.
"""

from __future__ import annotations

from tests.broker.replica_cell import TOPIC, Cell


def _error(cell: Cell, broker: int, current_leader_epoch: int = -1) -> str:
    return cell.managers[broker].last_offset_for_leader_epoch(
        TOPIC, 0, 0, current_leader_epoch).error


def test_offsets_for_leader_epoch_error_codes() -> None:
    """testOffsetsForLeaderEpochErrorCodes: an unknown topic, then a follower and a broker
    that hosts no replica (both NOT_LEADER_OR_FOLLOWER)."""
    cell = Cell(brokers=(1, 2, 3))
    assert _error(cell, 1) == "UNKNOWN_TOPIC_OR_PARTITION"
    cell.create(replicas=(1, 2), leader=1)
    assert _error(cell, 2) == "NOT_LEADER_OR_FOLLOWER"  # the follower
    assert _error(cell, 3) == "NOT_LEADER_OR_FOLLOWER"  # not a replica
    assert _error(cell, 1) == "NONE"


def test_current_epoch_validation() -> None:
    """testCurrentEpochValidation: the current leader epoch is checked before leadership,
    so a follower answers FENCED_LEADER_EPOCH and UNKNOWN_LEADER_EPOCH as the leader does,
    and NOT_LEADER_OR_FOLLOWER only for its current epoch or none."""
    cell = Cell(brokers=(1, 2, 3))
    cell.create(replicas=(1, 2, 3), leader=1)
    cell.step()
    reg = cell.change(leader=2, isr=(2, 3))  # the first leader is killed
    cell.step()
    epoch = reg.leader_epoch
    assert epoch == 1
    assert _error(cell, 2) == "NONE"
    assert _error(cell, 2, epoch) == "NONE"
    assert _error(cell, 2, epoch - 1) == "FENCED_LEADER_EPOCH"
    assert _error(cell, 2, epoch + 1) == "UNKNOWN_LEADER_EPOCH"
    assert _error(cell, 3) == "NOT_LEADER_OR_FOLLOWER"
    assert _error(cell, 3, epoch) == "NOT_LEADER_OR_FOLLOWER"
    assert _error(cell, 3, epoch + 1) == "UNKNOWN_LEADER_EPOCH"
    assert _error(cell, 3, epoch - 1) == "FENCED_LEADER_EPOCH"
