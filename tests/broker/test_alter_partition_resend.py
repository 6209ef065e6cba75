"""An AlterPartition the controller never answers is sent again, as Kafka's controller
channel (NodeToControllerChannelManager, beneath the AlterPartitionManager; kraftsim's
:class:`~metadata.controller_channel.ControllerChannel`, the broker's "alter-partition"
channel) sends it:

- to the new active controller as soon as the broker's raft client knows it (Kafka: the
  connection to the old controller is gone, the request is queued again and goes to the
  controller the metadata names), with a new correlation id, so that a late answer to
  the old request is ignored;
- after ``request.timeout.ms`` without an answer (Kafka's network client times the
  request out and drops the connection; the channel sends the request again, to the
  same node only after the 50 ms reconnect back-off);
- after a NOT_CONTROLLER answer (Kafka's NodeToControllerRequestThread drops the node
  that refused and sends the same request to the controller known then: to the same
  node once the network client's 50 ms reconnect back-off has passed; with none known,
  to the next one, at the first of the channel's looks, every 100 ms from the refusal,
  that finds it: its thread polls 100 ms between looks);
- never once it was answered.
"""

from __future__ import annotations

from broker.alter_partition_manager import ALTER_RETRY_MS
from broker.config import BrokerConfig
from broker.loader import MetadataLoader
from metadata.controller_channel import CONTROLLER_LOOKUP_MS, RECONNECT_BACKOFF_MS
from metadata.requests import (
    AlterPartitionPartitionResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicResponse,
)
from metadata.schema import PartitionRecord
from raft import LeaderAndEpoch
from tests.broker.replica_cell import CONTROLLER, TOPIC, TOPIC_ID, Cell, one

NEW_CONTROLLER = CONTROLLER + 1


def _expansion_pending(cell: Cell) -> AlterPartitionRequest:
    """Partition (1, 2) led by 1, ISR (1,); broker 2 catches up and 1 asks to take it back
    (the request is taken from :attr:`Cell.alters` and returned, unanswered)."""
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.produce(1, ["a"], acks=1)
    cell.step()
    ((_, request),) = cell.alters
    cell.alters.clear()
    assert one(request).new_isr == (1, 2) and cell.alter_controllers[1, request.correlation_id] \
        == CONTROLLER
    return request


def _same_proposal(a: AlterPartitionRequest, b: AlterPartitionRequest) -> bool:
    return (a.broker_id, a.broker_epoch, a.topics) == (b.broker_id, b.broker_epoch, b.topics)


def _resent(cell: Cell, proposal: AlterPartitionRequest, controller: int) -> AlterPartitionRequest:
    """The one AlterPartition broker 1 sent since: ``proposal`` again, to ``controller``."""
    ((_, again),) = cell.alters
    assert _same_proposal(again, proposal)
    assert cell.alter_controllers[1, again.correlation_id] == controller
    return again


def _two_expansions_pending(cell: Cell) -> AlterPartitionRequest:
    """Partitions 0 and 1 of the topic, led by broker 1 with broker 2 out of their ISR: a
    produce to each has broker 1 propose an expansion of each ISR; the first goes out
    alone, the second waits in the AlterPartitionManager (one request in flight). The
    first request is returned, taken from ``cell.alters``, unanswered."""
    cell.create(replicas=(1, 2), isr=(1,), leader=1)
    cell.publish(PartitionRecord(1, TOPIC_ID, (1, 2), (1,), leader=1, leader_epoch=0,
                                 partition_epoch=0))
    for pid in (0, 1):
        cell.managers[1].produce(TOPIC, pid, ["a"], 1, lambda _: None)
    cell.step()
    ((_, first),) = cell.alters
    cell.alters.clear()
    assert one(first).partition_index == 0
    assert list(cell.managers[1].alter_partitions.unsent) == [(TOPIC_ID, 0), (TOPIC_ID, 1)]
    return first


