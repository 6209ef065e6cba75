"""Broker registrations, following the cases of Kafka's ClusterControlManagerTest: the
records that fence, unfence and mark a controlled shutdown as replayed into the image
(both record generations), a registration's record, unregistering, placement over the
usable brokers, registrations in a snapshot, the broker epoch of a re-registration
(the same incarnation keeps it, a new one takes a new epoch), and a registration's checks
(its cluster id, its log directories from 3.7-IV2, the feature levels it supports).
Controller registrations (KIP-919): testRegisterControlWithOlderMetadataVersion, and the
record ``registerController`` writes.

The cases by Kafka's names: testReplay (test_fence_and_unfence_records_change_only_their_
broker), testReplayRegisterBrokerRecord (test_a_registration_record_sets_fencing_and_
controlled_shutdown_as_it_says), testReplayBrokerRegistrationChangeRecord
(test_a_change_record_leaves_what_it_does_not_name), testUnregister
(test_unregistering_removes_the_registration), testPlaceReplicas
(test_placement_takes_distinct_usable_brokers), testRegistrationsToRecords
(test_registrations_survive_a_snapshot), testReRegistrationAndBrokerEpoch
(test_a_re_registration_keeps_the_epoch_only_for_the_same_incarnation); the others under
their own names.

Not ported: testHasOnlineDir and testDefaultDir, the directories a controller would assign
new replicas to (JBOD, KIP-858): a registration's directories are recorded and checked
(test_register_with_duplicate_directory_id), but kraftsim's controller assigns none.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from controller.errors import ApiError
from controller.operations import OperationContext, RegisterBroker, UnregisterBroker
from controller.operations.brokers import BROKER_FEATURES
from controller.operations.controllers import (
    CONTROLLER_FEATURES,
    CONTROLLER_LISTENER,
    RegisterController,
)
from controller.operations.placement import place_replicas
from kafka_format.record_versions import record_version
from metadata.image import MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    MetadataRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from metadata.snapshot import image_from_records, image_to_records
from metadata.uuids import UNASSIGNED_DIRECTORY, uuid_order, uuid_to_str
from metadata.versions import (
    BROKER_REGISTRATION_CHANGE,
    LEVELS,
    METADATA_VERSION_FEATURE,
    SUPPORTED_FEATURES,
)

from .kafka_cases import brokers, image_of, refusal, run

MV = METADATA_VERSION_FEATURE


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
        end_points=(BrokerEndpoint("PLAINTEXT", "localhost", 9092, 0),),
        features=BROKER_FEATURES)
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


def test_a_broker_registers_the_feature_levels_kraftsim_supports() -> None:
    """A registration records what the broker supports: by default every feature kraftsim
    knows, over the levels its controller accepts, by name."""
    assert [(f.name, f.min_supported_version, f.max_supported_version)
            for f in BROKER_FEATURES] == sorted((name, low, high) for name, (low, high)
                                                in SUPPORTED_FEATURES.items())
    image, [record], _ = run(RegisterBroker(3), image_of(brokers(level=LEVELS["4.0-IV0"])))
    assert isinstance(record, RegisterBrokerRecord) and record.features == BROKER_FEATURES
    assert image.brokers[3].features == BROKER_FEATURES


def _unable(op: RegisterBroker, image: MetadataImage) -> str:
    error = refusal(op, image)
    assert error.code == "UNSUPPORTED_VERSION"
    return error.message


def test_registration_with_unsupported_metadata_version() -> None:
    """Kafka's testRegistrationWithUnsupportedMetadataVersion: a broker naming no
    metadata.version supports 3.0-IV1 only; one naming a range must hold the level."""
    image = image_of(brokers(level=LEVELS["3.3-IV0"]))
    assert _unable(RegisterBroker(0, features=()), image) == (
        "Unable to register because the broker does not support finalized version 4 of "
        "metadata.version. The broker wants a version between 1 and 1, inclusive.")
    only = BrokerFeature(MV, LEVELS["3.3-IV3"], LEVELS["3.3-IV3"])
    assert _unable(RegisterBroker(0, features=(only,)), image) == (
        "Unable to register because the broker does not support finalized version 4 of "
        "metadata.version. The broker wants a version between 7 and 7, inclusive.")


def test_a_broker_naming_no_metadata_version_is_recorded_at_3_0_iv1() -> None:
    """With no metadata.version finalized (a 3.0-IV1 log) such a broker registers, and its
    record says what Kafka assumes it supports."""
    _, [record], _ = run(RegisterBroker(0, features=()), MetadataImage.EMPTY)
    assert isinstance(record, RegisterBrokerRecord)
    assert record.features == (BrokerFeature(MV, 1, 1),)


def test_registration_with_unsupported_feature() -> None:
    """Kafka's testRegistrationWithUnsupportedFeature: a feature finalized above 0 that the
    broker does not name counts as supported at 0 only."""
    image = image_of([*brokers(level=LEVELS["3.7-IV0"]),
                      FeatureLevelRecord("group.version", 1)])
    versions = BrokerFeature(MV, LEVELS["3.1-IV0"], LEVELS["3.7-IV0"])
    assert _unable(RegisterBroker(0, features=(versions,)), image) == (
        "Unable to register because the broker does not support finalized version 1 of "
        "group.version. The broker wants a version between 0 and 0, inclusive.")


def test_registration_with_unsupported_kraft_version() -> None:
    """Kafka's testRegistrationWithUnsupportedKraftVersion: kraft.version 1 finalized; a
    broker naming none, or only level 0, is refused; one supporting 1 registers."""
    image = image_of([*brokers(level=LEVELS["3.9-IV0"]), FeatureLevelRecord("kraft.version", 1)])
    versions = BrokerFeature(MV, LEVELS["3.9-IV0"], LEVELS["3.9-IV0"])
    words = ("Unable to register because the broker does not support finalized version 1 of "
             "kraft.version. The broker wants a version between 0 and 0, inclusive.")
    assert _unable(RegisterBroker(0, features=(versions,)), image) == words
    assert _unable(RegisterBroker(0, features=(versions, BrokerFeature("kraft.version", 0, 0))),
                   image) == words
    features = (versions, BrokerFeature("kraft.version", 1, 1))
    _, [record], _ = run(RegisterBroker(0, features=features), image)
    assert isinstance(record, RegisterBrokerRecord) and record.features == features


def test_registration_with_incorrect_cluster_id() -> None:
    """Kafka's testRegistrationWithIncorrectClusterId: a controller of cluster
    fPZv1VBsRFmnlRvmGcOW9w refuses a registration naming another cluster, in its words."""
    ctx = OperationContext(MetadataImage.EMPTY, random.Random(1), 123, 3000,
                           cluster_id="fPZv1VBsRFmnlRvmGcOW9w")
    op = RegisterBroker(0, incarnation_id="0H4fUu1xQEKXFYwB1aBjhg",
                        cluster_id="WIjw3grwRZmR2uOpdpVXbg")
    with pytest.raises(ApiError) as refused:
        op.generate(ctx)
    assert (refused.value.code, refused.value.message) == (
        "INCONSISTENT_CLUSTER_ID",
        "Expected cluster ID fPZv1VBsRFmnlRvmGcOW9w, but got cluster ID WIjw3grwRZmR2uOpdpVXbg")
    same = msgspec.structs.replace(op, cluster_id="fPZv1VBsRFmnlRvmGcOW9w", features=())
    assert [type(r).__name__ for r in same.generate(ctx).records] == ["RegisterBrokerRecord"]


@pytest.mark.parametrize("level", ["3.3-IV2", "3.3-IV3", "3.7-IV2", "4.0-IV3"])
def test_register_broker_record_version(level: str) -> None:
    """Kafka's testRegisterBrokerRecordVersion: the record of a new registration at epoch
    123, fenced, with metadata.version 1-1 as the broker named none; the log directories
    are recorded from 3.7-IV2 (directory assignment) on."""
    dirs = ("63k9SN1nQOS0dFHSCIMA0A", "Vm1MjsOCR1OjDDydOsDbzg")
    with_dirs = LEVELS[level] >= LEVELS["3.7-IV2"]
    image = image_of([FeatureLevelRecord(MV, LEVELS[level])])
    refused = refusal(RegisterBroker(0, incarnation_id="0H4fUu1xQEKXFYwB1aBjhg", features=(),
                                     log_dirs=dirs if with_dirs else ()), image, offset=123)
    # Kafka's test finalizes no feature; here metadata.version is, so 1-1 is refused ...
    assert refused.code == "UNSUPPORTED_VERSION"
    supported = (BrokerFeature(MV, 1, LEVELS[level]),)
    _, [record], _ = run(RegisterBroker(0, incarnation_id="0H4fUu1xQEKXFYwB1aBjhg",
                                        features=supported,
                                        log_dirs=dirs if with_dirs else ()), image, offset=123)
    # ... and a range holding the level registers
    assert record == RegisterBrokerRecord(
        0, "0H4fUu1xQEKXFYwB1aBjhg", broker_epoch=123, fenced=True,
        in_controlled_shutdown=False,
        end_points=(BrokerEndpoint("PLAINTEXT", "localhost", 9092, 0),),
        features=supported, log_dirs=dirs if with_dirs else ())


def test_register_with_duplicate_directory_id() -> None:
    """Kafka's testRegisterWithDuplicateDirectoryId: broker 0 registered with two
    directories may register again with them; broker 1 is refused INVALID_REGISTRATION
    with no directory, another broker's, a reserved one (UNASSIGNED) or one twice, in
    Kafka's words."""
    first, second = "yJGxmjfbQZSVFAlNM3uXZg", "Mj3CW3OSRi29cFeNJlXuAQ"
    image = image_of([FeatureLevelRecord(MV, LEVELS["4.0-IV0"]),
                      RegisterBrokerRecord(0, "inc-0", broker_epoch=100,
                                           log_dirs=(first, second))])
    again, [_], _ = run(RegisterBroker(0, log_dirs=(first, second)), image)
    assert again.brokers[0].directories == tuple(sorted((first, second), key=uuid_order))

    def invalid(dirs: tuple[str, ...]) -> str:
        error = refusal(RegisterBroker(1, log_dirs=dirs), image)
        assert error.code == "INVALID_REGISTRATION"
        return error.message

    assert invalid(()) == "No directories specified in request"
    assert invalid(("TyNK6XSSQJaJc2q9uflNHg", second)) == \
        f"Broker 0 is already registered with directory {second}"
    assert invalid(("TyNK6XSSQJaJc2q9uflNHg", UNASSIGNED_DIRECTORY)) == \
        "Reserved directory ID in request"
    assert invalid(("aR6lssMrSeyXRf65hiUovQ", "aR6lssMrSeyXRf65hiUovQ")) == \
        "Duplicate directory ID in request"
    # reserved: the first 100 Uuids (high 64 bits 0, low 64 bits below 100), no others
    assert invalid((uuid_to_str(bytes(15) + bytes([99])),)) == \
        "Reserved directory ID in request"
    for raw in (bytes(15) + bytes([100]), bytes([1]) + bytes(15)):
        _, [record], _ = run(RegisterBroker(5, log_dirs=(uuid_to_str(raw),)), image)
        assert isinstance(record, RegisterBrokerRecord)


