"""Kafka users' habits: ``kafka-metadata-shell --snapshot FILE COMMAND...`` as kraftsim shell."""

from __future__ import annotations

from pathlib import Path

import pytest

from kraftsim.cli import main

from .conftest import METADATA_DIR

SNAPSHOT = "00000000000000007205-0000000001.checkpoint"


def test_shell_takes_a_trailing_command(kafka_data: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = str(kafka_data / "noop-heavy" / METADATA_DIR / SNAPSHOT)
    assert main(["shell", "--snapshot", snapshot, "ls", "/image"]) == 0
    assert sorted(capsys.readouterr().out.split()) == [  # Kafka's children, empty ones too
        "acls", "clientQuotas", "cluster", "configs", "delegationToken", "features",
        "producerIds", "provenance", "scram", "topics"]
    assert main(["shell", "--snapshot", snapshot, "-c", "cd /image/features", "ls"]) == 0
    assert capsys.readouterr().out.split() == ["metadataVersion", "zkMigrationState"]
    assert main(["shell", "--snapshot", snapshot, "cat", "/image/cluster/brokers/*"]) == 0
    assert capsys.readouterr().out.startswith("BrokerRegistration(id=1,")
    assert main(["shell", "--snapshot", snapshot, "no-such-command"]) == 1
    assert "no-such-command: unknown command" in capsys.readouterr().err
