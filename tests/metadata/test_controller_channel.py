"""kraftsim's model of Kafka's controller channel
(:class:`metadata.controller_channel.ControllerChannel`, Kafka's
NodeToControllerRequestThread) on its own: the queue, the 100 ms looks, NOT_CONTROLLER
and timeouts with the reconnect back-off, the retry timeout, the request timeout from the
hand-off, a new leader. Kafka's own cases are ported against the broker's lifecycle
manager in tests/broker/test_kafka_node_to_controller_request_thread_cases.py."""

from __future__ import annotations

from typing import Any

import msgspec

from metadata.controller_channel import (
    CONTROLLER_LOOKUP_MS,
    RECONNECT_BACKOFF_MS,
    ControllerChannel,
)
from metadata.requests import NodeMessage

NODE, A, B = 1, 3000, 3001
RETRY, TIMEOUT = 1_000, 300


class Ask(msgspec.Struct, frozen=True):
    """A request: its correlation id and what it asks."""

    correlation_id: int
    what: str


class Answer(msgspec.Struct, frozen=True):
    """An answer to one."""

    correlation_id: int
    error: str = "NONE"


class World:
    """A channel, the controller the raft client names, and what the owner saw."""

    def __init__(self, leader: int | None = A) -> None:
        self.leader = leader
        self.channel = ControllerChannel(NODE, lambda: self.leader, retry_timeout_ms=RETRY,
                                         request_timeout_ms=TIMEOUT)
        self.answers: list[tuple[str, int]] = []
        self.timeouts: list[tuple[str, int]] = []

    def ask(self, what: str, now: int) -> None:
        def answered(answer: Any, at: int) -> None:
            self.answers.append((what, at))

        def timed_out(at: int) -> None:
            self.timeouts.append((what, at))

        self.channel.send(Ask(0, what), now, answered, timed_out)

    def out(self) -> list[tuple[int, str, int]]:
        """(destination, what, correlation id) of each request sent since last asked."""
        return [(env.dst, env.message.what, env.message.correlation_id)
                for env in self.channel.drain_outbox()]

    def answer(self, dst: int, correlation: int, now: int, error: str = "NONE") -> bool:
        return self.channel.handle_message(NodeMessage(dst, NODE, Answer(correlation, error)),
                                           now)


def test_requests_go_one_at_a_time_in_the_order_made() -> None:
    """The second request waits in the queue until the first is answered, then goes at
    once, with its own correlation id."""
    w = World()
    w.ask("first", 0)
    w.ask("second", 1)
    [(dst, what, c1)] = w.out()
    assert (dst, what) == (A, "first")
    assert w.out() == []
    assert w.answer(A, c1, 5)
    [(dst, what, c2)] = w.out()
    assert (dst, what) == (A, "second") and c2 != c1
    assert w.answers == [("first", 5)]


def test_a_request_queued_behind_another_past_its_retry_timeout_is_given_up() -> None:
    """A request that waited in the queue for its retry timeout is given up when the
    channel comes to take it, never sent."""
    w = World()
    w.ask("first", 0)
    w.ask("second", 0)
    [(_, _, c1)] = w.out()
    assert w.answer(A, c1, RETRY)
    assert w.timeouts == [("second", RETRY)] and w.out() == []
    assert not w.channel.busy


def test_an_answer_to_an_earlier_send_is_ignored() -> None:
    """After a timeout the request goes again with a new correlation id; the late answer to
    the first send is not taken."""
    w = World()
    w.ask("x", 0)
    [(_, _, c1)] = w.out()
    w.leader = B
    w.channel.poll(TIMEOUT)  # timed out: to the other node at once
    [(dst, _, c2)] = w.out()
    assert dst == B
    assert not w.answer(A, c1, TIMEOUT + 1) and w.answers == []
    assert w.answer(B, c2, TIMEOUT + 2) and w.answers == [("x", TIMEOUT + 2)]


