"""``describe-cluster``: DescribeCluster sent to a controller (KIP-919) or a broker from the
shell, with its errors, its JSON, and ``run-until idle`` waiting for a restarted
controller's re-registration."""

from __future__ import annotations

import json
from collections.abc import Callable

from controller import ControllerConfig
from metadata.versions import LEVELS
from shell.lab import Lab
from sim.cluster import ClusterConfig
from sim.save import cluster_id
from tests.shell.shell_recorder import Recorder

Shell = Callable[..., Recorder]
CLUSTER = "cluster controllers=3 brokers=2 seed=12"
USAGE = "usage: describe-cluster bootstrap-server=BROKER | bootstrap-controller=CONTROLLER"


def _lab(rec: Recorder) -> Lab:
    lab = rec.session.lab
    assert lab is not None
    return lab


def _lab_at(rec: Recorder, version: str) -> Lab:
    """A started lab cluster (3 controllers, 1 broker) bootstrapped at metadata.version
    ``version``, made the shell's lab."""
    lab = Lab(ClusterConfig(seed=12, controllers=3, brokers=1, controller=ControllerConfig(
        bootstrap_metadata_version=LEVELS[version])))
    assert lab.cluster.start()
    rec.session.lab = lab
    return lab


def _incarnation(lab: Lab, node_id: int) -> str:
    manager = lab.cluster.registration_manager(node_id)
    assert manager is not None
    return manager.incarnation_id


def _restarted(rec: Recorder, node_id: int) -> tuple[Lab, str, str]:
    """The lab cluster started, then controller ``node_id`` crashed and restarted: (the lab,
    the incarnation id before, the one after)."""
    rec.run(CLUSTER)
    lab = _lab(rec)
    before = _incarnation(lab, node_id)
    rec.run(f"crash {node_id}", f"restart {node_id}")
    return lab, before, _incarnation(lab, node_id)


def _registered(lab: Lab, node_id: int) -> str:
    active = lab.cluster.active_controller()
    assert active is not None
    return active.committed_image().controllers[node_id].incarnation_id


def test_a_controller_lists_the_registered_controllers_and_the_leader(shell: Shell) -> None:
    rec = shell()
    rec.run(CLUSTER, "run-until idle")
    leader = _lab(rec).cluster.sim.leader_id()
    out = rec.run("describe-cluster bootstrap-controller=3001")
    assert out == [
        "DescribeCluster answered by controller 3001 (endpoint type CONTROLLER, listener "
        "CONTROLLER):",
        f"cluster id: {cluster_id(12)}",
        f"controller id: {leader} (the active controller as controller 3001 knows it; -1: "
        f"none known, or not registered)",
        "registered controllers: 3",
        "  id    endpoint",
        "  3000  CONTROLLER://localhost:9093",
        "  3001  CONTROLLER://localhost:9093",
        "  3002  CONTROLLER://localhost:9093",
    ]
    assert rec.run("describe-cluster bootstrap-controller=leader")[0].startswith(
        f"DescribeCluster answered by controller {leader} ")


def test_a_broker_lists_the_alive_brokers_and_names_one_as_controller(shell: Shell) -> None:
    rec = shell()
    rec.run(CLUSTER, "run-until idle")
    out = rec.run("describe-cluster bootstrap-server=1")
    assert out[:2] == ["DescribeCluster answered by broker 1 (endpoint type BROKER, listener "
                       "PLAINTEXT):", f"cluster id: {cluster_id(12)}"]
    named = int(out[2].split()[2])
    assert named in (0, 1)
    assert out[3:] == ["alive brokers: 2", "  id  endpoint                    rack",
                       "  0   PLAINTEXT://localhost:9092  -",
                       "  1   PLAINTEXT://localhost:9092  -"]
    assert rec.session.exit_code == 0


def test_json_carries_kafkas_describe_cluster_response_fields(shell: Shell) -> None:
    rec = shell("json")
    rec.run(CLUSTER, "run-until idle")
    leader = _lab(rec).cluster.sim.leader_id()
    [controllers] = rec.run("describe-cluster bootstrap-controller=3002")
    assert json.loads(controllers) == {
        "errorCode": 0, "errorMessage": None, "endpointType": 2, "clusterId": cluster_id(12),
        "controllerId": leader,
        "brokers": [{"brokerId": n, "host": "localhost", "port": 9093, "rack": None}
                    for n in (3000, 3001, 3002)]}
    [brokers] = rec.run("describe-cluster bootstrap-server=0")
    answer = json.loads(brokers)
    assert answer["endpointType"] == 1 and answer["controllerId"] in (0, 1)
    assert [b["brokerId"] for b in answer["brokers"]] == [0, 1]
    assert answer["brokers"][0] == {"brokerId": 0, "host": "localhost", "port": 9092,
                                    "rack": None}


