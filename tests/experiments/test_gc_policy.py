"""The simulations' garbage-collection policy changes no result, and leaves gc as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from controller.operations import CreateTopics, NewTopic
from experiments.tasks import run_spec
from metadata import batch_shape, broker_index, delta
from sim import gc_policy
from sim.cluster import ClusterConfig, KRaftCluster
from tests.experiments.helpers import spec, without_wall


@pytest.fixture
def policy_restored() -> Iterator[None]:
    """Whatever a test sets, the policy is on again afterwards."""
    was = gc_policy.enabled()
    yield
    gc_policy.set_enabled(was)


def _cluster_fingerprint() -> tuple[str, int]:
    """A small cluster's run, with full collections forced in the middle of it."""
    with gc_policy.simulation_gc():
        cluster = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=2))
        cluster.start()
        handles = [cluster.submit(CreateTopics((NewTopic(f"t{i}", 40, 2),))) for i in range(3)]
        gc.collect()  # a full collection inside the run: its survivors are frozen
        for handle in handles:
            cluster.wait(handle)
        cluster.run_until(cluster.idle, 60_000)
        return cluster.sim.trace.fingerprint, cluster.sim.events


@pytest.mark.parametrize("experiment,params", [
    ("failover", {"scenario": "crash", "window": "inside", "mode": "transactional"}),
    ("failover", {"scenario": "partition", "window": "end-appended", "mode": "non-atomic"}),
    ("visibility", {"scenario": "steady", "mode": "transactional"}),
])
def test_rows_are_the_same_with_the_policy_on_or_off(
        policy_restored: None, experiment: str, params: dict[str, str]) -> None:
    run = spec(experiment, index=3, seed=5, **params)
    gc_policy.set_enabled(True)
    on = without_wall(run_spec(run))
    gc_policy.set_enabled(False)
    off = without_wall(run_spec(run))
    assert on == off


def test_cluster_trace_is_the_same_with_the_policy_on_or_off(policy_restored: None) -> None:
    gc_policy.set_enabled(True)
    on = _cluster_fingerprint()
    gc_policy.set_enabled(False)
    assert _cluster_fingerprint() == on


@pytest.mark.parametrize("on", [True, False])
def test_a_run_leaves_nothing_in_the_sharing_caches(policy_restored: None, on: bool) -> None:
    """What the nodes of one run shared (registrations, topics, indexes, shapes) is not
    kept for the next run, which replays records of its own."""
    gc_policy.set_enabled(on)
    run_spec(spec("failover", index=2, seed=11, scenario="crash", window="inside",
                  mode="transactional"))
    assert not delta._records_held and not delta._from_record and not delta._merged
    assert not delta._topics_made and not broker_index._indexes and not batch_shape._shapes


def test_the_scope_restores_thresholds_and_unfreezes(policy_restored: None) -> None:
    gc_policy.set_enabled(True)
    thresholds = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with gc_policy.simulation_gc():
        assert gc.get_threshold() == gc_policy.RUN_THRESHOLDS
        with gc_policy.simulation_gc():  # nested: acts as the outermost one
            setup = [[i] for i in range(2 * gc_policy.LARGE_SETUP)]  # a large start-up
            gc_policy.freeze_setup()
            assert gc.get_freeze_count() > frozen
        assert gc.get_threshold() == gc_policy.RUN_THRESHOLDS
        del setup
    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == 0
    assert gc_policy._freeze_survivors not in gc.callbacks


def test_a_small_start_up_is_not_frozen_and_its_cycles_die_young(policy_restored: None) -> None:
    """A sweep's small runs (a failover cluster) freeze nothing: their cycles are collected
    by young collections, without a full collection of the whole process."""
    gc_policy.set_enabled(True)
    gc.collect()
    before = gc.get_stats()
    for _ in range(3):
        run_spec(spec("failover", index=1, seed=7, scenario="crash", window="inside",
                      mode="transactional"))
        assert gc.get_freeze_count() == 0
    gc.collect(1)
    after = gc.get_stats()
    assert after[2]["collections"] == before[2]["collections"]  # no walk of the process
    young = sum(after[g]["collected"] - before[g]["collected"] for g in (0, 1))
    assert young > 3 * 100  # each run's cluster is a few hundred objects in cycles


def test_freeze_setup_outside_a_scope_does_nothing() -> None:
    before = gc.get_freeze_count()
    gc_policy.freeze_setup()
    assert gc.get_freeze_count() == before


def test_a_worker_freezes_what_it_holds_at_a_sweeps_first_task(policy_restored: None) -> None:
    """A Spark Python worker freezes its modules and grid at a sweep's first task
    (PySpark's daemon makes a full collection after every task); not inside a run, not
    when the policy is off, and what it froze still dies by reference counting."""
    gc.unfreeze()
    gc.collect()
    try:
        gc_policy.set_enabled(False)
        gc_policy.freeze_worker()
        assert gc.get_freeze_count() == 0
        gc_policy.set_enabled(True)
        with gc_policy.simulation_gc():
            gc_policy.freeze_worker()
            assert gc.get_freeze_count() == 0
        held = [[i] for i in range(1_000)]
        gc_policy.freeze_worker()
        frozen = gc.get_freeze_count()
        assert frozen >= len(held)
        tracked = len(gc.get_objects())
        assert tracked < frozen  # a full collection no longer walks them
        del held
        assert gc.get_freeze_count() <= frozen - 1_000
    finally:
        gc.unfreeze()


def test_young_collections_wait_longer_while_they_find_no_garbage(policy_restored: None
                                                                 ) -> None:
    """A run that builds without making cycles (a large cluster growing) is walked by
    ever rarer young collections; once collections find cycles they come as often as
    at the start; leaving the scope restores the thresholds."""
    gc_policy.set_enabled(True)
    thresholds = gc.get_threshold()
    with gc_policy.simulation_gc():
        start = gc_policy.RUN_THRESHOLDS[0]
        built = [[i] for i in range(6 * start)]  # live, acyclic: nothing to collect
        assert gc.get_threshold()[0] >= 4 * start
        assert gc.get_threshold()[0] <= gc_policy.MAX_YOUNG_THRESHOLD
        for _ in range(gc.get_threshold()[0] // 2 + 1):  # cycles: garbage only gc frees
            cycle: list[Any] = []
            cycle.append(cycle)
        del cycle
        assert gc.get_threshold()[0] == start
        del built
    assert gc.get_threshold() == thresholds
