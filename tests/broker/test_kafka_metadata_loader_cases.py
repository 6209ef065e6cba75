"""MetadataLoader, following the cases of Kafka's ``MetadataLoaderTest``.

Kafka's loader reads the high watermark through an accessor; kraftsim's learns
it from each ``handle_commit`` (its raft calls it with no batches when only the
high watermark moved), so a case that sets the high watermark here commits
nothing with it. Kafka's publishers get the delta too; kraftsim's get the image
and its manifest.

Already covered in ``test_loader.py`` / ``test_loader_catch_up.py``:
testCreateAndClose (a new loader has published nothing), testSnapshotDuringTransaction.
Not ported: testInstallPublishers and testRemovePublisher (kraftsim's publishers live
as long as their loader, which has no threads to close and no removal), and the
case of two publishers of one name in testPublisherCannotBeInstalledMoreThanOnce
(kraftsim's publishers are callables without names).
"""

from __future__ import annotations

import pytest

from broker import Manifest, MetadataImage, MetadataLoader
from metadata.delta import BROKER_RESOURCE
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, MINIMUM_KRAFT
from raft import Batch, LeaderChangeMessage, Snapshot, SnapshotId

FOO = "Uum7sfhHQP-obSvfywmNUA"
BAR = "VcL2Mw-cT4aL6XV9VujzoQ"
TXN_FOO = "dMCqhcK4T5miGH5wEX7NsQ"


def metadata_version(name: str) -> FeatureLevelRecord:
    return FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS[name])


class Published:
    """A loader and everything it publishes."""

    def __init__(self, high_watermark: int | None = None, subscribe: bool = True) -> None:
        self.loader = MetadataLoader(1)
        self.images: list[tuple[MetadataImage, Manifest]] = []
        if subscribe:
            self.loader.subscribe(self.publish)
        if high_watermark is not None:
            self.set_high_watermark(high_watermark)

    def publish(self, image: MetadataImage, manifest: Manifest) -> None:
        self.images.append((image, manifest))

    def set_high_watermark(self, high_watermark: int) -> None:
        self.loader.handle_commit((), high_watermark)

    def snapshot(self, last_offset: int, *records: MetadataRecord, epoch: int = 100) -> None:
        self.loader.handle_load_snapshot(Snapshot(SnapshotId(last_offset + 1, epoch), records))

    def commit(self, base_offset: int, *records: MetadataRecord, epoch: int = 100) -> None:
        hw = self.loader.high_watermark or 0
        self.loader.handle_commit((Batch(base_offset, epoch, records),), hw)

    @property
    def image(self) -> MetadataImage:
        return self.images[-1][0]


def test_an_empty_snapshot_publishes_an_empty_image_at_its_offset() -> None:
    """testLoadEmptySnapshot."""
    p = Published(high_watermark=0)
    p.snapshot(200)
    assert p.loader.published_offset == 200
    p.snapshot(300)
    assert p.loader.published_offset == 300
    image, manifest = p.images[-1]
    assert (manifest.offset, manifest.epoch, manifest.batch_aligned, manifest.from_snapshot,
            manifest.batches, manifest.records) == (300, 100, True, True, 0, 0)
    assert image.metadata_version == MINIMUM_KRAFT == LEVELS["3.0-IV1"]
    assert image.same_content(MetadataImage.EMPTY)


def test_a_control_batch_after_a_snapshot_moves_the_offset_only() -> None:
    """testLoadEmptyBatch."""
    p = Published(high_watermark=1)
    p.snapshot(200, metadata_version("3.3-IV1"), TopicRecord("foo", FOO))
    before = p.image
    p.loader.handle_commit((Batch(300, 100, control_records=(
        LeaderChangeMessage(1, (1,), (1,)),)),), 1)
    image, manifest = p.images[-1]
    assert p.loader.published_offset == 300
    assert (manifest.offset, manifest.epoch, manifest.batch_aligned, manifest.batches,
            manifest.from_snapshot) == (300, 100, True, 1, False)
    assert image.metadata_version == LEVELS["3.3-IV1"] and image.same_content(before)


def test_the_published_offset_moves_with_each_commit() -> None:
    """testLastAppliedOffset."""
    p = Published(high_watermark=1)
    p.snapshot(200, metadata_version("3.3-IV1"), TopicRecord("foo", FOO))
    assert p.loader.published_offset == 200
    p.commit(201, RemoveTopicRecord(FOO))
    assert p.loader.published_offset == 201 and p.image.topic("foo") is None
    assert p.image.metadata_version == LEVELS["3.3-IV1"]