def test_a_directory_id_with_a_negative_low_half_is_reserved() -> None:
    """DirectoryId.reserved compares the low 64 bits as Java's signed long: with the high
    half 0, a low half whose top bit is set is negative, so below 100, and reserved;
    a low half of 2**56 + 5 (positive, its last byte 5) is not."""
    image = image_of([FeatureLevelRecord(MV, LEVELS["4.0-IV0"])])
    for raw in (bytes(8) + bytes([0x80]) + bytes(7), bytes(8) + b"\xff" * 8):
        error = refusal(RegisterBroker(1, log_dirs=(uuid_to_str(raw),)), image)
        assert (error.code, error.message) == ("INVALID_REGISTRATION",
                                               "Reserved directory ID in request")
    raw = bytes(8) + bytes([1]) + bytes(6) + bytes([5])
    _, [record], _ = run(RegisterBroker(1, log_dirs=(uuid_to_str(raw),)), image)
    assert isinstance(record, RegisterBrokerRecord)


def test_log_directories_below_3_7_iv2_are_neither_checked_nor_recorded() -> None:
    """Below directory assignment (3.7-IV2) Kafka neither checks nor records a
    registration's directories; kraftsim's simulated brokers, which model none, name
    none (None) and are not checked at any level."""
    old = image_of(brokers(level=LEVELS["3.7-IV1"]))
    _, [record], _ = run(RegisterBroker(5, log_dirs=()), old)
    assert isinstance(record, RegisterBrokerRecord) and record.log_dirs == ()
    new = image_of(brokers(level=LEVELS["3.7-IV2"]))
    _, [record], _ = run(RegisterBroker(5), new)
    assert isinstance(record, RegisterBrokerRecord) and record.log_dirs == ()


