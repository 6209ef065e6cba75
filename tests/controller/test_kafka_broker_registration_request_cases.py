"""BrokerRegistration requests as a broker sends them, following the cases of Kafka's
BrokerRegistrationRequestTest (core/src/test/scala/unit/kafka/server/).

Kafka's test starts a KRaft cluster of one controller and no broker at a given
metadata.version and sends BrokerRegistration requests for broker 100 over the controller
listener: with the cluster's id, a fresh incarnation id, one listener, the production
features other than metadata.version (each from its lowest production level to its latest
testing one), one log directory and, when asked, a range of metadata.version; some say
they are a ZooKeeper broker in a migration (isMigratingZkBroker). Here the cluster is a
:class:`~sim.cluster.KRaftCluster` of one controller and no broker, whose controller has a
cluster id, and each :class:`~metadata.requests.BrokerRegistrationRequest` is handed to
its broker service (:class:`~controller.broker_service.ControllerBrokerService`) as the
request from the network; the answer is the error code of the response, once the
registration is committed. A few more cases check the controller's other answers to a bad
registration (another cluster's id, a duplicate while the first incarnation's session
lives, an unsupported feature level, log directories from 3.7-IV2).

Kafka's other BrokerRegistrationRequestTest (clients/src/test/java/.../requests/) checks
the request's serialization at each of its versions (testBasicBuild,
testV0SerializationFailsWithZkMigrationEnabled, testAlterFeaturesWithMinVersion0BeforeV4);
kraftsim's requests are in-process messages with no wire form or versions, so it does not
apply.

Not ported: none; both methods of the class are here (the ZooKeeper brokers' registrations
included: kraftsim refuses them as Kafka's KRaft controller does).
"""

from __future__ import annotations

import random
from typing import Any

from controller import ControllerConfig
from controller.broker_service import ControllerBrokerService
from controller.errors import ApiError
from controller.operations import OperationContext, RegisterBroker, UnfenceBroker
from metadata.requests import BrokerRegistrationRequest, BrokerRegistrationResponse, NodeMessage
from metadata.schema import BrokerFeature
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE, SUPPORTED_FEATURES
from sim.cluster import ClusterConfig, KRaftCluster

from .kafka_cases import brokers, image_of, run

CLUSTER_ID = "q1Sh-9_ISia_zwGINzRvyQ"
BROKER_ID = 100
LOG_DIR = "u0e-7gWIQnuS0nGvJn9mPw"


class _Controller:
    """Kafka's channel manager to the one controller of a cluster with no broker."""

    def __init__(self, metadata_version: str) -> None:
        config = ClusterConfig(seed=7, controllers=1, brokers=0, controller=ControllerConfig(
            bootstrap_metadata_version=LEVELS[metadata_version]))
        self.cluster = KRaftCluster(config, cluster_id=CLUSTER_ID)
        self.cluster.start()
        active = self.cluster.active_controller()
        assert active is not None
        self.node_id = active.node_id
        [self.service] = [a for a in self.cluster.sim.slots[self.node_id].apps
                          if isinstance(a, ControllerBrokerService)]
        self._correlation = 0

    def send(self, request: Any) -> BrokerRegistrationResponse:
        """The response to ``request``, as from broker 100's node: the service takes it as
        an event of the simulation; its reply, once the registration is committed, is
        caught on its way out (no node 100 runs here to receive it)."""
        sim = self.cluster.sim
        answers: list[BrokerRegistrationResponse] = []

        def deliver() -> None:
            self.service.handle_message(NodeMessage(BROKER_ID, self.node_id, request), sim.now)
            sim.touch(sim.slots[self.node_id])

        setattr(self.service, "_reply", lambda dst, response: answers.append(response))  # noqa: B010
        try:
            sim.act("BrokerRegistration", deliver)
            assert self.cluster.run_until(lambda: bool(answers), 5_000)
        finally:
            delattr(self.service, "_reply")
        [answer] = answers
        assert answer.correlation_id == request.correlation_id
        return answer

    def register(self, broker_id: int = BROKER_ID, zk_epoch: int | None = None,
                 metadata_versions: tuple[str, str] | None = None, *,
                 cluster_id: str = CLUSTER_ID, incarnation_id: str | None = None,
                 features: dict[str, tuple[int, int]] | None = None,
                 log_dirs: tuple[str, ...] = (LOG_DIR,)) -> str:
        """Kafka's registerBroker: the response's error code. ``zk_epoch`` set: a ZooKeeper
        broker in a migration; ``metadata_versions``: the metadata.version range it
        supports (none sent when None); ``features`` replaces the other features; one log
        directory, as Kafka's."""
        sent: list[BrokerFeature] = []
        if metadata_versions is not None:
            low, high = metadata_versions
            sent.append(BrokerFeature(METADATA_VERSION_FEATURE, LEVELS[low], LEVELS[high]))
        others = {name: levels for name, levels in SUPPORTED_FEATURES.items()
                  if name != METADATA_VERSION_FEATURE} if features is None else features
        sent.extend(BrokerFeature(name, low, high) for name, (low, high) in sorted(others.items()))
        self._correlation += 1
        request = BrokerRegistrationRequest(
            self._correlation, broker_id, incarnation_id or f"incarnation-{self._correlation}",
            host="example.com", port=8082, cluster_id=cluster_id, features=tuple(sent),
            is_migrating_zk_broker=zk_epoch is not None, log_dirs=log_dirs)
        return self.send(request).error


