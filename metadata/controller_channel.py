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
- a NOT_CONTROLLER answer (``refused``; AlterPartition's looks into every partition too,
  as Kafka's counts the errors of the whole response), or no answer within the request
  timeout, drops the connection
  to that node and puts the request back at the front of the queue; the channel looks for
  a controller at once and sends it again (to another node at once, to the same node
  after the reconnect back-off). The owner sees neither;
- a request still queued :attr:`retry_timeout_ms` after it was made is given up: its
  ``on_timeout`` runs (Kafka checks this when it takes a request from the queue, and at
  each look, so a request waiting for a controller goes at the first look at or past its
  retry timeout).

Each send carries a new correlation id, so a late answer to an earlier send is ignored.
Its users: the broker's lifecycle manager (retry and request timeout half the session),
AlterPartition (never given up; request.timeout.ms), producer ids (60 s; request.timeout.ms)
and the controllers' registration manager (5 s).

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


@dataclass(slots=True, eq=False)
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


@dataclass(slots=True, eq=False)
class _Out:
    """A request handed to a controller."""

    item: ChannelRequest
    node: int
    epoch: int  # the leader epoch the raft client named with it
    timeout_at: int
    send_at: int | None  # waiting out the reconnect back-off until then, else sent
    correlation: int = -1


def _refused(answer: Any) -> bool:
    return getattr(answer, "error", None) == "NOT_CONTROLLER"


def _no_epoch() -> int:
    return 0


class ControllerChannel:
    """One node's channel to the controller; see the module docs."""

    def __init__(self, node_id: int, controller: Callable[[], int | None], *,
                 retry_timeout_ms: int, request_timeout_ms: int | None = None,
                 correlation_start: int = 0,
                 refused: Callable[[Any], bool] = _refused,
                 emit: Callable[[NodeMessage], None] | None = None,
                 leader_epoch: Callable[[], int] = _no_epoch,
                 next_correlation: Callable[[], int] | None = None) -> None:
        """``controller``: the controller the node's raft client knows now, or None.
        ``request_timeout_ms`` defaults to the retry timeout (Kafka takes the smaller of
        the retry timeout and controller.socket.timeout.ms). ``refused``: whether an
        answer says NOT_CONTROLLER. ``emit``: where requests go (default: :attr:`outbox`),
        for an owner that keeps one outbox for all it sends. ``leader_epoch``: the raft
        client's leader epoch, so that :meth:`leader_changed` also moves a request sent to
        the same node in an earlier epoch. ``next_correlation``: the owner's correlation
        ids, when it shares them with other requests (default: the channel counts from
        ``correlation_start``)."""
        self.node_id = node_id
        self.controller = controller
        self.retry_timeout_ms = retry_timeout_ms
        self.request_timeout_ms = min(retry_timeout_ms, request_timeout_ms or retry_timeout_ms)
        self.refused = refused
        self.leader_epoch = leader_epoch
        self.outbox: list[NodeMessage] = []
        self.emit = emit if emit is not None else self.outbox.append
        self.queue: list[ChannelRequest] = []
        self.reconnect_after: dict[int, int] = {}
        """Node -> when the channel may connect to it again."""
        self._correlation = self._correlation_start = correlation_start
        self._next_correlation = next_correlation if next_correlation is not None \
            else self._count
        self._sends = 0
        self._out: list[_Out] = []  # handed over, in hand-off order
        self._looking_since: int | None = None
        self._next_look: int | None = None
        self.deadline: int | None = None
        """:meth:`next_deadline`, kept up to date by every method that changes it (an
        owner asked after every event reads it without a call)."""

    # ------------------------------------------------------------------ queries
    @property
    def busy(self) -> bool:
        """Whether a request is queued or out."""
        return bool(self.queue) or bool(self._out)

    @property
    def handed(self) -> tuple[int, int, int] | None:
        """The (first) request handed to a controller: (correlation id, or -1 while it
        waits out the reconnect back-off; the controller; when it times out), or None."""
        if not self._out:
            return None
        out = self._out[0]
        return (-1 if out.send_at is not None else out.correlation), out.node, out.timeout_at

    @property
    def sends(self) -> int:
        """How many requests (first sends and resends) went out."""
        return self._sends

    def drain_outbox(self) -> list[NodeMessage]:
        """Requests to send."""
        out = self.outbox[:]
        self.outbox.clear()
        return out

    def next_deadline(self) -> int | None:
        """The next look, reconnect, or request timeout, whichever comes first."""
        return self.deadline

    def _update_deadline(self) -> None:
        due = self._next_look
        for out in self._out:
            at = out.send_at if out.send_at is not None else out.timeout_at
            if due is None or at < due:
                due = at
        self.deadline = due

    # ------------------------------------------------------------------ requests
    def send(self, request: Any, now: int, on_answer: Callable[[Any, int], None],
             on_timeout: Callable[[int], None]) -> ChannelRequest:
        """Queue ``request``, made now (Kafka's sendRequest); the queued item is returned
        (its owner may compare it with the one its answer comes for)."""
        item = ChannelRequest(request, now, on_answer, on_timeout)
        self.queue.append(item)
        if self._next_look is None:  # (a look already planned is not brought forward)
            self._pump(now)
        self._update_deadline()
        return item

    def poll(self, now: int) -> None:
        """Time requests out, send them after the back-off, or look for a controller."""
        timed_out = [out for out in self._out if out.timeout_at <= now]
        if timed_out:
            self._drop(timed_out, now, timed_out=True)
        for out in list(self._out):
            if out.send_at is not None and now >= out.send_at:
                out.send_at = None
                self._transmit(out)
        if self._next_look is not None and now >= self._next_look:
            self._next_look = None
            self._pump(now)
        self._update_deadline()

    def handle_message(self, env: NodeMessage, now: int) -> bool:
        """Take an answer; True when it answered a request out (else it is ignored)."""
        answer = env.message
        correlation = getattr(answer, "correlation_id", None)
        found = next((out for out in self._out
                      if out.send_at is None and out.correlation == correlation), None)
        if found is None:
            return False
        if self.refused(answer):
            self._drop([found], now, timed_out=False)
        else:
            self._out.remove(found)
            found.item.on_answer(answer, now)
            if self._next_look is None:
                self._pump(now)
        self._update_deadline()
        return True

    def leader_changed(self, now: int) -> None:
        """The raft client names a new leader: requests out to another node (or to it in
        an earlier epoch) go to it at once, as after a dropped connection (see the module
        docs; the old node is not backed off from)."""
        leader = self.controller()
        if leader is None:
            return
        epoch = self.leader_epoch()
        moved = [out for out in self._out if (out.node, out.epoch) != (leader, epoch)]
        if not moved:
            return
        for out in moved:
            self._out.remove(out)
        self.queue[:0] = [out.item for out in moved]
        self._pump(now)
        self._update_deadline()

    def close(self) -> None:
        """The process stops: nothing more is sent."""
        self.outbox.clear()
        self.queue.clear()
        self._out.clear()
        self._next_look = self.deadline = None

    # ------------------------------------------------------------------ internals
    def _count(self) -> int:
        self._correlation += 1
        return self._correlation

    def _drop(self, outs: list[_Out], now: int, *, timed_out: bool) -> None:
        """The connection to each node of ``outs`` is closed (a refusal, or a timeout at
        the request's timeout): the requests go back to the front of the queue, in their
        order, and the channel looks again at once."""
        for out in outs:
            self.reconnect_after[out.node] = \
                (out.timeout_at if timed_out else now) + RECONNECT_BACKOFF_MS
            self._out.remove(out)
        self.queue[:0] = [out.item for out in outs]
        self._next_look = None
        self._pump(now)

    def _expire(self, now: int) -> None:
        while self.queue and now - self.queue[0].created_ms >= self.retry_timeout_ms:
            self.queue.pop(0).on_timeout(now)

    def _pump(self, now: int) -> None:
        """A look: with none out, hand the oldest request to the controller known now;
        requests past their retry timeout go first. With none known, look again on the
        100 ms grid from the first look that found none."""
        if self._out:
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
        epoch = self.leader_epoch()
        ready = self.reconnect_after.get(controller, now)
        out = _Out(self.queue.pop(0), controller, epoch, now + self.request_timeout_ms,
                   ready if ready > now else None)
        self._out.append(out)
        if out.send_at is None:
            self._transmit(out)

    def _transmit(self, out: _Out) -> None:
        item = out.item
        out.correlation = self._next_correlation()
        self._sends += 1
        request = msgspec.structs.replace(item.request, correlation_id=out.correlation)
        self.emit(NodeMessage(self.node_id, out.node, request))
