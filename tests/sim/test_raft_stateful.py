"""Hypothesis stateful tests of raft alone: sim.testing's RaftMachine.

Environment events are the rules, the raft invariants are checked after each
step. The mutation tests switch on a deliberately broken raft behaviour and
require the same state machine to find a violation.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from raft.mutations import Mutation
from sim.testing import RaftMachine
from sim.world import InvariantViolation

TestRaftMachine = RaftMachine.TestCase


@pytest.mark.slow
@pytest.mark.parametrize("mutation", list(Mutation))
def test_each_injected_raft_bug_is_caught(mutation: Mutation) -> None:
    class Broken(RaftMachine):
        mutations = frozenset({mutation})

    # Derandomized like the broker and transaction mutation searches: every run does the
    # same search, so a search that stops finding a bug fails every time, not one in many.
    with pytest.raises((InvariantViolation, Flaky)) as caught:
        run_state_machine_as_test(
            Broken, settings=settings(max_examples=2000, stateful_step_count=25, deadline=None,
                                      suppress_health_check=list(HealthCheck), database=None,
                                      report_multiple_bugs=False, derandomize=True,
                                      phases=[Phase.generate]))
    print(f"{mutation.value}: {caught.value}")
