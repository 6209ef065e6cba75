"""A partition leader's AlterPartition names the broker epoch it holds for each member of
the ISR it asks for (KIP-903, AlterPartition v3; Kafka's Partition.addBrokerEpochToIsr):
its own broker epoch, for a follower the one its fetches carried, -1 for a member it holds
none of. The controller refuses a member that registered again since
(INELIGIBLE_REPLICA), and the leader then goes back to the ISR as written, waiting for a
fetch with the new epoch (Kafka's handleAlterPartitionError)."""

from __future__ import annotations

import random

import pytest

from broker.partition_log import PartitionLog
from broker.replica import FollowerState, Replica
from controller.errors import ApiError
from controller.operations import OperationContext
from controller.operations.alter_partition import AlterPartitionOp
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage, PartitionRegistration
from metadata.requests import AlterPartitionRequest, AlterPartitionResponse, NodeMessage
from metadata.schema import RegisterBrokerRecord
from metadata.versions import FETCH_BROKER_EPOCH, LEVELS
from tests.broker.replica_cell import CONTROLLER, TOPIC_ID, Cell, broker_epoch, one


def _requests(cell: Cell) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The AlterPartitions sent so far: (new ISR, its broker epochs)."""
    return [(one(request).new_isr, one(request).new_isr_epochs) for _, request in cell.alters]


def test_an_expansion_names_the_leaders_epoch_and_each_followers_fetched_epoch() -> None:
    """Broker 2 is in the ISR and fetching; broker 3 catches up (its fetches come after
    2's) and is asked back: the request names 1's own epoch, and 2's and 3's as their
    fetches carried them."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), isr=(1, 2), leader=1)
    cell.produce(1, ["a"])
    cell.run(500)
    assert _requests(cell) == [((1, 2, 3), (broker_epoch(1), broker_epoch(2),
                                            broker_epoch(3)))]


def test_an_empty_partitions_leader_names_its_members_epochs_too() -> None:
    """A leader with an empty log is held in compact form, its caught-up followers idle on
    their fetch sessions; when broker 3 joins, the Replica made for the proposal knows
    broker 2's epoch from 2's session."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), isr=(1, 2), leader=1)
    cell.run(500)
    assert _requests(cell) == [((1, 2, 3), (broker_epoch(1), broker_epoch(2),
                                            broker_epoch(3)))]


def test_a_shrink_names_the_epochs_of_the_members_it_keeps() -> None:
    """Broker 3 never fetches; at the periodic check past replica.lag.time.max.ms it
    leaves, and the request names the epochs of the leader and of broker 2."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), leader=1)
    del cell.managers[3]
    cell.run(40_000, every=1_000)
    assert _requests(cell) == [((1, 2), (broker_epoch(1), broker_epoch(2)))]


def test_a_member_the_leader_holds_no_epoch_of_is_named_minus_one() -> None:
    """Broker 2 is in the ISR but has not fetched from this leader yet (Kafka sends -1 for
    such a member, which the controller lets pass); broker 3 joins with its epoch."""
    cell = Cell()
    cell.create(replicas=(1, 2, 3), isr=(1, 2), leader=1)
    del cell.managers[2]
    cell.run(500)
    assert _requests(cell) == [((1, 2, 3), (broker_epoch(1), -1, broker_epoch(3)))]


@pytest.mark.parametrize(("level", "followers_named"), [
    (LEVELS["3.5-IV0"], False), (FETCH_BROKER_EPOCH, True), (LEVELS["4.0-IV0"], True)])
def test_fetches_carry_the_broker_epoch_from_3_5_iv1(level: int, followers_named: bool
                                                    ) -> None:
    """Below metadata.version 3.5-IV1 a follower's fetch (Kafka's Fetch before v15) carries
    no broker epoch: the leader holds -1 for its followers and names -1 for them, its own
    epoch still (AlterPartition v3 does not depend on metadata.version)."""
    cell = Cell(metadata_version=level)
    cell.create(replicas=(1, 2, 3), isr=(1, 2), leader=1)
    cell.produce(1, ["a"])
    cell.run(500)
    two, three = (broker_epoch(2), broker_epoch(3)) if followers_named else (-1, -1)
    assert _requests(cell) == [((1, 2, 3), (broker_epoch(1), two, three))]


def test_a_leader_that_leads_again_keeps_its_followers_epochs() -> None:
    """A new leader epoch led by the same broker keeps what it knew of each follower
    (Kafka's resetReplicaState when the leader is not new), the broker epoch too; a
    broker that becomes leader knows none."""
    def registration(leader: int, epoch: int) -> PartitionRegistration:
        return PartitionRegistration(replicas=(1, 2), isr=(1, 2), leader=leader,
                                     leader_epoch=epoch, partition_epoch=epoch)

    replica = Replica(1, TOPIC_ID, "t", 0, PartitionLog(check_sequences=False))
    replica.become(registration(1, 0), 0)
    replica.followers = (FollowerState(2, end_offset=0, last_fetch_at=5, broker_epoch=42),)
    replica.become(registration(1, 1), 10)
    assert replica.isr_epochs((1, 2), 7) == (7, 42)
    replica.become(registration(2, 2), 20)
    replica.become(registration(1, 3), 30)
    assert replica.isr_epochs((1, 2), 7) == (7, -1)


def _controller_image(cell: Cell, reregistered: int, epoch: int) -> MetadataImage:
    """The controller's image: the cell's, in which broker ``reregistered`` has registered
    again (a new incarnation) with broker epoch ``epoch`` and been unfenced since."""
    delta = MetadataDelta(cell.image)
    delta.replay_all([RegisterBrokerRecord(reregistered, f"again-{reregistered}",
                                           broker_epoch=epoch, fenced=False)])
    return delta.apply(cell.image.offset + 1, 1)


def _controller_answer(request: AlterPartitionRequest, image: MetadataImage,
                       ) -> AlterPartitionResponse:
    """What the controller (its AlterPartitionOp on ``image``) answers ``request``."""
    op = AlterPartitionOp(request.broker_id, request.broker_epoch, request.topics)
    try:
        generated = op.generate(OperationContext(image, random.Random(1), image.offset + 1, 0))
    except ApiError as error:
        return AlterPartitionResponse(request.correlation_id, error.code)
    return AlterPartitionResponse(request.correlation_id, "NONE", generated.response)


def test_a_follower_registered_again_is_not_taken_back_on_its_old_epoch() -> None:
    """Broker 2 fetched with epoch 2 and is caught up; by the time the leader's
    AlterPartition arrives, broker 2 registered again with epoch 20 (and was unfenced),
    which the leader's image does not show yet. The request names epoch 2, so the
    controller refuses it (INELIGIBLE_REPLICA) rather than take back a member on a fetch
    of its old incarnation; the leader goes back to the ISR as written and takes 2 back
    once it fetches with epoch 20 and the leader's image has that registration."""
    cell = Cell()
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a"], acks=1)
    cell.step()
    ((src, request),) = cell.alters
    assert _requests(cell) == [((1, 2), (broker_epoch(1), 2))]
    assert cell.replica(1).maximal_isr() == (1, 2)  # the expansion counts for the HW
    controller = _controller_image(cell, 2, 20)
    answer = _controller_answer(request, controller)
    assert [part.error for _, part in answer.partitions()] == ["INELIGIBLE_REPLICA"]
    cell.alters.clear()
    cell.managers[src].handle_message(NodeMessage(CONTROLLER, src, answer), cell.now)
    leader = cell.replica(1)
    assert leader.isr == (1,) and leader.maximal_isr() == (1,) and leader.pending_isr is None
    # broker 2's new incarnation fetches with epoch 20, which the leader's image lacks
    cell.managers[2].lifecycle.broker_epoch = 20  # type: ignore[union-attr]
    cell.produce(1, ["b"], acks=1)
    cell.run(500)
    assert cell.alters == []
    # the registration reaches every broker's image: 2 is taken back on epoch 20
    cell.publish(RegisterBrokerRecord(2, "again-2", broker_epoch=20, fenced=False))
    cell.produce(1, ["c"], acks=1)
    cell.run(500)
    ((src, request),) = cell.alters
    assert _requests(cell) == [((1, 2), (broker_epoch(1), 20))]
    answer = _controller_answer(request, controller)
    assert answer.error == "NONE"
    assert [part.error for _, part in answer.partitions()] == ["NONE"]
