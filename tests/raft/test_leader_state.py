"""Kafka's LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree (and quorums of two, four
and five voters), the HW rules, and the fetch and caught-up times DescribeQuorum reports."""

from raft import LeaderState, ReplicaDescription, describe_quorum
from raft.quorum_info import OBSERVER_SESSION_TIMEOUT_MS


def test_high_watermark_needs_a_majority_past_the_epoch_start() -> None:
    state = LeaderState(local_id=1, epoch=5, epoch_start_offset=10, voters=(1, 2, 3))
    assert not state.update_local_end_offset(15)
    assert not state.update_replica_end_offset(2, 10)
    assert state.high_watermark is None  # followers at the epoch start: no HW yet
    assert state.update_replica_end_offset(3, 15)
    assert state.high_watermark == 15  # one follower at 15 with the leader: HW 15
    assert not state.update_replica_end_offset(2, 15)
    assert not state.update_local_end_offset(20)
    assert state.high_watermark == 15
    assert state.update_replica_end_offset(2, 20)
    assert state.high_watermark == 20  # leader and a follower at 20: HW 20


def test_high_watermark_is_the_largest_offset_a_majority_holds_in_any_quorum_size() -> None:
    """Two voters need both, four need three, five need three: the HW is the end offset
    that many voters have reached (the leader included)."""
    for voters, ends, expected in (((1, 2), (40, 25), 25),
                                   ((1, 2, 3, 4), (40, 35, 30, 20), 30),
                                   ((1, 2, 3, 4, 5), (40, 35, 30, 20, 15), 30),
                                   ((1, 2, 3, 4, 5), (40, 12, 30, 11, 35), 30)):
        state = LeaderState(local_id=1, epoch=3, epoch_start_offset=10, voters=voters)
        for voter, end in zip(voters, ends, strict=True):
            state.update_replica_end_offset(voter, end)
        assert state.high_watermark == expected, (voters, ends)


def test_high_watermark_never_moves_back_and_ignores_observers() -> None:
    state = LeaderState(local_id=1, epoch=2, epoch_start_offset=0, voters=(1, 2, 3))
    state.update_local_end_offset(30)
    state.update_replica_end_offset(2, 30)
    assert state.high_watermark == 30
    state.update_replica_end_offset(2, 12)  # a stale, reordered fetch
    assert state.high_watermark == 30
    state.update_replica_end_offset(9, 100)  # an observer never counts
    state.update_local_end_offset(100)
    assert state.high_watermark == 30
    assert state.observer_end_offsets == {9: 100}


def test_single_voter_commits_its_own_epoch_start() -> None:
    state = LeaderState(local_id=0, epoch=1, epoch_start_offset=0, voters=(0,))
    assert state.update_local_end_offset(1)
    assert state.high_watermark == 1


def test_preferred_successors_are_most_up_to_date_first() -> None:
    state = LeaderState(local_id=1, epoch=2, epoch_start_offset=0, voters=(1, 2, 3, 4))
    state.update_replica_end_offset(2, 5)
    state.update_replica_end_offset(3, 9)
    assert state.preferred_successors() == (3, 2, 4)


def test_a_voter_that_fetched_at_offset_0_precedes_one_that_never_fetched() -> None:
    """A voter not heard from has no end offset (Kafka: empty, sorted last), below any
    fetched one, even a fetch at offset 0 of an empty log."""
    state = LeaderState(local_id=1, epoch=2, epoch_start_offset=0, voters=(1, 2, 3))
    state.update_replica_end_offset(3, 0)
    assert state.preferred_successors() == (3, 2)


