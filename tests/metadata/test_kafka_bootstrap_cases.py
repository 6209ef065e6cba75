"""Cases of Kafka's BootstrapMetadataTest and BootstrapDirectoryTest
(metadata/src/test/java/org/apache/kafka/metadata/bootstrap/): the bootstrap records
(:class:`metadata.bootstrap.BootstrapMetadata`) and where a formatted node gets them
(``bootstrap.checkpoint``, else a configured version: ``kafka_format.files``).

Kafka's names: BootstrapMetadataTest's testFromRecordsList
(test_from_records_keeps_them_and_takes_the_last_version),
testFromRecordsListWithoutMetadataVersion
(test_from_records_without_a_version_is_refused),
testFromRecordsListWithOldMetadataVersion (test_a_version_before_3_3_iv0_is_refused);
BootstrapDirectoryTest's testReadFromEmptyConfiguration
(test_an_empty_directory_without_a_configured_version_gives_the_default),
testReadFromConfigurationWithAncientVersion
(test_an_ancient_configured_version_gives_the_minimum_bootstrap),
testReadFromConfiguration (test_a_configured_version_is_used),
testReadFromConfigurationFile (test_the_file_wins_over_the_configured_version),
testMissingDirectory (test_a_missing_directory_is_an_error).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller import ControllerConfig
from kafka_format import read_bootstrap_directory, write_bootstrap_file
from kafka_format.files import BOOTSTRAP_FILE
from metadata.bootstrap import BootstrapError, BootstrapMetadata
from metadata.schema import FeatureLevelRecord, NoOpRecord
from metadata.versions import LATEST_PRODUCTION, LEVELS, MINIMUM_BOOTSTRAP, parse_release_version
from raft.config import ConfigError

MV = "metadata.version"
SAMPLE = (FeatureLevelRecord(MV, 7), NoOpRecord(), FeatureLevelRecord(MV, 6))
"""Two metadata.version records: the last one (3.3-IV2) counts."""


# ---------------------------------------------------------------- BootstrapMetadataTest


def test_from_version_holds_only_the_version_record() -> None:
    assert BootstrapMetadata.from_version(LEVELS["3.3-IV2"], "foo") == BootstrapMetadata(
        (FeatureLevelRecord(MV, 6),), LEVELS["3.3-IV2"], "foo")


def test_from_records_keeps_them_and_takes_the_last_version() -> None:
    assert BootstrapMetadata.from_records(SAMPLE, "bar") == BootstrapMetadata(
        SAMPLE, LEVELS["3.3-IV2"], "bar")


def test_from_records_without_a_version_is_refused() -> None:
    with pytest.raises(BootstrapError) as refused:
        BootstrapMetadata.from_records((), "quux")
    assert str(refused.value) == ("No FeatureLevelRecord for metadata.version was found in the "
                                  "bootstrap metadata from quux")


def test_copy_with_only_version_keeps_the_last_version_record() -> None:
    assert BootstrapMetadata.from_records(SAMPLE, "baz").copy_with_only_version() == \
        BootstrapMetadata(SAMPLE[2:], LEVELS["3.3-IV2"], "baz")


def test_a_version_before_3_3_iv0_is_refused() -> None:
    with pytest.raises(BootstrapError) as refused:
        BootstrapMetadata.from_records((FeatureLevelRecord(MV, LEVELS["3.0-IV1"]),), "quux")
    assert str(refused.value) == ("Bootstrap metadata.version before 3.3-IV0 are not supported. "
                                  "Can't load metadata from quux")
    with pytest.raises(BootstrapError):
        BootstrapMetadata.from_version(LEVELS["3.2-IV0"], "quux")
    with pytest.raises(ConfigError):  # nor may a controller be configured to bootstrap it
        ControllerConfig(bootstrap_metadata_version=LEVELS["3.2-IV0"]).validate()


# ---------------------------------------------------------------- BootstrapDirectoryTest


def test_an_empty_directory_without_a_configured_version_gives_the_default(tmp_path: Path) -> None:
    assert read_bootstrap_directory(tmp_path) == BootstrapMetadata.from_version(
        LATEST_PRODUCTION, "the default bootstrap")


def test_an_ancient_configured_version_gives_the_minimum_bootstrap(tmp_path: Path) -> None:
    assert read_bootstrap_directory(tmp_path, "2.7") == BootstrapMetadata.from_version(
        MINIMUM_BOOTSTRAP, "the minimum version bootstrap with metadata.version 3.3-IV0")


def test_a_configured_version_is_used(tmp_path: Path) -> None:
    assert read_bootstrap_directory(tmp_path, "3.3-IV2") == BootstrapMetadata.from_version(
        LEVELS["3.3-IV2"], "the configured bootstrap with metadata.version 3.3-IV2")


def test_a_missing_directory_is_an_error() -> None:
    with pytest.raises(ValueError) as refused:
        read_bootstrap_directory("./non/existent/directory")
    assert str(refused.value) == "No such directory as ./non/existent/directory"


def test_the_file_wins_over_the_configured_version(tmp_path: Path) -> None:
    path = tmp_path / BOOTSTRAP_FILE
    records = (FeatureLevelRecord(MV, 7), NoOpRecord(), NoOpRecord())
    written = BootstrapMetadata.from_records(records, f"the binary bootstrap metadata file: {path}")
    assert write_bootstrap_file(tmp_path, written) == path
    assert not (tmp_path / f"{BOOTSTRAP_FILE}.tmp").exists()
    assert read_bootstrap_directory(tmp_path, "3.0-IV0") == written


# ---------------------------------------------------------------- version strings


@pytest.mark.parametrize(("text", "level"), [
    ("3.3-IV2", 6), ("3.3", LEVELS["3.3-IV3"]), ("3.6", LEVELS["3.6-IV2"]),
    ("2.7", 0), ("0.10.2", 0), ("3.0-IV0", 0), ("3.0", LEVELS["3.0-IV1"]),
])
def test_release_strings_read_as_kafka_reads_them(text: str, level: int) -> None:
    assert parse_release_version(text) == level


def test_an_unknown_release_string_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Version 9\.x is not a valid version"):
        parse_release_version("9.x")


# ---------------------------------------------------------------- Formatter's feature defaults


@pytest.mark.parametrize(("release", "features"), [
    ("3.9-IV0", ()),
    ("4.0-IV0", (("group.version", 1),)),
    ("4.0-IV1", (("group.version", 1),)),
    ("4.0-IV2", (("group.version", 1), ("transaction.version", 2))),
    ("4.1-IV0", (("eligible.leader.replicas.version", 1), ("group.version", 1),
                 ("transaction.version", 2))),
])
def test_a_formatted_bootstrap_finalizes_each_features_default_for_the_release(
        release: str, features: tuple[tuple[str, int], ...]) -> None:
    """Kafka's Formatter gives every supported feature its highest level whose bootstrap
    metadata.version is at most the release's (GroupVersion.GV_1 at 4.0-IV0,
    TransactionVersion.TV_2 at 4.0-IV2, EligibleLeaderReplicasVersion.ELRV_1 at 4.1-IV0),
    and BootstrapMetadata.fromVersions writes metadata.version first, then a record for
    each feature above level 0, by name."""
    level = LEVELS[release]
    formatted = BootstrapMetadata.formatted(level, "format command")
    assert formatted.records == (FeatureLevelRecord(MV, level),
                                 *(FeatureLevelRecord(name, lv) for name, lv in features))
    assert formatted.metadata_version == level

