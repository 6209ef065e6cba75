"""``describe-cluster``: Kafka's DescribeCluster, sent to one node of the lab.

As an admin client does for ``kafka-cluster.sh cluster-id`` (or
``kafka-metadata-quorum.sh``), the request goes to the node the user names, either as a
broker (``bootstrap-server=``, endpoint type BROKER) or as a controller
(``bootstrap-controller=``, endpoint type CONTROLLER, KIP-919); exactly one is given, as
those tools' mutually exclusive ``--bootstrap-server`` / ``--bootstrap-controller``.

A broker answers from the image its loader published
(:func:`broker.metadata_cache.describe_cluster`): the alive brokers and, as the controller
id, a random alive broker (KIP-590). A controller answers from its committed image
(:func:`controller.describe_cluster.describe_cluster_controllers`): the registered
controllers and the raft leader it knows, or UNSUPPORTED_VERSION below metadata.version
3.7-IV0. A request of one endpoint type sent to a node of the other gets Kafka's
MISMATCHED_ENDPOINT_TYPE answer. The cluster id is the one the lab's nodes would carry
in meta.properties (:meth:`shell.lab.Lab.cluster_id`).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from broker.metadata_cache import DEFAULT_LISTENER, describe_cluster
from controller.describe_cluster import describe_cluster_controllers
from controller.errors import ApiError
from controller.operations.controllers import CONTROLLER_LISTENER
from controller.registration_manager import is_own_registration
from metadata.versions import release_name
from shell.commands.base import Command, parse_args
from shell.errors import CommandError
from shell.formatting import table, to_json
from shell.lab import Lab
from sim.world import NodeStatus

if TYPE_CHECKING:
    from shell.session import Session

BROKER_ENDPOINT, CONTROLLER_ENDPOINT = 1, 2
"""DescribeCluster's EndpointType values (Kafka's ``EndpointType``: 1=brokers,
2=controllers)."""
_TYPE_NAMES = {BROKER_ENDPOINT: "BROKER", CONTROLLER_ENDPOINT: "CONTROLLER"}
_OPTIONS = {"bootstrap-server": lambda key, text: text,
            "bootstrap-controller": lambda key, text: text}


def _mismatched(node_type: int, wanted: int) -> CommandError:
    """Kafka's answer to a request sent to an endpoint of the other type."""
    return CommandError(f"MISMATCHED_ENDPOINT_TYPE: The request was sent to an endpoint of "
                        f"type {_TYPE_NAMES[node_type]}, but we wanted an endpoint of type "
                        f"{_TYPE_NAMES[wanted]}")


def _target(args: list[str], lab: Lab) -> tuple[int, int]:
    """(endpoint type asked for, node id) from the options; CommandError on bad input."""
    _, options = parse_args(DESCRIBE_CLUSTER, args, options=_OPTIONS)
    if len(options) != 1:
        given = "both" if options else "neither"
        raise CommandError(f"give one of bootstrap-server=BROKER or "
                           f"bootstrap-controller=CONTROLLER ({given} given; "
                           f"{DESCRIBE_CLUSTER.usage()})")
    [(key, text)] = options.items()
    if not text:
        raise CommandError(f"{key}= needs a node id or 'leader' ({DESCRIBE_CLUSTER.usage()})")
    node_id = lab.resolve(text)
    status = lab.status_of(node_id)
    if status is not NodeStatus.RUNNING:
        raise CommandError(f"{lab.node_name(node_id)} is {status.value}: it answers no "
                           f"request (restart {node_id}, or ask another node)")
    wanted = CONTROLLER_ENDPOINT if key == "bootstrap-controller" else BROKER_ENDPOINT
    is_controller = node_id in lab.config.controller_ids
    if is_controller != (wanted == CONTROLLER_ENDPOINT):
        raise _mismatched(CONTROLLER_ENDPOINT if is_controller else BROKER_ENDPOINT, wanted)
    return wanted, node_id


def _controller_answer(lab: Lab, node_id: int) -> tuple[int, list[dict[str, Any]]]:
    """(controller id, described controllers) of controller ``node_id``'s answer."""
    controller = lab.cluster.controller(node_id)
    if controller is None:
        raise CommandError(f"{lab.node_name(node_id)} runs no controller")
    if controller.fault is not None:
        raise CommandError(f"{lab.node_name(node_id)} stopped on a fault: {controller.fault}")
    image = controller.committed_image()
    try:
        answer = describe_cluster_controllers(image, controller.raft.leader_id)
    except ApiError as exc:
        version = f"is at metadata.version {release_name(image.metadata_version)}"
        if image.offset < 0:
            version = "is still empty: since it started it has learnt of no committed " \
                      "record"
        raise CommandError(f"{exc.code}: {exc.message} ({lab.node_name(node_id)}'s "
                           f"committed image {version}; controllers answer from 3.7-IV0)"
                           ) from None
    return answer.controller_id, [
        {"brokerId": c.controller_id, "host": c.host, "port": c.port, "rack": None}
        for c in answer.controllers]


