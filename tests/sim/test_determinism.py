"""Same seed, same trace: in one process, and across processes with other hash seeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sim.faults import parse_faults
from sim.raft_sim import RaftSimConfig, run_raft_sim

CONFIG = RaftSimConfig(seed=11, voters=3, observers=1, duration_ms=12_000,
                       faults=parse_faults(["crash:leader@4000;restart:0@7000;restart:1@7000;"
                                            "restart:2@7000;partition:0|1,2,3@8000;heal@9000"]),
                       random_faults=2)


def test_same_seed_gives_the_same_fingerprint_twice() -> None:
    first, second = run_raft_sim(CONFIG), run_raft_sim(CONFIG)
    assert first.violation is None
    assert first.fingerprint == second.fingerprint
    assert first.events == second.events


def test_another_seed_gives_another_trace() -> None:
    other = run_raft_sim(RaftSimConfig(seed=12, duration_ms=12_000))
    assert other.fingerprint != run_raft_sim(CONFIG).fingerprint


def _trace_in_subprocess(hash_seed: str, trace: Path) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run(
        [sys.executable, "-m", "kraftsim.cli", "raft-sim", "--seed", "11", "--observers", "1",
         "--duration", "12000", "--faults",
         "crash:leader@4000;restart:0@7000;restart:1@7000;restart:2@7000;"
         "partition:0|1,2,3@8000;heal@9000", "--random-faults", "2", "--json",
         "--trace", str(trace)],
        env=env, capture_output=True, text=True, check=True)
    fingerprint: str = json.loads(out.stdout)["fingerprint"]
    return fingerprint


def test_byte_identical_trace_under_other_hash_seeds(tmp_path: Path) -> None:
    a = _trace_in_subprocess("0", tmp_path / "a.jsonl")
    b = _trace_in_subprocess("1", tmp_path / "b.jsonl")
    assert a == b == run_raft_sim(CONFIG).fingerprint
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
