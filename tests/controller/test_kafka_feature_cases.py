"""UpdateFeatures, following the cases of Kafka's FeatureControlManagerTest: levels within
the supported range, a feature set to 0 removed, downgrades only when asked for (and never
to a higher level), metadata.version never below 3.3-IV0 and never downgraded across a
level that changed the metadata records, feature dependencies on metadata.version, and
levels every registered broker and (from 3.7-IV0) every other registered controller
supports.

The cases by Kafka's names: testUpdateFeatures and testUpdateFeaturesErrorCases
(test_update_features_error_cases, test_a_level_past_the_supported_range_or_an_unknown_
feature_is_refused), testReplayRecords (test_replayed_levels_are_the_finalized_features),
testApplyMetadataVersionChangeRecord (test_a_metadata_version_record_sets_the_version),
testCannotDowngradeBefore3_3_IV0 and testCannotDowngradeToVersionBeforeMinimumSupportedKraftVersion
(test_metadata_version_is_never_set_below_3_3_iv0: Kafka's second case refuses 3.2-IV0 as
outside its test controller's range 4-7; kraftsim's controller supports every level from
3.0-IV1, so the 3.3-IV0 floor refuses it), testCannotDowngradeToHigherVersion,
testCannotUnsafeDowngradeToHigherVersion (test_a_downgrade_cannot_go_to_a_higher_level),
testCannotUpgradeToLowerVersion (test_an_upgrade_cannot_go_to_a_lower_level),
testCanUpgradeToHigherVersion (test_an_upgrade_goes_to_a_higher_level),
testCannotUseSafeDowngradeIfMetadataChanged (test_a_safe_downgrade_across_changed_metadata_
is_refused), testUnsafeDowngradeIsTemporarilyDisabled (test_an_unsafe_metadata_version_downgrade_is_
not_supported; its opposite, testCanUseUnsafeDowngradeIfMetadataChanged, is @Disabled in
Kafka), testCanUseSafeDowngradeIfMetadataDidNotChange
(test_a_safe_downgrade_where_the_metadata_did_not_change_is_written),
testCreateFeatureLevelRecords (test_a_feature_downgraded_to_zero_is_no_longer_finalized,
with group.version for Kafka's test feature).

Not ported: testReplay, the manager's snapshot registry taking a replayed level back
(kraftsim reverts the controller's whole state to a revert point, tested with its
transactions, not per manager); testNoMetadataVersionChangeDuringMigration (ZooKeeper
migration is not modelled)."""

from __future__ import annotations

import pytest

from controller.operations import RegisterBroker
from controller.operations.cluster import KNOWN_FEATURES, FeatureUpdate, UpdateFeatures
from metadata.image import MetadataImage
from metadata.schema import (
    BrokerFeature,
    FeatureLevelRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
)
from metadata.versions import (
    LEVELS,
    METADATA_VERSION_FEATURE,
    SUPPORTED_FEATURES,
    metadata_changed_between,
    range_text,
)

from .kafka_cases import brokers, generate, image_of, refusal, run

MV = METADATA_VERSION_FEATURE


def _at(release: str) -> MetadataImage:
    return image_of(brokers(1, level=LEVELS[release]))


def _update(*updates: FeatureUpdate) -> UpdateFeatures:
    return UpdateFeatures(tuple(updates))


def _refused(image: MetadataImage, *updates: FeatureUpdate) -> str:
    error = refusal(_update(*updates), image)
    assert error.code == "INVALID_UPDATE_VERSION"
    return error.message


def test_a_level_past_the_supported_range_or_an_unknown_feature_is_refused() -> None:
    image = _at("3.3-IV0")
    highest = KNOWN_FEATURES["transaction.version"]
    assert _refused(image, FeatureUpdate("transaction.version", highest + 1,
                                         allow_downgrade=True)) == (
        f"Invalid update version {highest + 1} for feature transaction.version. Local "
        f"controller 0 only supports versions 0-{highest}")
    assert _refused(image, FeatureUpdate("transaction.version", 1),
                    FeatureUpdate("bar", 1)) == (
        "Invalid update version 1 for feature bar. Local controller 0 does not support this "
        "feature.")
    records, _ = generate(_update(FeatureUpdate("transaction.version", 1)), image)
    assert records == [FeatureLevelRecord("transaction.version", 1)]


def test_replayed_levels_are_the_finalized_features() -> None:
    image, records, _ = run(_update(FeatureUpdate("group.version", 1),
                                    FeatureUpdate("transaction.version", 2)), _at("3.3-IV0"))
    assert records == [FeatureLevelRecord("group.version", 1),
                       FeatureLevelRecord("transaction.version", 2)]
    assert dict(image.features) == {MV: LEVELS["3.3-IV0"], "group.version": 1,
                                    "transaction.version": 2}
    assert image.metadata_version == LEVELS["3.3-IV0"]


