"""BrokerLifecycleManager: a broker's registration, heartbeats and controlled shutdown.

Kafka's ``BrokerLifecycleManager``, as a pure app on the broker's node. It
talks to the controller the broker's raft client knows as leader, over the
simulated network (a partition or a crash cuts its heartbeats as it would a
real broker's), one request at a time:

- STARTING: send BrokerRegistration with this process's incarnation id (and, as
  previousBrokerEpoch, the broker epoch the previous process held when it stopped
  cleanly, which the broker's disk keeps as Kafka's clean-shutdown file does; -1 after
  a crash, KIP-966) until
  the controller answers with a broker epoch (the offset of the
  registration's first record), then heartbeat at once and 10 ms after each
  answer until one says the broker has caught up (the offset of its published
  image reached its broker epoch), as Kafka's manager does so that a broker
  with nothing to recover starts quickly;
- RECOVERY: caught up; the next heartbeat 10 ms after the answer that said so,
  then ``broker.heartbeat.interval.ms`` after each answer, with wantFence until
  the loader has published an image; the first unfenced answer makes it RUNNING;
- RUNNING: heartbeats keep the session alive (a later fenced answer, after a
  session timeout, leaves the state as it is, as in Kafka);
- PENDING_CONTROLLED_SHUTDOWN (entered from RUNNING only; any other state shuts
  down at once): heartbeats carry wantShutDown, the second one 50 ms after the
  first answer, then one interval after each answer, until the controller says
  shouldShutDown (or the timeout passes), then SHUTTING_DOWN, when the node
  may stop.

Requests go through a model of Kafka's controller channel
(NodeToControllerRequestThread): a request made while no controller is known
waits until one is. The channel looks for one every 100 ms from when it
started looking (its thread polls with a 100 ms timeout while it has no
controller, and nothing wakes it), so a controller learnt between two looks
is used at the next; once handed to a controller it is given half the broker
session timeout (the channel's retry timeout, which is also its network
client's request timeout) from that moment. A NOT_CONTROLLER answer is the
channel's own business: it drops the connection to the node that refused and
sends the same request again to the controller the raft client knows then (at
once to another node; to the same node once the channel's reconnect back-off
of 50 ms has passed; held while none is known), unless the request is older
than the retry timeout, which fails it. The lifecycle manager sees only the
final answer or the failure.

A failed request (any other error answer, STALE_BROKER_EPOCH and
BROKER_ID_NOT_REGISTERED included, a request held for half a session with no
controller known, or no answer within half a session of being handed to a
controller) is sent again after Kafka's exponential back-off: 100 ms,
doubling with each failure in a row up to ``broker.session.timeout.ms``, with
2% jitter drawn from the broker's seeded stream; a successful answer resets it.
The state never goes back: as in Kafka, a broker whose registration the
controller no longer knows keeps heartbeating with back-off (Kafka re-registers
only through its BrokerRegistrationTracker, for directories kraftsim does not
model).

Correlation ids start at a value drawn for this process, so an answer to a
request of the node's previous incarnation is never taken for one to this
incarnation's (Kafka's answers travel on the connection of the process that
asked, which dies with it).
"""

from __future__ import annotations

import random
from enum import StrEnum
from typing import Any

import msgspec

from broker.config import BrokerConfig
from broker.loader import MetadataLoader
from broker.log_dir import LogDir
from metadata.backoff import ExponentialBackoff
from metadata.requests import (
    BROKER_SESSION_TIMEOUT_MS,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    NodeMessage,
)
from metadata.uuids import random_uuid

STARTING_HEARTBEAT_MS = 10
"""The pause after each heartbeat answer while STARTING, and after the one that moves the
broker to RECOVERY (Kafka's BrokerLifecycleManager)."""

CONTROLLED_SHUTDOWN_FIRST_PAUSE_MS = 50
"""The pause after the first answer to a wantShutDown heartbeat that does not say
shouldShutDown (later ones wait a heartbeat interval)."""

