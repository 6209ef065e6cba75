"""Feature version ranges, following Kafka's ``VersionRangeTest``
(metadata/src/test/java/org/apache/kafka/metadata/).

kraftsim keeps a range as a ``(lowest, highest)`` tuple (``SUPPORTED_FEATURES``,
``DISABLED``, a registration's ``BrokerFeature``); Kafka's ``VersionRange.contains`` is the
check of ``_outside`` (UpdateFeatures: may a node run a level?) and of
``_registration_features`` (a registration: does the broker's range hold the finalized
level?), and ``VersionRange.toString`` is :func:`metadata.versions.range_text`, which the
shell's registration text uses.

Ported: testContains (through both checks), testToString (``range_text`` and a broker's
``supportedFeatures`` as the shell prints it).

Not ported: testEquality: Java's ``equals`` of ``VersionRange``; kraftsim's ranges are
plain tuples, equal exactly when their ends are.
"""

from __future__ import annotations

import pytest

from controller.errors import ApiError
from controller.operations.brokers import _registration_features
from controller.operations.cluster import _outside
from metadata.image import BrokerRegistration, MetadataImage
from metadata.schema import BrokerFeature, FeatureLevelRecord
from metadata.versions import LEVELS, range_text
from shell.image_tree import broker_text

from .kafka_image_cases import image_of

SHORT_MAX = 32767
CONTAINS = [  # (range, level, whether the range holds the level)
    ((1, 1), 1, True),
    ((1, 1), 2, False),
    ((1, 2), 1, True),
    ((4, 10), 3, False),
    ((2, 12), 11, True),
]


@pytest.mark.parametrize(("supported", "level", "contains"), CONTAINS)
def test_contains(supported: tuple[int, int], level: int, contains: bool) -> None:
    """VersionRangeTest.testContains: a level is in a range when it lies between its ends,
    both included; outside it, UpdateFeatures' reason names the range in Kafka's text."""
    reason = _outside(level, "Broker 1", supported)
    if contains:
        assert reason is None
    else:
        assert reason == f"Broker 1 only supports versions {range_text(*supported)}"


@pytest.mark.parametrize(("supported", "level", "contains"), CONTAINS)
def test_contains_at_registration(supported: tuple[int, int], level: int,
                                  contains: bool) -> None:
    """VersionRangeTest.testContains, as a registration checks it: a broker whose range
    for a finalized feature misses its level is refused."""
    image = image_of([FeatureLevelRecord("metadata.version", LEVELS["4.0-IV0"]),
                      FeatureLevelRecord("foo", level)], MetadataImage.EMPTY)
    requested = (BrokerFeature("foo", *supported),
                 BrokerFeature("metadata.version", 1, LEVELS["4.0-IV0"]))
    if contains:
        assert BrokerFeature("foo", *supported) in _registration_features(image, requested)
    else:
        with pytest.raises(ApiError) as refused:
            _registration_features(image, requested)
        assert refused.value.code == "UNSUPPORTED_VERSION"
        assert f"between {supported[0]} and {supported[1]}, inclusive" in refused.value.message


@pytest.mark.parametrize(("lowest", "highest", "text"), [
    (1, 2, "1-2"),
    (1, 1, "1"),
    (1, SHORT_MAX, "1+"),
    (100, 200, "100-200"),
])
def test_to_string(lowest: int, highest: int, text: str) -> None:
    """VersionRangeTest.testToString: one level alone, an unbounded range (up to
    Short.MAX_VALUE) as ``min+``, else ``min-max``; the shell prints a registration's
    supported features the same way."""
    assert range_text(lowest, highest) == text
    broker = BrokerRegistration(broker_id=1, epoch=0, incarnation_id="x",
                                features=(BrokerFeature("foo", lowest, highest),))
    assert f"supportedFeatures={{foo: {text}}}" in broker_text(broker)
