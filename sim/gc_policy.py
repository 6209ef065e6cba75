"""The garbage-collection policy of simulations (see docs/architecture.md, Performance).

A simulation builds large, long-lived, acyclic structures (images, logs,
revert points) and frees most of them by reference counting; the cyclic
collector finds little garbage in them but walks all of them at every full
collection. Inside :func:`simulation_gc`:

- the collection thresholds are raised (:data:`RUN_THRESHOLDS`), and a
  young collection that found no garbage doubles the wait for the next one
  (up to :data:`MAX_YOUNG_THRESHOLD`; one that found some sets it back);
- a large start-up (one that allocated at least :data:`LARGE_SETUP` objects
  the collector tracks) is frozen by :func:`freeze_setup`: full collections
  no longer walk it; a small one (a failover cluster, booted or forked) is
  left to the young generations, which collect its cycles after the run
  without walking the rest of the process;
- what survives a full collection is frozen too, so every later full
  collection walks only what was allocated since (no quadratic walks of a
  growing 1,000,000-partition state);
- at the end of a run that froze anything, everything is unfrozen and
  collected once, so the cyclic garbage of one run never outlives it. A
  sweep of small runs freezes nothing and never walks the whole process (a
  full collection there costs ~50 ms: pandas, pyarrow, Spark's worker).

Objects still die by reference counting while frozen; only cycles wait for
the end of the run. The collector never changes what a simulation computes
(the trace fingerprint is the same with the policy on or off; a test checks
it). ``KRAFTSIM_GC=default`` in the environment, or :func:`set_enabled`,
turns the policy off.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from metadata.delta import clear_sharing_caches

RUN_THRESHOLDS = (50_000, 50, 100)
"""gc thresholds inside a run: fewer young collections, rarer full ones."""

MAX_YOUNG_THRESHOLD = 1_000_000
"""The most allocations between young collections: a young collection that found no
garbage doubles the wait for the next (up to this), one that found some sets it back to
``RUN_THRESHOLDS[0]``. A large run (1,000,000 partitions) makes no cycles while it
grows, yet every young collection walked what it had just built, twice over (young,
then middle generation): ~1.1 s of such a run."""

LARGE_SETUP = 20_000
"""Tracked objects a run's start-up must allocate before :func:`freeze_setup` freezes it."""

_state: dict[str, Any] = {
    "enabled": os.environ.get("KRAFTSIM_GC", "policy") != "default",
    "depth": 0,
    "frozen": False,
    "start": (0, 0),
}


def enabled() -> bool:
    """Whether the policy applies to the runs that start from now on."""
    return bool(_state["enabled"])


def set_enabled(on: bool) -> None:
    """Turn the policy on or off for the runs that start from now on."""
    _state["enabled"] = on


def _young_mark() -> tuple[int, int]:
    """(young collections so far, tracked objects allocated since the last one)."""
    return gc.get_stats()[0]["collections"], gc.get_count()[0]


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """After a full collection, freeze its survivors: they are long-lived. After a young
    collection, adapt how often they come (:data:`MAX_YOUNG_THRESHOLD`)."""
    if phase != "stop":
        return
    if info.get("generation") == 2:
        gc.freeze()
        _state["frozen"] = True
        return
    young, middle, old = gc.get_threshold()
    if info.get("collected"):  # cycles are being made: collect young ones often again
        if young != RUN_THRESHOLDS[0]:
            gc.set_threshold(RUN_THRESHOLDS[0], middle, old)
    elif young < MAX_YOUNG_THRESHOLD:  # it walked live objects only: wait longer next time
        gc.set_threshold(min(MAX_YOUNG_THRESHOLD, 2 * young), middle, old)


@contextmanager
def simulation_gc() -> Iterator[None]:
    """One simulation run under the policy; nested scopes act as the outermost one.

    When the outermost scope ends, policy on or off, the metadata layer's
    sharing caches are emptied (:func:`metadata.delta.clear_sharing_caches`):
    they share what the nodes of one run make from the same records, and no
    other run replays those records.
    """
    if not _state["enabled"] or _state["depth"]:
        _state["depth"] += 1
        try:
            yield
        finally:
            _state["depth"] -= 1
            if not _state["depth"]:
                clear_sharing_caches()
        return
    saved = gc.get_threshold()
    _state["depth"] = 1
    gc.set_threshold(*RUN_THRESHOLDS)
    _state["start"] = _young_mark()
    gc.callbacks.append(_freeze_survivors)
    try:
        yield
    finally:
        gc.callbacks.remove(_freeze_survivors)
        gc.set_threshold(*saved)
        _state["depth"] = 0
        clear_sharing_caches()
        if _state["frozen"]:
            collect_between_runs()


def collect_between_runs() -> None:
    """Unfreeze what the runs froze and collect their garbage (cycles included)."""
    if _state["frozen"]:
        _state["frozen"] = False
        gc.unfreeze()  # O(1): the run's objects join the oldest generation
    gc.collect()


def freeze_worker() -> None:
    """A long-lived worker (a Spark Python worker) starts a sweep's first task: freeze
    what it holds (its modules, the sweep's grid), outside any run.

    PySpark's daemon makes a full collection after every task of a reused
    worker: with pyspark, pyarrow and kraftsim loaded it walked ~100,000
    objects (~50 ms, 10-15 runs' worth) per task. Frozen, they stay out of it.
    What is frozen is live (the daemon's collection after the previous task
    freed the garbage) and still dies by reference counting; only a cycle
    among frozen objects would outlive its use, and freezing once per sweep
    bounds that to the one task's objects.
    """
    if _state["enabled"] and not _state["depth"] and gc.isenabled():
        gc.freeze()


def freeze_setup() -> None:
    """Start-up is done: freeze what exists if start-up was large (inside
    :func:`simulation_gc` only; see the module docs)."""
    if not (_state["depth"] and _state["enabled"] and gc.isenabled()):
        return
    collections, allocated = _young_mark()
    start_collections, start_allocated = _state["start"]
    if collections != start_collections or allocated - start_allocated >= LARGE_SETUP:
        gc.freeze()
        _state["frozen"] = True
