"""The automatic preferred leader elections of the active controller
(controller/leader_balance.py, Kafka's auto.leader.rebalance.enable): which partitions
are imbalanced, what a check writes, and when the next check comes."""

from __future__ import annotations

import random

from controller import ControllerConfig, QuorumController
from controller.leader_balance import LeaderBalancer, balance_records, imbalanced
from controller.periodic_elections import IMMEDIATE_MS, MAX_ELECTIONS_PER_IMBALANCE
from metadata.image import NO_LEADER, MetadataImage
from metadata.schema import MetadataRecord, PartitionChangeRecord, PartitionRecord, TopicRecord
from raft import Batch, ElectionState, RaftNode, RaftStorage

from .kafka_cases import brokers, image_of

FOO = "FOOFOOFOOFOOFOOFOOFOOA"


def _image(*parts: tuple[tuple[int, ...], tuple[int, ...], int],
           fenced: tuple[int, ...] = ()) -> MetadataImage:
    records: list[MetadataRecord] = [*brokers(0, 1, 2, fenced=fenced), TopicRecord("foo", FOO)]
    records += [PartitionRecord(partition_id=p, topic_id=FOO, replicas=r, isr=i, leader=leader)
                for p, (r, i, leader) in enumerate(parts)]
    return image_of(records)


def test_a_check_elects_every_available_preferred_leader() -> None:
    image = _image(((0, 1), (0, 1), 0), ((1, 2), (1, 2), 2), ((2, 0), (0,), 0),
                   ((0, 2), (0, 2), NO_LEADER))
    assert [pid for _, pid, _ in imbalanced(image)] == [1, 2, 3]
    records, remaining = balance_records(image)
    # partition 2's preferred replica (2) is not in its ISR: it stays as it is
    assert records == [PartitionChangeRecord(partition_id=1, topic_id=FOO, leader=1),
                       PartitionChangeRecord(partition_id=3, topic_id=FOO, leader=0)]
    assert remaining


def test_a_check_stops_at_the_most_elections_and_the_next_comes_at_once() -> None:
    parts = [((0, 1), (0, 1), 1)] * (MAX_ELECTIONS_PER_IMBALANCE + 5)
    image = _image(*parts)
    balancer = LeaderBalancer(300_000)
    balancer.activate(image, 1_000)
    assert balancer.due_at == 301_000
    assert balancer.take_due(image, 300_999) is None
    records = balancer.take_due(image, 301_000)
    assert records is not None and len(records) == MAX_ELECTIONS_PER_IMBALANCE
    assert balancer.due_at == 301_000 + IMMEDIATE_MS


def test_a_write_that_moves_a_leader_off_its_preferred_replica_schedules_a_check() -> None:
    balanced = _image(((0, 1), (0, 1), 0))
    balancer = LeaderBalancer(300_000)
    balancer.activate(balanced, 0)
    assert balancer.due_at is None  # nothing to do
    moved = PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=1)
    after = image_of([moved], balanced, 100)
    balancer.after_write(after, [PartitionChangeRecord(partition_id=0, topic_id=FOO,
                                                       isr=(0, 1))], 5_000)
    assert balancer.due_at is None  # an ISR change moves no leader
    back = PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=0)
    balancer.after_write(balanced, [back], 5_000)
    assert balancer.due_at is None  # a leader back on its preferred replica needs no check
    balancer.after_write(after, [moved], 5_000)
    assert balancer.due_at == 305_000
    # the preferred replica is fenced at the check: nothing written, checked again later
    fenced = image_of(brokers(0, fenced=[0])[1:], after, 101)
    assert balancer.take_due(fenced, 305_000) == []
    assert balancer.due_at == 605_000
    assert balancer.take_due(after, 605_000) == [
        PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=0)]
    assert balancer.due_at is None
    balancer.after_write(after, [moved], 700_000)
    balancer.deactivate()
    assert balancer.due_at is None


def test_an_interval_of_zero_never_checks() -> None:
    balancer = LeaderBalancer(0)
    image = _image(((0, 1), (0, 1), 1))
    balancer.activate(image, 0)
    balancer.after_write(image, [PartitionChangeRecord(partition_id=0, topic_id=FOO,
                                                       leader=1)], 0)
    assert balancer.due_at is None and balancer.take_due(image, 10**9) is None


def test_a_controller_that_becomes_active_checks_the_leaders_it_finds_imbalanced() -> None:
    """A new active controller whose committed log has a leader off its preferred replica
    schedules a check an interval after it becomes active (no write is needed to trigger
    it), and the check elects the preferred leader."""
    records = (*brokers(0, 1), TopicRecord("foo", FOO),
               PartitionRecord(partition_id=0, topic_id=FOO, replicas=(0, 1), isr=(0, 1),
                               leader=1))
    storage = RaftStorage()
    storage.log.append(Batch(0, 1, records), flushed=True)
    storage.write_election(ElectionState(1, None, None))
    raft = RaftNode(0, (0,), storage, random.Random(0), 1_000)  # the only voter: leads at once
    config = ControllerConfig(noop_interval_ms=0, leader_imbalance_check_interval_ms=60_000,
                              unclean_leader_election_interval_ms=0)
    now = [1_000]
    controller = QuorumController(0, raft, random.Random(0), lambda: now[0], config=config)
    assert controller.active and controller.next_deadline() == 61_000
    now[0] = 61_000
    controller.poll(61_000)
    last = raft.log.batches[-1]
    assert last.records == (PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=0),)
    assert last.epoch == raft.epoch == 2
