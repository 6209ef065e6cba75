"""Simulation.run_until_true: the predicate after every event, the timeout, a violation."""

from __future__ import annotations

from sim.world import InvariantViolation, Simulation, WorldConfig


def _sim_with_actions(times: list[int]) -> tuple[Simulation, list[int]]:
    """A world of stopped nodes whose only events are actions at ``times``; the list
    returned hears each action's time as it runs."""
    sim = Simulation(WorldConfig(seed=1, voter_ids=(1,)))
    ran: list[int] = []
    for at in times:
        sim.schedule(at, lambda at=at: ran.append(at), f"action at {at}")
    return sim, ran


def test_stops_after_the_event_that_makes_the_predicate_true() -> None:
    sim, ran = _sim_with_actions([10, 20, 30])
    assert sim.run_until_true(lambda: len(ran) == 2, 1000)
    assert ran == [10, 20] and sim.now == 20 and sim.events == 2


def test_true_at_once_runs_nothing() -> None:
    sim, ran = _sim_with_actions([10])
    assert sim.run_until_true(lambda: True, 1000)
    assert ran == [] and sim.now == 0


def test_timeout_runs_up_to_the_deadline_and_no_further() -> None:
    sim, ran = _sim_with_actions([10, 50, 51])
    assert not sim.run_until_true(lambda: False, 50)
    assert ran == [10, 50] and sim.now == 50  # the event at the deadline runs
    assert not sim.run_until_true(lambda: False, 100)  # the deadline counts from now
    assert ran == [10, 50, 51] and sim.now == 150


def test_an_empty_queue_moves_the_clock_to_the_deadline() -> None:
    sim, _ = _sim_with_actions([])
    assert not sim.run_until_true(lambda: False, 70)
    assert sim.now == 70


def test_a_violation_stops_the_run_with_the_clock_where_it_failed() -> None:
    sim, ran = _sim_with_actions([10, 20, 30])

    sim.schedule(20, lambda: sim._fail(InvariantViolation("Test", "at 20")), "fail")
    assert not sim.run_until_true(lambda: False, 1000)
    assert sim.violation is not None and sim.violation.message == "at 20"
    assert ran == [10, 20] and sim.now == 20  # nothing after it ran, and no time passed
    assert sim.run_until_true(lambda: sim.now == 20, 1000)  # the predicate still answers
