"""``kraftsim raft-sim``: summaries, exit codes and one-line errors for bad input."""

from __future__ import annotations

import pytest

from kraftsim.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_summary_names_leaders_faults_and_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "raft-sim", "--seed", "3", "--duration", "15000",
                       "--faults", "crash:leader@5000;restart:0@9000;restart:1@9000;"
                                   "restart:2@9000")
    assert code == 0
    assert "epoch 1: node" in out
    assert out.count(" elected at ") >= 2  # a new leader after the crash
    assert "crash:leader@5000 (node" in out
    assert "invariants: all 10 held after every event" in out
    assert out.splitlines()[1].startswith("config: {")


@pytest.mark.parametrize(("argv", "field"), [
    (["--voters", "0"], "voters"),
    (["--observers", "-1"], "observers"),
    (["--duration", "-5"], "duration"),
    (["--faults", "crash:7@100"], "faults"),
    (["--faults", "explode:1@100"], "faults"),
    (["--faults", "crash:1"], "faults"),
    (["--faults", "pause:1@100"], "faults"),
])
def test_bad_input_is_one_clear_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                     field: str) -> None:
    code, out, err = run(capsys, "raft-sim", *argv)
    assert code == 2
    assert out == ""
    assert err.startswith(f"kraftsim: error: {field}:")
    assert len(err.strip().splitlines()) == 1


def test_an_injected_bug_is_reported_with_a_replay_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "raft-sim", "--seed", "1", "--mutation", "hw-without-majority")
    assert code == 2
    assert "invariants: VIOLATED at event" in out
    assert "replay: kraftsim raft-sim --seed 1 --mutation hw-without-majority" in out
