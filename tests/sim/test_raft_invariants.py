"""The raft checkers catch each violation they name, and only it: a healthy raft-only run
is tampered with one way at a time (a node's disk, its persisted election state, the
leader's high watermark) and the checker is asked to look again.

The tampering stands for a bug a checker must catch whatever code made it; the runs
themselves never do this.
"""

from __future__ import annotations

import msgspec
import pytest

import sim.world as world_module
from raft import Batch, LeaderAndEpoch
from raft.snapshot import Snapshot, SnapshotId
from raft.storage import ElectionState
from sim.invariants.history import CommittedLog
from sim.invariants.raft import CommitAuditor, RaftInvariants
from sim.raft_sim import RaftSimConfig, build_raft_sim
from sim.world import InvariantViolation, Simulation


def _healthy(voters: int = 3, seed: int = 5) -> tuple[Simulation, RaftInvariants]:
    """A raft-only cluster run for 3 s with appends every 100 ms, no faults: a leader, a
    committed history, every voter's disk flushed."""
    sim, invariants = build_raft_sim(RaftSimConfig(seed=seed, voters=voters, duration_ms=3000,
                                                   snapshot_every=0))
    sim.run_for(3000)
    assert sim.violation is None and sim.leader_slot() is not None
    assert invariants.history.last is not None
    return sim, invariants


def _look_again(sim: Simulation, invariants: RaftInvariants) -> None:
    invariants.check(sim, list(sim.slots.values()))


def _violation(sim: Simulation, invariants: RaftInvariants) -> str:
    with pytest.raises(InvariantViolation) as caught:
        _look_again(sim, invariants)
    return str(caught.value)


def _unflush(sim: Simulation, followers: int, below: int) -> None:
    """Move the flush point of ``followers`` voters back to ``below`` (the leader first)."""
    leader = sim.leader_slot()
    assert leader is not None
    order = [leader.node_id] + [v for v in sim.voter_ids if v != leader.node_id]
    for voter in order[:followers]:
        log = sim.slots[voter].storage.log
        log.flushed_end = min(log.flushed_end, below)


