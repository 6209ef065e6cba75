"""Cases of Kafka's DeferredEventQueueTest (server-common/src/test/java/org/apache/kafka/deferred/;
ControllerPurgatoryTest in metadata/ before Kafka 3.5), in kraftsim's terms: the active
controller's :class:`~controller.purgatory.Purgatory` stands in for the queue, an
OperationHandle for a deferred event, the last stable offset for the offset the queue is
completed up to.

Ported: writes complete in offset order once the stable offset reaches them, several at one
offset together (testCompleteEvents; also through a controller: a read that writes nothing
waits at the highest pending offset and completes with the write there); an entry below the
highest pending offset is refused (testFailOnIncorrectOrdering); what is still pending fails
with the error it is given (testFailEvents).

Already covered through a controller: losing leadership fails every pending operation with
NOT_CONTROLLER (test_controller_operations.py::
test_losing_leadership_fails_pending_operations_with_not_controller).

Found while porting, and fixed: Kafka's controller writes its own records (activation, the
periodic NoOp, preferred and unclean elections) as write events that wait in the same queue,
so a read answered from the latest state waits for them too. kraftsim's controller kept only
operations there, and answered such a read at once from a state holding its own uncommitted
records (test_a_read_behind_the_controllers_own_write_waits_for_it).
"""

from __future__ import annotations

import pytest

from controller.errors import ApiError
from controller.handle import OperationHandle, OperationStatus
from controller.operations import CreateTopics, NewTopic
from controller.purgatory import Purgatory
from tests.controller.conftest import cluster


def _handle(op_id: int) -> OperationHandle:
    return OperationHandle(op_id, f"op {op_id}", 0, 0, "transactional")


def test_writes_complete_in_offset_order_as_the_stable_offset_passes_them() -> None:
    purgatory = Purgatory()
    first, second, third = _handle(1), _handle(2), _handle(3)
    purgatory.add(1, first)
    assert purgatory.highest_pending_offset == 1
    purgatory.add(1, second)
    assert purgatory.highest_pending_offset == 1
    purgatory.add(3, third)
    assert purgatory.highest_pending_offset == 3 and len(purgatory) == 3
    assert purgatory.complete_up_to(2, now=10) == 2
    assert first.status is second.status is OperationStatus.COMMITTED
    assert third.status is OperationStatus.PENDING
    assert purgatory.complete_up_to(4, now=20) == 1
    assert third.status is OperationStatus.COMMITTED and third.completed_at == 20
    assert purgatory.highest_pending_offset is None and len(purgatory) == 0


def test_a_read_waits_at_the_highest_pending_offset_and_completes_with_that_write() -> None:
    c = cluster(seed=11, batch=10, fetch=10)
    active = c.active_controller()
    assert active is not None
    small = c.submit(CreateTopics((NewTopic("small", 1, 3),)))
    read = c.submit(CreateTopics((NewTopic("read", 1, 3),), validate_only=True))
    big = c.submit(CreateTopics((NewTopic("big", 40, 3),)))  # five batches
    assert read.record_count == 0 and read.last_offset == small.last_offset
    assert active.purgatory.highest_pending_offset == big.last_offset
    assert not (small.done or read.done or big.done)
    assert c.run_until(lambda: small.done, 5_000)
    assert read.status is OperationStatus.COMMITTED and read.completed_at == small.completed_at
    assert not big.done  # its batches take more fetches
    assert c.wait(big) and big.outcome() == "committed"
    assert len(active.purgatory) == 0


def test_a_write_below_the_highest_pending_offset_is_refused() -> None:
    purgatory = Purgatory()
    purgatory.add(2, _handle(1))
    with pytest.raises(ValueError, match="pending at offset 2; one at offset 1"):
        purgatory.add(1, _handle(2))
    assert purgatory.highest_pending_offset == 2 and len(purgatory) == 1


def test_what_is_still_pending_fails_with_the_error_given() -> None:
    purgatory = Purgatory()
    first, second, third = _handle(1), _handle(2), _handle(3)
    purgatory.add(1, first)
    purgatory.add(3, second)
    purgatory.add(3, third)
    purgatory.complete_up_to(2, now=10)
    assert first.status is OperationStatus.COMMITTED
    assert second.status is third.status is OperationStatus.PENDING
    error = ApiError("NOT_CONTROLLER", "leadership lost")
    purgatory.fail_all(error, now=20)
    assert second.error is error and third.error is error
    assert second.status is third.status is OperationStatus.FAILED
    assert first.error is None
    assert purgatory.highest_pending_offset is None and len(purgatory) == 0


def test_a_read_behind_the_controllers_own_write_waits_for_it() -> None:
    c = cluster(seed=12, batch=10, fetch=10, noop_ms=500)
    active = c.active_controller()
    assert active is not None

    def own_write_pending() -> bool:
        # a periodic NoOp appended and not yet stable, and no operation waiting
        return len(active.purgatory) == 0 and \
            active.raft.log.end_offset - 1 > active.offsets.last_stable_offset

    assert c.run_until(own_write_pending, 5_000)
    noop = active.raft.log.end_offset - 1
    read = c.submit(CreateTopics((NewTopic("read", 1, 3),), validate_only=True))
    assert not read.done and read.last_offset == noop  # old code: committed at once
    assert active.purgatory.highest_pending_offset == noop
    assert c.wait(read) and read.outcome() == "committed"
    assert active.offsets.last_stable_offset >= noop
