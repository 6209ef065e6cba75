"""Transaction invariants, checked online after every event.

Against the reference replay of the committed log (``reference.py``):

- TxnWellFormed: no nested Begin; End/Abort only inside a transaction (KIP-868
  "single transaction at a time"; Kafka OffsetControlManager.replay).
- FailoverAbortsInflight: a new leader's first batch, when the committed log
  ends inside a transaction, is one lone AbortTransactionRecord (KIP-868
  "Controller Failover"; Kafka ActivationRecordsGenerator).
- TxnAtomicVisibility: no published image on any node, and no controller's
  LSO, lies strictly inside a transaction (KIP-868 "Record Visibility").
- AbortedTxnInvisible: after an Abort, no image contains the aborted records
  (KIP-868; Kafka MetadataBatchLoader, edge case (a)).
- CommittedTxnDurable: once an End commits, every later image and controller
  state includes the transaction (KIP-868; Raft durability).
- RollbackExact: after an Abort a controller's state equals its state at
  Begin-1 (KIP-868 "reset its in-memory state to the point before").
- ImagesAgree: every published image equals the reference state at its offset,
  so two images at the same offset are equal on every node, and a broker's
  image equals the controllers' committed state there.
- ControllerMatchesLog: a controller's committed state equals the reference
  (a standby's open transaction, which it applies only at the End or when
  the state is read, when it applies it: see ``controller/deferred.py``).

Partial-visibility observations (an image inside a multi-batch operation)
are counted for every mode; in a transactional operation each one is also a
TxnAtomicVisibility violation.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import msgspec

from broker import Manifest, MetadataLoader
from controller import ControllerFault, QuorumController
from controller.handle import OperationHandle
from controller.offset_control import RevertPoint
from metadata.image import MetadataImage
from metadata.schema import AbortTransactionRecord
from raft import Batch
from sim.invariants.history import CommittedLog
from sim.invariants.reference import ReferenceReplay
from sim.world import InvariantViolation, Monitor, NodeSlot, Simulation

TRANSACTION_INVARIANTS: dict[str, str] = {
    "TxnWellFormed": "no nested Begin, End/Abort only inside a transaction (KIP-868; Kafka "
                     "OffsetControlManager.replay)",
    "TxnAtomicVisibility": "no published image and no controller LSO shows a strict, "
                           "non-empty part of a transaction (KIP-868 Record Visibility)",
    "AbortedTxnInvisible": "an aborted transaction's records never become visible (KIP-868; "
                           "Kafka MetadataBatchLoader edge case)",
    "FailoverAbortsInflight": "a new leader aborts an open transaction before writing "
                              "anything else (KIP-868 Controller Failover)",
    "CommittedTxnDurable": "a committed transaction stays in every later state (KIP-868)",
    "RollbackExact": "after an Abort the controller's state equals its state at Begin-1 "
                     "(KIP-868)",
    "ImagesAgree": "images at the same offset are equal on every node and equal the "
                   "controllers' committed state there",
    "ControllerMatchesLog": "a controller's committed state is what the committed log says",
}
"""Every transaction invariant with its source."""


class OperationSpan(msgspec.Struct, frozen=True):
    """Where a multi-batch operation was written: offsets and the writer's epoch."""

    first_offset: int
    last_offset: int
    epoch: int
    transactional: bool
    description: str


class Publication(msgspec.Struct, frozen=True):
    """One published image."""

    node_id: int
    image: MetadataImage
    manifest: Manifest
    at_ms: int