def test_register_controller_with_older_metadata_version() -> None:
    """testRegisterControlWithOlderMetadataVersion: at 3.3-IV0 a controller registration
    is refused with UNSUPPORTED_VERSION, in Kafka's words."""
    refused = refusal(RegisterController(1, "AAAAAAAAAAAAAAAAAAAAAQ"),
                      image_of(brokers(level=LEVELS["3.3-IV0"])))
    assert (refused.code, refused.message) == (
        "UNSUPPORTED_VERSION",
        "The current MetadataVersion is too old to support controller registrations.")


def test_register_controller_writes_its_record() -> None:
    """ClusterControlManager.registerController at 3.7-IV0: one RegisterControllerRecord
    (version 0) with the request's id, incarnation, listeners and features, and
    zkMigrationReady false whatever the request says; a new incarnation replaces the
    registration."""
    image = image_of(brokers(level=LEVELS["3.7-IV0"]))
    op = RegisterController(1, "AAAAAAAAAAAAAAAAAAAAAQ", zk_migration_ready=True)
    image, records, _ = run(op, image)
    assert records == [RegisterControllerRecord(
        controller_id=1, incarnation_id="AAAAAAAAAAAAAAAAAAAAAQ", zk_migration_ready=False,
        end_points=(CONTROLLER_LISTENER,), features=CONTROLLER_FEATURES)]
    assert record_version(records[0], LEVELS["3.7-IV0"]) == 0
    assert image.controllers[1].incarnation_id == "AAAAAAAAAAAAAAAAAAAAAQ"
    image, _, _ = run(RegisterController(1, "AAAAAAAAAAAAAAAAAAAAAg"), image)
    assert image.controllers[1].incarnation_id == "AAAAAAAAAAAAAAAAAAAAAg"