RESEND_INITIAL_MS = 100
"""The first pause of the resend back-off (Kafka's ExponentialBackoff(100, 2, session, 0.02))."""
RESEND_MULTIPLIER = 2
"""The resend back-off's growth per failure in a row."""
RESEND_JITTER = 0.02
"""The resend back-off's spread either way."""

CONTROLLER_LOOKUP_MS = 100
"""How often Kafka's controller channel looks for a controller while it knows none
(NodeToControllerRequestThread.doWork polls for 100 ms before it looks again)."""

RECONNECT_BACKOFF_MS = 50
"""How long Kafka's controller channel waits before connecting again to a node it dropped
(its network client's reconnect back-off and its cap are both 50 ms, so no jitter)."""


class BrokerState(StrEnum):
    """Kafka's BrokerState values a KRaft broker goes through."""

    STARTING = "STARTING"
    RECOVERY = "RECOVERY"
    RUNNING = "RUNNING"
    PENDING_CONTROLLED_SHUTDOWN = "PENDING_CONTROLLED_SHUTDOWN"
    SHUTTING_DOWN = "SHUTTING_DOWN"


class BrokerLifecycleManager:
    """Registration and heartbeats of one broker; see the module docs.

    ``session_timeout_ms`` is broker.session.timeout.ms: the back-off's cap, and twice
    the time an unanswered request is given before it counts as failed."""

    def __init__(self, broker_id: int, loader: MetadataLoader, rng: random.Random, now: int,
                 config: BrokerConfig | None = None, rack: str | None = None, *,
                 session_timeout_ms: int = BROKER_SESSION_TIMEOUT_MS,
                 log_dir: LogDir | None = None) -> None:
        self.broker_id = broker_id
        self.log_dir = log_dir
        self.previous_broker_epoch = -1 if log_dir is None else \
            log_dir.take_clean_shutdown_epoch()
        self.loader = loader
        self.config = (config or BrokerConfig()).validate()
        self.rack = rack
        self.rng = rng
        self.incarnation_id = random_uuid(rng)
        self.state = BrokerState.STARTING
        self.broker_epoch = -1
        self.fenced = True
        self.outbox: list[NodeMessage] = []
        self.request_timeout_ms = max(1, session_timeout_ms // 2)
        self.backoff = ExponentialBackoff(RESEND_INITIAL_MS, RESEND_MULTIPLIER,
                                          session_timeout_ms, RESEND_JITTER)
        self.failed_attempts = 0
        """Requests failed in a row (Kafka's failedAttempts; a success resets it)."""
        self._correlation = rng.getrandbits(30)
        self._outstanding: int | None = None
        self._timeout_at: int | None = None  # when the current request counts as failed
        self._created_at = now  # when the current request was made (its retry timeout's start)
        self._next_send: int | None = now
        self._held_since: int | None = None  # a request waiting for a known controller
        self._looking_since: int | None = None  # the channel's first look finding none...
        self._next_look = 0  # ...and its next look (every CONTROLLER_LOOKUP_MS)
        self._send_at: int | None = None  # a request waiting out the reconnect back-off...
        self._send_to = -1  # ...to this controller
        self._request: BrokerRegistrationRequest | BrokerHeartbeatRequest | None = None
        """The current request as first built (the channel sends the same one again)."""
        self._reconnect_after: dict[int, int] = {}  # node -> when it may be connected again
        self._immediate = False  # a request came due while one was in flight
        self._got_shutdown_answer = False
        self._shutdown_deadline: int | None = None

    # ------------------------------------------------------------------ queries
    @property
    def shutdown_complete(self) -> bool:
        """True once the node may stop after a controlled shutdown."""
        return self.state is BrokerState.SHUTTING_DOWN

    @property
    def registered(self) -> bool:
        """True once a registration was acknowledged (a broker epoch is known)."""
        return self.broker_epoch >= 0

    @property
    def caught_up(self) -> bool:
        """Registered, and the published image holds this incarnation's registration (Kafka's
        initial catch-up: the replicas may start only then, so a restarted broker never acts
        on leaderships of its previous incarnation)."""
        return self.registered and self.loader.published is not None and \
            self.loader.published_offset >= self.broker_epoch

    # ------------------------------------------------------------------ app
    def drain_outbox(self) -> list[NodeMessage]:
        """Requests to send."""
        out, self.outbox = self.outbox, []
        return out

    def next_deadline(self) -> int | None:
        """When the next request is due, the outstanding one times out, or the controlled
        shutdown gives up, whichever comes first."""
        if self.state is BrokerState.SHUTTING_DOWN:
            return None
        held = self._next_look if self._held_since is not None else None
        times = [t for t in (self._next_send, self._timeout_at, self._shutdown_deadline,
                             self._send_at, held) if t is not None]
        return min(times) if times else None

    def poll(self, now: int) -> None:
        """Give up on an outstanding request that timed out; send the request that is due."""
        if self._shutdown_deadline is not None and now >= self._shutdown_deadline:
            self.state = BrokerState.SHUTTING_DOWN
            return
        if self.state is BrokerState.SHUTTING_DOWN:
            return
        if self._timeout_at is not None and now >= self._timeout_at:
            self._outstanding = self._timeout_at = self._held_since = self._send_at = None
            self._after_failure(now)
        if self._held_since is not None and now >= self._next_look:
            self._dispatch(now)  # the channel looks again
        if self._send_at is not None and now >= self._send_at:
            self._send_at = None
            self._send(now, self._send_to)
        if self._next_send is not None and now >= self._next_send:
            self._communicate(now)

    def close(self, now: int) -> None:
        """The process stops: SHUTTING_DOWN, nothing more is sent (Kafka's close). A
        process that was shutting down already stops cleanly: its disk keeps the broker
        epoch it held, which its next process sends as its registration's
        previousBrokerEpoch (KIP-966); a crash keeps none."""
        if self.state is BrokerState.SHUTTING_DOWN and self.log_dir is not None:
            self.log_dir.mark_clean_shutdown(self.broker_epoch)
        self.state = BrokerState.SHUTTING_DOWN
        self.outbox.clear()

    def begin_controlled_shutdown(self, now: int) -> bool:
        """Ask the controller to move leaderships away; False when there is nothing to wait
        for (Kafka: any state but RUNNING shuts down at once)."""
        if self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            return True
        if self.state is not BrokerState.RUNNING:
            self.state = BrokerState.SHUTTING_DOWN
            return False
        self.state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
        self._shutdown_deadline = now + self.config.controlled_shutdown_timeout_ms
        self._communicate(now)  # at once, or right after the answer to the one in flight
        return True

    # ------------------------------------------------------------------ requests
    def _schedule(self, now: int, delay: int) -> None:
        """The next request goes out ``delay`` ms from now (at once if one came due while
        the last was in flight)."""
        self._next_send = now if self._immediate else now + delay
        self._immediate = False

    def _after_failure(self, now: int) -> None:
        """Kafka's scheduleNextCommunicationAfterFailure: never at once."""
        delay = self.backoff.backoff(self.failed_attempts, self.rng)
        self.failed_attempts += 1
        self._immediate = False
        self._schedule(now, delay)

    def _communicate(self, now: int) -> None:
        """The request that is due: delayed while one is in flight, else sent (or held
        until a controller is known, as Kafka's controller channel holds it)."""
        self._next_send = None
        if self._outstanding is not None or self._held_since is not None or \
                self._send_at is not None:
            self._immediate = True
            return
        self._created_at = now
        self._request = None
        self._dispatch(now)

    def _dispatch(self, now: int) -> None:
        """Hand the current request to the controller the raft client knows, with a request
        timeout from now, sent once the reconnect back-off to that node has passed; while
        none is known, hold it until the retry timeout from its making, looking again every
        CONTROLLER_LOOKUP_MS from the channel's first look that found none (Kafka's
        channel: its queue, then its network client)."""
        controller = self.loader.leader.leader_id
        if controller is None:
            if self._held_since is None:
                self._held_since = now
                self._timeout_at = self._created_at + self.request_timeout_ms
            since = self._looking_since
            if since is None:
                since = self._looking_since = now
            self._next_look = now + CONTROLLER_LOOKUP_MS - (now - since) % CONTROLLER_LOOKUP_MS
            return
        self._held_since = self._looking_since = None
        self._timeout_at = now + self.request_timeout_ms
        ready = self._reconnect_after.get(controller, now)
        if ready > now:
            self._send_at, self._send_to = ready, controller
            return
        self._send(now, controller)

    def _send(self, now: int, controller: int) -> None:
        """Send the registration or heartbeat to ``controller`` (the current one again,
        with a new correlation id, when it was sent before)."""
        self._correlation += 1
        self._outstanding = self._correlation
        request: Any
        if self._request is not None:
            request = msgspec.structs.replace(self._request, correlation_id=self._correlation)
        elif not self.registered:
            request = BrokerRegistrationRequest(
                self._correlation, self.broker_id, self.incarnation_id, self.rack,
                previous_broker_epoch=self.previous_broker_epoch)
        else:
            request = BrokerHeartbeatRequest(
                self._correlation, self.broker_id, self.broker_epoch,
                self.loader.published_offset, want_fence=self.loader.published is None,
                want_shut_down=self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN)
        self._request = request
        self.outbox.append(NodeMessage(self.broker_id, controller, request))

    def handle_message(self, env: NodeMessage, now: int) -> None:
        """Take the controller's answer to the outstanding request."""
        msg = env.message
        if not isinstance(msg, BrokerRegistrationResponse | BrokerHeartbeatResponse):
            return
        if msg.correlation_id != self._outstanding or self.shutdown_complete:
            return
        self._outstanding = self._timeout_at = None
        if msg.error == "NOT_CONTROLLER":
            self._not_controller(env.src, now)
            return
        if msg.error != "NONE":
            self._after_failure(now)
            return
        self.failed_attempts = 0
        if isinstance(msg, BrokerRegistrationResponse):
            self.broker_epoch = msg.broker_epoch
            self.fenced = True
            self._schedule(now, 0)  # the first heartbeat goes out at once
            return
        self.fenced = msg.is_fenced
        if self.state is BrokerState.STARTING:
            if msg.is_caught_up:
                self.state = BrokerState.RECOVERY
            self._schedule(now, STARTING_HEARTBEAT_MS)
        elif self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            if msg.should_shut_down:
                self.state = BrokerState.SHUTTING_DOWN
            else:
                self._schedule(now, self.config.heartbeat_interval_ms
                               if self._got_shutdown_answer
                               else CONTROLLED_SHUTDOWN_FIRST_PAUSE_MS)
            self._got_shutdown_answer = True
        else:
            if self.state is BrokerState.RECOVERY and not msg.is_fenced:
                self.state = BrokerState.RUNNING
            # (RUNNING stays RUNNING on a fenced answer, as in Kafka: only ``fenced`` follows
            # it, and the controller unfences the broker again once its heartbeats say
            # caught up)
            self._schedule(now, self.config.heartbeat_interval_ms)

    def _not_controller(self, refused_by: int, now: int) -> None:
        """Kafka's controller channel after a NOT_CONTROLLER: it drops the connection to the
        node that refused (connecting there again only after the reconnect back-off) and
        sends the same request again, to the controller known now, unless the request is
        as old as its retry timeout (then it fails, as a timeout)."""
        self._reconnect_after[refused_by] = now + RECONNECT_BACKOFF_MS
        if now - self._created_at >= self.request_timeout_ms:
            self._after_failure(now)
            return
        self._dispatch(now)
