"""The garbage-collection policy of simulations (see docs/architecture.md, Performance).

A simulation builds large, long-lived, acyclic structures (images, logs,
revert points) and frees most of them by reference counting; the cyclic
collector finds little garbage in them but walks all of them at every full
collection. Inside :func:`simulation_gc`:

- what start-up built (the booted cluster, the interpreter's modules) is
  frozen by :func:`freeze_setup`: full collections no longer walk it;
- the collection thresholds are raised (:data:`RUN_THRESHOLDS`), and what
  survives a full collection is frozen too, so every later full collection
  walks only what was allocated since (no quadratic walks of a growing
  1,000,000-partition state);
- at the end everything is unfrozen and collected once, so the cyclic garbage
  of one run never outlives it (between the runs of a sweep).

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

RUN_THRESHOLDS = (50_000, 50, 100)
"""gc thresholds inside a run: fewer young collections, rarer full ones."""

COLLECT_EVERY = 100
"""Runs between two collections of a sweep's garbage (a large run is collected at once)."""

_state: dict[str, Any] = {
    "enabled": os.environ.get("KRAFTSIM_GC", "policy") != "default",
    "depth": 0,
    "frozen": False,
    "large": False,
    "runs": 0,
}


def enabled() -> bool:
    """Whether the policy applies to the runs that start from now on."""
    return bool(_state["enabled"])


def set_enabled(on: bool) -> None:
    """Turn the policy on or off for the runs that start from now on."""
    _state["enabled"] = on


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """After a full collection, freeze its survivors: they are long-lived."""
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()
        _state["frozen"] = _state["large"] = True


@contextmanager
def simulation_gc() -> Iterator[None]:
    """One simulation run under the policy; nested scopes act as the outermost one."""
    if not _state["enabled"] or _state["depth"]:
        _state["depth"] += 1
        try:
            yield
        finally:
            _state["depth"] -= 1
        return
    saved = gc.get_threshold()
    _state["depth"] = 1
    gc.set_threshold(*RUN_THRESHOLDS)
    gc.callbacks.append(_freeze_survivors)
    try:
        yield
    finally:
        gc.callbacks.remove(_freeze_survivors)
        gc.set_threshold(*saved)
        _state["depth"] = 0
        _state["runs"] += 1
        if _state["frozen"]:
            _state["frozen"] = False
            gc.unfreeze()  # O(1): the run's objects join the oldest generation
        if _state["large"] or _state["runs"] >= COLLECT_EVERY:
            collect_between_runs()


def collect_between_runs() -> None:
    """Unfreeze what the runs froze and collect their garbage (cycles included)."""
    _state["runs"] = 0
    _state["large"] = False
    if _state["frozen"]:
        _state["frozen"] = False
        gc.unfreeze()
    gc.collect()


def freeze_setup() -> None:
    """Start-up is done: freeze what exists (inside :func:`simulation_gc` only)."""
    if _state["depth"] and _state["enabled"] and gc.isenabled():
        gc.freeze()
        _state["frozen"] = True
