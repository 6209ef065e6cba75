"""Replica placement, following the cases of Kafka's ``StripedReplicaPlacerTest``.

kraftsim's placement (``controller/operations/placement.py``) is Kafka's striped placer:
the usable brokers by rack, each rack's unfenced and fenced brokers sorted with a random
starting place, the leader the next unfenced broker of the next rack, the followers one
per rack in turn, unfenced before fenced, and every rack's lists shuffled again after as
many partitions as there are unfenced brokers. Its draws come from the controller's
seeded stream, not Java's ``Random``, so Kafka's exact lists (which follow its
``MockRandom`` and ``Collections.shuffle``) are not reproduced: their shapes are (which
brokers, in which racks, in which positions, how often).

Not ported:
- ``testBrokerList``: Kafka's internal iterator over one rack's brokers (its behaviour is
  in every list below).
- ``PartitionAssignmentTest`` and ``TopicAssignmentTest`` (the whole classes:
  testPartitionAssignmentReplicas, testTopicAssignmentReplicas, and each one's
  testConsistentEqualsAndHashCode and testToString): kraftsim's placement yields plain
  replica tuples, with Python's equality and hash; the directories these Java values
  carry (JBOD) are not modelled by placement.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from controller.errors import ApiError
from controller.operations import CreateTopics, NewTopic
from controller.operations.placement import RackList, place_replicas
from metadata.image import MetadataImage
from metadata.schema import FeatureLevelRecord, PartitionRecord, RegisterBrokerRecord
from metadata.versions import METADATA_VERSION_FEATURE

from .kafka_cases import brokers, generate, image_of


def _image(*ids: int, fenced: tuple[int, ...] = ()) -> MetadataImage:
    return image_of(brokers(*ids, fenced=fenced))


def _place(image: MetadataImage, partitions: int, factor: int,
           seed: int = 0) -> list[tuple[int, ...]]:
    return list(place_replicas(image, random.Random(seed), partitions, factor))


def _refused(image: MetadataImage, factor: int) -> str:
    with pytest.raises(ApiError) as refused:
        _place(image, 1, factor)
    assert refused.value.code == "INVALID_REPLICATION_FACTOR"
    return refused.value.message


@pytest.mark.parametrize("factor", [0, -1])
def test_a_factor_below_one_is_refused(factor: int) -> None:
    """Kafka's testNonPositiveReplicationFactor and testRackListNonPositiveReplicationFactor
    (and the refusals of testAvoidFencedReplicaIfPossibleOnSingleRack), in the words of
    Kafka's placer behind ReplicationControlManager's prefix. kraftsim said "Replication
    factor must be larger than 0, got N", without the prefix."""
    assert _refused(_image(10, 11), factor) == (
        f"Unable to replicate the partition {factor} time(s): Invalid replication factor "
        f"{factor}: the replication factor must be positive.")


@pytest.mark.parametrize("factor", [1, 3])
def test_every_broker_fenced_is_refused_first(factor: int) -> None:
    """Kafka's testAllBrokersFenced and testRackListAllBrokersFenced: no unfenced broker is
    refused before the count of brokers is checked."""
    assert _refused(_image(10, 11, fenced=(10, 11)), factor) == (
        f"Unable to replicate the partition {factor} time(s): All brokers are currently "
        f"fenced.")


def test_fewer_brokers_than_the_factor_is_refused() -> None:
    """Kafka's testNotEnoughBrokers and testRackListNotEnoughBrokers."""
    assert _refused(_image(10, 11), 3) == (
        "Unable to replicate the partition 3 time(s): The target replication factor of 3 "
        "cannot be reached because only 2 broker(s) are registered.")


@pytest.mark.parametrize("seed", range(5))
def test_a_fenced_broker_is_avoided_when_the_unfenced_suffice(seed: int) -> None:
    """Kafka's testAvoidFencedReplicaIfPossibleOnSingleRack: with broker 1 fenced among
    0-4, every list of four holds the four unfenced brokers, and the leaders take turns."""
    placed = _place(_image(3, 1, 0, 4, 2, fenced=(1,)), 5, 4, seed)
    assert all(sorted(replicas) == [0, 2, 3, 4] for replicas in placed)
    assert sorted(r[0] for r in placed[:4]) == [0, 2, 3, 4]


@pytest.mark.parametrize("seed", range(5))
def test_a_fenced_broker_comes_last_when_it_is_needed(seed: int) -> None:
    """Kafka's testPlacementOnFencedReplicaOnSingleRack: brokers 2 and 3 unfenced, 1 fenced,
    a factor of 3: the unfenced lead, alternately, and the fenced one is last."""
    placed = _place(_image(3, 1, 2, fenced=(1,)), 4, 3, seed)
    assert all(r[2] == 1 and sorted(r[:2]) == [2, 3] for r in placed)
    assert sorted(r[0] for r in placed[:2]) == sorted(r[0] for r in placed[2:]) == [2, 3]


def test_one_unfenced_broker_takes_every_partition() -> None:
    """Kafka's testMultiPartitionTopicPlacementOnSingleUnfencedBroker."""
    assert _place(_image(0, 1, fenced=(1,)), 3, 1) == [(0,), (0,), (0,)]


@pytest.mark.parametrize("seed", range(5))
def test_partitions_are_striped_over_the_brokers(seed: int) -> None:
    """What kraftsim shares with Kafka's testSuccessfulPlacement: five partitions of three
    replicas on brokers 0-3 each hold three distinct brokers, and the first four have four
    different leaders."""
    placed = _place(_image(0, 3, 2, 1), 5, 3, seed)
    assert all(len(set(r)) == 3 and set(r) <= {0, 1, 2, 3} for r in placed)
    assert sorted(r[0] for r in placed[:4]) == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", range(3))
