"""A readable timeline of a cluster run: who saw what, and when.

A monitor that notes leadership changes, controller activations (the failover
Abort), transaction markers as they commit, what each broker publishes, and
faults, each with its simulated time. It only observes.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from controller import QuorumController
from metadata.schema import AbortTransactionRecord
from raft import Role
from sim.invariants.transactions import Publication, TransactionInvariants
from sim.world import Monitor, NodeSlot, Simulation


class TraceNotes(Monitor):
    """Writes notes into a cluster run's trace file for :mod:`sim.timeline_html`.

    After every event: a ``node`` note when a node's status, raft role, epoch
    or leader changed; ``txn`` notes when a Begin, End or Abort commits;
    ``active`` when a controller activates (with its first writes);
    ``publish`` when a broker publishes an image; ``fault`` when a fault is
    applied (with the node it resolved to). Notes do not enter the trace's
    fingerprint (see :mod:`sim.trace`).
    """

    def __init__(self, txn: TransactionInvariants) -> None:
        self.txn = txn
        self._nodes: dict[int, tuple[str, str, int, int | None]] = {}
        self._transactions_seen = 0
        self._closed_seen = 0
        self._publications_seen = 0
        self._faults_seen = 0
        self._activations: dict[int, int] = {}

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Note what the last event changed."""
        trace, now = sim.trace, sim.now
        for slot in sim.slots.values():
            raft = slot.raft
            state = (slot.status.value, raft.role.value if raft else "", raft.epoch if raft else -1,
                     raft.leader_id if raft else None)
            if self._nodes.get(slot.node_id) != state:
                self._nodes[slot.node_id] = state
                trace.note({"t": now, "note": "node", "node": slot.node_id, "status": state[0],
                            "role": state[1], "epoch": state[2], "leader": state[3]})
            for app in slot.apps:
                if isinstance(app, QuorumController):
                    self._activated(sim, slot.node_id, app)
        while self._faults_seen < len(sim.faults_applied):
            trace.note({"t": now, "note": "fault",
                        "what": sim.faults_applied[self._faults_seen]})
            self._faults_seen += 1
        self._markers(sim)
        publications = self.txn.on_publish
        for pub in publications[self._publications_seen:]:
            trace.note({"t": pub.at_ms, "note": "publish", "node": pub.node_id,
                        "offset": pub.image.offset, "topics": len(pub.image.topics_by_name)})
        self._publications_seen = len(publications)

    def _activated(self, sim: Simulation, node_id: int, controller: QuorumController) -> None:
        seen = self._activations.get(node_id, 0)
        for epoch, records in controller.activations[seen:]:
            kinds = sorted({type(r).__name__ for r in records})
            sim.trace.note({"t": sim.now, "note": "active", "node": node_id, "epoch": epoch,
                            "writes": kinds})
        self._activations[node_id] = len(controller.activations)

    def _markers(self, sim: Simulation) -> None:
        transactions = self.txn.reference.transactions
        notes: list[tuple[int, dict[str, object]]] = []
        for txn in transactions[self._transactions_seen:]:
            notes.append((txn.begin_offset, {"marker": "begin", "offset": txn.begin_offset,
                                             "name": txn.name}))
        self._transactions_seen = len(transactions)
        closed = [t for t in transactions if t.close_offset is not None]
        for txn in closed[self._closed_seen:]:
            assert txn.close_offset is not None
            notes.append((txn.close_offset, {
                "marker": "end" if txn.outcome == "committed" else "abort",
                "offset": txn.close_offset, "name": txn.name, "begin": txn.begin_offset,
                "records": txn.records}))
        self._closed_seen = len(closed)
        for _, note in sorted(notes, key=lambda n: n[0]):
            sim.trace.note({"t": sim.now, "note": "txn", **note})


class TimelineEntry(msgspec.Struct, frozen=True):
    """One line of the timeline."""

    at_ms: int
    node: int | None
    text: str


