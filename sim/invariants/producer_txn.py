"""Producer-transaction invariants, checked online after every event.

- TxnAllOrNothing: a transaction's markers agree on every partition it
  wrote: COMMIT everywhere or ABORT everywhere (KIP-98, "atomic writes across
  multiple partitions").
- ReadCommittedOnlyCommitted: a read_committed consumer of a partition leader
  (fetch capped at the LSO, Kafka's aborted-transactions filter) returns a
  transactional record only if its transaction's COMMIT marker is below the
  high watermark (KIP-98 read_committed; Kafka's LSO and abort index).
- ZombieNeverCommits: a record sent by a producer instance after a newer
  instance with the same transactional id finished InitProducerId is never
  committed (KIP-98 zombie fencing by producer epoch).
- AckedCommitNeverAborts: a transaction whose EndTxn(COMMIT) the coordinator
  acknowledged is never aborted on any partition (KIP-98: commitTransaction
  returning means the transaction is committed).
- CoordinatorTransitionsValid: every state a coordinator takes has the
  previous state in Kafka's valid-previous-state table
  (``TransactionState.java``).
- LsoBounded: with every broker up, the LSO of a partition leader stays
  behind one open transaction no longer than the transaction timeout, the
  coordinator's abort interval and a marker-delivery allowance, counted from
  the last fault (KIP-98 "transaction.timeout.ms"; Kafka's
  abortTimedOutTransactions). A transaction of a KIP-939 two-phase-commit
  producer has no timeout and is exempt.
- PreparedTxnSurvives: a prepared KIP-939 two-phase-commit transaction
  survives coordinator failover and producer restart. It gets no marker
  before its application completes it (``completeTransaction``) or an admin
  force-terminates it: not aborted on timeout, not by the restart's
  InitProducerId; then it ends as decided (COMMIT only for a matching
  PreparedTxnState). A restarted client's InitProducerId(KeepPreparedTxn)
  answers the prepared transaction's producer id and epoch as
  OngoingTxnProducerId/Epoch: it is not lost (KIP-939, "prepareTransaction",
  "completeTransaction", "InitProducerId(keepPreparedTxn=true)" and "no
  timeout for transactions participating in 2PC").

- ExactlyOnce (:class:`ExactlyOnceInvariant`): each input record of a
  consume-transform-produce loop yields its output exactly once under
  read_committed: a read_committed scan of the output partitions never returns
  two outputs of one input record, and the group's committed offset (replayed
  from ``__consumer_offsets`` as the group coordinator does) never covers an
  input record whose every output transaction aborted (KIP-98 "exactly once
  processing": the consumed offsets are committed in the transaction of the
  outputs, ``sendOffsetsToTransaction``; KIP-447 for the fetch of the offsets).

Records are ``<transactional id>/<instance>/<transaction>/<n>`` (see
:mod:`sim.txn_clients`): a transaction's key is the first three parts.
"""

from __future__ import annotations

from collections.abc import Sequence

from broker.partition_log import LogEntry, PartitionLog
from broker.replica_manager import ReplicaManager
from broker.txn.coordinator import TRANSACTION_STATE_TOPIC
from broker.txn.fetch import READ_COMMITTED, fetch_log, filter_committed
from broker.txn.group import CONSUMER_OFFSETS_TOPIC, OffsetsState
from broker.txn.state import VALID_PREVIOUS, TransactionState
from sim.world import InvariantViolation, Monitor, NodeSlot, Simulation

PRODUCER_TXN_INVARIANTS: dict[str, str] = {
    "TxnAllOrNothing": "a transaction commits on all its partitions or aborts on all (KIP-98)",
    "ReadCommittedOnlyCommitted": "read_committed returns only committed transactional "
                                  "records (KIP-98; Kafka LSO and abort index)",
    "ZombieNeverCommits": "a fenced producer instance's later writes never commit (KIP-98)",
    "AckedCommitNeverAborts": "an acknowledged commit is never aborted on any partition "
                              "(KIP-98 commitTransaction)",
    "CoordinatorTransitionsValid": "coordinator states follow Kafka's valid-previous table "
                                   "(TransactionState.java)",
    "LsoBounded": "the LSO stays behind an open transaction at most its timeout plus the "
                  "abort interval and marker delivery (KIP-98; abortTimedOutTransactions)",
    "PreparedTxnSurvives": "a prepared 2PC transaction survives coordinator failover and "
                           "producer restart until completed (KIP-939)",
    "ExactlyOnce": "each input record of a consume-transform-produce loop yields its output "
                   "exactly once under read_committed (KIP-98 sendOffsetsToTransaction, "
                   "KIP-447)",
}
"""Every producer-transaction invariant with its source."""


