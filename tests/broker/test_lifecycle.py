"""BrokerLifecycleManager alone: registration, heartbeats, fencing and controlled shutdown
(Kafka's BrokerLifecycleManagerTest), driven by hand-written controller answers."""

from __future__ import annotations

import random

import pytest

from broker import MetadataLoader
from broker.config import BrokerConfig
from broker.lifecycle import BrokerLifecycleManager, BrokerState
from metadata.backoff import ExponentialBackoff
from metadata.requests import (
    BROKER_SESSION_TIMEOUT_MS,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    NodeMessage,
)
from metadata.schema import NoOpRecord
from raft import Batch
from raft.listener import LeaderAndEpoch

BROKER, CONTROLLER = 1, 3000
CONFIG = BrokerConfig()
TIMEOUT = BROKER_SESSION_TIMEOUT_MS // 2  # an unanswered request fails after this long


class Harness:
    """A broker's lifecycle manager whose loader the test feeds."""

    def __init__(self) -> None:
        self.loader = MetadataLoader(BROKER)
        self.loader.catching_up = False
        self.loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 1))
        self.manager = BrokerLifecycleManager(BROKER, self.loader, random.Random(7), 0, CONFIG)

    def state(self) -> BrokerState:
        return self.manager.state

    def sent(self, now: int) -> list[object]:
        self.manager.poll(now)
        out = self.manager.drain_outbox()
        assert all(m.src == BROKER and m.dst == CONTROLLER for m in out)
        return [m.message for m in out]

    def answer(self, response: object, now: int) -> None:
        self.manager.handle_message(NodeMessage(CONTROLLER, BROKER, response), now)

    def answer_last(self, request: object, response: type, now: int, **fields: object) -> None:
        """Answer ``request`` (a sent request) with ``response`` and ``fields``."""
        assert isinstance(request, BrokerHeartbeatRequest | BrokerRegistrationRequest)
        self.answer(response(request.correlation_id, **fields), now)

    def registered(self, epoch: int = 6, now: int = 1) -> None:
        """Send the registration and answer it with ``epoch``."""
        [registration] = self.sent(self.manager.next_deadline() or 0)
        assert isinstance(registration, BrokerRegistrationRequest)
        self.answer(BrokerRegistrationResponse(registration.correlation_id, "NONE",
                                               broker_epoch=epoch), now)

    def publish(self, end_offset: int) -> None:
        self.loader.handle_commit([Batch(0, 1, tuple(NoOpRecord() for _ in range(end_offset)))],
                                  end_offset)


def test_a_broker_registers_then_heartbeats_fenced_until_it_has_caught_up() -> None:
    """Kafka's BrokerLifecycleManager: STARTING until a heartbeat answer says caught up,
    each next heartbeat 10 ms after the answer; RECOVERY (10 ms more) until unfenced."""
    h = Harness()
    [registration] = h.sent(0)
    assert isinstance(registration, BrokerRegistrationRequest)
    assert registration.incarnation_id == h.manager.incarnation_id
    assert h.sent(TIMEOUT - 1) == []  # one request at a time, given half a session
    h.publish(4)  # an image before the registration: not caught up yet
    assert not h.manager.registered and not h.manager.caught_up
    h.answer(BrokerRegistrationResponse(registration.correlation_id, "NONE", broker_epoch=6),
             200)
    assert h.manager.state is BrokerState.STARTING and h.manager.broker_epoch == 6
    assert not h.manager.caught_up  # the image (offset 3) is older than the registration
    [heartbeat] = h.sent(200)  # at once
    assert heartbeat == BrokerHeartbeatRequest(registration.correlation_id + 1, BROKER, 6, 3,
                                               want_fence=False)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=False,
                                     is_fenced=True), 201)
    assert h.manager.state is BrokerState.STARTING and h.manager.fenced
    assert h.sent(210) == []
    [heartbeat] = h.sent(211)  # 10 ms after the answer, not a heartbeat interval
    h.publish(8)
    assert h.manager.caught_up
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=True), 215)
    assert h.manager.state is BrokerState.RECOVERY and h.manager.fenced
    [heartbeat] = h.sent(225)
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    assert heartbeat.current_metadata_offset == 7
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False), 226)
    assert h.manager.state is BrokerState.RUNNING and not h.manager.fenced
    # then one interval after each answer (Kafka schedules from the answer, not the send)
    assert h.sent(226 + CONFIG.heartbeat_interval_ms - 1) == []
    assert len(h.sent(226 + CONFIG.heartbeat_interval_ms)) == 1


