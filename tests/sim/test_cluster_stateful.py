"""The system Hypothesis stateful test: sim.testing's ClusterMachine, as a user runs it.

Operations and faults are rules and every invariant is checked after every
step, including acknowledged = durable: once a client is told "committed",
the operation's batches stay in the committed history and in the log of
every node that has committed past them, whatever faults follow.

The mutation tests switch on one deliberately broken behaviour of the controller or the
broker loader and require this same state machine to catch it and shrink the failing
sequence to at most 15 steps.
"""

from __future__ import annotations

import pytest

from controller.handle import OperationStatus
from raft.batch import Batch
from sim.testing import ClusterMachine, find_failure
from sim.world import InvariantViolation

TestClusterMachine = ClusterMachine.TestCase

MUTATIONS = ["forget-failover-abort", "publish-every-commit", "abort-keeps-delta",
             "leak-after-abort", "revert-to-lso"]


@pytest.mark.slow
@pytest.mark.parametrize("mutation", MUTATIONS)
def test_each_injected_bug_is_caught_and_shrunk(mutation: str) -> None:
    class Broken(ClusterMachine):
        mutations = frozenset({mutation})

    failure = find_failure(Broken, max_examples=300, steps=8)
    assert failure is not None, f"{mutation} was not caught"
    steps = Broken.failing_steps
    print(f"{mutation}: caught as {failure.invariant} after {steps} steps")
    print(failure)
    assert steps is not None and steps <= 15
    assert failure.steps and failure.steps[0].startswith("state.start(")


def test_a_lost_acknowledged_batch_is_reported() -> None:
    world = ClusterMachine()
    world.start(seed=1)
    world.create_topic(partitions=5, failover=None)
    world.tick(2_000)
    world.acknowledged_operations_are_durable()
    handle, batches = world.acknowledged[-1]
    assert handle.status is OperationStatus.COMMITTED
    slot = world.sim.slots[3001]
    assert slot.raft is not None
    log = slot.raft.log
    index = log.index_of(batches[0].base_offset)
    log._batches[index] = Batch(batches[0].base_offset, batches[0].epoch)  # a bit flip on disk
    with pytest.raises(InvariantViolation, match="node 3001 holds another batch"):
        world.acknowledged_operations_are_durable()
    world.teardown()
