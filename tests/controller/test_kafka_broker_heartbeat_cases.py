"""Broker sessions and the heartbeat state machine, following the cases of Kafka's
BrokerHeartbeatManagerTest that kraftsim models (on the active controller's broker
service): which brokers have a valid session, which are fenced when their session
expires, and the next state a heartbeat asks for from each state (fenced, unfenced, in
controlled shutdown), with the controlled shutdown offset kept from the first time.

Ported: testHasValidSession (test_a_session_needs_a_registered_unfenced_broker_heard_from_
in_time), testFindOneStaleBroker (test_only_expired_sessions_are_fenced_and_a_fenced_broker_
is_not_stale), testNextCheckTimeNs (test_the_next_check_is_when_the_oldest_unfenced_session_
runs_out), testUsableBrokerIterator (test_usable_brokers_and_the_lowest_active_offset),
testCalculateNextBrokerState (test_the_next_state_of_a_fenced_broker,
test_the_next_state_of_an_unfenced_broker), testControlledShutdownOffsetIsOnlyUpdatedOnce
(test_the_controlled_shutdown_offset_is_kept_from_the_first_time).
testTouchThrowsExceptionUnlessRegistered is test_broker_service.py's
test_an_unknown_broker_and_a_stale_epoch_are_both_stale (a heartbeat of a broker with no
registration is answered STALE_BROKER_EPOCH, as Kafka's controller answers it before its
heartbeat manager would throw).

Not ported: testMetadataOffsetComparator and testBrokerHeartbeatStateList, the orderings
of Kafka's own sorted structures (brokers by metadata offset, by last contact); kraftsim
keeps sessions and offsets in dicts and takes the minimum, which the cases above check.
"""

from __future__ import annotations

from controller.operations import CreateTopics, FenceBroker, NewTopic, UnregisterBroker
from controller.operations.placement import fenced_brokers, usable_brokers
from metadata.requests import BrokerHeartbeatResponse
from sim.cluster import KRaftCluster

from .conftest import cluster
from .test_broker_service import _heartbeat, _service


def _settle(c: KRaftCluster, *ops: object) -> None:
    for op in ops:
        handle = c.submit(op)  # type: ignore[arg-type]
        assert c.run_until(lambda h=handle: h.done, 5000)  # type: ignore[misc]
        assert handle.error is None, handle.error


def test_a_session_needs_a_registered_unfenced_broker_heard_from_in_time() -> None:
    c = cluster()
    service = _service(c)
    first, second, third = sorted(c.config.broker_ids)[:3]
    now = c.sim.now
    service.last_contact[first] = now
    service.last_contact[second] = now + 5
    timeout = service.config.session_timeout_ms
    assert service.has_valid_session(first, now + timeout)
    assert not service.has_valid_session(first, now + timeout + 1)
    assert service.has_valid_session(second, now + timeout + 1)
    assert not service.has_valid_session(99, now)
    for broker in (second, third):  # stopped: no heartbeat unfences or re-registers them
        c.sim.crash(broker)
    _settle(c, FenceBroker(second), UnregisterBroker(third))
    assert not service.has_valid_session(second, c.sim.now)  # fenced: no session
    assert not service.has_valid_session(third, c.sim.now)  # gone


def test_only_expired_sessions_are_fenced_and_a_fenced_broker_is_not_stale() -> None:
    c = cluster()
    service = _service(c)
    first, second, third = sorted(c.config.broker_ids)[:3]
    now = c.sim.now
    for broker, seen in ((first, now), (second, now + 5), (third, now + 6)):
        service.last_contact[broker] = seen
    timeout = service.config.session_timeout_ms
    service.poll(now + timeout)
    assert service.fenced_by_timeout == []
    service.poll(now + timeout + 1)
    assert [b for b, _ in service.fenced_by_timeout] == [first]
    service.poll(now + timeout + 20)
    assert sorted(b for b, _ in service.fenced_by_timeout) == [first, second, third]


def test_the_next_state_of_a_fenced_broker() -> None:
    c = cluster()
    broker = min(c.config.broker_ids)
    assert _heartbeat(c, broker, want_fence=True).is_fenced
    epoch = c.active_controller().image.brokers[broker].epoch  # type: ignore[union-attr]
    behind = _heartbeat(c, broker, current_metadata_offset=epoch - 1)
    assert (behind.is_caught_up, behind.is_fenced) == (False, True)  # not caught up: fenced
    still = _heartbeat(c, broker, want_fence=True)
    assert (still.is_fenced, still.should_shut_down) == (True, False)
    assert _heartbeat(c, broker, want_shut_down=True) == \
        BrokerHeartbeatResponse(77, "NONE", True, True, True)  # shut down at once
    unfenced = _heartbeat(c, broker, current_metadata_offset=epoch)
    assert (unfenced.is_caught_up, unfenced.is_fenced) == (True, False)


