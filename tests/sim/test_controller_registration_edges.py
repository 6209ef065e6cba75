"""Controller registration (KIP-919) in a simulated cluster, at its edges: what start-up
waits for (:meth:`KRaftCluster.controllers_registered`: the running controllers the
active one reaches both ways, published by every node so reachable), a registration out
when its leader fails over (sent again at once, not after the request times out), a
snapshot that drops a controller's registration, and the trace's epoch of the requests.
"""

from __future__ import annotations

import io
import json

from metadata.schema import FeatureLevelRecord, RegisterControllerRecord
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE
from raft import Snapshot
from raft.snapshot import SnapshotId
from sim.cluster import ClusterConfig, KRaftCluster

WAIT_MS = 30_000


def _cluster(seed: int, brokers: int = 1, trace: io.BytesIO | None = None) -> KRaftCluster:
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=brokers),
                           trace_out=trace)
    assert cluster.start()
    return cluster


def _active_and_standby(cluster: KRaftCluster) -> tuple[int, int]:
    active = cluster.active_controller()
    assert active is not None
    return active.node_id, next(n for n in cluster.config.controller_ids
                                if n != active.node_id)


def test_start_with_no_brokers_returns_once_every_controller_is_registered() -> None:
    """Start-up with controllers alone (nothing else to wait for) still returns only once
    each controller's registration is in every controller's published image."""
    for seed in range(50, 55):
        cluster = _cluster(seed, brokers=0)
        assert cluster.controllers_registered()
        for node in cluster.config.controller_ids:
            controller = cluster.controller(node)
            assert controller is not None
            assert sorted(controller.committed_image().controllers) == [3000, 3001, 3002]


def test_what_start_up_waits_for_follows_the_running_reachable_nodes() -> None:
    """A crashed controller is not waited for; its restarted process is, until its new
    incarnation is registered; a broker the active controller cannot reach both ways is
    not, and one that it can but that lags behind is."""
    cluster = _cluster(56)
    active, standby = _active_and_standby(cluster)
    broker = cluster.config.broker_ids[0]
    assert cluster.registration_manager(broker) is None
    assert cluster.registration_manager(4242) is None
    cluster.sim.crash(standby)
    cluster.sim.run_for(100)
    assert cluster.registration_manager(standby) is None
    assert cluster.controllers_registered()
    cluster.sim.restart(standby)
    assert not cluster.controllers_registered()  # the new process is not in the log yet
    assert cluster.run_until(cluster.controllers_registered, WAIT_MS)

    cluster.sim.network.block(broker, active)  # its fetches no longer reach the leader
    cluster.sim.crash(standby)
    cluster.sim.run_for(100)
    cluster.sim.restart(standby)
    manager = cluster.registration_manager(standby)
    assert manager is not None
    assert cluster.run_until(lambda: manager.registered_in_log, WAIT_MS)
    loader = cluster.loader(broker)
    assert loader is not None and loader.published is not None
    assert loader.published.controllers[standby] != manager.registration  # it lags
    assert cluster.run_until(cluster.controllers_registered, WAIT_MS)  # one-way: not waited for
    assert loader.published.controllers[standby] != manager.registration
    cluster.sim.network.heal()
    assert not cluster.controllers_registered()  # reachable again, and still behind
    assert cluster.run_until(cluster.controllers_registered, WAIT_MS)


def test_no_active_controller_means_not_registered() -> None:
    """With two of three controllers down there is no active one: not registered."""
    cluster = _cluster(57, brokers=0)
    active, standby = _active_and_standby(cluster)
    cluster.sim.crash(active)
    cluster.sim.crash(standby)
    cluster.sim.run_for(100)
    assert cluster.active_controller() is None
    assert not cluster.controllers_registered()


def test_a_leader_change_resends_the_registration_before_it_would_time_out() -> None:
    """A registration out to a leader that crashes is sent again as soon as the new
    leader is known: it is written before the first request's give-up time."""
    cluster = _cluster(58)
    active, standby = _active_and_standby(cluster)
    cluster.sim.crash(standby)
    cluster.sim.run_for(100)
    cluster.sim.restart(standby)
    manager = cluster.registration_manager(standby)
    assert manager is not None
    assert cluster.run_until(lambda: manager.pending is not None, WAIT_MS)
    assert manager.pending is not None and manager.pending[1] == active
    give_up = manager.pending[2]
    cluster.sim.crash(active)
    assert cluster.run_until(lambda: manager.registered_in_log and manager.pending is None,
                             WAIT_MS)
    assert cluster.sim.now < give_up
    assert (manager.successful_rpcs, manager.failed_rpcs) == (1, 0)


def test_a_snapshot_without_its_registration_makes_a_controller_register_again() -> None:
    """A controller whose loaded snapshot lacks its own registration (at 3.7-IV0) sends
    a new one, as Kafka's registration manager does on the loader's publication."""
    cluster = _cluster(59, brokers=0)
    _, standby = _active_and_standby(cluster)
    controller = cluster.controller(standby)
    manager = cluster.registration_manager(standby)
    assert controller is not None and manager is not None and manager.registered_in_log
    others = [RegisterControllerRecord(
        controller_id=n, incarnation_id=f"AAAAAAAAAAAAAAAAAAAA{n % 10}A",
        end_points=manager.registration.endpoints, features=manager.registration.features)
        for n in cluster.config.controller_ids if n != standby]
    offset = controller.offsets.last_stable_offset + 1
    controller.handle_load_snapshot(Snapshot(SnapshotId(offset, 1), (
        FeatureLevelRecord(METADATA_VERSION_FEATURE, LEVELS["3.7-IV0"]), *others)))
    assert not manager.registered_in_log
    assert manager.pending is not None


def test_the_trace_gives_the_registration_messages_epoch_minus_one() -> None:
    """A controller's registration request and its answer carry no broker epoch: the
    trace shows -1 for both."""
    trace = io.BytesIO()
    _cluster(60, brokers=0, trace=trace)
    epochs = {(line["msg"], line["epoch"]) for line in map(json.loads,
                                                           trace.getvalue().splitlines())
              if line.get("ev") == "deliver" and line["msg"].startswith("ControllerRegistration")}
    assert epochs == {("ControllerRegistrationRequest", -1),
                      ("ControllerRegistrationResponse", -1)}