def test_register_zk_with_kraft_migration_disabled() -> None:
    """testRegisterZkWithKRaftMigrationDisabled (metadata.version 3.4-IV0): a ZooKeeper
    broker is refused BROKER_ID_NOT_REGISTERED whatever metadata.version range it gives
    (none included); a KRaft broker supporting 3.4-IV0 only registers."""
    controller = _Controller("3.4-IV0")
    assert controller.register(BROKER_ID, 1, ("3.3-IV0", "3.3-IV0")) == "BROKER_ID_NOT_REGISTERED"
    assert controller.register(BROKER_ID, 1, None) == "BROKER_ID_NOT_REGISTERED"
    assert controller.register(BROKER_ID, 1, ("3.4-IV0", "3.4-IV0")) == "BROKER_ID_NOT_REGISTERED"
    assert controller.register(BROKER_ID, None, ("3.4-IV0", "3.4-IV0")) == "NONE"
    image = controller.cluster.active_controller().image  # type: ignore[union-attr]
    registration = image.brokers[BROKER_ID]
    assert not registration.is_migrating_zk_broker and registration.fenced


def test_register_zk_with33_controller() -> None:
    """testRegisterZkWith33Controller (metadata.version 3.3-IV3): ZooKeeper brokers are
    refused (a range holding 3.3-IV3, none, one above it); a KRaft broker supporting
    3.3-IV3 to 3.4-IV0 registers."""
    controller = _Controller("3.3-IV3")
    assert controller.register(BROKER_ID, 1, ("3.3-IV0", "3.3-IV3")) == "BROKER_ID_NOT_REGISTERED"
    assert controller.register(BROKER_ID, 1, None) == "BROKER_ID_NOT_REGISTERED"
    assert controller.register(BROKER_ID, 1, ("3.4-IV0", "3.4-IV0")) == "BROKER_ID_NOT_REGISTERED"
    assert controller.register(BROKER_ID, None, ("3.3-IV3", "3.4-IV0")) == "NONE"


def test_a_kraft_broker_is_refused_a_metadata_version_it_does_not_support() -> None:
    """The KRaft brokers of both methods, turned around: at 3.3-IV3 a broker supporting
    3.4-IV0 only, or naming no metadata.version (3.0-IV1 only, as Kafka assumes), is refused
    UNSUPPORTED_VERSION; nothing is registered."""
    controller = _Controller("3.3-IV3")
    assert controller.register(BROKER_ID, None, ("3.4-IV0", "3.4-IV0")) == "UNSUPPORTED_VERSION"
    assert controller.register(BROKER_ID, None, None) == "UNSUPPORTED_VERSION"
    assert BROKER_ID not in controller.cluster.active_controller().image.brokers  # type: ignore[union-attr]


