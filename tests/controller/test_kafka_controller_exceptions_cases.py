"""Cases of Kafka's ControllerExceptionsTest, against kraftsim's
:func:`controller.errors.not_controller`: the NOT_CONTROLLER answer of a controller that
is not the active one, with Kafka's text (``newWrongControllerException``), and where
kraftsim's controller gives it as Kafka's QuorumController does: a standby names the
leader its raft knows, a controller that loses leadership fails its pending operations
naming no one.

Kafka class followed: ``ControllerExceptionsTest``
(``metadata/src/test/java/org/apache/kafka/controller/errors``).

Ported: testNewWrongControllerExceptionWithNoController,
testNewWrongControllerExceptionWithActiveController.

Not ported:

- testTimeoutExceptionIsTimeoutException, testWrappedTimeoutExceptionIsTimeoutException,
  testRuntimeExceptionIsNotTimeoutException,
  testWrappedRuntimeExceptionIsNotTimeoutException,
  testTopicExistsExceptionIsNotTimeoutException,
  testExecutionExceptionWithNullCauseIsNotTimeoutException: Java's ExecutionException
  wrapping of a future's failure; kraftsim's operations fail with an error name on
  their handle, nothing is wrapped.
- testNewPreMigrationExceptionWithNoController,
  testNewPreMigrationExceptionWithActiveController: the ZooKeeper migration is not
  modelled.
"""

from __future__ import annotations

from controller.errors import ApiError, not_controller
from controller.operations import CreateTopics, NewTopic
from sim.faults import parse_fault
from tests.controller.conftest import cluster


def _matches(a: ApiError, b: ApiError) -> bool:
    """Kafka's assertExceptionsMatch: same kind (error name), same message."""
    return (a.code, a.message, a.retriable) == (b.code, b.message, b.retriable)


def test_new_wrong_controller_exception_with_no_controller() -> None:
    assert _matches(ApiError("NOT_CONTROLLER", "No controller appears to be active."),
                    not_controller(None))


def test_new_wrong_controller_exception_with_active_controller() -> None:
    assert _matches(ApiError("NOT_CONTROLLER", "The active controller appears to be node 1."),
                    not_controller(1))
    assert not_controller(1).retriable


def test_a_standby_names_the_leader_its_raft_knows() -> None:
    """Kafka's write event on a controller that is not active: newWrongControllerException
    with raft's leader id."""
    c = cluster(seed=15, noop_ms=0)
    active = c.active_controller()
    assert active is not None
    standby = next(ctl for n in c.config.controller_ids
                   if (ctl := c.controller(n)) is not None and ctl is not active)
    handle = c.submit(CreateTopics((NewTopic("t", 1, 1),)), node_id=standby.node_id)
    assert handle.error is not None
    assert _matches(handle.error, not_controller(active.node_id))


def test_losing_leadership_fails_pending_operations_naming_no_controller() -> None:
    """Kafka's renounce fails its deferred events with newWrongControllerException of no
    controller, whatever raft knows by then."""
    c = cluster(seed=7, batch=10, fetch=10)
    active = c.active_controller()
    assert active is not None
    handle = c.submit(CreateTopics((NewTopic("big", 40, 3),)))
    c.sim.apply_fault(parse_fault(f"isolate:{active.node_id}@0"))
    assert c.wait(handle, 20_000)
    assert handle.error is not None
    assert _matches(handle.error, not_controller(None))
