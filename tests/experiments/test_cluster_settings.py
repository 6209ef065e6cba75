"""Real-cluster settings without Spark: flag errors, what a cluster session is told, the zip.

Bad ``--conf``, ``--driver-host`` and ``--master`` values are one line each
and exit 2 before any JVM starts.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import zipfile
from pathlib import Path

import pytest

from experiments.code_zip import PACKAGES, build_zip, worker_requirements
from experiments.model import ExperimentError
from experiments.pipeline import _check_rows_complete, _first_line, rows_location
from experiments.spark_daemon import without_spark_zips
from experiments.spark_env import (
    SparkSettings,
    check_driver_host,
    environment,
    parse_conf,
    path_exists,
    spark_conf_pairs,
)
from kraftsim.cli import main


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(["experiment", "failover", "--runs", "2", *args])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    return line.removeprefix("kraftsim: error: ")


@pytest.mark.parametrize(("args", "expected"), [
    (["--conf", "spark.executor.memory"],
     "--conf 'spark.executor.memory': expected KEY=VALUE, e.g. --conf "
     "spark.executor.memory=2g"),
    (["--conf", "=2g"], "--conf '=2g': expected KEY=VALUE"),
    (["--conf", "executor.memory=2g"],
     "--conf 'executor.memory=2g': 'executor.memory' is not a Spark setting (keys start "
     "with spark.; Hadoop settings are spark.hadoop.*)"),
    (["--conf", "spark.master=local[1]"], "--conf spark.master: set by kraftsim; use --master "
                                          "instead"),
    (["--conf", "spark.driver.host=h"], "--conf spark.driver.host: set by kraftsim; use "
                                        "--driver-host instead"),
    (["--driver-host", "no_such host!"], "--driver-host 'no_such host!': not a host name or IP "
                                         "address"),
    (["--driver-host", "192.0.2.1"], "--driver-host 192.0.2.1: not an address of this machine"),
    (["--master", "yarn"], "--master 'yarn': not a master URL"),
])
def test_bad_cluster_flags_are_one_line(capsys: pytest.CaptureFixture[str], args: list[str],
                                        expected: str) -> None:
    assert _error(capsys, *args).startswith(expected)


def test_conf_values_keep_their_equals_signs() -> None:
    assert parse_conf(["spark.executorEnv.OPTS=a=b", "spark.hadoop.fs.s3a.endpoint= x "]) == (
        ("spark.executorEnv.OPTS", "a=b"), ("spark.hadoop.fs.s3a.endpoint", " x "))
    with pytest.raises(ExperimentError):
        parse_conf(["spark..x=1"])


def test_a_cluster_session_leaves_python_and_logging_to_the_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    cluster = SparkSettings("spark://10.1.2.3:7077", "10.1.2.4",
                            (("spark.executor.memory", "3g"), ("spark.task.maxFailures", "4")))
    pairs = spark_conf_pairs(cluster, tmp_path, tmp_path / "log4j2.properties")
    conf = dict(pairs)
    assert conf["spark.driver.host"] == "10.1.2.4"
    assert "spark.driver.bindAddress" not in conf and "spark.pyspark.python" not in conf
    assert "spark.python.daemon.module" not in conf  # the workers' own Spark's daemon
    assert "log4j2" not in conf["spark.executor.extraJavaOptions"]  # a file of the driver
    assert pairs[-2:] == [("spark.executor.memory", "3g"), ("spark.task.maxFailures", "4")]
    assert conf["spark.task.maxFailures"] == "4"  # the user's setting wins
    assert cluster.worker_python() == "python3"
    assert environment(cluster)["PYSPARK_PYTHON"] == "python3"
    assert "SPARK_LOCAL_IP" not in environment(cluster)
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python3")
    assert environment(cluster)["PYSPARK_PYTHON"] == "/opt/py/bin/python3"


def test_a_local_session_runs_this_python_on_loopback(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", "/elsewhere/python3")
    local = SparkSettings("local[2]")
    conf = dict(spark_conf_pairs(local, tmp_path, tmp_path / "log4j2.properties"))
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert conf["spark.pyspark.python"] == sys.executable
    assert conf["spark.python.daemon.module"] == "experiments.spark_daemon"
    assert environment(local) == {"PYSPARK_PYTHON": sys.executable,
                                  "PYSPARK_DRIVER_PYTHON": sys.executable,
                                  "SPARK_LOCAL_IP": "127.0.0.1"}
    assert SparkSettings("spark://127.0.0.1:7077").advertised_host() == "127.0.0.1"
    assert SparkSettings("spark://10.0.0.1:7077").advertised_host() is None


def test_the_shipped_zip_holds_every_package_and_is_reproducible(tmp_path: Path) -> None:
    first = build_zip(tmp_path / "a.zip")
    second = build_zip(tmp_path / "b.zip")
    assert first.read_bytes() == second.read_bytes()
    names = zipfile.ZipFile(first).namelist()
    assert {name.split("/")[0] for name in names} == set(PACKAGES)
    for module in ("kraftsim/cli.py", "experiments/tasks.py", "sim/cluster.py",
                   "raft/__init__.py", "controller/__init__.py"):
        assert module in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_worker_requirements_pin_this_environment() -> None:
    pins = dict(item.split("==") for item in worker_requirements().split())
    import pyspark

    assert pins["pyspark"] == pyspark.__version__
    assert set(pins) >= {"pandas", "pyarrow", "msgspec", "immutables", "google-crc32c"}


def test_rows_on_disks_the_driver_cannot_see_stop_the_sweep() -> None:
    _check_rows_complete({"runs": 8}, 8, "file:///shared/runs")
    with pytest.raises(ExperimentError, match=r"the rows at file:///tmp/x/runs hold 3 of 8 "
                                              r"runs: the executors wrote them to their own "
                                              r"disks; .* give --rows on a shared filesystem"):
        _check_rows_complete({"runs": 3}, 8, "file:///tmp/x/runs")


def test_executor_failures_name_the_fix() -> None:
    missing = RuntimeError("Traceback ...\nModuleNotFoundError: No module named 'msgspec'\n")
    assert _first_line(missing) == ("an executor's Python cannot import msgspec: install "
                                    "kraftsim's dependencies on every worker (README, real "
                                    "clusters)")
    mismatch = RuntimeError("[PYTHON_VERSION_MISMATCH] Python in worker has different "
                            "version: 3.12 than that in driver: 3.11, PySpark cannot run")
    assert _first_line(mismatch).startswith("the workers run Python 3.12, the driver Python "
                                            "3.11: PySpark needs the same minor version")
    named = RuntimeError("An error occurred while calling o81.parquet.\n  at Executor\n"
                         "  ValueError: no such column\n")
    assert _first_line(named) == "ValueError: no such column"
    other = RuntimeError("\n  An error occurred while calling o81.parquet: " + "x" * 1000
                         + "\n  at org.apache.spark.Executor\n")
    line = _first_line(other)
    assert line.startswith("An error occurred while calling o81.parquet: x") and \
        len(line) <= 300
    assert _first_line(RuntimeError("")) == "RuntimeError"


def test_rows_paths_become_absolute_file_uris(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert rows_location("shared/runs") == (tmp_path / "shared" / "runs").as_uri()
    assert rows_location("s3a://bucket/runs") == "s3a://bucket/runs"
    assert rows_location("file:///mnt/runs") == "file:///mnt/runs"
    assert rows_location(None) is None


def test_the_local_daemon_takes_only_sparks_zips_off_the_path() -> None:
    path = ["/w", "/spark/python/lib/pyspark.zip", "/spark/python/lib/py4j-0.10.9.9-src.zip",
            "/venv/lib/python3.11/site-packages", "/data/my-pyspark.zip", "/x/py4j-src"]
    assert without_spark_zips(path) == ["/w", "/venv/lib/python3.11/site-packages",
                                        "/data/my-pyspark.zip", "/x/py4j-src"]


class _Unreachable:
    """A session whose JVM raises as Py4J does: a long, multi-line message."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.sparkContext = self

    @property
    def _jvm(self) -> object:
        raise RuntimeError(self.message)