def test_bad_input_is_one_clear_error(shell: Shell) -> None:
    rec = shell()
    assert rec.run("describe-cluster bootstrap-controller=3000") == [
        "ERR describe-cluster: there is no simulation yet: start one with 'cluster' (see man "
        "cluster), or run 'kraftsim shell --demo'"]
    rec.run(CLUSTER)
    assert rec.run("describe-cluster", "describe-cluster bootstrap-server=0 "
                   "bootstrap-controller=3000") == [
        f"ERR describe-cluster: give one of bootstrap-server=BROKER or "
        f"bootstrap-controller=CONTROLLER ({given} given; {USAGE})"
        for given in ("neither", "both")]
    assert rec.run("describe-cluster bootstrap-controller=9",
                   "describe-cluster bootstrap-server=x",
                   "describe-cluster bootstrap-controller=",
                   "describe-cluster 3000",
                   "describe-cluster bootstrap-controler=3000") == [
        "ERR describe-cluster: no node 9; the nodes are 0, 1, 3000, 3001, 3002",
        "ERR describe-cluster: 'x' is not a node: give a node id (0, 1, 3000, 3001, 3002) "
        "or 'leader'",
        f"ERR describe-cluster: bootstrap-controller= needs a node id or 'leader' ({USAGE})",
        f"ERR describe-cluster: unexpected argument '3000' ({USAGE})",
        "ERR describe-cluster: unknown option 'bootstrap-controler' (did you mean "
        "bootstrap-controller=?)"]


def test_an_endpoint_of_the_other_type_answers_mismatched_endpoint_type(shell: Shell) -> None:
    """Kafka's AuthHelper: a request for controllers sent to a broker, or for brokers sent
    to a controller, is answered MISMATCHED_ENDPOINT_TYPE."""
    rec = shell()
    rec.run(CLUSTER)
    assert rec.run("describe-cluster bootstrap-controller=0",
                   "describe-cluster bootstrap-server=3000") == [
        "ERR describe-cluster: MISMATCHED_ENDPOINT_TYPE: The request was sent to an endpoint "
        "of type BROKER, but we wanted an endpoint of type CONTROLLER",
        "ERR describe-cluster: MISMATCHED_ENDPOINT_TYPE: The request was sent to an endpoint "
        "of type CONTROLLER, but we wanted an endpoint of type BROKER"]


def test_a_node_that_is_down_answers_nothing(shell: Shell) -> None:
    rec = shell()
    rec.run(CLUSTER, "crash 3001", "crash 1")
    assert rec.run("describe-cluster bootstrap-controller=3001",
                   "describe-cluster bootstrap-server=1") == [
        "ERR describe-cluster: controller 3001 is crashed: it answers no request (restart "
        "3001, or ask another node)",
        "ERR describe-cluster: broker 1 is crashed: it answers no request (restart 1, or ask "
        "another node)"]


def test_below_3_7_iv0_a_controller_answers_unsupported_version(shell: Shell) -> None:
    """testDirectToControllerCommunicationFailsOnOlderMetadataVersion's error, in Kafka's
    words; a broker still answers."""
    rec = shell()
    _lab_at(rec, "3.6-IV2")
    assert rec.run("describe-cluster bootstrap-controller=3000") == [
        "ERR describe-cluster: UNSUPPORTED_VERSION: Direct-to-controller communication is not "
        "supported with the current MetadataVersion. (controller 3000's committed image is at "
        "metadata.version 3.6-IV2; controllers answer from 3.7-IV0)"]
    rec.run("run-until idle")
    assert rec.run("describe-cluster bootstrap-server=0")[3] == "alive brokers: 1"


def test_a_restarted_controller_answers_unsupported_version_until_it_catches_up(
        shell: Shell) -> None:
    """A controller that has learnt of no committed record since it restarted has an empty
    image, below 3.7-IV0, as a Kafka controller before its first publication."""
    rec = shell()
    rec.run(CLUSTER, "crash 3001", "restart 3001")
    [error] = rec.run("describe-cluster bootstrap-controller=3001")
    assert error.startswith("ERR describe-cluster: UNSUPPORTED_VERSION: ")
    assert error.endswith("(controller 3001's committed image is still empty: since it "
                          "started it has learnt of no committed record; controllers answer "
                          "from 3.7-IV0)")
    rec.run("run-until idle")
    assert rec.run("describe-cluster bootstrap-controller=3001")[3] == \
        "registered controllers: 3"


def test_a_controller_not_registered_yet_is_noted(shell: Shell) -> None:
    """Between a restarted controller's catching up and its registration's commit, the
    answer still lists its earlier process: the shell says so."""
    rec = shell()
    lab, before, after = _restarted(rec, 3001)
    assert after != before
    controller = lab.cluster.controller(3002)
    assert controller is not None
    assert lab.run_until(lambda: controller.committed_image().metadata_version
                         >= LEVELS["3.7-IV0"] and lab.cluster.idle(), 10_000)
    assert _registered(lab, 3001) == before
    out = rec.run("describe-cluster bootstrap-controller=3002")
    assert out[-1] == (f"note: controller 3001 has not registered its current process "
                       f"(incarnation {after}) in the image of controller 3002 yet: it is "
                       f"listed by an earlier process's registration (incarnation {before})")
    rec.run("run-until idle")
    assert not any(line.startswith("note:")
                   for line in rec.run("describe-cluster bootstrap-controller=3002"))


