"""The set-up check of ``kraftsim experiment``: one clear line per missing piece.

A sweep needs a supported Python, the ``experiments`` extra (pyspark, pandas,
pyarrow, matplotlib) and a Java that pyspark 4.x runs on (17 or 21). Without
this check a missing Java surfaced as Spark failing to start on ``--master
local[*]``, and a plain ``pip install .`` as ``No module named 'matplotlib'``
from deep inside the pipeline. :func:`problems` finds every one at once and
:func:`check` raises :class:`SetupError` listing them, before Spark starts.
A replay (``--replay``) runs without Spark and needs none of this.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from experiments.model import ExperimentError

EXTRA_MODULES = ("pyspark", "pandas", "pyarrow", "matplotlib")
"""What the ``experiments`` extra installs, by import name."""

JAVA_VERSIONS = (17, 21)
"""The Java releases pyspark 4.x supports."""

MIN_PYTHON = (3, 11)
"""kraftsim's own minimum (pyproject's requires-python)."""

INSTALL_EXTRA = "pip install 'kraftsim[experiments]'"


class SetupError(ExperimentError):
    """The machine is not set up for a sweep; ``problems`` has one line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\nkraftsim: error: ".join(problems))
        self.problems = list(problems)


def _python_problem(version: tuple[int, int]) -> str | None:
    shown = f"{version[0]}.{version[1]}"
    if version < MIN_PYTHON:
        return (f"Python {shown} is not supported: kraftsim needs Python "
                f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer")
    try:
        spark = metadata.metadata("pyspark")
    except metadata.PackageNotFoundError:
        return None
    minors = sorted(int(m.group(1)) for c in spark.get_all("Classifier") or []
                    if (m := re.fullmatch(r"Programming Language :: Python :: 3\.(\d+)", c)))
    if minors and version[0] == 3 and not minors[0] <= version[1] <= minors[-1]:
        return (f"Python {shown} is not supported by pyspark {spark['Version']} (it supports "
                f"Python 3.{minors[0]} to 3.{minors[-1]}); run kraftsim experiment with one "
                f"of those")
    return None


def _missing_modules() -> list[str]:
    """The extra's modules that cannot be found (found without importing them: importing
    pyspark, pandas and matplotlib takes over a second)."""
    missing = []
    for name in EXTRA_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def find_java() -> tuple[str | None, str]:
    """The java executable pyspark would run (``$JAVA_HOME/bin/java``, else ``java`` on
    PATH) and where it looked."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        return (str(java) if java.is_file() and os.access(java, os.X_OK) else None,
                f"JAVA_HOME={home}")
    return shutil.which("java"), "PATH"


def java_major(java: str) -> int | None:
    """The major release of ``java`` (``java -version``), or None if it does not say."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def _java_problem() -> str | None:
    wanted = " or ".join(map(str, JAVA_VERSIONS))
    java, where = find_java()
    if java is None:
        return (f"no Java found ({where}): Spark needs Java {wanted} for pyspark 4.x; install "
                f"one (e.g. Debian/Ubuntu: apt-get install openjdk-17-jre-headless) and put "
                f"its java on PATH or set JAVA_HOME")
    major = java_major(java)
    if major is None:
        return f"{java} does not say its version (java -version); Spark needs Java {wanted}"
    if major not in JAVA_VERSIONS:
        return (f"Java {major} found at {java}, but pyspark 4.x supports Java {wanted}; install "
                f"one and put it first on PATH or set JAVA_HOME")
    return None


def problems(version: tuple[int, int] | None = None) -> list[str]:
    """Every set-up problem, one line each (empty when a sweep can run)."""
    found = []
    python = _python_problem(version or (sys.version_info[0], sys.version_info[1]))
    if python is not None:
        found.append(python)
    missing = _missing_modules()
    if missing:
        found.append(f"kraftsim experiment needs the 'experiments' extra (missing: "
                     f"{', '.join(missing)}): {INSTALL_EXTRA}")
    java = _java_problem()
    if java is not None:
        found.append(java)
    return found


def check() -> None:
    """Raise :class:`SetupError` when :func:`problems` finds any."""
    found = problems()
    if found:
        raise SetupError(found)
