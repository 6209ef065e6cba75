"""An interpreter that drives :class:`raft.RaftNode` instances directly, one command a line.

In the spirit of etcd-io/raft's interaction tests: no simulator, no network
model, no scheduler. The interpreter holds the nodes, their storages, one
FIFO queue of messages in flight and one clock; nothing happens unless a
command says so. Messages a node sends wait in the queue until ``deliver``
(or ``stabilize``) hands them over; timers fire only when ``time``, ``tick``
or ``campaign`` moves the clock. Every random number comes from a
``random.Random`` seeded from the ``seed`` option, the node and its
incarnation.

After each command it prints what changed: every node whose state line
changed (see :func:`tests.raft.render.state`) and every message sent, under
the step (delivery, timer, request) that caused it.

Commands (ids are node ids; ``F`` is a message filter: ``1->2``, ``1->``,
``->2``, plus ``type=Fetch`` and ``count=N``):

``add-nodes N [voters=1,2,3] [seed=0] [election-timeout=..] [jitter=..]
[backoff-max=..] [fetch-timeout=..] [fetch-max-wait=..] [request-timeout=..]
[retry-backoff=..] [linger=..] [fetch-max-records=..] [pre-vote=true]``
    start nodes 1..N (all voters unless ``voters`` says otherwise; the rest
    observe) from their disks.
``disk ID [wipe] [batches=E:r+r,E:r] [flushed=N] [epoch=E] [voted=V] [leader=L]``
    before ``add-nodes`` or while ID is down: what ID's disk holds (``wipe``
    empties it first; batches are appended to the log).
``time T [nodes=..]`` / ``tick MS [nodes=..]``
    move the clock, firing every due timer in time order (of the listed
    nodes only, if given: the others are frozen meanwhile).
``campaign ID``
    move the clock to ID's next deadline, polling ID alone (ID times out first).
``deliver [F]`` / ``drop [F]``
    hand over (lose) the queued messages that match; messages sent meanwhile
    stay queued. ``stabilize`` delivers until the queue is empty.
``queue``
    list the queued messages.
``run T [nodes=..]``
    move the clock to T, delivering every message as soon as it is sent
    (``stabilize`` before each timer): a network without latency. With
    ``nodes``, only the timers of those nodes fire.
``partition G G ..`` / ``isolate ID`` / ``cut SRC->DST ..`` / ``heal``
    from now on, deliveries between groups (``1,2``) or over a cut link are
    lost; nodes not named in a partition form one more group.
``append ID a b ..`` / ``append ID records=a,b``, ``resign ID``,
``snapshot ID [end=N]``, ``flush ID``
    the state machine's requests.
``crash ID`` (unflushed appends and queued messages to and from ID are lost),
``restart ID``, ``status [ID..]``, ``log ID..``.

Any command takes the word ``quiet``: it then prints only errors and the
final state of each node that changed (for the set-up of a scenario).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import msgspec

from raft import (
    Batch,
    ElectionState,
    Envelope,
    NotLeaderError,
    RaftConfig,
    RaftLogError,
    RaftNode,
    RaftProtocolError,
    RaftStorage,
)
from tests.raft import render
from tests.raft.commands import Args, CommandError, Filter, parse_ids, parse_int

_EXPECTED_ERRORS = (CommandError, NotLeaderError, RaftProtocolError, RaftLogError, ValueError)

_CONFIG_OPTIONS = {
    "election-timeout": "election_timeout_ms",
    "jitter": "election_jitter_ms",
    "backoff-max": "election_backoff_max_ms",
    "fetch-timeout": "fetch_timeout_ms",
    "fetch-max-wait": "fetch_max_wait_ms",
    "request-timeout": "request_timeout_ms",
    "retry-backoff": "retry_backoff_ms",
    "linger": "append_linger_ms",
    "fetch-max-records": "fetch_max_records",
}

_MAX_STEPS = 10_000


class Interaction:
    """The nodes, disks, queue and clock a transcript drives; :meth:`execute` runs a line."""

    def __init__(self) -> None:
        self.now = 0
        self.seed = 0
        self.config = RaftConfig()
        self.voters: tuple[int, ...] = ()
        self.storages: dict[int, RaftStorage] = {}
        self.nodes: dict[int, RaftNode | None] = {}
        self.incarnations: dict[int, int] = {}
        self.queue: list[Envelope] = []
        self.groups: dict[int, int] | None = None
        self.cut_links: set[tuple[int, int]] = set()
        self.out: list[str] = []
        self._commands: dict[str, Callable[[Args], None]] = {
            "add-nodes": self._add_nodes, "disk": self._disk, "time": self._time,
            "tick": self._tick, "campaign": self._campaign, "deliver": self._deliver,
            "drop": self._drop, "stabilize": self._stabilize, "queue": self._queue,
            "partition": self._partition, "isolate": self._isolate, "heal": self._heal,
            "cut": self._cut, "run": self._run,
            "append": self._append, "resign": self._resign, "snapshot": self._snapshot,
            "flush": self._flush, "crash": self._crash, "restart": self._restart,
            "status": self._status, "log": self._log,
        }

    # ------------------------------------------------------------------ running
    def execute(self, line: str) -> list[str]:
        """Run one command; returns the lines it printed (errors as ``error: ...``)."""
        self.out = []
        try:
            args = Args.parse(line)
            handler = self._commands.get(args.name)
            if handler is None:
                raise CommandError(f"unknown command {args.name!r}")
            quiet = "quiet" in args.positional
            if quiet:
                args.positional.remove("quiet")
                before = self._states()
            handler(args)
            if quiet:
                self._summarize(before)
        except _EXPECTED_ERRORS as exc:
            self.out.append(f"error: {type(exc).__name__}: {exc}")
        if not self.out:
            self.out.append("ok")
        return self.out

    def _summarize(self, before: dict[int, str]) -> None:
        """Replace the output by errors and the final state of each node that changed."""
        errors = [line.strip() for line in self.out if line.strip().startswith("error:")]
        self.out = [*errors, *(line for node_id, line in self._states().items()
                               if before.get(node_id) != line)]

    def _node(self, node_id: int) -> RaftNode:
        if node_id not in self.nodes:
            raise CommandError(f"no node {node_id}")
        node = self.nodes[node_id]
        if node is None:
            raise CommandError(f"node {node_id} is down")
        return node

    def _one_id(self, args: Args) -> int:
        if len(args.positional) != 1:
            raise CommandError(f"{args.name}: expected one node id")
        return parse_int(args.positional[0], "node id")

    def _states(self) -> dict[int, str]:
        return {i: render.state(n) for i, n in self.nodes.items() if n is not None}

    def _step(self, header: str, action: Callable[[], object]) -> None:
        """Run ``action``, printing ``header`` and under it what changed and what was sent."""
        before = self._states()
        self.out.append(header)
        try:
            action()
        except (NotLeaderError, RaftProtocolError, RaftLogError, ValueError) as exc:
            self.out.append(f"  error: {type(exc).__name__}: {exc}")
        self._report(before)

    def _report(self, before: dict[int, str]) -> None:
        for node_id, line in self._states().items():
            if before.get(node_id) != line:
                self.out.append(f"  {line}")
        for node_id in sorted(self.nodes):
            node = self.nodes[node_id]
            if node is None:
                continue
            for env in node.drain_outbox():
                self.queue.append(env)
                self.out.append(f"  {render.message(env)}")

    # ------------------------------------------------------------------ setup
    def _add_nodes(self, args: Args) -> None:
        args.check_options(("voters", "seed", "pre-vote", *_CONFIG_OPTIONS))
        if self.nodes:
            raise CommandError("add-nodes: the nodes exist already")
        count = self._one_id(args)
        voters = args.ids_option("voters") or tuple(range(1, count + 1))
        self.seed = args.int_option("seed", 0) or 0
        changes: dict[str, object] = {
            field: parse_int(args.options[option], option)
            for option, field in _CONFIG_OPTIONS.items() if option in args.options
        }
        if "pre-vote" in args.options:
            changes["pre_vote"] = args.options["pre-vote"] == "true"
        self.config = msgspec.structs.replace(RaftConfig(), **changes).validate()
        self.voters = voters
        for node_id in range(1, count + 1):
            self.storages.setdefault(node_id, RaftStorage())
            self.incarnations[node_id] = 0
            self.nodes[node_id] = None
        for node_id in range(1, count + 1):
            self._boot(node_id)

    def _boot(self, node_id: int) -> None:
        rng = random.Random(f"raft-interaction/{self.seed}/{node_id}/{self.incarnations[node_id]}")

        def start() -> None:
            self.nodes[node_id] = RaftNode(
                node_id, self.voters, self.storages[node_id], rng, self.now,
                config=self.config, incarnation=self.incarnations[node_id])

        self._step(f"start {node_id}", start)

    def _disk(self, args: Args) -> None:
        args.check_options(("batches", "flushed", "epoch", "voted", "leader"))
        if not args.positional:
            raise CommandError("disk: expected a node id")
        node_id = parse_int(args.positional[0], "node id")
        if self.nodes.get(node_id) is not None:
            raise CommandError(f"disk: node {node_id} is running")
        storage = self.storages.setdefault(node_id, RaftStorage())
        if args.positional[1:] == ["wipe"]:
            storage.wipe()
        elif args.positional[1:]:
            raise CommandError(f"disk: unexpected {' '.join(args.positional[1:])!r}")
        log = storage.log
        for spec in filter(None, args.options.get("batches", "").split(",")):
            epoch, colon, records = spec.partition(":")
            if not colon or not records:
                raise CommandError(f"disk: a batch is EPOCH:RECORD+RECORD, got {spec!r}")
            log.append(Batch(log.end_offset, parse_int(epoch, "epoch"), tuple(records.split("+"))),
                       flushed=True)
        flushed = args.int_option("flushed")
        if flushed is not None:
            log.flushed_end = flushed
        election = storage.election
        storage.write_election(ElectionState(
            args.int_option("epoch", election.epoch) or 0,
            args.int_option("voted", election.voted_id),
            args.int_option("leader", election.leader_id)))
        self.out.append(f"{node_id} disk: {self._describe_disk(storage)}")

    @staticmethod
    def _describe_disk(storage: RaftStorage) -> str:
        e = storage.election
        log = storage.log
        batches = " ".join(render.batch(b) for b in log.batches) or "(empty)"
        return (f"epoch={e.epoch} voted={render.opt(e.voted_id)} "
                f"leader={render.opt(e.leader_id)} log {batches}")

    # ------------------------------------------------------------------ time
    def _time(self, args: Args) -> None:
        args.check_options(("nodes",))
        if len(args.positional) != 1:
            raise CommandError("time: expected the time in ms")
        self._advance(parse_int(args.positional[0], "time"), args.ids_option("nodes"))

    def _tick(self, args: Args) -> None:
        args.check_options(("nodes",))
        if len(args.positional) != 1:
            raise CommandError("tick: expected a duration in ms")
        duration = parse_int(args.positional[0], "duration")
        self._advance(self.now + duration, args.ids_option("nodes"))

    def _advance(self, target: int, only: tuple[int, ...] | None) -> None:
        if target < self.now:
            raise CommandError(f"time cannot go back from {self.now} to {target}")
        for _ in range(_MAX_STEPS):
            due = self._next_due(target, only)
            if due is None:
                break
            self._fire(*due)
        else:
            raise CommandError(f"more than {_MAX_STEPS} timers before {target}")
        self.now = target

    def _next_due(self, target: int, only: tuple[int, ...] | None) -> tuple[int, int] | None:
        """(time, node) of the earliest timer due by ``target``; overdue ones fire now."""
        due: list[tuple[int, int]] = []
        for node_id, node in self.nodes.items():
            if node is None or (only is not None and node_id not in only):
                continue
            deadline = node.next_deadline()
            if deadline is not None and deadline <= target:
                due.append((max(deadline, self.now), node_id))
        return min(due) if due else None

    def _fire(self, at: int, node_id: int) -> None:
        self.now = at
        node = self._node(node_id)
        self._step(f"t={at} poll {node_id}", functools.partial(node.poll, at))

    def _run(self, args: Args) -> None:
        args.check_options(("nodes",))
        only = args.ids_option("nodes")
        if len(args.positional) != 1:
            raise CommandError("run: expected the time in ms")
        target = parse_int(args.positional[0], "time")
        if target < self.now:
            raise CommandError(f"time cannot go back from {self.now} to {target}")
        for _ in range(_MAX_STEPS):
            if self.queue:
                self._deliver_one(self.queue.pop(0))
                continue
            due = self._next_due(target, only)
            if due is None:
                break
            self._fire(*due)
        else:
            raise CommandError(f"run: still busy after {_MAX_STEPS} steps")
        self.now = target

    def _campaign(self, args: Args) -> None:
        args.check_options(())
        node_id = self._one_id(args)
        deadline = self._node(node_id).next_deadline()
        if deadline is None:
            raise CommandError(f"campaign: node {node_id} has no timer")
        self._advance(max(deadline, self.now), (node_id,))

    # ------------------------------------------------------------------ messages
    def _take(self, args: Args) -> list[Envelope]:
        wanted = Filter.parse(args)
        taken: list[Envelope] = []
        kept: list[Envelope] = []
        for env in self.queue:
            if wanted.matches(env) and (wanted.count is None or len(taken) < wanted.count):
                taken.append(env)
            else:
                kept.append(env)
        self.queue = kept
        return taken

    def _deliver(self, args: Args) -> None:
        taken = self._take(args)
        if not taken:
            self.out.append("no message matches")
        for env in taken:
            self._deliver_one(env)

    def _deliver_one(self, env: Envelope) -> None:
        header = render.message(env)
        node = self.nodes.get(env.dst)
        if node is None:
            self.out.append(header)
            self.out.append(f"  dropped: {env.dst} is down")
            return
        if (self.groups is not None and self.groups.get(env.src) != self.groups.get(env.dst)) \
                or (env.src, env.dst) in self.cut_links:
            self.out.append(header)
            self.out.append("  dropped: partitioned")
            return
        self._step(header, lambda: node.handle(env, self.now))

    def _drop(self, args: Args) -> None:
        taken = self._take(args)
        if not taken:
            self.out.append("no message matches")
        for env in taken:
            self.out.append(f"dropped {render.message(env)}")

    def _stabilize(self, args: Args) -> None:
        args.check_options(())
        steps = 0
        while self.queue:
            steps += 1
            if steps > _MAX_STEPS:
                raise CommandError(f"stabilize: still busy after {_MAX_STEPS} deliveries")
            self._deliver_one(self.queue.pop(0))

    def _queue(self, args: Args) -> None:
        args.check_options(())
        for env in self.queue:
            self.out.append(render.message(env))
        if not self.queue:
            self.out.append("(empty)")

    def _partition(self, args: Args) -> None:
        args.check_options(())
        groups: dict[int, int] = {}
        for index, group in enumerate(args.positional, start=1):
            for node_id in parse_ids(group):
                groups[node_id] = index
        for node_id in self.nodes:
            groups.setdefault(node_id, 0)
        self.groups = groups
        self.out.append("partitioned: " + " | ".join(
            ",".join(str(n) for n in sorted(self.nodes) if groups[n] == g)
            for g in sorted(set(groups.values()))))

    def _isolate(self, args: Args) -> None:
        self._partition(Args("isolate", [str(self._one_id(args))], args.options))

    def _cut(self, args: Args) -> None:
        args.check_options(())
        for word in args.positional:
            src, arrow, dst = word.partition("->")
            if not arrow:
                raise CommandError(f"cut: expected SRC->DST, got {word!r}")
            self.cut_links.add((parse_int(src, "source"), parse_int(dst, "destination")))
        self.out.append("cut: " + " ".join(f"{a}->{b}" for a, b in sorted(self.cut_links)))

    def _heal(self, args: Args) -> None:
        args.check_options(())
        self.groups = None
        self.cut_links = set()
        self.out.append("healed")

    # ------------------------------------------------------------------ requests
    def _append(self, args: Args) -> None:
        args.check_options(("records", "epoch"))
        if not args.positional:
            raise CommandError("append: expected a node id")
        node_id = parse_int(args.positional[0], "node id")
        node = self._node(node_id)
        records = args.positional[1:] + [r for r in args.options.get("records", "").split(",")
                                         if r]
        epoch = args.int_option("epoch", node.epoch) or 0

        def append() -> None:
            last = node.append(records, epoch, self.now)
            self.out.append(f"  appended at {last - len(records) + 1}-{last}")

        self._step(f"append {node_id} epoch={epoch} {' '.join(records)}", append)

    def _resign(self, args: Args) -> None:
        args.check_options(())
        node = self._node(self._one_id(args))
        self._step(f"resign {node.id}", lambda: node.resign(self.now))

    def _flush(self, args: Args) -> None:
        args.check_options(())
        node = self._node(self._one_id(args))
        self._step(f"flush {node.id}", lambda: node.flush_all(self.now))

    def _snapshot(self, args: Args) -> None:
        args.check_options(("end",))
        node = self._node(self._one_id(args))
        end = args.int_option("end", node.high_watermark)
        if end is None:
            raise CommandError(f"snapshot: node {node.id} has no high watermark")

        def snapshot() -> None:
            snap = node.create_snapshot(end, (f"state@{end}",), self.now)
            sid = snap.snapshot_id
            self.out.append(f"  snapshot {sid.end_offset}@e{sid.epoch}")

        self._step(f"snapshot {node.id} end={end}", snapshot)

    # ------------------------------------------------------------------ faults
    def _crash(self, args: Args) -> None:
        args.check_options(())
        node_id = self._one_id(args)
        self._node(node_id)
        before = self._states()
        self.nodes[node_id] = None
        self.storages[node_id].crash()
        self.out.append(f"crash {node_id}: {self._describe_disk(self.storages[node_id])}")
        self._report(before)
        lost = [e for e in self.queue if node_id in (e.src, e.dst)]
        self.queue = [e for e in self.queue if node_id not in (e.src, e.dst)]
        for env in lost:
            self.out.append(f"  dropped {render.message(env)}")

    def _restart(self, args: Args) -> None:
        args.check_options(())
        node_id = self._one_id(args)
        if node_id not in self.nodes:
            raise CommandError(f"no node {node_id}")
        if self.nodes[node_id] is not None:
            raise CommandError(f"restart: node {node_id} is running")
        self.incarnations[node_id] += 1
        self._boot(node_id)

    # ------------------------------------------------------------------ views
    def _status(self, args: Args) -> None:
        args.check_options(())
        wanted = [parse_int(p, "node id") for p in args.positional] or sorted(self.nodes)
        for node_id in wanted:
            if node_id not in self.nodes:
                raise CommandError(f"no node {node_id}")
            node = self.nodes[node_id]
            if node is None:
                self.out.append(f"{node_id} down")
            else:
                self.out.append(f"{render.state(node)} next={render.opt(node.next_deadline())}")

    def _log(self, args: Args) -> None:
        args.check_options(())
        for node_id in (parse_int(p, "node id") for p in args.positional):
            if node_id not in self.storages:
                raise CommandError(f"no node {node_id}")
            log = self.storages[node_id].log
            line = f"{node_id}:"
            if log.snapshot is not None:
                sid = log.snapshot.snapshot_id
                line += f" snapshot={sid.end_offset}@e{sid.epoch}"
            line += " " + (" ".join(render.batch(b) for b in log.batches) or "(empty)")
            self.out.append(line)
