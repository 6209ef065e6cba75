"""Edges of controller registration (KIP-919) that the ports leave open: the back-off's
cap and jitter as Kafka's ExponentialBackoff draws them, the registration channel's 5 s
request timeout, a manager that starts on an image already at 3.7-IV0, a manager going
idle once a retried registration is in the log, a closed manager, the listener a
controller registers, DescribeCluster at exactly 3.7-IV0, and the cluster's start-up wait
applying the manager's incarnation rule.
"""

from __future__ import annotations

import random

from controller.describe_cluster import (
    ControllerClusterDescription,
    DescribedController,
    describe_cluster_controllers,
)
from controller.operations.controllers import CONTROLLER_LISTENER, RegisterController
from controller.registration_manager import REGISTRATION_BACKOFF, ControllerRegistrationManager
from metadata.schema import BrokerEndpoint, RegisterControllerRecord
from metadata.versions import LEVELS
from sim.cluster import ClusterConfig, KRaftCluster
from tests.controller.kafka_cases import image_of
from tests.controller.test_kafka_controller_registration_manager_cases import (
    _answer,
    _Controller,
    _manager,
    _registration,
    _requests,
    _stats,
    _update,
)


class _Fixed(random.Random):
    """A stream whose every draw is ``value`` (the jitter's two ends)."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


LOW, HIGH = _Fixed(0.0), _Fixed(0.999_999)


def test_backoff_jitter_spans_two_percent_either_side() -> None:
    """The first back-off is drawn from 98 ms up to (not including) 102 ms."""
    assert REGISTRATION_BACKOFF.backoff(0, LOW) == 98
    assert REGISTRATION_BACKOFF.backoff(0, HIGH) == 101
    assert REGISTRATION_BACKOFF.backoff(3, HIGH) == 815  # 800 ms nominal


def test_backoff_is_capped_at_two_minutes_after_the_jitter() -> None:
    """Kafka's ExponentialBackoff caps the jittered value: a long run of failures waits
    at most 120 s, and at least 2% less."""
    for failures in (11, 12, 40):
        assert REGISTRATION_BACKOFF.backoff(failures, HIGH) == 120_000
        assert REGISTRATION_BACKOFF.backoff(failures, LOW) == 117_600


def test_a_request_is_given_up_after_five_seconds() -> None:
    """Kafka's registration channel times a request out after 5000 ms: unanswered at
    4999 ms it is still out; at 5000 ms it counts as a failure and a retry is due."""
    manager, controller = _manager()
    controller.publish(_update("3.7-IV0", manager, None))
    assert len(_requests(manager)) == 1
    assert manager.next_deadline() == 5_000
    manager.poll(4_999)
    assert _stats(manager) == (True, 0, 0)
    manager.poll(5_000)
    assert _stats(manager) == (False, 0, 1)
    retry = manager.next_deadline()
    assert retry is not None and 5_098 <= retry <= 5_102


def test_a_manager_started_on_a_3_7_image_registers_at_once() -> None:
    """As Kafka's loader hands a newly installed publisher the current image, a manager
    created on a controller whose image is already at 3.7-IV0 sends its registration
    without waiting for another publication."""
    controller = _Controller()
    controller.raft.leader_id = 3
    controller.image = _update("3.7-IV0", None, None)  # type: ignore[arg-type]
    manager = ControllerRegistrationManager(controller, random.Random(5))  # type: ignore[arg-type]
    [request] = _requests(manager)
    assert request.dst == 3 and _stats(manager) == (True, 0, 0)


def test_after_a_retried_registration_the_manager_goes_idle() -> None:
    """A registration that needed a retry leaves no timer once the log holds it, and a
    later registration of another incarnation is answered by a new request at once."""
    manager, controller = _manager()
    image = _update("3.7-IV0", manager, None)
    controller.publish(image)
    [first] = _requests(manager)
    _answer(manager, first, "UNKNOWN_SERVER_ERROR")
    retry = manager.next_deadline()
    assert retry is not None
    manager.poll(retry)
    [second] = _requests(manager)
    _answer(manager, second, "NONE", retry)
    controller.publish(_update("3.7-IV0", manager, manager.incarnation_id, image))
    assert manager.registered_in_log
    assert manager.next_deadline() is None
    controller.publish(image_of([_registration(1, "AAAAAAAAAAAAAAAAAAAByA")],
                                controller.image))
    assert not manager.registered_in_log
    assert len(_requests(manager)) == 1 and _stats(manager) == (True, 1, 0)


def test_a_closed_manager_sends_nothing_and_has_no_timer() -> None:
    """Closing drops an unsent request and the request out; closing after a failure drops
    the retry: nothing is sent at the retry time."""
    manager, controller = _manager()
    controller.publish(_update("3.7-IV0", manager, None))
    manager.close(0)
    assert manager.drain_outbox() == [] and manager.next_deadline() is None

    manager, controller = _manager(leader=None)
    controller.publish(_update("3.7-IV0", manager, None))
    assert manager.next_deadline() == 100 and manager.pending is not None  # waits to look
    manager.close(0)
    assert manager.next_deadline() is None
    controller.raft.leader_id = 3
    manager.poll(100)
    assert manager.drain_outbox() == []

    manager, controller = _manager()
    controller.publish(_update("3.7-IV0", manager, None))
    [first] = _requests(manager)
    _answer(manager, first, "UNKNOWN_SERVER_ERROR")
    retry = manager.next_deadline()
    assert retry is not None and manager.pending is None
    manager.close(0)
    assert manager.next_deadline() is None
    manager.poll(retry)
    assert manager.drain_outbox() == []


def test_controllers_register_the_controller_listener_on_port_9093() -> None:
    """Each controller registers one PLAINTEXT listener, CONTROLLER on localhost:9093,
    and DescribeCluster to a controller lists each at that address."""
    cluster = KRaftCluster(ClusterConfig(seed=41, controllers=3, brokers=0))
    assert cluster.start()
    active = cluster.active_controller()
    assert active is not None
    listener = BrokerEndpoint("CONTROLLER", "localhost", 9093, 0)
    records = [r for b in active.raft.log.batches for r in b.records
               if isinstance(r, RegisterControllerRecord)]
    assert sorted(r.controller_id for r in records) == [3000, 3001, 3002]
    assert all(r.end_points == (listener,) for r in records)
    answer = describe_cluster_controllers(active.committed_image(), active.node_id)
    assert answer.controllers == tuple(DescribedController(n, "localhost", 9093)
                                       for n in (3000, 3001, 3002))


def test_describe_cluster_is_answered_at_exactly_3_7_iv0() -> None:
    """3.7-IV0 is the first metadata.version a controller answers DescribeCluster at."""
    image = _update("3.7-IV0", None, None)  # type: ignore[arg-type]
    assert image.metadata_version == LEVELS["3.7-IV0"]
    answer = describe_cluster_controllers(image, None)
    assert answer.controllers == tuple(DescribedController(n, CONTROLLER_LISTENER.host,
                                                           CONTROLLER_LISTENER.port)
                                       for n in (2, 3))
    assert answer.controller_id == -1
    assert describe_cluster_controllers(image, 2).controller_id == 2


def test_describe_cluster_names_no_leader_that_is_not_listed() -> None:
    """Kafka's AuthHelper.computeDescribeClusterResponse: a leader the answer does not
    list (not registered yet, or without the request's listener) is named as -1."""
    image = _update("3.7-IV0", None, None)  # type: ignore[arg-type]  # 2 and 3 registered
    assert describe_cluster_controllers(image, 1).controller_id == -1
    assert describe_cluster_controllers(image, 3).controller_id == 3
    assert describe_cluster_controllers(image, 3, "CONTROLLER_SSL") == \
        ControllerClusterDescription((), -1)


def test_register_controller_is_described_by_its_id() -> None:
    """The operation's handle (and the trace) names it with the controller's id."""
    assert RegisterController(3001, "AAAAAAAAAAAAAAAAAAAAAg").describe() == \
        "RegisterController(3001)"


def test_the_cluster_counts_a_registration_by_its_incarnation_id_as_the_manager_does() -> None:
    """A registration of a controller's own incarnation with another listener (written by
    hand) still counts for start-up's wait, as it does for the manager, which sends
    nothing more; one of another incarnation does not, until the manager re-registers."""
    cluster = KRaftCluster(ClusterConfig(seed=41, controllers=3, brokers=1))
    assert cluster.start() and cluster.controllers_registered()
    manager = cluster.registration_manager(3001)
    assert manager is not None
    other = BrokerEndpoint("CONTROLLER", "localhost", 19093, 0)
    handle = cluster.submit(RegisterController(3001, manager.incarnation_id, (other,)))
    assert cluster.wait(handle) and handle.error is None
    assert cluster.run_until(cluster.idle, 10_000)
    active = cluster.active_controller()
    assert active is not None
    assert active.committed_image().controllers[3001].endpoints == (other,)
    assert manager.registered_in_log and manager.next_deadline() is None
    assert cluster.controllers_registered()

    handle = cluster.submit(RegisterController(3001, "AAAAAAAAAAAAAAAAAAAByA"))
    assert cluster.wait(handle) and handle.error is None
    assert not cluster.controllers_registered()
    assert cluster.run_until(cluster.controllers_registered, 10_000)
    assert active.committed_image().controllers[3001] == manager.registration
