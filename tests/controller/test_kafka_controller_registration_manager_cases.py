"""Kafka's ControllerRegistrationManagerTest (core/src/test/scala/unit/kafka/server/),
against kraftsim's :class:`controller.registration_manager.ControllerRegistrationManager`.

Kafka's test drives the manager with hand-made metadata updates and a mock channel to
the active controller, and reads (pendingRpc, successfulRpcs, failedRpcs) and
registeredInLog. Here the manager sits on a stand-in controller whose published image a
test sets (the manager looks at it at each publication, as Kafka's publisher at each
update); a request is what the manager puts in its outbox, and an answer is delivered to
it as a message. Kafka's (pendingRpc, successfulRpcs, failedRpcs) are
(``pending is not None``, ``successful_rpcs``, ``failed_rpcs``).

Ported: testCreateAndClose, testCreateStartAndClose (one case: the manager starts with
its node), testRegistration (both metadata.versions), testWrongIncarnationId,
testRetransmitRegistration. As in Kafka's doMetadataUpdate, the registration of this
controller that the image gets is RecordTestUtils.createTestControllerRegistration's: its
incarnation id with two listeners (CONTROLLER and CONTROLLER_SSL on other ports) and a
metadata.version range up to 3.6-IV1, none of them what the manager registers; the
incarnation id alone makes it this process's. Also here, kraftsim's own: the incarnation
rule spelt out both ways, the back-off schedule, a request unanswered within the timeout,
and the controller channel's part (kraftsim's
:class:`~metadata.controller_channel.ControllerChannel`, Kafka's
NodeToControllerRequestThread with the registration channel's 5 s retry timeout): a
request made with no leader known waits for the channel's 100 ms looks, and fails only at
the retry timeout; NOT_CONTROLLER is resent by the channel (50 ms later to the same node);
a leader change while a request is out.

Not ported: none (every test method of the class is ported).
"""

from __future__ import annotations

import random
from typing import cast

import pytest

from controller.operations.controllers import CONTROLLER_FEATURES, CONTROLLER_LISTENER
from controller.quorum_controller import QuorumController
from controller.registration_manager import (
    REGISTRATION_BACKOFF,
    REQUEST_TIMEOUT_MS,
    ControllerRegistrationManager,
)
from metadata.image import MetadataImage
from metadata.requests import (
    ControllerRegistrationRequest,
    ControllerRegistrationResponse,
    NodeMessage,
)
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    FeatureLevelRecord,
    RegisterControllerRecord,
)
from metadata.versions import LEVELS, MINIMUM_KRAFT
from tests.controller.kafka_cases import image_of

NODE = 1
LEADER = 3


class _Raft:
    leader_id: int | None = None


class _Controller:
    """What the manager uses of its QuorumController: an image a test publishes."""

    def __init__(self) -> None:
        self.node_id = NODE
        self.publishers: list[ControllerRegistrationManager] = []
        self.fault = None
        self.raft = _Raft()
        self.now = 0
        self.image = MetadataImage.EMPTY

    def committed_image(self) -> MetadataImage:
        return self.image

    def clock(self) -> int:
        return self.now

    def publish(self, image: MetadataImage) -> None:
        self.image = image
        for publisher in self.publishers:
            publisher.on_publish()


def _manager(leader: int | None = LEADER) -> tuple[ControllerRegistrationManager, _Controller]:
    controller = _Controller()
    controller.raft.leader_id = leader
    manager = ControllerRegistrationManager(cast(QuorumController, controller),
                                            random.Random(5))
    return manager, controller


def _stats(manager: ControllerRegistrationManager) -> tuple[bool, int, int]:
    return manager.pending is not None, manager.successful_rpcs, manager.failed_rpcs


def _registration(controller_id: int, incarnation: str) -> RegisterControllerRecord:
    return RegisterControllerRecord(controller_id=controller_id, incarnation_id=incarnation,
                                    end_points=(CONTROLLER_LISTENER,),
                                    features=CONTROLLER_FEATURES)


