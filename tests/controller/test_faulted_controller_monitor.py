"""A controller stopped by a failed snapshot load is a reported fault, never a traceback."""

from __future__ import annotations

from metadata.schema import EndTransactionRecord
from raft import Snapshot, SnapshotId
from tests.controller.conftest import cluster


def test_a_failed_snapshot_load_is_a_fault_not_a_crash_of_the_run() -> None:
    c = cluster(seed=2, brokers=1)
    active = c.active_controller()
    assert active is not None
    standby = next(c.controller(n) for n in c.config.controller_ids if n != active.node_id)
    assert standby is not None
    bad = Snapshot(SnapshotId(5, 1), (EndTransactionRecord(),))
    c.sim.act("load a bad snapshot", lambda: standby.handle_load_snapshot(bad))  # no raise
    assert c.controller_faults and c.controller_faults[0][0] == standby.node_id
    assert c.run_until(c.idle, 10_000), c.sim.violation
    assert c.sim.violation is None
