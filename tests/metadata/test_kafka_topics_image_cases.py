"""Topics in the image, following the cases of Kafka's ``TopicsImageTest``.

Ported: the first image and the delta that removes a topic, changes one, adds
one, adds a topic again under a name just freed and adds then removes another
in the same delta; the round trip of both images through snapshot records; the
image halves of the local-change cases (a change then a removal in one delta, a
reassignment of every kind); and the name <-> id views.

Not ported: ``LocalReplicaChanges`` (``TopicsDelta.localChanges``) itself. kraftsim's
broker has no such delta view: its ReplicaManager compares the published
images (see ``broker/replica_manager.py``). Partition directories (JBOD) are
left out of the registrations.

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_the_empty_image_writes_no_records_and_reads_back_empty); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2).
"""

from __future__ import annotations

import immutables
import pytest

from metadata.image import MetadataImage, PartitionRegistration
from metadata.schema import (
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from metadata.snapshot import image_to_records
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

FOO = "ThIaNwRnSM2Nt9Mx1v0RvA"
FOO2 = "9d3lha5qv8DoIl93jf8pbX"
BAR = "f62ptyETTjet8SL5ZeREiw"
BAZ = "tgHBnRglT5W_RlENnuG5vg"
BAM = "b66ybsWIQoygs01vdjH07A"
BAM2 = "yd6Sq3a9aK1G8snlKv7ag5"
ZOO = "0hHJ3X5ZQ-CFfQ5xgpj90w"
LOCAL = 3


def partition(topic_id: str, pid: int, replicas: tuple[int, ...], isr: tuple[int, ...],
              leader: int, leader_epoch: int, partition_epoch: int,
              removing: tuple[int, ...] = (), adding: tuple[int, ...] = ()) -> PartitionRecord:
    return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=replicas, isr=isr,
                           removing_replicas=removing, adding_replicas=adding, leader=leader,
                           leader_epoch=leader_epoch, partition_epoch=partition_epoch)


IMAGE1_RECORDS: list[MetadataRecord] = [
    TopicRecord("foo", FOO),
    partition(FOO, 0, (2, 3, 4), (2, 3), 2, 1, 345),
    partition(FOO, 1, (3, 4, 5), (3, 4, 5), 3, 4, 684),
    partition(FOO, 2, (2, 4, 5), (2, 4, 5), 2, 10, 84),
    TopicRecord("bar", BAR),
    partition(BAR, 0, (0, 1, 2, 3, 4), (0, 1, 2, 3), 0, 1, 345, removing=(1,), adding=(3, 4)),
]
IMAGE1 = image_of(IMAGE1_RECORDS)

DELTA1_RECORDS: list[MetadataRecord] = [
    RemoveTopicRecord(FOO),
    PartitionChangeRecord(partition_id=0, topic_id=BAR, leader=1),
    TopicRecord("baz", BAZ),
    partition(BAZ, 0, (1, 2, 3, 4), (3, 4), 3, 2, 1, removing=(2,), adding=(1,)),
    TopicRecord("foo", FOO2),  # the name again, under a new id, in the delta that freed it
    TopicRecord("bam", BAM),
    RemoveTopicRecord(BAM),  # made and removed in one delta
]

IMAGE2 = image_of([
    TopicRecord("foo", FOO2),
    TopicRecord("bar", BAR),
    partition(BAR, 0, (0, 1, 2, 3, 4), (0, 1, 2, 3), 1, 2, 346, removing=(1,), adding=(3, 4)),
    TopicRecord("baz", BAZ),
    partition(BAZ, 0, (1, 2, 3, 4), (3, 4), 3, 2, 1, removing=(2,), adding=(1,)),
])


def replicas_record(topic_id: str, pid: int, replicas: tuple[int, ...]) -> PartitionRecord:
    """A partition led by its first replica, every replica in sync, epochs 1."""
    return partition(topic_id, pid, replicas, replicas, replicas[0], 1, 1)


def zoo_image(*replica_lists: tuple[int, ...]) -> MetadataImage:
    return image_of([TopicRecord("zoo", ZOO), *[
        replicas_record(ZOO, pid, replicas) for pid, replicas in enumerate(replica_lists)]])


def test_the_empty_image_writes_no_records_and_reads_back_empty() -> None:
    assert image_to_records(MetadataImage.EMPTY) == []
    assert image_of([]).same_content(MetadataImage.EMPTY)


@pytest.mark.parametrize("image", [IMAGE1, IMAGE2], ids=["image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    foo = IMAGE2.topic("foo")
    assert foo is not None and foo.topic_id == FOO2 and len(foo.partitions) == 0
    assert FOO not in IMAGE2.topics_by_id and IMAGE2.topic("bam") is None
    bar = IMAGE2.topics_by_id[BAR].partitions[0]
    assert (bar.leader, bar.leader_epoch, bar.partition_epoch) == (1, 2, 346)


def test_image1_records_and_delta1_reach_image2_through_every_split() -> None:
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])