def _test_registration(controller_id: int, incarnation: str) -> RegisterControllerRecord:
    """Kafka's RecordTestUtils.createTestControllerRegistration with ``incarnation``: two
    listeners on ports 8000+id and 9000+id, metadata.version supported up to 3.6-IV1."""
    return RegisterControllerRecord(
        controller_id=controller_id, incarnation_id=incarnation,
        end_points=(BrokerEndpoint("CONTROLLER", "localhost", 8000 + controller_id, 0),
                    BrokerEndpoint("CONTROLLER_SSL", "localhost", 9000 + controller_id, 1)),
        features=(BrokerFeature("metadata.version", MINIMUM_KRAFT, LEVELS["3.6-IV1"]),))


def _update(level: str, manager: ControllerRegistrationManager, own: str | None,
            base: MetadataImage = MetadataImage.EMPTY) -> MetadataImage:
    """Kafka's doMetadataUpdate: metadata.version ``level``; controllers 2 and 3
    registered and, with ``own`` (an incarnation id), this one too, with Kafka's test
    registration's listeners and features (not the manager's)."""
    records: list[object] = [FeatureLevelRecord("metadata.version", LEVELS[level])]
    if LEVELS[level] >= LEVELS["3.7-IV0"]:
        records += [_registration(2, "AAAAAAAAAAAAAAAAAAAAAg"),
                    _registration(3, "AAAAAAAAAAAAAAAAAAAAAw")]
        if own is not None:
            records.append(_test_registration(NODE, own))
    return image_of(records, base)  # type: ignore[arg-type]


def _requests(manager: ControllerRegistrationManager) -> list[NodeMessage]:
    return [m for m in manager.drain_outbox()
            if isinstance(m.message, ControllerRegistrationRequest)]


def _answer(manager: ControllerRegistrationManager, request: NodeMessage, error: str,
            now: int = 0) -> None:
    manager.handle_message(NodeMessage(request.dst, NODE, ControllerRegistrationResponse(
        request.message.correlation_id, error)), now)


def test_create_and_close() -> None:
    """testCreateAndClose and testCreateStartAndClose: a new manager with no metadata has
    not registered and sent nothing; closed, it sends nothing."""
    manager, _ = _manager()
    assert not manager.registered_in_log
    assert _stats(manager) == (False, 0, 0)
    assert manager.next_deadline() is None
    manager.close(0)
    assert manager.drain_outbox() == []


@pytest.mark.parametrize("supported", [False, True])
def test_registration(supported: bool) -> None:
    """testRegistration: below 3.7-IV0 nothing is sent; at 3.7-IV0 with this controller
    missing from the image one request goes to the leader, and its acknowledgement alone
    does not count as registered: the image holding the registration does."""
    manager, controller = _manager()
    image = controller.image
    assert _stats(manager) == (False, 0, 0)
    image = _update("3.7-IV0" if supported else "3.6-IV0", manager, None)
    controller.publish(image)
    if not supported:
        assert not manager.registered_in_log
        assert _stats(manager) == (False, 0, 0)
        assert manager.drain_outbox() == []
        return
    assert _stats(manager) == (True, 0, 0)
    [request] = _requests(manager)
    assert request.dst == LEADER
    sent = request.message
    assert (sent.controller_id, sent.incarnation_id, sent.listeners, sent.features) == (
        NODE, manager.incarnation_id, (CONTROLLER_LISTENER,), CONTROLLER_FEATURES)
    _answer(manager, request, "NONE")
    assert _stats(manager) == (False, 1, 0)
    assert not manager.registered_in_log
    controller.publish(_update("3.7-IV0", manager, manager.incarnation_id, image))
    assert manager.registered_in_log
    assert manager.next_deadline() is None and manager.drain_outbox() == []


