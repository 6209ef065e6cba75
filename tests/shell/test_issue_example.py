"""The example of the shell issue, run as a user would: exit 0, ``big`` never shown."""

from __future__ import annotations

import pytest

from kraftsim.cli import main

EXAMPLE = ["cluster controllers=3 brokers=2 seed=7 max-records-per-batch=50",
           "create-topic big partitions=2000", "run-until open-txn",
           "ls /image/topics/byName", "crash leader", "run-until idle",
           "ls /image/topics/byName", "status"]


def test_issue_example(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["shell"]
    for command in EXAMPLE:
        argv += ["-c", command]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    crash = next(i for i, line in enumerate(lines) if line.startswith("crashed controller 3000"))
    assert "is open" in lines[crash - 1]  # the first ls, in the open window, printed nothing
    idle = next(i for i, line in enumerate(lines) if "idle; controller" in line)
    assert lines[idle + 1].startswith("time ")  # the second ls printed nothing: no big
    status = "\n".join(lines[idle + 1:])
    assert "leader 3002 (epoch 2)" in status and "no open transaction" in status
    assert "NOT_CONTROLLER" in out  # the outcome was reported when the leader crashed


def test_json_status_uses_kafka_field_names(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    argv = ["shell", "--format", "json"]
    for command in EXAMPLE:
        argv += ["-c", command]
    assert main(argv) == 0
    status = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert status["leaderId"] == 3002 and status["leaderEpoch"] == 2
    assert status["openTransaction"] is None
    node = next(n for n in status["nodes"] if n["nodeId"] == 3001)
    assert {"logEndOffset", "highWatermark", "lastStableOffset"} <= node.keys()
