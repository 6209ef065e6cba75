"""Controllers register themselves in a simulated cluster (KIP-919), as Kafka 3.7+ ones do.

Every controller process, active or not, sends its registration to the active controller
once metadata.version allows it and stops once its published image holds it; a restart
is a new incarnation that registers again; below 3.7-IV0 nothing registers until
metadata.version is raised; a registration whose leader fails over is retried with the
new one; and UpdateFeatures refuses while a member of the quorum has not registered.
"""

from __future__ import annotations

from controller import ControllerConfig
from controller.operations import FeatureUpdate, UpdateFeatures
from controller.registration_manager import ControllerRegistrationManager
from metadata.image import MetadataImage
from metadata.schema import RegisterControllerRecord
from metadata.versions import LEVELS
from sim.cluster import ClusterConfig, KRaftCluster

WAIT_MS = 30_000


def _cluster(seed: int, level: int | None = None, brokers: int = 2) -> KRaftCluster:
    controller = ControllerConfig() if level is None else \
        ControllerConfig(bootstrap_metadata_version=level)
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=brokers,
                                         controller=controller))
    assert cluster.start()
    return cluster


def _manager(cluster: KRaftCluster, node: int) -> ControllerRegistrationManager:
    manager = cluster.registration_manager(node)
    assert manager is not None
    return manager


def _images(cluster: KRaftCluster) -> dict[int, MetadataImage]:
    """Every running node's published image: a controller's committed one, a broker's."""
    images: dict[int, MetadataImage] = {}
    for node in cluster.config.controller_ids:
        controller = cluster.controller(node)
        if controller is not None and cluster.sim.slots[node].running:
            images[node] = controller.committed_image()
    for node in cluster.config.broker_ids:
        loader = cluster.loader(node)
        if loader is not None and loader.published is not None:
            images[node] = loader.published
    return images


def _incarnations(image: MetadataImage) -> dict[int, str]:
    return {c: reg.incarnation_id for c, reg in image.controllers.items()}


def _current(cluster: KRaftCluster) -> dict[int, str]:
    """Each running controller process's incarnation id."""
    return {n: _manager(cluster, n).incarnation_id for n in cluster.config.controller_ids
            if cluster.registration_manager(n) is not None}


def _registrations_in_log(cluster: KRaftCluster) -> list[RegisterControllerRecord]:
    active = cluster.active_controller()
    assert active is not None
    return [r for b in active.raft.log.batches for r in b.records
            if isinstance(r, RegisterControllerRecord)]


def _everyone_sees(cluster: KRaftCluster, expected: dict[int, str]) -> bool:
    return all(_incarnations(image) == expected for image in _images(cluster).values())


def test_every_node_lists_the_three_controllers_after_start() -> None:
    """After start, every controller and broker image lists all three controllers, each
    with the incarnation id of its running process, written once each."""
    cluster = _cluster(31)
    expected = _current(cluster)
    assert sorted(expected) == [3000, 3001, 3002]
    assert len(set(expected.values())) == 3
    assert _everyone_sees(cluster, expected)  # start-up waited for them
    assert sorted(r.controller_id for r in _registrations_in_log(cluster)) == [3000, 3001, 3002]
    assert all(_manager(cluster, n).registered_in_log for n in expected)
    assert all(_manager(cluster, n).next_deadline() is None for n in expected)


def test_incarnation_ids_are_a_function_of_the_seed() -> None:
    """The same seed gives the same incarnation ids; another seed others."""
    assert _current(_cluster(32, brokers=0)) == _current(_cluster(32, brokers=0))
    assert _current(_cluster(32, brokers=0)) != _current(_cluster(33, brokers=0))


def test_a_restarted_controller_registers_again_with_a_new_incarnation() -> None:
    """A standby, then the active controller, restarted: each new process registers its
    new incarnation id, and every node's image shows it."""
    cluster = _cluster(34)
    before = _current(cluster)
    active = cluster.active_controller()
    assert active is not None
    standby = next(n for n in cluster.config.controller_ids if n != active.node_id)
    for node in (standby, active.node_id):
        cluster.sim.crash(node)
        cluster.sim.run_for(100)
        cluster.sim.restart(node)
        after = _current(cluster)
        assert after[node] != before[node]
        assert cluster.run_until(lambda a=after: _everyone_sees(cluster, a),  # type: ignore[misc]
                                 WAIT_MS)
        before = after
    assert sum(r.controller_id == active.node_id for r in _registrations_in_log(cluster)) == 2


