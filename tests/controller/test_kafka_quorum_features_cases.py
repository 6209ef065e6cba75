"""The features a controller supports and finalizes, following Kafka's
``QuorumFeaturesTest``, ``FeaturesTest`` (server-common's and clients'),
``FinalizedFeaturesTest`` and ``MetadataVersionChangeTest``.

kraftsim's controller supports the features of ``KNOWN_FEATURES`` (metadata.version
from 3.0-IV1, every other from 0), with the dependencies of ``FEATURE_DEPENDENCIES``;
``UpdateFeatures`` checks an update against them (``test_kafka_feature_cases.py``
follows FeatureControlManagerTest). A finalized feature is a level in the image.

Not ported:
- ``QuorumFeaturesTest.testDefaultFeatureMapWithUnstable``: kraftsim has no unstable
  levels (its map is the one above).
- ``QuorumFeaturesTest.testIsControllerId`` and the five ``testZkMigration*`` cases:
  kraftsim's controllers keep no quorum-features object and ZooKeeper migration is not
  modelled. (The check that the brokers and other controllers support a level, Kafka's
  ``FeatureControlManager.reasonNotSupported``, is in ``test_kafka_feature_cases.py``.)
- ``FeaturesTest`` (server-common): ``testFromFeatureLevelAllFeatures``,
  ``testDefaultValueAllFeatures``, ``testLatestProductionMapsToLatestMetadataVersion``,
  ``testDefaultTestVersion``, ``testUnstableTestVersion``: kraftsim has no feature-version
  objects, no unstable levels and no default levels per metadata.version (its bootstrap
  writes metadata.version alone; the test feature does not exist here).
- ``FeaturesTest`` (clients, the whole class: testEmptyFeatures, testNullFeatures,
  testGetAllFeaturesAPI, testGetAPI, testFromFeaturesMapToFeaturesMap,
  testToStringSupportedFeatures, testSupportedFeaturesFromMapFailureWithInvalidMissingMaxVersion,
  testEquals): Java's ``Features``/``SupportedVersionRange`` value classes of the
  ApiVersions response, not modelled.
- ``FinalizedFeaturesTest.testZkModeFeatures``: ZooKeeper mode is not modelled.
- ``MetadataVersionChangeTest.testMetadataVersionChangeExceptionToString``: the
  exception Kafka's loader throws on a metadata.version change is not modelled.
"""

from __future__ import annotations

import pytest

from controller.operations.cluster import (
    FEATURE_DEPENDENCIES,
    KNOWN_FEATURES,
    FeatureUpdate,
    UpdateFeatures,
)
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, FeatureLevelRecord
from metadata.versions import (
    LEVELS,
    METADATA_VERSION_FEATURE,
    MINIMUM_BOOTSTRAP,
    MINIMUM_KRAFT,
    release_name,
)

from .kafka_cases import brokers, generate, image_of, refusal

MV = METADATA_VERSION_FEATURE
OTHER_FEATURES = sorted(set(KNOWN_FEATURES) - {MV})


def _at(level: int | None) -> MetadataImage:
    """One broker, at metadata.version ``level`` (None: no metadata.version record, so
    3.0-IV1)."""
    records = brokers(1) if level is None else brokers(1, level=level)
    return image_of(records[1:] if level is None else records)


def _refused(image: MetadataImage, update: FeatureUpdate) -> str:
    error = refusal(UpdateFeatures((update,)), image)
    assert error.code == "INVALID_UPDATE_VERSION"
    return error.message


def _accepted(image: MetadataImage, update: FeatureUpdate) -> None:
    records, _ = generate(UpdateFeatures((update,)), image)
    assert records[-1] == FeatureLevelRecord(update.name, update.level)
    # turning eligible leader replicas on first writes the config it needs
    assert all(isinstance(r, ConfigRecord) for r in records[:-1])


def test_every_supported_range_reaches_above_zero() -> None:
    """Kafka's QuorumFeaturesTest.ensureDefaultSupportedFeaturesRangeMaxNotZero and, for
    the ranges' ends, testDefaultFeatureMap: metadata.version from 3.0-IV1 to the newest
    level, every other feature up to a level above 0."""
    assert KNOWN_FEATURES[MV] == max(LEVELS.values())
    assert MINIMUM_KRAFT == LEVELS["3.0-IV1"] == 1
    assert all(level > 0 for level in KNOWN_FEATURES.values())
    newest = max(LEVELS.values())
    assert _refused(_at(newest), FeatureUpdate(MV, newest + 1)) == (
        f"Invalid update version {newest + 1} for feature {MV}. Local controller 0 only "
        f"supports versions {MINIMUM_KRAFT}-{newest}")


def test_a_level_past_the_local_range_names_the_range() -> None:
    """Kafka's QuorumFeaturesTest.testReasonNotSupported: a level outside the range is
    refused naming it, one inside is not."""
    highest = KNOWN_FEATURES["transaction.version"]
    image = _at(LEVELS["4.0-IV3"])
    assert _refused(image, FeatureUpdate("transaction.version", highest + 8)) == (
        f"Invalid update version {highest + 8} for feature transaction.version. Local "
        f"controller 0 only supports versions 0-{highest}")
    _accepted(image, FeatureUpdate("transaction.version", highest))


