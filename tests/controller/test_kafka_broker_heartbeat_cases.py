"""Broker sessions and the heartbeat state machine, following the cases of Kafka's
BrokerHeartbeatManagerTest that kraftsim models (on the active controller's broker
service): which brokers have a valid session, which are fenced when their session
expires, and the next state a heartbeat asks for from each state (fenced, unfenced, in
controlled shutdown), with the controlled shutdown offset kept from the first time."""

from __future__ import annotations

from controller.operations import CreateTopics, FenceBroker, NewTopic, UnregisterBroker
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
