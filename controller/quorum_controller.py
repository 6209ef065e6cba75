"""QuorumController: one controller node, a listener of its raft node.

Active (the raft leader, once it has claimed its epoch): operations generate
records against the latest state, which are replayed at once (before the
append, as in Kafka), appended in batches with a revert point at each batch
end, and acknowledged only when the last stable offset passes their last
record. On activation the new leader writes the bootstrap records (empty log)
or aborts a transaction left open by its predecessor.

Standby: committed batches are replayed in order; markers open, close or
abort (revert to Begin-1) the transaction. Inside an open transaction each
record is checked at its commit (a fault names it, as below) and applied only
at the End or when the state is read (:mod:`controller.deferred`), so an
Abort discards no per-record state.

Losing leadership fails every pending operation with NOT_CONTROLLER and
returns the state to what the committed log says: the revert point at the last
committed offset (Kafka reverts to the LSO, which loses the committed records
of an open transaction that a later leader completes).

A replay fault (a Begin inside a transaction, End/Abort without one, a marker
in a snapshot, an unknown record, a record that cannot apply) stops the
controller: it reports the fault to its fatal handler and ignores all further
input, as Kafka's process exits. On the active controller the record is
replayed before it is appended, so the batch at fault is never appended and
the operation's handle fails with UNKNOWN_SERVER_ERROR; another controller
takes over.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from controller.activation import activation_records
from controller.config import ControllerConfig
from controller.deferred import DeferredImage, State, image_of
from controller.errors import ApiError, ControllerFault, not_controller
from controller.handle import OperationHandle
from controller.leader_balance import LeaderBalancer
from controller.mutations import ControllerMutation
from controller.offset_control import OffsetControlManager, RevertPoint
from controller.operations.base import Generated, Operation, OperationContext
from controller.operations.cluster import NoOp
from controller.periodic_elections import PeriodicElections, may_trigger
from controller.purgatory import Purgatory
from controller.unclean_elections import UncleanElector
from controller.write_mode import WriteMode, default_mode, plan_batches, split
from metadata.batch_shape import outside_runs, shape_of
from metadata.bootstrap import BootstrapMetadata
from metadata.delta import MetadataDelta, ReplayError
from metadata.image import MetadataImage
from metadata.replay_check import ReplayCheck
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
    MetadataRecord,
    is_marker,
)
from metadata.snapshot import image_to_records
from metadata.versions import NOOP_RECORDS, release_name
from raft import Batch, LeaderAndEpoch, NotLeaderError, RaftNode, Snapshot

FatalHandler = Callable[[ControllerFault], None]


class MetadataPublisher(Protocol):
    """Told when the controller publishes a new committed image (Kafka's
    MetadataPublisher on a controller's loader) and when the raft leader changes."""

    def on_publish(self) -> None:
        """The last stable offset moved, or a snapshot was loaded."""

    def on_leader_change(self, leader_id: int | None) -> None:
        """The raft node knows a new leader (None: none is known)."""


class QuorumController:
    """A controller on one raft node; see the module docs."""

    def __init__(self, node_id: int, raft: RaftNode, rng: random.Random,
                 clock: Callable[[], int], config: ControllerConfig | None = None,
                 fatal_handler: FatalHandler | None = None,
                 mutations: frozenset[ControllerMutation] = frozenset(),
                 bootstrap: BootstrapMetadata | None = None,
                 activation_listener: Callable[[], None] | None = None,
                 cluster_id: str | None = None) -> None:
        """``bootstrap``: what the first leader of an empty log writes (Kafka's
        bootstrap.checkpoint); None: a cluster formatted at the config's bootstrap
        metadata.version, with each feature's default level for it, as Kafka formats
        (:func:`metadata.versions.default_feature_levels`).
        ``activation_listener``: called whenever :attr:`active` may have changed (the
        claimed epoch or the fault was set), so a caller may cache who is active.
        ``cluster_id``: the cluster id of the node's meta.properties, which a broker's
        registration must name (INCONSISTENT_CLUSTER_ID); None: any is taken."""
        self.node_id = node_id
        self.raft = raft
        self.rng = rng
        self.clock = clock
        self.config = (config or ControllerConfig()).validate()
        self.bootstrap = bootstrap or BootstrapMetadata.formatted(
            self.config.bootstrap_metadata_version,
            f"the configured bootstrap with metadata.version "
            f"{release_name(self.config.bootstrap_metadata_version)}")
        self.fatal_handler = fatal_handler
        self.activation_listener = activation_listener
        self.cluster_id = cluster_id
        self.mutations = mutations
        self.offsets = OffsetControlManager()
        self._state: State = MetadataImage.EMPTY
        self.defer_transactions = True
        """Apply an open transaction only at its End (see :mod:`controller.deferred`): a
        standby's committed batches, the active controller's written ones; False applies
        each batch at once (benchmarks compare the two)."""
        self.claimed_epoch: int | None = None
        self.replayed_any = False
        """Whether any metadata record was replayed, from the log or a snapshot (Kafka's
        LogReplayTracker): until then the log counts as empty, and the controller that
        activates writes the bootstrap records."""
        self.fault: ControllerFault | None = None
        self.purgatory = Purgatory()
        """The writes waiting for the last stable offset (Kafka's DeferredEventQueue)."""
        self.next_noop_at: int | None = None
        self.election_checks: tuple[PeriodicElections, ...] = (
            LeaderBalancer(self.config.leader_imbalance_check_interval_ms),
            UncleanElector(self.config.unclean_leader_election_interval_ms, node_id))
        """The periodic election checks: preferred leaders, then unclean elections."""
        self.records_since_snapshot = 0
        self.activations: list[tuple[int, list[MetadataRecord]]] = []
        self._next_op_id = 0
        self.publishers: list[MetadataPublisher] = []
        """Told of each new committed image and leader (a controller's registration)."""
        raft.register_listener(self)

    # ------------------------------------------------------------------ queries
    @property
    def image(self) -> MetadataImage:
        """The latest state (uncommitted records and an open transaction included).

        On a standby inside an open transaction, reading it applies the transaction's
        deferred records (see :mod:`controller.deferred`).
        """
        state = self._state
        if isinstance(state, DeferredImage):
            return state.image()
        return state

    @image.setter
    def image(self, image: MetadataImage) -> None:
        self._state = image

    @property
    def metadata_version(self) -> int:
        """metadata.version in the latest state (without applying deferred records)."""
        return self._state.metadata_version

    @property
    def active(self) -> bool:
        """True while this controller is the active one."""
        return self.claimed_epoch is not None and self.fault is None

    @property
    def transaction_open(self) -> bool:
        """True while the latest applied state has an open transaction."""
        return self.offsets.transaction_start_offset != -1

    def committed_image(self) -> MetadataImage:
        """The state at the last stable offset: what reads see."""
        return self.offsets.point_at(self.offsets.last_stable_offset).image

    def committed_state(self) -> RevertPoint:
        """The state at the last committed offset (open transaction included)."""
        return self.offsets.point_at(self.offsets.last_committed_offset)

    # ------------------------------------------------------------------ operations
    def submit(self, operation: Operation, mode: WriteMode | None = None) -> OperationHandle:
        """Validate, apply and append ``operation``; the handle says when it is done."""
        now = self.clock()
        self._next_op_id += 1
        version = self.metadata_version
        chosen = mode or self.config.write_mode or default_mode(version)
        if chosen is WriteMode.ATOMIC and getattr(operation, "splits_when_atomic", False):
            chosen = WriteMode.NON_ATOMIC
        handle = OperationHandle(self._next_op_id, operation.describe(), self.node_id, now,
                                 chosen.value)
        if self.fault is not None:
            handle.fail(ApiError("UNKNOWN_SERVER_ERROR",
                                 f"controller {self.node_id} stopped: {self.fault}"), now)
            return handle
        early = getattr(operation, "early_result", None)
        result: Generated | None = early() if early is not None else None
        if result is not None:
            # An empty request: Kafka answers it at once, active or not, without queueing
            # it behind pending writes (QuorumController.createTopics, deleteTopics, ...).
            handle.response = result.response
            handle.commit(now)
            return handle
        if not self.active:
            handle.fail(not_controller(self.raft.leader_id), now)
            return handle
        try:
            ctx = self._context()
            generated = operation.generate(ctx)
            batches = plan_batches(generated.records, chosen, self.config.max_records_per_batch,
                                   version, handle.description)
        except ApiError as error:
            handle.fail(error, now)
            return handle
        handle.response = generated.response
        if not batches:
            self._wait_for_pending(handle, now)
            return handle
        try:
            handle.first_offset, handle.last_offset = self._write(batches)
        except ApiError as error:
            handle.fail(error, now)
            return handle
        except ControllerFault as fault:
            # Kafka: a replay error before the append is fatal; the batch that failed
            # is never appended, the write fails and the process stops (failover).
            handle.fail(ApiError("UNKNOWN_SERVER_ERROR",
                                 f"controller {self.node_id} stopped: {fault}"), now)
            self._fatal(fault)
            return handle
        handle.record_count = sum(len(b) for b in batches)
        handle.batch_count = len(batches)
        handle.transactional = isinstance(batches[0][0], BeginTransactionRecord)
        self.purgatory.add(handle.last_offset, handle)
        self._complete_up_to(self.offsets.last_stable_offset)
        return handle

    def _wait_for_pending(self, handle: OperationHandle, now: int) -> None:
        """An operation without records completes after every write already pending, the
        controller's own included (its answer was read from the latest state)."""
        highest = self.purgatory.highest_pending_offset
        if highest is not None:
            handle.last_offset = highest
            self.purgatory.add(highest, handle)
        else:
            handle.commit(now)

    def _write(self, batches: list[list[MetadataRecord]]) -> tuple[int, int]:
        """Replay, then append each batch; returns (first offset, last offset)."""
        assert self.claimed_epoch is not None
        first = self.raft.log.end_offset
        last = first - 1
        for batch in batches:
            records = tuple(batch)  # the batch's object in the log: shapes are shared
            base = self.raft.log.end_offset
            # Inside a transaction, as on a standby: checked now, applied at its End
            # (one delta for all its batches), or when something reads the state.
            self._replay(records, base, self.claimed_epoch, defer=self.defer_transactions)
            try:
                last = self.raft.append(records, self.claimed_epoch, self.clock())
            except NotLeaderError:
                self._renounce()
                raise not_controller(self.raft.leader_id) from None
            self.offsets.handle_schedule_append(
                last, RevertPoint(self._state, self.offsets.transaction_start_offset))
            others = outside_runs(records)  # no election check reads a PartitionRecord
            if may_trigger(others):
                image = self.image
                for check in self.election_checks:
                    check.after_write(image, others, self.clock())
        return first, last

    def _write_own(self, batches: list[list[MetadataRecord]]) -> None:
        """Write what the controller itself decided; it waits in the purgatory without an
        operation, so that a read submitted after it waits for it (as in Kafka, where
        activation, NoOps and elections are write events like any other)."""
        _, last = self._write(batches)
        self.purgatory.add(last)
        self._complete_up_to(self.offsets.last_stable_offset)

    def _complete_up_to(self, offset: int) -> None:
        self.purgatory.complete_up_to(offset, self.clock())

    # ------------------------------------------------------------------ replay
    def _replay(self, records: Sequence[MetadataRecord], base_offset: int, epoch: int,
                defer: bool = False) -> None:
        """Apply records at their offsets; markers drive the transaction state.

        ``defer``: the records of an open transaction are checked at once but applied only
        at its End or when the state is read (see :mod:`controller.deferred`); an Abort
        then drops them unapplied.
        """
        offsets = self.offsets
        pending: State = self._state
        check: ReplayCheck | None = None
        start = 0
        delta: MetadataDelta | None = None
        target: MetadataDelta
        if defer and offsets.transaction_start_offset != -1:
            check = target = pending.check if isinstance(pending, DeferredImage) else \
                ReplayCheck(pending)
        else:
            delta = target = MetadataDelta(image_of(pending))
        index = 0
        for marker in (*shape_of(records).markers, len(records)):
            if index < marker:  # the records up to the next marker
                failed, error = target.replay_many(records, index, marker)
                if error is not None:
                    raise ControllerFault(f"Unable to apply {records[failed].TYPE_NAME}: "
                                          f"{error}", base_offset + failed)
            index = marker + 1
            if marker == len(records):
                break
            kind = type(records[marker])
            offset = base_offset + marker
            if kind is BeginTransactionRecord:
                offsets.replay_begin(offset)
                assert delta is not None  # no transaction was open
                image = delta.apply(offset - 1, epoch)
                offsets.add_point(offset - 1, RevertPoint(image, -1))
                if defer:
                    pending, start, delta = image, index, None
                    check = target = ReplayCheck(image)
                    continue
            elif kind is EndTransactionRecord:
                offsets.replay_end(offset)
                if check is None:
                    continue
                image = DeferredImage(pending, records, start, marker, base_offset + start,
                                      offset - 1, epoch, check).image()
                check = None
            else:
                image = image_of(offsets.replay_abort(offset).state)
                check = None
            delta = target = MetadataDelta(image)
        last = base_offset + len(records) - 1
        if check is not None:
            self._state = DeferredImage(pending, records, start, len(records),
                                        base_offset + start, last, epoch, check)
        else:
            assert delta is not None
            self._state = delta.apply(last, epoch)

    # ------------------------------------------------------------------ raft listener
    def handle_commit(self, batches: Sequence[Batch], high_watermark: int) -> None:
        """Replay what others wrote, advance the committed offset and the LSO."""
        if self.fault is not None:
            return
        moved = False
        try:
            for batch in batches:
                if batch.is_control:
                    continue
                self.replayed_any = True
                if self.claimed_epoch is None or batch.epoch != self.claimed_epoch:
                    self._replay(batch.records, batch.base_offset, batch.epoch,
                                 defer=self.defer_transactions)
                    self.offsets.add_point(batch.last_offset, RevertPoint(
                        self._state, self.offsets.transaction_start_offset))
                moved |= self.offsets.handle_commit_batch(batch.last_offset, batch.epoch)
                self.records_since_snapshot += len(batch.records)
        except ControllerFault as fault:
            self._fatal(fault)
            return
        if moved:
            self._complete_up_to(self.offsets.last_stable_offset)
            self._maybe_snapshot()
            for publisher in self.publishers:
                publisher.on_publish()

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        """Replace the state by the snapshot's; an open transaction is dropped."""
        if self.fault is not None:
            return
        last = snapshot.snapshot_id.last_contained_offset
        if self.active:
            self._fatal(ControllerFault(
                f"Asked to load snapshot {snapshot.snapshot_id}, but we are the active "
                f"controller at epoch {self.claimed_epoch}"))
            return
        self.offsets.begin_load_snapshot()
        try:
            delta = MetadataDelta(MetadataImage.EMPTY)
            for record in snapshot.records:
                if is_marker(record):  # raises: markers cannot be in a snapshot
                    self.offsets.replay_marker_in_snapshot(type(record).__name__, last)
                delta.replay(record)
        except ReplayError as exc:
            self._fatal(ControllerFault(f"Unable to apply a record from snapshot: {exc}", last))
            return
        except ControllerFault as fault:
            self._fatal(fault)
            return
        self.image = delta.apply(last, snapshot.snapshot_id.epoch)
        self.offsets.end_load_snapshot(last, snapshot.snapshot_id.epoch, self.image)
        # A snapshot of no records replays none: the log still counts as empty.
        self.replayed_any = self.replayed_any or bool(snapshot.records)
        self.records_since_snapshot = 0
        for publisher in self.publishers:
            publisher.on_publish()

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        """Claim leadership once it is ours; renounce when it is not any more."""
        if self.fault is not None:
            return
        mine = leader.leader_id == self.node_id
        if self.claimed_epoch is not None and (not mine or leader.epoch != self.claimed_epoch):
            self._renounce()
        if mine and self.claimed_epoch is None:
            self._claim(leader.epoch)
        for publisher in self.publishers:
            publisher.on_leader_change(leader.leader_id)

    # ------------------------------------------------------------------ leadership
    def _set_claimed_epoch(self, epoch: int | None) -> None:
        self.claimed_epoch = epoch
        if self.activation_listener is not None:
            self.activation_listener()

    def _claim(self, epoch: int) -> None:
        self._set_claimed_epoch(epoch)
        self.offsets.activate(self.raft.log.end_offset)
        try:
            activation = activation_records(
                log_empty=not self.replayed_any,
                transaction_start=self.offsets.transaction_start_offset,
                metadata_version=self.metadata_version,
                bootstrap=self.bootstrap)
        except ControllerFault as fault:
            self._fatal(fault)
            return
        records = activation.records
        if ControllerMutation.FORGET_FAILOVER_ABORT in self.mutations and records and \
                isinstance(records[0], AbortTransactionRecord):
            records = []
        if records:
            batches = [records] if activation.atomic else split(
                records, self.config.max_records_per_batch)
            try:
                self._write_own(batches)
            except ApiError:
                return
            except ControllerFault as fault:
                self._fatal(fault)
                return
        self.activations.append((epoch, records))
        if self.config.noop_interval_ms:
            self.next_noop_at = self.clock() + self.config.noop_interval_ms
        for check in self.election_checks:
            check.activate(self.image, self.clock())

    def _renounce(self) -> None:
        now = self.clock()
        if self.claimed_epoch is None:
            return
        self._set_claimed_epoch(None)
        self.next_noop_at = None
        for check in self.election_checks:
            check.deactivate()
        self.purgatory.fail_all(not_controller(None), now)  # Kafka's renounce names no one
        target = self.offsets.last_committed_offset
        if ControllerMutation.REVERT_TO_LSO in self.mutations:
            target = self.offsets.last_stable_offset
        self.image = self.offsets.deactivate(target).image

    def _fatal(self, fault: ControllerFault) -> None:
        self.fault = fault
        now = self.clock()
        self.purgatory.fail_all(ApiError("UNKNOWN_SERVER_ERROR", str(fault)), now)
        self._set_claimed_epoch(None)
        if self.fatal_handler is not None:
            self.fatal_handler(fault)

    # ------------------------------------------------------------------ timers
    def next_deadline(self) -> int | None:
        """When the next periodic NoOpRecord or election check is due."""
        if self.claimed_epoch is None or self.fault is not None:  # not active
            return None
        deadline = self.next_noop_at
        for check in self.election_checks:
            due = check.due_at
            if due is not None and (deadline is None or due < deadline):
                deadline = due
        return deadline

    def poll(self, now: int) -> None:
        """Write the periodic NoOpRecord, and each election check's elections, when they
        are due (each its own write, as Kafka's periodic tasks are)."""
        if not self.active:
            return
        if self.next_noop_at is not None and now >= self.next_noop_at:
            self.next_noop_at = now + self.config.noop_interval_ms
            if self.image.metadata_version >= NOOP_RECORDS:
                self._write_periodic(list(NoOp().generate(self._context()).records))
        for check in self.election_checks:
            elections = check.take_due(self.image, now) if self.active else None
            if elections:  # a non-atomic result in Kafka: split, no markers
                self._write_periodic(elections)

    def _write_periodic(self, records: Sequence[MetadataRecord]) -> None:
        """Write what the controller itself decided (no operation waits for it)."""
        try:
            self._write_own(split(list(records), self.config.max_records_per_batch))
        except ApiError:
            pass  # lost leadership: the renounce handles it
        except ControllerFault as fault:
            self._fatal(fault)

    def close(self, now: int) -> None:
        """The process stops: pending operations fail (their client loses the connection)."""
        error = ApiError("NOT_CONTROLLER", f"controller {self.node_id} stopped before the "
                                           f"operation completed")
        self.purgatory.fail_all(error, now)
        self._set_claimed_epoch(None)

    def _context(self) -> OperationContext:
        return OperationContext(self.image, self.rng, self.raft.log.end_offset, self.node_id,
                                self.config.max_records_per_operation,
                                frozenset(self.raft.voters), self.cluster_id)

    def _maybe_snapshot(self) -> None:
        every = self.config.snapshot_every_records
        offsets = self.offsets
        if not every or self.records_since_snapshot < every:
            return
        if offsets.last_stable_offset != offsets.last_committed_offset:
            return  # a transaction is open: snapshots only hold whole, committed state
        end = offsets.last_stable_offset + 1
        if end <= self.raft.log.start_offset:
            return
        self.raft.create_snapshot(end, image_to_records(self.committed_image()), self.clock())
        self.records_since_snapshot = 0

    # ------------------------------------------------------------------ reads
    def describe(self) -> dict[str, Any]:
        """Offsets and transaction state, for status displays."""
        offsets = self.offsets
        return {
            "active": self.active,
            "epoch": self.claimed_epoch,
            "lastCommittedOffset": offsets.last_committed_offset,
            "lastStableOffset": offsets.last_stable_offset,
            "transactionStartOffset": offsets.transaction_start_offset,
            "pending": len(self.purgatory),
            "fault": str(self.fault) if self.fault else None,
        }
