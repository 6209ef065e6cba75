"""sim.testing as a user sees it: strategies, the fixture, the machine's hooks."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim.testing
from controller.operations import CreateTopics, NewTopic, Operation
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import FaultSpec, parse_faults
from sim.testing import ClusterMachine, cluster_configs, fault_schedules, operations


@settings(max_examples=30)
@given(cluster_configs(max_controllers=3, max_brokers=2))
def test_drawn_configurations_validate(config: ClusterConfig) -> None:
    assert config.validate() is config
    assert 1 <= config.controllers <= 3 and 0 <= config.brokers <= 2


@settings(max_examples=50)
@given(fault_schedules([0, 3000, 3001], max_faults=5, horizon_ms=5_000))
def test_fault_schedules_are_sorted_and_speak_the_fault_language(
        faults: tuple[FaultSpec, ...]) -> None:
    assert len(faults) <= 5
    assert [f.at_ms for f in faults] == sorted(f.at_ms for f in faults)
    assert all(0 <= f.at_ms < 5_000 for f in faults)
    assert parse_faults([f.render() for f in faults]) == tuple(
        sorted(faults, key=lambda f: f.at_ms))
    ClusterConfig(controllers=2, brokers=1, faults=faults).validate()


@settings(max_examples=20)
@given(st.lists(operations(brokers=2, max_partitions=30), min_size=1, max_size=4))
def test_drawn_operations_run_on_a_cluster(ops: list[Operation]) -> None:
    cluster = KRaftCluster(ClusterConfig(seed=3, controllers=3, brokers=2))
    cluster.start()
    handles = [cluster.submit(op) for op in ops]
    assert cluster.run_until(lambda: all(h.done for h in handles), 30_000)


def test_the_fixture_gives_a_started_cluster(kraft_cluster: KRaftCluster) -> None:
    assert kraft_cluster.active_controller() is not None
    handle = kraft_cluster.submit(CreateTopics((NewTopic("x", 3, 2),)))
    assert kraft_cluster.wait(handle) and handle.outcome() == "committed"


class TestAnOverriddenConfig:
    @pytest.fixture
    def kraft_cluster_config(self) -> ClusterConfig:
        return ClusterConfig(seed=5, controllers=1, brokers=1)

    def test_the_fixture_takes_it(self, kraft_cluster: KRaftCluster) -> None:
        assert kraft_cluster.config.controllers == 1 and kraft_cluster.config.seed == 5


def test_a_smaller_cluster_maps_the_drawn_nodes() -> None:
    class Small(ClusterMachine):
        controllers = 1
        brokers = 1

    machine = Small()
    assert machine.node_ids == (0, 3000)
    assert [machine.node(n) for n in (0, 1, 3000, 3001, 3002)] == [0, 3000, 3000, 3000, 0]


def test_importing_sim_testing_needs_no_hypothesis() -> None:
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "import sim.testing\n"
            "try:\n    sim.testing.ClusterMachine\n"
            "except ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "sim.testing needs Hypothesis: pip install 'kraftsim[testing]'"
    with pytest.raises(AttributeError):
        sim.testing.nothing_here  # noqa: B018