def test_the_next_state_of_an_unfenced_broker() -> None:
    c = cluster()
    _settle(c, CreateTopics((NewTopic("t", 6, 3),)))
    image = c.active_controller().image  # type: ignore[union-attr]
    topic = image.topic("t")
    assert topic is not None
    leaders = {reg.leader for reg in topic.partitions.values()}
    leader = min(leaders)
    stays = _heartbeat(c, leader)
    assert (stays.is_fenced, stays.should_shut_down) == (False, False)
    controlled = _heartbeat(c, leader, want_shut_down=True)  # leads: controlled shutdown
    assert (controlled.is_fenced, controlled.should_shut_down) == (False, False)
    assert c.active_controller().image.brokers[leader].in_controlled_shutdown  # type: ignore
    other = next(b for b in sorted(c.config.broker_ids) if b != leader)
    both = _heartbeat(c, other, want_fence=True, want_shut_down=True)  # fence + shut down
    assert (both.is_fenced, both.should_shut_down) == (True, True)


def test_the_controlled_shutdown_offset_is_kept_from_the_first_time() -> None:
    c = cluster()
    _settle(c, CreateTopics((NewTopic("t", 6, 3),)))
    topic = c.active_controller().image.topic("t")  # type: ignore[union-attr]
    assert topic is not None
    leader = min(reg.leader for reg in topic.partitions.values())
    service = _service(c)
    _heartbeat(c, leader, want_shut_down=True)
    first = service.shutdown_offsets[leader]
    _settle(c, CreateTopics((NewTopic("u", 1, 1),)))  # the log moves on
    others = [b for b in sorted(c.config.broker_ids) if b != leader]
    for other in others:
        _heartbeat(c, other, current_metadata_offset=first - 1)
    waiting = _heartbeat(c, leader, want_shut_down=True)
    assert (waiting.is_fenced, waiting.should_shut_down) == (False, False)
    assert service.shutdown_offsets[leader] == first
    for other in others:
        _heartbeat(c, other, current_metadata_offset=first)
    assert service.lowest_active_offset() == first
    done = _heartbeat(c, leader, want_shut_down=True)
    assert (done.is_fenced, done.should_shut_down) == (True, True)


def test_the_next_check_is_when_the_oldest_unfenced_session_runs_out() -> None:
    """testNextCheckTimeNs: the controller wakes when the oldest unfenced session runs out
    (its last contact plus the timeout; kraftsim's milliseconds make that 1 ms past the
    last valid instant), the next oldest once that one is being fenced, and not at all
    once every broker is fenced (Kafka's Long.MAX_VALUE)."""
    c = cluster()
    service = _service(c)
    first, second, third = sorted(c.config.broker_ids)[:3]
    for broker in (first, second, third):  # stopped: no heartbeat unfences them
        c.sim.crash(broker)
    now = c.sim.now
    timeout = service.config.session_timeout_ms
    service.has_valid_session(first, now)  # this activation's sessions
    for broker, seen in ((first, now), (second, now + 2), (third, now + 3)):
        service.last_contact[broker] = seen
    assert service.next_deadline() == now + timeout + 1
    service.poll(now + timeout)
    assert service.fenced_by_timeout == []
    assert service.next_deadline() == now + timeout + 1
    service.poll(now + timeout + 1)
    assert [b for b, _ in service.fenced_by_timeout] == [first]
    assert service.next_deadline() == now + 2 + timeout + 1  # the one being fenced is left
    _settle(c, FenceBroker(second), FenceBroker(third))
    assert service.next_deadline() is None


def test_a_silent_broker_is_fenced_as_its_session_runs_out() -> None:
    """testNextCheckTimeNs on a running cluster: a crashed broker, last heard from at T, is
    fenced by the commit right after T + broker.session.timeout.ms, not at a later check."""
    c = cluster(seed=5)  # (its controller has no other wake-up for 270 ms after T + 9 s)
    service = _service(c)
    broker = max(c.config.broker_ids)
    c.sim.crash(broker)
    seen = service.last_contact[broker]
    timeout = service.config.session_timeout_ms
    c.sim.run_for(seen + timeout - c.sim.now)
    assert not c.active_controller().image.brokers[broker].fenced  # type: ignore[union-attr]
    assert service.fenced_by_timeout == []
    c.sim.run_for(100)
    assert service.fenced_by_timeout[0] == (broker, seen + timeout + 1)
    assert c.active_controller().image.brokers[broker].fenced  # type: ignore[union-attr]


def test_usable_brokers_and_the_lowest_active_offset() -> None:
    """testUsableBrokerIterator: a broker in controlled shutdown is neither usable for
    placement nor counted in the lowest active offset; a fenced broker is placement's last
    resort (Kafka's UsableBroker with fenced set)."""
    c = cluster(brokers=4)
    _settle(c, CreateTopics((NewTopic("t", 8, 3),)))
    service = _service(c)
    image = c.active_controller().image  # type: ignore[union-attr]
    topic = image.topic("t")
    assert topic is not None
    ids = sorted(c.config.broker_ids)
    leading = min(reg.leader for reg in topic.partitions.values())
    others = [b for b in ids if b != leading]
    _heartbeat(c, leading, want_shut_down=True)  # leads: a controlled shutdown starts
    _settle(c, FenceBroker(others[-1]))
    image = c.active_controller().image  # type: ignore[union-attr]
    assert image.brokers[leading].in_controlled_shutdown
    assert usable_brokers(image) == sorted(others[:-1])
    assert fenced_brokers(image) == [others[-1]]
    for broker, offset in ((leading, 90), (others[0], 100), (others[1], 98), (others[2], 50)):
        service.metadata_offsets[broker] = offset
    assert service.lowest_active_offset() == 98  # neither the shutting-down nor the fenced