def test_a_request_in_flight_goes_to_the_new_controller() -> None:
    """The controller crashes before it answers; once broker 1's raft client knows the new
    leader, the same proposal goes to it at once under a new correlation id; its answer
    is taken (before, the change stayed pending until the partition's next metadata
    change). Answered and written, nothing is sent again, at the next controller change
    or after the request timeout."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    cell.managers[1].loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
    cell.step()
    again = _resent(cell, first, NEW_CONTROLLER)
    assert again.correlation_id != first.correlation_id
    cell.answer_alter()
    leader = cell.replica(1)
    assert leader.isr == (1, 2) and leader.pending_isr is None
    cell.managers[1].loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER + 1, 3))
    cell.run(cell.config.request_timeout_ms + 1_000, every=1_000)
    assert cell.alters == []


def test_a_late_answer_to_the_old_request_is_ignored() -> None:
    """After the resend, the old controller's answer arrives after all (it was slow, not
    dead): it answers a request no longer in flight and is ignored, even a refusal that
    would otherwise drop the pending change; the new request's answer counts."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    cell.managers[1].loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
    cell.step()
    ((_, again),) = cell.alters
    cell.answer_alter("INELIGIBLE_REPLICA", request=(1, first))
    leader = cell.replica(1)
    assert leader.pending_isr == (1, 2) and leader.maximal_isr() == (1, 2)
    cell.step(1_000)
    assert [r.correlation_id for _, r in cell.alters] == [again.correlation_id]
    cell.answer_alter()
    assert leader.isr == (1, 2) and leader.pending_isr is None


def test_nothing_is_sent_while_no_controller_is_known() -> None:
    """An election under way (no leader known) sends nothing; the leader elected then gets
    the request."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    loader = cell.managers[1].loader
    loader.handle_leader_change(LeaderAndEpoch(None, 2))
    cell.step(100)
    assert cell.alters == []
    loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
    cell.step()
    _resent(cell, first, NEW_CONTROLLER)


def test_a_controller_leading_again_in_a_new_epoch_gets_the_request_again() -> None:
    """The controller restarts and is elected again: same node, new epoch. What it had
    pending is lost (or failed NOT_CONTROLLER), so the request goes to it again."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    cell.managers[1].loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 2))
    cell.step()
    ((_, again),) = cell.alters
    assert again.correlation_id != first.correlation_id and _same_proposal(again, first)


def test_an_unanswered_request_is_sent_again_after_the_request_timeout() -> None:
    """No leader change, no answer (the network lost the request or the answer): the request
    times out request.timeout.ms after it was sent, which drops the connection to that
    controller, so the same proposal goes out to it again once the channel's reconnect
    back-off (50 ms) has passed; and again after another timeout and back-off."""
    config = BrokerConfig(replica_fetch_wait_max_ms=0, request_timeout_ms=5_000)
    cell = Cell(brokers=(1, 2), config=config)
    first = _expansion_pending(cell)
    cell.step(5_000 + RECONNECT_BACKOFF_MS - 1)
    assert cell.alters == []
    cell.step(1)
    again = _resent(cell, first, CONTROLLER)
    assert again.correlation_id != first.correlation_id
    cell.alters.clear()
    cell.step(5_000)
    assert cell.alters == []
    cell.step(RECONNECT_BACKOFF_MS)
    ((_, third),) = cell.alters
    assert _same_proposal(third, first)
    assert cell.managers[1].next_deadline() is not None


def test_a_timed_out_request_goes_at_once_to_another_controller() -> None:
    """The reconnect back-off after a request timeout holds only the node that timed out: a
    controller the raft client names instead (here known since the request left, no
    resend at the change: the request went to the same epoch's leader) gets it at once."""
    config = BrokerConfig(replica_fetch_wait_max_ms=0, request_timeout_ms=5_000)
    cell = Cell(brokers=(1, 2), config=config)
    first = _expansion_pending(cell)
    cell.step(4_000)
    cell.managers[1].loader.leader = LeaderAndEpoch(NEW_CONTROLLER, 1)
    cell.step(999)
    assert cell.alters == []
    cell.step(1)
    _resent(cell, first, NEW_CONTROLLER)


def test_only_an_unanswered_request_is_sent_again() -> None:
    """Answered (refused for stale metadata here, which keeps the change pending), the
    request is no longer in flight: neither a new controller nor the request timeout
    sends it again. A later proposal (the image moved the leader epoch) left unanswered
    is the one request the next controller gets."""
    config = BrokerConfig(replica_fetch_wait_max_ms=0, request_timeout_ms=5_000)
    cell = Cell(brokers=(1, 2), config=config)
    first = _expansion_pending(cell)
    cell.answer_alter("FENCED_LEADER_EPOCH", request=(1, first))
    loader = cell.managers[1].loader
    loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
    cell.step()
    cell.run(10_000, every=1_000)
    assert cell.alters == [] and cell.replica(1).pending_isr == (1, 2)
    cell.change(leader=1)  # leader epoch 1: the pending change is dropped
    cell.produce(1, ["b"], acks=1)
    cell.run(500)
    ((_, second),) = cell.alters
    cell.alters.clear()
    assert (one(second).new_isr, one(second).leader_epoch) == ((1, 2), 1)
    assert cell.alter_controllers[1, second.correlation_id] == NEW_CONTROLLER
    loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER + 1, 3))
    cell.step()
    _resent(cell, second, NEW_CONTROLLER + 1)