class TransactionInvariants(Monitor):
    """Checks the transaction invariants; counts partial-visibility observations."""

    def __init__(self, history: CommittedLog, disabled: frozenset[str] = frozenset()) -> None:
        self.history = history
        self.reference = ReferenceReplay(history)
        self.disabled = disabled
        self.spans: list[OperationSpan] = []
        self.partial_observations = 0
        self.partial_examples: list[str] = []
        self.publications = 0
        self._pending: list[Publication] = []
        self._controller_seen: dict[int, tuple[int, int, int, RevertPoint]] = {}
        self.on_publish: list[Publication] = []
        self.after_replay: list[Monitor] = []
        """Monitors that read only the reference replay: checked after this one's checks,
        at the events that replayed something (most events replay nothing)."""

    # ------------------------------------------------------------------ wiring
    def on_started(self, sim: Simulation, slot: NodeSlot) -> None:
        """Subscribe to the images a broker's loader publishes."""
        for app in slot.apps:
            if isinstance(app, MetadataLoader):
                node_id = slot.node_id

                def record(image: MetadataImage, manifest: Manifest, node: int = node_id) -> None:
                    self._pending.append(Publication(node, image, manifest, sim.now))

                app.subscribe(record)
        self._controller_seen.pop(slot.node_id, None)

    def track(self, handle: OperationHandle, epoch: int) -> None:
        """Remember a multi-batch operation's span (for partial-visibility counting)."""
        if handle.batch_count > 1:
            span = OperationSpan(handle.first_offset, handle.last_offset, epoch,
                                 handle.transactional, handle.description)
            bisect.insort(self.spans, span, key=lambda s: (s.first_offset, s.last_offset))

    def _fail(self, name: str, message: str) -> None:
        if name not in self.disabled:
            raise InvariantViolation(name, message)

    # ------------------------------------------------------------------ checks
    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Advance the reference, then check publications and controllers (then the
        :attr:`after_replay` monitors, when the reference moved)."""
        start = self.reference.next_offset
        for name, message in self.reference.advance():
            self._fail(name, message)
        pending, self._pending = self._pending, []
        for publication in pending:
            self.publications += 1
            self._check_publication(publication)
            self.on_publish.append(publication)
        for slot in touched:
            for app in slot.apps:
                if isinstance(app, QuorumController):
                    self._check_controller(slot.node_id, app)
        if self.reference.next_offset != start:
            for monitor in self.after_replay:
                monitor.check(sim, touched)

    def _check_publication(self, pub: Publication) -> None:
        offset = pub.image.offset
        span = self._span_containing(offset)
        if span is not None:
            self.partial_observations += 1
            if len(self.partial_examples) < 20:
                self.partial_examples.append(
                    f"node {pub.node_id} published offset {offset} inside {span.description} "
                    f"(offsets {span.first_offset}-{span.last_offset}) at {pub.at_ms} ms")
            if span.transactional:
                self._fail("TxnAtomicVisibility",
                           f"node {pub.node_id} published an image at offset {offset}, inside "
                           f"the transaction of {span.description} ({span.first_offset}-"
                           f"{span.last_offset})")
        txn = self.reference.inside_transaction(offset)
        if txn is not None:
            self._fail("TxnAtomicVisibility",
                       f"node {pub.node_id} published an image at offset {offset}, inside the "
                       f"transaction begun at {txn.begin_offset} ({txn.name})")
        expected = self.reference.image_at(offset)
        if expected is not None and not pub.image.same_content(expected):
            self._fail(self._content_invariant(offset),
                       f"node {pub.node_id}'s image at offset {offset} differs from the "
                       f"committed log's state there")

    def _content_invariant(self, offset: int) -> str:
        boundary = self.reference.last_boundary_before(offset)
        return {"abort": "AbortedTxnInvisible", "end": "CommittedTxnDurable"}.get(
            boundary or "", "ImagesAgree")

    def _span_containing(self, offset: int) -> OperationSpan | None:
        """A multi-batch operation of which an image at ``offset`` shows a strict part."""
        i = bisect.bisect_right(self.spans, offset, key=lambda s: s.first_offset)
        for span in reversed(self.spans[:i]):
            end = self._committed_end(span)
            if end <= span.first_offset:
                continue  # nothing of it was committed
            whole = end > span.last_offset
            if span.transactional:
                if offset < min(end, span.last_offset):
                    return span
            elif offset < span.last_offset or not whole:
                return span  # a committed prefix without its tail stays partial for good
        return None

    def _committed_end(self, span: OperationSpan) -> int:
        """Where the committed run of the operation's own batches ends."""
        offset = span.first_offset
        while offset <= span.last_offset:
            batch = self.history.get(offset)
            if batch is None or batch.epoch != span.epoch:
                break
            offset = batch.end_offset
        return offset

    def _check_controller(self, node_id: int, controller: QuorumController) -> None:
        if controller.fault is not None:
            return  # stopped: the fault is reported by its fatal handler, the node exits
        offsets = controller.offsets
        try:
            state = controller.committed_state()
        except ControllerFault as fault:
            self._fail("ControllerMatchesLog",
                       f"controller {node_id} has no state at its committed offset "
                       f"{offsets.last_committed_offset}: {fault}")
            return
        last = self._controller_seen.get(node_id)
        if last is not None and last[3] is state and last[0] == offsets.last_committed_offset \
                and last[1] == offsets.last_stable_offset:
            return  # the same revert point (its state never changes) at the same offsets
        if not state.built:
            # A standby's open transaction, checked but not applied yet: its content is
            # compared when the controller applies it (at the End, or when it reads the
            # state). Applying it here would undo the deferral the check is watching.
            self._check_stable_offset(node_id, offsets.last_stable_offset)
            return
        seen = (offsets.last_committed_offset, offsets.last_stable_offset, state.image.digest,
                state)
        if last is not None and last[:3] == seen[:3]:
            self._controller_seen[node_id] = seen
            return
        self._controller_seen[node_id] = seen
        self._check_stable_offset(node_id, offsets.last_stable_offset)
        committed = offsets.last_committed_offset
        expected = self.reference.image_at(committed)
        if expected is None:
            return
        if not state.image.same_content(expected):
            batch = self._batch_ending_at(committed)
            rollback = batch is not None and any(isinstance(r, AbortTransactionRecord)
                                                 for r in batch.records)
            self._fail("RollbackExact" if rollback else "ControllerMatchesLog",
                       f"controller {node_id}'s state at committed offset {committed} differs "
                       f"from the committed log's")

    def _check_stable_offset(self, node_id: int, lso: int) -> None:
        txn = self.reference.inside_transaction(lso)
        if txn is not None:
            self._fail("TxnAtomicVisibility",
                       f"controller {node_id} exposes offset {lso} as stable, inside the "
                       f"transaction begun at {txn.begin_offset}")

    def _batch_ending_at(self, offset: int) -> Batch | None:
        batch = self.history.batch_containing(offset)
        return batch if batch is not None and batch.last_offset == offset else None
