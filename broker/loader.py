"""MetadataLoader: a broker's raft listener that turns committed batches into images.

Each ``handle_commit`` loads every batch through the MetadataBatchLoader, then
flushes once (so an image is published at most once per commit, plus the
emissions before a Begin). A snapshot replaces the image and drops any
transaction in flight. Publishers (the shell, the invariant checkers, a
broker's components) subscribe to the images; nothing reaches them while the
loader is still catching up to the high watermark it knows (Kafka's
``stillNeedToCatchUp``): a broker that starts while a long transaction is open
at the log tail publishes only once that transaction ends. The check is made
again whenever the loader learns a higher high watermark, even with nothing
new to load: a broker that caught up from a snapshot at the log end publishes
the snapshot's image as soon as it knows the high watermark.
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

LeaderWatcher = Callable[[LeaderAndEpoch], None]
"""Receives every change of the controller leader the broker's raft client knows."""


class MetadataLoader:
    """The metadata pipeline of one broker; see the module docs."""

    def __init__(self, node_id: int, raft: RaftNode | None = None,
                 mutations: frozenset[BrokerMutation] = frozenset()) -> None:
        self.node_id = node_id
        self.image = MetadataImage.EMPTY
        self.published: MetadataImage | None = None
        self.manifest: Manifest | None = None
        """Where the last image the batch loader completed comes from (None: no image yet)."""
        self.published_manifest: Manifest | None = None
        """The manifest of :attr:`published`."""
        self.publishers: list[Publisher] = []
        self.leader_watchers: list[LeaderWatcher] = []
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
        """Receive the current image at once (if one was published), then every later one.

        As Kafka's loader hands a newly installed publisher the whole current image,
        a publisher that subscribes late starts from the present, not from nothing.
        Raises ValueError when ``publisher`` is already subscribed (as Kafka's loader
        refuses to install a publisher twice): it would receive every image twice.
        """
        if publisher in self.publishers:
            raise ValueError(f"publisher {publisher!r} is already subscribed")
        self.publishers.append(publisher)
        if self.published is not None and self.published_manifest is not None:
            publisher(self.published, self.published_manifest)

    # ------------------------------------------------------------------ raft listener
    def handle_commit(self, batches: Sequence[Batch], high_watermark: int) -> None:
        """Load the batches, then flush once."""
        self.high_watermark = high_watermark
        for batch in batches:
            self.batch_loader.load_batch(batch)
        self.batch_loader.maybe_flush_batches()
        self._maybe_finish_catching_up()

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

    def watch_leader(self, watcher: LeaderWatcher) -> None:
        """Call ``watcher`` with every later leader change (the broker's channel to the
        controller: requests in flight to a controller that is no longer the leader are
        sent again to the new one, as Kafka's NodeToControllerChannelManager does)."""
        self.leader_watchers.append(watcher)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        """Remember the leader (publishers may ask) and tell the leader watchers."""
        self.leader = leader
        for watcher in self.leader_watchers:
            watcher(leader)

    # ------------------------------------------------------------------ publication
    def _on_image(self, image: MetadataImage, manifest: Manifest) -> None:
        self.image = image
        self.manifest = manifest
        if self.catching_up:
            if not self._caught_up(image):
                return
            self.catching_up = False
        self._publish(image, manifest)

    def _caught_up(self, image: MetadataImage) -> bool:
        hw = self.high_watermark
        return hw is not None and hw - 1 <= image.offset

    def _maybe_finish_catching_up(self) -> None:
        """Publish the image already loaded once the high watermark shows it is current."""
        manifest = self.manifest
        if not self.catching_up or manifest is None or not self._caught_up(self.image):
            return
        self.catching_up = False
        self._publish(self.image, manifest)

    def _publish(self, image: MetadataImage, manifest: Manifest) -> None:
        self.published = image
        self.published_manifest = manifest
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