def test_run_until_idle_waits_for_a_restarted_controllers_registration(shell: Shell) -> None:
    """The cluster's own idle test is met before the new incarnation's registration is
    committed; ``run-until idle`` goes on until it is, so the image then shows it."""
    rec = shell()
    lab, before, after = _restarted(rec, 3001)
    assert lab.run_until(lab.cluster.idle, 10_000)
    assert lab.unregistered_controller() == (3001, before)
    assert not lab.idle()
    assert lab.why_not_idle() == (
        f"controller 3001 has not registered incarnation {after} yet: the active controller's "
        f"committed image holds an earlier process's registration (incarnation {before}) "
        f"(KIP-919)")
    [line] = rec.run("run-until idle")
    assert line.endswith("idle; controller 3000 leads epoch 1")
    assert _registered(lab, 3001) == after
    for node in ("0", "1", "3000", "3002"):
        rec.run(f"view {node}")
        [shown] = rec.run("cat /image/cluster/controllers/3001")
        assert f"incarnationId={after}," in shown


def test_run_until_idle_timing_out_names_the_unregistered_controller(shell: Shell) -> None:
    rec = shell()
    rec.run(CLUSTER, "crash 3001", "restart 3001")
    lab = _lab(rec)
    assert lab.run_until(lab.cluster.idle, 10_000)
    [error] = rec.run("run-until idle timeout=0")
    assert error.startswith(f"ERR run-until: timed out after 0 ms (now {lab.now} ms): "
                            f"controller 3001 has not registered incarnation "
                            f"{_incarnation(lab, 3001)} yet")


def test_idle_does_not_wait_for_a_controller_cut_off_nor_below_3_7_iv0(shell: Shell) -> None:
    """A controller the active one cannot reach cannot register: idle does not wait for it
    (as the cluster's idle test does not wait for it to catch up), and waits again once
    the network heals. Below 3.7-IV0 nothing registers and idle waits for nothing."""
    rec = shell()
    rec.run(CLUSTER, "crash 3002", "partition 3002", "restart 3002")
    lab = _lab(rec)
    before = _registered(lab, 3002)
    assert rec.run("run-until idle")[0].endswith("idle; controller 3000 leads epoch 1")
    assert _registered(lab, 3002) == before != _incarnation(lab, 3002)
    rec.run("heal", "run-until idle")
    assert _registered(lab, 3002) == _incarnation(lab, 3002)

    old = _lab_at(rec, "3.6-IV2")
    rec.run("crash 3001", "restart 3001")
    assert rec.run("run-until idle")[0].endswith("idle; controller 3000 leads epoch 1")
    assert old.unregistered_controller() is None
    active = old.cluster.active_controller()
    assert active is not None and len(active.committed_image().controllers) == 0


def test_help_and_man_list_describe_cluster(shell: Shell) -> None:
    rec = shell()
    assert any(line.split()[:1] == ["describe-cluster"] for line in rec.run("help"))
    page = rec.run("man describe-cluster")
    assert page[1] == "    describe-cluster - send DescribeCluster to a broker or a controller"
    assert any("MISMATCHED_ENDPOINT_TYPE" in line for line in page)


def test_at_exactly_3_7_iv0_run_until_idle_waits_for_a_restarted_controllers_registration(
        shell: Shell) -> None:
    """3.7-IV0 is the first metadata.version at which controllers register (KIP-919): at
    that level too, idle waits for the new incarnation's registration."""
    rec = shell()
    lab = _lab_at(rec, "3.7-IV0")
    rec.run("run-until idle")
    before = _registered(lab, 3001)
    rec.run("crash 3001", "restart 3001")
    assert lab.run_until(lab.cluster.idle, 10_000)
    assert lab.unregistered_controller() == (3001, before)
    assert rec.run("run-until idle")[0].endswith("idle; controller 3000 leads epoch 1")
    assert _registered(lab, 3001) == _incarnation(lab, 3001) != before


def test_idle_does_not_wait_for_a_controller_the_active_one_reaches_one_way_only(
        shell: Shell) -> None:
    """A restarted controller whose link to the active controller is cut one way cannot
    fetch (nor register): like the cluster's idle test, ``run-until idle`` counts only
    controllers reachable both ways, and waits for it again once the link heals."""
    rec = shell()
    rec.run(CLUSTER, "run-until idle")
    lab = _lab(rec)
    before = _registered(lab, 3002)
    rec.run("crash 3002")
    lab.cluster.sim.network.block(3002, 3000)
    rec.run("restart 3002")
    assert rec.run("run-until idle")[0].endswith("idle; controller 3000 leads epoch 1")
    assert _registered(lab, 3002) == before != _incarnation(lab, 3002)
    rec.run("heal", "run-until idle")
    assert _registered(lab, 3002) == _incarnation(lab, 3002)
