"""ControllerChannel: a node's channel to the active controller (Kafka's
``NodeToControllerChannelManager`` and its ``NodeToControllerRequestThread``).

One deterministic model of how Kafka sends a broker's (or a controller's own) requests
to the controller, in simulated milliseconds:

- requests wait in a queue, oldest first, each with the time it was made; one is out at
  a time (Kafka's controller connection carries one request in flight);
- a request is handed to the controller ``controller()`` names (the raft client's
  leader) with :attr:`request_timeout_ms` from that moment; it goes out once the
  reconnect back-off (:data:`RECONNECT_BACKOFF_MS`) to that node, set when the channel
  dropped it, has passed. While none is known the request waits, and the channel looks
  again every :data:`CONTROLLER_LOOKUP_MS` from its first look that found none (Kafka's
  thread polls 100 ms between looks, and a new request does not wake it);
- a NOT_CONTROLLER answer, or no answer within the request timeout, drops the connection
  to that node and puts the request back at the front of the queue; the channel looks for
  a controller at once and sends it again (to another node at once, to the same node
  after the reconnect back-off). The owner sees neither;
- a request still queued :attr:`retry_timeout_ms` after it was made is given up: its
  ``on_timeout`` runs (Kafka checks this when it takes a request from the queue, and at
  each look, so a request waiting for a controller goes at the first look at or past its
  retry timeout).

Each send carries a new correlation id, so a late answer to an earlier send is ignored.

Kafka's channel keeps the controller it last found (its ``activeController``) until that
node refuses, or the connection to it drops or times out; it does not follow the raft
client's leader. kraftsim's network tells no sender that a connection dropped, so a
channel that kept a controller that died would wait out the request timeout where Kafka
sees the disconnect at once. This channel asks ``controller()`` at each hand-off instead:
for a controller that went away that is what Kafka's disconnect leads to; for one that
resigned and lives it saves Kafka's one NOT_CONTROLLER round trip. An owner that models
the disconnect calls :meth:`leader_changed` when its raft client learns a new leader (the
request out to another node goes again at once).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from metadata.requests import NodeMessage

CONTROLLER_LOOKUP_MS = 100
"""How often the channel looks for a controller while it knows none (Kafka's
NodeToControllerRequestThread.doWork polls for 100 ms before it looks again)."""

RECONNECT_BACKOFF_MS = 50
"""How long the channel waits before connecting again to a node it dropped (its network
client's reconnect back-off and its cap are both 50 ms, so no jitter)."""


@dataclass(slots=True)
class ChannelRequest:
    """A request queued in the channel (Kafka's NodeToControllerQueueItem)."""

    request: Any
    """The request as built (a msgspec Struct with a ``correlation_id``)."""
    created_ms: int
    """When it was made: the start of its retry timeout."""
    on_answer: Callable[[Any, int], None]
    """Called with the controller's answer (not NOT_CONTROLLER) and the time."""
    on_timeout: Callable[[int], None]
    """Called with the time when the retry timeout gives the request up."""


def _refused(answer: Any) -> bool:
    return getattr(answer, "error", None) == "NOT_CONTROLLER"


class ControllerChannel:
    """One node's channel to the controller; see the module docs."""

    def __init__(self, node_id: int, controller: Callable[[], int | None], *,
                 retry_timeout_ms: int, request_timeout_ms: int | None = None,
                 correlation_start: int = 0,
                 refused: Callable[[Any], bool] = _refused,
                 emit: Callable[[NodeMessage], None] | None = None) -> None:
        """``controller``: the controller the node's raft client knows now, or None.
        ``request_timeout_ms`` defaults to the retry timeout (Kafka takes the smaller of
        the retry timeout and controller.socket.timeout.ms). ``refused``: whether an
        answer says NOT_CONTROLLER. ``emit``: where requests go (default: :attr:`outbox`),
        for an owner that keeps one outbox for all it sends."""
        self.node_id = node_id
        self.controller = controller
        self.retry_timeout_ms = retry_timeout_ms
        self.request_timeout_ms = min(retry_timeout_ms, request_timeout_ms or retry_timeout_ms)
        self.refused = refused
        self.outbox: list[NodeMessage] = []
        self.emit = emit if emit is not None else self.outbox.append
        self.queue: list[ChannelRequest] = []
        self.reconnect_after: dict[int, int] = {}
        """Node -> when the channel may connect to it again."""
        self._correlation = self._correlation_start = correlation_start
        self._in_flight: ChannelRequest | None = None
        self._in_flight_id = -1
        self._sent_to = -1
        self._send_at: int | None = None  # handed over, waiting out the reconnect back-off
        self._timeout_at: int | None = None  # the request timeout of the one handed over
        self._looking_since: int | None = None
        self._next_look: int | None = None

    # ------------------------------------------------------------------ queries
    @property
    def busy(self) -> bool:
        """Whether a request is queued or out."""
        return bool(self.queue) or self._in_flight is not None

    @property
    def handed(self) -> tuple[int, int, int] | None:
        """The request handed to a controller: (correlation id, or -1 while it waits out
        the reconnect back-off; the controller; when it times out), or None."""
        if self._in_flight is None or self._timeout_at is None:
            return None
        correlation = -1 if self._send_at is not None else self._in_flight_id
        return correlation, self._sent_to, self._timeout_at

    @property
    def sends(self) -> int:
        """How many requests (first sends and resends) went out."""
        return self._correlation - self._correlation_start

    def drain_outbox(self) -> list[NodeMessage]:
        """Requests to send."""
        out = self.outbox[:]
        self.outbox.clear()
        return out

    def next_deadline(self) -> int | None:
        """The next look, reconnect, or request timeout, whichever comes first."""
        times = [t for t in (self._send_at, self._timeout_at, self._next_look)
                 if t is not None]
        return min(times) if times else None

    # ------------------------------------------------------------------ requests
    def send(self, request: Any, now: int, on_answer: Callable[[Any, int], None],
             on_timeout: Callable[[int], None]) -> None:
        """Queue ``request``, made now (Kafka's sendRequest)."""
        self.queue.append(ChannelRequest(request, now, on_answer, on_timeout))
        if self._next_look is None:  # (a look already planned is not brought forward)
            self._pump(now)

    def poll(self, now: int) -> None:
        """Time the request out, send it after the back-off, or look for a controller."""
        if self._timeout_at is not None and now >= self._timeout_at:
            self._drop(self._sent_to, self._timeout_at, now)
        if self._send_at is not None and now >= self._send_at:
            self._send_at = None
            self._transmit()
        if self._next_look is not None and now >= self._next_look:
            self._next_look = None
            self._pump(now)

    def handle_message(self, env: NodeMessage, now: int) -> bool:
        """Take an answer; True when it answered the request out (else it is ignored)."""
        answer = env.message
        if self._in_flight is None or self._send_at is not None or \
                getattr(answer, "correlation_id", None) != self._in_flight_id:
            return False
        item = self._in_flight
        if self.refused(answer):
            self._drop(self._sent_to, now, now)
            return True
        self._in_flight = None
        self._timeout_at = None
        item.on_answer(answer, now)
        if self._next_look is None:
            self._pump(now)
        return True

    def leader_changed(self, now: int) -> None:
        """The raft client names a new leader: a request out (or waiting out the reconnect
        back-off) to another node goes to it at once, as after a dropped connection
        (see the module docs; the node is not backed off from)."""
        leader = self.controller()
        if self._in_flight is None or leader is None or leader == self._sent_to:
            return
        self.queue.insert(0, self._in_flight)
        self._in_flight = None
        self._send_at = self._timeout_at = None
        self._pump(now)

    def close(self) -> None:
        """The process stops: nothing more is sent."""
        self.outbox.clear()
        self.queue.clear()
        self._in_flight = None
        self._send_at = self._timeout_at = self._next_look = None

    # ------------------------------------------------------------------ internals
    def _drop(self, node: int, dropped_at: int, now: int) -> None:
        """The connection to ``node`` is closed (a refusal or a timeout): the request out
        goes back to the front of the queue and the channel looks again at once."""
        self.reconnect_after[node] = dropped_at + RECONNECT_BACKOFF_MS
        item = self._in_flight
        self._in_flight = None
        self._send_at = self._timeout_at = None
        if item is not None:
            self.queue.insert(0, item)
        self._next_look = None
        self._pump(now)

    def _expire(self, now: int) -> None:
        while self.queue and now - self.queue[0].created_ms >= self.retry_timeout_ms:
            self.queue.pop(0).on_timeout(now)

    def _pump(self, now: int) -> None:
        """A look: hand the oldest request to the controller known now when none is out;
        requests past their retry timeout go first. With none known, look again on the
        100 ms grid from the first look that found none."""
        if self._in_flight is not None:
            return
        self._expire(now)
        if not self.queue:
            return
        controller = self.controller()
        if controller is None:
            since = self._looking_since
            if since is None:
                since = self._looking_since = now
            self._next_look = now + CONTROLLER_LOOKUP_MS - (now - since) % CONTROLLER_LOOKUP_MS
            return
        self._looking_since = self._next_look = None
        item = self.queue.pop(0)
        self._in_flight = item
        self._sent_to = controller
        self._timeout_at = now + self.request_timeout_ms
        ready = self.reconnect_after.get(controller, now)
        if ready > now:
            self._send_at = ready
            return
        self._transmit()

    def _transmit(self) -> None:
        item = self._in_flight
        assert item is not None
        self._correlation += 1
        self._in_flight_id = self._correlation
        request = msgspec.structs.replace(item.request, correlation_id=self._correlation)
        self.emit(NodeMessage(self.node_id, self._sent_to, request))
