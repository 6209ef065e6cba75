"""The demo explains each gap it shows, from the run itself."""

from __future__ import annotations

import pytest

from controller import WriteMode
from sim.cluster import ClusterConfig, KRaftCluster
from sim.demo import format_demo, run_demo
from sim.faults import parse_faults
from sim.timeline import Timeline


def test_seed_3_explains_epoch_3_the_leaderless_time_and_the_brokers_lag() -> None:
    result = run_demo(3)
    epochs = {e["epoch"]: e for e in result.leader_epochs}
    assert sorted(epochs) == [1, 3]
    elected = epochs[3]["at_ms"]
    why_epoch, no_leader, brokers = result.gaps
    assert "epoch 2 was a split vote" in why_epoch and f"at {elected} ms" in why_epoch
    assert no_leader.startswith("no leader for ") and f"-{elected} ms)" in no_leader
    assert "fetch timeout (2000 ms)" in no_leader
    assert brokers.startswith("brokers showed the result ") and "observers" in brokers
    text = format_demo(result)
    assert "why the gaps:" in text and all(f"  - {gap}" in text for gap in result.gaps)


def test_a_first_round_win_is_explained_differently() -> None:
    result = run_demo(7)
    assert [e["epoch"] for e in result.leader_epochs] == [1, 2]
    assert "the first round after epoch 1 elected" in result.gaps[0]
    assert "split vote" not in " ".join(result.gaps)


def test_no_crash_no_gaps() -> None:
    assert run_demo(7, mode=WriteMode.ATOMIC).gaps == []


def test_the_timeline_shows_elections_activations_markers_and_publications() -> None:
    """The demo's timeline lines that the run's events make (seed 7: the leader crashes
    inside the transaction; the new one aborts it first, then the retry commits)."""
    timeline = run_demo(7).timeline
    for line in (
        "1025 ms  controller 3000  elected leader of epoch 1",
        "1031 ms  controller 3000  active in epoch 1; first writes: BeginTransactionRecord, "
        "EndTransactionRecord, FeatureLevelRecord, ZkMigrationStateRecord",
        "1034 ms  broker 2         published image at offset 0; topics: none",
        "1058 ms  cluster          committed BeginTransactionRecord('Bootstrap records') at "
        "offset 1",
        "1058 ms  cluster          committed EndTransactionRecord at offset 5: 'Bootstrap "
        "records' committed (3 records)",
        "3232 ms  controller 3002  elected leader of epoch 2",
        "3239 ms  controller 3002  active in epoch 2; first writes: AbortTransactionRecord "
        "(reason 'Controller failover')",
        "3269 ms  cluster          committed AbortTransactionRecord at offset 216: "
        "'CreateTopics(orders: 1000 partitions)' aborted (199 records)",
        "3286 ms  broker 1         published image at offset 1219; topics: orders (1000 "
        "partitions)",
    ):
        assert f"{line[:4]:>8}{line[4:]}" in timeline, line
    times = [int(line.split(" ms ")[0]) for line in timeline]
    assert times == sorted(times)
    assert sum("published image" in line for line in timeline) == 6  # 3 brokers, twice
    quiet = run_demo(7, mode=WriteMode.NON_ATOMIC).timeline
    assert "    3239 ms  controller 3002  active in epoch 2; nothing to abort or bootstrap" \
        in quiet


@pytest.mark.timeout(10)  # a fault noted over and over would never end
def test_the_timeline_lists_each_fault_once_with_the_node_it_hit() -> None:
    cluster = KRaftCluster(ClusterConfig(seed=7, controllers=3, brokers=1))
    timeline = Timeline(cluster.txn_invariants)
    cluster.sim.monitors.append(timeline)
    cluster.start()
    leader = cluster.active_controller()
    assert leader is not None
    for spec in parse_faults(["crash:leader@0;heal@0"]):
        cluster.sim.apply_fault(spec)
    cluster.sim.run_for(100)
    faults = [e for e in timeline.entries if e.text.startswith("fault: ")]
    assert [(e.node, e.text) for e in faults] == [
        (None, f"fault: crash:leader@0 (node {leader.node_id})"), (None, "fault: heal@0")]
