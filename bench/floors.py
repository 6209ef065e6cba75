"""What the machine allows: the floors printed beside the benchmarks' figures.

Each floor is the cheapest operation a figure cannot go below, measured in
the same process as the figures, in CPU time (a busy machine slows both
alike; time spent preempted is not counted), best of a few rounds:

- a dict insert (the cheapest mutable index of a partition);
- a persistent-map set (``immutables.Map``: what every image change costs
  at least once per changed partition);
- a msgspec decode of one PartitionRecord (what reading a record costs);
- an empty event loop: one schedule and one pop of the simulation's event
  queue (what any simulated event costs at least).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import immutables
import msgspec

from metadata.schema import PartitionRecord
from sim.scheduler import EventQueue

ROUNDS = 5


def _best_ns(run: Callable[[], int]) -> float:
    """Nanoseconds per operation of ``run`` (which returns how many it did), best of ROUNDS."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.process_time_ns()
        count = run()
        best = min(best, (time.process_time_ns() - started) / count)
    return best


def dict_insert_ns(n: int = 200_000) -> float:
    """One insert into a dict of up to ``n`` entries."""
    def run() -> int:
        table: dict[int, int] = {}
        for i in range(n):
            table[i] = i
        return n
    return _best_ns(run)


def map_set_ns(size: int = 1_000_000, n: int = 20_000) -> float:
    """One ``set`` on a persistent map of ``size`` entries (a new version each time)."""
    base = immutables.Map({i: i for i in range(size)})

    def run() -> int:
        current = base
        for i in range(n):
            current = current.set((i * 7919) % size, -i)
        return n
    return _best_ns(run)


def decode_ns(n: int = 20_000) -> float:
    """One msgspec (msgpack) decode of a PartitionRecord."""
    record = PartitionRecord(partition_id=7, topic_id="AAAAAAAAAAAAAAAAAAAAAA", replicas=(0, 1, 2),
                             isr=(0, 1, 2), leader=0, leader_epoch=0, partition_epoch=0)
    data = msgspec.msgpack.encode(record)
    decoder = msgspec.msgpack.Decoder(PartitionRecord)

    def run() -> int:
        decode = decoder.decode
        for _ in range(n):
            decode(data)
        return n
    return _best_ns(run)


def empty_event_ns(n: int = 100_000) -> float:
    """One event of an empty loop: a schedule and a pop of the simulation's queue."""
    def run() -> int:
        queue = EventQueue()
        for i in range(n):
            queue.schedule(queue.now + 1 + i % 3, i)
            queue.pop()
        return n
    return _best_ns(run)


def floors_line() -> str:
    """Every floor, as one line."""
    return (f"floors: dict insert {dict_insert_ns():.0f} ns, persistent-map set (1M keys) "
            f"{map_set_ns():.0f} ns, msgspec decode {decode_ns():.0f} ns, empty event loop "
            f"{empty_event_ns() / 1000:.2f} us per event")
