"""Broker and controller registrations, following Kafka's ``BrokerRegistrationTest``,
``BrokerRegistrationFencingChangeTest``, ``BrokerRegistrationInControlledShutdownChangeTest``
and ``ControllerRegistrationTest``.

kraftsim has no registration builder: a registration is what a RegisterBrokerRecord
(RegisterControllerRecord) makes when replayed, and a BrokerRegistrationChangeRecord's
``fenced`` and ``in_controlled_shutdown`` bytes stand for Kafka's two change enums. So the
cases are written as replays: the registrations' values and equality, the record round
trip (image -> snapshot records -> image), a broker's node on a listener (the broker's
metadata cache), its directories in Kafka's Uuid order and which of them are online, and
the meaning of each change value, unknown ones refused.

Not ported:
- ``testToString`` (all four classes' text forms): Java's ``toString``; kraftsim's shell
  prints registrations as its own node tree.
- ``testToNode`` for a fenced broker: Kafka's ``BrokerRegistration.node`` ignores fencing;
  kraftsim only answers a node through the metadata cache, which names alive brokers
  alone (ported for the unfenced ones).

The change enums' ``testValues``, ``testAsBoolean`` and ``testValueRoundTrip`` are
ported as replays: each value's effect, and any other value refused.
"""

from __future__ import annotations

import pytest

from broker.metadata_cache import (
    alive_broker_node,
    offline_replicas,
)
from metadata.delta import ReplayError
from metadata.image import ControllerRegistration, MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    MetadataRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    TopicRecord,
)
from metadata.snapshot import image_to_records
from metadata.uuids import LOST_DIRECTORY, MIGRATING_DIRECTORY, UNASSIGNED_DIRECTORY, sorted_uuids
from tests.metadata.kafka_image_cases import assert_round_trip, image_of

SSL = 1  # Kafka's SecurityProtocol id


def _internal(port: int) -> tuple[BrokerEndpoint, ...]:
    return (BrokerEndpoint("INTERNAL", "localhost", port),)


BROKERS: list[MetadataRecord] = [
    RegisterBrokerRecord(broker_id=0, incarnation_id="pc1GhUlBS92cGGaKXl6ipw", broker_epoch=0,
                         end_points=_internal(9090), features=(BrokerFeature("foo", 1, 2),),
                         fenced=False),
    RegisterBrokerRecord(broker_id=1, incarnation_id="3MfdxWlNSn2UDYsmDP1pYg", broker_epoch=0,
                         end_points=_internal(9091), features=(BrokerFeature("foo", 1, 2),),
                         fenced=True),
    RegisterBrokerRecord(broker_id=2, incarnation_id="eY7oaG1RREie5Kk9uy1l6g", broker_epoch=0,
                         end_points=_internal(9092),
                         features=(BrokerFeature("foo", 2, 3), BrokerFeature("bar", 1, 4)),
                         rack="myrack", fenced=False, in_controlled_shutdown=True),
    RegisterBrokerRecord(broker_id=3, incarnation_id="1t8VyWx2TCSTpUWuqj-FOw", broker_epoch=0,
                         end_points=_internal(9093),
                         features=(BrokerFeature("metadata.version", 7, 7),),
                         fenced=False, in_controlled_shutdown=True, is_migrating_zk_broker=True,
                         log_dirs=("r4HpEsMuST6nQ4rznIEJVA",)),
]
IMAGE = image_of(BROKERS)


def _controller(controller_id: int, incarnation: str, ready: bool) -> RegisterControllerRecord:
    return RegisterControllerRecord(
        controller_id=controller_id, incarnation_id=incarnation, zk_migration_ready=ready,
        end_points=(BrokerEndpoint("PLAINTEXT", "localhost", 9107 + controller_id),
                    BrokerEndpoint("SSL", "localhost", 9207 + controller_id, SSL)),
        features=(BrokerFeature("metadata.version", 1, 10),))