def test_nothing_is_published_until_a_snapshot_reaches_the_high_watermark() -> None:
    """testCatchingUpState: with the high watermark unknown, then ahead of the snapshot, the
    loader catches up and publishes nothing."""
    p = Published()
    p.snapshot(200, metadata_version("3.3-IV1"), TopicRecord("foo", FOO))
    assert p.loader.published_offset == -1 and p.images == []
    p.set_high_watermark(221)
    p.snapshot(210, metadata_version("3.3-IV1"), TopicRecord("foo", FOO))
    assert p.loader.published_offset == -1 and p.images == []
    p.snapshot(220, metadata_version("3.3-IV1"), TopicRecord("foo", FOO))
    assert p.loader.published_offset == 220 and len(p.images) == 1


def test_a_snapshot_replaces_the_whole_image() -> None:
    """testReloadSnapshot."""
    p = Published(high_watermark=0, subscribe=False)
    p.snapshot(100, metadata_version("3.3-IV1"), TopicRecord("foo", FOO))
    p.loader.subscribe(p.publish)  # subscribed late: the current image at once
    assert [image.offset for image, _ in p.images] == [100]
    p.snapshot(200, metadata_version("3.3-IV1"), TopicRecord("foo", FOO))
    assert p.loader.published_offset == 200
    assert p.image.metadata_version == LEVELS["3.3-IV1"]
    p.snapshot(400, metadata_version("3.3-IV2"), TopicRecord("bar", BAR))
    assert p.loader.published_offset == 400
    assert p.image.metadata_version == LEVELS["3.3-IV2"]
    assert "foo" not in p.image.topics_by_name and "bar" in p.image.topics_by_name
    p.commit(500, metadata_version("3.5-IV0"))
    assert p.image.metadata_version == LEVELS["3.5-IV0"]


@pytest.mark.parametrize("abort", [True, False], ids=["abort", "end"])
def test_a_transaction_over_three_commits(abort: bool) -> None:
    """testPublishTransaction: the topic is seen only once the transaction ends."""
    p = Published(high_watermark=0)
    p.commit(500, BeginTransactionRecord("testTransactions"), TopicRecord("foo", TXN_FOO))
    assert all(image.topic("foo") is None for image, _ in p.images)
    p.commit(502, PartitionRecord(partition_id=0, topic_id=TXN_FOO, replicas=(), isr=()),
             PartitionRecord(partition_id=1, topic_id=TXN_FOO, replicas=(), isr=()))
    assert all(image.topic("foo") is None for image, _ in p.images)
    p.commit(504, AbortTransactionRecord() if abort else EndTransactionRecord())
    assert p.loader.published_offset == 504
    assert (p.image.topic("foo") is None) is abort


def test_a_transaction_within_one_batch_is_published_whole() -> None:
    """testPublishTransactionWithinBatch."""
    p = Published(high_watermark=0)
    p.commit(500, BeginTransactionRecord("txn-1"), TopicRecord("foo", "HQSM3ccPQISrHqYK_C8GpA"),
             EndTransactionRecord())
    assert [image.offset for image, _ in p.images] == [502]
    assert p.image.topic("foo") is not None


def test_no_empty_image_is_published() -> None:
    """testNoPublishEmptyImage: a publisher subscribed before anything was loaded gets the
    first image that holds something, never the empty one."""
    p = Published(high_watermark=1)
    p.commit(0, ConfigRecord(BROKER_RESOURCE, "3000", "foo", "bar"), epoch=1)
    assert p.images
    assert not any(image.same_content(MetadataImage.EMPTY) for image, _ in p.images)


def test_a_publisher_cannot_be_subscribed_twice() -> None:
    """testPublisherCannotBeInstalledMoreThanOnce, the same publisher, before and after a
    snapshot was loaded."""
    for load_snapshot in (False, True):
        p = Published(high_watermark=0)
        if load_snapshot:
            p.snapshot(200, epoch=100)
        with pytest.raises(ValueError, match="already subscribed"):
            p.loader.subscribe(p.publish)
        assert len(p.loader.publishers) == 1


def test_a_transaction_marker_in_a_snapshot_is_a_fault_and_skipped() -> None:
    """A snapshot holds no metadata transaction: a Begin/End/Abort record found in one is
    reported as a fault and skipped; the rest of the snapshot loads."""
    p = Published(high_watermark=0)
    p.snapshot(100, metadata_version("3.3-IV1"), BeginTransactionRecord("x"),
               TopicRecord("foo", FOO))
    assert [f.offset for f in p.loader.faults] == [100]
    assert "foo" in p.image.topics_by_name
