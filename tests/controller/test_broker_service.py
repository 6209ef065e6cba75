"""The active controller's answers to broker heartbeats and registrations (Kafka's
ClusterControlManager and BrokerHeartbeatManager, as QuorumControllerTest drives them): the
errors of unknown and stale brokers, fencing on request or on an expired session, and
each step of a controlled shutdown."""

from __future__ import annotations

from typing import Any

import msgspec

from controller import WriteMode
from controller.broker_service import ControllerBrokerService
from controller.leader_balance import imbalanced
from controller.operations import (
    AlterPartitionReassignments,
    CreateTopics,
    Generated,
    NewTopic,
    OperationContext,
    ReassignablePartition,
    ReassignableTopic,
)
from controller.operations.leadership import leads_any
from metadata.requests import (
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicData,
    AlterPartitionTopicResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    NodeMessage,
)
from metadata.schema import BrokerRegistrationChangeRecord
from metadata.versions import LEVELS
from sim.cluster import KRaftCluster

from .conftest import cluster


def _service(c: KRaftCluster) -> ControllerBrokerService:
    active = c.active_controller()
    assert active is not None
    [service] = [app for app in c.sim.slots[active.node_id].apps
                 if isinstance(app, ControllerBrokerService)]
    return service


def _ask(c: KRaftCluster, broker: int, request: Any, settle_ms: int = 200) -> Any:
    """Hand ``request`` to the active controller's service as from ``broker``, let the
    cluster run while a write it makes commits, and return the one answer (taken before
    the network would carry it)."""
    service = _service(c)
    answers: list[Any] = []
    asked = request.correlation_id

    def keep(dst: int, response: Any) -> None:
        if response.correlation_id == asked:  # (not an answer to a broker's own request)
            answers.append(response)
    setattr(service, "_reply", keep)  # noqa: B010
    try:
        service.handle_message(NodeMessage(broker, service.controller.node_id, request),
                               c.sim.now)
        # Handled outside the event loop: tell the simulation that the controller's node
        # changed, so that a write the request made is flushed when it is due.
        c.sim.schedule(c.sim.now, lambda: None, "asked")
        for _ in range(settle_ms // 10):
            if answers:
                break
            c.sim.run_for(10)
    finally:
        delattr(service, "_reply")
    [answer] = answers
    return answer


def _heartbeat(c: KRaftCluster, broker: int, **fields: Any) -> BrokerHeartbeatResponse:
    registration = c.active_controller().image.brokers[broker]  # type: ignore[union-attr]
    request = BrokerHeartbeatRequest(
        **{"correlation_id": 77, "broker_id": broker, "broker_epoch": registration.epoch,
           "current_metadata_offset": c.history.end, **fields})
    answer = _ask(c, broker, request)
    assert isinstance(answer, BrokerHeartbeatResponse) and answer.correlation_id == 77
    return answer


def test_an_unknown_broker_and_a_stale_epoch_are_both_stale() -> None:
    """Kafka answers a heartbeat from a broker it has no registration for STALE_BROKER_EPOCH."""
    c = cluster()
    unknown = _ask(c, 9, BrokerHeartbeatRequest(5, 9, 40, 0))
    assert unknown == BrokerHeartbeatResponse(5, "STALE_BROKER_EPOCH")
    broker = min(c.config.broker_ids)
    epoch = c.active_controller().image.brokers[broker].epoch  # type: ignore[union-attr]
    stale = _ask(c, broker, BrokerHeartbeatRequest(6, broker, epoch - 1, 0))
    assert stale == BrokerHeartbeatResponse(6, "STALE_BROKER_EPOCH")


def test_a_running_broker_heartbeats_unfenced_and_caught_up() -> None:
    c = cluster()
    broker = min(c.config.broker_ids)
    answer = _heartbeat(c, broker)
    assert answer == BrokerHeartbeatResponse(77, "NONE", is_caught_up=True, is_fenced=False)
    behind = _heartbeat(c, broker, current_metadata_offset=0)
    assert not behind.is_caught_up and not behind.is_fenced


def test_want_fence_fences_and_a_caught_up_heartbeat_unfences() -> None:
    c = cluster()
    broker = min(c.config.broker_ids)
    fenced = _heartbeat(c, broker, want_fence=True)
    assert (fenced.error, fenced.is_fenced, fenced.should_shut_down) == ("NONE", True, False)
    assert c.active_controller().image.brokers[broker].fenced  # type: ignore[union-attr]
    assert _heartbeat(c, broker, current_metadata_offset=0).is_fenced  # not caught up
    unfenced = _heartbeat(c, broker)
    assert (unfenced.error, unfenced.is_fenced) == ("NONE", False)
    assert not c.active_controller().image.brokers[broker].fenced  # type: ignore[union-attr]


def _leader_of_something(c: KRaftCluster) -> int:
    handle = c.submit(CreateTopics((NewTopic("t", 6, 3),)))
    assert c.run_until(lambda: handle.done, 5000)
    topic = c.active_controller().image.topic("t")  # type: ignore[union-attr]
    assert topic is not None
    return min(reg.leader for reg in topic.partitions.values())


def test_controlled_shutdown_moves_leaders_then_fences_and_says_shut_down() -> None:
    """Kafka's order: a leader first moves its leaderships away; it is fenced and told to
    shut down once every active broker that heartbeats has reached those records."""
    c = cluster()
    broker = _leader_of_something(c)
    others = [b for b in sorted(c.config.broker_ids) if b != broker]
    first = _heartbeat(c, broker, want_shut_down=True)
    assert (first.error, first.is_fenced, first.should_shut_down) == ("NONE", False, False)
    service = _service(c)
    shutdown_offset = service.shutdown_offsets[broker]
    assert shutdown_offset >= 0
    for other in others:  # one of them misses the moves
        _heartbeat(c, other, current_metadata_offset=shutdown_offset - (other == others[0]))
    behind = _heartbeat(c, broker, want_shut_down=True)
    assert (behind.is_fenced, behind.should_shut_down) == (False, False)
    assert c.active_controller().image.brokers[broker].in_controlled_shutdown  # type: ignore
    _heartbeat(c, others[0])  # now it has them
    done = _heartbeat(c, broker, want_shut_down=True)
    assert (done.error, done.is_fenced, done.should_shut_down) == ("NONE", True, True)
    again = _heartbeat(c, broker, want_shut_down=True)  # fenced already: at once
    assert again == BrokerHeartbeatResponse(77, "NONE", True, True, True)


def test_a_broker_that_leads_nothing_shuts_down_at_once() -> None:
    c = cluster()
    broker = min(c.config.broker_ids)  # no topics: it leads nothing
    answer = _heartbeat(c, broker, want_shut_down=True)
    assert (answer.error, answer.is_fenced, answer.should_shut_down) == ("NONE", True, True)
    registration = c.active_controller().image.brokers[broker]  # type: ignore[union-attr]
    assert registration.fenced and not registration.in_controlled_shutdown


def test_an_expired_session_fences_the_broker_and_only_when_active() -> None:
    c = cluster()
    service = _service(c)
    broker = min(c.config.broker_ids)
    now = c.sim.now
    assert service.next_deadline() is not None
    contacts = dict(service.last_contact)
    service.poll(now + service.config.session_timeout_ms + 1)
    # one fence each, the longest silent first (Kafka's maybeFenceOneStaleBroker)
    assert [b for b, _ in service.fenced_by_timeout] == \
        sorted(c.config.broker_ids, key=lambda b: (contacts[b], b))
    assert broker in service.fencing
    standbys = [app for n in c.config.controller_ids for app in c.sim.slots[n].apps
                if isinstance(app, ControllerBrokerService) and app is not service]
    assert standbys and all(s.next_deadline() is None for s in standbys)


def test_a_controller_that_was_never_active_knows_no_broker_session() -> None:
    """Only the active controller tracks sessions (Kafka's BrokerHeartbeatManager lives
    with the active controller): a standby that never led counts no broker as alive."""
    c = cluster()
    active = _service(c)
    standbys = [app for n in c.config.controller_ids for app in c.sim.slots[n].apps
                if isinstance(app, ControllerBrokerService) and app is not active
                and app.session_epoch is None]
    assert standbys
    for standby in standbys:
        assert not any(standby.has_valid_session(b, c.sim.now) for b in c.config.broker_ids)
        assert standby.last_contact == {}


def test_a_second_incarnation_with_a_live_session_is_a_duplicate() -> None:
    c = cluster()
    broker = min(c.config.broker_ids)
    answer = _ask(c, broker, BrokerRegistrationRequest(3, broker, "another-incarnation"))
    assert answer == BrokerRegistrationResponse(3, "DUPLICATE_BROKER_REGISTRATION")
    again = _ask(c, broker, BrokerRegistrationRequest(
        4, broker, c.active_controller().image.brokers[broker].incarnation_id))  # type: ignore
    assert isinstance(again, BrokerRegistrationResponse) and again.error == "NONE"
    assert again.broker_epoch > 0


def test_a_session_is_valid_until_its_timeout() -> None:
    c = cluster()
    service = _service(c)
    broker = min(service.last_contact, key=lambda b: (service.last_contact[b], b))  # oldest
    seen = service.last_contact[broker]
    timeout = service.config.session_timeout_ms
    assert service.has_valid_session(broker, seen + timeout)
    assert not service.has_valid_session(broker, seen + timeout + 1)
    assert not service.has_valid_session(99, seen)
    service.poll(seen + timeout)  # not yet expired
    assert service.fenced_by_timeout == []
    service.poll(seen + timeout + 1)
    service.poll(seen + timeout + 2)  # a fence under way is not asked for again
    assert [b for b, _ in service.fenced_by_timeout].count(broker) == 1


def test_a_fence_refused_at_once_is_tried_again_each_millisecond_without_a_livelock() -> None:
    """A session fence the write mode refuses at once (transactional writes forced below
    metadata.version 3.6-IV1, a fence larger than one batch) leaves the broker unfenced
    and stale: the controller asks again 1 ms after each try, as the clock moves, not
    again and again at the same instant (Kafka reschedules its fence check at the next
    check time, which a stale broker keeps in the past)."""
    c = cluster(metadata_version=LEVELS["3.6-IV0"], mode=WriteMode.TRANSACTIONAL, batch=3)
    for name in ("a", "b", "c"):  # two records each: one batch, no transaction needed
        handle = c.submit(CreateTopics((NewTopic(name, 1, 3),)))
        assert c.run_until(lambda h=handle: h.done, 5000)  # type: ignore[misc]
        assert handle.error is None, handle.error
    service = _service(c)
    # The broker heard from first (its session expires first, alone): like every broker it
    # is in all three ISRs, so its fence is 4 records.
    contact = service.last_contact
    broker = min(contact, key=lambda b: (contact[b], b))
    assert [contact[b] for b in contact].count(contact[broker]) == 1
    c.sim.crash(broker)
    expiry = service.last_contact[broker] + service.config.session_timeout_ms + 1
    service.poll(expiry)
    image = c.active_controller().image  # type: ignore[union-attr]
    assert service.fenced_by_timeout == [(broker, expiry)] and not image.brokers[broker].fenced
    assert broker not in service.fencing
    assert service.next_deadline() == expiry + 1
    c.sim.run_for(expiry + 3 - c.sim.now)
    assert c.sim.violation is None
    tries = [t for b, t in service.fenced_by_timeout if b == broker]
    assert tries[-3:] == [expiry + 1, expiry + 2, expiry + 3]


def test_a_fenced_broker_is_not_fenced_again_when_its_session_expires() -> None:
    c = cluster()
    service = _service(c)
    broker = min(c.config.broker_ids)
    assert _heartbeat(c, broker, want_fence=True).is_fenced
    assert broker not in service.fencing
    service.poll(c.sim.now + service.config.session_timeout_ms + 1)
    assert broker not in [b for b, _ in service.fenced_by_timeout]
    assert sorted(b for b, _ in service.fenced_by_timeout) == \
        sorted(b for b in c.config.broker_ids if b != broker)


def test_a_standby_answers_not_controller() -> None:
    c = cluster()
    active = c.active_controller()
    assert active is not None
    [standby] = [app for n in c.config.controller_ids if n != active.node_id
                 for app in c.sim.slots[n].apps if isinstance(app, ControllerBrokerService)][:1]
    answers: list[Any] = []
    setattr(standby, "_reply", lambda dst, response: answers.append(response))  # noqa: B010
    for request in (BrokerHeartbeatRequest(1, 1, 5, 0), BrokerRegistrationRequest(2, 1, "x"),
                    AllocateProducerIdsRequest(3, 1, 5),
                    AlterPartitionRequest(4, 1, 5, _one("t", 0, 0, 0, (1,)))):
        standby.handle_message(NodeMessage(1, standby.controller.node_id, request), c.sim.now)
    assert [a.error for a in answers] == ["NOT_CONTROLLER"] * 4
    assert [a.correlation_id for a in answers] == [1, 2, 3, 4]


def test_producer_id_blocks_go_to_a_registered_broker_of_the_current_epoch() -> None:
    c = cluster()
    broker = min(c.config.broker_ids)
    epoch = c.active_controller().image.brokers[broker].epoch  # type: ignore[union-attr]
    first = _ask(c, broker, AllocateProducerIdsRequest(8, broker, epoch))
    second = _ask(c, broker, AllocateProducerIdsRequest(9, broker, epoch))
    assert isinstance(first, AllocateProducerIdsResponse) and first.error == "NONE"
    assert (second.producer_id_start, second.producer_id_len) == \
        (first.producer_id_start + 1000, 1000)
    assert _ask(c, broker, AllocateProducerIdsRequest(10, broker, epoch - 1)) == \
        AllocateProducerIdsResponse(10, "STALE_BROKER_EPOCH")
    assert _ask(c, broker, AllocateProducerIdsRequest(11, 99, 1)) == \
        AllocateProducerIdsResponse(11, "STALE_BROKER_EPOCH")


def _one(topic_id: str, partition: int, leader_epoch: int, partition_epoch: int,
         isr: tuple[int, ...]) -> tuple[AlterPartitionTopicData, ...]:
    """The topics of an AlterPartition request for one partition."""
    return (AlterPartitionTopicData(topic_id, (AlterPartitionPartitionData(
        partition, leader_epoch, partition_epoch, isr),)),)


def test_alter_partition_answers_with_the_new_state_or_the_error() -> None:
    c = cluster()
    handle = c.submit(CreateTopics((NewTopic("t", 1, 3),)))
    assert c.run_until(lambda: handle.done, 5000)
    image = c.active_controller().image  # type: ignore[union-attr]
    topic = image.topic("t")
    assert topic is not None
    reg = topic.partitions[0]
    leader = reg.leader
    request = AlterPartitionRequest(12, leader, image.brokers[leader].epoch, _one(
        topic.topic_id, 0, reg.leader_epoch, reg.partition_epoch, (leader,)))
    answer = _ask(c, leader, request)
    assert answer == AlterPartitionResponse(12, "NONE", (AlterPartitionTopicResponse(
        topic.topic_id, (AlterPartitionPartitionResponse(
            0, "NONE", leader, reg.leader_epoch, (leader,), 0, reg.partition_epoch + 1),)),))
    stale = _ask(c, leader, request)  # the same partition epoch again
    assert stale == AlterPartitionResponse(12, "NONE", (AlterPartitionTopicResponse(
        topic.topic_id, (AlterPartitionPartitionResponse(0, "INVALID_UPDATE_VERSION"),)),))


def test_a_stale_broker_epoch_refuses_the_whole_alter_partition() -> None:
    """Kafka checks the broker epoch for the request as a whole: STALE_BROKER_EPOCH at the
    top level, no partition answered, nothing written."""
    c = cluster()
    handle = c.submit(CreateTopics((NewTopic("t", 2, 3),)))
    assert c.run_until(lambda: handle.done, 5000)
    image = c.active_controller().image  # type: ignore[union-attr]
    topic = image.topic("t")
    assert topic is not None
    leader = topic.partitions[0].leader
    request = AlterPartitionRequest(14, leader, image.brokers[leader].epoch - 1, _one(
        topic.topic_id, 0, 0, 0, (leader,)))
    assert _ask(c, leader, request) == AlterPartitionResponse(14, "STALE_BROKER_EPOCH")
    after = c.active_controller().image.topic("t")  # type: ignore[union-attr]
    assert after is not None and after.partitions[0] == topic.partitions[0]


def test_a_controller_stopped_by_a_fault_answers_unknown_server_error() -> None:
    """A controller whose replay failed fatally is not active any more, but it answers the
    brokers' requests UNKNOWN_SERVER_ERROR (as its own writes fail), not NOT_CONTROLLER."""
    from tests.controller.test_fatal_replay_on_active import RemoveUnknownTopic

    c = cluster(seed=9)
    service = _service(c)
    broker = min(c.config.broker_ids)
    epoch = c.active_controller().image.brokers[broker].epoch  # type: ignore[union-attr]
    handle = c.submit(RemoveUnknownTopic())
    assert handle.error is not None and service.controller.fault is not None
    answers: list[Any] = []
    setattr(service, "_reply", lambda dst, response: answers.append(response))  # noqa: B010
    now = c.sim.now
    service.handle_message(NodeMessage(broker, service.controller.node_id,
                                       BrokerHeartbeatRequest(3, broker, epoch, 0)), now)
    service.handle_message(NodeMessage(broker, service.controller.node_id,
                                       AllocateProducerIdsRequest(4, broker, epoch)), now)
    assert answers == [BrokerHeartbeatResponse(3, "UNKNOWN_SERVER_ERROR"),
                       AllocateProducerIdsResponse(4, "UNKNOWN_SERVER_ERROR")]


def test_a_shut_down_request_during_a_fence_waits_for_the_fence() -> None:
    """wantShutDown while a fence of the broker is still under way (the service's own
    ``fencing`` set): not told to shut down, nor fenced, and no second fence; once that
    fence is done the next such heartbeat fences the broker and tells it to shut down."""
    c = cluster()
    service = _service(c)
    broker = min(c.config.broker_ids)
    service.fencing.add(broker)  # as while a FenceBroker of the broker is pending
    end = c.active_controller().raft.log.end_offset  # type: ignore[union-attr]
    answer = _heartbeat(c, broker, want_fence=True, want_shut_down=True)
    assert answer == BrokerHeartbeatResponse(77, "NONE", True, False, False)
    assert c.active_controller().raft.log.end_offset == end  # type: ignore[union-attr]
    service.fencing.discard(broker)
    answer = _heartbeat(c, broker, want_fence=True, want_shut_down=True)
    assert answer.should_shut_down and answer.is_fenced


def test_only_the_brokers_that_keep_heartbeating_stay_unfenced_and_in_sync() -> None:
    """QuorumControllerTest.testFenceMultipleBrokers: five brokers hold a topic of five
    partitions with five replicas each; four of them stop (crash) and only one keeps
    heartbeating. Once the others' sessions expire they are fenced, every partition's
    ISR is that one broker, which leads them all, off their preferred replicas."""
    c = cluster(seed=11, brokers=5)
    handle = c.submit(CreateTopics((NewTopic("foo", 5, 5),)))
    assert c.wait(handle) and handle.error is None
    keep = min(c.config.broker_ids)
    for broker in c.config.broker_ids:
        if broker != keep:
            c.sim.crash(broker)
    timeout = _service(c).config.session_timeout_ms
    c.sim.run_for(3 * timeout)
    active = c.active_controller()
    assert active is not None
    image = active.image
    assert [b for b in sorted(image.brokers) if not image.brokers[b].fenced] == [keep]
    topic = image.topic("foo")
    assert topic is not None and len(topic.partitions) == 5
    for reg in topic.partitions.values():
        assert (reg.isr, reg.leader) == ((keep,), keep)
    assert sum(1 for _ in imbalanced(image)) == 4
    assert not c.controller_faults


class _MarkOnly(msgspec.Struct, frozen=True):
    """The first batch of a controlled shutdown whose partition changes a failover lost:
    the broker's mark alone."""

    broker_id: int
    epoch: int

    def describe(self) -> str:
        return f"MarkOnly({self.broker_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        del ctx
        return Generated([BrokerRegistrationChangeRecord(self.broker_id, self.epoch,
                                                         in_controlled_shutdown=1)], None)


def test_a_shutdown_marked_but_not_finished_is_finished_by_the_next_heartbeat() -> None:
    """Kafka's heartbeat manager, new with each activation, moves a broker asking to shut
    down into CONTROLLED_SHUTDOWN at its first heartbeat, which writes the partition
    changes still to make (and no second mark): a broker marked by an earlier write whose
    changes were lost still gives its leaderships away, then is told to shut down."""
    c = cluster()
    broker = _leader_of_something(c)
    epoch = c.active_controller().image.brokers[broker].epoch  # type: ignore[union-attr]
    handle = c.submit(_MarkOnly(broker, epoch))  # type: ignore[arg-type]
    assert c.wait(handle) and handle.outcome() == "committed"
    image = c.active_controller().image  # type: ignore[union-attr]
    assert image.brokers[broker].in_controlled_shutdown and leads_any(image, broker)
    first = _heartbeat(c, broker, want_shut_down=True)
    assert (first.error, first.is_fenced, first.should_shut_down) == ("NONE", False, False)
    image = c.active_controller().image  # type: ignore[union-attr]
    assert not leads_any(image, broker)
    topic = image.topic("t")
    assert topic is not None and all(broker not in r.isr for r in topic.partitions.values())
    for other in c.config.broker_ids:
        if other != broker:
            _heartbeat(c, other)
    done = _heartbeat(c, broker, want_shut_down=True)
    assert (done.is_fenced, done.should_shut_down) == (True, True)


def test_a_shutdown_marked_with_nothing_left_to_move_waits_for_no_later_offset() -> None:
    """A broker marked in controlled shutdown by an earlier write that leads nothing: the
    next heartbeat starts the shutdown again and writes nothing, so the offset the active
    brokers must reach is the log's last one so far (not one past it); once they report
    the log's end, the broker is fenced and told to shut down at its next heartbeat."""
    c = cluster()
    broker = min(c.config.broker_ids)  # no topics: it leads nothing
    epoch = c.active_controller().image.brokers[broker].epoch  # type: ignore[union-attr]
    handle = c.submit(_MarkOnly(broker, epoch))  # type: ignore[arg-type]
    assert c.wait(handle) and handle.outcome() == "committed"
    end = c.active_controller().raft.log.end_offset  # type: ignore[union-attr]
    first = _heartbeat(c, broker, want_shut_down=True)
    assert (first.error, first.is_fenced, first.should_shut_down) == ("NONE", False, False)
    assert c.active_controller().raft.log.end_offset == end  # type: ignore[union-attr]
    assert _service(c).shutdown_offsets[broker] == end - 1
    for other in c.config.broker_ids:
        if other != broker:
            _heartbeat(c, other, current_metadata_offset=end - 1)
    done = _heartbeat(c, broker, want_shut_down=True)
    assert (done.is_fenced, done.should_shut_down) == (True, True)


def test_an_alter_partition_that_completes_a_reassignment_away_from_the_leader() -> None:
    """Kafka's answer when the ISR change completes a reassignment that removed the
    requesting leader: the change is written (the new replicas, a new leader) and the
    leader is told NEW_LEADER_ELECTED, so it fetches the new metadata."""
    c = cluster(brokers=4)
    handle = c.submit(CreateTopics((NewTopic("t", -1, -1, assignments=((0, 1, 2),)),)))
    assert c.run_until(lambda: handle.done, 5000)
    moved = c.submit(AlterPartitionReassignments((ReassignableTopic(
        "t", (ReassignablePartition(0, (3, 1, 2)),)),)))
    assert c.run_until(lambda: moved.done, 5000) and moved.error is None
    image = c.active_controller().image  # type: ignore[union-attr]
    topic = image.topic("t")
    assert topic is not None
    reg = topic.partitions[0]
    assert (reg.replicas, reg.adding_replicas, reg.removing_replicas) == \
        ((3, 1, 2, 0), (3,), (0,))
    request = AlterPartitionRequest(13, 0, image.brokers[0].epoch, _one(
        topic.topic_id, 0, reg.leader_epoch, reg.partition_epoch, (0, 1, 2, 3)))
    answer = _ask(c, 0, request)
    assert answer == AlterPartitionResponse(13, "NONE", (AlterPartitionTopicResponse(
        topic.topic_id, (AlterPartitionPartitionResponse(0, "NEW_LEADER_ELECTED"),)),))
    done = c.active_controller().image.topic("t")  # type: ignore[union-attr]
    assert done is not None
    reg = done.partitions[0]
    assert (reg.replicas, reg.isr, reg.leader, reg.adding_replicas) == \
        ((3, 1, 2), (1, 2, 3), 3, ())
