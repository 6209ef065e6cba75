"""Kafka's RaftEventSimulationTest scenarios, each over 100 seeds, each ending in progress."""

from __future__ import annotations

import pytest

from sim.faults import parse_fault
from tests.sim.harness import RaftScenario

SEEDS = range(100)


@pytest.mark.parametrize("seed", SEEDS)
def test_can_elect_initial_leader(seed: int) -> None:
    voters, observers = 1 + seed % 5, (seed // 5) % 6
    scenario = RaftScenario(seed, voters, observers)
    scenario.wait_for_leader()
    scenario.assert_progress()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("graceful", [True, False], ids=["graceful", "kill"])
def test_can_elect_new_leader_after_old_leader_failure(seed: int, graceful: bool) -> None:
    scenario = RaftScenario(seed, 3 + seed % 3, seed % 2)
    old = scenario.wait_for_leader()
    scenario.commit(3)
    epoch = old.raft.epoch if old.raft else 0
    if graceful:
        scenario.sim.shutdown(old.node_id)
    else:
        scenario.sim.crash(old.node_id)
    scenario.wait_for_leader(other_than=old.node_id, min_epoch=epoch + 1)
    scenario.sim.restart(old.node_id)
    scenario.assert_progress()


@pytest.mark.parametrize("seed", SEEDS)
def test_can_recover_after_all_nodes_killed(seed: int) -> None:
    voters = 3 + seed % 3
    scenario = RaftScenario(seed, voters)
    scenario.wait_for_leader()
    scenario.commit(3)
    for node in range(voters):
        scenario.sim.crash(node)
    scenario.sim.run_for(1000)
    for node in range(voters // 2 + 1):  # only a majority comes back
        scenario.sim.restart(node)
    scenario.wait_for_leader()
    scenario.assert_progress()


@pytest.mark.parametrize("seed", SEEDS)
def test_can_elect_new_leader_after_old_leader_partitioned_away(seed: int) -> None:
    scenario = RaftScenario(seed, 3 + seed % 3)
    old = scenario.wait_for_leader()
    scenario.commit(3)
    scenario.sim.apply_fault(parse_fault(f"isolate:{old.node_id}@0"))
    new = scenario.wait_for_leader(other_than=old.node_id)
    assert new.node_id != old.node_id
    scenario.commit(3)
    scenario.sim.apply_fault(parse_fault("heal@0"))
    scenario.assert_progress()


@pytest.mark.parametrize("seed", SEEDS)
def test_can_make_progress_if_majority_is_reachable(seed: int) -> None:
    scenario = RaftScenario(seed, 5)
    scenario.wait_for_leader()
    scenario.commit(3)
    sim = scenario.sim
    sim.apply_fault(parse_fault("partition:0,1|2,3,4@0"))
    scenario.wait_for_leader(timeout_ms=60_000, among=(2, 3, 4))
    scenario.commit(5, nodes=[2, 3, 4])
    minority = max((sim.slots[n].raft.high_watermark or 0) for n in (0, 1)
                   if sim.slots[n].raft is not None)
    assert scenario.leader_hw() > minority
    sim.apply_fault(parse_fault("heal@0"))
    scenario.assert_progress()


@pytest.mark.parametrize("seed", SEEDS)
def test_can_make_progress_after_back_to_back_leader_failures(seed: int) -> None:
    scenario = RaftScenario(seed, 5)
    first = scenario.wait_for_leader()
    scenario.commit(3)
    scenario.sim.crash(first.node_id)
    second = scenario.wait_for_leader(other_than=first.node_id)
    scenario.sim.crash(second.node_id)
    scenario.wait_for_leader(other_than=second.node_id)
    scenario.sim.restart(first.node_id)
    scenario.sim.restart(second.node_id)
    scenario.assert_progress()


@pytest.mark.parametrize("seed", SEEDS)
def test_can_recover_from_single_node_committed_data_loss(seed: int) -> None:
    voters = 3 + seed % 3
    scenario = RaftScenario(seed, voters)
    scenario.wait_for_leader()
    scenario.commit(5)
    victim = seed % voters
    scenario.sim.wipe(victim)
    # Raft loses no committed data as long as a new leader is elected before the wiped
    # node comes back (as in Kafka's scenario).
    scenario.wait_for_leader(other_than=victim)
    scenario.sim.restart(victim)
    scenario.assert_progress()
