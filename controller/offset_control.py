"""Kafka's OffsetControlManager: committed offset, open transaction, LSO, revert points.

A revert point is the controller's whole state at an offset: the image and the
open transaction's start (-1: none). Points live in an OffsetMap keyed by
offset (Kafka's SnapshotRegistry): one at every batch end, one at Begin-1.
Reverting to an offset takes the newest point at or before it. As the LSO
advances, every point before the newest one at or below it is deleted (Kafka's
deleteSnapshotsUpTo), and so is every committed point of an open transaction
but the newest: what stays is exactly what a revert can reach, the state at
the LSO (Begin-1 of a transaction still open in the committed log, else the
last committed offset), the state at the last committed offset and the
uncommitted points above it.

The last stable offset (LSO) is what reads and acknowledgements may expose:
the last committed offset, or Begin-1 while the committed log has a
transaction open. It moves only when a batch commits and never decreases.
Unlike Kafka, which computes it from the latest in-memory transaction state,
kraftsim takes the transaction state *as of the committed offset*, so an End
that is replayed but not yet committed never exposes a partial transaction.
"""

from __future__ import annotations

from controller.deferred import State, image_of
from controller.errors import ControllerFault
from metadata.image import MetadataImage
from metadata.offset_map import OffsetMap


class RevertPoint:
    """The controller state after an offset, and the open transaction's start there.

    ``state`` may be a :class:`~controller.deferred.DeferredImage` (a standby
    inside an open transaction); ``image`` builds it.
    """

    __slots__ = ("state", "transaction_start")

    def __init__(self, state: State, transaction_start: int) -> None:
        self.state = state
        self.transaction_start = transaction_start

    @property
    def image(self) -> MetadataImage:
        """The state as an image."""
        return image_of(self.state)

    @property
    def built(self) -> bool:
        """Whether the state is an image already (a deferred one built): reading
        :attr:`image` then applies nothing."""
        return isinstance(self.state, MetadataImage) or self.state.built

    def __repr__(self) -> str:
        return (f"RevertPoint(offset={self.state.offset}, "
                f"transaction_start={self.transaction_start})")