def test_leaders_and_followers_are_spread_evenly(seed: int) -> None:
    """Kafka's testEvenDistribution: 200 partitions of two replicas on four brokers give
    each broker 50 leaderships and 100 replicas, and a broker's followers spread over
    every other broker: all 12 ordered pairs, none rare (Kafka's lists: 11 to 22 each).
    A rotation of the sorted brokers gave 4 pairs, 50 times each, so the partitions a
    broker led all failed over to the same next broker."""
    placed = _place(_image(0, 1, 2, 3), 200, 2, seed)
    assert Counter(r[0] for r in placed) == {0: 50, 1: 50, 2: 50, 3: 50}
    assert Counter(b for r in placed for b in r) == {0: 100, 1: 100, 2: 100, 3: 100}
    pairs = Counter(placed)
    assert len(pairs) == 12 and min(pairs.values()) >= 5


@pytest.mark.parametrize("seed", range(3))
def test_a_round_reshuffles_the_brokers(seed: int) -> None:
    """Each round of as many partitions as unfenced brokers gives every broker one
    leadership, and the rounds' orders change (Kafka's shuffle after each round)."""
    placed = _place(_image(0, 1, 2, 3, 4), 100, 3, seed)
    rounds = [placed[k:k + 5] for k in range(0, 100, 5)]
    assert all(sorted(r[0] for r in one) == [0, 1, 2, 3, 4] for one in rounds)
    assert len({tuple(one) for one in rounds}) > 10


def _racked(*brokers: tuple[int, str, bool]) -> MetadataImage:
    return image_of([FeatureLevelRecord(METADATA_VERSION_FEATURE, 22),
                     *(RegisterBrokerRecord(b, f"inc-{b}", broker_epoch=100, fenced=fenced,
                                            rack=rack) for b, rack, fenced in brokers)])


@pytest.mark.parametrize("seed", range(5))
def test_replicas_go_round_the_racks(seed: int) -> None:
    """Kafka's testRackListWithMultipleRacks: racks 1 (10, 11), 2 (21; 20 fenced) and 3
    (30, 31), a factor of 4: each list starts at an unfenced leader and goes round the
    racks (in the round's order: shuffled after each round) from the leader's, one
    replica per rack, the fourth from a rack asked again; rack 2's fenced broker comes
    only when rack 2 is asked a second time (its unfenced one given), and never leads."""
    rack = {10: "1", 11: "1", 20: "2", 21: "2", 30: "3", 31: "3"}
    image = _racked((11, "1", False), (10, "1", False), (30, "3", False),
                    (31, "3", False), (21, "2", False), (20, "2", True))
    placed = _place(image, 30, 4, seed)
    for replicas in placed:
        racks = [rack[b] for b in replicas]
        assert len(set(racks[:3])) == 3 and len(set(replicas)) == 4
        assert replicas[0] != 20
        if 20 in replicas:
            assert racks[replicas.index(20)] == "2" and 21 in replicas
    assert {r[0] for r in placed} == {10, 11, 21, 30, 31}


@pytest.mark.parametrize("seed", range(5))
def test_a_fenced_broker_may_be_placed_to_reach_its_rack(seed: int) -> None:
    """Kafka's testRackListWithInvalidRacks: racks 1 (10, 11), 2 (20, 21 fenced), 3 (30, 31
    fenced) and 4 (41; 40 fenced), a factor of 4: one replica per rack, so racks 2 and 3
    give fenced brokers while unfenced ones exist elsewhere; only unfenced brokers lead,
    and a new partition's ISR holds only its unfenced replicas."""
    rack = {10: "1", 11: "1", 20: "2", 21: "2", 30: "3", 31: "3", 40: "4", 41: "4"}
    image = _racked((11, "1", False), (10, "1", False), (30, "3", True), (31, "3", True),
                    (20, "2", True), (21, "2", True), (41, "4", False), (40, "4", True))
    placed = _place(image, 12, 4, seed)
    for replicas in placed:
        assert sorted(rack[b] for b in replicas) == ["1", "2", "3", "4"]
        assert replicas[0] in (10, 11, 41)
    records, _ = generate(CreateTopics((NewTopic("t", 6, 4),)), image, seed=seed)
    for record in records:
        if isinstance(record, PartitionRecord):
            assert record.isr == tuple(b for b in record.replicas if b in (10, 11, 41))
            assert record.leader == record.replicas[0] == record.isr[0]


def test_the_one_rack_shortcut_gives_the_lists_of_the_placer() -> None:
    """Brokers without racks are placed a round at a time (``RackList.lists``); the lists
    are exactly those of Kafka's partition-by-partition steps (``RackList.place``), for
    every mix of unfenced and fenced brokers, factor and count tried."""
    for unfenced, fenced, factor, partitions, seed in itertools.product(
            range(1, 8), range(4), range(1, 6), (1, 2, 5, 13, 43), range(2)):
        if factor > unfenced + fenced:
            continue
        usable = [(b, None, False) for b in range(unfenced)] + \
            [(100 + b, None, True) for b in range(fenced)]
        rounds = RackList(random.Random(seed), list(usable))
        steps = RackList(random.Random(seed), list(usable))
        assert list(rounds.lists(partitions, factor)) == \
            [steps.place(factor) for _ in range(partitions)], (unfenced, fenced, factor)
