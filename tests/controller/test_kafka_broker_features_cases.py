"""What a broker supports against what is finalized, following the cases of Kafka's
BrokerFeaturesTest (server/src/test/java/org/apache/kafka/server/).

Kafka's ``BrokerFeatures`` holds the feature ranges a broker supports; its
``incompatibleFeatures`` names the finalized features the broker cannot run (absent from
what it supports, or finalized outside its range), which Kafka's ZooKeeper-mode controller
and metadata cache act on. In KRaft, which is all kraftsim models, the same comparison is
the controller's check of a broker's registration (ClusterControlManager.registerBroker,
kraftsim's :class:`~controller.operations.RegisterBroker`): the broker's request lists the
ranges it supports, and a finalized feature it cannot run refuses the registration with
UNSUPPORTED_VERSION naming the feature (an absent one counts as supported at level 0 only).
So each case here finalizes Kafka's test features in the image (FeatureLevelRecords) and
registers a broker that supports Kafka's ranges, plus the metadata.version range every
registration names. What kraftsim's brokers support by default is
:data:`~controller.operations.brokers.BROKER_FEATURES` (Kafka's
``BrokerFeatures.createDefault``).

Not ported:

- testEmpty: kraftsim has no feature-set object of its own (``BrokerFeatures.createEmpty``);
  a registration naming no feature is covered in test_kafka_cluster_control_cases
  (test_a_broker_naming_no_metadata_version_is_recorded_at_3_0_iv1).
- testDefaultFinalizedFeatures: ZooKeeper only (the ZooKeeper controller finalizes a
  broker's defaults; in KRaft the finalized levels come from the bootstrap metadata).
"""

from __future__ import annotations

import pytest

from controller.operations import RegisterBroker
from controller.operations.brokers import BROKER_FEATURES
from metadata.image import MetadataImage
from metadata.schema import BrokerFeature, FeatureLevelRecord, RegisterBrokerRecord
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, SUPPORTED_FEATURES

from .kafka_cases import brokers, image_of, refusal, run

LEVEL = LEVELS["3.7-IV0"]
SUPPORTED = (BrokerFeature(METADATA_VERSION_FEATURE, LEVEL, LEVEL),
             BrokerFeature("test_feature_1", 1, 4),
             BrokerFeature("test_feature_2", 1, 3))
"""Kafka's supported features (test_feature_1 1-4, test_feature_2 1-3), with the
metadata.version range of the image's level."""


def _finalized(**levels: int) -> MetadataImage:
    """An image at metadata.version 3.7-IV0 with ``levels`` finalized."""
    return image_of([*brokers(level=LEVEL),
                     *(FeatureLevelRecord(name, level) for name, level in levels.items())])


def _incompatible(image: MetadataImage, supported: tuple[BrokerFeature, ...] = SUPPORTED
                  ) -> str:
    error = refusal(RegisterBroker(0, features=supported), image)
    assert error.code == "UNSUPPORTED_VERSION"
    return error.message


def test_incompatibilities_due_to_absent_feature() -> None:
    """testIncompatibilitiesDueToAbsentFeature: test_feature_1 at 4 (supported 1-4) and
    test_feature_2 at 4 (supported 1-3): test_feature_2 is the incompatible one. A feature
    finalized that the broker does not name at all is incompatible too (supported at 0
    only), and so is one the broker names that is not finalized, when its range starts
    above 0 (an unfinalized feature is at level 0)."""
    image = _finalized(test_feature_1=4, test_feature_2=4)
    assert _incompatible(image) == (
        "Unable to register because the broker does not support finalized version 4 of "
        "test_feature_2. The broker wants a version between 1 and 3, inclusive.")
    absent = _finalized(test_feature_1=4, test_feature_2=3, test_feature_3=2)
    assert _incompatible(absent) == (
        "Unable to register because the broker does not support finalized version 2 of "
        "test_feature_3. The broker wants a version between 0 and 0, inclusive.")
    # and, as in Kafka, a feature not finalized is at level 0, outside a range from 1
    assert _incompatible(_finalized(test_feature_1=4)) == (
        "Unable to register because the broker does not support finalized version 0 of "
        "test_feature_2. The broker wants a version between 1 and 3, inclusive.")


def test_incompatibilities_due_to_incompatible_feature() -> None:
    """testIncompatibilitiesDueToIncompatibleFeature: test_feature_1 at 3 is compatible,
    test_feature_2 at 4 (supported 1-3) is not."""
    assert _incompatible(_finalized(test_feature_1=3, test_feature_2=4)) == (
        "Unable to register because the broker does not support finalized version 4 of "
        "test_feature_2. The broker wants a version between 1 and 3, inclusive.")


def test_compatible_features() -> None:
    """testCompatibleFeatures: both at 3 are within the supported ranges; the broker
    registers with the ranges it gave."""
    image, [record], _ = run(RegisterBroker(0, features=SUPPORTED),
                             _finalized(test_feature_1=3, test_feature_2=3))
    assert isinstance(record, RegisterBrokerRecord) and record.features == SUPPORTED
    assert image.brokers[0].features == SUPPORTED


@pytest.mark.parametrize("unstable_versions_enabled", [True, False])
def test_ensure_default_supported_features_range_max_not_zero(
        unstable_versions_enabled: bool) -> None:
    """ensureDefaultSupportedFeaturesRangeMaxNotZero: every feature a kraftsim broker says
    it supports by default reaches above level 0 (kraftsim has no unstable levels to turn
    on or off: the same ranges either way), and they are the levels its controllers
    support."""
    assert BROKER_FEATURES
    for feature in BROKER_FEATURES:
        assert feature.max_supported_version != 0, feature.name
        assert SUPPORTED_FEATURES[feature.name] == (feature.min_supported_version,
                                                    feature.max_supported_version)
