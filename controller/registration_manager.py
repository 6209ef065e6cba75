"""ControllerRegistrationManager: every controller registers itself (KIP-919).

Kafka's ``ControllerRegistrationManager``, as an app on each controller node (the active
one included). It watches the state its controller publishes (the committed image at the
last stable offset, looked at only when that moves or a snapshot is loaded): once
metadata.version is 3.7-IV0 or later and the image's registration of this controller is
missing or of another incarnation, it sends a ControllerRegistration request through
its "registration" channel to the controller
(:class:`~metadata.controller_channel.ControllerChannel`, Kafka's
NodeToControllerChannelManager with a retry timeout, and so a request timeout, of
:data:`REQUEST_TIMEOUT_MS`), to the controller its raft node knows as leader, over the
simulated network as a broker's requests go. The channel does the controller's part: a
request made while no leader is known waits for one (looked for every 100 ms), a
NOT_CONTROLLER answer sends it again (to the same node after the 50 ms reconnect
back-off), and a leader change while a request is out sends it again at once to the new
leader (Kafka's channel does so when its connection to the old one breaks). An error
answer, a request unanswered within the request timeout, or one still waiting for a
leader at the retry timeout, is retried after Kafka's exponential back-off (100 ms
doubling to 120 s, 2% jitter). Once
the image holds this process's registration it stops; a restart is a new incarnation and
registers again. As in Kafka, the incarnation id alone decides whether a registration is
this process's: one with its incarnation id but other listeners or features still counts
(the manager never re-sends to correct them).

The same app answers the requests on the active controller (Kafka's
``ControllerApis.handleControllerRegistration``): it submits
:class:`~controller.operations.controllers.RegisterController` as an atomic write and
answers NONE once it is committed, or the error (NOT_CONTROLLER when not active,
UNSUPPORTED_VERSION below 3.7-IV0).

A registered controller does no work per event: it has no timer and an empty outbox (all
the world asks of it after an event on its node), and at each new published image it
compares two references.
"""

from __future__ import annotations

import random
from typing import Any

from controller.handle import OperationHandle
from controller.operations.controllers import (
    CONTROLLER_FEATURES,
    CONTROLLER_LISTENER,
    RegisterController,
)
from controller.quorum_controller import QuorumController
from controller.write_mode import WriteMode
from metadata.backoff import ExponentialBackoff
from metadata.controller_channel import ControllerChannel
from metadata.image import ControllerRegistration, MetadataImage
from metadata.requests import (
    ControllerRegistrationRequest,
    ControllerRegistrationResponse,
    NodeMessage,
)
from metadata.uuids import random_uuid
from metadata.versions import CONTROLLER_REGISTRATION

REGISTRATION_BACKOFF = ExponentialBackoff(initial=100, multiplier=2, maximum=120_000,
                                          jitter=0.02)
"""The retry back-off of Kafka's registration manager: 100 ms, doubling per failure in a
row, each within 2%, never more than 120 s (the cap applies after the jitter)."""
REQUEST_TIMEOUT_MS = 5_000
"""The retry timeout of Kafka's registration channel, and so its request timeout: a
request unanswered this long after its hand-off, or still waiting for a leader this long
after it was made, is given up and retried."""


def is_own_registration(registration: ControllerRegistration | None,
                        incarnation_id: str) -> bool:
    """Whether ``registration`` (an image's entry for a controller id, or None) is the one
    of the process with ``incarnation_id``: Kafka's registration manager compares the
    incarnation id and nothing else."""
    return registration is not None and registration.incarnation_id == incarnation_id


