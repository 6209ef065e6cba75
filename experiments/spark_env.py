"""A Spark session set up for this machine: same interpreter, loopback, quiet.

- Python workers run the interpreter that runs the driver (``PYSPARK_PYTHON``
  and ``spark.pyspark.python``), else they may pick a system Python without
  kraftsim's packages.
- Everything listens on loopback (``SPARK_LOCAL_IP``, driver host and bind
  address); the web UI and the console progress bar are off.
- The JVM logs through a log4j2 configuration of ours, and its own stdout and
  stderr go to ``jvm.log`` in the session's scratch folder, so the console
  shows only kraftsim's output (the folder is named in errors, for the
  details).
- JVM flags: the serial collector and the C1 compiler only
  (``-XX:TieredStopAtLevel=1``) cut session start here from about 13-15 s to
  7-9 s on 2 busy cores; the JVM does little work in a sweep (Python runs the
  simulations), so C2's better code does not pay for its compile time.
- The driver JVM maps a class-data-sharing archive of Spark's classes, made
  by the first session on the machine (``jvm_cache.py``): another 4-6 s off
  session start and first job.
- Stopping a session ends its JVM, so every session starts with its own
  options and logs (PySpark would otherwise reuse the first JVM of the
  process).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from experiments import jvm_cache
from experiments.model import ExperimentError

JVM_FLAGS = os.environ.get("KRAFTSIM_SPARK_JVM_FLAGS",
                           "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
"""JVM options of the driver and the executors (see the module docs); the environment
variable KRAFTSIM_SPARK_JVM_FLAGS replaces them (the benchmark compares)."""
LOOPBACK = "127.0.0.1"

_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = warn
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
"""

_LOCAL = re.compile(r"local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?")
_STANDALONE = re.compile(r"spark://([A-Za-z0-9.\-]+:\d{1,5})(,[A-Za-z0-9.\-]+:\d{1,5})*")


def check_master(master: str, timeout_s: float = 3.0) -> None:
    """Raise ExperimentError unless ``master`` is a usable local[...] or spark:// URL.

    For a standalone cluster every listed master must accept a TCP connection
    (Spark itself would retry for a minute before giving up).
    """
    if _LOCAL.fullmatch(master):
        return
    if not _STANDALONE.fullmatch(master):
        raise ExperimentError(f"--master {master!r}: not a master URL; use local, local[N], "
                              f"local[*] or spark://HOST:PORT")
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout_s):
                pass
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise ExperimentError(f"--master {master}: cannot reach {address}: {reason}") \
                from None


@dataclass
class SparkHandle:
    """A running session, its scratch folder, the file the JVM writes to, the JVM process."""

    session: Any
    scratch: Path
    jvm_log: Path
    _log_stream: IO[bytes]
    _jvm: Any = None
    _archive: tuple[Path | None, Path | None] = (None, None)

    def stop(self, keep_scratch: bool = False) -> None:
        """Stop the session and its JVM; delete the scratch folder unless asked to keep it."""
        try:
            self.session.stop()
        finally:
            clean = _end_jvm(self._jvm)
            jvm_cache.finish(*self._archive, clean)
            self._log_stream.close()
            if not keep_scratch:
                shutil.rmtree(self.scratch, ignore_errors=True)


def _end_jvm(process: Any) -> bool:
    """Let the gateway JVM exit (it does at the end of its stdin); True if it exited 0."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    SparkContext._gateway = None  # a later session launches a JVM of its own
    SparkContext._jvm = None
    if gateway is not None:
        with contextlib.suppress(Exception):  # the connection may already be gone
            gateway.close()
    if process is None:
        return False
    try:
        if process.stdin is not None:
            process.stdin.close()
        return int(process.wait(timeout=120)) == 0
    except Exception:
        process.kill()
        process.wait()
        return False


def configure_environment() -> None:
    """Point Spark at this interpreter and at loopback (before any JVM starts)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = LOOPBACK


def spark_conf_pairs(master: str, scratch: Path, log_config: Path,
                     driver_extra: str = "") -> list[tuple[str, str]]:
    """Every Spark setting of a kraftsim session (``driver_extra``: more driver JVM options)."""
    java = f"-Dlog4j2.configurationFile=file:{log_config} {JVM_FLAGS}"
    return [
        ("spark.master", master),
        ("spark.app.name", "kraftsim-experiment"),
        ("spark.driver.host", LOOPBACK),
        ("spark.driver.bindAddress", LOOPBACK),
        ("spark.ui.enabled", "false"),
        ("spark.ui.showConsoleProgress", "false"),
        ("spark.driver.extraJavaOptions", f"{java} {driver_extra}".strip()),
        ("spark.executor.extraJavaOptions", java),
        ("spark.pyspark.python", sys.executable),
        ("spark.pyspark.driver.python", sys.executable),
        ("spark.executorEnv.SPARK_LOCAL_IP", LOOPBACK),
        ("spark.local.dir", str(scratch / "local")),
        ("spark.sql.warehouse.dir", str(scratch / "warehouse")),
        ("spark.task.maxFailures", "1"),
        ("spark.sql.shuffle.partitions", "8"),
        ("spark.sql.session.timeZone", "UTC"),
        ("spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs", "false"),
        ("spark.hadoop.parquet.enable.summary-metadata", "false"),
    ]


def start_spark(master: str) -> SparkHandle:
    """Start a session on ``master`` (checked with :func:`check_master` first)."""
    check_master(master)
    configure_environment()
    import logging

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    logging.getLogger("py4j").setLevel(logging.ERROR)
    scratch = Path(tempfile.mkdtemp(prefix="kraftsim-spark-"))
    log_config = scratch / "log4j2.properties"
    log_config.write_text(_LOG4J2)
    jvm_log = scratch / "jvm.log"
    stream = jvm_log.open("ab")
    extra, partial, archive = jvm_cache.driver_options(JVM_FLAGS)
    conf = SparkConf(loadDefaults=False)
    for key, value in spark_conf_pairs(master, scratch, log_config, extra):
        conf.set(key, value)
    gateway = None
    try:
        gateway = launch_gateway(conf, popen_kwargs={  # type: ignore[no-untyped-call]
            "stdout": stream, "stderr": stream})
        context = SparkContext(conf=conf, gateway=gateway)
    except Exception as exc:
        jvm_cache.finish(partial, archive, _end_jvm(getattr(gateway, "proc", None)))
        stream.close()
        raise ExperimentError(f"--master {master}: Spark did not start ({exc}); see "
                              f"{jvm_log}") from None
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C raises KeyboardInterrupt again; the pipeline cancels its jobs itself.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    session = SparkSession(context)
    return SparkHandle(session, scratch, jvm_log, stream, getattr(gateway, "proc", None),
                       (partial, archive))
