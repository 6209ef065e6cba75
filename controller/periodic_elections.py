"""When the active controller runs a periodic election check (Kafka's
ImbalanceSchedule, shared by its maybeBalancePartitionLeaders and
maybeElectUncleanLeaders tasks).

A check is scheduled an interval after something made it worth running (a
write, or becoming active with work to do). It elects at most
:data:`MAX_ELECTIONS_PER_IMBALANCE` leaders; when it stopped there, the next
check comes :data:`IMMEDIATE_MS` later, else an interval later while work
remains. An interval of 0 turns the check off. What a check looks for and what
it writes are the subclass's (:mod:`controller.leader_balance`,
:mod:`controller.unclean_elections`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from metadata.image import MetadataImage
from metadata.schema import MetadataRecord, PartitionChangeRecord

MAX_ELECTIONS_PER_IMBALANCE = 1000
"""Kafka's maxElectionsPerImbalance: elections in one check."""
IMMEDIATE_MS = 10
"""The delay of the next check when the last one stopped at the most elections."""


def may_trigger(records: Iterable[MetadataRecord]) -> bool:
    """Whether any of ``records`` could make a check worth running: only a
    PartitionChangeRecord moves a leader off its preferred replica or leaves a partition
    leaderless (a subclass's :meth:`PeriodicElections.triggered_by` is False otherwise,
    whatever the image)."""
    return any(type(record) is PartitionChangeRecord for record in records)


class PeriodicElections(ABC):
    """When the active controller's next check is due (``due_at``; None: not scheduled)."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_ms = interval_ms
        self.due_at: int | None = None
        self._deferred = True  # the next check waits the interval, not IMMEDIATE_MS

    # ------------------------------------------------------------------ what subclasses say
    @abstractmethod
    def has_work(self, image: MetadataImage) -> bool:
        """Whether a check of ``image`` could elect anything (a scan of the image)."""

    @abstractmethod
    def triggered_by(self, image: MetadataImage, records: Iterable[MetadataRecord]) -> bool:
        """Whether ``records`` (now replayed into ``image``) made a check worth running;
        False when :func:`may_trigger` is."""

    @abstractmethod
    def elections(self, image: MetadataImage) -> tuple[list[PartitionChangeRecord], bool]:
        """One check's records (at most :data:`MAX_ELECTIONS_PER_IMBALANCE`), and whether
        work remains after them."""

    # ------------------------------------------------------------------ scheduling
    def activate(self, image: MetadataImage, now: int) -> None:
        """The controller became active: check later if there is work now."""
        self.due_at, self._deferred = None, True
        if self.interval_ms and self.has_work(image):
            self._schedule(now)

    def deactivate(self) -> None:
        """The controller is not active any more."""
        self.due_at, self._deferred = None, True

    def after_write(self, image: MetadataImage, records: Iterable[MetadataRecord],
                    now: int) -> None:
        """A write was replayed into ``image``: schedule a check if it made one worth
        running and none is scheduled."""
        if self.interval_ms and self.due_at is None and self.triggered_by(image, records):
            self._schedule(now)

    def take_due(self, image: MetadataImage, now: int) -> list[PartitionChangeRecord] | None:
        """The check's records when it is due (None otherwise); the next check is
        scheduled as the result says (before the records are written)."""
        if self.due_at is None or now < self.due_at:
            return None
        self.due_at = None
        records, remaining = self.elections(image)
        self._deferred = len(records) < MAX_ELECTIONS_PER_IMBALANCE
        if remaining:
            self._schedule(now)
        return records

    def _schedule(self, now: int) -> None:
        self.due_at = now + (self.interval_ms if self._deferred else IMMEDIATE_MS)
