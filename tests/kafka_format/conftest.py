"""Fixtures: the real Kafka files, read in place from the shared data directory.

The directory is ``$KRAFTSIM_KAFKA_DATA`` or ``<repo root>/../shared/kafka-data``.
If it is missing the tests fail (never skip): interop is the point of this area.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_format import LogDecodeResult, decode_log

REPO_ROOT = Path(__file__).resolve().parents[2]
METADATA_DIR = "__cluster_metadata-0"
FIRST_SEGMENT = "00000000000000000000.log"


def kafka_data_dir() -> Path:
    """Where the real Kafka files are; fails the test run clearly when absent."""
    configured = os.environ.get("KRAFTSIM_KAFKA_DATA")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "kafka-data"
    if not (path / "bootstrap-txn" / METADATA_DIR / FIRST_SEGMENT).is_file():
        pytest.fail(
            f"the real Kafka test files are missing: expected them in {path} "
            "(set KRAFTSIM_KAFKA_DATA to the kafka-data directory)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def kafka_data() -> Path:
    return kafka_data_dir()


_DECODED: dict[str, tuple[bytes, LogDecodeResult]] = {}


def segment(dataset: str) -> tuple[bytes, LogDecodeResult]:
    """The first log segment of a dataset: its bytes and their decoding (cached)."""
    if dataset not in _DECODED:
        path = kafka_data_dir() / dataset / METADATA_DIR / FIRST_SEGMENT
        data = path.read_bytes()
        _DECODED[dataset] = (data, decode_log(data, source=str(path), first_offset=0))
    return _DECODED[dataset]
