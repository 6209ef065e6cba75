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

Requests go through kraftsim's model of Kafka's controller channel
(:class:`~metadata.controller_channel.ControllerChannel`, Kafka's
NodeToControllerRequestThread) with a retry timeout, and a request timeout, of half the
broker session: a request made while no controller is known waits until one is (the
channel looks every 100 ms from when it started looking); once handed to a controller
it is given half the session from that moment; a NOT_CONTROLLER answer is the channel's
own business (the same request goes again to the controller the raft client knows then,
at once to another node, to the same node after the channel's 50 ms reconnect back-off,
held while none is known) unless the request is older than the retry timeout, which
fails it. The lifecycle manager sees only the final answer or the failure.

A failed request (any other error answer, STALE_BROKER_EPOCH and
BROKER_ID_NOT_REGISTERED included, a request still held with no controller known at the
channel's first look half a session after it was made, or no answer within half a
session of being handed to a controller) is sent again after Kafka's exponential back-off: 100 ms,
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

from broker.config import BrokerConfig
from broker.loader import MetadataLoader
from broker.log_dir import LogDir
from metadata.backoff import ExponentialBackoff
from metadata.controller_channel import ControllerChannel
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
        self.channel = ControllerChannel(
            broker_id, self._controller, retry_timeout_ms=self.request_timeout_ms,
            correlation_start=rng.getrandbits(30), emit=self._emit)
        """The broker's channel to the controller for its heartbeats (Kafka's
        heartbeat channel manager)."""
        self._next_send: int | None = now
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
        times = [t for t in (self._next_send, self._shutdown_deadline,
                             self.channel.next_deadline()) if t is not None]
        return min(times) if times else None

    def poll(self, now: int) -> None:
        """Give up on an outstanding request that timed out; send the request that is due."""
        if self._shutdown_deadline is not None and now >= self._shutdown_deadline:
            self.state = BrokerState.SHUTTING_DOWN
            return
        if self.state is BrokerState.SHUTTING_DOWN:
            return
        self.channel.poll(now)
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
        self.channel.close()

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
        """The request that is due: delayed while one is in the channel, else made now
        and handed to the channel."""
        self._next_send = None
        if self.channel.busy:
            self._immediate = True
            return
        request: BrokerRegistrationRequest | BrokerHeartbeatRequest
        if not self.registered:
            request = BrokerRegistrationRequest(
                0, self.broker_id, self.incarnation_id, self.rack,
                previous_broker_epoch=self.previous_broker_epoch)
        else:
            request = BrokerHeartbeatRequest(
                0, self.broker_id, self.broker_epoch,
                self.loader.published_offset, want_fence=self.loader.published is None,
                want_shut_down=self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN)
        self.channel.send(request, now, self._on_answer, self._after_failure)

    def _controller(self) -> int | None:
        return self.loader.leader.leader_id

    def _emit(self, message: NodeMessage) -> None:
        self.outbox.append(message)

    def handle_message(self, env: NodeMessage, now: int) -> None:
        """Take the controller's answer to the outstanding request."""
        msg = env.message
        if isinstance(msg, BrokerRegistrationResponse | BrokerHeartbeatResponse) and \
                not self.shutdown_complete:
            self.channel.handle_message(env, now)

    def _on_answer(self, msg: Any, now: int) -> None:
        """The controller's answer (not NOT_CONTROLLER: the channel's business)."""
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