def test_basic_changes_image() -> None:
    """testBasicLocalChanges, the image half: delta1, then bam made again under another id
    with two partitions, and a second partition of baz."""
    records = [*DELTA1_RECORDS,
               TopicRecord("bam", BAM2),
               replicas_record(BAM2, 0, (0, 1, 2)),
               replicas_record(BAM2, 1, (0, 1, LOCAL)),
               partition(BAZ, 1, (4, 2, LOCAL), (4, 2, LOCAL), 4, 2, 1)]
    final = image_of(records, IMAGE1)
    bam = final.topic("bam")
    assert bam is not None and bam.topic_id == BAM2 and sorted(bam.partitions) == [0, 1]
    assert sorted(final.topics_by_id[BAZ].partitions) == [0, 1]
    assert dict(final.partitions_by_broker[LOCAL]) == {BAR: (0,), BAZ: (0, 1), BAM2: (1,)}
    assert_every_split_reaches(final, [*image_to_records(IMAGE1), *records])


def test_a_change_then_the_topics_removal_in_one_delta_leaves_no_topic() -> None:
    """testDeleteAfterChanges, the image half."""
    image = zoo_image((LOCAL, 1, 2))
    records: list[MetadataRecord] = [PartitionChangeRecord(partition_id=0, topic_id=ZOO, leader=1),
                                     RemoveTopicRecord(ZOO)]
    final = image_of(records, image)
    assert final.topic("zoo") is None and not final.topics_by_id
    assert LOCAL not in final.partitions_by_broker
    assert final.same_content(MetadataImage.EMPTY)
    assert_every_split_reaches(final, [*image_to_records(image), *records])


def test_an_isr_change_keeps_the_leader_and_bumps_only_the_partition_epoch() -> None:
    """testUpdatedLeaders, the image half: the local broker still leads zoo-0."""
    image = zoo_image((LOCAL, 1, 2))
    final = image_of([PartitionChangeRecord(partition_id=0, topic_id=ZOO, isr=(LOCAL, 1))], image)
    assert final.topics_by_id[ZOO].partitions[0] == PartitionRegistration(
        replicas=(LOCAL, 1, 2), isr=(LOCAL, 1), leader=LOCAL, leader_epoch=1, partition_epoch=2)


def test_reassignments_of_every_kind() -> None:
    """testLocalReassignmentChanges, the image half: follower to leader, leader to follower,
    follower and leader removed, not a replica to leader and to follower."""
    image = zoo_image((0, 1, LOCAL), (LOCAL, 1, 2), (0, 1, LOCAL), (LOCAL, 1, 2), (0, 1, 2),
                      (0, 1, 2))
    records: list[MetadataRecord] = [
        PartitionChangeRecord(partition_id=0, topic_id=ZOO, leader=LOCAL),
        PartitionChangeRecord(partition_id=1, topic_id=ZOO, leader=1),
        PartitionChangeRecord(partition_id=2, topic_id=ZOO, isr=(0, 1, 2), replicas=(0, 1, 2)),
        PartitionChangeRecord(partition_id=3, topic_id=ZOO, leader=0, isr=(0, 1, 2),
                              replicas=(0, 1, 2)),
        PartitionChangeRecord(partition_id=4, topic_id=ZOO, leader=LOCAL, isr=(LOCAL, 1, 2),
                              replicas=(LOCAL, 1, 2)),
        PartitionChangeRecord(partition_id=5, topic_id=ZOO, isr=(0, 1, LOCAL),
                              replicas=(0, 1, LOCAL)),
    ]
    final = image_of(records, image)
    partitions = final.topics_by_id[ZOO].partitions
    led = sorted(pid for pid, p in partitions.items() if p.leader == LOCAL)
    followed = sorted(pid for pid, p in partitions.items()
                      if LOCAL in p.replicas and p.leader != LOCAL)
    assert (led, followed) == ([0, 4], [1, 5])
    assert dict(final.partitions_by_broker[LOCAL]) == {ZOO: (0, 1, 4, 5)}
    assert_every_split_reaches(final, [*image_to_records(image), *records])


def test_the_name_to_id_view() -> None:
    names = IMAGE1.topics_by_name
    assert names["foo"] == FOO and names["bar"] == BAR
    assert "baz" not in names and names.get("baz") is None
    assert set(names.values()) == {FOO, BAR}
    assert isinstance(names, immutables.Map)  # no way to change it in place
    with pytest.raises(TypeError):
        names["bar"] = FOO  # type: ignore[index]


def test_the_id_to_name_view() -> None:
    by_id = IMAGE1.topics_by_id
    assert by_id[FOO].name == "foo" and by_id[BAR].name == "bar"
    assert BAZ not in by_id and by_id.get(BAZ) is None
    assert {topic.name for topic in by_id.values()} == {"foo", "bar"}
    with pytest.raises(TypeError):
        del by_id[FOO]  # type: ignore[attr-defined]
