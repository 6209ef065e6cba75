"""Faults as typed values: written explicitly or drawn from the seed.

The fault language (one fault per item, items separated by ``;`` or given as
several ``--faults`` options); ``NODE`` is a node id or ``leader``, resolved
when the fault fires; times are simulated milliseconds:

=========================  ==============================================
``crash:NODE@T``           hard crash: unflushed appends are lost
``shutdown:NODE@T``        graceful shutdown: a leader resigns first
``restart:NODE@T``         start a crashed or stopped node again
``wipe:NODE@T``            kill the node and wipe its disk
``pause:NODE@T+D``         freeze the node for D ms (messages wait)
``partition:A,B|C@T``      cut every link between the groups
``isolate:NODE@T``         cut every link to and from NODE
``block:A>B@T``            cut the one-way link A -> B
``heal@T``                 restore every link
=========================  ==============================================

``random:N`` draws N faults from the seed (each crash or shutdown followed by
a restart, each partition by a heal).

Each kind is a frozen Struct (:class:`Crash`, :class:`Shutdown`,
:class:`Restart`, :class:`Wipe`, :class:`Pause`, :class:`Partition`,
:class:`Isolate`, :class:`Block`, :class:`Heal`; :data:`FaultSpec` is their
union) with ``at_ms`` and ``render()``, the inverse of :func:`parse_fault`.
:func:`parse_fault_target` is the one parser of a fault's target, shared by
the fault language, the shell's fault verbs (``crash NODE``, ``partition
A,B|C``, ...) and anything else that names nodes. Times and durations are at
most :data:`~sim.bounds.MAX_DURATION_MS` (30 days), node ids at most
:data:`~sim.bounds.MAX_NODE_ID` (int32).

Traces and printed configurations show a fault in its original flat form
(:func:`fault_record`: ``kind``, ``at_ms``, ``target``, ``duration_ms``), so
traces are the same as before faults were typed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Literal

import msgspec

from raft.config import ConfigError
from sim.bounds import MAX_DURATION_MS, MAX_NODE_ID

KINDS = ("crash", "shutdown", "restart", "wipe", "pause", "partition", "isolate", "block",
         "heal")
"""Every fault kind."""
LEADER: Literal["leader"] = "leader"
"""The target that names whichever node leads when the fault fires."""
MAX_FAULT_MS = MAX_DURATION_MS
"""Latest fault time and longest pause: 30 days of simulated time."""

NodeRef = int | Literal["leader"]
"""A node id, or ``"leader"``."""


class FaultError(ConfigError):
    """A malformed fault; its message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__("faults", message)


