"""The controller's side of the broker RPCs: registration, heartbeats, fencing, AlterPartition.

Kafka's ClusterControlManager, BrokerHeartbeatManager and the RPC entry
points of ReplicationControlManager and ProducerIdControlManager, hosted on a
controller node beside its :class:`QuorumController`. Every write goes
through ``QuorumController.submit``, so it takes the same write path and write
modes as any operation (a fence that moves thousands of leaders is a
transaction in transactional mode). A response leaves once the write is
committed (below the LSO), or at once when nothing had to be written.

Sessions live only in memory of the active controller, as in Kafka: each
heartbeat (and registration) renews the broker's session; a registered,
unfenced broker whose session is older than ``broker.session.timeout.ms``
(9,000 ms) is fenced. A newly active controller starts every session afresh.
The controller wakes for that at the moment the oldest unfenced session runs out
(Kafka's ``BrokerHeartbeatManager.nextCheckTimeNs``, the oldest contact plus the
timeout), not on a clock of its own, so a silent broker is fenced 1 ms after its
session's last valid instant.

A broker is unfenced once it asks to be (wantFence false) and the offset of
its published image has reached its own registration record (its broker
epoch), as Kafka's ``BrokerHeartbeatManager.calculateNextBrokerState`` does.
wantShutDown from a broker that leads nothing (or that also asks to be fenced)
fences it and tells it to shut down at once; from a leader it starts a
controlled shutdown (ControlledShutdown moves its leaderships away). A broker in
controlled shutdown is fenced and told to shut down once it leads nothing and
every active broker (unfenced, not shutting down, heard from in this session)
has reported an offset at or past the controlled shutdown's records (Kafka's
lowest active offset), so that the new leaders know they lead before the old one
stops. A fenced broker asking to shut down is told to at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from controller.errors import ApiError
from controller.handle import OperationHandle
from controller.operations import (
    AllocateProducerIds,
    ControlledShutdown,
    FenceBroker,
    RegisterBroker,
    UnfenceBroker,
)
from controller.operations.alter_partition import AlterPartitionOp
from controller.operations.base import Operation
from controller.operations.brokers import check_cluster_id
from controller.operations.leadership import leads_any
from controller.quorum_controller import QuorumController
from metadata.requests import (
    BROKER_SESSION_TIMEOUT_MS,
    AllocateProducerIdsRequest,
    AllocateProducerIdsResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    NodeMessage,
)


class BrokerServiceConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Timing of the controller's broker sessions."""

    session_timeout_ms: int = BROKER_SESSION_TIMEOUT_MS
    """broker.session.timeout.ms: an unfenced broker silent longer than this is fenced."""


