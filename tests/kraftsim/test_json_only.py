"""``--format json`` and ``--json`` print JSON only: one value per line, no text mixed in."""

from __future__ import annotations

import json

import pytest

from kraftsim.cli import main

SHELL = ["shell", "--format", "json", "-c", "cluster controllers=3 brokers=2 seed=7",
         "-c", "create-topic big partitions=30", "-c", "run-until idle",
         "-c", "ls /image/topics/byName", "-c", "status", "-c", "log leader 0 3",
         "-c", "crash leader", "-c", "run-until idle", "-c", "tree /image/features",
         "-c", "cat /image/features/metadataVersion", "-c", "help", "-c", "nonsense"]


def _json_lines(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[object]:
    main(argv)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines, f"{argv}: no output"
    values = []
    for line in lines:
        try:
            values.append(json.loads(line))
        except ValueError:
            pytest.fail(f"{argv}: a line that is not JSON: {line!r}")
    return values


def test_the_shell_in_json_format_prints_json_only(capsys: pytest.CaptureFixture[str]) -> None:
    values = _json_lines(capsys, SHELL)
    commands = [v["command"] for v in values if isinstance(v, dict) and "command" in v]
    assert commands[:3] == ["cluster controllers=3 brokers=2 seed=7",
                            "create-topic big partitions=30", "run-until idle"]
    assert {"/image/topics/byName": ["big"]} in values
    assert "nonsense" not in commands  # an error is one text line on stderr


def test_the_demo_shell_starts_with_its_own_object(capsys: pytest.CaptureFixture[str]) -> None:
    values = _json_lines(capsys, ["shell", "--demo", "--format", "json", "-c", "status"])
    first, second = values[0], values[1]
    assert isinstance(first, dict) and first["command"] == "--demo"
    assert isinstance(second, dict) and second["activeController"] == 3000


@pytest.mark.parametrize("argv", [["demo", "--json"], ["raft-sim", "--seed", "1", "--json"]])
def test_json_flags_print_one_object(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    values = _json_lines(capsys, argv)
    assert len(values) == 1 and isinstance(values[0], dict)