def test_describe_quorum_times_each_fetch_and_catch_up() -> None:
    """DescribeQuorum's times (Kafka's ReplicaState.updateFollowerState): before any fetch
    a follower's end offset and times are -1; a fetch at the leader's end is caught up at
    its own time; a fetch behind the end that reaches the end the previous fetch was told
    of is caught up as of that previous fetch; the leader is fetched and caught up now."""
    state = LeaderState(1, 5, 0, (1, 2, 3))
    state.update_local_end_offset(1)
    before = describe_quorum(state, 50)
    assert before.high_watermark == -1
    assert before.current_voters == (ReplicaDescription(1, 1, 50, 50),
                                     ReplicaDescription(2, -1, -1, -1),
                                     ReplicaDescription(3, -1, -1, -1))
    state.update_replica_end_offset(2, 1, 100)  # at the leader's end
    state.update_local_end_offset(3)
    state.update_replica_end_offset(3, 1, 150)  # behind: told the end is 3
    state.update_local_end_offset(5)
    state.update_replica_end_offset(3, 3, 250)  # reaches 3, the end it was told of
    after = describe_quorum(state, 300)
    assert after.current_voters == (ReplicaDescription(1, 5, 300, 300),
                                    ReplicaDescription(2, 1, 100, 100),
                                    ReplicaDescription(3, 3, 250, 150))
    assert after.high_watermark == 3


def test_describe_quorum_drops_observers_silent_for_five_minutes() -> None:
    """Kafka's OBSERVER_SESSION_TIMEOUT_MS: an observer that has not fetched for 300 s is
    left out; an observer that has never caught up says -1."""
    state = LeaderState(1, 5, 0, (1,))
    state.update_local_end_offset(4)
    state.update_replica_end_offset(7, 0, 1_000)
    assert describe_quorum(state, 1_000 + OBSERVER_SESSION_TIMEOUT_MS - 1).observers == (
        ReplicaDescription(7, 0, 1_000, -1),)
    assert describe_quorum(state, 1_000 + OBSERVER_SESSION_TIMEOUT_MS).observers == ()


def test_an_observer_silent_exactly_five_minutes_is_dropped() -> None:
    """Kafka drops an observer once 300 000 ms have passed since its last fetch (not one
    ms later); one ms before, it is still listed."""
    state = LeaderState(1, 5, 0, (1,))
    state.update_local_end_offset(4)
    state.update_replica_end_offset(7, 4, 2_000)
    assert [o.replica_id for o in describe_quorum(state, 301_999).observers] == [7]
    assert describe_quorum(state, 302_000).observers == ()


def test_reaching_an_end_of_offset_1_told_before_counts_as_caught_up_then() -> None:
    """updateFollowerState credits the previous fetch's time when this fetch reaches the
    leader's end that fetch was told of, for any end past 0 (here 1, a leader's first
    LeaderChange record)."""
    state = LeaderState(1, 5, 0, (1, 2, 3))
    state.update_local_end_offset(1)
    state.update_replica_end_offset(2, 0, 100)  # behind: told the end is 1
    state.update_local_end_offset(3)
    state.update_replica_end_offset(2, 1, 200)  # reaches 1, still behind the end 3
    assert state.last_fetch_ms(2) == 200
    assert state.last_caught_up_ms(2) == 100


def test_a_fetch_at_a_leader_end_of_0_is_caught_up() -> None:
    """A leader end offset of 0 is known (only -1 is none): a fetch at it is caught up;
    before the leader knows its end, a fetch is timed but never caught up."""
    state = LeaderState(1, 5, 0, (1, 2))
    state.update_replica_end_offset(2, 0, 50)
    assert (state.last_fetch_ms(2), state.last_caught_up_ms(2)) == (50, -1)
    state.update_local_end_offset(0)
    state.update_replica_end_offset(2, 0, 100)
    assert (state.last_fetch_ms(2), state.last_caught_up_ms(2)) == (100, 100)


def test_a_fetch_from_a_negative_replica_id_changes_nothing() -> None:
    """A fetch that is not a replica's (a negative id, as a consumer's) moves no high
    watermark, says so, and leaves no observer or fetch time behind."""
    state = LeaderState(1, 5, 0, (1,))
    assert state.update_local_end_offset(3)
    assert not state.update_replica_end_offset(-1, 5, 100)
    assert state.high_watermark == 3
    assert state.observer_end_offsets == {} and state.last_fetch_ms(-1) == -1
    assert describe_quorum(state, 200).observers == ()