def test_wrong_incarnation_id() -> None:
    """testWrongIncarnationId: a registration of this id with another incarnation is not
    ours: a request goes out; after its acknowledgement, another wrong one sends again."""
    manager, controller = _manager()
    controller.publish(_update("3.7-IV0", manager, "AAAAAAAAAAAAAAAAAAAByA"))
    assert _stats(manager) == (True, 0, 0)
    [request] = _requests(manager)
    _answer(manager, request, "NONE")
    assert _stats(manager) == (False, 1, 0)
    controller.publish(_update("3.7-IV0", manager, "AAAAAAAAAAAAAAAAAAAByQ"))
    assert _stats(manager) == (True, 1, 0)
    assert len(_requests(manager)) == 1


def test_only_the_incarnation_id_decides_whether_the_registration_is_ours() -> None:
    """Kafka's MetadataUpdateEvent: this node's registration with this process's
    incarnation id but other listeners and features counts as registered (nothing is
    sent); one with this process's listeners and features but another incarnation id
    does not (a request goes out)."""
    manager, controller = _manager()
    other = image_of([FeatureLevelRecord("metadata.version", LEVELS["3.7-IV0"]),
                      _test_registration(NODE, manager.incarnation_id)])
    assert other.controllers[NODE] != manager.registration
    controller.publish(other)
    assert manager.registered_in_log
    assert _stats(manager) == (False, 0, 0) and manager.drain_outbox() == []
    assert manager.next_deadline() is None

    manager, controller = _manager()
    stale = image_of([FeatureLevelRecord("metadata.version", LEVELS["3.7-IV0"]),
                      _registration(NODE, "AAAAAAAAAAAAAAAAAAAByA")])
    assert stale.controllers[NODE].endpoints == manager.registration.endpoints
    assert stale.controllers[NODE].features == manager.registration.features
    controller.publish(stale)
    assert not manager.registered_in_log
    assert _stats(manager) == (True, 0, 0) and len(_requests(manager)) == 1


def test_retransmit_registration() -> None:
    """testRetransmitRegistration: an error answer (UNKNOWN_CONTROLLER_ID) is retried after
    the back-off; the second answer, NONE, leaves one success and no failure."""
    manager, controller = _manager()
    controller.publish(_update("3.7-IV0", manager, None))
    [first] = _requests(manager)
    _answer(manager, first, "UNKNOWN_CONTROLLER_ID")
    assert _stats(manager) == (False, 0, 1)
    retry = manager.next_deadline()
    assert retry is not None and 98 <= retry <= 102  # 100 ms, within 2%
    manager.poll(retry - 1)
    assert manager.drain_outbox() == []
    manager.poll(retry)
    [second] = _requests(manager)
    assert second.message.correlation_id != first.message.correlation_id
    _answer(manager, second, "NONE", retry)
    assert _stats(manager) == (False, 1, 0)


def test_backoff_doubles_up_to_its_maximum_within_two_percent() -> None:
    """Kafka's ExponentialBackoff(100, 2, 120000, 0.02) of the registration manager."""
    rng = random.Random(1)
    for failures, nominal in ((0, 100), (1, 200), (5, 3_200), (10, 102_400), (11, 120_000),
                              (40, 120_000)):
        drawn = REGISTRATION_BACKOFF.backoff(failures, rng)
        assert nominal * 0.98 <= drawn <= nominal * 1.02, (failures, drawn)


def test_unanswered_request_is_retried_after_the_timeout() -> None:
    """A request lost on the way (or its answer) is given up after the timeout and sent
    again after the back-off; a late answer to the old one is ignored."""
    manager, controller = _manager()
    controller.publish(_update("3.7-IV0", manager, None))
    [lost] = _requests(manager)
    assert manager.next_deadline() == REQUEST_TIMEOUT_MS
    manager.poll(REQUEST_TIMEOUT_MS)
    assert _stats(manager) == (False, 0, 1)
    retry = manager.next_deadline()
    assert retry is not None and retry > REQUEST_TIMEOUT_MS
    manager.poll(retry)
    [again] = _requests(manager)
    _answer(manager, lost, "NONE", retry)  # the old request's answer: not the one out
    assert _stats(manager) == (True, 0, 1)
    _answer(manager, again, "NONE", retry)
    assert _stats(manager) == (False, 1, 0)


