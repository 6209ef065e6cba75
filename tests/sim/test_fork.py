"""sim.fork copies closures faithfully: every captured value, defaults and attributes."""

from __future__ import annotations

from collections.abc import Callable

from sim.fork import fork


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
