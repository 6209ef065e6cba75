"""Brokers and controllers in the image, following the cases of Kafka's ``ClusterImageTest``.

Ported: three images (fence, unfence and controlled shutdown of brokers, an
unregistration, a controller registered, a broker registered again under a new
epoch); each delta and each round trip through snapshot records; a broker's
epoch, and no epoch for a broker that is not registered.

Where kraftsim differs on purpose: Kafka's second delta replays the first
delta's records again, and among them the unregistration of broker 2, which is
no longer registered. Kafka's ``ClusterDelta`` accepts that; kraftsim replays
broker records with the controller's rule (``ClusterControlManager``: the broker
must be registered with that epoch, see ``metadata/delta.py``), so that record
is refused here and the case runs without it.

Also ported: testHandleLossOfControllerRegistrations (written at metadata.version
3.6-IV2, controller registrations are lost and reported).

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_the_empty_image_round_trips); testImage1RoundTrip, testImage2RoundTrip,
testImage3RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2); testApplyDelta2 (test_delta2_gives_image3);
testBrokerEpoch and testBrokerEpochForNonExistentBroker (test_a_brokers_epoch).
"""

from __future__ import annotations

import pytest

from metadata.delta import MetadataDelta, ReplayError
from metadata.image import BrokerRegistration, ControllerRegistration, MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    MetadataRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from metadata.snapshot import image_to_records
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

PLAINTEXT = 0
IN_CONTROLLED_SHUTDOWN, SHUTDOWN_UNCHANGED = 1, 0


def plaintext(port: int) -> tuple[BrokerEndpoint, ...]:
    return (BrokerEndpoint("PLAINTEXT", "localhost", port, PLAINTEXT),)


FOO_FEATURE = (BrokerFeature("foo", 1, 3),)


def broker(broker_id: int, epoch: int, incarnation: str, port: int, *, fenced: bool,
           features: tuple[BrokerFeature, ...] = FOO_FEATURE, rack: str | None = None,
           shutdown: bool = False, migrating: bool = False) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id=broker_id, incarnation_id=incarnation,
                                broker_epoch=epoch, end_points=plaintext(port),
                                features=features, rack=rack, fenced=fenced,
                                in_controlled_shutdown=shutdown, is_migrating_zk_broker=migrating)


CONTROLLER_1000 = RegisterControllerRecord(controller_id=1000,
                                           incarnation_id="9ABu6HEgRuS-hjHLgC4cHw",
                                           end_points=plaintext(19092))
CONTROLLER_1001 = RegisterControllerRecord(controller_id=1001,
                                           incarnation_id="FdEHF-IqScKfYyjZ1CjfNQ",
                                           zk_migration_ready=True, end_points=plaintext(19093))
B0, B1 = "vZKYST0pSA2HO5x_6hoO2Q", "U52uRe20RsGI0RvpcTx33Q"

IMAGE1 = image_of([
    broker(0, 1000, B0, 9092, fenced=True),
    broker(1, 1001, B1, 9093, fenced=False),
    broker(2, 123, "hr4TVh3YQiu3p16Awkka6w", 9094, fenced=False, features=(), rack="arack"),
    CONTROLLER_1000,
])

DELTA1_RECORDS: list[MetadataRecord] = [
    UnfenceBrokerRecord(id=0, epoch=1000),
    FenceBrokerRecord(id=1, epoch=1001),
    BrokerRegistrationChangeRecord(broker_id=0, broker_epoch=1000,
                                   in_controlled_shutdown=IN_CONTROLLED_SHUTDOWN),
    UnregisterBrokerRecord(broker_id=2, broker_epoch=123),
    CONTROLLER_1001,
]

IMAGE2 = image_of([
    broker(0, 1000, B0, 9092, fenced=False, shutdown=True),
    broker(1, 1001, B1, 9093, fenced=True),
    CONTROLLER_1000, CONTROLLER_1001,
])

B2_AGAIN = broker(2, 1002, "Am5Yse7GQxaw0b2alM74bP", 9094, fenced=True, rack="rack3",
                  migrating=True, features=(BrokerFeature(METADATA_VERSION_FEATURE,
                                                          LEVELS["3.3-IV3"],
                                                          LEVELS["3.6-IV0"]),))
DELTA2_RECORDS: list[MetadataRecord] = [
    *[r for r in DELTA1_RECORDS if not isinstance(r, UnregisterBrokerRecord)],
    FenceBrokerRecord(id=0, epoch=1000),
    UnfenceBrokerRecord(id=1, epoch=1001),
    BrokerRegistrationChangeRecord(broker_id=0, broker_epoch=1000,
                                   in_controlled_shutdown=SHUTDOWN_UNCHANGED),
    B2_AGAIN,
]

IMAGE3 = image_of([
    broker(0, 1000, B0, 9092, fenced=True, shutdown=True),
    broker(1, 1001, B1, 9093, fenced=False),
    B2_AGAIN,
    CONTROLLER_1000, CONTROLLER_1001,
])


@pytest.mark.parametrize("image", [IMAGE1, IMAGE2, IMAGE3], ids=["image1", "image2", "image3"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    assert IMAGE2.brokers[0] == BrokerRegistration(
        broker_id=0, epoch=1000, incarnation_id=B0, endpoints=plaintext(9092),
        features=FOO_FEATURE, fenced=False, in_controlled_shutdown=True)
    assert IMAGE2.controllers[1001] == ControllerRegistration(
        controller_id=1001, incarnation_id="FdEHF-IqScKfYyjZ1CjfNQ", zk_migration_ready=True,
        endpoints=plaintext(19093))
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])


def test_delta2_gives_image3() -> None:
    """A shutdown change of NONE leaves broker 0 in controlled shutdown; a broker registered
    again replaces its old registration and starts fenced."""
    assert image_of(DELTA2_RECORDS, IMAGE2) == IMAGE3
    assert_every_split_reaches(IMAGE3, [*image_to_records(IMAGE2), *DELTA2_RECORDS])


def test_unregistering_a_broker_that_is_gone_is_refused() -> None:
    """Kafka's ClusterDelta would accept it (its ClusterControlManager would not)."""
    delta = MetadataDelta(IMAGE2)
    with pytest.raises(ReplayError, match="broker 2 is not registered"):
        delta.replay(UnregisterBrokerRecord(broker_id=2, broker_epoch=123))


def test_a_brokers_epoch() -> None:
    assert IMAGE1.brokers[2].epoch == 123
    assert IMAGE1.brokers.get(20) is None


def test_below_3_7_iv0_controller_registrations_are_lost() -> None:
    image = image_of([CONTROLLER_1000])
    losses: list[str] = []
    written = image_to_records(image, LEVELS["3.6-IV2"], losses.append)
    assert losses == ["controller registration data"]
    assert not any(isinstance(r, RegisterControllerRecord) for r in written)
    assert CONTROLLER_1000 in image_to_records(image, LEVELS["3.7-IV0"], losses.append)
    assert losses == ["controller registration data"]


def test_the_empty_image_round_trips() -> None:
    """testEmptyImageRoundTrip: no broker or controller registration writes no record, and
    nothing read back is the empty image."""
    assert image_to_records(MetadataImage.EMPTY) == []
    assert_round_trip(MetadataImage.EMPTY)