def test_a_downgrade_must_be_asked_for_and_then_is_written() -> None:
    image, _, _ = run(_update(FeatureUpdate("transaction.version", 2)), _at("3.9-IV0"))
    assert _refused(image, FeatureUpdate("transaction.version", 1)) == (
        "Invalid update version 1 for feature transaction.version. Can't downgrade the "
        "version of this feature without setting the upgrade type to either safe or unsafe "
        "downgrade.")
    _, records, _ = run(_update(FeatureUpdate("transaction.version", 1, allow_downgrade=True)),
                        image)
    assert records == [FeatureLevelRecord("transaction.version", 1)]


def test_a_feature_downgraded_to_zero_is_no_longer_finalized() -> None:
    image, _, _ = run(_update(FeatureUpdate("group.version", 1)), _at("4.0-IV0"))
    assert image.features["group.version"] == 1
    image, records, _ = run(_update(FeatureUpdate("group.version", 0, unsafe=True)), image)
    assert records == [FeatureLevelRecord("group.version", 0)]
    assert "group.version" not in image.features


def test_a_metadata_version_record_sets_the_version() -> None:
    image = image_of([FeatureLevelRecord(MV, LEVELS["3.3-IV3"])], _at("3.3-IV2"))
    assert image.metadata_version == LEVELS["3.3-IV3"]


@pytest.mark.parametrize("unsafe", [False, True])
def test_metadata_version_is_never_set_below_3_3_iv0(unsafe: bool) -> None:
    message = _refused(_at("3.3-IV2"), FeatureUpdate(MV, LEVELS["3.2-IV0"],
                                                     allow_downgrade=not unsafe, unsafe=unsafe))
    assert message == "Invalid metadata.version 3. Unable to set a metadata.version less " \
                      "than 3.3-IV0"


@pytest.mark.parametrize("unsafe", [False, True])
def test_a_downgrade_cannot_go_to_a_higher_level(unsafe: bool) -> None:
    message = _refused(_at("3.3-IV2"), FeatureUpdate(MV, LEVELS["3.3-IV3"],
                                                     allow_downgrade=not unsafe, unsafe=unsafe))
    assert message == "Invalid update version 7 for feature metadata.version. Can't " \
                      "downgrade to a newer version."


def test_an_upgrade_cannot_go_to_a_lower_level() -> None:
    assert "Can't downgrade the version of this feature without setting" in _refused(
        _at("3.3-IV2"), FeatureUpdate(MV, LEVELS["3.3-IV0"]))


def test_an_upgrade_goes_to_a_higher_level() -> None:
    records, _ = generate(_update(FeatureUpdate(MV, LEVELS["3.3-IV3"])), _at("3.3-IV2"))
    assert records == [FeatureLevelRecord(MV, LEVELS["3.3-IV3"])]


def test_a_safe_downgrade_across_changed_metadata_is_refused() -> None:
    assert metadata_changed_between(LEVELS["3.3-IV0"], LEVELS["3.3-IV2"])
    message = _refused(_at("3.3-IV2"), FeatureUpdate(MV, LEVELS["3.3-IV0"],
                                                     allow_downgrade=True))
    assert message == "Invalid metadata.version 4. Refusing to perform the requested " \
                      "downgrade because it might delete metadata information."


def test_an_unsafe_metadata_version_downgrade_is_not_supported() -> None:
    message = _refused(_at("3.3-IV2"), FeatureUpdate(MV, LEVELS["3.3-IV0"], unsafe=True))
    assert message == "Invalid metadata.version 4. Unsafe metadata downgrade is not " \
                      "supported in this version."


def test_a_safe_downgrade_where_the_metadata_did_not_change_is_written() -> None:
    """3.5-IV0 and 3.5-IV1 changed no record (Kafka's didMetadataChange false)."""
    assert not metadata_changed_between(LEVELS["3.4-IV0"], LEVELS["3.5-IV1"])
    image, records, _ = run(_update(FeatureUpdate(MV, LEVELS["3.4-IV0"], allow_downgrade=True)),
                            _at("3.5-IV1"))
    assert records == [FeatureLevelRecord(MV, LEVELS["3.4-IV0"])]
    assert image.metadata_version == LEVELS["3.4-IV0"]


def test_a_feature_needs_the_metadata_version_it_depends_on() -> None:
    """kraft.version 1 needs 3.9-IV0; the request's own metadata.version update counts."""
    assert _refused(_at("3.8-IV0"), FeatureUpdate("kraft.version", 1)) == (
        "Invalid update version 1 for feature kraft.version. kraft.version could not be set "
        "to 1 because it depends on metadata.version level 21")
    records, _ = generate(_update(FeatureUpdate(MV, LEVELS["3.9-IV0"]),
                                  FeatureUpdate("kraft.version", 1)), _at("3.8-IV0"))
    assert records == [FeatureLevelRecord(MV, LEVELS["3.9-IV0"]),
                       FeatureLevelRecord("kraft.version", 1)]


def test_no_feature_is_enabled_below_3_3_iv0() -> None:
    image = image_of(brokers(1, level=LEVELS["3.2-IV0"]))
    assert _refused(image, FeatureUpdate("transaction.version", 1)) == (
        "Invalid update version 1 for feature transaction.version. transaction.version could "
        "not be set to 1 because it depends on metadata.version=4 (3.3-IV0)")


