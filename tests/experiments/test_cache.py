"""``kraftsim cache info|clean``, the class-data archive's bookkeeping and ``make clean``'s step.

Every test points ``XDG_CACHE_HOME`` at its own folder (the real cache is
shared with other environments of the machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import cache_dir, jvm_cache
from kraftsim.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "kraftsim"
    folder.mkdir(parents=True)
    return folder


def _archive(folder: Path, key: str, environment: Path, size: int) -> Path:
    archive = folder / f"spark-4.3.0-{key}.jsa"
    archive.write_bytes(b"\0" * size)
    archive.with_suffix(".json").write_text(json.dumps({"environment": str(environment)}))
    return archive


def test_info_lists_each_environment_with_sizes(cache: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _archive(cache, "aaaa", Path(sys.prefix), 2_500_000)
    _archive(cache, "bbbb", tmp_path / "other" / ".venv", 1_000)
    (cache / f"spark-4.3.0-cccc.jsa.partial-{_dead_pid()}").write_bytes(b"\0" * 10)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"kraftsim cache: {cache} (2.5 MB in 5 file(s))"
    assert f"  environment {sys.prefix} (this environment):" in out
    assert f"  environment {tmp_path / 'other' / '.venv'} (gone):" in out
    assert "2.5 MB  class-data archive of the Spark driver JVM" in out
    assert "partial archive of a killed run" in out
    assert main(["cache", "info", "--json"]) == 0
    entries = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sum(e["bytes"] for e in entries) == 2_500_000 + 1_000 + 10 + sum(
        len((cache / f"spark-4.3.0-{k}.json").read_bytes()) for k in ("aaaa", "bbbb"))


def test_clean_checkout_removes_only_that_checkouts_entries(
        cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = _archive(cache, "aaaa", tmp_path / "checkout" / ".venv", 100)
    theirs = _archive(cache, "bbbb", tmp_path / "elsewhere" / ".venv", 100)
    killed = cache / f"spark-4.3.0-cccc.jsa.partial-{_dead_pid()}"
    killed.write_bytes(b"x")
    assert main(["cache", "clean", "--checkout", str(tmp_path / "checkout")]) == 0
    assert "removed 3 file(s) of environments in" in capsys.readouterr().out
    assert sorted(p.name for p in cache.iterdir()) == [theirs.name,
                                                       theirs.with_suffix(".json").name]
    assert not mine.exists() and not killed.exists()
    assert main(["cache", "clean"]) == 0
    assert not cache.exists()
    assert main(["cache", "info"]) == 0
    assert "empty" in capsys.readouterr().out


def test_make_cleans_step_runs_without_the_venv(cache: Path, tmp_path: Path) -> None:
    """What ``make clean`` runs: the standard library only (isolated mode, no site)."""
    mine = _archive(cache, "aaaa", ROOT / ".venv", 100)
    other = _archive(cache, "bbbb", tmp_path / "x", 100)
    assert "-I experiments/cache_dir.py clean --checkout $(CURDIR)" in \
        (ROOT / "Makefile").read_text()
    done = subprocess.run([sys.executable, "-I", "-S", "experiments/cache_dir.py", "clean",
                           "--checkout", str(ROOT)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not mine.exists() and other.exists()


def test_a_killed_sessions_partial_archive_and_lock_go(cache: Path) -> None:
    dead = _dead_pid()
    partial = cache / f"spark-4.3.0-dddd.jsa.partial-{dead}"
    partial.write_bytes(b"\0" * 100)
    lock = cache / "spark-4.3.0-dddd.jsa.lock"
    lock.write_text(str(dead))
    running = cache / f"spark-4.3.0-eeee.jsa.partial-{os.getpid()}"
    running.write_bytes(b"\0")
    assert sorted(p.name for p in jvm_cache.remove_orphans(cache)) == sorted(
        [partial.name, lock.name])
    assert running.exists()


def test_a_new_archive_gets_its_description(cache: Path) -> None:
    archive = jvm_cache.archive_path("-XX:+UseSerialGC")
    assert archive is not None and archive.parent == cache
    partial = archive.with_name(archive.name + ".partial-1")
    partial.write_bytes(b"\0" * 10)
    jvm_cache.finish(partial, archive, True, "-XX:+UseSerialGC")
    assert archive.exists() and not partial.exists()
    described = json.loads(archive.with_suffix(".json").read_text())
    assert described["environment"] == sys.prefix
    assert described["jvm_flags"] == "-XX:+UseSerialGC"
    assert [e.environment for e in cache_dir.entries()] == [sys.prefix, sys.prefix]


def test_a_new_archive_replaces_the_ones_it_supersedes(cache: Path, tmp_path: Path) -> None:
    flags = "-XX:+UseSerialGC"
    made_before = jvm_cache.description(flags)
    reinstalled = _archive(cache, "old1", Path(sys.prefix), 10)  # before a reinstall
    reinstalled.with_suffix(".json").write_text(json.dumps(made_before))
    other_flags = _archive(cache, "flag", Path(sys.prefix), 10)
    other_flags.with_suffix(".json").write_text(json.dumps({**made_before, "jvm_flags": "-Xint"}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    live = _archive(cache, "live", elsewhere, 10)
    gone = _archive(cache, "gone", tmp_path / "removed" / ".venv", 10)
    undescribed = cache / "spark-4.3.0-none.jsa"
    undescribed.write_bytes(b"\0")
    archive = jvm_cache.archive_path(flags)
    assert archive is not None
    partial = archive.with_name(archive.name + ".partial-1")
    partial.write_bytes(b"\0" * 10)
    jvm_cache.finish(partial, archive, True, flags)
    left = sorted(p.name for p in cache.iterdir())
    assert left == sorted([archive.name, archive.with_suffix(".json").name,
                           other_flags.name, other_flags.with_suffix(".json").name,
                           live.name, live.with_suffix(".json").name, undescribed.name])
    assert not reinstalled.exists() and not gone.exists()


def test_an_incomplete_archive_removes_nothing(cache: Path) -> None:
    flags = "-XX:+UseSerialGC"
    earlier = _archive(cache, "old1", Path(sys.prefix), 10)
    earlier.with_suffix(".json").write_text(json.dumps(jvm_cache.description(flags)))
    archive = jvm_cache.archive_path(flags)
    assert archive is not None
    partial = archive.with_name(archive.name + ".partial-1")
    partial.write_bytes(b"\0" * 10)
    jvm_cache.finish(partial, archive, False, flags)  # the JVM did not exit cleanly
    assert earlier.exists() and not archive.exists() and not partial.exists()


def test_clean_keeps_what_a_running_session_writes(cache: Path, tmp_path: Path) -> None:
    running = cache / f"spark-4.3.0-ffff.jsa.partial-{os.getpid()}"
    running.write_bytes(b"\0")
    lock = cache / "spark-4.3.0-ffff.jsa.lock"
    lock.write_text(str(os.getpid()))
    stale = cache / "spark-4.3.0-gggg.jsa.lock"
    stale.write_text(str(_dead_pid()))
    _archive(cache, "aaaa", tmp_path / "env", 10)
    removed = {e.path.name for e in cache_dir.clean()}
    assert removed == {stale.name, "spark-4.3.0-aaaa.jsa", "spark-4.3.0-aaaa.json"}
    assert running.exists() and lock.exists()


def test_a_session_start_removes_killed_runs_files(cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KRAFTSIM_SPARK_CDS", raising=False)
    archive = jvm_cache.archive_path("-XX:+UseSerialGC")
    assert archive is not None
    archive.write_bytes(b"\0")  # this environment's archive is there already
    killed = cache / f"spark-4.3.0-other.jsa.partial-{_dead_pid()}"
    killed.write_bytes(b"\0" * 100)
    extra, partial, _ = jvm_cache.driver_options("-XX:+UseSerialGC")
    assert extra == f"-XX:SharedArchiveFile={archive}" and partial is None
    assert not killed.exists()
    assert archive.with_suffix(".json").exists()  # described on first use


def test_a_second_session_runs_without_the_archive_another_writes(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live session holds the archive's lock: the next one neither waits nor writes it."""
    monkeypatch.delenv("KRAFTSIM_SPARK_CDS", raising=False)
    archive = jvm_cache.archive_path("-XX:+UseSerialGC")
    assert archive is not None
    lock = archive.with_name(archive.name + ".lock")
    lock.write_text(str(os.getpid()))
    assert jvm_cache.driver_options("-XX:+UseSerialGC") == ("", None, None)
    assert lock.read_text() == str(os.getpid()) and not archive.exists()