class ControllerRegistrationManager:
    """One controller's registration, and the answers to others'; see the module docs."""

    def __init__(self, controller: QuorumController, rng: random.Random) -> None:
        """``rng``: the process's own stream: its incarnation id, then back-off jitter."""
        self.controller = controller
        self.node_id = controller.node_id
        self.rng = rng
        self.incarnation_id = random_uuid(rng)
        self.registration = ControllerRegistration(
            controller_id=self.node_id, incarnation_id=self.incarnation_id,
            endpoints=(CONTROLLER_LISTENER,), features=CONTROLLER_FEATURES)
        """What this process asks to register. The image's registration of this node id
        counts as this process's when its incarnation id is this one (see
        :func:`is_own_registration`)."""
        self.outbox: list[NodeMessage] = []
        self.registered_in_log = False
        self.successful_rpcs = 0
        self.failed_rpcs = 0
        """Failures in a row (Kafka's failedRpcs): the next back-off's exponent."""
        self.channel = ControllerChannel(self.node_id, self._leader,
                                         retry_timeout_ms=REQUEST_TIMEOUT_MS, emit=self._emit)
        """The "registration" channel to the active controller."""
        self.retry_at: int | None = None
        self._metadata_version = 0
        self._seen: object = None  # the image's controllers map looked at last
        controller.publishers.append(self)
        self.on_publish()

    # ------------------------------------------------------------------ publisher
    @property
    def wants_registration(self) -> bool:
        """metadata.version allows registering and the image does not hold ours."""
        return not self.registered_in_log and self._metadata_version >= CONTROLLER_REGISTRATION

    def on_publish(self) -> None:
        """The controller published a new committed image: look at it."""
        if self.controller.fault is not None:
            return  # a stopped controller publishes nothing
        image: MetadataImage = self.controller.committed_image()
        controllers = image.controllers
        version = image.metadata_version
        if controllers is self._seen and version == self._metadata_version:
            return
        self._seen = controllers
        self._metadata_version = version
        self.registered_in_log = is_own_registration(controllers.get(self.node_id),
                                                     self.incarnation_id)
        if self.wants_registration and self.pending is None and self.retry_at is None:
            self._send(self.controller.clock())

    @property
    def pending(self) -> tuple[int, int, int] | None:
        """A request in the channel (Kafka's pendingRpc) as (correlation id, destination,
        give-up time) of its hand-off (-1 for the first two while it waits for a leader or
        the reconnect back-off); None when there is none."""
        if not self.channel.busy:
            return None
        return self.channel.handed or (-1, -1, self.channel.queue[0].created_ms
                                       + REQUEST_TIMEOUT_MS)

    def on_leader_change(self, leader_id: int | None) -> None:
        """A request out to another node goes to the new leader at once."""
        self.channel.leader_changed(self.controller.clock())

    # ------------------------------------------------------------------ app
    def drain_outbox(self) -> list[NodeMessage]:
        """Requests and answers to send (asked after every event on the node: an empty
        outbox is handed back as it is, without a new list)."""
        out = self.outbox
        if out:
            self.outbox = []
        return out

    def next_deadline(self) -> int | None:
        """When the request out is given up, or the next try is due (the channel has a
        deadline only while it holds the request, and the next try waits only while it
        holds none)."""
        due = self.channel.deadline
        return self.retry_at if due is None else due

    def poll(self, now: int) -> None:
        """Give up an unanswered request, or try again once the back-off has passed."""
        if self.channel.busy:
            self.channel.poll(now)
            return
        if self.retry_at is not None and now >= self.retry_at:
            self.retry_at = None
            if self.wants_registration:
                self._send(now)

    def close(self, now: int) -> None:
        """The process stops: nothing is sent any more."""
        self.outbox.clear()
        self.channel.close()
        self.retry_at = None

    # ------------------------------------------------------------------ requests
    def _leader(self) -> int | None:
        return self.controller.raft.leader_id

    def _emit(self, message: NodeMessage) -> None:
        self.outbox.append(message)

    def _send(self, now: int) -> None:
        reg = self.registration
        self.channel.send(ControllerRegistrationRequest(
            0, self.node_id, self.incarnation_id, reg.endpoints, reg.features), now,
            self._on_answer, self._failed)

    def _failed(self, now: int) -> None:
        self.retry_at = now + REGISTRATION_BACKOFF.backoff(self.failed_rpcs, self.rng)
        self.failed_rpcs += 1

    def handle_message(self, env: NodeMessage, now: int) -> None:
        """Answer another controller's registration, or take the answer to ours."""
        msg = env.message
        if isinstance(msg, ControllerRegistrationRequest):
            self._serve(env.src, msg)
        elif isinstance(msg, ControllerRegistrationResponse):
            self.channel.handle_message(env, now)

    def _on_answer(self, msg: Any, now: int) -> None:
        """The active controller's answer (NOT_CONTROLLER stays in the channel)."""
        if msg.error == "NONE":
            self.successful_rpcs += 1
            self.failed_rpcs = 0
        else:
            self._failed(now)

    def _serve(self, src: int, req: ControllerRegistrationRequest) -> None:
        operation = RegisterController(req.controller_id, req.incarnation_id, req.listeners,
                                       req.features, req.zk_migration_ready)

        def reply(handle: OperationHandle) -> None:
            error = handle.error
            self.outbox.append(NodeMessage(self.node_id, src, ControllerRegistrationResponse(
                req.correlation_id, error.code if error is not None else "NONE",
                error.message if error is not None else None)))

        self.controller.submit(operation, WriteMode.ATOMIC).on_done(reply)
