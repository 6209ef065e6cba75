"""A record that fails to apply on the active controller: a failover, not an exception.

Kafka's QuorumControllerTest.testFatalMetadataReplayErrorOnActive:
the write fails, nothing of it is appended, the fatal fault handler fires and the
process stops, so another controller takes over.
"""

from __future__ import annotations

import msgspec

from controller.operations import CreateTopics, NewTopic
from controller.operations.base import Generated, OperationContext
from metadata.schema import RemoveTopicRecord
from tests.controller.conftest import cluster

UNKNOWN_TOPIC = "AAAAAAAAAAAAAAAAAAAABg"


class RemoveUnknownTopic(msgspec.Struct, frozen=True):
    """A buggy operation: it skips validation, so its record cannot apply."""

    def describe(self) -> str:
        return "RemoveUnknownTopic"

    def generate(self, ctx: OperationContext) -> Generated:
        return Generated([RemoveTopicRecord(UNKNOWN_TOPIC)])


def test_a_record_that_fails_to_apply_on_the_active_controller_is_a_failover() -> None:
    c = cluster(seed=9)
    active = c.active_controller()
    assert active is not None
    old = active.node_id
    end = active.raft.log.end_offset
    handle = c.submit(RemoveUnknownTopic())  # must not raise
    assert handle.done and handle.error is not None
    assert handle.error.code == "UNKNOWN_SERVER_ERROR"
    assert active.raft.log.end_offset == end  # nothing was appended
    assert active.fault is not None and not active.active
    assert c.controller_faults and c.controller_faults[0][0] == old
    new = c.run_until_active(20_000)
    assert new is not None and new.node_id != old
    follow_up = c.submit(CreateTopics((NewTopic("after", 2, 3),)))
    assert c.wait(follow_up, 20_000) and follow_up.error is None, follow_up.error
    assert c.run_until(c.idle, 20_000), c.sim.violation
    assert c.sim.violation is None


def test_a_fatal_fault_fails_the_writes_still_waiting_to_commit() -> None:
    """A write submitted before the faulty one, still waiting for its commit, is answered
    UNKNOWN_SERVER_ERROR with the fault (not left waiting, nor a NOT_CONTROLLER later)."""
    c = cluster(seed=9)
    active = c.active_controller()
    assert active is not None
    waiting = c.submit(CreateTopics((NewTopic("before", 2, 3),)))
    assert not waiting.done
    c.submit(RemoveUnknownTopic())
    assert active.fault is not None
    assert waiting.done and waiting.error is not None
    assert waiting.error.code == "UNKNOWN_SERVER_ERROR"