class Fault(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """What every fault has: the simulated time at which it fires."""

    at_ms: int = 0

    @property
    def kind(self) -> str:
        """The fault's kind (its word in the fault language)."""
        tag = type(self).__struct_config__.tag
        assert isinstance(tag, str)
        return tag

    def target(self) -> str:
        """The target as the fault language writes it (empty for heal)."""
        return ""

    def nodes(self) -> tuple[int, ...]:
        """The node ids the fault names (``leader`` names none until it fires)."""
        return ()

    def render(self) -> str:
        """The fault in the fault language: ``parse_fault(f.render()) == f``."""
        return f"{self.kind}:{self.target()}@{self.at_ms}"


class _OnNode(Fault, frozen=True, kw_only=True):
    node: NodeRef

    def target(self) -> str:
        return str(self.node)

    def nodes(self) -> tuple[int, ...]:
        return () if self.node == LEADER else (int(self.node),)


class Crash(_OnNode, frozen=True, kw_only=True, tag="crash"):
    """Hard crash: unflushed appends are lost."""


class Shutdown(_OnNode, frozen=True, kw_only=True, tag="shutdown"):
    """Graceful shutdown: a leader resigns and flushes first."""


class Restart(_OnNode, frozen=True, kw_only=True, tag="restart"):
    """Start a crashed or stopped node again (a node id: a restart names no leader)."""


class Wipe(_OnNode, frozen=True, kw_only=True, tag="wipe"):
    """Kill the node and wipe its disk."""


class Isolate(_OnNode, frozen=True, kw_only=True, tag="isolate"):
    """Cut every link to and from the node."""


class Pause(_OnNode, frozen=True, kw_only=True, tag="pause"):
    """Freeze the node for ``duration_ms`` (messages wait, timers stand still)."""

    duration_ms: int

    def render(self) -> str:
        """``pause:NODE@T+D``."""
        return f"pause:{self.node}@{self.at_ms}+{self.duration_ms}"


class Partition(Fault, frozen=True, kw_only=True, tag="partition"):
    """Cut every link between the groups (at least two)."""

    groups: tuple[tuple[int, ...], ...]

    def target(self) -> str:
        """``A,B|C``."""
        return "|".join(",".join(map(str, group)) for group in self.groups)

    def nodes(self) -> tuple[int, ...]:
        """Every node of every group."""
        return tuple(n for group in self.groups for n in group)


class Block(Fault, frozen=True, kw_only=True, tag="block"):
    """Cut the one-way link ``src`` -> ``dst``."""

    src: int
    dst: int

    def target(self) -> str:
        """``A>B``."""
        return f"{self.src}>{self.dst}"

    def nodes(self) -> tuple[int, ...]:
        """Both ends of the link."""
        return (self.src, self.dst)


class Heal(Fault, frozen=True, kw_only=True, tag="heal"):
    """Restore every link."""

    def render(self) -> str:
        """``heal@T``."""
        return f"heal@{self.at_ms}"


FaultSpec = Crash | Shutdown | Restart | Wipe | Pause | Partition | Isolate | Block | Heal
"""One fault of any kind."""

_ON_NODE: dict[str, type[Crash | Shutdown | Restart | Wipe | Isolate]] = {
    "crash": Crash, "shutdown": Shutdown, "restart": Restart, "wipe": Wipe,
    "isolate": Isolate}

Resolve = Callable[[str], NodeRef]
"""Turns a node word into a node (raising the caller's one-line error if it names none)."""


def _number(what: str, text: str, maximum: int, item: str) -> int:
    """A non-negative integer of at most ``maximum``, checked before it is converted."""
    if not text.isdigit() or not text.isascii():
        raise FaultError(f"{what} must be a number, got {_short(text)} in {_short(item)}")
    if len(text) > len(str(maximum)) or int(text) > maximum:
        raise FaultError(f"{what} must be at most {maximum}, got {_short(text)} in "
                         f"{_short(item)}")
    return int(text)


def _short(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:12]!r}... ({len(text)} characters)"


def language_node(allow_leader: bool, item: str = "") -> Resolve:
    """The fault language's node words: a node id, or ``leader`` where the kind allows."""
    def resolve(word: str) -> NodeRef:
        if word == LEADER:
            if not allow_leader:
                raise FaultError(f"this fault needs a node id, not leader, in {_short(item)}")
            return "leader"
        return _number("a node id", word, MAX_NODE_ID, item or word)
    return resolve


def parse_groups(text: str, resolve: Resolve, example: str = "0,1|2") -> list[list[int]]:
    """Groups ``A,B|C`` of distinct nodes; ``resolve`` turns each word into a node id."""
    groups: list[list[int]] = []
    seen: set[int] = set()
    for part in text.split("|"):
        group = []
        for word in part.split(","):
            if not word:
                raise FaultError(f"empty node in {_short(text)}: write e.g. {example}")
            node = resolve(word)
            if node == LEADER:
                raise FaultError(f"a partition names node ids, not leader, in {_short(text)}")
            node_id = int(node)
            if node_id in seen:
                raise FaultError(f"node {node_id} is in two groups of {_short(text)}")
            seen.add(node_id)
            group.append(node_id)
        groups.append(group)
    return groups


def parse_fault_target(kind: str, target: str, at_ms: int = 0, duration_ms: int | None = None,
                       resolve: Resolve | None = None, item: str = "") -> FaultSpec:
    """The fault ``kind`` on ``target`` at ``at_ms``: the one parser of fault targets.

    ``resolve`` turns node words into nodes (default: the fault language's, a
    number or ``leader``). Raises FaultError (one line) when malformed.
    """
    item = item or target
    if kind not in KINDS:
        raise FaultError(f"unknown fault kind {kind!r} in {_short(item)}; kinds: "
                         f"{', '.join(KINDS)}")
    if (duration_ms is None) == (kind == "pause"):
        raise FaultError(f"pause needs a duration: pause:NODE@T+D in {_short(item)}"
                         if kind == "pause" else
                         f"only pause takes a +duration, in {_short(item)}")
    if kind == "heal":
        if target:
            raise FaultError(f"heal takes no target, in {_short(item)}; expected heal@T")
        return Heal(at_ms=at_ms)
    if kind == "partition":
        groups = parse_groups(target, resolve or language_node(False, item))
        if len(groups) < 2:
            raise FaultError(f"a partition needs two groups A,B|C, in {_short(item)}")
        return Partition(at_ms=at_ms, groups=tuple(tuple(g) for g in groups))
    if kind == "block":
        src, arrow, dst = target.partition(">")
        node_of = resolve or language_node(False, item)
        ends = [node_of(src), node_of(dst)] if arrow else []
        if not arrow or LEADER in ends:
            raise FaultError(f"bad target {_short(target)} for block in {_short(item)}; "
                             f"expected block:A>B@T")
        return Block(at_ms=at_ms, src=int(ends[0]), dst=int(ends[1]))
    node = (resolve or language_node(kind != "restart", item))(target)
    if kind == "pause":
        return Pause(at_ms=at_ms, node=node, duration_ms=duration_ms or 0)
    return _ON_NODE[kind](at_ms=at_ms, node=node)


