"""A broker that catches up from a snapshot publishes it (no new commit needed)."""

from __future__ import annotations

from controller.operations import CreateTopics, NewTopic
from tests.controller.conftest import cluster


def test_a_restarted_broker_publishes_a_snapshot_at_the_log_end_without_new_commits() -> None:
    c = cluster(seed=3, noop_ms=0, snapshot_every=1)
    c.sim.crash(0)
    for name in ("a", "b", "c"):
        handle = c.submit(CreateTopics((NewTopic(name, 2, 3),)))
        assert c.wait(handle, 10_000) and handle.error is None
    assert c.run_until(c.idle, 10_000)
    active = c.active_controller()
    assert active is not None
    end = active.raft.log.end_offset
    assert active.raft.log.start_offset > 0  # the broker's next offset is gone: a snapshot
    c.sim.restart(0)
    c.sim.run_for(5_000)  # nothing new commits: no NoOps, no operations
    assert c.sim.violation is None, c.sim.violation
    assert active.raft.log.end_offset == end
    loader = c.loader(0)
    assert loader is not None
    assert loader.published is not None, "the restarted broker published nothing"
    assert loader.published_offset == end - 1
    assert loader.published.topic("c") is not None
