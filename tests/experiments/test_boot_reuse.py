"""Runs that fork one booted cluster give exactly the rows and traces of fresh boots."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from controller.operations import CreateTopics, NewTopic
from experiments import eos, failover, visibility
from experiments.boots import Boots
from experiments.grid import build_grid, parse_params
from experiments.model import RunSpec
from experiments.registry import get_experiment
from experiments.tasks import run_specs
from sim.cluster import ClusterConfig, KRaftCluster
from sim.fork import Frozen
from sim.trace import Trace
from tests.experiments.helpers import without_wall


@pytest.fixture
def reuse_restored() -> Iterator[None]:
    """Boot reuse is on again (and the caches empty) after the test."""
    yield
    for boots in (failover.BOOTS, visibility.BOOTS, eos.BOOTS):
        boots.set_reuse(True)


def _specs(name: str, runs: int, seed: int) -> list[RunSpec]:
    experiment = get_experiment(name)
    return build_grid(experiment, parse_params(experiment, []), runs, seed)


def _effective(spec: RunSpec) -> str:
    """What a run's events depend on: its seed and the parameters that play a part."""
    params = dict(spec.params)
    if params.get("delivery") == "idempotence-only":
        params.pop("protocol")
    return f"{spec.seed} {sorted(params.items())}"


@pytest.mark.parametrize(("name", "boots", "runs"), [("failover", failover.BOOTS, 40),
                                                     ("visibility", visibility.BOOTS, 40),
                                                     ("eos", eos.BOOTS, 20)])
def test_forked_runs_equal_fresh_boots(name: str, boots: Boots[Any], runs: int,
                                       reuse_restored: None) -> None:
    """Every cell of the default grid, and more runs than cells (so later runs fork a boot
    that earlier runs already forked): rows and trace fingerprints as from fresh boots."""
    specs = _specs(name, runs, 5)
    boots.set_reuse(False)
    forks = boots.cache.forks
    fresh = [without_wall(row) for row in run_specs(specs)]
    assert boots.cache.forks == forks  # every run booted afresh
    boots.set_reuse(True)
    forked = [without_wall(row) for row in run_specs(specs)]
    assert boots.cache.boots < boots.cache.forks  # the runs did fork a cached boot
    assert forked == fresh
    # each run its own trace (eos: the protocol plays no part without transactions)
    assert len({row["fingerprint"] for row in forked}) == len({_effective(s) for s in specs})


@pytest.mark.parametrize("name", ["failover", "visibility", "eos"])
def test_a_traced_run_boots_afresh_and_matches_the_forked_one(name: str) -> None:
    """A replay writing its trace boots afresh; its fingerprint is the forked run's, and the
    trace file's event lines hash to it."""
    spec = _specs(name, 3, 11)[2]
    run = get_experiment(name).run
    forked = run(spec, None)
    out = io.BytesIO()
    traced = run(spec, out)
    assert without_wall(traced) == without_wall(forked)
    lines = Trace()
    for line in out.getvalue().splitlines():
        if b'"note"' not in line:
            lines._hash.update(line + b"\n")
    assert lines.fingerprint == forked["fingerprint"]
    assert b'"ev":"reseed"' in out.getvalue()


@pytest.mark.parametrize(("name", "params"), [
    ("failover", ["scenario=crash", "window=inside", "mode=transactional"]),
    ("visibility", ["scenario=steady", "mode=transactional"]),
    ("eos", ["scenario=none"]),
])
def test_a_boot_stopped_by_a_deliberate_bug_gives_its_row_when_forked(
        name: str, params: list[str]) -> None:
    """hw-without-majority breaks an invariant while the cluster boots: the sweep's run
    (a fork of that boot) reports it exactly as its replay (a fresh boot) does."""
    experiment = get_experiment(name)
    axes = {k: v[:1] for k, v in parse_params(
        experiment, [*params, "mutations=hw-without-majority"]).items()}
    spec = build_grid(experiment, axes, 1, 3)[0]
    forked = experiment.run(spec, None)
    fresh = experiment.run(spec, io.BytesIO())
    assert (forked["valid"], forked["invariant"]) == ("false", "MajorityReachedHighWatermark")
    assert without_wall(forked) == without_wall(fresh)


def test_a_fork_is_independent_of_its_original() -> None:
    """Running a fork leaves the frozen original as it was: a second fork runs the same."""
    cluster = KRaftCluster(ClusterConfig(seed=2, controllers=3, brokers=1))
    cluster.start()
    frozen = Frozen(cluster)
    runs = []
    for _ in range(2):
        fork = frozen.fork()
        assert fork.sim is not cluster.sim and fork.sim.slots[0] is not cluster.sim.slots[0]
        handle = fork.submit(CreateTopics((NewTopic("t", 5, 1),)))
        assert fork.wait(handle)
        fork.run_until(fork.idle, 10_000)
        runs.append((fork.sim.trace.fingerprint, fork.sim.events, fork.sim.now))
    assert runs[0] == runs[1]
    assert cluster.loader(0) is not None and cluster.loader(0).published.topic("t") is None
    handle = cluster.submit(CreateTopics((NewTopic("t", 5, 1),)))
    assert cluster.wait(handle)
    cluster.run_until(cluster.idle, 10_000)
    assert (cluster.sim.trace.fingerprint, cluster.sim.events, cluster.sim.now) == runs[0]


def test_a_trace_written_to_a_file_cannot_be_forked() -> None:
    """Its lines so far are in the original's file only: forking it is refused."""
    cluster = KRaftCluster(ClusterConfig(seed=2, controllers=1, brokers=0), io.BytesIO())
    with pytest.raises(ValueError, match="cannot be forked"):
        Frozen(cluster)
    assert failover.boot_seed(cluster.config) == failover.boot_seed(
        ClusterConfig(seed=99, controllers=1, brokers=0))