def parse_fault(text: str) -> FaultSpec:
    """One fault from the fault language; raises FaultError (a ConfigError) if malformed."""
    item = text.strip()
    head, at, when = item.rpartition("@")
    if not at:
        raise FaultError(f"malformed fault {_short(item)}; expected KIND:TARGET@TIME "
                         f"(kinds: {', '.join(KINDS)})")
    time_text, plus, duration_text = when.partition("+")
    at_ms = _number("the time", time_text, MAX_FAULT_MS, item)
    duration = _number("the duration", duration_text, MAX_FAULT_MS, item) if plus else None
    kind, colon, target = head.partition(":")
    if not colon and kind != "heal":
        raise FaultError(f"malformed fault {_short(item)}; expected KIND:TARGET@TIME "
                         f"(kinds: {', '.join(KINDS)})")
    return parse_fault_target(kind, target, at_ms, duration, item=item)


def parse_faults(items: Sequence[str]) -> tuple[FaultSpec, ...]:
    """Faults from several items, each possibly holding ``;``-separated faults."""
    specs = []
    for item in items:
        for part in item.split(";"):
            if part.strip():
                specs.append(parse_fault(part))
    return tuple(sorted(specs, key=lambda f: f.at_ms))


def fault_nodes(spec: FaultSpec) -> list[int]:
    """The node ids a fault names (``leader`` names none until it fires)."""
    return list(spec.nodes())


def fault_record(spec: FaultSpec) -> dict[str, Any]:
    """The flat form traces show: ``kind``, ``at_ms``, ``target``, ``duration_ms``."""
    return {"kind": spec.kind, "at_ms": spec.at_ms, "target": spec.target(),
            "duration_ms": spec.duration_ms if isinstance(spec, Pause) else 0}


def config_record(config: msgspec.Struct) -> dict[str, Any]:
    """A configuration with a ``faults`` field as builtins, each fault in its flat form."""
    out: dict[str, Any] = msgspec.to_builtins(config)
    out["faults"] = [fault_record(f) for f in getattr(config, "faults", ())]
    return out


def random_faults(rng: random.Random, count: int, voters: list[int], nodes: list[int],
                  start_ms: int, end_ms: int) -> tuple[FaultSpec, ...]:
    """``count`` faults drawn from ``rng`` between start and end, each undone before the end."""
    specs: list[FaultSpec] = []
    if end_ms - start_ms < 10:
        return ()
    span = end_ms - start_ms
    for _ in range(count):
        at = start_ms + rng.randrange(span // 2)
        back = at + 1 + rng.randrange(max(1, span // 4))
        kind = rng.choice(("crash", "crash", "shutdown", "partition", "isolate", "pause"))
        node = rng.choice(nodes)
        target: NodeRef = "leader" if rng.random() < 0.5 and kind != "partition" else node
        if kind in ("crash", "shutdown"):
            specs.append(_ON_NODE[kind](at_ms=at, node=target))
            if target == LEADER:
                # restart whichever node this hits: the restart fault names every voter
                specs.extend(Restart(at_ms=back, node=v) for v in voters)
            else:
                specs.append(Restart(at_ms=back, node=target))
        elif kind == "pause":
            specs.append(Pause(at_ms=at, node=target, duration_ms=back - at))
        elif kind == "isolate":
            specs.append(Isolate(at_ms=at, node=target))
            specs.append(Heal(at_ms=back))
        else:
            members = list(nodes)
            rng.shuffle(members)
            cut = 1 + rng.randrange(max(1, len(members) - 1))
            left, right = sorted(members[:cut]), sorted(members[cut:])
            if not right:
                continue
            specs.append(Partition(at_ms=at, groups=(tuple(left), tuple(right))))
            specs.append(Heal(at_ms=back))
    return tuple(sorted(specs, key=lambda f: f.at_ms))
