"""Fault specifications: written explicitly or drawn from the seed.

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
"""

from __future__ import annotations

import random
import re

import msgspec

from raft.config import ConfigError

KINDS = ("crash", "shutdown", "restart", "wipe", "pause", "partition", "isolate", "block",
         "heal")
"""Every fault kind."""


class FaultSpec(msgspec.Struct, frozen=True):
    """One fault: ``kind`` at ``at_ms`` on ``target`` (see the module docs)."""

    kind: str
    at_ms: int
    target: str = ""
    duration_ms: int = 0

    def render(self) -> str:
        """The fault in the fault language (parse(render()) == self)."""
        if self.kind == "heal":
            return f"heal@{self.at_ms}"
        if self.kind == "pause":
            return f"pause:{self.target}@{self.at_ms}+{self.duration_ms}"
        return f"{self.kind}:{self.target}@{self.at_ms}"


_NODE = r"(?:\d+|leader)"
_PATTERNS: dict[str, re.Pattern[str]] = {
    "crash": re.compile(rf"({_NODE})"),
    "shutdown": re.compile(rf"({_NODE})"),
    "restart": re.compile(r"(\d+)"),
    "wipe": re.compile(rf"({_NODE})"),
    "pause": re.compile(rf"({_NODE})"),
    "partition": re.compile(r"(\d+(?:,\d+)*(?:\|\d+(?:,\d+)*)+)"),
    "isolate": re.compile(rf"({_NODE})"),
    "block": re.compile(r"(\d+>\d+)"),
}


def parse_fault(text: str) -> FaultSpec:
    """One fault from the fault language; raises ConfigError("faults", ...) when malformed."""
    item = text.strip()
    if item.startswith("heal"):
        m = re.fullmatch(r"heal@(\d+)", item)
        if not m:
            raise ConfigError("faults", f"malformed fault {item!r}; expected heal@T")
        return FaultSpec("heal", int(m.group(1)))
    m = re.fullmatch(r"([a-z]+):([^@]+)@(\d+)(?:\+(\d+))?", item)
    if not m:
        raise ConfigError("faults", f"malformed fault {item!r}; expected KIND:TARGET@TIME "
                                    f"(kinds: {', '.join(KINDS)})")
    kind, target, at, duration = m.group(1), m.group(2), int(m.group(3)), m.group(4)
    pattern = _PATTERNS.get(kind)
    if pattern is None:
        raise ConfigError("faults", f"unknown fault kind {kind!r} in {item!r}; "
                                    f"kinds: {', '.join(KINDS)}")
    if not pattern.fullmatch(target):
        raise ConfigError("faults", f"bad target {target!r} for {kind} in {item!r}")
    if kind == "pause":
        if duration is None:
            raise ConfigError("faults", f"pause needs a duration: pause:NODE@T+D in {item!r}")
        return FaultSpec(kind, at, target, int(duration))
    if duration is not None:
        raise ConfigError("faults", f"only pause takes a +duration, in {item!r}")
    return FaultSpec(kind, at, target)


def parse_faults(items: list[str]) -> tuple[FaultSpec, ...]:
    """Faults from several items, each possibly holding ``;``-separated faults."""
    specs = []
    for item in items:
        for part in item.split(";"):
            if part.strip():
                specs.append(parse_fault(part))
    return tuple(sorted(specs, key=lambda f: f.at_ms))


def fault_nodes(spec: FaultSpec) -> list[int]:
    """The node ids a fault names (``leader`` names none until it fires)."""
    return [int(n) for n in re.findall(r"\d+", spec.target)]


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
        target = "leader" if rng.random() < 0.5 and kind != "partition" else str(node)
        if kind in ("crash", "shutdown"):
            specs.append(FaultSpec(kind, at, target))
            if target == "leader":
                # restart whichever node this hits: the restart fault names every voter
                specs.extend(FaultSpec("restart", back, str(v)) for v in voters)
            else:
                specs.append(FaultSpec("restart", back, target))
        elif kind == "pause":
            specs.append(FaultSpec("pause", at, target, back - at))
        elif kind == "isolate":
            specs.append(FaultSpec("isolate", at, target))
            specs.append(FaultSpec("heal", back))
        else:
            members = list(nodes)
            rng.shuffle(members)
            cut = 1 + rng.randrange(max(1, len(members) - 1))
            left, right = sorted(members[:cut]), sorted(members[cut:])
            if not right:
                continue
            groups = ",".join(map(str, left)) + "|" + ",".join(map(str, right))
            specs.append(FaultSpec("partition", at, groups))
            specs.append(FaultSpec("heal", back))
    return tuple(sorted(specs, key=lambda f: f.at_ms))
