"""MetadataBatchLoader / MetadataLoader: transactions are published whole or not at all.

Behaviours from Kafka's MetadataBatchLoaderTest and MetadataLoaderTest.
"""

from __future__ import annotations

from broker import BrokerMutation, Manifest, MetadataImage, MetadataLoader, TransactionState
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    MetadataRecord,
    NoOpRecord,
    PartitionRecord,
    TopicRecord,
)
from metadata.snapshot import image_to_records
from raft import Batch, LeaderChangeMessage, Snapshot, SnapshotId

FOO, BAR = "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"


def partition(topic_id: str, pid: int) -> PartitionRecord:
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=(0,), isr=(0,),
                           leader=0, leader_epoch=0, partition_epoch=0)


class Recorder:
    """A loader whose every image is recorded; ``caught_up`` skips the catch-up wait so that
    the batch loader's own emissions are seen (as Kafka's MetadataBatchLoaderTest does)."""

    def __init__(self, mutations: frozenset[BrokerMutation] = frozenset(),
                 caught_up: bool = True) -> None:
        self.loader = MetadataLoader(1, mutations=mutations)
        self.loader.catching_up = not caught_up
        self.images: list[tuple[MetadataImage, Manifest]] = []
        self.loader.subscribe(lambda image, manifest: self.images.append((image, manifest)))
        self.next_offset = 0

    def batch(self, *records: MetadataRecord) -> Batch:
        batch = Batch(self.next_offset, 1, records)
        self.next_offset = batch.end_offset
        return batch

    def commit(self, *batches: Batch) -> None:
        self.loader.handle_commit(batches, batches[-1].end_offset)


def test_a_transaction_is_buffered_across_commits_and_published_once() -> None:
    r = Recorder()
    r.commit(r.batch(BeginTransactionRecord("t"), TopicRecord("foo", FOO), partition(FOO, 0)))
    r.commit(r.batch(NoOpRecord(), NoOpRecord(), NoOpRecord()))
    assert r.images == []
    assert r.loader.batch_loader.state is TransactionState.CONTINUED_TRANSACTION
    r.commit(r.batch(partition(FOO, 1), partition(FOO, 2), EndTransactionRecord()))
    [(image, manifest)] = r.images
    assert image.offset == 8 and manifest.batch_aligned
    topic = image.topic("foo")
    assert topic is not None and len(topic.partitions) == 3


def test_records_before_a_begin_are_published_when_the_begin_is_read() -> None:
    r = Recorder()
    r.commit(r.batch(NoOpRecord(), NoOpRecord()),
             r.batch(BeginTransactionRecord("t"), TopicRecord("foo", FOO)))
    [(image, _)] = r.images
    assert image.offset == 1 and image.topic("foo") is None
    r.commit(r.batch(EndTransactionRecord()))
    assert r.images[-1][0].topic("foo") is not None


def test_two_transactions_in_one_batch_publish_after_each_end() -> None:
    r = Recorder()
    r.commit(r.batch(BeginTransactionRecord("a"), TopicRecord("foo", FOO),
                     *[partition(FOO, i) for i in range(3)], EndTransactionRecord(),
                     BeginTransactionRecord("b"), TopicRecord("bar", BAR),
                     *[partition(BAR, i) for i in range(2)], EndTransactionRecord()))
    (first, first_manifest), (second, _) = r.images
    assert first.offset == 5 and not first_manifest.batch_aligned  # cut inside the batch
    assert first.topic("foo") is not None and first.topic("bar") is None
    assert second.offset == 10 and second.topic("bar") is not None


def test_an_abort_publishes_an_empty_change_that_advances_the_offset() -> None:
    r = Recorder()
    r.commit(r.batch(NoOpRecord()))
    r.commit(r.batch(BeginTransactionRecord("t"), TopicRecord("foo", FOO), partition(FOO, 0)))
    r.commit(r.batch(AbortTransactionRecord("Controller failover")))
    image = r.images[-1][0]
    assert image.offset == 4 and image.topic("foo") is None
    assert image.same_content(r.images[0][0])
    assert all(img.topic("foo") is None for img, _ in r.images)


def test_aborted_records_never_leak_even_when_records_follow_the_abort() -> None:
    r = Recorder()
    r.commit(r.batch(BeginTransactionRecord("t"), TopicRecord("foo", FOO), partition(FOO, 0)))
    r.commit(r.batch(AbortTransactionRecord()), r.batch(ConfigRecord(4, "", "x", "1")))
    assert all(img.topic("foo") is None for img, _ in r.images)
    assert r.images[-1][0].configs[(4, "")]["x"] == "1"


def test_kafkas_loader_would_leak_them() -> None:
    r = Recorder(frozenset({BrokerMutation.LEAK_AFTER_ABORT}))
    r.commit(r.batch(BeginTransactionRecord("t"), TopicRecord("foo", FOO), partition(FOO, 0)))
    r.commit(r.batch(AbortTransactionRecord()), r.batch(ConfigRecord(4, "", "x", "1")))
    assert r.images[-1][0].topic("foo") is not None  # the difference kraftsim fixes


def test_markers_out_of_place_are_faults_and_loading_goes_on() -> None:
    r = Recorder()
    r.commit(r.batch(EndTransactionRecord(), TopicRecord("foo", FOO)))
    r.commit(r.batch(BeginTransactionRecord(), BeginTransactionRecord(), EndTransactionRecord()))
    assert [(f.offset, f.message.split(" ")[1]) for f in r.loader.faults] == [
        (0, "EndTransactionRecord"), (3, "BeginTransactionRecord")]
    assert r.images[-1][0].topic("foo") is not None


