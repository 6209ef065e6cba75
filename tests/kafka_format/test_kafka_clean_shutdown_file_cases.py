"""The cases of Kafka's ``CleanShutdownFileHandlerTest``: the clean shutdown file a broker
leaves in a log directory (``.kafka_cleanshutdown``, with its broker epoch since
KIP-966).

kraftsim does not model a broker's clean shutdown of its log directories (its saved runs
are the disks of running nodes), but it reads and writes the file's format:
:func:`~kafka_format.files.write_clean_shutdown` writes Kafka's JSON
(``{"version":0,"brokerEpoch":N}``) and :func:`~kafka_format.files.read_clean_shutdown`
gives the broker epoch, or None where Kafka's ``read`` gives an empty OptionalLong (no
file, or one it cannot read). Kafka's ``exists`` and ``delete`` are the file system's.

Beyond Kafka's cases, what Kafka's reader (Jackson's default mapper, unknown fields
ignored) does with a damaged file: it must start with a JSON object, whose
``brokerEpoch`` must be there and bind to a Java long; ``version`` is not checked beyond
binding to an int; what follows the object is not read.

Not ported: none; every method of the class is here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_format.checkpoints import (
    CLEAN_SHUTDOWN_FILE,
    decode_clean_shutdown,
    encode_clean_shutdown,
)
from kafka_format.files import read_clean_shutdown, write_clean_shutdown


def test_clean_shutdown_file_basic(tmp_path: Path) -> None:
    """testCleanShutdownFileBasic: write 10, read 10, delete."""
    path = write_clean_shutdown(tmp_path, 10)
    assert path == tmp_path / CLEAN_SHUTDOWN_FILE and path.exists()
    assert path.read_text() == '{"version":0,"brokerEpoch":10}'
    assert read_clean_shutdown(tmp_path) == 10
    path.unlink(missing_ok=True)
    assert not path.exists()


def test_clean_shutdown_file_non_exist(tmp_path: Path) -> None:
    """testCleanShutdownFileNonExist: once deleted, the file reads as no epoch."""
    path = write_clean_shutdown(tmp_path, 10, version=0)
    assert path.exists()
    path.unlink(missing_ok=True)
    assert not path.exists()
    assert read_clean_shutdown(tmp_path) is None


def test_clean_shutdown_file_can_parse_with_unknown_fields(tmp_path: Path) -> None:
    """testCleanShutdownFileCanParseWithUnknownFields."""
    path = tmp_path / CLEAN_SHUTDOWN_FILE
    path.write_text('{"version":0,"brokerEpoch":10,"unknown":123}', encoding="utf-8")
    assert path.exists()
    assert read_clean_shutdown(tmp_path) == 10
    path.unlink(missing_ok=True)
    assert not path.exists()


@pytest.mark.parametrize(("text", "epoch"), [
    ('{"version":0,"brokerEpoch":10}', 10),
    ('{"brokerEpoch":10}', 10),                      # no version: 0
    ('{"version":7,"brokerEpoch":10}', 10),          # the version is not checked
    ('{"version":null,"brokerEpoch":10}', 10),
    ('  {"brokerEpoch":-1} trailing', -1),           # nothing after the object is read
    ('{"brokerEpoch":9223372036854775807}', 2**63 - 1),
    ('{"version":-2147483648,"brokerEpoch":-9223372036854775808}', -2**63),
    ('{"brokerEpoch":null,"brokerEpoch":4}', 4),     # a repeated field binds again
    ('{"brokerEpoch":4,"brokerEpoch":null}', None),
    ('{"brokerEpoch":{"a":1},"brokerEpoch":4}', None),  # each binding must succeed
    ('{}', None),
    ('{"unknown":{"a":[1,2]},"brokerEpoch":3}', 3),
    ('', None),
    ('not json', None),
    ('[10]', None),
    ('{"version":0}', None),                         # no broker epoch
    ('{"version":0,"brokerEpoch":null}', None),
    ('{"brokerEpoch":9223372036854775808}', None),   # beyond a long
    ('{"brokerEpoch":true}', None),
    ('{"brokerEpoch":[10]}', None),
    ('{"brokerEpoch":NaN}', None),
    ('{"version":"x","brokerEpoch":10}', None),      # a version that is not an int
    ('{"version":2147483648,"brokerEpoch":10}', None),
    ('{"brokerEpoch":10', None),                     # cut short
], ids=["written", "no-version", "other-version", "null-version", "trailing-text",
        "long-max", "int-and-long-min", "repeated-field", "repeated-null", "repeated-bad",
        "empty-object",
        "unknown-nested", "empty", "not-json", "array",
        "no-epoch", "null-epoch", "epoch-beyond-long", "boolean-epoch", "array-epoch",
        "nan", "string-version", "version-beyond-int", "cut"])
def test_what_kafka_reads_from_a_clean_shutdown_file(text: str, epoch: int | None) -> None:
    """The epoch Kafka's reader finds, or none."""
    assert decode_clean_shutdown(text) == epoch


def test_the_written_file_reads_back() -> None:
    """Any broker epoch round-trips."""
    for epoch in (0, 1, 2**63 - 1, -1):
        assert decode_clean_shutdown(encode_clean_shutdown(epoch)) == epoch
