"""The group coordinator alone: transactional offsets pending until the marker, OffsetFetch."""

from __future__ import annotations

from collections.abc import Callable

from broker.partition_log import PartitionLog, SequenceError
from broker.txn.coordinator import (
    CONSUMER_OFFSETS_TOPIC,
    TransactionCoordinator,
    TxnCoordinatorConfig,
    partition_for,
)
from broker.txn.group import (
    GroupCoordinator,
    GroupCoordinatorConfig,
    OffsetsState,
    decode_offset,
    encode_offset,
    offset_commit_time,
)
from broker.txn.mutations import TxnMutation

TP = ("in", 0)


class Harness:
    """A group coordinator of the one ``__consumer_offsets`` partition, over a real log whose
    high watermark the test moves."""

    def __init__(self, mutations: frozenset[TxnMutation] = frozenset()) -> None:
        self.log = PartitionLog()
        self.fail_next: list[str] = []
        self.coordinator = GroupCoordinator(0, GroupCoordinatorConfig(num_partitions=1),
                                            self._append, mutations)
        self.answers: list[str] = []
        self.sync()

    def _append(self, partition: int, values: list[str], producer_id: int, epoch: int,
                transactional: bool, done: Callable[[str], None]) -> None:
        if self.fail_next:
            done(self.fail_next.pop(0))
            return
        try:
            self.log.check_batch(producer_id, epoch, -1, len(values))
        except SequenceError as exc:
            done(exc.code)
            return
        self.log.append_as_leader(values, 0, producer_id, epoch, -1, transactional)
        done("NONE")

    def sync(self, replicated: bool = True) -> None:
        if replicated:
            self.log.update_high_watermark(self.log.end_offset)
        self.coordinator.sync(0, 0, self.log.entries, self.log.high_watermark)

    def txn_commit(self, offset: int, pid: int = 7, epoch: int = 0, group: str = "g") -> str:
        self.coordinator.handle_txn_offset_commit("app", group, pid, epoch, {TP: offset}, 0,
                                                  self.answers.append, label="app/app-1/1")
        return self.answers[-1]

    def marker(self, commit: bool, pid: int = 7, epoch: int = 0) -> None:
        self.log.append_marker(0, pid, epoch, commit, 0)

    def fetch(self, require_stable: bool = True, group: str = "g") -> tuple[int, str]:
        self.sync(replicated=False)
        result = self.coordinator.handle_offset_fetch(group, [TP], require_stable)
        return result.partitions[TP] if result.error == "NONE" else (-1, result.error)


def test_a_transactional_offset_commit_is_committed_only_by_the_commit_marker() -> None:
    h = Harness()
    assert h.txn_commit(5) == "NONE"
    h.sync()
    assert h.fetch() == (-1, "UNSTABLE_OFFSET_COMMIT")
    assert h.fetch(require_stable=False) == (-1, "NONE")
    h.marker(commit=True)
    h.sync()
    assert h.fetch() == (5, "NONE")


def test_an_aborted_transaction_discards_its_pending_offsets() -> None:
    h = Harness()
    h.txn_commit(5)
    h.marker(commit=True)
    h.txn_commit(9)
    h.marker(commit=False)
    h.sync()
    assert h.fetch() == (5, "NONE")


def test_the_marker_counts_only_once_below_the_high_watermark() -> None:
    h = Harness()
    h.txn_commit(5)
    h.sync()
    h.marker(commit=True)
    h.sync(replicated=False)  # the COMMIT marker is not yet replicated
    assert h.fetch(require_stable=False) == (-1, "NONE")
    h.sync()
    assert h.fetch() == (5, "NONE")


def test_a_pending_commit_above_the_high_watermark_is_unstable() -> None:
    h = Harness()
    h.coordinator.handle_txn_offset_commit("app", "g", 7, 0, {TP: 3}, 0, h.answers.append)
    assert h.fetch() == (-1, "UNSTABLE_OFFSET_COMMIT")  # appended, not yet replicated


def test_a_marker_above_the_high_watermark_settles_the_pending_commit_commit_or_abort(
        ) -> None:
    """A pending commit whose ABORT or COMMIT marker is in the log but not yet replicated
    is no longer unstable (Kafka's group coordinator completes it on the marker's append);
    OffsetFetch asks for stable offsets only when told (requireStable, KIP-447)."""
    for commit in (False, True):
        h = Harness()
        h.coordinator.handle_txn_offset_commit("app", "g", 7, 0, {TP: 3}, 0, h.answers.append)
        h.marker(commit)
        assert h.fetch() == (-1, "NONE")
        h.txn_commit(6, pid=8)
        assert h.fetch() == (-1, "UNSTABLE_OFFSET_COMMIT")
        assert h.coordinator.handle_offset_fetch("g", [TP]).partitions[TP] == (-1, "NONE")