def test_a_timeout_backs_the_node_off_and_the_resend_has_its_own_timeout() -> None:
    """No answer within the request timeout: the connection is dropped, the same node is
    connected again only after 50 ms, and the resend is handed over at the timeout, so
    its own timeout runs from then (the back-off included)."""
    w = World()
    w.ask("x", 0)
    w.out()
    w.channel.poll(TIMEOUT)
    assert w.out() == [] and w.channel.next_deadline() == TIMEOUT + RECONNECT_BACKOFF_MS
    assert w.channel.handed == (-1, A, 2 * TIMEOUT)
    w.channel.poll(TIMEOUT + RECONNECT_BACKOFF_MS)
    [(dst, _, c2)] = w.out()
    assert dst == A and w.channel.handed == (c2, A, 2 * TIMEOUT)


def test_the_retry_timeout_ends_the_resends() -> None:
    """A request refused again and again is resent until it is as old as its retry
    timeout; the refusal after that gives it up."""
    w = World()
    w.ask("x", 0)
    now = 0
    while True:
        sent = w.out()
        if not sent:
            break
        [(_, _, correlation)] = sent
        w.leader = B if w.leader == A else A
        now += 400
        w.answer(A if w.leader == B else B, correlation, now, "NOT_CONTROLLER")
    assert now == 1_200 and w.timeouts == [("x", 1_200)] and w.answers == []


def test_looks_go_on_a_100_ms_grid_from_the_first_that_found_none() -> None:
    """With no controller known the channel looks every 100 ms from its first look that
    found none, across requests: after the first request is given up at its retry
    timeout (the look at 1,000), one made at 1,050 waits for the look at 1,100, as the
    channel's thread, polling, is not woken by it; nor by a later one."""
    w = World(leader=None)
    w.ask("x", 0)
    for look in range(100, RETRY + 1, 100):
        assert w.channel.next_deadline() == look
        w.channel.poll(look)
    assert w.timeouts == [("x", RETRY)] and w.channel.next_deadline() is None
    w.ask("y", 1_050)
    assert w.channel.next_deadline() == 1_100
    w.leader = A
    w.ask("z", 1_060)
    assert w.out() == []
    w.channel.poll(1_100)
    assert [what for _, what, _ in w.out()] == ["y"]


def test_a_request_made_with_a_controller_known_goes_at_once() -> None:
    """Nothing planned: the request looks at once and goes to the controller known."""
    w = World()
    w.ask("x", 7)
    assert [(dst, what) for dst, what, _ in w.out()] == [(A, "x")]
    assert w.channel.next_deadline() == 7 + TIMEOUT


def test_a_new_leader_takes_the_request_out_at_once() -> None:
    """leader_changed: the request out to another node goes to the new leader at once
    (no back-off: that node was not dropped); with the same leader, or none, nothing
    happens."""
    w = World()
    w.ask("x", 0)
    [(_, _, c1)] = w.out()
    w.channel.leader_changed(5)
    w.leader = None
    w.channel.leader_changed(6)
    assert w.out() == [] and w.channel.handed == (c1, A, TIMEOUT)
    w.leader = B
    w.channel.leader_changed(7)
    [(dst, _, c2)] = w.out()
    assert dst == B and w.channel.handed == (c2, B, 7 + TIMEOUT)


def test_not_controller_with_none_known_waits_for_a_look() -> None:
    """The node that refused is dropped and none is known: the request waits for the
    channel's looks, every 100 ms from the refusal."""
    w = World()
    w.ask("x", 0)
    [(_, _, c1)] = w.out()
    w.leader = None
    assert w.answer(A, c1, 10, "NOT_CONTROLLER")
    assert w.channel.next_deadline() == 10 + CONTROLLER_LOOKUP_MS
    w.leader = B
    w.channel.poll(10 + CONTROLLER_LOOKUP_MS)
    assert [dst for dst, _, _ in w.out()] == [B]
    assert w.channel.sends == 2


def test_close_drops_everything() -> None:
    """A closed channel has no timer and sends nothing more."""
    w = World(leader=None)
    w.ask("x", 0)
    w.channel.close()
    assert w.channel.next_deadline() is None and not w.channel.busy
    w.leader = A
    w.channel.poll(100)
    assert w.out() == []
