"""What kraftsim keeps in ``$XDG_CACHE_HOME/kraftsim`` (default ``~/.cache/kraftsim``).

Only ``kraftsim experiment`` writes there: one class-data-sharing archive of
the Spark driver JVM per environment (``spark-VERSION-KEY.jsa``, about
190 MB; ``jvm_cache.py``), a small ``.json`` beside it naming the
environment (Python prefix, pyspark, java, JVM flags) it was made for, and
while a session writes an archive a ``.partial-PID`` file and a ``.lock``.
Partial files of sessions that died are removed by the next session and by
``kraftsim cache clean``.

``kraftsim cache info`` lists the entries by environment with sizes;
``kraftsim cache clean`` removes them all, ``--checkout DIR`` only those of
environments inside DIR (``make clean`` runs this file as a script, with
the standard library only, so it works after the checkout's venv is gone).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

UNKNOWN = "unknown (made before kraftsim recorded it, or not kraftsim's)"
"""The environment of a file without a description (made before descriptions, or a
stray file)."""


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/kraftsim``, else ``~/.cache/kraftsim``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kraftsim"


def pid_alive(pid: int) -> bool:
    """True if a process with this id runs (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class Entry:
    """One file of the cache: what it is, its size, the environment it belongs to."""

    path: Path
    size: int
    kind: str
    environment: str


def _describe(path: Path) -> tuple[str, str]:
    """(kind, environment) of a cache file."""
    name = path.name
    stem = name.split(".jsa", 1)[0] if ".jsa" in name else name.removesuffix(".json")
    environment = UNKNOWN
    description = path.with_name(stem + ".json")
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        environment = str(json.loads(description.read_text())["environment"])
    if ".partial-" in name:
        pid = name.rsplit("-", 1)[-1]
        running = pid.isdigit() and pid_alive(int(pid))
        kind = "archive being written" if running else "partial archive of a killed run"
    elif name.endswith(".jsa"):
        kind = "class-data archive of the Spark driver JVM"
    elif name.endswith(".lock"):
        try:
            owner = path.read_text().strip()
        except OSError:
            owner = ""
        running = not owner.isdigit() or pid_alive(int(owner))
        kind = "lock of an archive being written" if running else "lock of a killed run"
    elif name.endswith(".json") and name.startswith("spark-"):
        kind = "description of an archive"
    else:
        kind = "other file"
    return kind, environment


def entries(folder: Path | None = None) -> list[Entry]:
    """Every file in the cache, sorted by environment then name."""
    folder = folder or cache_dir()
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        try:
            size = path.stat().st_size if path.is_file() else _tree_size(path)
        except OSError:
            continue
        kind, environment = _describe(path)
        found.append(Entry(path, size, kind, environment))
    return sorted(found, key=lambda e: (e.environment, e.path.name))


KILLED = ("partial archive of a killed run", "lock of a killed run")
"""Kinds of files left by sessions that died; every clean removes them."""


def _tree_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _inside(environment: str, checkout: Path) -> bool:
    if environment == UNKNOWN:
        return False
    try:
        Path(environment).resolve().relative_to(checkout.resolve())
    except ValueError:
        return False
    return True


def clean(checkout: Path | None = None, folder: Path | None = None) -> list[Entry]:
    """Remove the cache (or, with ``checkout``, the entries of environments inside it, and
    files of killed runs); returns what was removed. Files a running session is writing
    are kept."""
    removed = []
    for entry in entries(folder):
        if entry.kind in ("archive being written", "lock of an archive being written"):
            continue  # a running session's; it removes them itself
        if checkout is not None and entry.kind not in KILLED and \
                not _inside(entry.environment, checkout):
            continue
        if entry.path.is_dir():
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            entry.path.unlink(missing_ok=True)
        removed.append(entry)
    folder = folder or cache_dir()
    if checkout is None and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    return removed


def size_text(size: int) -> str:
    """A size in B, kB, MB or GB."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} B"  # pragma: no cover


def info_text(folder: Path | None = None, current: str | None = None) -> str:
    """What ``kraftsim cache info`` prints: the folder, then the entries per environment."""
    folder = folder or cache_dir()
    found = entries(folder)
    total = sum(e.size for e in found)
    lines = [f"kraftsim cache: {folder} ({size_text(total)} in {len(found)} file(s))"]
    if not found:
        lines.append("  empty (kraftsim experiment writes a Spark class-data archive here)")
    environment = None
    for entry in found:
        if entry.environment != environment:
            environment = entry.environment
            here = " (this environment)" if current and environment == current else ""
            gone = "" if environment == UNKNOWN or Path(environment).exists() else " (gone)"
            lines.append(f"  environment {environment}{here}{gone}:")
        lines.append(f"    {entry.path.name:<48} {size_text(entry.size):>9}  {entry.kind}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python experiments/cache_dir.py clean --checkout DIR`` (what ``make clean`` runs)."""
    parser = argparse.ArgumentParser(prog="cache_dir.py")
    parser.add_argument("action", choices=("info", "clean"))
    parser.add_argument("--checkout", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.action == "info":
        print(info_text(current=sys.prefix))
        return 0
    removed = clean(args.checkout)
    print(f"removed {len(removed)} file(s), {size_text(sum(e.size for e in removed))} from "
          f"{cache_dir()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
