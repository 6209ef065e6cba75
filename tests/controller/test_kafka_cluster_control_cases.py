"""Broker registrations, following the cases of Kafka's ClusterControlManagerTest: the
records that fence, unfence and mark a controlled shutdown as replayed into the image
(both record generations), a registration's record, unregistering, placement over the
usable brokers, registrations in a snapshot, and the broker epoch of a re-registration
(the same incarnation keeps it, a new one takes a new epoch)."""

from __future__ import annotations

import random

import pytest

from controller.operations import RegisterBroker, UnregisterBroker
from controller.operations.placement import place_replicas
from metadata.image import MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    MetadataRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from metadata.snapshot import image_from_records, image_to_records
from metadata.versions import BROKER_REGISTRATION_CHANGE, LEVELS

from .kafka_cases import brokers, image_of, run


@pytest.mark.parametrize("level", [BROKER_REGISTRATION_CHANGE - 1, BROKER_REGISTRATION_CHANGE])
def test_fence_and_unfence_records_change_only_their_broker(level: int) -> None:
    image = image_of(brokers(1, level=level, fenced=[1]))
    assert image.brokers[1].fenced and 0 not in image.brokers
    unfence: MetadataRecord = (UnfenceBrokerRecord(1, 100) if level < BROKER_REGISTRATION_CHANGE
                               else BrokerRegistrationChangeRecord(1, 100, fenced=-1))
    fence: MetadataRecord = (FenceBrokerRecord(1, 100) if level < BROKER_REGISTRATION_CHANGE
                             else BrokerRegistrationChangeRecord(1, 100, fenced=1))
    image = image_of([unfence], image)
    assert not image.brokers[1].fenced
    image = image_of([fence], image)
    assert image.brokers[1].fenced


def test_a_registration_record_sets_fencing_and_controlled_shutdown_as_it_says() -> None:
    def registered(fenced: bool, shutting: bool) -> tuple[bool, bool]:
        broker = image_of([RegisterBrokerRecord(0, "inc-0", broker_epoch=100, fenced=fenced,
                                                in_controlled_shutdown=shutting)]).brokers[0]
        return broker.fenced, broker.in_controlled_shutdown
    assert registered(True, True) == (True, True)
    assert registered(True, False) == (True, False)
    assert registered(False, False) == (False, False)


def test_a_change_record_leaves_what_it_does_not_name() -> None:
    image = image_of(brokers(0))
    image = image_of([BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=1)], image)
    assert (image.brokers[0].fenced, image.brokers[0].in_controlled_shutdown) == (False, True)
    image = image_of([BrokerRegistrationChangeRecord(0, 100, fenced=-1)], image)
    assert (image.brokers[0].fenced, image.brokers[0].in_controlled_shutdown) == (False, True)


def test_a_new_broker_registers_fenced_with_the_offset_as_its_epoch() -> None:
    image, [record], response = run(RegisterBroker(0, incarnation_id="inc-x"),
                                    image_of(brokers(level=LEVELS["3.3-IV3"])), offset=123)
    assert record == RegisterBrokerRecord(
        0, "inc-x", broker_epoch=123, fenced=True, in_controlled_shutdown=False,
        end_points=(BrokerEndpoint("PLAINTEXT", "localhost", 9092, 0),))
    assert response == {"brokerId": 0, "brokerEpoch": 123}
    assert image.brokers[0].epoch == 123 and image.brokers[0].fenced


def test_unregistering_removes_the_registration() -> None:
    image = image_of([RegisterBrokerRecord(1, "inc-1", broker_epoch=100, rack="arack")])
    assert image.brokers[1].rack == "arack" and image.brokers[1].fenced
    image, records, _ = run(UnregisterBroker(1), image)
    assert records == [UnregisterBrokerRecord(1, 100)]
    assert 1 not in image.brokers


@pytest.mark.parametrize("usable", [3, 10])
def test_placement_takes_distinct_usable_brokers(usable: int) -> None:
    image = image_of(brokers(*range(usable)))
    rng = random.Random(5)
    for _ in range(100):
        [replicas] = list(place_replicas(image, rng, 1, 3))
        assert len(set(replicas)) == 3 and all(0 <= b < usable for b in replicas)


def test_registrations_survive_a_snapshot() -> None:
    image = image_of([*brokers(0, 1, 2, fenced=[2]),
                      BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=1)])
    records = image_to_records(image)
    registered = sorted((r.broker_id, r.fenced, r.in_controlled_shutdown) for r in records
                        if isinstance(r, RegisterBrokerRecord))
    assert registered == [(0, False, True), (1, False, False), (2, True, False)]
    assert image_from_records(records, image.offset, image.epoch).same_content(image)


@pytest.mark.parametrize("new_incarnation", [False, True])
def test_a_re_registration_keeps_the_epoch_only_for_the_same_incarnation(
        new_incarnation: bool) -> None:
    image, _, first = run(RegisterBroker(1, incarnation_id="inc-a"), MetadataImage.EMPTY,
                          offset=100)
    assert first == {"brokerId": 1, "brokerEpoch": 100}
    again = "inc-b" if new_incarnation else "inc-a"
    image, [_], second = run(RegisterBroker(1, incarnation_id=again), image, offset=111)
    epoch = 111 if new_incarnation else 100
    assert second == {"brokerId": 1, "brokerEpoch": epoch}
    assert (image.brokers[1].incarnation_id, image.brokers[1].epoch) == (again, epoch)


def test_an_amended_registration_keeps_the_broker_unfenced_or_shutting_down() -> None:
    base = image_of([*brokers(1, 2, shutting=[2])])
    for broker, state in ((1, (False, False)), (2, (False, True))):
        image, [record], _ = run(RegisterBroker(broker, incarnation_id=f"inc-{broker}"), base)
        assert isinstance(record, RegisterBrokerRecord) and record.broker_epoch == 100
        assert (image.brokers[broker].fenced,
                image.brokers[broker].in_controlled_shutdown) == state