def test_a_new_leader_replays_the_log() -> None:
    h = Harness()
    h.txn_commit(4)
    h.marker(commit=True)
    h.txn_commit(8)
    h.sync()
    fresh = GroupCoordinator(1, GroupCoordinatorConfig(num_partitions=1), lambda *a: None)
    fresh.sync(0, 1, h.log.entries, h.log.high_watermark)
    assert fresh.handle_offset_fetch("g", [TP], True).partitions[TP] == \
        (-1, "UNSTABLE_OFFSET_COMMIT")
    assert fresh.handle_offset_fetch("g", [TP], False).partitions[TP] == (4, "NONE")


def test_a_plain_offset_commit_is_committed_at_the_high_watermark() -> None:
    h = Harness()
    h.coordinator.handle_offset_commit("g", {TP: 2}, 0, h.answers.append)
    assert h.answers == ["NONE"]
    assert h.fetch(require_stable=False) == (-1, "NONE")
    h.sync()
    assert h.fetch() == (2, "NONE")


def test_an_older_producer_epoch_is_refused_by_the_log() -> None:
    h = Harness()
    h.marker(commit=False, epoch=1)  # the fence's abort marker at the bumped epoch
    assert h.txn_commit(5, epoch=0) == "INVALID_PRODUCER_EPOCH"


def test_errors_follow_kafka() -> None:
    h = Harness()
    assert h.fetch(group="") == (-1, "INVALID_GROUP_ID")
    h.fail_next = ["NOT_ENOUGH_REPLICAS"]
    assert h.txn_commit(1) == "COORDINATOR_NOT_AVAILABLE"
    h.fail_next = ["NOT_LEADER_OR_FOLLOWER"]
    assert h.txn_commit(1) == "NOT_COORDINATOR"
    h.coordinator.resign(0)
    assert h.coordinator.handle_offset_fetch("g", [TP]).error == "NOT_COORDINATOR"
    assert h.txn_commit(1) == "NOT_COORDINATOR"


def test_the_mutation_commits_offsets_outside_the_transaction() -> None:
    h = Harness(frozenset({TxnMutation.OFFSETS_OUTSIDE_TXN}))
    h.txn_commit(5)
    h.marker(commit=False)
    h.sync()
    assert h.fetch() == (5, "NONE")


def test_offset_records_round_trip_with_a_slash_in_the_group() -> None:
    text = encode_offset("a/b/1", "g/x", "in", 3, 42, 9)
    assert text.startswith("a/b/1/") and text.rsplit("/", 1)[0] == "a/b/1"
    assert decode_offset(text) == (("g/x", "in", 3), 42)
    assert decode_offset("a/b/1/7") is None


def test_add_offsets_adds_the_groups_offsets_partition() -> None:
    added: list[str] = []
    coordinator = TransactionCoordinator(
        0, TxnCoordinatorConfig(num_partitions=1), lambda p, t, done: done("NONE"),
        lambda: ("NONE", 7))
    coordinator.become_leader(0, 0, [], 0)
    coordinator.handle_init_producer_id("app", 10_000, None, 0, lambda r: None)
    coordinator.handle_add_offsets("app", 7, 0, "group", 50, 0, added.append)
    assert added == ["NONE"]
    assert coordinator.txns["app"].topic_partitions == {
        (CONSUMER_OFFSETS_TOPIC, partition_for("group", 50))}
    coordinator.handle_add_offsets("app", 7, 1, "group", 50, 0, added.append)
    assert added[-1] == "PRODUCER_FENCED"


def test_a_commit_marker_does_not_overwrite_a_newer_plain_commit() -> None:
    """completePendingTxnOffsetCommit: the pending transactional offset replaces the
    committed one only if its record is newer; a plain OffsetCommit written after it
    (and before the COMMIT marker) stays."""
    h = Harness()
    assert h.txn_commit(4) == "NONE"                               # offset record at 0
    h.coordinator.handle_offset_commit("g", {TP: 9}, 0, h.answers.append)  # at 1
    h.marker(commit=True)                                          # at 2
    h.sync()
    assert h.fetch() == (9, "NONE")


