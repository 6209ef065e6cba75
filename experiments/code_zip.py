"""kraftsim's own packages as one zip, for executors that do not have kraftsim installed.

On a real cluster the workers run their own Python; the driver adds this zip
to the job (``SparkContext.addPyFile``) and every Python worker imports
kraftsim from it. Only kraftsim's source is shipped: its third-party
dependencies (msgspec, immutables, google-crc32c, with pandas and pyarrow
for Spark) are compiled and must be installed on each worker (the README's
real-cluster recipe lists them).
"""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

PACKAGES = ("raft", "metadata", "kafka_format", "controller", "broker", "sim", "shell",
            "experiments", "kraftsim")
"""The top-level packages an executor may import (what a run touches, and the CLI)."""

WORKER_REQUIREMENTS = ("pyspark", "pandas", "pyarrow", "msgspec", "immutables",
                       "google-crc32c")
"""What a worker's Python needs installed (same pyspark version as the driver)."""

_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
"""Every entry's timestamp: the zip's bytes depend on the source only."""


def package_root(name: str) -> Path:
    """The folder of an importable top-level package."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"package {name} not found")
    return Path(next(iter(spec.submodule_search_locations)))


def build_zip(target: Path) -> Path:
    """Write kraftsim's packages (source and package data, no caches) to ``target``."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in PACKAGES:
            root = package_root(name)
            for path in sorted(root.rglob("*")):
                if not path.is_file() or "__pycache__" in path.parts or \
                        path.suffix in (".pyc", ".pyo"):
                    continue
                entry = zipfile.ZipInfo(f"{name}/{path.relative_to(root).as_posix()}",
                                        _FIXED_TIME)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.external_attr = 0o644 << 16
                archive.writestr(entry, path.read_bytes())
    return target


def worker_requirements() -> str:
    """The ``pip install`` arguments for a worker, pinned to this environment's versions."""
    from importlib import metadata

    pins = []
    for name in WORKER_REQUIREMENTS:
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pins.append(name)
    return " ".join(pins)
