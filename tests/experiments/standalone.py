"""A Spark standalone cluster on loopback (one master, one worker) from the installed pyspark."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark

from experiments.spark_env import JVM_FLAGS, LOOPBACK


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
    raise RuntimeError(f"{text!r} not seen in {log} within {timeout_s} s:\n{tail}")


@contextmanager
def standalone_cluster(folder: Path, cores: int = 2, timeout_s: float = 120,
                       spark_home: Path | None = None,
                       env: dict[str, str | None] | None = None) -> Iterator[str]:
    """Start a master and a worker on loopback; yield the master URL; stop both.

    ``spark_home``: the pyspark install whose ``bin/spark-class`` starts them (default
    this environment's); ``env``: changes to their environment (None: unset). Both run in
    ``folder``."""
    home = spark_home or Path(pyspark.__file__).parent
    spark_class = str(home / "bin" / "spark-class")
    folder.mkdir(parents=True, exist_ok=True)
    changes: dict[str, str | None] = {
        "SPARK_HOME": str(home), "SPARK_LOCAL_IP": LOOPBACK, "SPARK_DAEMON_JAVA_OPTS": JVM_FLAGS,
        "SPARK_LOG_DIR": str(folder), "SPARK_NO_DAEMONIZE": "1", **(env or {})}
    environment = {**os.environ, **{k: v for k, v in changes.items() if v is not None}}
    environment = {k: v for k, v in environment.items() if changes.get(k, "") is not None}
    port = free_port()
    url = f"spark://{LOOPBACK}:{port}"
    processes: list[subprocess.Popen[bytes]] = []
    try:
        master_log = folder / "master.log"
        with master_log.open("wb") as out:
            processes.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", LOOPBACK,
                 "--port", str(port), "--webui-port", str(free_port())],
                stdout=out, stderr=subprocess.STDOUT, env=environment, cwd=folder))
        _wait_for(master_log, "I have been elected leader", processes[0], timeout_s)
        worker_log = folder / "worker.log"
        with worker_log.open("wb") as out:
            processes.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
                 "--cores", str(cores), "--memory", "2g", "--webui-port", str(free_port()),
                 "--work-dir", str(folder / "work"), url],
                stdout=out, stderr=subprocess.STDOUT, env=environment, cwd=folder))
        _wait_for(worker_log, "Successfully registered with master", processes[1], timeout_s)
        yield url
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
