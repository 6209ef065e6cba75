"""A follower replica that diverged from its leader truncates as Kafka's fetcher does
(AbstractFetcherThread's truncation on a diverging epoch, KIP-101 and KIP-279) and then
copies the leader's log: the cases of Kafka's AbstractFetcherThreadTest."""

from __future__ import annotations

import pytest

from broker.partition_log import PartitionLog
from broker.replica import Replica
from metadata.image import PartitionRegistration

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"
LEADER, FOLLOWER = 1, 2


def _replica(broker: int, epochs: list[int], leader_epoch: int) -> Replica:
    """A replica whose log holds one record per entry of ``epochs`` (its leader epoch),
    in a partition led by :data:`LEADER` at ``leader_epoch``."""
    log = PartitionLog(check_sequences=False)
    for epoch in epochs:
        log.append_as_leader([f"{log.end_offset}@{epoch}"], epoch)
    replica = Replica(broker, TOPIC_ID, "t", 0, log)
    replica.become(PartitionRegistration(replicas=(LEADER, FOLLOWER), isr=(LEADER,),
                                         leader=LEADER, leader_epoch=leader_epoch,
                                         partition_epoch=leader_epoch), 0)
    return replica


def _sync(leader: Replica, follower: Replica, rounds: int = 6) -> list[int]:
    """Fetch until the follower is caught up; the follower's log end after each round."""
    ends = []
    for now in range(1, rounds + 1):
        answer = leader.serve_fetch(FOLLOWER, follower.fetch_position(), now, 100)
        follower.apply_fetched(answer)
        ends.append(follower.log.end_offset)
        if not answer.diverging and follower.log.end_offset == leader.log.end_offset:
            break
    return ends


@pytest.mark.parametrize(("leader_epochs", "follower_epochs", "truncated_to"), [
    # the follower's last epoch is the leader's: cut where the leader's epoch ends
    ([1, 1, 3, 3], [1, 1, 1, 1, 1], 2),
    # the leader never had the follower's epoch 2: the end of the follower's epoch 1
    ([1, 1, 1, 4, 4], [1, 1, 2, 2, 2, 2], 2),
    # the follower's log holds only epochs the leader never had, all above the one it
    # answers with: from its first epoch's start (KIP-279), not stuck at the leader's end
    ([1, 1, 1, 1, 1], [2, 2, 2], 0),
    # the follower knows an older epoch than the leader's answer: its end first, then
    # a second round trip finds where they agree
    ([1, 1, 1, 1, 1, 5], [0, 0, 0, 2, 2, 2], 0),
])
def test_a_diverged_follower_truncates_then_copies_the_leaders_log(
        leader_epochs: list[int], follower_epochs: list[int], truncated_to: int) -> None:
    leader = _replica(LEADER, leader_epochs, leader_epoch=6)
    follower = _replica(FOLLOWER, follower_epochs, leader_epoch=6)
    ends = _sync(leader, follower)
    assert min(ends) == truncated_to
    assert [e.value for e in follower.log.entries] == [e.value for e in leader.log.entries]
    assert list(follower.log.epoch_starts) == list(leader.log.epoch_starts)


def test_truncation_below_the_followers_high_watermark_brings_the_hw_down() -> None:
    """A leader whose log diverges below the follower's HW (only after an unclean
    election) makes the follower truncate there all the same, its HW with it (Kafka's
    UnifiedLog.truncateTo); otherwise the follower could never follow that leader."""
    leader = _replica(LEADER, [1, 1, 1, 1, 1], leader_epoch=6)
    follower = _replica(FOLLOWER, [1, 1, 2, 2], leader_epoch=6)
    follower.log.update_high_watermark(3)
    answer = leader.serve_fetch(FOLLOWER, follower.fetch_position(), 1, 100)
    assert answer.diverging and (answer.diverging_epoch, answer.diverging_end_offset) == (1, 5)
    follower.apply_fetched(answer)
    assert (follower.log.end_offset, follower.log.high_watermark) == (2, 2)
    _sync(leader, follower)
    assert [e.value for e in follower.log.entries] == [e.value for e in leader.log.entries]


def test_a_follower_without_the_leaders_epoch_first_cuts_where_its_own_older_epoch_ends(
        ) -> None:
    """KIP-279: the leader answers its epoch 2 (ending at 3); the follower has no epoch 2,
    so it first truncates to the end of its largest epoch below (epoch 0, ending at 5), not
    to the leader's offset; the next round trip finds where the two logs agree (1)."""
    leader = _replica(LEADER, [0, 2, 2, 5, 5], leader_epoch=6)
    follower = _replica(FOLLOWER, [0, 0, 0, 0, 0, 3, 3], leader_epoch=6)
    ends = _sync(leader, follower)
    assert ends[:2] == [5, 1]
    assert [e.value for e in follower.log.entries] == [e.value for e in leader.log.entries]


def test_a_follower_takes_the_leaders_high_watermark_up_to_its_own_log_end() -> None:
    leader = _replica(LEADER, [1, 1, 1], leader_epoch=6)
    follower = _replica(FOLLOWER, [], leader_epoch=6)
    assert leader.log.high_watermark == 3  # the leader alone in the ISR
    _sync(leader, follower)
    assert follower.log.high_watermark == 3


def test_an_answer_that_does_not_continue_the_log_is_ignored() -> None:
    """Records answered for an offset the follower has moved past (a stale answer) are not
    appended: the follower's log and its next fetch position stay as they were."""
    leader = _replica(LEADER, [1, 1, 1, 1], leader_epoch=6)
    follower = _replica(FOLLOWER, [], leader_epoch=6)
    stale = leader.serve_fetch(FOLLOWER, follower.fetch_position(), 1, 100)
    _sync(leader, follower)
    assert not follower.apply_fetched(stale)
    assert follower.log.end_offset == 4


def test_a_follower_of_a_leader_with_an_empty_log_truncates_everything() -> None:
    """A leader with an empty log (elected uncleanly) has no epoch in its cache here and
    answers (-1, -1); Kafka's leader holds its own epoch from offset 0 (makeLeader assigns
    it) and answers the follower's epoch with end offset 0. Either way the follower drops
    its whole log, below its HW too, and follows the leader's."""
    leader = _replica(LEADER, [], leader_epoch=6)
    follower = _replica(FOLLOWER, [1, 1, 2, 2], leader_epoch=6)
    follower.log.update_high_watermark(1)
    answer = leader.serve_fetch(FOLLOWER, follower.fetch_position(), 1, 100)
    assert answer.diverging and (answer.diverging_epoch, answer.diverging_end_offset) == \
        (-1, -1)
    follower.apply_fetched(answer)
    assert (follower.log.entries, follower.log.high_watermark) == ([], 0)