class OffsetControlManager:
    """Offsets, the open transaction and the revert points of one controller."""

    def __init__(self) -> None:
        self.last_committed_offset = -1
        self.last_committed_epoch = -1
        self.transaction_start_offset = -1
        self.last_stable_offset = -1
        self.next_write_offset = -1
        self.loading_snapshot = False
        empty = RevertPoint(MetadataImage.EMPTY, -1)
        self.registry: OffsetMap[RevertPoint] = OffsetMap([(-1, empty)])

    @property
    def active(self) -> bool:
        """True while this controller is the active one (it has a next write offset)."""
        return self.next_write_offset != -1

    def point_at(self, offset: int) -> RevertPoint:
        """The newest revert point at or before ``offset``."""
        point: RevertPoint | None = self.registry.get(offset)  # one at ``offset`` (common)
        if point is not None:
            return point
        index = self.registry.bisect_right(offset) - 1
        if index < 0:
            raise ControllerFault(f"no revert point at or before offset {offset}")
        found: RevertPoint = self.registry.peekitem(index)[1]
        return found

    def add_point(self, offset: int, point: RevertPoint) -> None:
        """Remember the state after ``offset``."""
        self.registry[offset] = point

    def drop_points_after(self, offset: int) -> None:
        """Forget every point after ``offset`` (their records were never committed)."""
        while self.registry and self.registry.peekitem(-1)[0] > offset:
            self.registry.popitem(-1)

    # -- transitions ------------------------------------------------------------
    def activate(self, next_write_offset: int) -> None:
        """Become active; appends start at ``next_write_offset``."""
        if self.active:
            raise ControllerFault("the controller is already active")
        if next_write_offset < 0:
            raise ControllerFault(f"cannot activate at negative offset {next_write_offset}")
        self.next_write_offset = next_write_offset

    def deactivate(self, revert_to: int) -> RevertPoint:
        """Stop being active; returns the state to go back to (the point at ``revert_to``)."""
        if not self.active:
            raise ControllerFault("the controller is not active")
        self.next_write_offset = -1
        point = self.point_at(revert_to)
        self.drop_points_after(revert_to)
        self.transaction_start_offset = point.transaction_start
        return point

    def handle_schedule_append(self, last_offset: int, point: RevertPoint) -> None:
        """An active append ends at ``last_offset``; keep a revert point there."""
        self.next_write_offset = last_offset + 1
        self.add_point(last_offset, point)

    def handle_commit_batch(self, last_offset: int, epoch: int) -> bool:
        """A data batch ending at ``last_offset`` committed; returns True if the LSO moved."""
        self.last_committed_offset = last_offset
        self.last_committed_epoch = epoch
        committed_txn = self.point_at(last_offset).transaction_start
        lso = min(committed_txn - 1, last_offset) if committed_txn != -1 else last_offset
        if lso <= self.last_stable_offset:
            self._prune_committed_interior()
            return False
        self.last_stable_offset = lso
        self._prune_below(lso)
        self._prune_committed_interior()
        return True

    def _prune_below(self, lso: int) -> None:
        """Drop the points no revert can reach: all before the newest one at or below the LSO.

        Each point is dropped once, so the cost is O(log n) per batch, amortised.
        """
        registry = self.registry
        while len(registry) > 1 and registry.peekitem(1)[0] <= lso:
            registry.popitem(0)

    def _prune_committed_interior(self) -> None:
        """Drop the points strictly between the one at the LSO and the newest committed one.

        Inside a transaction open in the committed log, a revert goes to Begin-1
        (an Abort: the point at the LSO) or to the last committed offset (losing
        leadership; the committed state); an earlier committed batch of the
        transaction is never reverted to again. Dropping its point as the next
        batch commits frees its image then, batch by batch, rather than all of
        them at the Abort (O(1) amortised per batch).
        """
        registry = self.registry
        low = registry.bisect_right(self.last_stable_offset) - 1
        high = registry.bisect_right(self.last_committed_offset) - 1
        for _ in range(high - low - 1):
            registry.popitem(low + 1)

    # -- markers ------------------------------------------------------------------
    def replay_begin(self, offset: int) -> None:
        """A BeginTransactionRecord at ``offset``."""
        self._not_in_snapshot("BeginTransactionRecord", offset)
        if self.transaction_start_offset != -1:
            raise ControllerFault(
                f"Can't replay a BeginTransactionRecord at {offset} because the transaction "
                f"at {self.transaction_start_offset} was never closed", offset)
        self.transaction_start_offset = offset

    def replay_end(self, offset: int) -> None:
        """An EndTransactionRecord at ``offset``: the transaction closes, nothing reverts."""
        self._closing("EndTransactionRecord", offset)
        self.transaction_start_offset = -1

    def replay_abort(self, offset: int) -> RevertPoint:
        """An AbortTransactionRecord: returns the state at Begin-1 to revert to."""
        self._closing("AbortTransactionRecord", offset)
        point = self.point_at(self.transaction_start_offset - 1)
        self.transaction_start_offset = -1
        return point

    def _closing(self, name: str, offset: int) -> None:
        self._not_in_snapshot(name, offset)
        if self.transaction_start_offset == -1:
            raise ControllerFault(
                f"Can't replay an {name} at {offset} because there is no open transaction",
                offset)

    def _not_in_snapshot(self, name: str, offset: int) -> None:
        if self.loading_snapshot:
            raise ControllerFault(f"{name} cannot appear within a snapshot", offset)

    def replay_marker_in_snapshot(self, name: str, offset: int) -> None:
        """A transaction marker (``name``: its record type) read from a snapshot: raises."""
        if not self.loading_snapshot:
            raise ControllerFault(f"{name} read from a snapshot while none is being loaded",
                                  offset)
        self._not_in_snapshot(name, offset)

    # -- snapshots ----------------------------------------------------------------
    def begin_load_snapshot(self) -> None:
        """Loading a snapshot drops every offset and any open transaction."""
        if self.loading_snapshot:
            raise ControllerFault("a snapshot is already being loaded")
        self.loading_snapshot = True
        self.registry.clear()
        self.last_committed_offset = self.last_committed_epoch = -1
        self.transaction_start_offset = self.last_stable_offset = -1

    def end_load_snapshot(self, last_contained_offset: int, epoch: int,
                          image: MetadataImage) -> None:
        """The snapshot is loaded: committed = LSO = its last contained offset.

        (Kafka sets them to the snapshot's exclusive end offset, one too far.)
        Raises ControllerFault when no snapshot is being loaded.
        """
        if not self.loading_snapshot:
            raise ControllerFault("cannot end a snapshot load: no snapshot is being loaded")
        self.loading_snapshot = False
        self.last_committed_offset = self.last_stable_offset = last_contained_offset
        self.last_committed_epoch = epoch
        self.registry[last_contained_offset] = RevertPoint(image, -1)