def test_an_unfenced_answer_while_starting_still_goes_through_recovery() -> None:
    """Kafka's STARTING state looks only at isCaughtUp: an answer that is caught up and
    unfenced at once moves the broker to RECOVERY, and the next answer (10 ms on) to
    RUNNING; an answer not caught up keeps it STARTING, fenced flag or not."""
    h = Harness()
    h.publish(8)
    h.registered(epoch=6, now=1)
    [heartbeat] = h.sent(1)
    h.answer_last(heartbeat, BrokerHeartbeatResponse, 2, error="NONE", is_caught_up=False,
                  is_fenced=False)
    assert h.manager.state is BrokerState.STARTING and not h.manager.fenced
    [heartbeat] = h.sent(12)
    h.answer_last(heartbeat, BrokerHeartbeatResponse, 13, error="NONE", is_caught_up=True,
                  is_fenced=False)
    assert h.manager.state is BrokerState.RECOVERY
    assert h.sent(22) == []
    [heartbeat] = h.sent(23)
    h.answer_last(heartbeat, BrokerHeartbeatResponse, 24, error="NONE", is_caught_up=True,
                  is_fenced=False)
    assert h.manager.state is BrokerState.RUNNING


def test_a_late_or_foreign_answer_is_ignored() -> None:
    h = Harness()
    [registration] = h.sent(0)
    assert isinstance(registration, BrokerRegistrationRequest)
    cid = registration.correlation_id
    h.answer(BrokerRegistrationResponse(cid + 9, "NONE", broker_epoch=6), 1)  # not outstanding
    assert not h.manager.registered
    h.answer(BrokerRegistrationResponse(cid, "DUPLICATE_BROKER_REGISTRATION"), 1)
    assert not h.manager.registered and h.manager.state is BrokerState.STARTING
    h.answer(BrokerRegistrationResponse(cid, "NONE", broker_epoch=6), 2)  # answered already
    assert not h.manager.registered


def _running() -> Harness:
    h = Harness()
    h.publish(8)
    h.registered(epoch=6, now=1)
    [heartbeat] = h.sent(1)
    assert isinstance(heartbeat, BrokerHeartbeatRequest) and not heartbeat.want_fence
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=False), 2)
    [heartbeat] = h.sent(12)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=False), 12)
    assert h.manager.state is BrokerState.RUNNING
    assert h.manager.next_deadline() == 12 + CONFIG.heartbeat_interval_ms
    return h


@pytest.mark.parametrize("error", ["STALE_BROKER_EPOCH", "BROKER_ID_NOT_REGISTERED"])
def test_a_stale_epoch_is_retried_with_back_off_not_a_new_registration(error: str) -> None:
    """Kafka's BrokerLifecycleManager takes a heartbeat refused for its broker epoch (or
    because the controller does not know the broker) like any failed heartbeat: the state
    and the epoch stay, and the heartbeat is sent again after the back-off (100 ms, then
    200 ms, ... with 2% jitter), never a registration."""
    h = _running()
    at = 12 + CONFIG.heartbeat_interval_ms
    for attempt in range(3):
        [heartbeat] = h.sent(at)
        assert isinstance(heartbeat, BrokerHeartbeatRequest) and heartbeat.broker_epoch == 6
        h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, error), at)
        assert h.manager.state is BrokerState.RUNNING and h.manager.registered
        pause = 100 * 2 ** attempt
        due = h.manager.next_deadline()
        assert due is not None and at + pause * 0.98 <= due <= at + pause * 1.02
        assert h.sent(due - 1) == []
        at = due
    [heartbeat] = h.sent(at)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False), at)
    assert h.manager.failed_attempts == 0  # a success resets the back-off
    assert h.manager.next_deadline() == at + CONFIG.heartbeat_interval_ms


