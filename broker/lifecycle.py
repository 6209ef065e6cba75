"""BrokerLifecycleManager: a broker's registration, heartbeats and controlled shutdown.

Kafka's ``BrokerLifecycleManager``, as a pure app on the broker's node. It
talks to the controller the broker's raft client knows as leader, over the
simulated network (a partition or a crash cuts its heartbeats as it would a
real broker's):

- STARTING: send BrokerRegistration with this process's incarnation id until
  the controller answers with a broker epoch (the offset of the
  registration's first record), then heartbeat at once and every 10 ms after each
  answer until the controller says the broker has caught up (the offset of its
  published image reached its broker epoch), as Kafka's manager does so that a
  broker with nothing to recover starts quickly;
- RECOVERY: caught up; the next heartbeat 10 ms after the one that said so, then
  every ``broker.heartbeat.interval.ms``, with wantFence until the loader has
  published an image; the controller unfences the broker once it is caught up;
- RUNNING: unfenced once; heartbeats keep the session alive (a later fenced answer,
  after a session timeout, leaves the state as it is, as in Kafka);
- PENDING_CONTROLLED_SHUTDOWN: heartbeats carry wantShutDown until the
  controller says shouldShutDown (or the timeout passes), then SHUTTING_DOWN,
  when the node may stop.

A heartbeat answered STALE_BROKER_EPOCH or BROKER_ID_NOT_REGISTERED sends the
broker back to STARTING (it registers again, same incarnation). A request not
answered within one interval is given up and sent again.
"""

from __future__ import annotations

import random
from enum import StrEnum
from typing import Any

from broker.config import BrokerConfig
from broker.loader import MetadataLoader
from metadata.requests import (
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


class BrokerState(StrEnum):
    """Kafka's BrokerState values a KRaft broker goes through."""

    STARTING = "STARTING"
    RECOVERY = "RECOVERY"
    RUNNING = "RUNNING"
    PENDING_CONTROLLED_SHUTDOWN = "PENDING_CONTROLLED_SHUTDOWN"
    SHUTTING_DOWN = "SHUTTING_DOWN"


class BrokerLifecycleManager:
    """Registration and heartbeats of one broker; see the module docs."""

    def __init__(self, broker_id: int, loader: MetadataLoader, rng: random.Random, now: int,
                 config: BrokerConfig | None = None, rack: str | None = None) -> None:
        self.broker_id = broker_id
        self.loader = loader
        self.config = (config or BrokerConfig()).validate()
        self.rack = rack
        self.incarnation_id = random_uuid(rng)
        self.state = BrokerState.STARTING
        self.broker_epoch = -1
        self.fenced = True
        self.outbox: list[NodeMessage] = []
        self._correlation = 0
        self._outstanding: int | None = None
        self._next_send = now
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
        """When the next request is due."""
        if self.state is BrokerState.SHUTTING_DOWN:
            return None
        if self._shutdown_deadline is not None:
            return min(self._next_send, self._shutdown_deadline)
        return self._next_send

    def poll(self, now: int) -> None:
        """Send the registration or heartbeat that is due."""
        if self._shutdown_deadline is not None and now >= self._shutdown_deadline:
            self.state = BrokerState.SHUTTING_DOWN
            return
        if self.state is BrokerState.SHUTTING_DOWN or now < self._next_send:
            return
        self._send(now)

    def close(self, now: int) -> None:
        """The process stops."""
        self.outbox.clear()

    def begin_controlled_shutdown(self, now: int) -> bool:
        """Ask the controller to move leaderships away; False when there is nothing to wait
        for (never registered, or already fenced)."""
        if not self.registered or self.fenced:
            self.state = BrokerState.SHUTTING_DOWN
            return False
        if self.state is not BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            self.state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
            self._shutdown_deadline = now + self.config.controlled_shutdown_timeout_ms
            self._send(now)
        return True

    # ------------------------------------------------------------------ requests
    def _send(self, now: int) -> None:
        controller = self.loader.leader.leader_id
        interval = (self.config.registration_retry_ms if not self.registered
                    else self.config.heartbeat_interval_ms)
        self._next_send = now + interval
        if controller is None:
            self._outstanding = None
            return
        self._correlation += 1
        self._outstanding = self._correlation
        request: Any
        if not self.registered:
            request = BrokerRegistrationRequest(self._correlation, self.broker_id,
                                                self.incarnation_id, self.rack)
        else:
            request = BrokerHeartbeatRequest(
                self._correlation, self.broker_id, self.broker_epoch,
                self.loader.published_offset, want_fence=self.loader.published is None,
                want_shut_down=self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN)
        self.outbox.append(NodeMessage(self.broker_id, controller, request))

    def handle_message(self, env: NodeMessage, now: int) -> None:
        """Take the controller's answer to the outstanding request."""
        msg = env.message
        if not isinstance(msg, BrokerRegistrationResponse | BrokerHeartbeatResponse):
            return
        if msg.correlation_id != self._outstanding or self.shutdown_complete:
            return
        self._outstanding = None
        if isinstance(msg, BrokerRegistrationResponse):
            if msg.error == "NONE":
                self.broker_epoch = msg.broker_epoch
                self.fenced = True
                self._next_send = now  # the first heartbeat goes out at once
            return
        if msg.error in ("STALE_BROKER_EPOCH", "BROKER_ID_NOT_REGISTERED"):
            self.broker_epoch = -1
            self.fenced = True
            if self.state is BrokerState.RUNNING:
                self.state = BrokerState.STARTING
            self._next_send = now
            return
        if msg.error != "NONE":
            return
        self.fenced = msg.is_fenced
        if self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            if msg.should_shut_down:
                self.state = BrokerState.SHUTTING_DOWN
            return
        if self.state is BrokerState.STARTING and msg.is_fenced:
            if msg.is_caught_up:
                self.state = BrokerState.RECOVERY
            self._next_send = now + STARTING_HEARTBEAT_MS
        elif self.state in (BrokerState.RECOVERY, BrokerState.STARTING) and not msg.is_fenced:
            self.state = BrokerState.RUNNING
        # (RUNNING stays RUNNING on a fenced answer, as in Kafka: only ``fenced`` follows it,
        # and the controller unfences the broker again once its heartbeats say caught up)