def txn_key(value: str) -> str:
    """The transaction a record value belongs to."""
    return value.rsplit("/", 1)[0]


def log_mark(log: PartitionLog) -> tuple[object, ...]:
    """What a scan of ``log`` below its HW depends on: the log, its truncations, its end,
    its HW and whether its LSO ignores open transactions (a mutation). A scan that finds
    the same mark as last time has nothing new to read."""
    return log, log.truncations, log.end_offset, log.high_watermark, log.txns.ignore_open


class _Scan:
    """What one leader replica's log below the HW has shown so far."""

    def __init__(self) -> None:
        self.offset = 0
        self.open: dict[int, list[str]] = {}
        self.read_committed_at = 0
        self.mark: tuple[object, ...] = ()
        self.first_unstable: int | None = None


class ProducerTxnInvariants(Monitor):
    """The catalogue above; fed by the coordinators' transitions and the producers."""

    def __init__(self, lso_bound_ms: int = 45_000) -> None:
        self.lso_bound_ms = lso_bound_ms
        self.outcomes: dict[str, dict[tuple[str, int], bool]] = {}
        self.sent_at: dict[str, int] = {}
        self.fenced_at: dict[str, int] = {}
        self.instances: dict[str, list[str]] = {}
        self.scans: dict[tuple[int, int, str, int], _Scan] = {}
        self.unstable_since: dict[tuple[str, int, int], int] = {}
        self.disturbed_at = 0
        self.transitions = 0
        self.acked_commits: set[str] = set()
        self.two_pc_ids: set[str] = set()
        self.prepared: dict[str, tuple[str, int, int]] = {}  # txn id -> (txn, pid, epoch)
        self.decisions: dict[str, bool | None] = {}  # prepared txn -> outcome (None: either)
        self.terminated: set[str] = set()  # prepared txns an admin force-terminated
        self.terminating: dict[str, int] = {}  # txn id -> admin force-terminations under way
        self._violation: InvariantViolation | None = None

    # ------------------------------------------------------------------ inputs
    def initialized(self, transactional_id: str, instance: str, now: int) -> None:
        """``instance`` finished InitProducerId: every older instance is now a zombie."""
        known = self.instances.setdefault(transactional_id, [])
        for other in known:
            if other != instance:
                self.fenced_at.setdefault(other, now)
        if instance not in known:
            known.append(instance)

    def sent(self, value: str, now: int) -> None:
        """A producer sent ``value`` at ``now``."""
        self.sent_at.setdefault(value, now)

    def commit_acknowledged(self, txn: str) -> None:
        """The coordinator answered NONE to the EndTxn(COMMIT) of transaction ``txn``."""
        self.acked_commits.add(txn)
        if False in self.outcomes.get(txn, {}).values() and self._violation is None:
            self._violation = self._aborted(txn)

    def _aborted(self, txn: str) -> InvariantViolation:
        where = sorted(f"{t}-{p}" for (t, p), c in self.outcomes[txn].items() if not c)
        return InvariantViolation("AckedCommitNeverAborts",
                                  f"transaction {txn}: commit acknowledged, aborted on "
                                  f"{', '.join(where)}")

    # ------------------------------------------------------------------ KIP-939 inputs
    def two_phase(self, transactional_id: str) -> None:
        """``transactional_id`` is used by 2PC producers (no timeout: LsoBounded exempt)."""
        self.two_pc_ids.add(transactional_id)

    def prepared_txn(self, transactional_id: str, txn: str, producer_id: int,
                     epoch: int) -> None:
        """prepareTransaction() returned (producer_id, epoch) for transaction ``txn``."""
        self.two_pc_ids.add(transactional_id)
        self.prepared[transactional_id] = (txn, producer_id, epoch)
        self.decisions.pop(txn, None)
        if self.terminating.get(transactional_id):
            self._may_abort(transactional_id)  # a termination still retrying may land on it

    def kept(self, transactional_id: str, ongoing: tuple[int, int]) -> None:
        """A restarted client's InitProducerId(KeepPreparedTxn) answered ``ongoing``."""
        held = self.prepared.get(transactional_id)
        if held is None or held[0] in self.outcomes:
            return
        if ongoing != held[1:] and held[0] not in self.decisions:
            self._fail("PreparedTxnSurvives",
                       f"{transactional_id}: prepared transaction {held[0]} "
                       f"({held[1]}:{held[2]}) lost; the restarted client sees "
                       f"{ongoing[0]}:{ongoing[1]}")
        elif ongoing == held[1:] and held[0] not in self.terminated:
            self.decisions.pop(held[0], None)  # a completion that never arrived: undecided

    def completing(self, transactional_id: str, given: tuple[int, int], commit: bool) -> None:
        """completeTransaction(``given``) sends EndTxn(``commit``)."""
        held = self.prepared.get(transactional_id)
        if held is None:
            return
        if held[0] in self.terminated:
            self.decisions[held[0]] = None
            return
        if commit and given != held[1:]:
            self._fail("PreparedTxnSurvives",
                       f"{transactional_id}: completeTransaction({given[0]}:{given[1]}) "
                       f"commits {held[0]} prepared as {held[1]}:{held[2]}")
        if held[0] in self.outcomes:
            # the held transaction is over: this completion is of a later one whose
            # prepareTransaction never returned (the client restarted first), which the
            # restarted client aborts as not the one it recorded
            return
        self.decisions[held[0]] = commit

    def force_terminated(self, transactional_id: str) -> None:
        """An admin's forceTerminateTransaction was called: the prepared transaction may
        abort, and so may one prepared before the call is done
        (:meth:`force_terminate_done`): the admin retries while the coordinator is
        unavailable or busy, and aborts whatever is ongoing when it lands."""
        self.terminating[transactional_id] = self.terminating.get(transactional_id, 0) + 1
        self._may_abort(transactional_id)

    def force_terminate_done(self, transactional_id: str) -> None:
        """A forceTerminateTransaction of ``transactional_id`` answered (or gave up)."""
        left = self.terminating.get(transactional_id, 0) - 1
        if left > 0:
            self.terminating[transactional_id] = left
        else:
            self.terminating.pop(transactional_id, None)

    def _may_abort(self, transactional_id: str) -> None:
        held = self.prepared.get(transactional_id)
        if held is not None and held[0] not in self.outcomes:
            # racing a completeTransaction, either outcome is legitimate
            self.decisions[held[0]] = False if held[0] not in self.decisions else None
            self.terminated.add(held[0])

    def _fail(self, name: str, text: str) -> None:
        if self._violation is None:
            self._violation = InvariantViolation(name, text)

    def disturbed(self, now: int) -> None:
        """A fault happened: the LSO bound counts from here."""
        self.disturbed_at = now

    def transition(self, broker: int, transactional_id: str, before: TransactionState,
                   after: TransactionState) -> None:
        """A coordinator completed a state change."""
        self.transitions += 1
        if before not in VALID_PREVIOUS[after] and self._violation is None:
            self._violation = InvariantViolation(
                "CoordinatorTransitionsValid",
                f"coordinator {broker}: {transactional_id} {before.kafka_name} -> "
                f"{after.kafka_name}")

    # ------------------------------------------------------------------ checks
    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Check the leaders of the touched brokers."""
        if self._violation is not None:
            raise self._violation
        for slot in touched:
            for app in slot.apps:
                if isinstance(app, ReplicaManager):
                    self._check_manager(sim, slot, app)

    def _check_manager(self, sim: Simulation, slot: NodeSlot, manager: ReplicaManager) -> None:
        # (a compact leader, left out, has an empty log: nothing to scan, no LSO held)
        for (topic_id, partition), replica in sorted(manager.full_replicas()):
            if not replica.is_leader or replica.topic == TRANSACTION_STATE_TOPIC:
                continue
            key = (slot.node_id, slot.incarnation, topic_id, partition)
            scan = self.scans.get(key)
            if scan is None:
                scan = self.scans[key] = _Scan()
            log = replica.log
            tp = (replica.topic, partition)
            hw = log.high_watermark
            mark = log_mark(log)
            if mark == scan.mark:  # nothing new below the HW since the last scan
                first_unstable = scan.first_unstable
            else:
                first_unstable = self._scan(slot, scan, tp, log)
                scan.mark, scan.first_unstable = mark, first_unstable
            if first_unstable is None or first_unstable >= hw:
                continue  # nothing unstable below the HW
            if first_unstable < len(log.entries) and \
                    log.entries[first_unstable].value.split("/", 1)[0] in self.two_pc_ids:
                continue  # KIP-939: a 2PC transaction holds the LSO until completed
            self._check_lso(sim.now, all(s.running for s in sim.slots.values()), tp, topic_id,
                            partition, first_unstable, hw)

    def _scan(self, slot: NodeSlot, scan: _Scan, tp: tuple[str, int],
              log: PartitionLog) -> int | None:
        """Read what is new below ``log``'s HW: markers' outcomes, then what read_committed
        now returns. Returns the log's first unstable offset."""
        hw = log.high_watermark
        for entry in log.entries[scan.offset:hw]:
            if entry.control >= 0:
                for txn in sorted(set(scan.open.pop(entry.producer_id, []))):
                    self._outcome(txn, tp, entry.control == 1)
            elif entry.transactional:
                scan.open.setdefault(entry.producer_id, []).append(txn_key(entry.value))
        scan.offset = max(scan.offset, hw)
        first_unstable = log.txns.first_unstable_offset(hw)
        lso = hw if first_unstable is None else min(first_unstable, hw)
        if lso > scan.read_committed_at:
            fetched = fetch_log(log, scan.read_committed_at, lso - scan.read_committed_at,
                                READ_COMMITTED)
            for entry in filter_committed(fetched.entries, fetched.aborted_transactions):
                if entry.transactional and \
                        self.outcomes.get(txn_key(entry.value), {}).get(tp) is not True:
                    raise InvariantViolation(
                        "ReadCommittedOnlyCommitted",
                        f"{tp[0]}-{tp[1]} on broker {slot.node_id}: read_committed "
                        f"returns {entry.value!r} at {entry.offset} (LSO {lso}, HW {hw}) "
                        f"without a COMMIT marker")
            scan.read_committed_at = lso
        return first_unstable

    def _outcome(self, txn: str, tp: tuple[str, int], commit: bool) -> None:
        outcomes = self.outcomes.setdefault(txn, {})
        outcomes[tp] = commit
        if len(set(outcomes.values())) > 1:
            raise InvariantViolation(
                "TxnAllOrNothing",
                f"transaction {txn}: " + ", ".join(
                    f"{t}-{p} {'COMMIT' if c else 'ABORT'}"
                    for (t, p), c in sorted(outcomes.items())))
        if not commit and txn in self.acked_commits:
            raise self._aborted(txn)
        if txn.split("/", 1)[0] in self.two_pc_ids:
            self._check_prepared(txn, tp, commit)
        if commit:
            instance = txn.split("/")[1]
            fenced = self.fenced_at.get(instance)
            if fenced is None:
                return
            late = sorted(v for v, at in self.sent_at.items()
                          if at >= fenced and txn_key(v) == txn)
            if late:
                raise InvariantViolation(
                    "ZombieNeverCommits",
                    f"{tp[0]}-{tp[1]}: {late[0]!r} sent at {self.sent_at[late[0]]} by "
                    f"{instance}, fenced at {fenced}, was committed")

    def _check_prepared(self, txn: str, tp: tuple[str, int], commit: bool) -> None:
        tid = txn.split("/", 1)[0]
        held = self.prepared.get(tid)
        if held is None or held[0] != txn:
            return  # not prepared: an ordinary commit or abort
        if txn not in self.decisions or self.decisions[txn] not in (None, commit):
            decision = self.decisions.get(txn)
            raise InvariantViolation(
                "PreparedTxnSurvives",
                f"{tp[0]}-{tp[1]}: prepared 2PC transaction {txn} got "
                f"{'COMMIT' if commit else 'ABORT'} "
                + ("before it was completed" if decision is None
                   else f"but was completed with {'COMMIT' if decision else 'ABORT'}"))

    def _check_lso(self, now: int, all_up: bool, tp: tuple[str, int], topic_id: str,
                   partition: int, first_unstable: int | None, hw: int) -> None:
        """An LSO held at ``first_unstable`` below ``hw`` has not been held too long while
        every broker was up."""
        if first_unstable is None or first_unstable >= hw:
            return
        since = self.unstable_since.setdefault((topic_id, partition, first_unstable), now)
        age = now - max(since, self.disturbed_at)
        if all_up and age > self.lso_bound_ms:
            raise InvariantViolation(
                "LsoBounded",
                f"{tp[0]}-{tp[1]}: LSO held at {first_unstable} (HW {hw}) for {age} ms "
                f"(bound {self.lso_bound_ms} ms)")