@pytest.mark.parametrize("voters", [3, 5])
def test_a_committed_batch_must_be_on_a_majority_of_disks(voters: int) -> None:
    sim, invariants = _healthy(voters)
    invariants.disabled = frozenset({"MajorityReachedHighWatermark"})
    last = invariants.history.last
    assert last is not None
    _unflush(sim, voters // 2, last.base_offset)  # a minority lost it: still durable
    _look_again(sim, invariants)
    _unflush(sim, voters // 2 + 1, last.base_offset)  # a majority lost it
    message = _violation(sim, invariants)
    assert "CommittedDurable" in message
    assert f"is on the disk of only {voters - voters // 2 - 1} of {voters} voters" in message


@pytest.mark.parametrize("voters", [3, 5])
def test_the_high_watermark_must_be_on_a_majority_of_disks(voters: int) -> None:
    sim, invariants = _healthy(voters)
    invariants.disabled = frozenset({"CommittedDurable"})
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    hw = leader.raft.high_watermark
    assert hw is not None and hw > 1
    _unflush(sim, voters // 2, hw - 1)
    _look_again(sim, invariants)
    _unflush(sim, voters // 2 + 1, hw - 1)
    message = _violation(sim, invariants)
    assert "MajorityReachedHighWatermark" in message
    assert f"only {voters - voters // 2 - 1} of {voters} voters hold offset {hw - 1}" in message


def test_a_high_watermark_moved_past_what_a_majority_flushed_is_caught() -> None:
    """Kafka's hw-without-majority bug: the leader's HW moves on before a majority holds
    the offsets (the disks are as they were)."""
    sim, invariants = _healthy()
    invariants.disabled = frozenset({"CommittedDurable"})
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    end = max(sim.slots[v].storage.log.flushed_end for v in sim.voter_ids)
    leader.raft.high_watermark = end + 1
    message = _violation(sim, invariants)
    assert "MajorityReachedHighWatermark" in message
    assert f"only 0 of 3 voters hold offset {end}" in message


def test_the_leaders_high_watermark_never_goes_back() -> None:
    sim, invariants = _healthy()
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    hw = leader.raft.high_watermark
    assert hw is not None
    leader.raft.high_watermark = hw - 1
    message = _violation(sim, invariants)
    assert "MonotonicHighWatermark" in message and f"below {hw} seen before" in message


def test_a_persisted_epoch_never_goes_back_and_matches_the_running_one() -> None:
    sim, invariants = _healthy()
    voter = sim.voter_ids[-1]
    storage = sim.slots[voter].storage
    election = storage.election
    storage.election = msgspec.structs.replace(election, epoch=election.epoch - 1)
    message = _violation(sim, invariants)
    assert "MonotonicEpoch" in message
    assert f"persisted epoch {election.epoch - 1} after {election.epoch}" in message


def test_one_epoch_has_one_leader() -> None:
    sim, invariants = _healthy()
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    other = next(v for v in sim.voter_ids if v != leader.node_id)
    slot = sim.slots[other]
    epoch = slot.storage.election.epoch
    assert epoch == leader.raft.epoch
    slot.storage.election = ElectionState(epoch, voted_id=None, leader_id=other)
    assert slot.raft is not None
    message = _violation(sim, invariants)
    assert "SingleLeader" in message
    assert f"epoch {epoch} has leaders {leader.node_id} and {other}" in message


def test_a_new_leader_must_hold_what_earlier_epochs_committed() -> None:
    """A leader of a later epoch whose log lacks committed batches, or holds another batch
    where one was committed, breaks Raft's leader completeness (§5.4)."""
    sim, invariants = _healthy()
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    epoch, committed = leader.raft.epoch, invariants.committed_in_epoch[leader.raft.epoch]
    invariants.committed_in_epoch[epoch - 1] = leader.storage.log.end_offset
    invariants.completeness_checked.discard((leader.node_id, epoch))
    invariants._node_seen.clear()  # the leader looks new to the checker
    _look_again(sim, invariants)  # its log ends where the commits end: complete
    invariants.committed_in_epoch[epoch - 1] = leader.storage.log.end_offset + 5
    invariants.completeness_checked.discard((leader.node_id, epoch))
    invariants._node_seen.clear()
    message = _violation(sim, invariants)
    assert "LeaderCompleteness" in message and "before the committed end" in message
    invariants.committed_in_epoch[epoch - 1] = committed
    history = invariants.history
    first = leader.storage.log.batches[0]
    assert history.get(first.base_offset) == first
    swapped = msgspec.structs.replace(first, epoch=first.epoch + 100)
    history.batches[first.base_offset] = swapped  # the history says another was committed
    invariants.completeness_checked.discard((leader.node_id, epoch))
    invariants._node_seen.clear()
    message = _violation(sim, invariants)
    assert "LeaderCompleteness" in message and "different batch" in message


def test_a_listener_gets_committed_batches_in_order_once_below_the_hw_and_identical() -> None:
    history = CommittedLog()
    first, second = CommitAuditor(1, history), CommitAuditor(2, history)
    batches = [Batch(0, 1, ("a", "b")), Batch(2, 1, ("c",))]
    first.handle_commit(batches, 3)
    second.handle_commit(batches[:1], 2)
    with pytest.raises(InvariantViolation, match="got batch 0 while expecting offset 2"):
        second.handle_commit(batches[:1], 3)  # delivered twice
    with pytest.raises(InvariantViolation, match="got batch 2-2 above its high watermark 2"):
        second.handle_commit(batches[1:], 2)
    with pytest.raises(InvariantViolation) as differs:
        second.handle_commit([Batch(2, 2, ("x",))], 3)  # not the committed batch
    assert "LogMatching" in str(differs.value)
    assert "node 2: batch at 2 (epoch 2) differs from the committed batch (epoch 1)" in \
        str(differs.value)
    with pytest.raises(InvariantViolation, match="got batch 5 while expecting offset 3"):
        first.handle_commit([Batch(5, 1, ("gap",))], 6)


def test_a_livelock_fails_the_run_instead_of_running_forever(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A timer that keeps firing at the time it fires at (an injected bug made the periodic
    NoOpRecord do so) would make the simulation run forever at one millisecond: past
    MAX_EVENTS_AT_ONE_TIME events without the clock moving the run fails TimeAdvances."""
    monkeypatch.setattr(world_module, "MAX_EVENTS_AT_ONE_TIME", 500)
    sim, _ = _healthy()
    stuck_at = sim.now + 10

    def again() -> None:
        sim.schedule(sim.now, again, "again")

    sim.schedule(stuck_at, again, "again")
    steps = 0  # step by step, bounded: a broken guard fails here instead of hanging
    while sim.violation is None and steps < 5_000:
        sim.step()
        steps += 1
    assert sim.violation is not None and sim.violation.invariant == "TimeAdvances"
    assert sim.now == stuck_at
    assert sim.violation.message == f"501 events at {stuck_at} ms without the clock moving: " \
                                    "a livelock"  # the first event past the limit fails


def test_a_committed_batch_is_held_only_by_a_disk_holding_that_very_batch() -> None:
    """CommittedDurable counts a voter only if its disk holds the committed batch itself:
    another batch at the same offsets (a majority's disks rewritten) is a loss."""
    sim, invariants = _healthy()
    invariants.disabled = frozenset({"MajorityReachedHighWatermark"})
    last = invariants.history.last
    assert last is not None
    leader = sim.leader_slot()
    assert leader is not None
    others = [v for v in sim.voter_ids if v != leader.node_id]
    for voter in others:
        log = sim.slots[voter].storage.log
        log._batches[log.index_of(last.base_offset)] = msgspec.structs.replace(
            last, epoch=last.epoch + 100)
    invariants._durable_checked = None  # the disks changed in place: look at them again
    message = _violation(sim, invariants)
    assert "CommittedDurable" in message and "on the disk of only 1 of 3 voters" in message


def test_a_committed_batch_below_a_voters_snapshot_counts_as_held() -> None:
    """A voter whose log was cut below a snapshot that covers the batch still holds it (the
    cut is made by hand, without a snapshot: SnapshotAtLogStart is not asked)."""
    sim, invariants = _healthy()
    invariants.disabled = frozenset({"MajorityReachedHighWatermark", "SnapshotAtLogStart"})
    last = invariants.history.last
    assert last is not None
    for voter in sim.voter_ids:
        log = sim.slots[voter].storage.log
        log.start_offset = last.end_offset
        log.flushed_end = 0  # nothing of the log itself is on disk: only the snapshot
    _look_again(sim, invariants)


def test_a_node_running_in_an_epoch_it_did_not_persist_is_caught() -> None:
    sim, invariants = _healthy()
    leader = sim.leader_slot()
    assert leader is not None
    other = sim.slots[next(v for v in sim.voter_ids if v != leader.node_id)]
    assert other.raft is not None
    persisted = other.storage.election.epoch
    other.raft.epoch = persisted + 1
    message = _violation(sim, invariants)
    assert "MonotonicEpoch" in message
    assert f"runs in epoch {persisted + 1} but persisted epoch {persisted}" in message


def test_a_leader_counts_as_its_epochs_leader_whatever_its_disk_says() -> None:
    """SingleLeader takes a node in the LEADER role as its epoch's leader even if its
    persisted election state names none, so a second node claiming that epoch is caught."""
    sim, _ = _healthy()
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    epoch = leader.raft.epoch
    leader.storage.election = ElectionState(epoch, voted_id=leader.node_id, leader_id=None)
    other = next(v for v in sim.voter_ids if v != leader.node_id)
    sim.slots[other].storage.election = ElectionState(epoch, voted_id=None, leader_id=other)
    with pytest.raises(InvariantViolation) as caught:  # only these two nodes say anything
        RaftInvariants().check(sim, [leader, sim.slots[other]])
    assert caught.value.invariant == "SingleLeader"
    assert f"epoch {epoch} has leaders {leader.node_id} and {other}" in str(caught.value)


def test_a_leader_one_offset_short_of_the_committed_end_is_incomplete() -> None:
    sim, invariants = _healthy()
    leader = sim.leader_slot()
    assert leader is not None and leader.raft is not None
    epoch = leader.raft.epoch
    invariants.committed_in_epoch[epoch - 1] = leader.storage.log.end_offset + 1
    invariants.completeness_checked.discard((leader.node_id, epoch))
    invariants._node_seen.clear()
    message = _violation(sim, invariants)
    assert "LeaderCompleteness" in message
    assert f"log ends at {leader.storage.log.end_offset}, before the committed end " \
           f"{leader.storage.log.end_offset + 1}" in message


def test_a_wiped_disk_starts_its_epochs_over_without_a_violation() -> None:
    """A wiped voter comes back at epoch 0: MonotonicEpoch starts over for it."""
    sim, _ = _healthy()
    leader = sim.leader_slot()
    assert leader is not None
    victim = next(v for v in sim.voter_ids if v != leader.node_id)
    assert sim.slots[victim].storage.election.epoch > 0
    sim.wipe(victim)
    sim.run_for(50)
    sim.restart(victim)
    sim.run_for(1000)
    assert sim.violation is None


def test_after_a_wipe_durability_and_majority_are_not_checked() -> None:
    """A wiped disk loses committed data by design: once a disk was wiped, neither
    CommittedDurable nor MajorityReachedHighWatermark judges the voters' disks."""
    sim, invariants = _healthy()
    last = invariants.history.last
    assert last is not None
    sim.wipes = 1
    _unflush(sim, 3, last.base_offset)
    _look_again(sim, invariants)


def test_a_listener_continues_after_a_loaded_snapshot() -> None:
    auditor = CommitAuditor(1, CommittedLog())
    auditor.handle_load_snapshot(Snapshot(SnapshotId(10, 2), ()))
    auditor.handle_commit([Batch(10, 2, ("a",))], 11)
    assert auditor.next_offset == 11


def test_the_committed_history_refuses_overlaps_and_finds_batches_by_offset() -> None:
    history = CommittedLog()
    assert history.observe(Batch(0, 1, ("a", "b"))) is None
    assert history.observe(Batch(1, 1, ("b",))) == "batch at 1 overlaps committed data below 2"
    assert history.observe(Batch(4, 1, ("e",))) is None  # 2-3 not known yet
    assert history.observe(Batch(1, 1, ("x",))) == \
        "batch at 1 overlaps committed data below 5"
    assert history.end == 5 and history.last == Batch(4, 1, ("e",))
    assert history.batch_containing(0) == Batch(0, 1, ("a", "b"))
    assert history.batch_containing(1) == Batch(0, 1, ("a", "b"))
    assert history.batch_containing(4) == Batch(4, 1, ("e",))
    assert history.batch_containing(2) is None and history.batch_containing(3) is None
    assert history.batch_containing(5) is None and history.batch_containing(-1) is None
    assert history.observe(Batch(4, 1, ("e",))) is None  # the same batch again
    assert history.observe(Batch(5, 1, ("f",))) is None
    assert history.observe(Batch(4, 1, ("e", "f"))) == \
        "batch at 4 (epoch 1) differs from the committed batch (epoch 1)"


def test_a_leader_is_logged_and_checked_for_completeness_once_per_epoch() -> None:
    sim, invariants = _healthy()
    leaders = list(invariants.leader_log)
    assert len({(epoch, node) for epoch, node, _ in leaders}) == len(leaders) >= 1
    invariants._node_seen.clear()  # every node looks changed: the leader is seen again
    _look_again(sim, invariants)
    assert invariants.leader_log == leaders


def _snapshotted(seed: int = 5) -> tuple[Simulation, RaftInvariants]:
    """A raft-only run of 3 voters that snapshots every 10 values: every node's log starts at
    a snapshot by the end."""
    sim, invariants = build_raft_sim(RaftSimConfig(seed=seed, voters=3, duration_ms=3000,
                                                   snapshot_every=10))
    sim.run_for(3000)
    assert sim.violation is None
    assert all(slot.storage.log.snapshot is not None for slot in sim.slots.values())
    return sim, invariants


def test_a_snapshotting_run_keeps_every_log_starting_at_its_snapshot() -> None:
    sim, invariants = _snapshotted()
    invariants._snapshot_seen.clear()
    _look_again(sim, invariants)
    assert all(slot.storage.log.start_offset > 0 for slot in sim.slots.values())


def test_a_log_starting_elsewhere_than_its_snapshot_is_caught() -> None:
    """SnapshotAtLogStart, Kafka's first and third checks: a log cut past its snapshot, and
    a log that starts after 0 with no snapshot at all."""
    sim, invariants = _snapshotted()
    log = sim.slots[1].storage.log
    assert log.snapshot is not None
    log.start_offset = log.snapshot.snapshot_id.end_offset + 1
    message = _violation(sim, invariants)
    assert "SnapshotAtLogStart" in message and "node 1 log starts at" in message

    sim, invariants = _snapshotted()
    sim.slots[2].storage.log.snapshot = None
    message = _violation(sim, invariants)
    assert "SnapshotAtLogStart" in message and "without a snapshot" in message


def test_a_snapshot_whose_epoch_the_log_does_not_know_is_caught() -> None:
    """SnapshotAtLogStart, Kafka's second check: the snapshot id must be a valid fetch
    position of the log (here it claims an epoch later than the log's batches after it)."""
    sim, invariants = _snapshotted()
    log = sim.slots[0].storage.log
    assert log.snapshot is not None and log.end_offset > log.start_offset
    snapshot_id = log.snapshot.snapshot_id
    assert snapshot_id.epoch == log.last_epoch
    log.snapshot = msgspec.structs.replace(
        log.snapshot, snapshot_id=SnapshotId(snapshot_id.end_offset, snapshot_id.epoch + 1))
    message = _violation(sim, invariants)
    assert "SnapshotAtLogStart" in message and "not a valid position" in message


def test_a_leaders_state_machine_asked_to_load_a_snapshot_is_caught() -> None:
    """LeaderNeverLoadSnapshot: told its node leads, a state machine may not be handed a
    snapshot until a leader change tells it otherwise; before and after, it may."""
    auditor = CommitAuditor(1, CommittedLog())
    auditor.handle_load_snapshot(Snapshot(SnapshotId(10, 2), ()))
    auditor.handle_leader_change(LeaderAndEpoch(1, 3))
    with pytest.raises(InvariantViolation) as caught:
        auditor.handle_load_snapshot(Snapshot(SnapshotId(20, 3), ()))
    assert caught.value.invariant == "LeaderNeverLoadSnapshot"
    auditor.handle_leader_change(LeaderAndEpoch(None, 4))
    auditor.handle_load_snapshot(Snapshot(SnapshotId(20, 3), ()))
    assert auditor.next_offset == 20


def test_a_log_that_starts_past_0_without_a_snapshot_is_caught() -> None:
    """SnapshotAtLogStart: a log that does not start at 0 must start at its snapshot's end;
    one starting at offset 1 with no snapshot lost its first record."""
    sim, invariants = _healthy()
    invariants.disabled = frozenset({"MajorityReachedHighWatermark", "CommittedDurable",
                                     "LeaderCompleteness"})
    follower = sim.slots[next(v for v in sim.voter_ids
                              if sim.leader_slot() is not sim.slots[v])]
    log = follower.storage.log
    assert log.snapshot is None and log.start_offset == 0
    log.start_offset = 1
    message = _violation(sim, invariants)
    assert "SnapshotAtLogStart" in message and "starts at 1 without a snapshot" in message