def test_an_alter_partition_in_flight_does_not_delay_an_earlier_timer() -> None:
    """The broker's next deadline is its earliest timer: with an AlterPartition in flight
    and the ISR check due before the request times out, the broker wakes for the ISR
    check (not only at the request timeout); when the request times out first, it wakes
    then."""
    cell = Cell(brokers=(1, 2))  # request.timeout.ms 30 s, an ISR check every 15 s
    _expansion_pending(cell)
    manager = cell.managers[1]
    timeout = cell.config.request_timeout_ms
    isr_check = cell.now + cell.config.replica_lag_time_max_ms // 2
    assert isr_check < timeout
    assert manager.next_deadline() == isr_check
    config = BrokerConfig(replica_fetch_wait_max_ms=0, replica_lag_time_max_ms=10 * timeout)
    cell = Cell(brokers=(1, 2), config=config)
    _expansion_pending(cell)
    assert cell.managers[1].next_deadline() == cell.now + timeout


def test_losing_and_finding_the_same_controller_again_keeps_the_request() -> None:
    """The broker's raft client loses the leader (a fetch timeout: unattached, same epoch)
    and finds the same controller in the same epoch again: that controller still has the
    request, so nothing is sent again and its answer to the request is taken."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    loader = cell.managers[1].loader
    loader.handle_leader_change(LeaderAndEpoch(None, 1))
    cell.step(100)
    loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 1))
    cell.step()
    assert cell.alters == []
    cell.answer_alter(request=(1, first))
    leader = cell.replica(1)
    assert leader.isr == (1, 2) and leader.pending_isr is None


def test_not_controller_from_the_known_controller_goes_there_again_after_the_back_off(
        ) -> None:
    """The controller broker 1 knows refuses with NOT_CONTROLLER (it lost its leadership
    and broker 1 has not heard yet): the same request goes to it again once the
    channel's reconnect back-off has passed, not before; its answer then counts."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    cell.alters.append((1, first))
    cell.answer_alter("NOT_CONTROLLER", write=False)
    cell.step(RECONNECT_BACKOFF_MS - 1)
    assert cell.alters == []
    cell.step(1)
    again = _resent(cell, first, CONTROLLER)
    assert again.correlation_id != first.correlation_id
    cell.answer_alter()
    leader = cell.replica(1)
    assert leader.isr == (1, 2) and leader.pending_isr is None


def test_not_controller_after_a_new_controller_is_known_during_the_back_off() -> None:
    """The new controller becomes known while the request waits out the back-off: it is
    not lost, and goes to the new controller when the back-off ends."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    cell.alters.append((1, first))
    cell.answer_alter("NOT_CONTROLLER", write=False)
    cell.managers[1].loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
    cell.step(RECONNECT_BACKOFF_MS)
    _resent(cell, first, NEW_CONTROLLER)


def _refused_with_no_controller_known() -> tuple[Cell, AlterPartitionRequest, MetadataLoader]:
    """An expansion's AlterPartition refused NOT_CONTROLLER while broker 1's raft client
    knows no leader (an election under way): the cell, the request and the loader."""
    cell = Cell(brokers=(1, 2))
    first = _expansion_pending(cell)
    loader = cell.managers[1].loader
    loader.handle_leader_change(LeaderAndEpoch(None, 2))
    cell.alters.append((1, first))
    cell.answer_alter("NOT_CONTROLLER", write=False)
    return cell, first, loader


def test_not_controller_with_no_controller_known_waits_for_the_next() -> None:
    """NOT_CONTROLLER while an election is under way: nothing is sent however long it
    lasts; the leader elected then gets the same request at the channel's next look."""
    cell, first, loader = _refused_with_no_controller_known()
    cell.run(cell.config.request_timeout_ms + 1_000, every=CONTROLLER_LOOKUP_MS)
    assert cell.alters == []
    loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
    cell.step(CONTROLLER_LOOKUP_MS - 1)
    assert cell.alters == []
    cell.step(1)
    _resent(cell, first, NEW_CONTROLLER)