def test_a_snapshot_during_a_transaction_replaces_the_state_and_drops_it() -> None:
    r = Recorder()
    r.commit(r.batch(BeginTransactionRecord("t"), TopicRecord("foo", FOO)))
    snapshot_image = MetadataLoader(2)
    other = Recorder()
    other.commit(other.batch(TopicRecord("bar", BAR), partition(BAR, 0)))
    source = other.images[-1][0]
    snapshot_image.handle_load_snapshot(Snapshot(SnapshotId(10, 1), tuple(image_to_records(
        source))))
    r.loader.handle_load_snapshot(Snapshot(SnapshotId(10, 1), tuple(image_to_records(source))))
    image = r.images[-1][0]
    assert image.offset == 9 and image.topic("bar") is not None and image.topic("foo") is None
    assert r.loader.batch_loader.state is TransactionState.NO_TRANSACTION
    r.next_offset = 10
    r.commit(r.batch(EndTransactionRecord()))  # the dropped transaction's End: a fault
    assert r.loader.faults and r.loader.faults[-1].offset == 10


def test_nothing_is_published_until_caught_up_with_the_high_watermark() -> None:
    r = Recorder(caught_up=False)
    first = r.batch(TopicRecord("foo", FOO))
    r.loader.handle_commit([first], 50)
    assert r.images == [] and r.loader.catching_up
    r.loader.handle_commit([r.batch(NoOpRecord())], 2)
    assert [img.offset for img, _ in r.images] == [1]
    assert r.images[0][0].topic("foo") is not None  # nothing that came before is missing


def test_control_batches_advance_the_offset_only() -> None:
    r = Recorder()
    r.commit(r.batch(TopicRecord("foo", FOO)))
    control = Batch(r.next_offset, 2, control_records=(LeaderChangeMessage(1, (1,), (1,)),))
    r.next_offset = control.end_offset
    r.commit(control)
    assert r.images[-1][0].offset == 1 and r.images[-1][0].same_content(r.images[0][0])


def test_a_new_loader_waits_to_catch_up_and_has_published_nothing() -> None:
    loader = MetadataLoader(1)
    assert loader.catching_up and loader.published is None and loader.published_offset == -1
    assert loader.leader.leader_id is None and loader.leader.epoch == 0


def test_caught_up_means_the_image_holds_the_record_just_below_the_high_watermark() -> None:
    """Kafka's loader: caught up once offset + 1 >= high watermark (not one record before)."""
    r = Recorder(caught_up=False)
    r.loader.handle_commit([r.batch(TopicRecord("foo", FOO))], 2)  # offset 0, hw 2: behind
    assert r.images == [] and r.loader.catching_up
    r.loader.handle_commit([r.batch(NoOpRecord())], 2)  # offset 1 = hw - 1: caught up
    assert [img.offset for img, _ in r.images] == [1] and not r.loader.catching_up
    r.commit(r.batch(NoOpRecord()))  # from now on every commit publishes
    assert [img.offset for img, _ in r.images] == [1, 2]


def test_a_snapshot_behind_the_high_watermark_is_published_once_the_log_shows_it_current() -> None:
    r = Recorder(caught_up=False)
    r.loader.handle_commit([], 20)  # the leader's log goes on to offset 19
    source = MetadataImage.EMPTY.with_provenance(9, 1)
    r.loader.handle_load_snapshot(Snapshot(SnapshotId(10, 1), tuple(image_to_records(source))))
    assert r.images == [] and r.loader.catching_up
    r.loader.handle_commit([], 10)  # the snapshot's last offset (9) = hw - 1
    assert [(img.offset, manifest.from_snapshot, manifest.batch_aligned)
            for img, manifest in r.images] == [(9, True, True)]
    assert not r.loader.catching_up
    r.next_offset = 10
    r.commit(r.batch(TopicRecord("foo", FOO)))
    assert [img.offset for img, _ in r.images] == [9, 10]


def test_a_manifest_counts_the_records_the_published_change_replayed() -> None:
    """Markers are not counted; each publication counts from the previous one."""
    r = Recorder()
    r.commit(r.batch(TopicRecord("foo", FOO), partition(FOO, 0)))
    r.commit(r.batch(BeginTransactionRecord("t"), partition(FOO, 1), partition(FOO, 2)),
             r.batch(partition(FOO, 3), EndTransactionRecord()))
    assert [(img.offset, manifest.records) for img, manifest in r.images] == [(1, 2), (6, 3)]


def test_the_last_offset_loaded_is_the_snapshots_after_a_snapshot_load() -> None:
    """``batch_loader.last_offset`` (how far the broker has loaded, which the demo's crash
    window reads) is the image's offset for a new loader and the snapshot's last offset once
    a snapshot replaced what the log had loaded."""
    r = Recorder()
    assert r.loader.batch_loader.last_offset == MetadataImage.EMPTY.offset
    r.commit(r.batch(TopicRecord("foo", FOO), partition(FOO, 0)))
    assert r.loader.batch_loader.last_offset == 1
    source = MetadataImage.EMPTY.with_provenance(9, 1)
    r.loader.handle_load_snapshot(Snapshot(SnapshotId(10, 1), tuple(image_to_records(source))))
    assert r.loader.batch_loader.last_offset == 9
