"""A progress display for a running sweep, on stderr.

On a terminal one line is rewritten in place; otherwise a line is printed at
every tenth of the runs. Once every run is done, a line says what Spark does
until the job ends (``after``: writing the rows); when no run is done after
``stall_s``, a line says what may be wrong (``stall``: on a cluster, no
worker with free cores). The count comes from a
callable (a Spark accumulator read on the driver, updated as tasks finish).
Wall-clock time is used here for display only; it never reaches a row.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO


class Progress:
    """Polls ``done()`` from a thread and shows runs done out of ``total``."""

    def __init__(self, label: str, total: int, done: Callable[[], int], stream: TextIO,
                 interval_s: float = 0.5, after: str | None = None,
                 stall: str | None = None, stall_s: float = 60.0) -> None:
        self.label = label
        self.after = after
        self._after_shown = False
        self.stall = stall
        self.stall_s = stall_s
        self._stall_shown = False
        self.total = total
        self.done = done
        self.stream = stream
        self.interval_s = interval_s
        self.tty = stream.isatty()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kraftsim-progress",
                                        daemon=True)
        self._started = time.monotonic()
        self._last_tenth = -1

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def line(self, done: int) -> str:
        """The text shown for ``done`` runs."""
        elapsed = time.monotonic() - self._started
        text = (f"{self.label}: {done:,}/{self.total:,} runs "
                f"({100 * done // max(1, self.total)}%) in {elapsed:.0f} s")
        if 0 < done < self.total:
            text += f", about {elapsed * (self.total - done) / done:.0f} s left"
        return text

    def _loop(self) -> None:
        while True:
            stopping = self._stop.wait(self.interval_s)
            self._show(self.done())
            if stopping:
                return

    def _show(self, done: int) -> None:
        if self._after_shown:
            return
        if done == 0 and self.stall and not self._stall_shown and \
                time.monotonic() - self._started >= self.stall_s:
            self._stall_shown = True
            self.stream.write(("\n" if self.tty else "") + f"{self.label}: no run done after "
                              f"{self.stall_s:.0f} s; {self.stall}\n")
        if self.tty:
            self.stream.write("\r" + self.line(done).ljust(72))
        else:
            tenth = 10 * done // max(1, self.total)
            if tenth != self._last_tenth:
                self._last_tenth = tenth
                self.stream.write(self.line(done) + "\n")
        if done >= self.total and self.after and not self._after_shown:
            self._after_shown = True
            self.stream.write(("\n" if self.tty else "") + f"{self.label}: {self.after}"
                              + ("" if self.tty else "\n"))
        self.stream.flush()


@contextlib.contextmanager
def heartbeat(stream: TextIO | None, text: str, every_s: float = 10.0) -> Iterator[None]:
    """While the block runs, print ``text (N s)`` every ``every_s`` seconds (a step with no
    count of its own, such as the JVM starting, still shows that it is alive)."""
    if stream is None:
        yield
        return
    stop = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not stop.wait(every_s):
            stream.write(f"{text} ({time.monotonic() - started:.0f} s)\n")
            stream.flush()

    thread = threading.Thread(target=beat, name="kraftsim-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