def test_an_archive_is_named_by_pyspark_and_a_16_digit_key_of_its_flags(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``spark-VERSION-KEY.jsa`` in the cache, one key per set of JVM flags."""
    import re

    import pyspark
    monkeypatch.delenv("KRAFTSIM_SPARK_CDS", raising=False)
    serial = jvm_cache.archive_path("-XX:+UseSerialGC")
    parallel = jvm_cache.archive_path("-XX:+UseParallelGC")
    assert serial is not None and parallel is not None
    for archive in (serial, parallel):
        assert archive.parent == cache
        assert re.fullmatch(rf"spark-{re.escape(pyspark.__version__)}-[0-9a-f]{{16}}\.jsa",
                            archive.name), archive.name
    assert serial != parallel and serial == jvm_cache.archive_path("-XX:+UseSerialGC")
    monkeypatch.setenv("KRAFTSIM_SPARK_CDS", "0")
    assert jvm_cache.archive_path("-XX:+UseSerialGC") is None


def test_a_session_after_a_killed_one_writes_the_archive(cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A session that died holding the archive's lock does not stop the next from writing
    it: the lock names its process, which is gone."""
    monkeypatch.delenv("KRAFTSIM_SPARK_CDS", raising=False)
    killed = subprocess.run(
        [sys.executable, "-c", "from experiments import jvm_cache\n"
         "print(jvm_cache.driver_options('-XX:+UseSerialGC')[0])"],
        capture_output=True, text=True, check=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert killed.stdout.startswith("-XX:ArchiveClassesAtExit=")
    extra, partial, archive = jvm_cache.driver_options("-XX:+UseSerialGC")
    assert extra == f"-XX:ArchiveClassesAtExit={partial}"
    assert archive == jvm_cache.archive_path("-XX:+UseSerialGC")


def test_no_archive_for_a_java_that_is_not_there(cache: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """JAVA_HOME names a folder without a java: no archive is made or mapped."""
    monkeypatch.delenv("KRAFTSIM_SPARK_CDS", raising=False)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    assert jvm_cache.archive_path("-XX:+UseSerialGC") is None
    assert jvm_cache.driver_options("-XX:+UseSerialGC") == ("", None, None)


@pytest.mark.parametrize(("size", "text"), [
    (0, "0 B"), (999, "999 B"), (1000, "1.0 kB"), (1500, "1.5 kB"), (999_949, "999.9 kB"),
    (190_000_000, "190.0 MB"), (2_500_000_000, "2.5 GB"), (5_000_000_000_000, "5000.0 GB"),
])
def test_cache_info_gives_sizes_in_powers_of_1000(size: int, text: str) -> None:
    assert cache_dir.size_text(size) == text