def test_a_fenced_answer_leaves_a_running_broker_running() -> None:
    """Kafka's RUNNING state takes a fenced answer (a session that timed out) as any other:
    the broker stays RUNNING, marked fenced, heartbeating every interval with wantFence
    false, and is unfenced by the next answer that says so."""
    h = _running()
    at = 12 + CONFIG.heartbeat_interval_ms
    [heartbeat] = h.sent(at)
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=True), at)
    assert h.manager.state is BrokerState.RUNNING and h.manager.fenced
    assert h.sent(at + CONFIG.heartbeat_interval_ms - 1) == []
    [heartbeat] = h.sent(at + CONFIG.heartbeat_interval_ms)
    assert isinstance(heartbeat, BrokerHeartbeatRequest) and not heartbeat.want_fence
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False),
             at + CONFIG.heartbeat_interval_ms)
    assert h.manager.state is BrokerState.RUNNING and not h.manager.fenced


def _recovering() -> Harness:
    """A broker that registered and was told it caught up, still fenced: RECOVERY."""
    h = Harness()
    h.publish(8)
    h.registered(epoch=6, now=1)
    [heartbeat] = h.sent(1)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=True), 1)
    assert h.manager.state is BrokerState.RECOVERY
    return h


def test_a_broker_in_recovery_stays_there_while_the_controller_answers_fenced() -> None:
    """Kafka's RECOVERY state: a fenced answer keeps the broker in RECOVERY, heartbeating
    every interval; only an unfenced answer makes it RUNNING."""
    h = _recovering()
    at = 1 + 10  # the heartbeat 10 ms after the answer that said caught up
    assert h.sent(at - 1) == []
    [heartbeat] = h.sent(at)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=True), at)
    assert h.manager.state is BrokerState.RECOVERY and h.manager.fenced
    assert h.sent(at + CONFIG.heartbeat_interval_ms - 1) == []
    at += CONFIG.heartbeat_interval_ms
    [heartbeat] = h.sent(at)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_caught_up=True,
                                     is_fenced=False), at)
    assert h.manager.state is BrokerState.RUNNING and not h.manager.fenced


def test_controlled_shutdown_waits_for_the_controller_or_the_timeout() -> None:
    """wantShutDown at once; the next heartbeat 50 ms after the first answer that does not
    say shouldShutDown, then one interval after each; the node stops when told to, or when
    the controlled shutdown's timeout passes."""
    h = _running()
    assert h.manager.begin_controlled_shutdown(20)
    assert h.manager.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    [heartbeat] = h.manager.drain_outbox()
    request = heartbeat.message
    assert isinstance(request, BrokerHeartbeatRequest) and request.want_shut_down
    h.answer(BrokerHeartbeatResponse(request.correlation_id, "NONE", is_fenced=False,
                                     should_shut_down=False), 21)
    assert h.state() is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    assert h.sent(21 + 49) == []
    [second] = h.sent(21 + 50)
    assert isinstance(second, BrokerHeartbeatRequest) and second.want_shut_down
    h.answer(BrokerHeartbeatResponse(second.correlation_id, "NONE", is_fenced=False,
                                     should_shut_down=False), 72)
    assert h.manager.next_deadline() == 72 + CONFIG.heartbeat_interval_ms
    h.manager.poll(20 + CONFIG.controlled_shutdown_timeout_ms)
    assert h.state() is BrokerState.SHUTTING_DOWN and h.manager.shutdown_complete
    assert h.manager.next_deadline() is None

    answered = _running()
    answered.manager.begin_controlled_shutdown(20)
    [heartbeat] = answered.manager.drain_outbox()
    answered.answer(BrokerHeartbeatResponse(heartbeat.message.correlation_id, "NONE",
                                            is_fenced=True, should_shut_down=True), 22)
    assert answered.manager.shutdown_complete


