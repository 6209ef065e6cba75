"""Lab time and faults: tick, run-until, crash, shutdown, restart, partition, heal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shell.commands.base import Command, integer, parse_args
from shell.errors import CommandError
from shell.lab import Lab
from sim.faults import (
    Crash,
    FaultError,
    FaultSpec,
    Heal,
    Isolate,
    Partition,
    Restart,
    Shutdown,
    parse_fault_target,
    parse_groups,
)
from sim.world import NodeStatus

if TYPE_CHECKING:
    from shell.session import Session

DEFAULT_TIMEOUT_MS = 30_000
"""How long ``run-until`` runs before it gives up (simulated ms)."""
TARGETS = ("leader", "idle", "open-txn")
"""What ``run-until`` waits for."""


def _stopped(lab: Lab) -> None:
    violation = lab.cluster.sim.violation
    if violation is not None:
        raise CommandError(f"the simulation stopped at {lab.now} ms: an invariant was "
                           f"violated ({violation.invariant})")


def run_tick(session: Session, args: list[str]) -> None:
    """``tick MS``."""
    values, _ = parse_args(TICK, args, positional=("MS",))
    duration = integer(0, 3_600_000)("MS", values[0])
    lab = session.require_lab()
    _stopped(lab)
    lab.run_until(lambda: False, duration)
    _stopped(lab)
    session.out(f"now {lab.now} ms")


def run_run_until(session: Session, args: list[str]) -> None:
    """``run-until leader|idle|open-txn [timeout=MS]``."""
    values, options = parse_args(RUN_UNTIL, args, positional=("CONDITION",),
                                 options={"timeout": integer(0, 3_600_000)})
    what = values[0]
    lab = session.require_lab()
    if what not in TARGETS:
        raise CommandError(f"unknown condition {what!r}: give one of {', '.join(TARGETS)}")
    _stopped(lab)
    timeout = options.get("timeout", DEFAULT_TIMEOUT_MS)
    cluster = lab.cluster
    start = lab.now
    predicate = {"leader": lambda: cluster.active_controller() is not None,
                 "idle": lab.idle, "open-txn": cluster.transaction_window_open}[what]
    reached = lab.run_until(predicate, timeout)
    _stopped(lab)
    if not reached:
        why = {"leader": "no controller is active",
               "open-txn": "no transaction is open in the committed log",
               "idle": lab.why_not_idle()}[what]
        raise CommandError(f"timed out after {timeout} ms (now {lab.now} ms): {why}")
    took = f"at {lab.now} ms (after {lab.now - start} ms)"
    active = cluster.active_controller()
    if what == "open-txn":
        txn = lab.open_transaction()
        assert txn is not None
        session.out(f"{took}: the transaction begun at offset {txn[0]} ({txn[1]}) is open: "
                    f"committed through offset {cluster.history.end - 1}, no End or Abort "
                    f"committed")
    elif active is not None:
        session.out(f"{took}: {what}; controller {active.node_id} leads epoch "
                    f"{active.claimed_epoch}")


def _parse(lab: Lab, kind: str, target: str) -> FaultSpec:
    """The shell verb's fault, by the one fault parser (sim/faults.py), at the current time."""
    try:
        return parse_fault_target(kind, target, lab.now, resolve=lab.resolve)
    except FaultError as exc:
        raise CommandError(exc.message) from None


def _node(fault: FaultSpec) -> int:
    assert isinstance(fault, Crash | Shutdown | Restart)
    return int(fault.node)  # the shell resolves ``leader`` to a node id when parsing


def _target(session: Session, spec: Command, verb: str, args: list[str]
            ) -> tuple[Lab, int, NodeStatus]:
    """The lab, the node ``verb NODE`` names (parsed as that fault) and its status now."""
    values, _ = parse_args(spec, args, positional=("NODE",))
    lab = session.require_lab()
    _stopped(lab)
    node_id = _node(_parse(lab, verb, values[0]))
    return lab, node_id, lab.status_of(node_id)


def run_crash(session: Session, args: list[str]) -> None:
    """``crash NODE``."""
    lab, node_id, status = _target(session, CRASH, "crash", args)
    if status in (NodeStatus.CRASHED, NodeStatus.STOPPED):
        raise CommandError(f"{lab.node_name(node_id)} is already {status.value}")
    slot = lab.cluster.sim.slots[node_id]
    role = ""
    if slot.raft is not None and lab.cluster.sim.leader_id() == node_id:
        role = f" (the leader of epoch {slot.raft.epoch})"
    lab.cluster.sim.crash(node_id)
    session.out(f"crashed {lab.node_name(node_id)}{role} at {lab.now} ms; unflushed writes "
                f"are lost")


def run_shutdown(session: Session, args: list[str]) -> None:
    """``shutdown NODE``."""
    lab, node_id, status = _target(session, SHUTDOWN, "shutdown", args)
    if status is not NodeStatus.RUNNING:
        raise CommandError(f"{lab.node_name(node_id)} is {status.value}, not running")
    lab.cluster.sim.shutdown(node_id)
    if lab.status_of(node_id) is NodeStatus.RUNNING:
        session.out(f"shutting down {lab.node_name(node_id)} at {lab.now} ms: a controlled "
                    f"shutdown first (it stops once the controller has moved its "
                    f"leaderships, or its timeout passes)")
    else:
        session.out(f"shut down {lab.node_name(node_id)} at {lab.now} ms; its writes are "
                    f"flushed")


