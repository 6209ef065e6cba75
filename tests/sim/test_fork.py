"""sim.fork copies closures faithfully: every captured value, defaults and attributes."""

from __future__ import annotations

from collections.abc import Callable

from controller.errors import ApiError
from sim.fork import fork
from sim.world import InvariantViolation


def _closure() -> tuple[Callable[..., tuple[object, object, int]], list[int]]:
    nothing = None
    later: object
    seen: list[int] = []

    def f(*, k: int = 3) -> tuple[object, object, int]:
        seen.append(k)
        return nothing, later, k

    f.tag = "kept"  # type: ignore[attr-defined]
    later = "assigned after"
    return f, seen


def test_a_forked_closure_keeps_none_cells_keyword_defaults_and_attributes() -> None:
    original, seen = _closure()
    copy, copy_seen = fork((original, seen))
    assert copy() == (None, "assigned after", 3)
    assert copy.__kwdefaults__ == {"k": 3} and copy.tag == "kept"  # type: ignore[attr-defined]
    assert copy.__qualname__ == original.__qualname__
    assert copy_seen == [3] and seen == []  # the fork's own list, not the original's


def test_exceptions_fork_whatever_their_init_takes() -> None:
    """A world can hold exceptions whose __init__ takes more than one argument (a run's
    violation, a refused operation's error); a fork has them as they were."""
    violation = InvariantViolation("MajorityReachedHighWatermark", "only 1 of 3 voters")
    error = ApiError("NOT_CONTROLLER", "node 3000 is not the active controller")
    copy_violation, copy_error = fork((violation, error))
    assert copy_violation is not violation and type(copy_violation) is InvariantViolation
    assert (copy_violation.invariant, copy_violation.message, str(copy_violation)) == \
        (violation.invariant, violation.message, str(violation))
    assert (copy_error.code, copy_error.message, copy_error.retriable, str(copy_error)) == \
        (error.code, error.message, True, str(error))
