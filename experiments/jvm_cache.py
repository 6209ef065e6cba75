"""A class-data-sharing archive of the Spark driver JVM's classes, made once per install.

The driver JVM loads thousands of Spark classes at start and in its first
job. JDK 13+ can write the classes it loaded to an archive when it exits
(``-XX:ArchiveClassesAtExit``) and map that archive at the next start
(``-XX:SharedArchiveFile``). Measured here on 2 busy cores: session start
7.7-9.2 s -> 2.9-5.6 s, the first job 12.6-16.1 s -> 9.0-10.2 s.

The archive (about 190 MB) lives in ``$XDG_CACHE_HOME/kraftsim`` (default
``~/.cache/kraftsim``), named after everything that must match: the pyspark
version and install, its jars, the java binary and the JVM flags. The first
session writes it under a temporary name when its JVM exits and renames it
into place (one session at a time: the others start without it meanwhile);
a JVM that finds a stale archive ignores it. ``KRAFTSIM_SPARK_CDS=0``
turns it off. Beside the archive a ``.json`` names the environment it was
made for (``kraftsim cache info`` shows it); partial files and locks of
sessions that were killed are removed by the next session
(``cache_dir.py``). A new archive replaces the ones it supersedes: those of
the same environment, java and flags (a reinstalled or upgraded environment
would otherwise leave 190 MB behind at each install) and those of
environments that are gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

from experiments.cache_dir import cache_dir, pid_alive

STALE_LOCK_S = 1800
"""A lock this old belongs to a session that died while writing the archive."""


def _java_binary() -> str:
    """The java that spark-submit will run (``$JAVA_HOME/bin/java``, else the PATH's)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        return str(Path(home) / "bin" / "java")
    return shutil.which("java") or "java"


def archive_path(jvm_flags: str) -> Path | None:
    """Where the archive for this install and these flags lives; None when turned off."""
    if os.environ.get("KRAFTSIM_SPARK_CDS", "1") == "0":
        return None
    import pyspark

    home = Path(pyspark.__file__).parent
    java = os.path.realpath(_java_binary())
    parts = [pyspark.__version__, str(home), jvm_flags, java]
    for path in (home / "jars", Path(java)):
        try:
            parts.append(str(path.stat().st_mtime_ns))
        except OSError:
            return None
    key = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
    return cache_dir() / f"spark-{pyspark.__version__}-{key}.jsa"


def description(jvm_flags: str) -> dict[str, str]:
    """What the archive of this environment was made for (written beside it)."""
    import pyspark

    return {"environment": sys.prefix, "pyspark": pyspark.__version__,
            "pyspark_home": str(Path(pyspark.__file__).parent),
            "java": os.path.realpath(_java_binary()), "jvm_flags": jvm_flags,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def describe(archive: Path, jvm_flags: str) -> None:
    """Write the archive's description beside it (``.json``); best effort."""
    with contextlib.suppress(OSError):
        archive.with_suffix(".json").write_text(
            json.dumps(description(jvm_flags), indent=2, sort_keys=True) + "\n")


def remove_orphans(folder: Path) -> list[Path]:
    """Remove partial archives and locks of sessions that are no longer running."""
    removed: list[Path] = []
    try:
        names = list(folder.iterdir())
    except OSError:
        return removed
    for path in names:
        owner = _owner(path)
        if owner is None or pid_alive(owner):
            continue
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _owner(path: Path) -> int | None:
    """The process id that writes a partial archive or holds a lock (None: not such a file
    or unreadable)."""
    if ".jsa.partial-" in path.name:
        pid = path.name.rsplit("-", 1)[-1]
        return int(pid) if pid.isdigit() else None
    if path.name.endswith(".jsa.lock"):
        try:
            text = path.read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None
    return None


def driver_options(jvm_flags: str) -> tuple[str, Path | None, Path | None]:
    """(extra JVM options, archive being written, its final path) for a driver JVM."""
    archive = archive_path(jvm_flags)
    if archive is None:
        return "", None, None
    remove_orphans(archive.parent)
    if archive.exists():
        if not archive.with_suffix(".json").exists():  # made before descriptions
            describe(archive, jvm_flags)
        return f"-XX:SharedArchiveFile={archive}", None, None
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
        if not _take_lock(_lock_of(archive)):
            return "", None, None  # another session is writing it
    except OSError:
        return "", None, None
    partial = archive.with_name(f"{archive.name}.partial-{os.getpid()}")
    return f"-XX:ArchiveClassesAtExit={partial}", partial, archive


def _lock_of(archive: Path) -> Path:
    return archive.with_name(archive.name + ".lock")


def _take_lock(lock: Path) -> bool:
    """Create ``lock``; a lock older than STALE_LOCK_S (its writer died) is taken over."""
    try:
        if time.time() - lock.stat().st_mtime > STALE_LOCK_S:
            lock.unlink(missing_ok=True)
    except FileNotFoundError:
        pass
    try:
        handle = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    try:
        os.write(handle, str(os.getpid()).encode())
    finally:
        os.close(handle)
    return True


def finish(partial: Path | None, archive: Path | None, jvm_exited_cleanly: bool,
           jvm_flags: str = "") -> None:
    """Move a freshly written archive into place with its description (or drop an
    incomplete one)."""
    if partial is None or archive is None:
        return
    try:
        if jvm_exited_cleanly and partial.exists() and partial.stat().st_size > 0:
            os.replace(partial, archive)
            describe(archive, jvm_flags)
            remove_superseded(archive)
        else:
            partial.unlink(missing_ok=True)
    finally:
        _lock_of(archive).unlink(missing_ok=True)


def remove_superseded(archive: Path) -> list[Path]:
    """Remove the archives (and their descriptions) that no session can map again now that
    ``archive`` is in place: those made for the same environment, java and JVM flags
    (the environment was reinstalled or upgraded, so their key, which covers the jars'
    and java's times, never matches again) and those of environments that are gone.
    Archives without a description and those of other flags are kept."""
    try:
        mine = json.loads(archive.with_suffix(".json").read_text())
        names = sorted(archive.parent.glob("spark-*.jsa"))
    except (OSError, ValueError):
        return []
    same = ("environment", "java", "jvm_flags")
    removed: list[Path] = []
    for other in names:
        if other == archive:
            continue
        try:
            theirs = json.loads(other.with_suffix(".json").read_text())
            environment = str(theirs["environment"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if all(theirs.get(k) == mine.get(k) for k in same) or not Path(environment).exists():
            for path in (other, other.with_suffix(".json")):
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(path)
    return removed
