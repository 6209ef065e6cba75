"""The producer-transaction checkers catch each violation they name when fed what a broken
coordinator, broker or producer would show them: an invalid coordinator transition, a
transaction committed on one partition and aborted on another, a zombie's late write
committed, an acknowledged commit aborted, an LSO held too long, a prepared 2PC
transaction lost or completed with the wrong id, an input with two committed outputs.
What is legitimate passes."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from broker.partition_log import PartitionLog
from broker.txn.group import encode_offset
from broker.txn.state import TransactionState
from sim.invariants.producer_txn import (
    ExactlyOnceInvariant,
    ProducerTxnInvariants,
    _OutputScan,
    _Scan,
)
from sim.world import InvariantViolation

TP, OTHER = ("t", 0), ("t", 1)


def _raised(invariants: ProducerTxnInvariants) -> InvariantViolation:
    """The violation an input method recorded, raised by the next check."""
    with pytest.raises(InvariantViolation) as caught:
        invariants.check(None, [])  # type: ignore[arg-type]
    return caught.value


def test_a_coordinator_transition_outside_kafkas_table_is_caught() -> None:
    invariants = ProducerTxnInvariants()
    invariants.transition(1, "tid", TransactionState.ONGOING, TransactionState.PREPARE_COMMIT)
    invariants.check(None, [])  # type: ignore[arg-type]
    invariants.transition(1, "tid", TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT)
    invariants.transition(1, "tid", TransactionState.EMPTY, TransactionState.PREPARE_COMMIT)
    violation = _raised(invariants)
    assert violation.invariant == "CoordinatorTransitionsValid"
    assert violation.message == "coordinator 1: tid Empty -> CompleteCommit"  # the first one
    assert invariants.transitions == 3


def test_a_transaction_committed_on_one_partition_and_aborted_on_another_is_caught() -> None:
    invariants = ProducerTxnInvariants()
    invariants._outcome("tid/a/1", TP, True)
    invariants._outcome("tid/a/1", OTHER, True)
    invariants._outcome("tid/a/2", TP, False)
    with pytest.raises(InvariantViolation) as caught:
        invariants._outcome("tid/a/2", OTHER, True)
    assert caught.value.invariant == "TxnAllOrNothing"
    assert caught.value.message == "transaction tid/a/2: t-0 ABORT, t-1 COMMIT"


def _zombie() -> ProducerTxnInvariants:
    """Instance a of tid sent at 5, 10 and 15; b fenced it at 10, c fenced b at 20."""
    invariants = ProducerTxnInvariants()
    invariants.initialized("tid", "a", 0)
    invariants.sent("tid/a/1/0", 5)
    invariants.initialized("tid", "b", 10)
    invariants.sent("tid/a/2/0", 10)
    invariants.sent("tid/a/3/0", 15)
    invariants.initialized("tid", "c", 20)
    return invariants


@pytest.mark.parametrize(("txn", "at"), [("tid/a/2", 10), ("tid/a/3", 15)])
def test_a_write_sent_by_a_fenced_instance_from_its_fencing_on_never_commits(
        txn: str, at: int) -> None:
    """Fenced at 10 by a newer instance (a later third instance does not move that):
    what the old one sent before 10 may commit, what it sent at 10 or later may not."""
    invariants = _zombie()
    assert invariants.fenced_at == {"a": 10, "b": 20}
    invariants._outcome("tid/a/1", TP, True)
    invariants._outcome(txn, TP, False)  # aborting a zombie's write is fine
    with pytest.raises(InvariantViolation) as caught:
        _zombie()._outcome(txn, TP, True)
    assert caught.value.invariant == "ZombieNeverCommits"
    assert f"{txn}/0' sent at {at} by a, fenced at 10, was committed" in caught.value.message


def test_a_commit_acknowledged_after_the_transaction_aborted_somewhere_is_caught() -> None:
    invariants = ProducerTxnInvariants()
    invariants._outcome("tid/a/1", TP, True)
    invariants.commit_acknowledged("tid/a/1")
    invariants.check(None, [])  # type: ignore[arg-type]
    invariants._outcome("tid/a/2", OTHER, False)
    invariants.commit_acknowledged("tid/a/2")
    violation = _raised(invariants)
    assert violation.invariant == "AckedCommitNeverAborts"
    assert violation.message == "transaction tid/a/2: commit acknowledged, aborted on t-1"


def test_the_lso_held_behind_an_open_transaction_past_the_bound_is_caught() -> None:
    """Counted from when the transaction started holding it or from the last fault,
    whichever is later, only while every broker is up and below the HW."""
    invariants = ProducerTxnInvariants(lso_bound_ms=100)

    def held(now: int, all_up: bool = True, first: int | None = 3, hw: int = 5) -> None:
        invariants._check_lso(now, all_up, TP, "id", 0, first, hw)

    held(0)
    held(0, first=5)
    held(100)
    held(101, all_up=False)
    held(500, first=None)
    held(500, first=5)  # not below the HW: not holding anything back
    with pytest.raises(InvariantViolation) as caught:
        held(101)
    assert caught.value.invariant == "LsoBounded"
    assert caught.value.message == "t-0: LSO held at 3 (HW 5) for 101 ms (bound 100 ms)"
    invariants.disturbed(50)
    held(150)
    with pytest.raises(InvariantViolation, match="for 101 ms"):
        held(151)


def _prepared() -> ProducerTxnInvariants:
    invariants = ProducerTxnInvariants()
    invariants.prepared_txn("tid", "tid/a/1", 7, 3)
    return invariants


def test_a_prepared_transaction_completed_with_another_producer_id_and_epoch_is_caught(
        ) -> None:
    invariants = _prepared()
    invariants.completing("tid", (7, 3), commit=True)
    invariants.check(None, [])  # type: ignore[arg-type]
    invariants.completing("tid", (7, 4), commit=False)  # an abort with any id is fine
    invariants.check(None, [])  # type: ignore[arg-type]
    invariants.completing("tid", (7, 4), commit=True)
    violation = _raised(invariants)
    assert violation.invariant == "PreparedTxnSurvives"
    assert violation.message == "tid: completeTransaction(7:4) commits tid/a/1 prepared as 7:3"


def test_a_prepared_transaction_the_restarted_client_does_not_see_is_lost() -> None:
    invariants = _prepared()
    invariants.kept("tid", (7, 3))
    invariants.check(None, [])  # type: ignore[arg-type]
    invariants.kept("tid", (8, 0))
    violation = _raised(invariants)
    assert violation.invariant == "PreparedTxnSurvives"
    assert "prepared transaction tid/a/1 (7:3) lost; the restarted client sees 8:0" in \
        violation.message


def test_the_first_violation_recorded_is_the_one_raised() -> None:
    invariants = _prepared()
    invariants.kept("tid", (8, 0))
    invariants.completing("tid", (9, 9), commit=True)
    assert "lost" in _raised(invariants).message


def test_a_force_terminate_racing_a_completion_allows_either_outcome() -> None:
    for outcome in (True, False):
        invariants = _prepared()
        invariants.completing("tid", (7, 3), commit=True)
        invariants.force_terminated("tid")
        invariants._outcome("tid/a/1", TP, outcome)
    alone = _prepared()
    alone.force_terminated("tid")  # no completion: it aborts
    with pytest.raises(InvariantViolation, match="PreparedTxnSurvives") as caught:
        alone._outcome("tid/a/1", OTHER, True)
    assert caught.value.message == "t-1: prepared 2PC transaction tid/a/1 got COMMIT but " \
                                   "was completed with ABORT"


def _two_committed_transactions(last_part: str) -> PartitionLog:
    """An output partition's log, all below its HW: producers 1 and 2 each commit one
    transaction writing ``<txn>/<last_part>`` (txns tid/a/1 and tid/b/1)."""
    log = PartitionLog()
    for pid, txn in ((1, "tid/a/1"), (2, "tid/b/1")):
        log.append_as_leader([f"{txn}/{last_part}"], 1, producer_id=pid, producer_epoch=0,
                             transactional=True)
        log.append_marker(1, pid, 0, commit=True, coordinator_epoch=0)
    log.high_watermark = log.end_offset
    return log


def test_an_input_with_two_committed_outputs_is_caught() -> None:
    log = _two_committed_transactions("in-0@4")
    invariant = ExactlyOnceInvariant(ProducerTxnInvariants())
    with pytest.raises(InvariantViolation) as caught:
        invariant._scan_outputs(_OutputScan(), "out", 0, log)
    assert caught.value.invariant == "ExactlyOnce"
    assert caught.value.message == "input in-0@4 has two committed outputs under " \
                                   "read_committed: out-0 at 0 and out-0 at 2"


def test_committed_records_other_than_loop_outputs_are_not_judged_as_outputs() -> None:
    """Records of the output topic that name no input (no ``@`` label) are not a loop's
    outputs: two with the same last part are no duplicate."""
    log = _two_committed_transactions("0")
    invariant = ExactlyOnceInvariant(ProducerTxnInvariants())
    scan = _OutputScan()
    invariant._scan_outputs(scan, "out", 0, log)
    assert invariant.seen == {} and scan.read_committed_at == 4


def test_read_committed_returning_an_open_transactions_record_is_caught() -> None:
    """A leader whose LSO ignores an open transaction (the lso-ignores-open-txn mutation)
    lets read_committed return its records before any COMMIT marker."""
    log = PartitionLog()
    log.append_as_leader(["plain"], 1)
    log.append_as_leader(["tid/a/1/0"], 1, producer_id=7, producer_epoch=0,
                         transactional=True)
    log.high_watermark = log.end_offset
    slot = SimpleNamespace(node_id=1, incarnation=1, running=True)
    invariants = ProducerTxnInvariants()
    assert invariants._scan(slot, _Scan(), TP, log) == 1  # type: ignore[arg-type]
    log.txns.ignore_open = True
    with pytest.raises(InvariantViolation) as caught:
        invariants._scan(slot, _Scan(), TP, log)  # type: ignore[arg-type]
    assert caught.value.invariant == "ReadCommittedOnlyCommitted"
    assert caught.value.message == "t-0 on broker 1: read_committed returns 'tid/a/1/0' " \
                                   "at 1 (LSO 2, HW 2) without a COMMIT marker"


def test_each_marker_decides_only_the_transactions_open_before_it() -> None:
    """A leader's log: tid/a/1 COMMIT, then tid/a/2 (same producer) ABORT; the scan
    records each outcome once and reads read_committed up to the LSO once."""
    log = PartitionLog()
    for txn, commit in (("tid/a/1", True), ("tid/a/2", False)):
        log.append_as_leader([f"{txn}/0", f"{txn}/1"], 1, producer_id=7, producer_epoch=0,
                             transactional=True)
        log.append_marker(1, 7, 0, commit=commit, coordinator_epoch=0)
    log.high_watermark = log.end_offset
    replica = SimpleNamespace(is_leader=True, topic="t", log=log)
    manager = SimpleNamespace(full_replicas=lambda: iter([(("id", 0), replica)]))
    slot = SimpleNamespace(node_id=1, incarnation=1, running=True)
    sim = SimpleNamespace(slots={1: slot}, now=0)
    invariants = ProducerTxnInvariants()
    invariants._check_manager(sim, slot, manager)  # type: ignore[arg-type]
    assert invariants.outcomes == {"tid/a/1": {TP: True}, "tid/a/2": {TP: False}}
    scan = invariants.scans[(1, 1, "id", 0)]
    assert (scan.offset, scan.read_committed_at, scan.open) == (6, 6, {})


def test_a_completion_lost_in_a_client_restart_leaves_the_prepared_txn_undecided() -> None:
    """completeTransaction(COMMIT) was sent, then the client restarted and found the
    transaction still prepared: that completion never arrived, so a marker before the
    next completion is a violation."""
    invariants = _prepared()
    invariants.completing("tid", (7, 3), commit=True)
    invariants.kept("tid", (7, 3))
    with pytest.raises(InvariantViolation) as caught:
        invariants._outcome("tid/a/1", TP, True)
    assert caught.value.invariant == "PreparedTxnSurvives"
    assert "got COMMIT before it was completed" in caught.value.message


def test_a_completion_of_a_later_unreported_transaction_does_not_decide_the_done_one(
        ) -> None:
    """Found by a random search: the prepared transaction commits and its marker lands;
    the client prepares another, restarts before prepareTransaction returns (so the
    checker never hears of it), and the restarted client aborts that one as not the state
    it recorded. A replica that later shows the first transaction's COMMIT is no
    violation; a commit of the unreported one still is."""
    invariants = _prepared()
    invariants.completing("tid", (7, 3), commit=True)
    invariants._outcome("tid/a/1", TP, True)
    invariants.completing("tid", (7, 6), commit=False)
    invariants._outcome("tid/a/1", OTHER, True)
    invariants.check(None, [])  # type: ignore[arg-type]
    invariants.completing("tid", (7, 6), commit=True)
    violation = _raised(invariants)
    assert violation.message == "tid: completeTransaction(7:6) commits tid/a/1 prepared as 7:3"


def test_a_completion_after_a_force_terminate_may_name_any_id() -> None:
    invariants = _prepared()
    invariants.force_terminated("tid")
    invariants.completing("tid", (9, 9), commit=True)
    invariants._outcome("tid/a/1", TP, False)
    invariants.check(None, [])  # type: ignore[arg-type]


def test_other_transactions_of_a_2pc_id_are_not_judged_as_the_prepared_one() -> None:
    invariants = _prepared()
    invariants._outcome("tid/a/0", TP, False)  # an earlier, ordinary transaction
    invariants.check(None, [])  # type: ignore[arg-type]


def _open_txn_leader(two_phase: bool) -> tuple[ProducerTxnInvariants, Any, Any, Any]:
    """A leader whose log holds an open transaction of tid below the HW; LSO bound 100."""
    log = PartitionLog()
    log.append_as_leader(["tid/a/1/0"], 1, producer_id=7, producer_epoch=0,
                         transactional=True)
    log.append_as_leader(["plain"], 1)
    log.high_watermark = log.end_offset
    slot = SimpleNamespace(node_id=1, incarnation=1, running=True)
    sim = SimpleNamespace(slots={1: slot}, now=0)
    replica = SimpleNamespace(is_leader=True, topic="t", log=log)
    manager = SimpleNamespace(full_replicas=lambda: iter([(("id", 0), replica)]))
    invariants = ProducerTxnInvariants(lso_bound_ms=100)
    if two_phase:
        invariants.two_phase("tid")
    return invariants, sim, slot, manager


def test_a_2pc_transaction_may_hold_the_lso_past_the_bound_others_may_not() -> None:
    for two_phase in (True, False):
        invariants, sim, slot, manager = _open_txn_leader(two_phase)
        invariants._check_manager(sim, slot, manager)
        sim.now = 1000
        if two_phase:
            invariants._check_manager(sim, slot, manager)
        else:
            with pytest.raises(InvariantViolation, match="LsoBounded"):
                invariants._check_manager(sim, slot, manager)


def test_only_leaders_are_judged_for_the_lso() -> None:
    """The LSO is what a partition's leader serves to read_committed consumers: a follower
    replica holding the same open transaction is not judged (nor scanned)."""
    invariants, sim, slot, manager = _open_txn_leader(two_phase=False)
    replica = next(manager.full_replicas())[1]
    replica.is_leader = False
    invariants._check_manager(sim, slot, manager)
    sim.now = 1000
    invariants._check_manager(sim, slot, manager)
    assert invariants.scans == {}


def test_a_txn_prepared_while_a_force_terminate_retries_may_abort_until_it_is_done() -> None:
    """The admin retries while the coordinator is unavailable and aborts whatever is
    ongoing when it lands: a transaction prepared meanwhile may abort; once the call is
    done, an abort of a newly prepared transaction is a violation again."""
    invariants = ProducerTxnInvariants()
    invariants.force_terminated("tid")  # nothing prepared yet
    invariants.prepared_txn("tid", "tid/a/1", 7, 3)
    invariants._outcome("tid/a/1", TP, False)
    invariants.force_terminate_done("tid")
    invariants.prepared_txn("tid", "tid/a/2", 7, 4)
    with pytest.raises(InvariantViolation, match="tid/a/2 got ABORT before it was completed"):
        invariants._outcome("tid/a/2", TP, False)


def test_offsets_of_groups_and_inputs_not_watched_are_not_judged() -> None:
    """Only the watched loop's group and input partition are judged: another group's
    commit past an input whose every output aborted is no violation, the loop's own is."""
    txns = ProducerTxnInvariants()
    txns.outcomes["tid/a/1"] = {("out", 0): False}  # the only output of in-0@0 aborted
    invariant = ExactlyOnceInvariant(txns)
    invariant.watch("g", ("in", 0), "out")
    invariant.sent("tid/a/1/in-0@0", 0)
    log = PartitionLog()
    log.append_as_leader([encode_offset("x", "other", "in", 0, 1, 0),
                          encode_offset("x", "g", "in", 1, 1, 0)], 1)
    log.high_watermark = log.end_offset
    scan = _OutputScan()
    invariant._scan_offsets(scan, log.entries, log.high_watermark)
    invariant._judge()
    assert invariant.committed == {} and invariant.undecided == {}
    log.append_as_leader([encode_offset("x", "g", "in", 0, 1, 0)], 1)
    log.high_watermark = log.end_offset
    invariant._scan_offsets(scan, log.entries, log.high_watermark)
    with pytest.raises(InvariantViolation) as caught:
        invariant._judge()
    assert caught.value.invariant == "ExactlyOnce"
    assert caught.value.message == "group g committed offset 1 of in-0, but every output " \
                                   "of input in-0@0 was aborted"
