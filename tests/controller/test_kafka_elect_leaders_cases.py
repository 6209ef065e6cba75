"""ElectLeaders, following Kafka's ReplicationControlManagerTest.testElectPreferredLeaders
(its topic built from PartitionRecords, as kraftsim has no manual assignment), and
unclean elections on request (testElectUncleanLeaders_WithoutElr's rules: a clean leader
first, else the first active replica alone in the ISR, whatever the topic's config) and
by the periodic check (testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions)."""

from __future__ import annotations

import msgspec
import pytest

from controller.errors import ApiError
from controller.operations import ElectLeaders, FenceBroker, TopicPartitions, UnfenceBroker
from controller.unclean_elections import leaderless, unclean_records
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import NO_LEADER, RECOVERING, MetadataImage
from metadata.schema import (
    ConfigRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from metadata.versions import LEVELS
from tests.controller.kafka_cases import alter_partition

from .kafka_cases import brokers, generate, image_of, run

FOO = "FOOFOOFOOFOOFOOFOOFOOA"
NOT_NEEDED = ("ELECTION_NOT_NEEDED", "Leader election not needed for topic partition.")
NOT_AVAILABLE = ("PREFERRED_LEADER_NOT_AVAILABLE", "The preferred leader was not available.")
NONE = ("NONE", None)


def _topic(base: MetadataImage, *parts: tuple[tuple[int, ...], tuple[int, ...], int]
           ) -> MetadataImage:
    """Topic "foo" with partitions of (replicas, isr, leader)."""
    records: list[MetadataRecord] = [TopicRecord("foo", FOO)]
    records += [PartitionRecord(partition_id=p, topic_id=FOO, replicas=r, isr=i, leader=leader,
                                leader_epoch=0, partition_epoch=0)
                for p, (r, i, leader) in enumerate(parts)]
    return image_of(records, base)


def _results(response: object) -> dict[tuple[str, int], tuple[str, str | None]]:
    assert isinstance(response, dict)
    return {(t["topic"], p["partition"]): (p["error"], p["message"])
            for t in response["results"] for p in t["partitions"]}


REQUEST = ElectLeaders("PREFERRED", (TopicPartitions("foo", (0, 1, 2)),
                                     TopicPartitions("bar", (0, 1))))


def test_preferred_leaders_are_elected_once_they_are_in_sync_and_active() -> None:
    # brokers 0 (fenced) and 1 (shutting down) are not active: the partitions assigned
    # [1, 2, 3], [2, 3, 4] and [0, 2, 1] were created with ISRs of their active replicas
    base = image_of(brokers(0, 1, 2, 3, 4, fenced=[0], shutting=[1]))
    image = _topic(base, ((1, 2, 3), (2, 3), 2), ((2, 3, 4), (2, 3, 4), 2), ((0, 2, 1), (2,), 2))
    records, response = generate(REQUEST, image)
    unknown = ("UNKNOWN_TOPIC_OR_PARTITION", "No such topic as bar")
    assert _results(response) == {("foo", 0): NOT_AVAILABLE, ("foo", 1): NOT_NEEDED,
                                  ("foo", 2): NOT_AVAILABLE, ("bar", 0): unknown,
                                  ("bar", 1): unknown}
    assert records == []
    # broker 1 registers again and 0 and 1 are unfenced; the leader of 0 and 2 widens
    # their ISRs to every replica
    image = image_of([RegisterBrokerRecord(1, "inc-1b", broker_epoch=101),
                      UnfenceBrokerRecord(0, 100), UnfenceBrokerRecord(1, 101)], image)
    for pid, isr in ((0, (1, 2, 3)), (2, (0, 2, 1))):
        image, _, _ = run(alter_partition(2, 100, FOO, pid, 0, 0, isr), image)
    records, response = generate(REQUEST, image)
    assert _results(response)[("foo", 0)] == NONE
    assert _results(response)[("foo", 1)] == NOT_NEEDED
    assert _results(response)[("foo", 2)] == NONE
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=1),
                       PartitionChangeRecord(partition_id=2, topic_id=FOO, leader=0)]


