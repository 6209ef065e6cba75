"""The transaction coordinator alone: Kafka's state table and its test vectors (reference §3)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from broker.txn import prereg
from broker.txn.coordinator import (
    MarkerRequest,
    TransactionCoordinator,
    TxnCoordinatorConfig,
    TxnResult,
    java_string_hash,
    partition_for,
)
from broker.txn.state import (
    VALID_PREVIOUS,
    IllegalTransition,
    TransactionMetadata,
    TransactionState,
    decode_record,
)

S = TransactionState


class Harness:
    """A coordinator of every partition with a log that acknowledges on demand."""

    def __init__(self, auto_ack: bool = True, first_pid: int = 11) -> None:
        self.auto_ack = auto_ack
        self.log: list[str] = []
        self.waiting: list[Callable[[str], None]] = []
        self.next_pid = first_pid
        self.fail_next: list[str] = []
        self.coordinator = TransactionCoordinator(0, TxnCoordinatorConfig(num_partitions=1),
                                                  self._append, self._pid)
        self.coordinator.become_leader(0, 0, [], 0)
        self.results: list[TxnResult | str] = []

    def _pid(self) -> tuple[str, int]:
        self.next_pid += 1
        return "NONE", self.next_pid - 1

    def _append(self, partition: int, text: str, done: Callable[[str], None]) -> None:
        if self.fail_next:
            done(self.fail_next.pop(0))
            return
        self.log.append(text)
        if self.auto_ack:
            done("NONE")
        else:
            self.waiting.append(done)

    def put(self, meta: TransactionMetadata) -> None:
        self.coordinator.txns[meta.transactional_id] = meta

    def init(self, expected: tuple[int, int] | None = None, txn_id: str | None = "t"
             ) -> TxnResult:
        out: list[TxnResult] = []
        self.coordinator.handle_init_producer_id(txn_id, 60_000, expected, 5, out.append)
        return out[0]

    def add(self, pid: int, epoch: int, *parts: tuple[str, int]) -> str:
        out: list[str] = []
        self.coordinator.handle_add_partitions("t", pid, epoch, frozenset(parts), 5, out.append)
        return out[0]

    def end(self, pid: int, epoch: int, commit: bool) -> str:
        out: list[str] = []
        self.coordinator.handle_end_txn("t", pid, epoch, commit, 5, out.append)
        return out[0] if out else "WAITING"

    def deliver_markers(self, error: str = "NONE") -> list[MarkerRequest]:
        sent = self.coordinator.drain_outbox()
        for request in sent:
            self.coordinator.on_marker_result(request, error, 10)
        return sent

    @property
    def meta(self) -> TransactionMetadata:
        return self.coordinator.txns["t"]


def _meta(state: TransactionState = S.EMPTY, epoch: int = 10, last: int = 9, pid: int = 10,
          prev: int = -1) -> TransactionMetadata:
    meta = TransactionMetadata("t", pid, 60_000, 0, epoch, last, prev, state)
    if state in (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT):
        meta.topic_partitions = frozenset({("a", 0)})
        meta.txn_start_timestamp = 0
    return meta


def test_java_string_hash_and_partition_for() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -2147483648  # Integer.MIN_VALUE
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50
    # values from Java 17: a negative hash, UTF-16 code units past ASCII, a surrogate pair
    assert (java_string_hash("my-transactional-id"), partition_for("my-transactional-id", 50)) \
        == (-959806496, 46)
    assert java_string_hash("txn-\u00e9\u4e2d") == -859815769
    assert (java_string_hash("\U0001F600"), partition_for("\U0001F600", 50)) == (1772899, 49)


def test_the_coordinators_partition_counts_default_to_kafkas_fifty() -> None:
    """transaction.state.log.num.partitions and offsets.topic.num.partitions both default
    to 50, as Kafka's; a pre-registered group's offsets partition is found among 50 while
    the offsets topic is not known yet, and among the topic's partitions once it is."""
    config = TxnCoordinatorConfig()
    assert (config.num_partitions, config.offsets_num_partitions) == (50, 50)
    coordinator = TransactionCoordinator(0, config, lambda *_: None, lambda: ("NONE", 1))
    assert coordinator.offsets_partition_count() == 50
    coordinator.offsets_topic_partitions = lambda: 3
    assert coordinator.offsets_partition_count() == 3