def run_restart(session: Session, args: list[str]) -> None:
    """``restart NODE``."""
    values, _ = parse_args(RESTART, args, positional=("NODE",))
    lab = session.require_lab()
    _stopped(lab)
    node_id = _node(_parse(lab, "restart", values[0]))
    status = lab.status_of(node_id)
    if status not in (NodeStatus.CRASHED, NodeStatus.STOPPED):
        raise CommandError(f"{lab.node_name(node_id)} is {status.value}, not down")
    lab.cluster.sim.restart(node_id)
    log = lab.cluster.sim.slots[node_id].storage.log
    session.out(f"restarted {lab.node_name(node_id)} from its disk (log end offset "
                f"{log.end_offset}) at {lab.now} ms")


def run_partition(session: Session, args: list[str]) -> None:
    """``partition A,B|C`` or ``partition NODE``."""
    values, _ = parse_args(PARTITION, args, positional=("GROUPS",))
    lab = session.require_lab()
    _stopped(lab)
    text = values[0]
    try:
        groups = [sorted(g) for g in parse_groups(text, lab.resolve,
                                                  example="3000,0|3001,3002,1")]
    except FaultError as exc:
        raise CommandError(exc.message) from None
    seen = {n for g in groups for n in g}
    everyone = sorted(lab.cluster.sim.slots)
    rest = [n for n in everyone if n not in seen]
    if rest:
        groups.append(rest)
    if len(groups) < 2:
        raise CommandError(f"{text!r} names every node: nothing to cut")
    sim = lab.cluster.sim
    if len(groups) == 2 and len(groups[0]) == 1 and "|" not in text:
        sim.apply_fault(Isolate(at_ms=sim.now, node=groups[0][0]))
    else:
        sim.apply_fault(Partition(at_ms=sim.now, groups=tuple(tuple(g) for g in groups)))
    shown = " | ".join(",".join(map(str, g)) for g in groups)
    session.out(f"partitioned at {lab.now} ms: {shown} (links between groups are cut)")


def run_heal(session: Session, args: list[str]) -> None:
    """``heal``."""
    parse_args(HEAL, args)
    lab = session.require_lab()
    _stopped(lab)
    lab.cluster.sim.apply_fault(Heal(at_ms=lab.now))
    session.out(f"healed at {lab.now} ms: every link works again")


TICK = Command(
    "tick", "tick MS", "let simulated time pass",
    "Runs the simulation for MS simulated milliseconds (0-3600000). Operations whose "
    "outcome becomes known are reported.\n\nExample: tick 500", run_tick)
RUN_UNTIL = Command(
    "run-until", "run-until leader|idle|open-txn [timeout=MS]", "run until a condition holds",
    "Runs the simulation until the condition holds, at most timeout=MS simulated "
    "milliseconds (default 30000); a timeout is an error, never a hang.\n\n"
    "leader    a controller is active (elected and has claimed its epoch)\n"
    "idle      no operation pending, no transaction open, and every running node the "
    "leader can reach has applied or published everything committed (periodic NoOps aside); "
    "from metadata.version 3.7-IV0 also every such controller's current process is "
    "registered in the leader's committed image (KIP-919: a restarted controller registers "
    "again)\n"
    "open-txn  a Begin is committed and its End/Abort is not: the window in which a "
    "transaction is partially committed (brokers buffer it and show none of it)\n\n"
    "Example: run-until open-txn timeout=5000", run_run_until, words=TARGETS,
    options=("timeout",))
CRASH = Command(
    "crash", "crash NODE", "crash a node (unflushed writes are lost)",
    "Crashes NODE at once: its process stops, its unflushed log writes are lost, whatever "
    "waited on it fails (an active controller's pending operations get NOT_CONTROLLER). "
    "NODE may be 'leader' or any node id, a broker's too: with heartbeats=on a crashed "
    "broker stops heartbeating, and once broker.session.timeout.ms (9000) has passed the "
    "active controller fences it and moves its partition leaderships to in-sync replicas "
    "(see status and cat /image/topics/byName/TOPIC/PARTITION).\n\nExample: crash leader",
    run_crash, completes="node")
SHUTDOWN = Command(
    "shutdown", "shutdown NODE", "shut a node down gracefully",
    "Stops NODE cleanly: a leader resigns and the log is flushed first. A running broker "
    "with heartbeats=on first asks the active controller for a controlled shutdown (its "
    "partition leaderships move, it leaves the ISRs) and stops when told to, or once "
    "its controlled shutdown timeout (30 s) passes; it keeps on its disk the broker epoch it held, "
    "which its next registration names (previousBrokerEpoch), so the controller counts its "
    "restart as clean (with eligible leader replicas on, it stays eligible). 'restart "
    "NODE' starts it again.\n\nExample: shutdown 1", run_shutdown, completes="node")
RESTART = Command(
    "restart", "restart NODE", "restart a crashed or shut down node from its disk",
    "Starts a crashed node again from what its disk holds; it catches up by fetching from "
    "the leader.\n\nExample: restart 3000", run_restart, completes="node")
PARTITION = Command(
    "partition", "partition A,B|C  or  partition NODE", "cut the network",
    "Cuts every link between groups of nodes; nodes not named form one more group. "
    "'partition NODE' isolates one node. Node ids or 'leader'. 'heal' restores every "
    "link.\n\nExample: partition 3000,0|3001,3002,1", run_partition, completes="node")
HEAL = Command("heal", "heal", "restore every network link",
               "Ends every partition and isolation.", run_heal)

FAULT_COMMANDS = (TICK, RUN_UNTIL, CRASH, SHUTDOWN, RESTART, PARTITION, HEAL)
"""Time and fault commands."""
