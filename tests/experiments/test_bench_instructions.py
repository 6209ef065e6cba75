"""The instruction-count benchmark: per event of a failover run against the same cluster
idle, each side less its set-up (a fake valgrind stands in for cachegrind here)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

import bench.instructions as instructions
from sim.world import Simulation


def _fake_valgrind(folder: Path) -> Path:
    """A 'valgrind' that runs nothing and prints an instruction count of 1,000,000 plus
    1,000 per run or 100 per idle second asked of the child, as cachegrind prints it."""
    script = folder / "valgrind"
    script.write_text(
        "#!/bin/sh\n"
        'for last; do :; done\n'  # the child's last argument: its amount
        'kind=$(eval echo \\${$(($#-1))})\n'
        'if [ "$kind" = runs ]; then per=1000; else per=100; fi\n'
        'echo "==1== I   refs:      $((1000000 + per * last))" >&2\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_ratio_is_each_side_less_its_set_up_per_event(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_valgrind(tmp_path)
    monkeypatch.setattr(instructions.shutil, "which", lambda name: str(fake))
    lines: list[str] = []
    ratio = instructions.bench_run_instructions(lines.append, runs=3, idle_seconds=2)
    assert ratio is not None and ratio > 0
    runs_line, idle_line, summary = lines
    runs_events = int(runs_line.split(" over ")[1].split()[0].replace(",", ""))
    idle_events = int(idle_line.split(" over ")[1].split()[0].replace(",", ""))
    assert runs_events > 3 and idle_events > 0
    assert ratio == pytest.approx((3000 / runs_events) / (200 / idle_events))
    assert "(cachegrind, 3 forked runs)" in summary and f"{ratio:.2f}x" in summary


def test_the_native_child_counts_every_event_of_the_runs(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    original = Simulation._after_event
    monkeypatch.setenv("KRAFTSIM_COUNT_EVENTS", "1")
    assert instructions.probe("runs", 0) == 0
    assert instructions.probe("runs", 2) > 2 * 20  # a failover run is ~100 events
    assert Simulation._after_event is original  # the count is taken off again
    monkeypatch.delenv("KRAFTSIM_COUNT_EVENTS")
    assert instructions.probe("runs", 2) == 0  # counted in the native child only


def test_skipped_with_a_line_when_valgrind_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    lines: list[str] = []
    assert instructions.bench_run_instructions(lines.append) is None
    assert lines == ["failover run, instructions per event: skipped (valgrind is not "
                     "installed)"]
