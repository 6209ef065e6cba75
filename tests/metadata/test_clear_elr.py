"""ClearElrRecord (apiKey 28, Kafka 4.1, KIP-966): its bytes, and its replay as Kafka's
TopicsDelta does it: every partition of the named topic (of every topic for an empty
name) that has eligible leader replicas gets both ELR lists emptied, a partition epoch
bump and nothing else; an unknown topic name cannot be replayed."""

from __future__ import annotations

import pytest

from kafka_format.metadata_serde import decode_metadata_record, encode_metadata_record
from metadata.delta import MetadataDelta, ReplayError
from metadata.image import MetadataImage
from metadata.replay_check import ReplayCheck
from metadata.schema import ClearElrRecord, PartitionRecord, TopicRecord, record_to_json
from tests.metadata.test_image_delta import BAR, FOO, image_of


def _image() -> MetadataImage:
    """foo-0 and bar-0 with ELRs, foo-1 without."""
    def part(topic_id: str, pid: int, elr: tuple[int, ...] | None,
             last_known: tuple[int, ...] | None) -> PartitionRecord:
        return PartitionRecord(partition_id=pid, topic_id=topic_id, replicas=(1, 2, 3),
                               isr=(1,), leader=1, leader_epoch=4, partition_epoch=7,
                               eligible_leader_replicas=elr, last_known_elr=last_known)

    return image_of(TopicRecord("foo", FOO), TopicRecord("bar", BAR),
                    part(FOO, 0, (2,), (3,)), part(FOO, 1, None, None),
                    part(BAR, 0, (), (3,)))


def _elrs(image: MetadataImage) -> dict[tuple[str, int], tuple[object, object, int, int]]:
    return {(topic.name, pid): (tuple(reg.eligible_leader_replicas or ()),
                                tuple(reg.last_known_elr or ()), reg.leader_epoch,
                                reg.partition_epoch)
            for topic in image.topics_by_id.values() for pid, reg in topic.partitions.items()}


def test_the_record_is_kafkas_bytes_and_json() -> None:
    data = bytes.fromhex("011c0004666f6f00")  # frame 1, apiKey 28, version 0, "foo"
    assert encode_metadata_record(ClearElrRecord(topic_name="foo"), 0) == data
    decoded = decode_metadata_record(data)
    assert decoded.record == ClearElrRecord(topic_name="foo")
    assert record_to_json(decoded.record) == {"type": "CLEAR_ELR_RECORD",
                                              "data": {"topicName": "foo"}}


@pytest.mark.parametrize(("name", "cleared"), [("foo", {("foo", 0)}),
                                               ("", {("foo", 0), ("bar", 0)})])
def test_a_topics_elrs_are_cleared_with_a_partition_epoch_bump(name: str,
                                                               cleared: set[object]) -> None:
    before = _image()
    after = image_of(ClearElrRecord(topic_name=name), base=before)
    old, new = _elrs(before), _elrs(after)
    for key, (_, _, leader_epoch, partition_epoch) in old.items():
        if key in cleared:
            assert new[key] == ((), (), leader_epoch, partition_epoch + 1)
        else:
            assert new[key] == old[key]
    assert after.topic("foo").partitions[0].leader == 1  # type: ignore[union-attr]


def test_a_topic_created_in_the_same_delta_is_cleared_too() -> None:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all([TopicRecord("foo", FOO), PartitionRecord(
        partition_id=0, topic_id=FOO, replicas=(1, 2), isr=(1,), leader=1, leader_epoch=0,
        partition_epoch=0, eligible_leader_replicas=(2,)), ClearElrRecord(topic_name="")])
    reg = delta.apply(3, 1).topic("foo").partitions[0]  # type: ignore[union-attr]
    assert (reg.eligible_leader_replicas, reg.partition_epoch) == ((), 1)


def test_an_unknown_topic_name_cannot_be_replayed_or_checked() -> None:
    message = "Unable to clear elr for topic with name baz: no such topic found."
    for delta in (MetadataDelta(_image()), ReplayCheck(_image())):
        with pytest.raises(ReplayError, match=message):
            delta.replay(ClearElrRecord(topic_name="baz"))
        delta.replay(ClearElrRecord(topic_name="foo"))
        delta.replay(ClearElrRecord(topic_name=""))
