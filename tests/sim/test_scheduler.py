"""The event queue: events by (time, order scheduled), a clock that only moves forward."""

from __future__ import annotations

from sim.scheduler import EventQueue


def test_events_come_by_time_then_in_the_order_scheduled() -> None:
    queue = EventQueue()
    for time, event in ((20, "b"), (10, "a"), (20, "c"), (10, "d")):
        queue.schedule(time, event)
    assert len(queue) == 4 and queue.peek_time() == 10
    assert [queue.pop() for _ in range(4)] == [(10, "a"), (10, "d"), (20, "b"), (20, "c")]
    assert queue.now == 20 and len(queue) == 0 and queue.peek_time() is None


def test_an_event_scheduled_in_the_past_runs_now_after_those_already_due() -> None:
    queue = EventQueue()
    queue.schedule(50, "first")
    assert queue.pop() == (50, "first") and queue.now == 50
    queue.schedule(50, "same time")
    queue.schedule(10, "late")  # never before the clock: at 50, after "same time"
    assert queue.peek_time() == 50
    assert [queue.pop(), queue.pop()] == [(50, "same time"), (50, "late")]


def test_pop_due_takes_only_events_at_or_before_the_time() -> None:
    queue = EventQueue()
    assert queue.pop_due(100) is None
    queue.schedule(30, "x")
    queue.schedule(40, "y")
    assert queue.pop_due(29) is None and queue.now == 0
    assert queue.pop_due(30) == (30, "x") and queue.now == 30
    assert queue.pop_due(39) is None and len(queue) == 1
    assert queue.pop_due(1000) == (40, "y") and queue.now == 40


def test_remove_takes_one_entry_out_and_keeps_the_order() -> None:
    queue = EventQueue()
    for time, event in ((5, "a"), (3, "b"), (7, "c"), (3, "d")):
        queue.schedule(time, event)
    entry = next(e for e in queue.entries() if e[2] == "b")
    queue.remove(entry)
    assert sorted(e[2] for e in queue.entries()) == ["a", "c", "d"]
    assert [queue.pop() for _ in range(3)] == [(3, "d"), (5, "a"), (7, "c")]