class Timeline(Monitor):
    """Collects :class:`TimelineEntry` lines while a cluster runs."""

    def __init__(self, txn: TransactionInvariants) -> None:
        self.txn = txn
        self.entries: list[TimelineEntry] = []
        self._roles: dict[int, tuple[str, int]] = {}
        self._activations: dict[int, int] = {}
        self._transactions_seen = 0
        self._closed_seen = 0
        self._publications_seen = 0
        self._last_topics: dict[int, tuple[str, ...]] = {}
        self._faults_seen = 0

    def note(self, at_ms: int, node: int | None, text: str) -> None:
        """Add a line."""
        self.entries.append(TimelineEntry(at_ms, node, text))

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Look at what the last event changed."""
        now = sim.now
        for slot in touched:
            raft = slot.raft
            if raft is None:
                continue
            role = (raft.role.value, raft.epoch)
            if self._roles.get(slot.node_id) != role:
                self._roles[slot.node_id] = role
                if raft.role is Role.LEADER:
                    self.note(now, slot.node_id, f"elected leader of epoch {raft.epoch}")
            for app in slot.apps:
                if isinstance(app, QuorumController):
                    self._controller(now, slot.node_id, app)
        while self._faults_seen < len(sim.faults_applied):
            self.note(now, None, f"fault: {sim.faults_applied[self._faults_seen]}")
            self._faults_seen += 1
        self._transactions(now)
        publications = self.txn.on_publish
        for pub in publications[self._publications_seen:]:
            self._publication(pub)
        self._publications_seen = len(publications)

    def _controller(self, now: int, node_id: int, controller: QuorumController) -> None:
        seen = self._activations.get(node_id, 0)
        for epoch, records in controller.activations[seen:]:
            if records:
                kinds = ", ".join(sorted({type(r).__name__ for r in records}))
                first = records[0]
                reason = f" (reason {first.reason!r})" \
                    if isinstance(first, AbortTransactionRecord) else ""
                self.note(now, node_id, f"active in epoch {epoch}; first writes: {kinds}{reason}")
            else:
                self.note(now, node_id, f"active in epoch {epoch}; nothing to abort or "
                                        f"bootstrap")
        self._activations[node_id] = len(controller.activations)

    def _transactions(self, now: int) -> None:
        transactions = self.txn.reference.transactions
        notes: list[tuple[int, str]] = [
            (txn.begin_offset, f"committed BeginTransactionRecord({txn.name!r}) at offset "
                               f"{txn.begin_offset}")
            for txn in transactions[self._transactions_seen:]]
        self._transactions_seen = len(transactions)
        closed = [t for t in transactions if t.close_offset is not None]
        for txn in closed[self._closed_seen:]:
            assert txn.close_offset is not None
            marker = "EndTransactionRecord" if txn.outcome == "committed" else \
                "AbortTransactionRecord"
            notes.append((txn.close_offset, f"committed {marker} at offset {txn.close_offset}: "
                                            f"{txn.name!r} {txn.outcome} ({txn.records} "
                                            f"records)"))
        self._closed_seen = len(closed)
        for _, text in sorted(notes):
            self.note(now, None, text)

    def _publication(self, pub: Publication) -> None:
        topics = tuple(sorted(pub.image.topics_by_name))
        previous = self._last_topics.get(pub.node_id)
        if previous == topics:
            return
        self._last_topics[pub.node_id] = topics
        sizes = {t.name: len(t.partitions) for t in pub.image.topics_by_id.values()}
        described = ", ".join(f"{name} ({sizes[name]} partitions)" for name in topics) or "none"
        self.note(pub.at_ms, pub.node_id, f"published image at offset {pub.image.offset}; "
                                          f"topics: {described}")

    def render(self, names: dict[int, str]) -> list[str]:
        """The timeline as text lines, ``names`` labelling nodes."""
        lines = []
        for entry in sorted(self.entries, key=lambda e: e.at_ms):
            who = names.get(entry.node, f"node {entry.node}") if entry.node is not None \
                else "cluster"
            lines.append(f"{entry.at_ms:>8} ms  {who:<16} {entry.text}")
        return lines