def test_the_valid_previous_state_table_is_kafkas() -> None:
    assert VALID_PREVIOUS[S.PREPARE_ABORT] == {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY,
                                               S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert VALID_PREVIOUS[S.COMPLETE_COMMIT] == {S.PREPARE_COMMIT}
    meta = _meta(S.EMPTY)
    with pytest.raises(IllegalTransition):
        meta.transit(S.PREPARE_COMMIT, 1)
    meta.transit(S.ONGOING, 1)
    with pytest.raises(IllegalTransition):
        meta.transit(S.ONGOING, 1)  # one pending state at a time
    assert S.PREPARE_EPOCH_FENCE.kafka_name == "PrepareEpochFence"


# ---------------------------------------------------------------- reference 3.1
def test_vectors_1_2_21_new_ids() -> None:
    h = Harness()
    assert h.init() == TxnResult("NONE", 11, 0)
    assert h.meta.state == S.EMPTY and h.meta.producer_epoch == 0
    h = Harness()
    assert h.init((10, 1)) == TxnResult("NONE", 11, 0)
    assert h.init(txn_id=None) == TxnResult("NONE", 12, 0)
    assert h.init(txn_id=None) == TxnResult("NONE", 13, 0)


def test_vectors_3_to_6_epoch_bumps_and_retries() -> None:
    h = Harness()
    h.put(_meta())
    assert h.init((10, 10)) == TxnResult("NONE", 10, 11)
    assert h.meta.last_producer_epoch == 10
    assert h.init((10, 10)) == TxnResult("NONE", 10, 11)   # #4 a retry
    h = Harness()
    h.put(_meta())
    assert h.init() == TxnResult("NONE", 10, 11)           # #5
    assert h.meta.last_producer_epoch == -1
    assert h.init((10, 10)).error == "PRODUCER_FENCED"     # #6


def test_vectors_7_to_12_rotation() -> None:
    h = Harness()
    h.put(_meta(epoch=32766, last=32765))
    assert h.init((10, 32766)) == TxnResult("NONE", 11, 0)               # #7
    m = h.meta
    assert (m.producer_id, m.prev_producer_id, m.last_producer_epoch) == (11, 10, 32766)
    assert h.init((10, 32766)) == TxnResult("NONE", 11, 0)               # #8 retry
    assert h.init((10, 32765)).error == "PRODUCER_FENCED"                # #9
    h = Harness()
    h.put(_meta(pid=11, prev=10, epoch=1))
    assert h.init((10, 1)).error == "PRODUCER_FENCED"                    # #10
    h = Harness()
    h.put(_meta(epoch=2, last=-1))
    assert h.init((10, 1)).error == "PRODUCER_FENCED"                    # #11
    h = Harness()
    h.put(_meta(epoch=32766))
    assert h.init() == TxnResult("NONE", 11, 0)                          # #12


def test_vectors_13_14_concurrent_transactions() -> None:
    for state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        h = Harness()
        h.put(_meta(state))
        assert h.init().error == "CONCURRENT_TRANSACTIONS"
    h = Harness()
    h.put(_meta())
    h.meta.pending_state = S.ONGOING
    assert h.init().error == "CONCURRENT_TRANSACTIONS"


def test_vector_15_fencing_an_ongoing_transaction() -> None:
    h = Harness()
    h.put(_meta(S.ONGOING, epoch=1, last=-1))
    assert h.init().error == "CONCURRENT_TRANSACTIONS"
    assert (h.meta.state, h.meta.producer_epoch, h.meta.last_producer_epoch) == \
        (S.PREPARE_ABORT, 2, -1)
    [marker] = h.deliver_markers()
    assert (marker.producer_epoch, marker.commit) == (2, False)
    assert (h.meta.state, h.meta.producer_epoch) == (S.COMPLETE_ABORT, 2)
    assert h.init() == TxnResult("NONE", 10, 3)


def test_vector_16_a_failed_fence_does_not_bump_twice() -> None:
    h = Harness()
    h.put(_meta(S.ONGOING, epoch=1, last=-1))
    h.fail_next = ["NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS"]
    assert h.init().error == "COORDINATOR_NOT_AVAILABLE"
    assert h.init().error == "COORDINATOR_NOT_AVAILABLE"
    assert h.init().error == "CONCURRENT_TRANSACTIONS"
    assert h.meta.producer_epoch == 2


def test_vector_19_fence_at_the_last_epoch_then_rotate() -> None:
    h = Harness()
    h.put(_meta(S.ONGOING, epoch=32766, last=-1))
    assert h.init().error == "CONCURRENT_TRANSACTIONS"
    assert h.meta.producer_epoch == 32767
    h.deliver_markers()
    assert h.init() == TxnResult("NONE", 11, 0)


def test_a_fence_at_epoch_32767_aborts_without_a_bump_then_rotates() -> None:
    """An ongoing transaction already at the last epoch: the fence keeps it (no overflow);
    its markers carry 32767; the retry moves to the next producer id."""
    h = Harness()
    h.put(_meta(S.ONGOING, epoch=32767, last=-1))
    assert h.init().error == "CONCURRENT_TRANSACTIONS"
    assert (h.meta.state, h.meta.producer_epoch) == (S.PREPARE_ABORT, 32767)
    [marker] = h.deliver_markers()
    assert (marker.producer_epoch, marker.commit) == (32767, False)
    assert h.init() == TxnResult("NONE", 11, 0)


def test_vector_20_empty_transactional_id() -> None:
    assert Harness().init(txn_id="").error == "INVALID_REQUEST"


# ---------------------------------------------------------------- add partitions, end txn
def test_a_commit_prepares_sends_markers_then_completes() -> None:
    h = Harness()
    pid, epoch = h.init().producer_id, 0
    assert h.add(pid, epoch, ("a", 0), ("b", 1)) == "NONE"
    assert h.meta.state == S.ONGOING
    writes = len(h.log)
    assert h.add(pid, epoch, ("a", 0)) == "NONE"   # a subset: no write
    assert h.add(pid, epoch, ("b", 1), ("a", 0)) == "NONE"   # the same set: no write either
    assert len(h.log) == writes
    assert h.end(pid, epoch, True) == "NONE"
    assert len(h.log) == writes + 1 and h.meta.state == S.PREPARE_COMMIT
    assert h.end(pid, epoch, True) == "CONCURRENT_TRANSACTIONS"
    assert h.end(pid, epoch, False) == "INVALID_TXN_STATE"
    assert h.add(pid, epoch, ("c", 0)) == "CONCURRENT_TRANSACTIONS"
    sent = h.deliver_markers()
    assert {(m.topic, m.partition) for m in sent} == {("a", 0), ("b", 1)}
    assert h.meta.state == S.COMPLETE_COMMIT and h.meta.topic_partitions == frozenset()
    assert h.end(pid, epoch, True) == "NONE"                    # idempotent retry
    assert h.end(pid, epoch, False) == "INVALID_TXN_STATE"
    assert h.end(pid, epoch + 1, True) == "PRODUCER_FENCED"
    assert h.end(pid + 5, epoch, True) == "INVALID_PRODUCER_ID_MAPPING"
    assert h.add(pid, epoch + 1, ("a", 0)) == "PRODUCER_FENCED"
    assert h.add(pid + 5, epoch, ("a", 0)) == "INVALID_PRODUCER_ID_MAPPING"
    record = decode_record(h.log[-1])
    assert record.Value is not None and record.Value.TransactionStatus == 4


def test_state_changes_only_once_the_log_acknowledges() -> None:
    h = Harness(auto_ack=False)
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t", 60_000, None, 0, out.append)
    assert out == [] and h.meta.producer_epoch == -1
    assert h.init().error == "CONCURRENT_TRANSACTIONS"
    h.waiting.pop()("NONE")
    assert out == [TxnResult("NONE", 11, 0)]
    assert h.meta.producer_epoch == 0 and h.meta.pending_state is None


def test_a_new_coordinator_loads_the_log_and_completes_prepared_transactions() -> None:
    h = Harness()
    pid = h.init().producer_id
    h.add(pid, 0, ("a", 0))
    h.end(pid, 0, True)
    h.coordinator.drain_outbox()   # lost with the old coordinator
    new = Harness()
    new.coordinator.become_leader(0, 1, h.log, 100)
    assert new.meta.state == S.PREPARE_COMMIT
    [marker] = new.deliver_markers()
    assert (marker.coordinator_epoch, marker.commit) == (1, True)
    assert new.meta.state == S.COMPLETE_COMMIT


def test_timed_out_transactions_are_fenced_and_aborted() -> None:
    h = Harness()
    pid = h.init().producer_id
    h.add(pid, 0, ("a", 0))
    h.coordinator.poll(60_000)          # not yet past start + timeout
    assert h.meta.state == S.ONGOING
    h.coordinator.next_abort_check = 0
    h.coordinator.poll(60_006)
    assert (h.meta.state, h.meta.producer_epoch) == (S.PREPARE_ABORT, 1)
    h.deliver_markers()
    assert h.meta.state == S.COMPLETE_ABORT
    assert h.end(pid, 0, True) == "PRODUCER_FENCED"


def test_marker_retries_and_fenced_markers() -> None:
    h = Harness()
    pid = h.init().producer_id
    h.add(pid, 0, ("a", 0))
    h.end(pid, 0, False)
    h.deliver_markers("NOT_LEADER_OR_FOLLOWER")
    assert h.coordinator.drain_outbox() == []
    h.coordinator.poll(10 + 99)
    assert h.coordinator.drain_outbox() == []  # not before the retry backoff (100 ms)
    h.coordinator.poll(10 + 100)
    assert len(h.deliver_markers()) == 1
    assert h.meta.state == S.COMPLETE_ABORT


def test_a_resigned_partition_forgets_its_transactions_and_answers_not_coordinator() -> None:
    h = Harness()
    pid = h.init().producer_id
    h.coordinator.resign(7)  # not a partition it coordinates: nothing changes
    assert h.add(pid, 0, ("a", 0)) == "NONE"
    h.coordinator.resign(0)
    assert "t" not in h.coordinator.txns
    assert h.add(pid, 0, ("b", 0)) == "NOT_COORDINATOR"
    assert h.init().error == "NOT_COORDINATOR"


def test_a_write_acknowledged_after_the_coordinator_epoch_moved_answers_not_coordinator() -> None:
    h = Harness(auto_ack=False)
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t", 60_000, None, 0, out.append)
    h.coordinator.resign(0)
    h.coordinator.become_leader(0, 1, [], 0)  # coordinator epoch 1: the write was epoch 0's
    h.waiting.pop()("NONE")
    assert out == [TxnResult("NOT_COORDINATOR")]


def test_a_write_acknowledged_for_a_reloaded_transactional_id_answers_not_coordinator(
        ) -> None:
    """The same coordinator epoch, but the partition was loaded again meanwhile: the write
    was for metadata the coordinator no longer holds."""
    h = Harness(auto_ack=False)
    out: list[TxnResult] = []
    h.coordinator.handle_init_producer_id("t", 60_000, None, 0, out.append)
    h.coordinator.resign(0)
    h.coordinator.become_leader(0, 0, [], 0)
    h.waiting.pop()("NONE")
    assert out == [TxnResult("NOT_COORDINATOR")]


def test_no_transition_leads_to_a_negative_producer_id_or_epoch_but_dead() -> None:
    """Kafka's prepareTransitionTo: a negative producer id or epoch is illegal, except the
    epoch of a Dead (expired) transactional id."""
    for change in ({"producer_epoch": -1}, {"producer_id": -1}):
        with pytest.raises(IllegalTransition, match="negative producer id or epoch"):
            _meta(S.EMPTY).transit(S.EMPTY, 1, **change)
    assert _meta(S.EMPTY).transit(S.DEAD, 1, producer_epoch=-1).producer_epoch == -1
    with pytest.raises(IllegalTransition, match="negative producer id or epoch"):
        _meta(S.EMPTY).transit(S.DEAD, 1, producer_id=-1)


def test_a_pre_registration_begin_writes_only_a_new_partition_set() -> None:
    """The variant's AddPartitionsToTxn: registering what the transaction holds already
    answers NONE without a write, as the classic one does."""
    h = Harness()
    pid = h.init().producer_id
    out: list[str] = []

    def add(*topics: tuple[str, tuple[int, ...]]) -> str:
        prereg.add_partitions(h.coordinator, prereg.AddPartitionsToTxnPreRegRequest(
            "t", pid, 0, None, topics), 5, out.append)
        return out[-1]

    assert add(("a", (0, 1))) == "NONE" and h.meta.state == S.ONGOING
    writes = len(h.log)
    assert add(("a", (0, 1))) == "NONE" and add(("a", (1,))) == "NONE"
    assert len(h.log) == writes
    assert add(("b", (0,))) == "NONE" and len(h.log) == writes + 1
    assert h.meta.topic_partitions == {("a", 0), ("a", 1), ("b", 0)}


def test_a_pre_registration_end_txn_of_another_producer_id_is_refused() -> None:
    h = Harness()
    pid = h.init().producer_id
    out: list[str] = []
    prereg.end_txn(h.coordinator, prereg.EndTxnPreRegRequest("t", pid + 1, 0, True, None), 5,
                   out.append)
    assert out == ["INVALID_PRODUCER_ID_MAPPING"]


def test_a_pre_registration_begin_with_an_empty_group_id_is_refused_and_writes_nothing() -> None:
    """An empty GroupId is INVALID_GROUP_ID (null means no group): one answer, no write, the
    transaction does not start."""
    h = Harness()
    pid = h.init().producer_id
    writes = len(h.log)
    out: list[str] = []
    prereg.add_partitions(h.coordinator, prereg.AddPartitionsToTxnPreRegRequest(
        "t", pid, 0, "", (("a", (0,)),)), 5, out.append)
    assert out == ["INVALID_GROUP_ID"]
    assert len(h.log) == writes and h.meta.state == S.EMPTY and not h.meta.topic_partitions


def _prereg_harness() -> Harness:
    h = Harness()
    h.coordinator = TransactionCoordinator(
        0, TxnCoordinatorConfig(num_partitions=1, pre_registration=True), h._append, h._pid)
    h.coordinator.become_leader(0, 0, [], 0)
    return h


def test_a_pre_registration_end_txn_marks_only_written_partitions_and_the_group() -> None:
    """EndTxn naming what was written: markers go to those registered partitions and to the
    registered group's offsets partition, not to registered but unwritten ones; a written
    partition never registered is INVALID_REQUEST."""
    h = _prereg_harness()
    pid = h.init().producer_id
    out: list[str] = []
    prereg.add_partitions(h.coordinator, prereg.AddPartitionsToTxnPreRegRequest(
        "t", pid, 0, "g", (("a", (0, 1)),)), 5, out.append)
    group = prereg.offsets_partition("g", h.coordinator.offsets_partition_count())
    assert out == ["NONE"] and h.meta.topic_partitions == {("a", 0), ("a", 1), group}
    prereg.end_txn(h.coordinator, prereg.EndTxnPreRegRequest(
        "t", pid, 0, True, (("b", (0,)),)), 5, out.append)
    assert out[-1] == "INVALID_REQUEST" and h.meta.state == S.ONGOING
    prereg.end_txn(h.coordinator, prereg.EndTxnPreRegRequest(
        "t", pid, 0, True, (("a", (1,)),)), 5, out.append)
    assert out[-1] == "NONE" and h.meta.state == S.PREPARE_COMMIT
    markers = h.deliver_markers()
    assert {(m.topic, m.partition) for m in markers} == {("a", 1), group}
    assert all(m.commit and m.producer_id == pid for m in markers)
    assert h.meta.state == S.COMPLETE_COMMIT


def test_a_pre_registration_begin_waits_for_the_previous_markers() -> None:
    """A begin while the previous transaction is completing is held, not bounced, and runs
    once the Complete record is written."""
    h = _prereg_harness()
    pid = h.init().producer_id
    out: list[str] = []

    def begin(partition: int) -> None:
        prereg.add_partitions(h.coordinator, prereg.AddPartitionsToTxnPreRegRequest(
            "t", pid, 0, None, (("a", (partition,)),)), 5, out.append)

    begin(0)
    prereg.end_txn(h.coordinator, prereg.EndTxnPreRegRequest("t", pid, 0, False, None), 5,
                   out.append)
    assert out == ["NONE", "NONE"] and h.meta.state == S.PREPARE_ABORT
    begin(1)
    assert out == ["NONE", "NONE"] and len(h.coordinator.purgatory) == 1
    h.deliver_markers()
    assert out == ["NONE", "NONE", "NONE"] and len(h.coordinator.purgatory) == 0
    assert h.meta.state == S.ONGOING and h.meta.topic_partitions == {("a", 1)}
