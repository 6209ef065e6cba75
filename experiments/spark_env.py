"""A Spark session for a sweep: on this machine (local[N]) or on a real cluster (spark://).

- On a local master the Python workers run the interpreter that runs the
  driver, and everything listens on loopback (``SPARK_LOCAL_IP``, driver
  host and bind address). On a cluster the executors run their own Python
  (``python3`` on the worker's PATH, or ``PYSPARK_PYTHON`` when set on the
  driver), the driver listens on ``--driver-host`` (loopback when every
  master is on loopback, else Spark's choice), and kraftsim's packages are
  shipped to the executors as a zip (``code_zip.py``), so workers need
  only pyspark and kraftsim's compiled dependencies. ``--conf key=value``
  settings are passed to Spark last (they win).
- The web UI and the console progress bar are off. The JVM logs through a
  log4j2 configuration of ours, and its own stdout and stderr go to
  ``jvm.log`` in the session's scratch folder, so the console shows only
  kraftsim's output (the folder is named in errors, for the details).
- JVM flags: the serial collector and the C1 compiler only
  (``-XX:TieredStopAtLevel=1``) cut session start here from about 13-15 s to
  7-9 s on 2 busy cores; the JVM does little work in a sweep (Python runs the
  simulations), so C2's better code does not pay for its compile time.
- The driver JVM maps a class-data-sharing archive of Spark's classes, made
  by the first session of an environment (``jvm_cache.py``): another 4-6 s
  off session start and first job. Writing it is announced.
- A local session's Python daemon is ``experiments.spark_daemon``: its workers
  import the installed, compiled pyspark instead of compiling Spark's source
  zip at every session start, and inherit kraftsim's task code from it.
- Stopping a session ends its JVM, so every session starts with its own
  options and logs (PySpark would otherwise reuse the first JVM of the
  process).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

from experiments import code_zip, jvm_cache
from experiments.model import ExperimentError

JVM_FLAGS = os.environ.get("KRAFTSIM_SPARK_JVM_FLAGS",
                           "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
"""JVM options of the driver and the executors (see the module docs); the environment
variable KRAFTSIM_SPARK_JVM_FLAGS replaces them (the benchmark compares)."""
LOOPBACK = "127.0.0.1"
DEFAULT_MASTER = "local[*]"

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
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9\-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9\-]{0,62}))*\.?")
_CONF_KEY = re.compile(r"spark(\.[A-Za-z0-9_\-]+)+")
RESERVED_CONF = {"spark.master": "--master", "spark.driver.host": "--driver-host",
                 "spark.app.name": None}
"""Settings kraftsim owns: the flag that sets them (None: not settable)."""


def is_local(master: str) -> bool:
    """True for local, local[N], local[*] (everything in the driver's JVM)."""
    return _LOCAL.fullmatch(master) is not None


def master_hosts(master: str) -> list[tuple[str, int]]:
    """The (host, port) of every master of a spark:// URL."""
    found = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        found.append((host, int(port)))
    return found


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    for host, port in master_hosts(master):
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                pass
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise ExperimentError(f"--master {master}: cannot reach {host}:{port}: {reason}") \
                from None


def parse_conf(items: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``--conf key=value`` items as pairs; ExperimentError for a malformed or reserved one."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ExperimentError(f"--conf {item!r}: expected KEY=VALUE, e.g. --conf "
                                  f"spark.executor.memory=2g")
        if not _CONF_KEY.fullmatch(key):
            raise ExperimentError(f"--conf {item!r}: {key!r} is not a Spark setting (keys "
                                  f"start with spark.; Hadoop settings are spark.hadoop.*)")
        if key in RESERVED_CONF:
            flag = RESERVED_CONF[key]
            raise ExperimentError(f"--conf {key}: set by kraftsim" +
                                  (f"; use {flag} instead" if flag else ""))
        pairs.append((key, value))
    return tuple(pairs)


def check_driver_host(host: str, conf: tuple[tuple[str, str], ...] = ()) -> None:
    """Raise ExperimentError unless the driver can listen on ``host`` (a name or address of
    this machine); with ``spark.driver.bindAddress`` set only the syntax is checked."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not _HOST.fullmatch(host):
            raise ExperimentError(f"--driver-host {host!r}: not a host name or IP address") \
                from None
    if any(key == "spark.driver.bindAddress" for key, _ in conf):
        return
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ExperimentError(f"--driver-host {host}: cannot resolve it "
                              f"({exc.strerror or exc})") from None
    family, _, _, _, address = infos[0]
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((address[0], 0))
    except OSError as exc:
        raise ExperimentError(
            f"--driver-host {host}: not an address of this machine (cannot listen on "
            f"{address[0]}: {exc.strerror or exc}); behind NAT add --conf "
            f"spark.driver.bindAddress=0.0.0.0") from None


@dataclass(frozen=True)
class SparkSettings:
    """Where a sweep runs: the master URL, the driver's address, the user's Spark settings."""

    master: str = DEFAULT_MASTER
    driver_host: str | None = None
    conf: tuple[tuple[str, str], ...] = ()

    @property
    def local(self) -> bool:
        """True when everything runs in this machine's driver JVM."""
        return is_local(self.master)

    def advertised_host(self) -> str | None:
        """The address executors reach the driver at (None: Spark chooses)."""
        if self.driver_host:
            return self.driver_host
        if self.local or all(is_loopback(host) for host, _ in master_hosts(self.master)):
            return LOOPBACK
        return None

    def worker_python(self) -> str:
        """The Python the executors run: this interpreter on a local master; on a cluster
        ``PYSPARK_PYTHON`` if set, else the workers' ``python3``."""
        if self.local:
            return sys.executable
        return os.environ.get("PYSPARK_PYTHON") or "python3"


def spark_settings(master: str = DEFAULT_MASTER, driver_host: str | None = None,
                   conf: Iterable[str] = ()) -> SparkSettings:
    """Checked settings from the command's flags (ExperimentError on bad input)."""
    pairs = parse_conf(conf)
    check_master(master)
    if driver_host is not None:
        check_driver_host(driver_host, pairs)
    return SparkSettings(master, driver_host, pairs)


@dataclass
class SparkHandle:
    """A running session, its scratch folder, the file the JVM writes to, the JVM process."""

    session: Any
    scratch: Path
    jvm_log: Path
    _log_stream: IO[bytes]
    _jvm: Any = None
    _archive: tuple[Path | None, Path | None] = (None, None)
    stream: TextIO | None = field(default=None)

    def stop(self, keep_scratch: bool = False) -> None:
        """Stop the session and its JVM; delete the scratch folder unless asked to keep it.

        When this JVM writes the class-data archive at exit, that is announced on
        ``stream`` with the time it took."""
        partial, archive = self._archive
        started = time.monotonic()
        if partial is not None and self.stream is not None:
            say(self.stream, f"saving the JVM class-data archive for faster Spark starts (once "
                             f"per environment, about 190 MB, in {partial.parent}; "
                             f"KRAFTSIM_SPARK_CDS=0 turns it off) ...")
        try:
            self.session.stop()
        finally:
            clean = _end_jvm(self._jvm)
            jvm_cache.finish(partial, archive, clean, JVM_FLAGS)
            if partial is not None and self.stream is not None:
                saved = archive is not None and archive.exists()
                say(self.stream, f"class-data archive {'saved' if saved else 'not saved'} in "
                                 f"{time.monotonic() - started:.1f} s")
            self._log_stream.close()
            if not keep_scratch:
                shutil.rmtree(self.scratch, ignore_errors=True)


def say(stream: TextIO, text: str) -> None:
    """Print one status line on ``stream`` (stderr) at once."""
    stream.write(f"{text}\n")
    stream.flush()


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


def environment(settings: SparkSettings) -> dict[str, str | None]:
    """The environment the driver JVM and the SparkContext start with (None: unset).

    ``PYSPARK_PYTHON`` is what PySpark tells executors to run; ``SPARK_LOCAL_IP``
    keeps a loopback session on loopback."""
    host = settings.advertised_host()
    changes: dict[str, str | None] = {"PYSPARK_PYTHON": settings.worker_python(),
                                      "PYSPARK_DRIVER_PYTHON": sys.executable}
    if host is not None and (settings.local or is_loopback(host)):
        changes["SPARK_LOCAL_IP"] = LOOPBACK if is_loopback(host) else host
    return changes


@contextlib.contextmanager
def _environ(changes: dict[str, str | None]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def spark_conf_pairs(settings: SparkSettings | str, scratch: Path, log_config: Path,
                     driver_extra: str = "") -> list[tuple[str, str]]:
    """Every Spark setting of a kraftsim session (``driver_extra``: more driver JVM options);
    the user's ``--conf`` settings come last."""
    if isinstance(settings, str):
        settings = SparkSettings(settings)
    java = f"-Dlog4j2.configurationFile=file:{log_config} {JVM_FLAGS}"
    host = settings.advertised_host()
    pairs = [
        ("spark.master", settings.master),
        ("spark.app.name", "kraftsim-experiment"),
        ("spark.ui.enabled", "false"),
        ("spark.ui.showConsoleProgress", "false"),
        ("spark.driver.extraJavaOptions", f"{java} {driver_extra}".strip()),
        ("spark.local.dir", str(scratch / "local")),
        ("spark.sql.warehouse.dir", str(scratch / "warehouse")),
        ("spark.task.maxFailures", "1"),
        ("spark.sql.shuffle.partitions", "8"),
        ("spark.sql.session.timeZone", "UTC"),
        ("spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs", "false"),
        ("spark.hadoop.parquet.enable.summary-metadata", "false"),
    ]
    if host is not None:
        pairs.append(("spark.driver.host", host))
    if settings.local:
        pairs += [("spark.driver.bindAddress", host or LOOPBACK),
                  ("spark.executor.extraJavaOptions", java),
                  ("spark.pyspark.python", sys.executable),
                  ("spark.python.daemon.module", "experiments.spark_daemon"),
                  ("spark.pyspark.driver.python", sys.executable),
                  ("spark.executorEnv.SPARK_LOCAL_IP", host or LOOPBACK)]
    else:  # the log configuration is a file of this machine; executors log as their worker
        pairs.append(("spark.executor.extraJavaOptions", JVM_FLAGS))
    return pairs + list(settings.conf)


def _log_py4j_to(path: Path) -> None:
    """py4j's errors (a Ctrl-C or a dying JVM makes it log tracebacks) go to the JVM log
    beside the JVM's own output, not to the terminal: kraftsim reports such ends itself."""
    import logging

    logger = logging.getLogger("py4j")
    logger.setLevel(logging.ERROR)
    logger.propagate = False
    for old in [h for h in logger.handlers if getattr(h, "kraftsim", False)]:
        logger.removeHandler(old)
        old.close()
    handler = logging.FileHandler(path, delay=True)
    handler.kraftsim = True  # type: ignore[attr-defined]
    logger.addHandler(handler)


def _preload_converters() -> None:
    """Import, in a thread, what PySpark's first Py4J call with a list imports (its NumPy
    converter asks ``pyspark.testing.utils``, which loads pandas: ~0.3 s), while the JVM
    launches and the driver only polls for it; an import error shows again where PySpark
    imports it itself."""

    def load() -> None:
        with contextlib.suppress(Exception):
            import pyspark.testing.utils  # noqa: F401

    threading.Thread(target=load, name="kraftsim-preload-pyspark", daemon=True).start()


def start_spark(settings: SparkSettings | str, stream: TextIO | None = None) -> SparkHandle:
    """Start a session (its master checked with :func:`check_master` first); status lines
    (the archive being written) go to ``stream``."""
    if isinstance(settings, str):
        settings = SparkSettings(settings)
    master = settings.master
    check_master(master)
    _preload_converters()

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    scratch = Path(tempfile.mkdtemp(prefix="kraftsim-spark-"))
    log_config = scratch / "log4j2.properties"
    log_config.write_text(_LOG4J2)
    jvm_log = scratch / "jvm.log"
    _log_py4j_to(jvm_log)
    stream_out = jvm_log.open("ab")
    extra, partial, archive = jvm_cache.driver_options(JVM_FLAGS)
    conf = SparkConf(loadDefaults=False)
    for key, value in spark_conf_pairs(settings, scratch, log_config, extra):
        conf.set(key, value)
    gateway = None
    try:
        with _environ(environment(settings)):
            gateway = launch_gateway(conf, popen_kwargs={  # type: ignore[no-untyped-call]
                "stdout": stream_out, "stderr": stream_out})
            context = SparkContext(conf=conf, gateway=gateway)
        if not settings.local:
            context.addPyFile(str(code_zip.build_zip(scratch / "kraftsim-code.zip")))
    except Exception as exc:
        if gateway is not None and SparkContext._active_spark_context is not None:
            with contextlib.suppress(Exception):
                SparkContext._active_spark_context.stop()
        jvm_cache.finish(partial, archive, _end_jvm(getattr(gateway, "proc", None)))
        stream_out.close()
        raise ExperimentError(f"--master {master}: Spark did not start ({_short(exc)}); see "
                              f"{jvm_log}") from None
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C raises KeyboardInterrupt again; the pipeline cancels its jobs itself.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    session = SparkSession(context)
    return SparkHandle(session, scratch, jvm_log, stream_out, getattr(gateway, "proc", None),
                       (partial, archive), stream)


def _short(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(exc).__name__


def path_exists(session: Any, location: str) -> bool:
    """Whether ``location`` (a path or a URI Spark can write: file:, hdfs:, s3a: ...) exists,
    asked through Spark's own Hadoop file systems; ExperimentError when Spark cannot
    reach it."""
    context = session.sparkContext
    try:
        jvm = context._jvm
        path = jvm.org.apache.hadoop.fs.Path(location)
        return bool(path.getFileSystem(context._jsc.hadoopConfiguration()).exists(path))
    except Exception as exc:
        raise ExperimentError(f"--rows {location}: Spark cannot use it ({_short(exc)})") \
            from None


def delete_path(session: Any, location: str) -> None:
    """Remove ``location`` and what is under it, through Spark's Hadoop file systems (best
    effort: after a failure the JVM may be gone)."""
    context = session.sparkContext
    with contextlib.suppress(Exception):
        jvm = context._jvm
        path = jvm.org.apache.hadoop.fs.Path(location)
        path.getFileSystem(context._jsc.hadoopConfiguration()).delete(path, True)