def test_a_preferred_election_keeps_a_valid_leader_or_takes_the_next_valid_replica() -> None:
    base = image_of(brokers(0, 1, 2, fenced=[0]))
    # the preferred replica is fenced: leader 2 stays (no record)
    image = _topic(base, ((0, 1, 2), (1, 2), 2))
    records, response = generate(ElectLeaders(), image)
    assert records == [] and _results(response) == {("foo", 0): NOT_AVAILABLE}
    # the leader cannot lead (not in the ISR): the next valid replica does
    image = _topic(base, ((0, 1, 2), (1,), 2))
    records, _ = generate(ElectLeaders(), image)
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=FOO, leader=1)]


def test_every_partition_leaves_out_those_needing_no_election() -> None:
    image = _topic(image_of(brokers(0, 1, 2)), ((0, 1), (0, 1), 0), ((1, 2), (1, 2), 2))
    records, response = generate(ElectLeaders(), image)
    assert _results(response) == {("foo", 1): NONE}
    assert records == [PartitionChangeRecord(partition_id=1, topic_id=FOO, leader=1)]
    assert ElectLeaders().describe() == "ElectLeaders(PREFERRED every partition)"
    # every partition is an election to write, not the answer at once that no partition is
    assert ElectLeaders().early_result() is None
    early = ElectLeaders(partitions=()).early_result()
    assert early is not None and early.response == {"electionType": "PREFERRED",
                                                    "results": []}
    assert REQUEST.describe() == "ElectLeaders(PREFERRED foo-0 foo-1 foo-2 bar-0 bar-1)"


def test_an_unclean_election_leads_a_leaderless_partition_whatever_the_config() -> None:
    base = image_of(brokers(0, 1, 2, 3, fenced=[0]))
    image = _topic(base, ((0, 1), (0,), NO_LEADER), ((0, 2), (0, 2), NO_LEADER),
                   ((3, 2), (3,), 3), ((0,), (0,), NO_LEADER))
    records, response = generate(ElectLeaders("UNCLEAN", (TopicPartitions("foo", (0, 1, 2, 3,
                                                                                   9)),)),
                                 image)
    assert _results(response) == {
        ("foo", 0): NONE, ("foo", 1): NONE, ("foo", 2): NOT_NEEDED,
        ("foo", 3): ("ELIGIBLE_LEADERS_NOT_AVAILABLE",
                     "Eligible topic partition leaders are not available."),
        ("foo", 9): ("UNKNOWN_TOPIC_OR_PARTITION", "No such partition as foo-9")}
    # partition 0: no clean leader, so broker 1 alone, RECOVERING; partition 1: clean
    assert records == [
        PartitionChangeRecord(partition_id=0, topic_id=FOO, isr=(1,), leader=1,
                              leader_recovery_state=RECOVERING),
        PartitionChangeRecord(partition_id=1, topic_id=FOO, leader=2)]


def test_an_unknown_election_type_is_refused() -> None:
    with pytest.raises(ApiError) as refused:
        generate(ElectLeaders("RANDOM"), image_of(brokers(0)))
    assert (refused.value.code, refused.value.message) == ("INVALID_REQUEST",
                                                           "Unknown election type RANDOM")


def _leaders(image: MetadataImage) -> dict[int, tuple[int, tuple[int, ...]]]:
    return {pid: (reg.leader, reg.isr) for pid, reg in image.topics_by_id[FOO].partitions.items()}


@pytest.mark.parametrize("every_partition", [False, True])
def test_unclean_election_without_elr(every_partition: bool) -> None:
    """testElectUncleanLeaders_WithoutElr: with brokers 1-3 fenced partition 0 has no
    leader and its ISR [1]; once broker 2 is back, an unclean election makes it leader
    alone, and does not move partition 1's leadership to its preferred replica 2."""
    image = _topic(image_of(brokers(0, 1, 2, 3, 4, level=LEVELS["3.6-IV1"])),
                   ((1, 2, 3), (1, 2, 3), 1), ((2, 3, 4), (2, 3, 4), 2), ((0, 2, 1), (0, 2, 1), 0))
    for broker in (2, 3, 1):
        image, _, _ = run(FenceBroker(broker), image, offset=image.offset + 1)
    assert _leaders(image) == {0: (NO_LEADER, (1,)), 1: (4, (4,)), 2: (0, (0,))}
    request = ElectLeaders("UNCLEAN", None if every_partition else
                           (TopicPartitions("foo", (0, 1, 2)),))
    records, response = generate(request, image)
    not_available = ("ELIGIBLE_LEADERS_NOT_AVAILABLE",
                     "Eligible topic partition leaders are not available.")
    expected = {("foo", 0): not_available} if every_partition else {
        ("foo", 0): not_available, ("foo", 1): NOT_NEEDED, ("foo", 2): NOT_NEEDED}
    assert records == [] and _results(response) == expected
    image, _, _ = run(UnfenceBroker(2), image, offset=image.offset + 1)
    one = image.topics_by_id[FOO].partitions[1]
    image, _, _ = run(alter_partition(4, 100, FOO, 1, one.leader_epoch, one.partition_epoch,
                                       (2, 4)), image, offset=image.offset + 1)
    records, response = generate(request, image)
    assert [(r.partition_id, r.leader, r.isr) for r in records
            if isinstance(r, PartitionChangeRecord)] == [(0, 2, (2,))]
    image = image_of(records, image, image.offset + 1)
    assert _leaders(image) == {0: (2, (2,)), 1: (4, (2, 4)), 2: (0, (0,))}
    assert _results(response)[("foo", 0)] == NONE


