"""The set-up check of ``kraftsim experiment``: one clear line each, before Spark starts.

Simulated as a user would meet them: no Java (PATH and JAVA_HOME without
one), a Java pyspark 4.x does not run on, the ``experiments`` extra missing
(its modules blocked from import), an unsupported Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import preflight

RUN = ("import sys\n"
       "for name in sys.argv[1].split(','):\n"
       "    if name: sys.modules[name] = None\n"
       "from kraftsim.cli import main\n"
       "sys.exit(main(sys.argv[2:]))\n")


def _kraftsim(tmp_path: Path, blocked: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", RUN, blocked, "experiment", "failover", "--runs", "2", "--out",
         str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=120)


def _fake_java(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    java = folder / "java"
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2024-01-16' >&2\n")
    java.chmod(0o755)
    return folder


def _errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert all(line.startswith("kraftsim: error: ") for line in lines), done.stderr
    return [line.removeprefix("kraftsim: error: ") for line in lines]


def test_no_java_is_one_line_naming_the_versions(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path / "empty")
    done = subprocess.run(
        [sys.executable, "-c", RUN, "", "experiment", "failover", "--runs", "2"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    (line,) = _errors(done)
    assert line.startswith("no Java found (PATH): Spark needs Java 17 or 21 for pyspark 4.x")
    assert "local[*]" not in line


def test_a_java_home_without_java(tmp_path: Path) -> None:
    (line,) = _errors(_kraftsim(tmp_path, JAVA_HOME=str(tmp_path / "jdk")))
    assert line.startswith(f"no Java found (JAVA_HOME={tmp_path / 'jdk'})")


def test_an_unsupported_java(tmp_path: Path) -> None:
    home = _fake_java(tmp_path / "jdk11" / "bin", "11.0.22").parent
    (line,) = _errors(_kraftsim(tmp_path, JAVA_HOME=str(home)))
    assert line == (f"Java 11 found at {home / 'bin' / 'java'}, but pyspark 4.x supports Java 17 "
                    f"or 21; install one and put it first on PATH or set JAVA_HOME")


def test_a_supported_fake_java_passes_the_check(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    home = _fake_java(tmp_path / "jdk21" / "bin", "21.0.3").parent
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert preflight.problems() == []


def test_a_missing_extra_names_it(tmp_path: Path) -> None:
    (line,) = _errors(_kraftsim(tmp_path, "matplotlib,pyarrow"))
    assert line == ("kraftsim experiment needs the 'experiments' extra (missing: pyarrow, "
                    "matplotlib): pip install 'kraftsim[experiments]'")


def test_every_problem_at_once(tmp_path: Path) -> None:
    lines = _errors(_kraftsim(tmp_path, "pyspark", JAVA_HOME=str(tmp_path / "none")))
    assert [line.split(" ")[0] for line in lines] == ["kraftsim", "no"]


@pytest.mark.parametrize(("version", "expected"), [
    ((3, 10), "Python 3.10 is not supported: kraftsim needs Python 3.11 or newer"),
    ((3, 99), "Python 3.99 is not supported by pyspark "),
])
def test_an_unsupported_python(version: tuple[int, int], expected: str) -> None:
    found = preflight.problems(version)
    assert found and found[0].startswith(expected)


def test_this_python_is_supported() -> None:
    assert preflight._python_problem(sys.version_info[:2]) is None


def test_a_replay_needs_no_java(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path / "empty")
    done = subprocess.run(
        [sys.executable, "-c", RUN, "matplotlib", "experiment", "failover", "--replay", "0",
         "--param", "scenario=crash", "--param", "window=inside", "--param",
         "mode=transactional", "--trace", str(tmp_path / "t.jsonl")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_module_without_a_spec_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in module left in ``sys.modules`` (no ``__spec__``) is not an install."""
    import types
    monkeypatch.setitem(sys.modules, "matplotlib", types.ModuleType("matplotlib"))
    monkeypatch.setitem(sys.modules, "pyarrow", types.ModuleType("pyarrow"))
    assert ("kraftsim experiment needs the 'experiments' extra (missing: pyarrow, matplotlib): "
            "pip install 'kraftsim[experiments]'") in preflight.problems()
