"""The image's index of leaderless partitions, kept batch by batch, is what its topics
say (MetadataImage.leaderless_partitions)."""

from __future__ import annotations

import random

import pytest

from metadata.delta import MetadataDelta
from metadata.image import NO_LEADER, MetadataImage
from metadata.schema import (
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)

IDS = ["AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB", "CCCCCCCCCCCCCCCCCCCCCC"]


def _scan(image: MetadataImage) -> dict[str, tuple[int, ...]]:
    """The leaderless partitions found by looking at every partition."""
    found = {topic_id: tuple(sorted(pid for pid, reg in topic.partitions.items()
                                    if reg.leader == NO_LEADER))
             for topic_id, topic in image.topics_by_id.items()}
    return {topic_id: pids for topic_id, pids in found.items() if pids}


def _records(seed: int) -> list[MetadataRecord]:
    """Topics made with some partitions leaderless, leaders lost and elected, ISR-only
    changes, and topics removed and made again under the same id."""
    rng = random.Random(seed)
    records: list[MetadataRecord] = []
    live: dict[str, int] = {}
    made = 0
    for _ in range(300):
        roll = rng.random()
        if not live or roll < 0.08:
            topic_id = rng.choice(IDS)
            if topic_id in live:
                continue
            made += 1
            records.append(TopicRecord(f"t{made}", topic_id))
            count = rng.randint(1, 6)
            live[topic_id] = count
            for pid in range(count):
                leader = rng.choice([NO_LEADER, 0, 1])
                records.append(PartitionRecord(partition_id=pid, topic_id=topic_id,
                                               replicas=(0, 1, 2), isr=(0, 1, 2),
                                               leader=leader))
        elif roll < 0.12:
            topic_id = rng.choice(sorted(live))
            del live[topic_id]
            records.append(RemoveTopicRecord(topic_id))
        else:
            topic_id = rng.choice(sorted(live))
            pid = rng.randrange(live[topic_id])
            if roll < 0.5:
                records.append(PartitionChangeRecord(partition_id=pid, topic_id=topic_id,
                                                     leader=rng.choice([NO_LEADER, 0, 2])))
            else:  # the leader as it was
                records.append(PartitionChangeRecord(partition_id=pid, topic_id=topic_id,
                                                     isr=(0, 1)))
    return records


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("batch", [1, 4, 25, 1000])
@pytest.mark.parametrize("many", [False, True])  # replay_many: runs of PartitionRecords
def test_the_index_batch_by_batch_equals_a_scan_of_the_topics(seed: int, batch: int,
                                                              many: bool) -> None:
    records = _records(seed)
    image = MetadataImage.EMPTY
    for start in range(0, len(records), batch):
        delta = MetadataDelta(image)
        if many:
            assert delta.replay_many(records[start:start + batch])[1] is None
        else:
            delta.replay_all(records[start:start + batch])
        image = delta.apply(start + batch - 1, 1)
        assert dict(image.leaderless_partitions) == _scan(image)


def test_a_delta_without_leader_changes_keeps_the_same_index() -> None:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all([TopicRecord("t", IDS[0]),
                      PartitionRecord(partition_id=0, topic_id=IDS[0], replicas=(0, 1),
                                      isr=(0,), leader=NO_LEADER)])
    image = delta.apply(1, 1)
    assert dict(image.leaderless_partitions) == {IDS[0]: (0,)}
    shrink = MetadataDelta(image)
    shrink.replay(PartitionChangeRecord(partition_id=0, topic_id=IDS[0], isr=(1,)))
    assert shrink.apply(2, 1).leaderless_partitions is image.leaderless_partitions