def _broker_answer(lab: Lab, node_id: int) -> tuple[int, list[dict[str, Any]]]:
    """(controller id, described brokers) of broker ``node_id``'s answer."""
    loader = lab.cluster.loader(node_id)
    if loader is None:
        raise CommandError(f"{lab.node_name(node_id)} runs no metadata loader")
    if loader.published is None:
        raise CommandError(f"{lab.node_name(node_id)} has published no image yet: it "
                           f"answers no client request (try: run-until idle)")
    # the broker's own draw of a random alive broker: seeded by the run, the node and the
    # time, so that asking leaves the simulation's random streams untouched
    rng = random.Random(f"describe-cluster {lab.config.seed} {node_id} {lab.now}")
    answer = describe_cluster(loader.published, rng)
    return answer.controller_id, [
        {"brokerId": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack}
        for b in answer.brokers]


def _unregistered_notes(lab: Lab, node_id: int) -> list[str]:
    """Running controllers whose current process is not registered in the image controller
    ``node_id`` answered from (its answer lists an earlier process, or nothing)."""
    controller = lab.cluster.controller(node_id)
    assert controller is not None
    registered = controller.committed_image().controllers
    notes = []
    for other in lab.config.controller_ids:
        manager = lab.cluster.registration_manager(other)
        if manager is None:
            continue
        held = registered.get(other)
        if is_own_registration(held, manager.incarnation_id):
            continue
        what = "is missing from the answer" if held is None else \
            f"is listed by an earlier process's registration (incarnation " \
            f"{held.incarnation_id})"
        notes.append(f"note: controller {other} has not registered its current process "
                     f"(incarnation {manager.incarnation_id}) in the image of controller "
                     f"{node_id} yet: it {what}")
    return notes


def run_describe_cluster(session: Session, args: list[str]) -> None:
    """``describe-cluster bootstrap-server=BROKER | bootstrap-controller=CONTROLLER``."""
    lab = session.require_lab()
    endpoint_type, node_id = _target(args, lab)
    if endpoint_type == CONTROLLER_ENDPOINT:
        controller_id, nodes = _controller_answer(lab, node_id)
        listener = CONTROLLER_LISTENER.name
    else:
        controller_id, nodes = _broker_answer(lab, node_id)
        listener = DEFAULT_LISTENER
    if session.format == "json":
        session.out(to_json({"errorCode": 0, "errorMessage": None,
                             "endpointType": endpoint_type, "clusterId": lab.cluster_id,
                             "controllerId": controller_id, "brokers": nodes}))
        return
    kind = _TYPE_NAMES[endpoint_type]
    session.out(f"DescribeCluster answered by {lab.node_name(node_id)} (endpoint type "
                f"{kind}, listener {listener}):")
    session.out(f"cluster id: {lab.cluster_id}")
    if endpoint_type == CONTROLLER_ENDPOINT:
        session.out(f"controller id: {controller_id} (the active controller as controller "
                    f"{node_id} knows it; -1: none known, or not registered)")
        session.out(f"registered controllers: {len(nodes)}")
        for line in table(("id", "endpoint"),
                          [(n["brokerId"], f"{listener}://{n['host']}:{n['port']}")
                           for n in nodes]):
            session.out(f"  {line}")
        for note in _unregistered_notes(lab, node_id):
            session.out(note)
        return
    session.out(f"controller id: {controller_id} (a random alive broker, as a KRaft broker "
                f"answers: clients never reach the controllers through it, KIP-590)")
    session.out(f"alive brokers: {len(nodes)}")
    for line in table(("id", "endpoint", "rack"),
                      [(n["brokerId"], f"{listener}://{n['host']}:{n['port']}",
                        n["rack"] if n["rack"] is not None else "-") for n in nodes]):
        session.out(f"  {line}")


DESCRIBE_CLUSTER = Command(
    "describe-cluster",
    "describe-cluster bootstrap-server=BROKER | bootstrap-controller=CONTROLLER",
    "send DescribeCluster to a broker or a controller",
    "Sends Kafka's DescribeCluster request to one node, as an admin client bootstrapped "
    "from it does (kafka-cluster.sh cluster-id --bootstrap-server / --bootstrap-controller), "
    "and prints the answer: the cluster id and the controller id, then\n\n"
    "bootstrap-controller=CONTROLLER  (KIP-919, metadata.version 3.7-IV0 or later) the "
    "controllers registered in that controller's committed image, each with its endpoint on "
    "the CONTROLLER listener; the controller id is the raft leader it knows (-1 when it "
    "knows none or the leader is not registered). A running controller whose current "
    "process has not registered yet (e.g. just restarted) is noted. Below 3.7-IV0 the "
    "controller answers UNSUPPORTED_VERSION.\n"
    "bootstrap-server=BROKER  the alive (registered, unfenced) brokers in that broker's "
    "published image, each with its PLAINTEXT endpoint and rack; the controller id is a "
    "random alive broker (KIP-590: KRaft clients never talk to the controllers through a "
    "broker).\n\n"
    "Give exactly one of the two; NODE may be 'leader'. A node that is down answers "
    "nothing; a request for one endpoint type sent to a node of the other gets "
    "MISMATCHED_ENDPOINT_TYPE. With --format json: Kafka's DescribeClusterResponse fields "
    "(endpointType 1=brokers, 2=controllers; clusterId, controllerId, and the nodes under "
    "brokers with brokerId, host, port, rack).\n\n"
    "Examples: describe-cluster bootstrap-controller=3001; describe-cluster "
    "bootstrap-server=0",
    run_describe_cluster, options=tuple(_OPTIONS))
"""The ``describe-cluster`` command."""

DESCRIBE_COMMANDS = (DESCRIBE_CLUSTER,)
"""Commands that send a describe request to one node."""
