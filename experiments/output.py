"""A run folder: written under a temporary name, renamed into place at the end.

A sweep writes into ``.NAME.partial-PID`` beside its run folder
(``--out``/RUN_ID, see :mod:`experiments.runs`); only a complete folder is
renamed into place (a previous sweep's folder at that path is replaced). So
an interrupted or failed sweep leaves nothing half-written.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from experiments.model import ExperimentError

MARKER = "summary.json"
"""A folder holding this file is a previous sweep's output and may be replaced."""


def staging_path(out: Path) -> Path:
    """Where the sweep writes before the rename."""
    return out.parent / f".{out.name}.partial-{os.getpid()}"


def prepare(out: Path) -> Path:
    """Check that ``out`` can be written and create the staging folder; returns it.

    Raises ExperimentError naming ``--out`` when the folder cannot be made, or
    when ``out`` exists and is not a previous sweep's (nor empty).
    """
    if out.exists() and not (out.is_dir() and ((out / MARKER).exists()
                                               or not any(out.iterdir()))):
        raise ExperimentError(f"--out {out}: exists and is not a kraftsim experiment folder; "
                              f"choose another path or remove it")
    staging = staging_path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        probe = staging / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ExperimentError(f"--out {out}: cannot write there "
                              f"({exc.strerror or type(exc).__name__})") from None
    return staging


def publish(staging: Path, out: Path) -> None:
    """Move the finished staging folder to ``out``, replacing a previous sweep's folder."""
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def discard(staging: Path) -> None:
    """Remove the staging folder (after a failure or an interrupt)."""
    shutil.rmtree(staging, ignore_errors=True)