class _OutputScan:
    """What one leader replica of an output or offsets partition has shown so far."""

    def __init__(self) -> None:
        self.read_committed_at = 0
        self.offsets = OffsetsState()
        self.mark: tuple[object, ...] = ()  # log_mark when last scanned


class ExactlyOnceInvariant(Monitor):
    """ExactlyOnce (see the module docs) over the loops registered with :meth:`watch`.

    Fed the values the loops' producers send (:meth:`sent`); reads the
    transactions' outcomes from ``txns`` (the :class:`ProducerTxnInvariants` of
    the same run, which sees every marker).
    """

    def __init__(self, txns: ProducerTxnInvariants) -> None:
        self.txns = txns
        self.loops: dict[str, tuple[tuple[str, int], str]] = {}
        self.outputs: dict[str, set[str]] = {}
        self.seen: dict[str, tuple[str, int, int]] = {}
        self.committed: dict[tuple[str, str, int], int] = {}
        self.undecided: dict[tuple[str, str, int], set[int]] = {}
        self.covered: dict[tuple[str, str, int], int] = {}
        self.scans: dict[tuple[int, int, str, int], _OutputScan] = {}

    def watch(self, group_id: str, input_tp: tuple[str, int], output_topic: str) -> None:
        """Check the loop of ``group_id`` (its input partition and output topic)."""
        self.loops[group_id] = (input_tp, output_topic)

    def sent(self, value: str, now: int) -> None:
        """A loop's producer sent ``value`` (an output whose payload names its input)."""
        label = value.rsplit("/", 1)[-1]
        if "@" in label:
            self.outputs.setdefault(label, set()).add(txn_key(value))

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Scan the touched leaders' output and offsets partitions; judge covered inputs."""
        outputs = {topic for _, topic in self.loops.values()}
        for slot in touched:
            for app in slot.apps:
                if not isinstance(app, ReplicaManager):
                    continue
                for (topic_id, partition), replica in sorted(app.full_replicas()):
                    if not replica.is_leader or (replica.topic not in outputs and
                                                 replica.topic != CONSUMER_OFFSETS_TOPIC):
                        continue
                    key = (slot.node_id, slot.incarnation, topic_id, partition)
                    scan = self.scans.get(key)
                    if scan is None:
                        scan = self.scans[key] = _OutputScan()
                    mark = log_mark(replica.log)
                    if mark == scan.mark:
                        continue  # nothing new below the HW
                    if replica.topic == CONSUMER_OFFSETS_TOPIC:
                        self._scan_offsets(scan, replica.log.entries,
                                           replica.log.high_watermark)
                    else:
                        self._scan_outputs(scan, replica.topic, partition, replica.log)
                    scan.mark = mark
        self._judge()

    def _scan_offsets(self, scan: _OutputScan, entries: Sequence[LogEntry], hw: int) -> None:
        for (group, topic, partition), offset in scan.offsets.apply(
                entries[scan.offsets.applied:hw]):
            loop = self.loops.get(group)
            if loop is None or loop[0] != (topic, partition):
                continue
            key = (group, topic, partition)
            self.committed[key] = offset
            start = self.covered.get(key, 0)
            if offset > start:
                self.undecided.setdefault(key, set()).update(range(start, offset))
                self.covered[key] = offset

    def _scan_outputs(self, scan: _OutputScan, topic: str, partition: int,
                      log: PartitionLog) -> None:
        lso = log.txns.last_stable_offset(log.high_watermark)
        if lso <= scan.read_committed_at:
            return
        fetched = fetch_log(log, scan.read_committed_at, lso - scan.read_committed_at,
                            READ_COMMITTED)
        for entry in filter_committed(fetched.entries, fetched.aborted_transactions):
            label = entry.value.rsplit("/", 1)[-1]
            if "@" not in label:
                continue  # not a loop's output
            where = (topic, partition, entry.offset)
            first = self.seen.setdefault(label, where)
            if first != where:
                raise InvariantViolation(
                    "ExactlyOnce", f"input {label} has two committed outputs under "
                                   f"read_committed: {first[0]}-{first[1]} at {first[2]} and "
                                   f"{topic}-{partition} at {entry.offset}")
        scan.read_committed_at = lso

    def _judge(self) -> None:
        for key, pending in sorted(self.undecided.items()):
            group, topic, partition = key
            for offset in sorted(pending):
                label = f"{topic}-{partition}@{offset}"
                txns = self.outputs.get(label, set())
                results = [self.txns.outcomes.get(txn, {}).values() for txn in sorted(txns)]
                if any(True in r for r in results):
                    pending.discard(offset)
                elif txns and all(False in r for r in results):
                    raise InvariantViolation(
                        "ExactlyOnce", f"group {group} committed offset "
                                       f"{self.committed[key]} of {topic}-{partition}, but "
                                       f"every output of input {label} was aborted")
