"""DeferredImage: a controller's state inside an open transaction, applied only when read.

A standby controller checks each committed record of an open transaction at
once (:class:`~metadata.replay_check.ReplayCheck`: a record that cannot apply
stops the controller at the record's commit, as before) but applies the
records only when the transaction ends, or when something reads the state
(a revert point's image, the controller's ``image``). Until then the state is
a chain of DeferredImages, one per committed batch, each a reference to the
batch's records (the log holds them anyway) and the slice of them that
belongs to the transaction. An Abort drops the chain: O(batches) objects,
whatever the number of records, where an applied state would free a
PartitionRegistration and the persistent map's nodes per record.

The active controller does the same with the batches of a transaction it
writes: each is checked before it is appended, and the End applies them all
in one delta (a 6-batch CreateTopics made six images, one per batch; the
revert points inside the transaction stay deferred unless a revert reads
one).

This is the shape of Kafka's broker loader, which buffers an open
transaction and publishes it at the End; Kafka's standby controller replays
into timeline structures instead and walks them back on an Abort.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.errors import ControllerFault
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.replay_check import ReplayCheck
from metadata.schema import MetadataRecord


class DeferredImage:
    """``base`` with ``records[start:stop]`` (at offsets from ``first_offset``) applied.

    ``check`` is the transaction's ReplayCheck, shared by the chain's links
    and already past these records; ``offset``/``epoch`` are the provenance of
    the image :meth:`image` builds. The built image is kept, and the link
    then forgets its base and records.
    """

    __slots__ = ("_base", "_built", "_records", "_start", "_stop", "check", "epoch",
                 "first_offset", "offset")

    def __init__(self, base: MetadataImage | DeferredImage, records: Sequence[MetadataRecord],
                 start: int, stop: int, first_offset: int, offset: int, epoch: int,
                 check: ReplayCheck) -> None:
        self._base: MetadataImage | DeferredImage | None = base
        self._records = records
        self._start = start
        self._stop = stop
        self.first_offset = first_offset
        self.offset = offset
        self.epoch = epoch
        self.check = check
        self._built: MetadataImage | None = None

    @property
    def built(self) -> bool:
        """Whether :meth:`image` has built the state (reading it again applies nothing)."""
        return self._built is not None

    @property
    def metadata_version(self) -> int:
        """metadata.version in this state, without building it."""
        return self.check.metadata_version

    def image(self) -> MetadataImage:
        """The state as an image: every deferred record since the last built one, applied
        in one delta. Raises ControllerFault (naming the offset) if a record cannot apply,
        which the check before should have caught."""
        if self._built is not None:
            return self._built
        links: list[DeferredImage] = []
        node: MetadataImage | DeferredImage | None = self
        while isinstance(node, DeferredImage) and node._built is None:
            links.append(node)
            node = node._base
        base = node._built if isinstance(node, DeferredImage) else node
        assert base is not None
        delta = MetadataDelta(base)
        for link in reversed(links):
            records = link._records
            index, error = delta.replay_many(records, link._start, link._stop)
            if error is not None:
                raise ControllerFault(f"Unable to apply {records[index].TYPE_NAME}: {error}",
                                      link.first_offset + index - link._start)
        self._built = delta.apply(self.offset, self.epoch)
        self._base = None
        self._records = ()
        return self._built


State = MetadataImage | DeferredImage
"""A controller state: an image, or one whose open transaction is not applied yet."""


def image_of(state: State) -> MetadataImage:
    """``state`` as an image (built if it is deferred)."""
    return state if isinstance(state, MetadataImage) else state.image()