def test_controlled_shutdown_during_a_heartbeat_waits_for_its_answer() -> None:
    """One request at a time: a controlled shutdown begun while a heartbeat is in flight
    sends its wantShutDown heartbeat as soon as that answer arrives."""
    h = _running()
    at = 12 + CONFIG.heartbeat_interval_ms
    [heartbeat] = h.sent(at)
    assert h.manager.begin_controlled_shutdown(at + 1)
    assert h.manager.drain_outbox() == []
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False),
             at + 2)
    [shutdown] = h.sent(at + 2)
    assert isinstance(shutdown, BrokerHeartbeatRequest) and shutdown.want_shut_down


def test_an_unregistered_or_fenced_broker_shuts_down_at_once() -> None:
    h = Harness()
    assert not h.manager.begin_controlled_shutdown(0)
    assert h.manager.shutdown_complete and h.manager.drain_outbox() == []
    assert h.sent(TIMEOUT) == []


def test_no_known_controller_holds_the_request_until_one_is_known() -> None:
    """Kafka's controller channel holds a request while no controller is known and sends it
    at its first look (every 100 ms) after one is known; after half a session without one,
    the attempt fails and the back-off applies."""
    h = Harness()
    h.loader.handle_leader_change(LeaderAndEpoch(None, 2))
    assert h.sent(0) == []
    assert h.manager.next_deadline() == 100  # the channel's next look
    assert h.sent(100) == [] and h.sent(200) == []
    h.loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 2))
    assert h.manager.next_deadline() == 300
    assert h.sent(299) == []
    [registration] = h.sent(300)
    assert isinstance(registration, BrokerRegistrationRequest)
    # handed to the controller at 300: half a session from then (Kafka's channel gives the
    # network client's request its own timeout from the hand-off)
    assert h.manager.next_deadline() == 300 + TIMEOUT

    silent = Harness()
    silent.loader.handle_leader_change(LeaderAndEpoch(None, 2))
    assert silent.sent(0) == []
    assert silent.sent(TIMEOUT - 1) == [] and silent.manager.failed_attempts == 0
    assert silent.sent(TIMEOUT) == []
    assert silent.manager.failed_attempts == 1
    due = silent.manager.next_deadline()
    assert due is not None and TIMEOUT + 98 <= due <= TIMEOUT + 102


def test_an_unanswered_request_fails_after_half_a_session_then_backs_off() -> None:
    """No answer within broker.session.timeout.ms / 2 (Kafka's retry timeout of the broker's
    heartbeat channel) is a failed attempt: the request is sent again after the back-off,
    which doubles with each failure in a row up to the session timeout."""
    h = Harness()
    [registration] = h.sent(0)
    at, pauses = 0, []
    for _attempt in range(9):
        assert h.sent(at + TIMEOUT - 1) == []
        h.manager.poll(at + TIMEOUT)
        due = h.manager.next_deadline()
        assert due is not None
        pauses.append(due - (at + TIMEOUT))
        [again] = h.sent(due)
        assert isinstance(again, BrokerRegistrationRequest)
        assert again.correlation_id != registration.correlation_id
        at = due
    for pause, nominal in zip(pauses, [100, 200, 400, 800, 1600, 3200, 6400], strict=False):
        assert nominal * 0.98 <= pause <= nominal * 1.02
    assert all(8820 <= p <= 9000 for p in pauses[7:])  # capped at the session timeout
    h.answer(BrokerRegistrationResponse(again.correlation_id, "NONE", broker_epoch=6), at + 1)
    assert h.manager.failed_attempts == 0 and h.manager.next_deadline() == at + 1