def test_a_marker_above_the_high_watermark_settles_a_replicated_pending_commit() -> None:
    """The pending commit is below the high watermark, its marker above it: with
    requireStable the partition is no longer unstable (the marker is in the log)."""
    h = Harness()
    assert h.txn_commit(4) == "NONE"
    h.sync()
    assert h.fetch() == (-1, "UNSTABLE_OFFSET_COMMIT")
    h.marker(commit=True)
    assert h.fetch() == (-1, "NONE")
    h.sync()
    assert h.fetch() == (4, "NONE")


def test_a_new_leader_epoch_replays_the_log_from_the_start() -> None:
    """Leading the partition again in a new epoch loads it anew (the log may have been
    truncated and rewritten meanwhile): offsets of the previous epoch's log do not stay."""
    h = Harness()
    h.coordinator.handle_offset_commit("g", {TP: 5}, 0, h.answers.append)
    h.sync()
    assert h.fetch() == (5, "NONE")
    rewritten = PartitionLog()
    rewritten.append_as_leader([encode_offset("x", "g", TP[0], TP[1], 7, 0)], 1)
    rewritten.update_high_watermark(1)
    h.coordinator.sync(0, 1, rewritten.entries, rewritten.high_watermark)
    assert h.coordinator.handle_offset_fetch("g", [TP]).partitions[TP] == (7, "NONE")


def test_a_txn_offset_commit_without_transactional_id_is_refused_and_writes_nothing() -> None:
    """TxnOffsetCommit names the producer's transactional id; without one it is an invalid
    request and no offset record is appended."""
    h = Harness()
    h.coordinator.handle_txn_offset_commit("", "g", 7, 0, {TP: 3}, 0, h.answers.append)
    assert h.answers == ["INVALID_REQUEST"] and h.log.end_offset == 0


def test_a_plain_commit_not_yet_replicated_is_not_unstable() -> None:
    """requireStable (KIP-447) concerns pending transactional offsets only: a plain
    OffsetCommit above the high watermark is simply not committed yet."""
    h = Harness()
    h.coordinator.handle_offset_commit("g", {TP: 2}, 0, h.answers.append)
    assert h.fetch(require_stable=True) == (-1, "NONE")


def test_offset_zero_is_a_valid_commit_and_a_negative_one_is_refused() -> None:
    """Offset 0 (nothing consumed yet past the first record) commits like any other; only a
    negative offset is INVALID_COMMIT_OFFSET_SIZE and writes nothing."""
    h = Harness()
    assert h.txn_commit(0) == "NONE"
    h.marker(commit=True)
    h.sync()
    assert h.fetch() == (0, "NONE")
    end = h.log.end_offset
    assert h.txn_commit(-1, pid=8) == "INVALID_COMMIT_OFFSET_SIZE"
    assert h.log.end_offset == end


def test_by_default_a_group_maps_onto_fifty_offsets_partitions() -> None:
    """offsets.topic.num.partitions defaults to 50, as Kafka's: "my-group" (Java hash
    -1906497762) is coordinated on partition 1906497762 % 50 = 12."""
    coordinator = GroupCoordinator(0, GroupCoordinatorConfig(), Harness()._append)
    assert coordinator.config.num_partitions == 50
    assert coordinator.partition_of("my-group") == 12 == partition_for("my-group", 50)


def test_an_incremental_replay_reports_each_newly_committed_offset_once() -> None:
    """OffsetsState.apply, fed the log bit by bit from ``applied`` (as the coordinator's sync
    and the offsets checker do), reports each offset once, when it becomes committed."""
    h = Harness()
    h.coordinator.handle_offset_commit("g", {TP: 2}, 0, h.answers.append)
    state = OffsetsState()
    assert state.apply(h.log.entries[state.applied:]) == [(("g", *TP), 2)]
    assert state.applied == h.log.end_offset == 1
    h.txn_commit(5)
    assert state.apply(h.log.entries[state.applied:]) == []  # pending, not committed
    h.marker(commit=True)
    assert state.apply(h.log.entries[state.applied:]) == [(("g", *TP), 5)]
    assert state.applied == h.log.end_offset


def test_the_commit_time_of_an_offset_record_is_read_back() -> None:
    """offset_commit_time reads CommitTimestamp back from a labelled record (-1 for text
    that is not an offset record)."""
    assert offset_commit_time(encode_offset("app/app-1/1", "g/1", "in", 0, 5, 1234)) == 1234
    assert offset_commit_time("app/app-1/1/plain text") == -1
