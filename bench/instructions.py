"""A failover run's cost per event in instructions, beside the CPU-time figure.

A shared machine's speed drifts (the same loop took 1.7 s and 3.0 s minutes
apart on one 2-core machine), so CPU-time ratios move by more than the
changes they should show. The instructions a process executes do not:
valgrind's cachegrind counts them, the same to 0.01% run after run. This
benchmark runs :data:`RUNS` failover runs of the default grid (forking one
boot per configuration, as a sweep does) and the same cluster idle for
:data:`IDLE_SECONDS` simulated seconds, each in a child process under
cachegrind, and subtracts a child that only does the set-up of each (imports,
the boots, the fork of the idle cluster). Events are counted in a native run
of the same children (they are deterministic).

It is the figure to compare before and after a change; the CPU-time ratio
(:func:`bench.experiments.bench_run_cost`) is what a user waits for, cache
misses and allocation included, and is the one the goal is set on. Skipped,
with a line saying so, when valgrind is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable

RUNS = 200
"""Failover runs counted (after :data:`WARM_RUNS` that boot the configurations)."""

WARM_RUNS = 40
"""Runs before the counted ones: they boot every configuration the counted runs fork."""

IDLE_SECONDS = 15
"""Simulated seconds of the idle cluster counted."""

Report = Callable[[str], None]
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def probe(kind: str, amount: int) -> int:
    """In the child: the set-up, then ``amount`` runs (``kind`` "runs") or ``amount``
    idle seconds ("idle"); returns the events processed after the set-up."""
    from bench.experiments import failover_specs, idle_sample
    from experiments.tasks import run_specs
    from sim.world import Simulation

    specs = failover_specs(WARM_RUNS + max(RUNS, amount), seed=99)  # whatever the amount
    run_specs(specs[:WARM_RUNS])
    if kind == "idle":
        return idle_sample(specs[0], amount)[1]
    events = [0]
    after = Simulation._after_event

    def counted(sim: Simulation, *args: object) -> None:
        events[0] += 1
        after(sim, *args)  # type: ignore[arg-type]

    if os.environ.get("KRAFTSIM_COUNT_EVENTS") == "1":  # the native run only
        Simulation._after_event = counted  # type: ignore[method-assign,assignment]
    try:
        run_specs(specs[WARM_RUNS:WARM_RUNS + amount])
    finally:
        Simulation._after_event = after  # type: ignore[method-assign]
    return events[0]


def _child(kind: str, amount: int, valgrind: str | None) -> int:
    """Instructions of a child under cachegrind (``valgrind`` given), else its events."""
    command = [sys.executable, "-m", "bench.instructions", kind, str(amount)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if valgrind is None:
        env["KRAFTSIM_COUNT_EVENTS"] = "1"
        done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
        return int(done.stdout.split()[-1])
    done = subprocess.run([valgrind, "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *command],
                          capture_output=True, text=True, check=True, env=env)
    found = _REFS.search(done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output: {done.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def bench_run_instructions(report: Report, runs: int = RUNS,
                           idle_seconds: int = IDLE_SECONDS) -> float | None:
    """Instructions per event of ``runs`` failover runs against the same cluster idle for
    ``idle_seconds``; returns the ratio (None when valgrind is missing)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        report("failover run, instructions per event: skipped (valgrind is not installed)")
        return None
    per_event: dict[str, float] = {}
    for kind, amount in (("runs", runs), ("idle", idle_seconds)):
        work = _child(kind, amount, valgrind) - _child(kind, 0, valgrind)
        events = _child(kind, amount, None)
        per_event[kind] = work / events
        report(f"  {kind}: {work / 1e6:,.1f} M instructions over {events:,} events"
               + (f" ({work / amount / 1e6:.2f} M per run)" if kind == "runs" else ""))
    ratio = per_event["runs"] / per_event["idle"]
    report(f"one failover run, instructions per event (cachegrind, {runs} forked runs): "
           f"{per_event['runs'] / 1000:.1f} k vs {per_event['idle'] / 1000:.1f} k per event "
           f"of the same cluster idle: {ratio:.2f}x (the CPU-time goal is <= 1.5x; this "
           f"count does not drift with the machine's load)")
    return ratio


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.instructions``: the benchmark; ``KIND AMOUNT``: one child."""
    args = sys.argv[1:] if argv is None else argv
    if args:
        print(probe(args[0], int(args[1])))
        return 0
    bench_run_instructions(lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
