"""What a sweep says while it runs: from the first second to the class-data archive.

The unit tests drive the progress display and a session's stop with fakes;
the Spark test runs the command and reads its status lines as they come.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from experiments import jvm_cache
from experiments.progress import Progress, heartbeat
from experiments.spark_env import SparkHandle
from tests.experiments.helpers import KRAFTSIM
from tests.experiments.parquet_rows import parquet_rows


def test_progress_says_what_follows_the_last_run() -> None:
    done = [0]
    stream = io.StringIO()
    with Progress("failover", 4, lambda: done[0], stream, interval_s=0.01,
                  after="every run done; Spark writes the rows (Parquet) ..."):
        time.sleep(0.1)
        done[0] = 4
        time.sleep(0.1)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("failover: 0/4 runs (0%) in ")
    assert lines[-2].startswith("failover: 4/4 runs (100%) in ")
    assert lines[-1] == "failover: every run done; Spark writes the rows (Parquet) ..."
    assert sum(1 for line in lines if "every run done" in line) == 1


class _Session:
    def stop(self) -> None:
        pass


class _ArchivingJvm:
    """A JVM that writes its class-data archive when it exits."""

    stdin = None

    def __init__(self, partial: Path) -> None:
        self.partial = partial

    def wait(self, timeout: float) -> int:
        self.partial.write_bytes(b"\0" * 1000)
        return 0


def test_stopping_a_session_announces_the_archive(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("KRAFTSIM_SPARK_CDS", raising=False)
    extra, partial, archive = jvm_cache.driver_options("-XX:+UseSerialGC")
    assert partial is not None and archive is not None
    assert extra == f"-XX:ArchiveClassesAtExit={partial}"
    stream = io.StringIO()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    log = (scratch / "jvm.log").open("ab")
    handle = SparkHandle(_Session(), scratch, scratch / "jvm.log", log, _ArchivingJvm(partial),
                         (partial, archive), stream)
    handle.stop()
    first, second = stream.getvalue().splitlines()
    assert first.startswith("saving the JVM class-data archive for faster Spark starts "
                            f"(once per environment, about 190 MB, in {archive.parent}")
    assert second.startswith("class-data archive saved in ")
    assert archive.exists() and not partial.exists() and not scratch.exists()
    assert sorted(p.name for p in archive.parent.iterdir()) == [archive.name,
                                                                archive.stem + ".json"]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.xdist_group("spark")
def test_a_sweep_speaks_from_its_first_second_to_its_end(tmp_path: Path) -> None:
    started = time.monotonic()
    process = subprocess.Popen(
        [KRAFTSIM, "experiment", "failover", "--runs", "2", "--master", "local[1]", "--out",
         str(tmp_path / "out"), "--json", "--rows", "kept/runs"], cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "KRAFTSIM_SPARK_CDS": "0"})
    assert process.stderr is not None and process.stdout is not None
    lines: list[tuple[float, str]] = []
    for line in process.stderr:
        lines.append((time.monotonic() - started, line.rstrip("\n")))
    out: Any = process.stdout.read()
    assert process.wait(timeout=600) == 0, lines
    texts = [text for _, text in lines if not text.startswith("still starting Spark (")]
    assert texts[0] == "starting Spark (local[1]) ..."
    assert lines[0][0] < 10  # before the JVM: 1-2 s here, the JVM takes 6-20 s more
    assert texts[1].startswith("Spark 4") and " started in " in texts[1]
    order = ["starting Spark", "Spark 4", "failover: 0/2 runs", "failover: 2/2 runs (100%)",
             "failover: every run done", "aggregating 2 rows", "writing report.md"]
    positions = [next(i for i, t in enumerate(texts) if t.startswith(p)) for p in order]
    assert positions == sorted(positions), texts
    assert out.count("\n") == 1 and out.startswith("{")  # --json: stdout is JSON only
    rows = tmp_path / "kept" / "runs"
    assert json.loads(out)["rows"] == rows.as_uri()
    assert len(parquet_rows(rows.parent)) == 2
    again = subprocess.run(
        [KRAFTSIM, "experiment", "failover", "--runs", "2", "--master", "local[1]", "--out",
         str(tmp_path / "out2"), "--rows", rows.as_uri()], cwd=tmp_path, capture_output=True,
        text=True, env={**os.environ, "KRAFTSIM_SPARK_CDS": "0"}, timeout=600)
    assert again.returncode == 2
    assert again.stderr.splitlines()[-1] == (f"kraftsim: error: --rows {rows.as_uri()}: "
                                             f"already exists; choose a new location")
    assert not (tmp_path / "out2").exists() and len(parquet_rows(rows.parent)) == 2


def test_a_sweep_that_does_not_start_says_what_may_be_wrong() -> None:
    stream = io.StringIO()
    with Progress("failover", 4, lambda: 0, stream, interval_s=0.01, stall="is a worker "
                  "registered?", stall_s=0.05):
        time.sleep(0.2)
    stalls = [line for line in stream.getvalue().splitlines() if "no run done" in line]
    assert stalls == ["failover: no run done after 0 s; is a worker registered?"]


def test_a_step_without_a_count_shows_it_is_alive() -> None:
    stream = io.StringIO()
    with heartbeat(stream, "still starting Spark", every_s=0.05):
        time.sleep(0.18)
    lines = stream.getvalue().splitlines()
    assert 2 <= len(lines) <= 4
    assert all(line.startswith("still starting Spark (") and line.endswith(" s)")
               for line in lines)
    quiet = io.StringIO()
    with heartbeat(quiet, "still starting Spark", every_s=5):
        pass
    assert quiet.getvalue() == ""