def test_the_back_off_is_the_same_for_the_same_seed() -> None:
    """The jitter comes from the broker's seeded stream: the same seed, the same pauses."""
    def pauses(seed: int) -> list[int]:
        loader = MetadataLoader(BROKER)
        loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 1))
        manager = BrokerLifecycleManager(BROKER, loader, random.Random(seed), 0, CONFIG)
        out, at = [], 0
        for _ in range(5):
            manager.poll(at)
            [request] = manager.drain_outbox()
            manager.handle_message(NodeMessage(CONTROLLER, BROKER, BrokerRegistrationResponse(
                request.message.correlation_id, "UNKNOWN_SERVER_ERROR")), at)
            due = manager.next_deadline()
            assert due is not None
            out.append(due - at)
            at = due
        return out

    assert pauses(3) == pauses(3)
    assert pauses(3) != pauses(4)


def test_correlation_ids_differ_between_incarnations() -> None:
    """A restarted broker process must not take an answer to its previous incarnation's
    request for one to its own: each process starts its correlation ids at a value drawn
    from its own stream."""
    first, second = Harness(), Harness()
    second.manager = BrokerLifecycleManager(BROKER, second.loader, random.Random(8), 0, CONFIG)
    [old] = first.sent(0)
    [new] = second.sent(0)
    assert isinstance(old, BrokerRegistrationRequest)
    assert isinstance(new, BrokerRegistrationRequest)
    assert old.correlation_id != new.correlation_id
    second.answer(BrokerRegistrationResponse(old.correlation_id, "NONE", broker_epoch=5), 1)
    assert not second.manager.registered


def test_the_image_holding_the_registration_record_is_caught_up() -> None:
    """Caught up means the published image includes the RegisterBrokerRecord, whose offset
    is the broker epoch: an image ending exactly at that offset is enough."""
    h = Harness()
    h.registered(epoch=6, now=1)
    h.publish(6)   # the image ends at offset 5
    assert not h.manager.caught_up
    h.publish(7)   # the image ends at offset 6: the registration record
    assert h.manager.caught_up


def test_a_fenced_broker_shuts_down_without_waiting_for_the_controller() -> None:
    """A broker not yet RUNNING (registered, recovering) leads nothing: a controlled
    shutdown has nothing to wait for, so it stops at once and asks the controller nothing
    (Kafka skips the controlled shutdown in any state but RUNNING)."""
    h = Harness()
    h.registered(epoch=6, now=1)
    assert h.manager.registered and h.manager.fenced
    assert not h.manager.begin_controlled_shutdown(2)
    assert h.manager.state is BrokerState.SHUTTING_DOWN and h.manager.shutdown_complete
    assert h.manager.drain_outbox() == []


def test_an_answer_before_the_first_request_is_ignored() -> None:
    """A restarted broker process may get an answer meant for its previous incarnation
    before it sent anything: it is not the answer to an outstanding request."""
    h = Harness()
    h.answer(BrokerRegistrationResponse(1, "NONE", broker_epoch=6), 0)
    h.answer(BrokerHeartbeatResponse(1, "NONE", is_fenced=False), 0)
    assert not h.manager.registered and h.manager.state is BrokerState.STARTING
    [registration] = h.sent(0)
    assert isinstance(registration, BrokerRegistrationRequest)


def test_a_second_controlled_shutdown_keeps_waiting_for_the_first() -> None:
    """Kafka's manager ignores a second beginControlledShutdown while the first is pending:
    the caller still waits for it, no extra heartbeat goes out, and the first's timeout
    still applies."""
    h = _running()
    assert h.manager.begin_controlled_shutdown(20)
    [_first] = h.manager.drain_outbox()
    assert h.manager.begin_controlled_shutdown(30)
    assert h.manager.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN
    assert h.manager.drain_outbox() == []
    h.manager.poll(20 + CONFIG.controlled_shutdown_timeout_ms)
    assert h.manager.shutdown_complete