def _broker(broker_id: int, *features: BrokerFeature) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id, f"inc-{broker_id}", broker_epoch=100, fenced=False,
                                features=features)


def test_update_features_error_cases() -> None:
    """Kafka's testUpdateFeaturesErrorCases: broker 5 supports transaction.version 0-2 and
    nothing else, so it refuses another feature's level; a downgrade still needs asking."""
    image = image_of([_broker(5, BrokerFeature("transaction.version", 0, 2))], _at("3.9-IV0"))
    assert _refused(image, FeatureUpdate("group.version", 1, allow_downgrade=True)) == (
        "Invalid update version 1 for feature group.version. Broker 5 does not support this "
        "feature.")
    image, _, _ = run(_update(FeatureUpdate("transaction.version", 2)), image)
    assert _refused(image, FeatureUpdate("transaction.version", 1)) == (
        "Invalid update version 1 for feature transaction.version. Can't downgrade the "
        "version of this feature without setting the upgrade type to either safe or unsafe "
        "downgrade.")
    records, _ = generate(_update(FeatureUpdate("transaction.version", 1,
                                                allow_downgrade=True)), image)
    assert records == [FeatureLevelRecord("transaction.version", 1)]


def test_each_broker_in_id_order_must_support_the_level() -> None:
    """The first registered broker, by id, whose range misses the level is named, in
    Kafka's VersionRange words; a broker that lists no feature at all is not asked."""
    image = image_of([_broker(9, BrokerFeature("transaction.version", 0, 0)),
                      _broker(4, BrokerFeature("transaction.version", 1, 1)),
                      RegisterBrokerRecord(2, "inc-2", broker_epoch=100, fenced=False)],
                     _at("3.9-IV0"))
    assert _refused(image, FeatureUpdate("transaction.version", 2)) == (
        "Invalid update version 2 for feature transaction.version. Broker 4 only supports "
        "versions 1")
    image = image_of([_broker(4, BrokerFeature("transaction.version", 0, 2))], image)
    assert _refused(image, FeatureUpdate("transaction.version", 2)) == (
        "Invalid update version 2 for feature transaction.version. Broker 9 does not "
        "support this feature.")
    assert range_text(0, 2) == "0-2" and range_text(3, 3) == "3" \
        and range_text(1, 32767) == "1+"


def test_an_unknown_feature_at_zero_is_first_checked_against_the_brokers() -> None:
    """Every node supports an unknown feature at level 0, unless its range says otherwise;
    past the nodes, Kafka fails looking the feature up."""
    image = _at("3.9-IV0")
    assert _refused(image, FeatureUpdate("foo", 0)) == (
        "Invalid update version 0 for feature foo. Feature foo not found.")
    image = image_of([_broker(3, BrokerFeature("foo", 1, 3))], image)
    assert _refused(image, FeatureUpdate("foo", 0)) == (
        "Invalid update version 0 for feature foo. Broker 3 only supports versions 1-3")


def test_every_broker_registered_by_kraftsim_supports_what_its_controller_does() -> None:
    """Brokers registered through RegisterBroker list kraftsim's supported levels, so
    every level the controller accepts passes them."""
    image = _at("4.0-IV1")  # (eligible.leader.replicas.version 1 needs it)
    for broker_id in (1, 2, 3):
        image, _, _ = run(RegisterBroker(broker_id), image)
    for name, (_, highest) in SUPPORTED_FEATURES.items():
        if name != MV:
            records, _ = generate(_update(FeatureUpdate(name, highest)), image)
            assert records[-1] == FeatureLevelRecord(name, highest)
            # turning ELR on first sets the cluster's min.insync.replicas
            assert len(records) == (2 if name == "eligible.leader.replicas.version" else 1)


def test_other_registered_controllers_must_support_the_level_from_3_7_iv0() -> None:
    """From 3.7-IV0 (controller registration) every other registered controller is asked,
    by id, after the brokers; this controller (node 0) is not asked twice; below 3.7-IV0
    Kafka cannot check them."""
    controllers = [RegisterControllerRecord(0, features=()),
                   RegisterControllerRecord(3002, features=(BrokerFeature(MV, 1, 20),)),
                   RegisterControllerRecord(3001, features=(
                       BrokerFeature(MV, 1, 20), BrokerFeature("group.version", 0, 1)))]
    image = image_of(controllers, _at("3.7-IV0"))
    assert _refused(image, FeatureUpdate("group.version", 1)) == (
        "Invalid update version 1 for feature group.version. Controller 3002 does not "
        "support this feature.")
    assert _refused(image, FeatureUpdate(MV, 21)) == (
        "Invalid update version 21 for feature metadata.version. Controller 3001 only "
        "supports versions 1-20")
    older = image_of(controllers, _at("3.6-IV2"))
    records, _ = generate(_update(FeatureUpdate("group.version", 1)), older)
    assert records == [FeatureLevelRecord("group.version", 1)]
