"""sim.fork copies closures faithfully: every captured value, defaults and attributes."""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable

import immutables

from controller.errors import ApiError
from metadata.image import PartitionRegistration
from sim.fork import Frozen, fork
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


class _Holder:
    """A plain object holding a mutable list."""

    def __init__(self) -> None:
        self.items = [1, 2]


def test_forks_share_immutable_values_and_each_has_its_own_mutable_ones() -> None:
    """Strings, frozen structs, persistent maps and immutable tuples come back as the very
    objects frozen; lists, dicts and plain objects are each fork's own; random streams
    go on from the frozen state."""
    reg = PartitionRegistration(replicas=(1, 2), isr=(1, 2), leader=1, leader_epoch=0,
                                partition_epoch=0)
    name = "".join(["topic-", "x" * 40])  # not interned by the compiler
    world = {"name": name, "reg": reg, "map": immutables.Map({"a": reg}),
             "pair": (name, 3), "list": [reg], "holder": _Holder(),
             "rng": random.Random(5), "cycle": []}
    world["cycle"].append(world)  # type: ignore[attr-defined]
    frozen = Frozen(world)
    first, second = frozen.fork(), frozen.fork()
    expected_draw = world["rng"].random()  # type: ignore[attr-defined]
    for copy in (first, second):
        assert copy["name"] is name and copy["reg"] is reg and copy["map"] is world["map"]
        assert copy["pair"] is world["pair"]
        assert copy["list"] == [reg] and copy["list"] is not world["list"]
        assert copy["holder"].items == [1, 2]  # type: ignore[attr-defined]
        assert copy["cycle"][0] is copy  # type: ignore[index]
        assert copy["rng"].random() == expected_draw  # type: ignore[attr-defined]
    assert first["list"] is not second["list"]
    assert first["holder"] is not second["holder"]
    first["holder"].items.append(3)  # type: ignore[attr-defined]
    assert second["holder"].items == [1, 2]  # type: ignore[attr-defined]
    assert frozen.fork()["holder"].items == [1, 2]  # type: ignore[index]


def test_a_forked_closure_with_keyword_defaults_and_no_attributes_keeps_its_defaults() -> None:
    """The keyword defaults come back without any attribute set on the function."""
    offset = 10

    def add(x: int, *, by: int = 5) -> int:
        return x + by + offset

    copy = fork(add)
    assert copy.__kwdefaults__ == {"by": 5}
    assert copy(1) == 16


def test_a_forked_closure_with_attributes_and_no_keyword_defaults_keeps_them() -> None:
    offset = 10

    def add(x: int) -> int:
        return x + offset

    add.tag = "kept"  # type: ignore[attr-defined]
    copy = fork(add)
    assert copy.tag == "kept" and copy(1) == 11  # type: ignore[attr-defined]


def test_a_value_met_twice_is_one_value_in_every_fork() -> None:
    """The frozen pickle keeps only the memo stores read back: a list held in two places
    (and one in a cycle) is still one list in each fork, while the many values met once
    leave no store behind."""
    shared: list[int] = [1]
    world = {"a": shared, "b": shared, "rest": [[i] for i in range(200)], "self": []}
    world["self"].append(world)  # type: ignore[attr-defined]
    frozen = Frozen(world)
    copy = frozen.fork()
    assert copy["a"] is copy["b"] and copy["a"] == [1] and copy["a"] is not shared
    assert copy["self"][0] is copy  # type: ignore[index]
    assert copy["rest"] == world["rest"]
    every_store = len(pickle.dumps(world, protocol=3))
    assert frozen.size < every_store - 200 * 2  # 200 one-time lists: no BINPUT for any


def test_a_verification_guard_forks_as_itself_and_the_sentinel_stays_the_sentinel() -> None:
    """KIP-890's guards compare by identity: in a fork the sentinel is still
    ``SENTINEL`` and a guard held in two places (the log's verification entry, the
    produce waiting on it) is one guard, not the original."""
    from broker.txn.verification import SENTINEL, VerificationGuard
    guard = VerificationGuard()
    copy = fork({"entry": guard, "waiting": guard, "none": SENTINEL})
    assert copy["none"] is SENTINEL
    assert copy["entry"] is copy["waiting"] and copy["entry"] is not guard
    assert copy["entry"].verify(copy["waiting"]) and not SENTINEL.verify(copy["none"])