def test_an_unknown_feature_is_supported_at_zero_only() -> None:
    """Kafka's QuorumFeaturesTest.testLocalSupportedFeature: an unknown feature's range is
    0-0, so a level above 0 is not supported; at 0 Kafka's check passes and the update
    fails where Kafka looks the feature up. kraftsim refused level 0 as unsupported."""
    image = _at(LEVELS["4.0-IV3"])
    assert _refused(image, FeatureUpdate("quux", 1)) == (
        "Invalid update version 1 for feature quux. Local controller 0 does not support "
        "this feature.")
    assert _refused(image, FeatureUpdate("quux", 0, allow_downgrade=True)) == (
        "Invalid update version 0 for feature quux. Feature quux not found.")


@pytest.mark.parametrize("feature", OTHER_FEATURES)
def test_level_zero_is_allowed_at_the_earliest_metadata_version(feature: str) -> None:
    """Kafka's FeaturesTest.testV0SupportedInEarliestMV: every feature's level 0 needs no
    more than the first KRaft metadata.version."""
    image = image_of([FeatureLevelRecord(feature, 1)], _at(MINIMUM_BOOTSTRAP))
    image = image_of([FeatureLevelRecord(MV, MINIMUM_KRAFT)], image)
    assert image.metadata_version == MINIMUM_KRAFT
    _accepted(image, FeatureUpdate(feature, 0, allow_downgrade=True))


@pytest.mark.parametrize(("feature", "level"), [
    (f, level) for f in OTHER_FEATURES for level in range(1, KNOWN_FEATURES[f] + 1)])
def test_every_level_is_valid_with_its_dependencies(feature: str, level: int) -> None:
    """Kafka's FeaturesTest.testValidateVersionAllFeatures: each level is accepted at
    metadata.version 3.3-IV0 or at its own dependency, whichever is higher."""
    needed = max(MINIMUM_BOOTSTRAP, FEATURE_DEPENDENCIES.get((feature, level), 0))
    _accepted(_at(needed), FeatureUpdate(feature, level))


def test_a_level_above_zero_needs_a_high_enough_metadata_version() -> None:
    """Kafka's FeaturesTest.testInvalidValidateVersion: without a metadata.version (or one
    below 3.3-IV0) no feature goes above 0; below a level's dependency it is refused."""
    bootstrap = f"{MINIMUM_BOOTSTRAP} ({release_name(MINIMUM_BOOTSTRAP)})"
    assert _refused(_at(None), FeatureUpdate("group.version", 1)) == (
        f"Invalid update version 1 for feature group.version. group.version could not be "
        f"set to 1 because it depends on metadata.version={bootstrap}")
    needed = FEATURE_DEPENDENCIES[("kraft.version", 1)]
    assert _refused(_at(needed - 1), FeatureUpdate("kraft.version", 1)) == (
        f"Invalid update version 1 for feature kraft.version. kraft.version could not be "
        f"set to 1 because it depends on metadata.version level {needed}")
    # Kafka's EligibleLeaderReplicasVersion.ELRV_1 needs 4.0-IV1 (PartitionRecord v2)
    assert _refused(_at(LEVELS["4.0-IV0"]), FeatureUpdate(
        "eligible.leader.replicas.version", 1)) == (
        "Invalid update version 1 for feature eligible.leader.replicas.version. "
        "eligible.leader.replicas.version could not be set to 1 because it depends on "
        "metadata.version level 23")


def test_finalized_features_hold_metadata_version_and_the_others() -> None:
    """Kafka's FinalizedFeaturesTest.testKRaftModeFeatures: in KRaft the finalized features
    are metadata.version and every other finalized level."""
    image = image_of([FeatureLevelRecord("foo", 2)], _at(MINIMUM_BOOTSTRAP))
    assert dict(image.features) == {MV: MINIMUM_BOOTSTRAP, "foo": 2}


def test_a_metadata_version_change_is_an_upgrade_or_a_downgrade() -> None:
    """Kafka's MetadataVersionChangeTest.testIsUpgrade and testIsDowngrade, as an update
    sees them: 3.0-IV1 -> 3.3-IV0 is an upgrade (refused when asked for as a downgrade),
    3.3-IV0 -> 3.0-IV1 a downgrade (refused unless asked for, and then for going below
    3.3-IV0)."""
    low, high = LEVELS["3.0-IV1"], LEVELS["3.3-IV0"]
    _accepted(_at(None), FeatureUpdate(MV, high))
    assert _refused(_at(None), FeatureUpdate(MV, high, allow_downgrade=True)).endswith(
        "Can't downgrade to a newer version.")
    assert _refused(_at(high), FeatureUpdate(MV, low)).endswith(
        "Can't downgrade the version of this feature without setting the upgrade type to "
        "either safe or unsafe downgrade.")
    assert _refused(_at(high), FeatureUpdate(MV, low, allow_downgrade=True)) == (
        "Invalid metadata.version 1. Unable to set a metadata.version less than 3.3-IV0")
