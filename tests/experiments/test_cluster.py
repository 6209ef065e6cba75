"""A real-cluster sweep: the worker runs another virtual environment, without kraftsim.

The worker (and its master) start from a fresh virtual environment holding
pyspark and kraftsim's compiled dependencies but not kraftsim, in a working
directory of their own, with that environment's ``python3`` first on PATH.
The driver runs ``kraftsim experiment`` with ``--driver-host``, ``--conf``
and ``--rows`` (a ``file://`` URI); kraftsim reaches the executors as the
zip the driver adds to the job. A ``sitecustomize`` in the worker's
environment records which Python every executor-side process ran.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.code_zip import worker_requirements
from tests.experiments.helpers import KRAFTSIM, run, spec, tree_env, without_wall
from tests.experiments.parquet_rows import parquet_rows
from tests.experiments.standalone import standalone_cluster

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

MARKER = """\
import os, sys
folder = {folder!r}
with open(os.path.join(folder, str(os.getpid())), "w") as out:
    out.write(sys.prefix)
"""


def _worker_env(folder: Path, marks: Path) -> Path:
    """A virtual environment with what a worker needs, and no kraftsim."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    python = folder / "bin" / "python"
    # --no-compile: the worker's Python compiles what it imports anyway; pip compiling
    # every module of pyspark and pandas took ~15 of the ~35 s of this install.
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-compile",
                           *worker_requirements().split()],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    probe = subprocess.run([str(python), "-c", "import kraftsim"], capture_output=True,
                           text=True, cwd=folder)
    assert probe.returncode != 0, "the worker's environment must not have kraftsim"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "sitecustomize.py").write_text(MARKER.format(folder=str(marks)))
    return folder


def test_a_standalone_worker_from_another_environment_runs_the_sweep(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    worker = _worker_env(tmp_path / "worker-env", marks)
    home = Path(next((worker / "lib").glob("python3*/site-packages/pyspark")))
    driver_cwd = tmp_path / "driver"
    driver_cwd.mkdir()
    rows = tmp_path / "shared" / "runs"
    cluster_env: dict[str, str | None] = {
        "PATH": f"{worker / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "VIRTUAL_ENV": str(worker), "PYTHONPATH": None, "PYSPARK_PYTHON": None}
    try:
        with standalone_cluster(tmp_path / "worker-home", spark_home=home,
                                env=cluster_env) as url:
            env = {k: v for k, v in tree_env().items() if k != "PYSPARK_PYTHON"}
            done = subprocess.run(
                [KRAFTSIM, "experiment", "failover", "--runs", "8", "--seed", "7",
                 "--master", url, "--driver-host", "127.0.0.1",
                 "--conf", "spark.executor.memory=1g", "--conf", "spark.executor.cores=2",
                 "--rows", rows.as_uri(), "--out", str(driver_cwd / "out"), "--json"],
                cwd=driver_cwd, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-4000:]
            shipped = list((tmp_path / "worker-home" / "work").rglob("kraftsim-code.zip"))
        summary = json.loads(done.stdout)
        assert (summary["runs"], summary["valid"], summary["master"]) == (8, 8, url)
        assert summary["rows"] == rows.as_uri()
        report = (driver_cwd / "out" / "latest" / "report.md").read_text()
        assert rows.as_uri() in report and "## By write mode" in report
        assert not (driver_cwd / "out" / "latest" / "runs").exists()  # they went to --rows
        found = parquet_rows(rows.parent)
        assert len(found) == 8
        for row in found[::3]:
            params = json.loads(row["params"])
            again = run(spec("failover", row["run_index"], 7,
                             **{k.replace("-", "_"): v for k, v in params.items()}))
            assert without_wall(again) == row
        assert shipped, "the driver did not add kraftsim's zip to the job"
        prefixes = {path.read_text() for path in marks.iterdir()}
        assert prefixes == {str(worker)}, prefixes  # every executor Python was the worker's
        lines = done.stderr.splitlines()
        assert lines[0] == f"starting Spark ({url}) ..."
    finally:
        shutil.rmtree(worker, ignore_errors=True)  # about 850 MB
