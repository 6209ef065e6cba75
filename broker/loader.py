"""MetadataLoader: a broker's raft listener that turns committed batches into images.

Each ``handle_commit`` loads every batch through the MetadataBatchLoader, then
flushes once (so an image is published at most once per commit, plus the
emissions before a Begin). A snapshot replaces the image and drops any
transaction in flight. Publishers (the shell, the invariant checkers, a
broker's components) subscribe to the images; nothing reaches them while the
loader is still catching up to the high watermark it knows (Kafka's
``stillNeedToCatchUp``): a broker that starts while a long transaction is open
at the log tail publishes only once that transaction ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from broker.batch_loader import LoaderFault, Manifest, MetadataBatchLoader
from broker.mutations import BrokerMutation
from metadata.delta import MetadataDelta, ReplayError
from metadata.image import MetadataImage
from metadata.schema import is_marker
from raft import Batch, LeaderAndEpoch, RaftNode, Snapshot

Publisher = Callable[[MetadataImage, Manifest], None]
"""Receives every published image, in order."""


class MetadataLoader:
    """The metadata pipeline of one broker; see the module docs."""

    def __init__(self, node_id: int, raft: RaftNode | None = None,
                 mutations: frozenset[BrokerMutation] = frozenset()) -> None:
        self.node_id = node_id
        self.image = MetadataImage.EMPTY
        self.published: MetadataImage | None = None
        self.publishers: list[Publisher] = []
        self.faults: list[LoaderFault] = []
        self.high_watermark: int | None = None
        self.catching_up = True
        self.leader = LeaderAndEpoch(None, 0)
        self.batch_loader = MetadataBatchLoader(self.image, self._on_image, self.faults.append,
                                                mutations)
        if raft is not None:
            raft.register_listener(self)

    @property
    def published_offset(self) -> int:
        """Offset of the last published image (-1: none yet)."""
        return self.published.offset if self.published is not None else -1

    def subscribe(self, publisher: Publisher) -> None:
        """Receive every image published from now on."""
        self.publishers.append(publisher)

    # ------------------------------------------------------------------ raft listener
    def handle_commit(self, batches: Sequence[Batch], high_watermark: int) -> None:
        """Load the batches, then flush once."""
        self.high_watermark = high_watermark
        for batch in batches:
            self.batch_loader.load_batch(batch)
        self.batch_loader.maybe_flush_batches()

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        """Replace the image by the snapshot's; a transaction in flight is dropped."""
        last = snapshot.snapshot_id.last_contained_offset
        delta = MetadataDelta(MetadataImage.EMPTY)
        for record in snapshot.records:
            if is_marker(record):
                self.faults.append(LoaderFault(last, f"Unknown metadata record type "
                                                     f"{record.TYPE_NAME} in a snapshot"))
                continue
            try:
                delta.replay(record)
            except ReplayError as exc:
                self.faults.append(LoaderFault(last, f"Error loading snapshot record: {exc}"))
        image = delta.apply(last, snapshot.snapshot_id.epoch)
        self.batch_loader.reset_to_image(image)
        self._on_image(image, Manifest(last, image.epoch, True, len(snapshot.records),
                                       from_snapshot=True))

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        """Remember the leader (publishers may ask)."""
        self.leader = leader

    # ------------------------------------------------------------------ publication
    def _on_image(self, image: MetadataImage, manifest: Manifest) -> None:
        self.image = image
        if self.catching_up:
            hw = self.high_watermark
            if hw is None or hw - 1 > image.offset:
                return
            self.catching_up = False
        self.published = image
        for publisher in self.publishers:
            publisher(image, manifest)

    # ------------------------------------------------------------------ app timers
    def next_deadline(self) -> int | None:
        """The loader has no timers."""
        return None

    def poll(self, now: int) -> None:
        """Nothing to do."""

    def close(self, now: int) -> None:
        """Nothing waits on the loader."""
