"""The periodic unclean leader elections of the active controller
(controller/unclean_elections.py, Kafka's maybeElectUncleanLeaders with
unclean.leader.election.interval.ms): which partitions are leaderless, which a
check elects, and when the next check comes."""

from __future__ import annotations

from controller.periodic_elections import IMMEDIATE_MS, MAX_ELECTIONS_PER_IMBALANCE
from controller.unclean_elections import UncleanElector, leaderless, unclean_records
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import NO_LEADER, RECOVERING, MetadataImage
from metadata.schema import (
    ConfigRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    TopicRecord,
)

from .kafka_cases import brokers, image_of

FOO = "FOOFOOFOOFOOFOOFOOFOOA"
BAR = "BARBARBARBARBARBARBARA"
UNCLEAN = "unclean.leader.election.enable"


def _image(*parts: tuple[tuple[int, ...], tuple[int, ...], int], fenced: tuple[int, ...] = (),
           configs: tuple[ConfigRecord, ...] = ()) -> MetadataImage:
    """Brokers 0-2; topic "foo" with partitions of (replicas, isr, leader); topic "bar"
    with one leaderless partition whose ISR (broker 0) is fenced."""
    records: list[MetadataRecord] = [*brokers(0, 1, 2, fenced=fenced), TopicRecord("foo", FOO),
                                     TopicRecord("bar", BAR)]
    records += [PartitionRecord(partition_id=p, topic_id=FOO, replicas=r, isr=i, leader=leader)
                for p, (r, i, leader) in enumerate(parts)]
    records.append(PartitionRecord(partition_id=0, topic_id=BAR, replicas=(0, 1), isr=(0,),
                                   leader=NO_LEADER))
    return image_of([*records, *configs])


def _topic_config(name: str, value: str) -> ConfigRecord:
    return ConfigRecord(resource_type=TOPIC_RESOURCE, resource_name=name, name=UNCLEAN,
                        value=value)


def test_a_check_elects_uncleanly_only_where_the_topic_allows_it() -> None:
    parts = (((0, 1), (0,), NO_LEADER), ((1, 2), (1, 2), 1), ((0, 2), (0, 2), NO_LEADER),
             ((0,), (0,), NO_LEADER))
    image = _image(*parts, fenced=(0,))
    assert [(t, p) for t, p, _ in leaderless(image)] == [(BAR, 0), (FOO, 0), (FOO, 2),
                                                          (FOO, 3)]
    assert unclean_records(image) == ([], True)  # unclean election is off by default
    allowed = _image(*parts, fenced=(0,), configs=(_topic_config("foo", "true"),))
    records, remaining = unclean_records(allowed)
    # foo-0: broker 1 is not in the ISR: elected uncleanly, alone in the ISR, RECOVERING;
    # foo-2: broker 2 is in the ISR and active: a clean leader comes first;
    # foo-3: no replica is active; bar-0: its topic does not allow it
    assert records == [
        PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,), leader=1,
                              leader_recovery_state=RECOVERING),
        PartitionChangeRecord(partition_id=2, topic_id=FOO, leader=2)]
    assert remaining


def test_the_cluster_default_applies_where_the_topic_says_nothing() -> None:
    default = ConfigRecord(resource_type=BROKER_RESOURCE, resource_name="", name=UNCLEAN,
                           value="true")
    image = _image(fenced=(0,), configs=(default,))
    assert unclean_records(image) == ([PartitionChangeRecord(
        partition_id=0, topic_id=BAR, isr=(1,), leader=1,
        leader_recovery_state=RECOVERING)], False)
    overridden = _image(fenced=(0,), configs=(default, _topic_config("bar", "false")))
    assert unclean_records(overridden) == ([], True)


def test_a_check_comes_while_partitions_are_leaderless() -> None:
    image = _image(((0, 1), (0, 1), 1))
    elector = UncleanElector(300_000)
    elector.activate(image, 1_000)  # bar-0 is leaderless already
    assert elector.due_at == 301_000
    assert elector.take_due(image, 300_999) is None
    assert elector.take_due(image, 301_000) == []  # not allowed: checked again later
    assert elector.due_at == 601_000
    allowed = image_of([_topic_config("bar", "true")], image, 100)
    assert elector.take_due(allowed, 601_000) == [
        PartitionChangeRecord(partition_id=0, topic_id=BAR, leader=0)]
    assert elector.due_at is None  # nothing left leaderless
    elector.deactivate()
    assert elector.due_at is None


def test_a_write_that_leaves_a_partition_leaderless_schedules_a_check() -> None:
    image = image_of([*brokers(0, 1, 2), TopicRecord("foo", FOO), PartitionRecord(
        partition_id=0, topic_id=FOO, replicas=(0, 1), isr=(0, 1), leader=0)])
    elector = UncleanElector(300_000)
    elector.activate(image, 0)
    assert elector.due_at is None  # every partition has a leader
    shrink = PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(0,))
    elector.after_write(image_of([shrink], image, 100), [shrink], 5_000)
    assert elector.due_at is None
    gone = PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=NO_LEADER)
    elector.after_write(image, [gone], 5_000)  # replayed: the partition still has a leader
    assert elector.due_at is None
    elector.after_write(image_of([shrink, gone], image, 100), [gone], 5_000)
    assert elector.due_at == 305_000


def test_a_check_stops_at_the_most_elections_and_the_next_comes_at_once() -> None:
    parts = [((1, 2), (0,), NO_LEADER)] * (MAX_ELECTIONS_PER_IMBALANCE + 5)
    image = _image(*parts, fenced=(0,), configs=(_topic_config("foo", "true"),))
    elector = UncleanElector(300_000)
    elector.activate(image, 0)
    records = elector.take_due(image, 300_000)
    assert records is not None and len(records) == MAX_ELECTIONS_PER_IMBALANCE
    assert elector.due_at == 300_000 + IMMEDIATE_MS


def test_a_check_elects_at_most_1000_leaders_and_the_next_comes_10_ms_later() -> None:
    """Kafka's numbers: maxElectionsPerImbalance is 1000, and ImbalanceSchedule.IMMEDIATELY
    delays the next check by 10 ms (so deferred events do not starve the queue); the same
    schedule serves unclean elections and leader balancing."""
    parts = [((1, 2), (0,), NO_LEADER)] * 1005
    image = _image(*parts, fenced=(0,), configs=(_topic_config("foo", "true"),))
    elector = UncleanElector(300_000)
    elector.activate(image, 0)
    first = elector.take_due(image, 300_000)
    assert first is not None and len(first) == 1000
    assert elector.take_due(image, 300_009) is None
    assert elector.due_at == 300_010


def test_an_interval_of_zero_never_checks() -> None:
    image = _image(configs=(_topic_config("bar", "true"),))
    elector = UncleanElector(0)
    elector.activate(image, 0)
    gone = PartitionChangeRecord(partition_id=0, topic_id=BAR, leader=NO_LEADER)
    elector.after_write(image, [gone], 0)
    assert elector.due_at is None and elector.take_due(image, 10**9) is None