CONTROLLERS: list[MetadataRecord] = [
    _controller(0, "ycRmGrOFQru7HXf6fOybZQ", True),
    _controller(1, "ubT_wuD6R3uopZ_lV76dQg", True),
    _controller(2, "muQS341gRIeNh9Ps7reDSw", False),
]


def test_registrations_hold_their_values_and_differ_from_each_other() -> None:
    """Kafka's BrokerRegistrationTest.testValues and testEquals."""
    brokers = [IMAGE.brokers[b] for b in range(4)]
    assert [b.broker_id for b in brokers] == [0, 1, 2, 3]
    assert [(b.fenced, b.in_controlled_shutdown) for b in brokers] == [
        (False, False), (True, False), (False, True), (False, True)]
    assert brokers[2].rack == "myrack" and brokers[3].is_migrating_zk_broker
    for i, left in enumerate(brokers):
        for j, right in enumerate(brokers):
            assert (left == right) == (i == j)
    assert image_of(BROKERS).brokers[2] == brokers[2]


def test_registrations_round_trip_through_their_records() -> None:
    """Kafka's BrokerRegistrationTest.testFromRecordAndToRecord: the record written from a
    registration makes the same registration, which writes the same record again."""
    written = image_to_records(IMAGE)
    again = image_of(written)
    assert again.brokers == IMAGE.brokers
    assert image_to_records(again) == written
    assert_round_trip(IMAGE)


def test_a_broker_names_its_node_on_a_listener_it_has() -> None:
    """Kafka's BrokerRegistrationTest.testToNode, for the unfenced brokers (the metadata
    cache names no node for a fenced one)."""
    assert alive_broker_node(IMAGE, 0, "NONEXISTENT") is None
    for broker_id in (0, 2, 3):
        node = alive_broker_node(IMAGE, broker_id, "INTERNAL")
        assert node is not None and (node.host, node.port) == ("localhost", 9090 + broker_id)
    assert IMAGE.brokers[2].rack == "myrack"
    assert alive_broker_node(IMAGE, 1, "INTERNAL") is None


SORTED_DIRECTORIES = ("3MWIBL9NR4eXhtdfBVA7Bw", "JhYia5HRTLihf2FFJVxopQ",
                      "LWZsWPBrQruOMMrnEBj7bw", "OpIJIaO6RKaOGvHlNmOEhA",
                      "SZQIVeLMQGiNi68StNSNZA", "VNetSHnySxSbvjwKrBzpkw")
GIVEN_DIRECTORIES = ("3MWIBL9NR4eXhtdfBVA7Bw", "SZQIVeLMQGiNi68StNSNZA",
                     "LWZsWPBrQruOMMrnEBj7bw", "OpIJIaO6RKaOGvHlNmOEhA",
                     "JhYia5HRTLihf2FFJVxopQ", "VNetSHnySxSbvjwKrBzpkw")


def test_directories_are_sorted() -> None:
    """Kafka's BrokerRegistrationTest.testDirectoriesAreSorted: a registration holds its
    directories in Kafka's Uuid order (signed high then low halves: '3...' sorts first,
    its high bit being set), whatever order the record gave them in."""
    image = image_of([RegisterBrokerRecord(broker_id=0, incarnation_id="ik32HZbLTW6ulw1yyrC8jQ",
                                           end_points=_internal(9090),
                                           log_dirs=GIVEN_DIRECTORIES)])
    assert image.brokers[0].directories == SORTED_DIRECTORIES
    assert image_of([RegisterBrokerRecord(broker_id=0, incarnation_id="ik32HZbLTW6ulw1yyrC8jQ",
                                          end_points=_internal(9090),
                                          log_dirs=SORTED_DIRECTORIES)]) == image
    changed = image_of([BrokerRegistrationChangeRecord(0, 0, log_dirs=GIVEN_DIRECTORIES[::-1])],
                       image_of([RegisterBrokerRecord(broker_id=0, end_points=_internal(9090),
                                                      log_dirs=("dir1G6EtuR1OTdAzFw1AFQ",))]))
    assert changed.brokers[0].directories == SORTED_DIRECTORIES
    assert sorted_uuids(("b", "a")) == ("b", "a")  # names that are no Uuids stay as given


