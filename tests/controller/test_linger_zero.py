"""Linger 0: an append never calls back into the controller in the middle of its write."""

from __future__ import annotations

import pytest

from controller import ControllerConfig, WriteMode
from controller.operations import CreateTopics, NewTopic
from raft import RaftConfig
from sim.cluster import ClusterConfig, KRaftCluster


@pytest.mark.parametrize("seed", range(4))
def test_a_transaction_with_linger_zero_on_one_controller_stays_atomic(seed: int) -> None:
    config = ClusterConfig(
        seed=seed, controllers=1, brokers=2,
        controller=ControllerConfig(max_records_per_batch=10,
                                    write_mode=WriteMode.TRANSACTIONAL,
                                    snapshot_every_records=25),
        raft=RaftConfig(append_linger_ms=0, fetch_max_records=20))
    c = KRaftCluster(config)
    c.start()
    assert c.sim.violation is None, c.sim.violation
    handles = [c.submit(CreateTopics((NewTopic(f"t{i}", 30, 1),))) for i in range(3)]
    assert c.run_until(c.idle, 30_000), c.sim.violation
    for handle in handles:
        assert handle.batch_count == 4 and handle.transactional
        assert handle.error is None, handle.error
    active = c.active_controller()
    assert active is not None
    for i in range(3):
        assert active.committed_image().topic(f"t{i}") is not None