class ControllerBrokerService:
    """Answers broker RPCs on one controller node; see the module docs."""

    def __init__(self, controller: QuorumController, clock: Callable[[], int],
                 config: BrokerServiceConfig | None = None, keep_leaders: bool = False) -> None:
        self.controller = controller
        self.keep_leaders = keep_leaders  # the fence-keeps-leader mutation
        self.clock = clock
        self.config = config or BrokerServiceConfig()
        self.outbox: list[NodeMessage] = []
        self.last_contact: dict[int, int] = {}
        self.session_epoch: int | None = None
        self.fencing: set[int] = set()
        self.shutdown_offsets: dict[int, int] = {}
        self.shutdown_started: set[int] = set()
        """Brokers whose controlled shutdown this activation started (Kafka's heartbeat
        manager state CONTROLLED_SHUTDOWN, new with each activation)."""
        self.metadata_offsets: dict[int, int] = {}
        """The offset each broker's last heartbeat in this session reported."""
        self.fenced_by_timeout: list[tuple[int, int]] = []  # (broker, time)
        self._polled_at = -1

    # ------------------------------------------------------------------ sessions
    def _sessions(self, now: int) -> dict[int, int]:
        """Contact times, reset whenever this controller becomes active anew."""
        epoch = self.controller.claimed_epoch if self.controller.active else None
        if epoch != self.session_epoch:
            self.session_epoch = epoch
            self.last_contact = {b: now for b in self.controller.image.brokers}
            self.metadata_offsets = {}
            self.fencing.clear()
            self.shutdown_offsets = {}
            self.shutdown_started.clear()
        return self.last_contact

    def has_valid_session(self, broker_id: int, now: int) -> bool:
        """True while the broker is registered, unfenced, and its last contact is within
        the session timeout (Kafka: a fenced broker has no session)."""
        broker = self.controller.image.brokers.get(broker_id)
        seen = self._sessions(now).get(broker_id)
        return broker is not None and not broker.fenced and seen is not None \
            and now - seen <= self.config.session_timeout_ms

    def lowest_active_offset(self) -> int | None:
        """The lowest offset reported in this session by an active broker (registered,
        unfenced, not in controlled shutdown); None when there is none."""
        brokers = self.controller.image.brokers
        offsets = [offset for broker_id, offset in self.metadata_offsets.items()
                   if (b := brokers.get(broker_id)) is not None and not b.fenced
                   and not b.in_controlled_shutdown]
        return min(offsets) if offsets else None

    # ------------------------------------------------------------------ app
    def drain_outbox(self) -> list[NodeMessage]:
        """Responses to send."""
        out, self.outbox = self.outbox, []
        return out

    def next_deadline(self) -> int | None:
        """While active, the first instant at which an unfenced broker's session has run
        out: its last contact plus the session timeout, plus 1 ms (a session is valid up
        to and including its last contact plus the timeout); None when no broker is
        unfenced (Kafka's nextCheckTimeNs)."""
        if not self.controller.active:
            return None
        now = self.clock()
        sessions = self._sessions(now)
        brokers = self.controller.image.brokers
        oldest = min((sessions.get(broker_id, now) for broker_id, broker in brokers.items()
                      if not broker.fenced and broker_id not in self.fencing), default=None)
        if oldest is None:
            return None
        # a fence that failed at once leaves its broker stale: try again 1 ms on, not now
        return max(oldest + self.config.session_timeout_ms + 1, self._polled_at + 1)

    def poll(self, now: int) -> None:
        """Fence every unfenced broker whose session expired, one operation each, the
        longest silent first (Kafka's maybeFenceOneStaleBroker, run again at once while
        one is left)."""
        if not self.controller.active:
            return
        self._polled_at = now
        sessions = self._sessions(now)
        image = self.controller.image
        expired: list[tuple[int, int]] = []
        for broker_id in sorted(image.brokers):
            broker = image.brokers[broker_id]
            if broker.fenced or broker_id in self.fencing:
                continue
            seen = sessions.setdefault(broker_id, now)
            if now - seen > self.config.session_timeout_ms:
                expired.append((seen, broker_id))
        for _seen, broker_id in sorted(expired):
            self.fenced_by_timeout.append((broker_id, now))
            self._fence(broker_id)

    def close(self, now: int) -> None:
        """Nothing waits here; pending writes fail with the controller's."""
        self.outbox.clear()

    def _fence(self, broker_id: int) -> OperationHandle:
        self.fencing.add(broker_id)
        handle = self.controller.submit(FenceBroker(broker_id, self.keep_leaders))
        handle.on_done(lambda _h: self.fencing.discard(broker_id))
        return handle

    # ------------------------------------------------------------------ requests
    def handle_message(self, env: NodeMessage, now: int) -> None:
        """Answer one broker request (other messages are not for this app)."""
        msg = env.message
        if isinstance(msg, BrokerHeartbeatRequest):
            self._on_heartbeat(env.src, msg, now)
        elif isinstance(msg, BrokerRegistrationRequest):
            self._on_registration(env.src, msg, now)
        elif isinstance(msg, AlterPartitionRequest):
            self._on_alter_partition(env.src, msg)
        elif isinstance(msg, AllocateProducerIdsRequest):
            self._on_allocate(env.src, msg)

    def _reply(self, dst: int, response: Any) -> None:
        self.outbox.append(NodeMessage(self.controller.node_id, dst, response))

    def _not_active(self) -> str | None:
        if self.controller.fault is not None:
            return "UNKNOWN_SERVER_ERROR"
        return None if self.controller.active else "NOT_CONTROLLER"

    def _submit_then(self, operation: Operation,
                     reply: Callable[[OperationHandle], None]) -> None:
        self.controller.submit(operation).on_done(reply)

    def _on_registration(self, src: int, req: BrokerRegistrationRequest, now: int) -> None:
        cid = req.correlation_id
        error = self._not_active()
        if error is not None:
            self._reply(src, BrokerRegistrationResponse(cid, error))
            return
        try:  # Kafka checks the cluster id before the duplicate registration
            check_cluster_id(self.controller.cluster_id, req.cluster_id)
        except ApiError as refused:
            self._reply(src, BrokerRegistrationResponse(cid, refused.code))
            return
        existing = self.controller.image.brokers.get(req.broker_id)
        if existing is not None and existing.incarnation_id != req.incarnation_id and \
                self.has_valid_session(req.broker_id, now):
            self._reply(src, BrokerRegistrationResponse(cid, "DUPLICATE_BROKER_REGISTRATION"))
            return

        def reply(handle: OperationHandle) -> None:
            if handle.error is not None:
                self._reply(src, BrokerRegistrationResponse(cid, handle.error.code))
                return
            self.last_contact[req.broker_id] = self.clock()
            self._reply(src, BrokerRegistrationResponse(cid, "NONE",
                                                        handle.response["brokerEpoch"]))

        self._sessions(now)[req.broker_id] = now
        register = RegisterBroker(req.broker_id, req.rack, req.host, req.port,
                                  incarnation_id=req.incarnation_id, cluster_id=req.cluster_id,
                                  is_migrating_zk_broker=req.is_migrating_zk_broker,
                                  log_dirs=req.log_dirs,
                                  previous_broker_epoch=req.previous_broker_epoch)
        if req.features is not None:
            register = msgspec.structs.replace(register, features=req.features)
        self._submit_then(register, reply)

    def _on_heartbeat(self, src: int, req: BrokerHeartbeatRequest, now: int) -> None:
        cid = req.correlation_id
        error = self._not_active()
        broker = self.controller.image.brokers.get(req.broker_id)
        if error is None and (broker is None or broker.epoch != req.broker_epoch):
            error = "STALE_BROKER_EPOCH"  # Kafka's answer to an unregistered broker too
        if error is not None or broker is None:
            self._reply(src, BrokerHeartbeatResponse(cid, error or "STALE_BROKER_EPOCH"))
            return
        self._sessions(now)[req.broker_id] = now
        caught_up = req.current_metadata_offset >= broker.epoch

        def answer(fenced: bool, shut_down: bool = False) -> Callable[[OperationHandle], None]:
            def reply(handle: OperationHandle) -> None:
                code = handle.error.code if handle.error is not None else "NONE"
                self._reply(src, BrokerHeartbeatResponse(cid, code, caught_up, fenced,
                                                         shut_down))
            return reply

        self.metadata_offsets[req.broker_id] = req.current_metadata_offset
        if broker.in_controlled_shutdown and not broker.fenced \
                and req.broker_id not in self.shutdown_started:
            # marked by an earlier activation: this one starts it again, writing the
            # partition changes the mark's write may have lost (Kafka's new heartbeat
            # manager moves the broker to CONTROLLED_SHUTDOWN at its next heartbeat)
            self.shutdown_started.add(req.broker_id)
            self._submit_then(ControlledShutdown(req.broker_id),
                              self._controlled_shutdown_started(src, req))
        elif broker.in_controlled_shutdown and not broker.fenced:
            self._shutdown_step(src, req)
        elif req.want_shut_down and broker.fenced:
            self._reply(src, BrokerHeartbeatResponse(cid, "NONE", caught_up, True, True))
        elif req.want_shut_down and (req.want_fence or
                                     not leads_any(self.controller.image, req.broker_id)):
            self._shut_down_now(src, req, caught_up)
        elif req.want_shut_down:
            self.shutdown_started.add(req.broker_id)
            self._submit_then(ControlledShutdown(req.broker_id),
                              self._controlled_shutdown_started(src, req))
        elif broker.fenced and not req.want_fence and caught_up \
                and req.broker_id not in self.fencing:
            self._submit_then(UnfenceBroker(req.broker_id), answer(False))
        elif not broker.fenced and req.want_fence and req.broker_id not in self.fencing:
            self._fence(req.broker_id).on_done(answer(True))
        else:
            self._reply(src, BrokerHeartbeatResponse(cid, "NONE", caught_up, broker.fenced))

    def _shut_down_now(self, src: int, req: BrokerHeartbeatRequest, caught_up: bool) -> None:
        """Fence the broker, then tell it to shut down (Kafka's SHUTDOWN_NOW)."""
        cid = req.correlation_id

        def reply(handle: OperationHandle) -> None:
            code = handle.error.code if handle.error is not None else "NONE"
            self._reply(src, BrokerHeartbeatResponse(cid, code, caught_up, True,
                                                     code == "NONE"))

        if req.broker_id in self.fencing:  # a fence under way: shut down once it is done
            self._reply(src, BrokerHeartbeatResponse(cid, "NONE", caught_up, False, False))
            return
        self._fence(req.broker_id).on_done(reply)

    def _controlled_shutdown_started(self, src: int, req: BrokerHeartbeatRequest
                                     ) -> Callable[[OperationHandle], None]:
        """The answer once ControlledShutdown is written: its last offset is the one every
        active broker must reach before this one may stop (kept from the first time)."""
        def reply(handle: OperationHandle) -> None:
            code = handle.error.code if handle.error is not None else "NONE"
            if code == "NONE":  # (nothing written: the log's end so far)
                last = handle.last_offset if handle.last_offset >= 0 \
                    else self.controller.raft.log.end_offset - 1
                self.shutdown_offsets.setdefault(req.broker_id, last)
            self._reply(src, BrokerHeartbeatResponse(req.correlation_id, code, True, False,
                                                     False))
        return reply

    def _shutdown_step(self, src: int, req: BrokerHeartbeatRequest) -> None:
        """A broker in controlled shutdown: fence it and say shut down once it leads
        nothing and the active brokers have seen its shutdown's records."""
        cid = req.correlation_id
        broker_id = req.broker_id
        lowest = self.lowest_active_offset()
        seen = lowest is None or lowest >= self.shutdown_offsets.get(broker_id, -1)
        if seen and not leads_any(self.controller.image, broker_id):
            self._shut_down_now(src, req, True)
            return
        self._reply(src, BrokerHeartbeatResponse(cid, "NONE", True, False, False))

    def _on_alter_partition(self, src: int, req: AlterPartitionRequest) -> None:
        """The whole request is one operation (Kafka's alterPartition): a top-level
        refusal answers no partition; else every partition is answered once the
        records are written."""
        cid = req.correlation_id
        error = self._not_active()
        if error is not None:
            self._reply(src, AlterPartitionResponse(cid, error))
            return

        def reply(handle: OperationHandle) -> None:
            if handle.error is not None:
                self._reply(src, AlterPartitionResponse(cid, handle.error.code))
                return
            self._reply(src, AlterPartitionResponse(cid, "NONE", handle.response))

        self._submit_then(AlterPartitionOp(req.broker_id, req.broker_epoch, req.topics), reply)

    def _on_allocate(self, src: int, req: AllocateProducerIdsRequest) -> None:
        cid = req.correlation_id
        error = self._not_active()
        if error is not None:
            self._reply(src, AllocateProducerIdsResponse(cid, error))
            return

        def reply(handle: OperationHandle) -> None:
            if handle.error is not None:
                self._reply(src, AllocateProducerIdsResponse(cid, handle.error.code))
                return
            block = handle.response
            self._reply(src, AllocateProducerIdsResponse(
                cid, "NONE", block["producerIdStart"], block["producerIdLen"]))

        self._submit_then(AllocateProducerIds(req.broker_id, req.broker_epoch), reply)