ONLINE = ("dir1G6EtuR1OTdAzFw1AFQ", "dir2gwpjTvKC7sMfcLNd8g", "dir3Ir8mQ0mMxfv93RITDA")


@pytest.mark.parametrize(("directory", "online"), [
    *((d, True) for d in ONLINE),
    (UNASSIGNED_DIRECTORY, True),
    (MIGRATING_DIRECTORY, True),
    ("sOwN7HH7S1maxpU1WzlzXg", False),
    (LOST_DIRECTORY, False),
])
def test_a_replica_is_online_in_a_directory_the_broker_has_online(directory: str,
                                                                  online: bool) -> None:
    """Kafka's BrokerRegistrationTest.testHasOnlineDir (and DirectoryIdTest.testIsOnline,
    also in test_kafka_directory_id_cases.py), through the metadata cache's
    offline replicas: a replica assigned to a directory of the broker's registration (or
    to no directory yet) is online; one in an unknown or lost directory is not."""
    image = image_of([
        RegisterBrokerRecord(broker_id=0, incarnation_id="m6CiJvfITZeKVC6UuhlZew",
                             end_points=(BrokerEndpoint("PLAINTEXT", "localhost", 9090),),
                             fenced=False, log_dirs=ONLINE),
        TopicRecord("foo", "ThIaNwRnSM2Nt9Mx1v0RvA"),
        PartitionRecord(partition_id=0, topic_id="ThIaNwRnSM2Nt9Mx1v0RvA", replicas=(0,),
                        isr=(0,), leader=0, directories=(directory,)),
    ])
    partition = image.topics_by_id["ThIaNwRnSM2Nt9Mx1v0RvA"].partitions[0]
    assert offline_replicas(image, partition) == (() if online else (0,))


def _changed(**change: int) -> MetadataImage:
    return image_of([BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, **change)],
                    IMAGE)


def test_the_fencing_change_values() -> None:
    """Kafka's BrokerRegistrationFencingChangeTest.testValues and testAsBoolean: 1 fences,
    -1 unfences, 0 leaves the broker as it was."""
    assert _changed(fenced=-1).brokers[1].fenced is False
    assert _changed(fenced=0).brokers[1].fenced is True
    unfenced = image_of([BrokerRegistrationChangeRecord(1, 0, fenced=-1)], IMAGE)
    assert image_of([BrokerRegistrationChangeRecord(1, 0, fenced=1)],
                    unfenced).brokers[1].fenced is True
    assert image_of([BrokerRegistrationChangeRecord(1, 0, fenced=0)],
                    unfenced).brokers[1].fenced is False


def test_the_controlled_shutdown_change_values() -> None:
    """Kafka's BrokerRegistrationInControlledShutdownChangeTest.testValues and
    testAsBoolean: 1 marks the broker in controlled shutdown, 0 changes nothing."""
    assert _changed(in_controlled_shutdown=1).brokers[1].in_controlled_shutdown is True
    assert _changed(in_controlled_shutdown=0).brokers[1].in_controlled_shutdown is False
    shutting = IMAGE.brokers[2]
    assert image_of([BrokerRegistrationChangeRecord(2, 0, in_controlled_shutdown=0)],
                    IMAGE).brokers[2] == shutting