def test_with_no_controller_known_the_channel_looks_for_one_every_100_ms() -> None:
    """Kafka's NodeToControllerRequestThread with no controller: doWork polls 100 ms, then
    looks at the controller provider again. A controller the raft client learns between
    two looks gets the request refused meanwhile at the next look (every 100 ms from the
    refusal), not at once."""
    for known_after, sent_after in ((1, 100), (100, 100), (101, 200), (250, 300)):
        cell, first, loader = _refused_with_no_controller_known()
        refused_at = cell.now
        assert cell.managers[1].next_deadline() == refused_at + CONTROLLER_LOOKUP_MS
        while cell.now + CONTROLLER_LOOKUP_MS < refused_at + known_after:
            cell.step(CONTROLLER_LOOKUP_MS)
        assert cell.alters == []
        loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
        cell.step(refused_at + sent_after - 1 - cell.now)
        assert cell.alters == [], known_after
        cell.step(1)
        _resent(cell, first, NEW_CONTROLLER)


def test_a_proposal_made_during_the_reconnect_back_off_goes_after_the_request_out() -> None:
    """Partition 0's expansion is out when partition 1's is proposed (it waits: one
    request in flight). The controller refuses the first with NOT_CONTROLLER (it is
    still the controller broker 1 knows): the channel sends that same request again once
    its reconnect back-off has passed (partition 0 alone: the request was built before
    partition 1's proposal); its answer, with no top-level error, sends the next request
    at once, with partition 1's proposal."""
    cell = Cell(brokers=(1, 2))
    first = _two_expansions_pending(cell)
    cell.respond(1, first, AlterPartitionResponse(first.correlation_id, "NOT_CONTROLLER"))
    cell.step(RECONNECT_BACKOFF_MS - 1)
    assert cell.alters == []
    cell.step(1)
    again = _resent(cell, first, CONTROLLER)
    cell.answer_alter()
    cell.step()
    ((_, second),) = cell.alters
    assert (one(second).partition_index, one(second).new_isr) == (1, (1, 2))
    assert cell.alter_controllers[1, second.correlation_id] == CONTROLLER
    assert second.correlation_id != again.correlation_id


def test_a_batch_refused_while_no_controller_is_known_goes_whole_to_the_next() -> None:
    """The first request fails as a whole (a top-level error) and both partitions'
    proposals go in the next, ALTER_RETRY_MS later. That request is refused with
    NOT_CONTROLLER while an election is under way: it waits for the next controller and
    goes to it whole, both proposals under one new correlation id (neither is lost)."""
    cell = Cell(brokers=(1, 2))
    first = _two_expansions_pending(cell)
    cell.answer_alter("UNKNOWN_SERVER_ERROR", request=(1, first), top_level=True)
    cell.step(ALTER_RETRY_MS)
    ((_, both),) = cell.alters
    cell.alters.clear()
    assert [(topic_id, part.partition_index) for topic_id, part in both.partitions()] == \
        [(TOPIC_ID, 0), (TOPIC_ID, 1)]
    loader = cell.managers[1].loader
    loader.handle_leader_change(LeaderAndEpoch(None, 2))
    cell.respond(1, both, AlterPartitionResponse(both.correlation_id, "NOT_CONTROLLER"))
    cell.step(RECONNECT_BACKOFF_MS)
    assert cell.alters == []
    loader.handle_leader_change(LeaderAndEpoch(NEW_CONTROLLER, 2))
    cell.step(CONTROLLER_LOOKUP_MS - RECONNECT_BACKOFF_MS)  # the channel's next look
    again = _resent(cell, both, NEW_CONTROLLER)
    assert again.correlation_id != both.correlation_id
    cell.answer_alter()
    leader = cell.managers[1]
    assert [leader.replicas[TOPIC_ID, pid].isr for pid in (0, 1)] == [(1, 2), (1, 2)]
    assert leader.alter_partitions.unsent == {}


def test_not_controller_for_one_partition_sends_the_whole_request_again() -> None:
    """Kafka's controller channel looks for NOT_CONTROLLER anywhere in the answer: a
    partition answered NOT_CONTROLLER (its leader epoch is ahead of that controller's)
    makes the channel drop the answer and send the same request again after the back-off,
    the other partition's answer in it not taken either."""
    cell = Cell(brokers=(1, 2))
    first = _two_expansions_pending(cell)
    cell.answer_alter("UNKNOWN_SERVER_ERROR", request=(1, first), top_level=True)
    cell.step(ALTER_RETRY_MS)
    ((_, both),) = cell.alters
    cell.alters.clear()
    cell.respond(1, both, AlterPartitionResponse(both.correlation_id, "NONE", (
        AlterPartitionTopicResponse(TOPIC_ID, (
            AlterPartitionPartitionResponse(0, "INELIGIBLE_REPLICA"),
            AlterPartitionPartitionResponse(1, "NOT_CONTROLLER"))),)))
    assert cell.managers[1].replicas[TOPIC_ID, 0].pending_isr == (1, 2)
    cell.step(RECONNECT_BACKOFF_MS)
    _resent(cell, both, CONTROLLER)