@pytest.mark.parametrize("unclean", ["none", "static", "dynamic_cluster", "dynamic_topic"])
def test_unclean_elections_for_leaderless_partitions(unclean: str) -> None:
    """testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions: with every broker
    fenced the partitions have no leader and ISR [4]; broker 2 back, an unfence elects it
    uncleanly at once where unclean election was already on ("static": kraftsim's cluster
    default, set before), else the periodic check does once it is turned on (the cluster
    default or the topic's config). The "dynamic_node" case (the controller's own node
    config) has no counterpart: kraftsim's controllers read the cluster default only."""
    cluster_default = ConfigRecord(resource_type=BROKER_RESOURCE, resource_name="",
                                   name="unclean.leader.election.enable", value="true")
    base = image_of([*brokers(0, 1, 2, 3, 4), *([cluster_default] if unclean == "static"
                                                else [])])
    image = _topic(base, ((1, 2, 4), (1, 2, 4), 1), ((1, 3, 4), (1, 3, 4), 1),
                   ((0, 2, 4), (0, 2, 4), 0))
    assert next(leaderless(image), None) is None
    for broker in (0, 1, 2, 3, 4):
        image, _, _ = run(FenceBroker(broker), image, offset=image.offset + 1)
    assert _leaders(image) == {pid: (NO_LEADER, (4,)) for pid in (0, 1, 2)}
    image, _, _ = run(UnfenceBroker(2), image, offset=image.offset + 1)
    elected = {0: (2, (2,)), 1: (NO_LEADER, (4,)), 2: (2, (2,))}
    assert _leaders(image) == (elected if unclean == "static" else
                               {pid: (NO_LEADER, (4,)) for pid in (0, 1, 2)})
    if unclean == "dynamic_cluster":
        image = image_of([cluster_default], image, image.offset + 1)
    elif unclean == "dynamic_topic":
        image = image_of([msgspec.structs.replace(
            cluster_default, resource_type=TOPIC_RESOURCE, resource_name="foo")],
            image, image.offset + 1)
    records, remaining = unclean_records(image)
    assert remaining  # partition 1 stays leaderless: checked again an interval later
    if unclean in ("none", "static"):
        assert records == []
    else:
        assert len(records) == 2
        assert _leaders(image_of(records, image, image.offset + 1)) == elected


def test_a_preferred_election_does_not_trigger_an_unclean_one() -> None:
    """testPreferredElectionDoesNotTriggerUncleanElection: partition [1, 2, 3] with no
    leader and ISR [1]; broker 2 back and unclean election allowed, a PREFERRED election
    still writes nothing (its preferred replica is not available)."""
    image = _topic(image_of(brokers(1, 2, 3, 4)), ((1, 2, 3), (1, 2, 3), 1))
    for broker in (2, 3, 1):
        image, _, _ = run(FenceBroker(broker), image, offset=image.offset + 1)
    image, _, _ = run(UnfenceBroker(2), image, offset=image.offset + 1)
    assert _leaders(image) == {0: (NO_LEADER, (1,))}
    image = image_of([ConfigRecord(resource_type=TOPIC_RESOURCE, resource_name="foo",
                                   name="unclean.leader.election.enable", value="true")],
                     image, image.offset + 1)
    records, response = generate(ElectLeaders("PREFERRED", (TopicPartitions("foo", (0,)),)),
                                 image)
    assert records == []
    assert _results(response) == {("foo", 0): NOT_AVAILABLE}