def test_no_known_leader_waits_and_a_new_leader_gets_the_request_at_once() -> None:
    """With no leader known the request waits in the channel (Kafka's pendingRpc stays
    set, no failure counted): the channel looks every 100 ms, so a leader learnt at 30
    gets it at 100. A request out to a leader that lost its leadership goes at once to
    the new one."""
    manager, controller = _manager(leader=None)
    controller.publish(_update("3.7-IV0", manager, None))
    assert _stats(manager) == (True, 0, 0) and manager.drain_outbox() == []
    assert manager.next_deadline() == 100
    controller.now = 30
    controller.raft.leader_id = LEADER
    manager.on_leader_change(LEADER)  # (nothing is out: the channel waits for its look)
    assert manager.drain_outbox() == []
    manager.poll(100)
    [first] = _requests(manager)
    assert first.dst == LEADER
    assert manager.pending == (first.message.correlation_id, LEADER, 100 + REQUEST_TIMEOUT_MS)
    controller.raft.leader_id = 2
    manager.on_leader_change(2)
    [second] = _requests(manager)
    assert second.dst == 2 and _stats(manager) == (True, 0, 0)
    _answer(manager, first, "NONE", 120)  # the old leader's late answer: ignored
    assert _stats(manager) == (True, 0, 0)
    _answer(manager, second, "NONE", 120)
    assert _stats(manager) == (False, 1, 0)


def test_no_leader_for_the_retry_timeout_fails_the_request() -> None:
    """No leader known for the channel's whole retry timeout (5 s): the request fails at
    the channel's look at 5,000 and the manager backs off (100 ms, within 2%)."""
    manager, controller = _manager(leader=None)
    controller.publish(_update("3.7-IV0", manager, None))
    for look in range(100, REQUEST_TIMEOUT_MS, 100):
        manager.poll(look)
        assert _stats(manager) == (True, 0, 0)
    assert manager.next_deadline() == REQUEST_TIMEOUT_MS
    manager.poll(REQUEST_TIMEOUT_MS)
    assert _stats(manager) == (False, 0, 1) and manager.drain_outbox() == []
    retry = manager.next_deadline()
    assert retry is not None and REQUEST_TIMEOUT_MS + 98 <= retry <= REQUEST_TIMEOUT_MS + 102


@pytest.mark.parametrize(("leader_then", "sent_at"), [(LEADER, 50), (2, 0)],
                         ids=["same-leader", "new-leader"])
def test_not_controller_is_sent_again_by_the_channel(leader_then: int, sent_at: int) -> None:
    """NOT_CONTROLLER never reaches the manager (Kafka's channel resends the request and
    its RegistrationResponseHandler sees only other answers): the same registration goes
    again to the leader known now, after the 50 ms reconnect back-off when that is the
    node that refused, at once to another; no failure is counted."""
    manager, controller = _manager()
    controller.publish(_update("3.7-IV0", manager, None))
    [first] = _requests(manager)
    controller.raft.leader_id = leader_then
    _answer(manager, first, "NOT_CONTROLLER", 0)
    assert _stats(manager) == (True, 0, 0)
    if sent_at:
        assert manager.drain_outbox() == [] and manager.next_deadline() == sent_at
        manager.poll(sent_at)
    [again] = _requests(manager)
    assert again.dst == leader_then
    assert again.message.incarnation_id == manager.incarnation_id
    _answer(manager, again, "NONE", sent_at)
    assert _stats(manager) == (False, 1, 0)
