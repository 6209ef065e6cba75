"""Writing an image as records, following Kafka's ``ImageWriterOptionsTest`` and
``ImageReWriterTest`` (``metadata/.../image/writer``).

kraftsim's image writer is :func:`metadata.snapshot.image_to_records` (Kafka's
ImageWriterOptions are its ``metadata_version`` and ``on_loss``); a snapshot's records
become an image through :func:`metadata.snapshot.image_from_records` and, on a broker,
the loader's ``handle_load_snapshot`` (Kafka's ImageReWriter replays them into a delta).

Ported: without a loss handler a loss raises, naming what was lost
(testDefaultLossHandler); a version below 3.3-IV0 is written as 3.0-IV1 (no
FeatureLevelRecord), the version asked for still named in a loss
(testSetMetadataVersion); a loss at any version reads "Metadata has been lost because the
following could not be represented in metadata.version V: LOSS" (testHandleLoss);
records rewritten give an image holding them (testWrite); a snapshot loaded over an
image replaces it: what the snapshot does not hold is gone
(testCloseInvokesFinishSnapshot).

Fixed on the way: the loss's message was kraftsim's own ("writing the image at
metadata.version V would lose LOSS"); it is now Kafka's.

Not ported:
- ImageReWriterTest.testCloseWithoutFreeze and testWriteAfterClose: kraftsim has no
  writer object to close, freeze or write to after closing.
"""

from __future__ import annotations

import re

import pytest

from broker.loader import MetadataLoader
from metadata.image import MetadataImage
from metadata.schema import ConfigRecord, FeatureLevelRecord, TopicRecord
from metadata.snapshot import UnwritableMetadataError, image_from_records, image_to_records
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, MINIMUM_BOOTSTRAP, release_name
from raft.snapshot import Snapshot, SnapshotId
from tests.metadata.kafka_image_cases import image_of

FOO = TopicRecord("foo", "3B134hrsQgKtz8Sp6QBIfg")
BAR = TopicRecord("bar", "cxBT72dK4si8Ied1iP4wBA")
NUM_IO_THREADS = ConfigRecord(4, "", "num.io.threads", "12")
WITH_A_FEATURE = image_of([FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS["3.9-IV0"]),
                           FeatureLevelRecord("foo.feature", 2), FOO])
FEATURE_LOSS = "feature flag(s): foo.feature"
KRAFT_LEVELS = sorted(LEVELS.values())


def test_default_loss_handler() -> None:
    """ImageWriterOptionsTest.testDefaultLossHandler: with no handler, a loss raises and
    the error carries what was lost."""
    with pytest.raises(UnwritableMetadataError) as raised:
        image_to_records(WITH_A_FEATURE, LEVELS["3.2-IV0"])
    assert raised.value.loss == FEATURE_LOSS


@pytest.mark.parametrize("level", KRAFT_LEVELS, ids=release_name)
def test_set_metadata_version(level: int) -> None:
    """ImageWriterOptionsTest.testSetMetadataVersion: below 3.3-IV0 an image is written as
    at 3.0-IV1, with no FeatureLevelRecord; from 3.3-IV0 at the version asked for."""
    written = image_to_records(WITH_A_FEATURE, level, lambda loss: None)
    if level < MINIMUM_BOOTSTRAP:
        assert written == image_to_records(WITH_A_FEATURE, LEVELS["3.0-IV1"],
                                           lambda loss: None)
        assert not any(isinstance(r, FeatureLevelRecord) for r in written)
    else:
        assert written[0] == FeatureLevelRecord(METADATA_VERSION_FEATURE, level)


@pytest.mark.parametrize("level", KRAFT_LEVELS, ids=release_name)
def test_handle_loss(level: int) -> None:
    """ImageWriterOptionsTest.testHandleLoss: Kafka's message, naming the version asked
    for (not 3.0-IV1 below 3.3-IV0)."""
    error = UnwritableMetadataError(level, "stuff")
    assert str(error) == ("Metadata has been lost because the following could not be "
                          f"represented in metadata.version {release_name(level)}: stuff")
    assert (error.metadata_version, error.loss) == (level, "stuff")


def test_a_real_loss_names_the_version_asked_for() -> None:
    """The error a write raises names the requested version, below 3.3-IV0 too."""
    with pytest.raises(UnwritableMetadataError,
                       match=re.escape("represented in metadata.version 3.1-IV0: feature flag")):
        image_to_records(WITH_A_FEATURE, LEVELS["3.1-IV0"])


def test_write() -> None:
    """ImageReWriterTest.testWrite: two topic records give an image of two topics."""
    image = image_from_records([FOO, BAR], 10, 1)
    assert set(image.topics_by_id) == {FOO.topic_id, BAR.topic_id}
    assert image_to_records(image) == [BAR, FOO]  # sorted by name, as the writer sorts them


def test_close_invokes_finish_snapshot() -> None:
    """ImageReWriterTest.testCloseInvokesFinishSnapshot: a snapshot loaded over an image
    replaces it; the topic the snapshot does not hold is gone, its config is there."""
    loader = MetadataLoader(node_id=0)
    loader.handle_load_snapshot(Snapshot(SnapshotId(1, 1), (FOO,)))
    assert loader.image.topic("foo") is not None
    loader.handle_load_snapshot(Snapshot(SnapshotId(2, 1), (NUM_IO_THREADS,)))
    assert loader.image.topics_by_id == MetadataImage.EMPTY.topics_by_id
    assert dict(loader.image.configs[(4, "")]) == {"num.io.threads": "12"}
    assert loader.faults == []
