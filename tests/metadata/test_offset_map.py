"""OffsetMap: revert points by offset, in offset order, cheap to fork."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from metadata.offset_map import OffsetMap


def test_points_come_in_offset_order_and_the_floor_is_found() -> None:
    points = OffsetMap([(-1, "empty"), (9, "a"), (29, "b")])
    points[19] = "between"  # not an append: kept in order
    points[29] = "b2"  # an existing offset: replaced in place
    assert list(points) == [-1, 9, 19, 29] and len(points) == 4
    assert points.get(19) == "between" and points.get(20) is None and 29 in points
    assert points.peekitem(points.bisect_right(25) - 1) == (19, "between")
    assert points.peekitem() == (29, "b2")
    assert points.popitem(0) == (-1, "empty")
    assert points.popitem() == (29, "b2")
    assert points.popitem(1) == (19, "between")
    assert list(points) == [9] and points[9] == "a"
    points.clear()
    assert not points and list(points) == []


def test_a_copy_is_equal_and_independent() -> None:
    points = OffsetMap([(-1, 0), (5, 1)])
    copy = pickle.loads(pickle.dumps(points))
    copy[7] = 2
    assert list(points) == [-1, 5] and list(copy) == [-1, 5, 7]


@given(st.lists(st.tuples(st.integers(-5, 50), st.integers()), max_size=40),
       st.integers(-10, 60))
def test_it_behaves_as_a_sorted_dict(items: list[tuple[int, int]], probe: int) -> None:
    points = OffsetMap(items)
    model = dict(items)
    assert list(points) == sorted(model)
    below = [offset for offset in sorted(model) if offset <= probe]
    assert points.bisect_right(probe) == len(below)
    if below:
        assert points.peekitem(len(below) - 1) == (below[-1], model[below[-1]])
