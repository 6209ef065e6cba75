"""Fixtures of the shell tests: a session that records its output, the real Kafka files."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.shell.shell_recorder import Recorder

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shell() -> Callable[..., Recorder]:
    return Recorder


@pytest.fixture(scope="session")
def kafka_data() -> Path:
    """The real Kafka files (``$KRAFTSIM_KAFKA_DATA`` or ``../shared/kafka-data``)."""
    configured = os.environ.get("KRAFTSIM_KAFKA_DATA")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "kafka-data"
    if not (path / "bootstrap-txn" / "__cluster_metadata-0").is_dir():
        pytest.fail(f"the real Kafka test files are missing from {path} (set "
                    f"KRAFTSIM_KAFKA_DATA)", pytrace=False)
    return path