def test_only_the_request_that_came_due_in_flight_goes_out_at_once() -> None:
    """The wantShutDown heartbeat that came due while a heartbeat was in flight goes out as
    soon as that answer arrives; the next one waits as usual (Kafka's
    nextSchedulingShouldBeImmediate holds for one scheduling only). As in Kafka, the answer
    to the heartbeat in flight, taken in PENDING_CONTROLLED_SHUTDOWN, was the first
    controlled-shutdown answer, so the wait is a heartbeat interval, not 50 ms."""
    h = _running()
    at = 12 + CONFIG.heartbeat_interval_ms
    [heartbeat] = h.sent(at)
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    assert h.manager.begin_controlled_shutdown(at + 1)
    h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, "NONE", is_fenced=False),
             at + 2)
    [shutdown] = h.sent(at + 2)
    h.answer_last(shutdown, BrokerHeartbeatResponse, at + 3, error="NONE", is_fenced=False,
                  should_shut_down=False)
    assert h.manager.next_deadline() == at + 3 + CONFIG.heartbeat_interval_ms
    assert h.sent(at + 3) == []


@pytest.mark.parametrize("error", ["UNKNOWN_SERVER_ERROR", None])
def test_a_failure_after_a_request_came_due_in_flight_still_backs_off(
        error: str | None) -> None:
    """Kafka never sends at once after a failure: a controlled shutdown begun while a
    heartbeat is in flight, whose answer is an error (or which times out), waits the
    back-off before its wantShutDown heartbeat."""
    h = _running()
    at = 12 + CONFIG.heartbeat_interval_ms
    [heartbeat] = h.sent(at)
    assert isinstance(heartbeat, BrokerHeartbeatRequest)
    assert h.manager.begin_controlled_shutdown(at + 1)
    failed_at = at + 2 if error is not None else at + TIMEOUT
    if error is not None:
        h.answer(BrokerHeartbeatResponse(heartbeat.correlation_id, error), failed_at)
    assert h.sent(failed_at) == []
    due = h.manager.next_deadline()
    assert due is not None and failed_at + 98 <= due <= failed_at + 102
    [shutdown] = h.sent(due)
    assert isinstance(shutdown, BrokerHeartbeatRequest) and shutdown.want_shut_down


@pytest.mark.parametrize("session_timeout_ms", [1, 2, 3])
def test_the_shortest_sessions_still_give_a_request_a_millisecond(
        session_timeout_ms: int) -> None:
    """Half a session of 1 to 3 ms rounds down to 0 or 1: a request is given at least 1 ms,
    so an answer in the step it was sent is still taken."""
    h = Harness()
    h.manager = BrokerLifecycleManager(BROKER, h.loader, random.Random(7), 0, CONFIG,
                                       session_timeout_ms=session_timeout_ms)
    [registration] = h.sent(0)
    assert h.manager.next_deadline() == 1
    assert h.sent(0) == [] and h.manager.failed_attempts == 0
    h.answer_last(registration, BrokerRegistrationResponse, 0, error="NONE", broker_epoch=6)
    assert h.manager.registered


def test_by_default_a_request_is_given_half_of_kafkas_nine_second_session() -> None:
    """broker.session.timeout.ms defaults to 9 s in Kafka; the broker's heartbeat channel
    gives a request half of it: an unanswered registration fails at 4.5 s, not before.
    The resend back-off is Kafka's: 100 ms, doubling, 2% jitter, capped at the 9 s."""
    loader = MetadataLoader(BROKER)
    loader.handle_leader_change(LeaderAndEpoch(CONTROLLER, 1))
    manager = BrokerLifecycleManager(BROKER, loader, random.Random(7), 0, CONFIG)
    assert manager.backoff == ExponentialBackoff(100, 2, 9_000, 0.02)
    manager.poll(0)
    assert len(manager.drain_outbox()) == 1
    manager.poll(4_499)
    assert manager.failed_attempts == 0
    manager.poll(4_500)
    assert manager.failed_attempts == 1