def test_below_3_7_nothing_registers_until_metadata_version_is_raised() -> None:
    """At 3.6-IV2 no controller sends a registration and no image lists one; raised to
    3.7-IV0, every controller registers."""
    cluster = _cluster(35, level=LEVELS["3.6-IV2"])
    cluster.sim.run_for(5_000)
    assert all(not image.controllers for image in _images(cluster).values())
    assert not _registrations_in_log(cluster)
    assert all(_manager(cluster, n).successful_rpcs + _manager(cluster, n).failed_rpcs == 0
               and _manager(cluster, n).pending is None
               for n in cluster.config.controller_ids)
    handle = cluster.submit(UpdateFeatures((FeatureUpdate("metadata.version",
                                                          LEVELS["3.7-IV0"]),)))
    assert cluster.wait(handle) and handle.error is None
    expected = _current(cluster)
    assert cluster.run_until(lambda: _everyone_sees(cluster, expected), WAIT_MS)


def test_a_registration_is_retried_across_a_leader_failover() -> None:
    """A restarted standby's request is out to the leader when the leader crashes: the
    standby sends it again to the new leader, which writes it."""
    cluster = _cluster(36)
    active = cluster.active_controller()
    assert active is not None
    standby = next(n for n in cluster.config.controller_ids if n != active.node_id)
    cluster.sim.crash(standby)
    cluster.sim.run_for(100)
    cluster.sim.restart(standby)

    def request_out() -> bool:
        manager = cluster.registration_manager(standby)
        return manager is not None and manager.pending is not None

    assert cluster.run_until(request_out, WAIT_MS)
    manager = _manager(cluster, standby)
    assert manager.pending is not None and manager.pending[1] == active.node_id
    cluster.sim.crash(active.node_id)
    assert cluster.run_until(lambda: manager.registered_in_log and manager.pending is None,
                             WAIT_MS)
    new_active = cluster.active_controller()
    assert new_active is not None and new_active.node_id != active.node_id
    assert manager.successful_rpcs == 1 and manager.channel.sends >= 2
    registered = new_active.committed_image().controllers[standby]
    assert registered.incarnation_id == manager.incarnation_id


def test_update_features_waits_for_every_quorum_member_to_register() -> None:
    """FeatureControlManager.reasonNotSupported: from 3.7-IV0 a quorum member with no
    registration refuses a feature change; once it has registered the change goes
    through."""
    cluster = _cluster(37, level=LEVELS["3.6-IV2"])
    active = cluster.active_controller()
    assert active is not None
    cut = next(n for n in cluster.config.controller_ids if n != active.node_id)
    cluster.sim.pause(cut)
    handle = cluster.submit(UpdateFeatures((FeatureUpdate("metadata.version",
                                                          LEVELS["3.7-IV0"]),)))
    assert cluster.wait(handle) and handle.error is None
    others = [n for n in cluster.config.controller_ids if n != cut]
    assert cluster.run_until(lambda: all(_manager(cluster, n).registered_in_log
                                         for n in others), WAIT_MS)
    upgrade = UpdateFeatures((FeatureUpdate("group.version", 1),))
    refused = cluster.submit(upgrade)
    assert cluster.wait(refused)
    assert refused.error is not None and refused.error.code == "INVALID_UPDATE_VERSION"
    assert f"controller {cut} has not registered, and may not support this feature" in \
        refused.error.message
    cluster.sim.resume(cut)
    assert cluster.run_until(lambda: _manager(cluster, cut).registered_in_log, WAIT_MS)
    assert cluster.run_until(cluster.idle, WAIT_MS)
    accepted = cluster.submit(upgrade)
    assert cluster.wait(accepted) and accepted.error is None, accepted.error