def test_a_registration_naming_another_cluster_is_refused() -> None:
    """ClusterControlManager's first check (before the duplicate check): a registration
    with another cluster's id is INCONSISTENT_CLUSTER_ID, the ZooKeeper flag and the
    features notwithstanding."""
    controller = _Controller("3.4-IV0")
    assert controller.register(BROKER_ID, None, ("3.4-IV0", "3.4-IV0"),
                               cluster_id="another-cluster") == "INCONSISTENT_CLUSTER_ID"
    assert controller.register(BROKER_ID, 1, None,
                               cluster_id="another-cluster") == "INCONSISTENT_CLUSTER_ID"
    assert BROKER_ID not in controller.cluster.active_controller().image.brokers  # type: ignore[union-attr]


def test_a_second_incarnation_while_the_first_has_a_session_is_a_duplicate() -> None:
    """A registration under a new incarnation id while the registered broker's session
    lives is DUPLICATE_BROKER_REGISTRATION; the same incarnation again amends its
    registration."""
    controller = _Controller("3.4-IV0")
    first = controller.register(BROKER_ID, None, ("3.4-IV0", "3.4-IV0"), incarnation_id="inc-a")
    assert first == "NONE"
    image = controller.cluster.active_controller().image  # type: ignore[union-attr]
    epoch = image.brokers[BROKER_ID].epoch
    # unfenced, the broker has a session: another incarnation is a duplicate
    handle = controller.cluster.submit(UnfenceBroker(BROKER_ID))
    assert controller.cluster.wait(handle) and handle.error is None
    again = controller.register(BROKER_ID, None, ("3.4-IV0", "3.4-IV0"), incarnation_id="inc-b")
    assert again == "DUPLICATE_BROKER_REGISTRATION"
    same = controller.register(BROKER_ID, None, ("3.4-IV0", "3.4-IV0"), incarnation_id="inc-a")
    assert same == "NONE"
    image = controller.cluster.active_controller().image  # type: ignore[union-attr]
    assert image.brokers[BROKER_ID].epoch == epoch
    assert image.brokers[BROKER_ID].incarnation_id == "inc-a"


def test_the_refusals_say_what_kafka_says() -> None:
    """The messages of the refusals above, from the operation itself (Kafka's
    ClusterControlManager.registerBroker): the cluster ids both named, the ZooKeeper
    broker refused in Kafka's words, and the cluster id checked first."""
    image = image_of(brokers(level=LEVELS["3.4-IV0"]))

    def refused(op: RegisterBroker) -> ApiError:
        try:
            op.generate(OperationContext(image, random.Random(1), 100, 3000,
                                         cluster_id=CLUSTER_ID))
        except ApiError as error:
            return error
        raise AssertionError(f"{op.describe()} was not refused")

    wrong = refused(RegisterBroker(BROKER_ID, cluster_id="foo", is_migrating_zk_broker=True))
    assert (wrong.code, wrong.message) == (
        "INCONSISTENT_CLUSTER_ID", f"Expected cluster ID {CLUSTER_ID}, but got cluster ID foo")
    zk = refused(RegisterBroker(BROKER_ID, cluster_id=CLUSTER_ID, is_migrating_zk_broker=True,
                                features=()))
    assert (zk.code, zk.message) == ("BROKER_ID_NOT_REGISTERED",
                                     "Controller does not support registering ZK brokers.")
    # an operator's tool names no cluster id: not checked
    _, records, _ = run(RegisterBroker(BROKER_ID, incarnation_id="inc-x"), image)
    assert [type(r).__name__ for r in records] == ["RegisterBrokerRecord"]


def test_log_directories_are_checked_from_3_7_iv2() -> None:
    """With directory assignment (3.7-IV2) the request's log directories are recorded, and
    a request with none is INVALID_REGISTRATION (ClusterControlManager's check, after the
    ZooKeeper one)."""
    controller = _Controller("3.7-IV2")
    assert controller.register(BROKER_ID, None, ("3.7-IV2", "3.7-IV2"), log_dirs=()) == \
        "INVALID_REGISTRATION"
    assert controller.register(BROKER_ID, 1, ("3.7-IV2", "3.7-IV2"), log_dirs=()) == \
        "BROKER_ID_NOT_REGISTERED"
    assert controller.register(BROKER_ID, None, ("3.7-IV2", "3.7-IV2")) == "NONE"
    image = controller.cluster.active_controller().image  # type: ignore[union-attr]
    assert image.brokers[BROKER_ID].directories == (LOG_DIR,)