@pytest.mark.parametrize(("change", "field"), [
    ({"fenced": 2}, "fenced field: 2"),
    ({"fenced": -2}, "fenced field: -2"),
    ({"in_controlled_shutdown": -1}, "inControlledShutdown field: -1"),
    ({"in_controlled_shutdown": 2}, "inControlledShutdown field: 2"),
])
def test_a_change_value_no_enum_has_cannot_be_replayed(change: dict[str, int],
                                                       field: str) -> None:
    """Kafka's testValueRoundTrip of both change enums: only their values map to a change,
    and Kafka's replay (ClusterControlManager, ClusterDelta) refuses a record with any
    other. kraftsim ignored such a value (an unknown ``fenced`` left the broker as it was,
    a negative ``in_controlled_shutdown`` too)."""
    with pytest.raises(ReplayError, match=f"unknown value for {field}"):
        _changed(**change)


def test_an_empty_directory_list_in_a_change_changes_nothing() -> None:
    """Kafka's replay of a change takes an empty LogDirs list (the field's default) as no
    change of directories, as an absent one; kraftsim emptied the broker's directories."""
    before = IMAGE.brokers[3]
    assert image_of([BrokerRegistrationChangeRecord(3, 0, log_dirs=())],
                    IMAGE).brokers[3] == before


def test_controller_registrations_hold_their_values_and_round_trip() -> None:
    """Kafka's ControllerRegistrationTest.testValues, testEquals and
    testFromRecordAndToRecord."""
    image = image_of(CONTROLLERS)
    controllers = [image.controllers[c] for c in range(3)]
    assert [c.controller_id for c in controllers] == [0, 1, 2]
    assert [c.zk_migration_ready for c in controllers] == [True, True, False]
    for i, left in enumerate(controllers):
        for j, right in enumerate(controllers):
            assert (left == right) == (i == j)
    written = image_to_records(image)
    assert [r for r in written if isinstance(r, RegisterControllerRecord)] == CONTROLLERS
    assert image_of(written).controllers == image.controllers
    assert_round_trip(image)


def test_a_controller_has_a_node_on_each_of_its_listeners() -> None:
    """Kafka's ControllerRegistrationTest.testToNode: a controller's endpoint per listener,
    none on a listener it lacks."""
    controller: ControllerRegistration = image_of(CONTROLLERS).controllers[0]
    ports = {e.name: (e.host, e.port) for e in controller.endpoints}
    assert ports == {"PLAINTEXT": ("localhost", 9107), "SSL": ("localhost", 9207)}
    assert "NONEXISTENT" not in ports


def test_a_name_given_twice_keeps_its_last_listener_and_feature() -> None:
    """Kafka's registrations keep listeners and features in maps keyed by name (its
    BrokerRegistration and ControllerRegistration from their records): a name a record
    gives twice keeps the last entry. kraftsim kept both."""
    broker = RegisterBrokerRecord(
        broker_id=7, incarnation_id="pc1GhUlBS92cGGaKXl6ipw", broker_epoch=0,
        end_points=(BrokerEndpoint("INTERNAL", "a", 9090), BrokerEndpoint("EXTERNAL", "b", 1),
                    BrokerEndpoint("INTERNAL", "c", 9091)),
        features=(BrokerFeature("foo", 1, 2), BrokerFeature("foo", 3, 4)), fenced=False)
    controller = RegisterControllerRecord(
        controller_id=9, incarnation_id="ycRmGrOFQru7HXf6fOybZQ",
        end_points=(BrokerEndpoint("CONTROLLER", "a", 1), BrokerEndpoint("CONTROLLER", "b", 2)),
        features=(BrokerFeature("metadata.version", 1, 10),
                  BrokerFeature("metadata.version", 1, 20)))
    image = image_of([broker, controller])
    registered = image.brokers[7]
    assert registered.endpoints == (BrokerEndpoint("EXTERNAL", "b", 1),
                                    BrokerEndpoint("INTERNAL", "c", 9091))
    assert registered.features == (BrokerFeature("foo", 3, 4),)
    assert image.controllers[9].endpoints == (BrokerEndpoint("CONTROLLER", "b", 2),)
    assert image.controllers[9].features == (BrokerFeature("metadata.version", 1, 20),)