@pytest.mark.parametrize(("message", "shown"), [
    ("\n  java.io.IOException: No FileSystem for scheme \"s4\"\n\tat org.apache...\n",
     'java.io.IOException: No FileSystem for scheme "s4"'),
    ("x" * 400, "x" * 300),
    ("", "RuntimeError"),
])
def test_rows_spark_cannot_reach_are_one_line(message: str, shown: str) -> None:
    """``--rows`` Spark cannot use: the exception's first line (at most 300 characters), or
    its type when it says nothing."""
    with pytest.raises(ExperimentError) as caught:
        path_exists(_Unreachable(message), "s4://bucket/rows")
    assert str(caught.value) == f"--rows s4://bucket/rows: Spark cannot use it ({shown})"


def test_a_driver_host_that_does_not_resolve_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    def unknown(*args: object, **kwargs: object) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    with pytest.raises(ExperimentError) as caught:
        check_driver_host("nowhere.example")
    assert str(caught.value) == ("--driver-host nowhere.example: cannot resolve it (Name or "
                                 "service not known)")


def test_a_driver_host_check_needs_no_particular_port() -> None:
    """The check listens on a free port the system picks: a taken low port (or one a user
    may not open) does not make 127.0.0.1 look foreign."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        with contextlib.suppress(OSError):  # not allowed to: then neither is the check
            taken.bind(("127.0.0.1", 1))
        check_driver_host("127.0.0.1")
