"""Cases of Kafka's KafkaRaftClientReconfigTest that hold for a static quorum, on RaftNode.

KafkaRaftClientReconfigTest is about KIP-853 dynamic voters: kraft.version 1, the voter
set carried by KRaftVersionRecord and VotersRecord control records, and the AddRaftVoter,
RemoveRaftVoter and UpdateRaftVoter RPCs. kraftsim's quorum is static (kraft.version 0):
``RaftNode.voters`` is fixed at construction, the only control record a leader writes is
its LeaderChange, and the KRaftVersionRecord and VotersRecord types exist only in the file
format (kafka_format/). What the class pins for a static quorum and for the bootstrap
snapshot is ported here (tests/raft/kafka_context.py drives the node).

Not modelled, so not ported, with the reason:

- KafkaRaftClientReconfigTest: every AddVoter, RemoveVoter and UpdateVoter case (42 of
  them: testAddVoter*, testRemoveVoter*, testUpdateVoter*, testLeaderUpdatesVoter,
  testFollowerSendsUpdateVoter*, testUpdateVoterResponseCausesEpochChange), the
  ``...WithKraftVersion0`` refusals included: kraftsim has no voter-change RPC at all.
  testLeaderWritesBootstrapRecords and testFollowerReadsKRaftBootstrapRecords: a
  kraft.version 1 bootstrap snapshot's KRaftVersion and Voters records (the voter set
  does not come from the log). testObserverDiscoversLeaderWithUnknownVoters: bootstrap
  servers (controller.quorum.bootstrap.servers); kraftsim's observers know the voters.
  testHandleBeginQuorumRequestMoreEndpoints: voters have no endpoints.
- VoterSetHistoryTest and KRaftControlRecordStateMachineTest (the voter set and
  kraft.version as read from the log and snapshots, by offset): kraftsim's voter set
  never changes, so there is no history to keep; the offset-keyed history behaviour
  itself is ported onto the epoch cache (test_kafka_log_history_cases.py).
- VoterSetTest cases about directory ids, endpoints, adding, removing and updating
  voters and the VotersRecord round trip (testVoterNode*, testEndpoints, testAddVoter,
  testRemoveVoter, testUpdateVoter, testCannotRemoveToEmptyVoterSet,
  testIsVoterWithDirectoryId, testRecordRoundTrip, testOverlappingMajority,
  testNonoverlappingMajority: the last two compare two voter sets, which a static
  quorum never has). The static voter set's cases are below.
"""

from __future__ import annotations

import random

import pytest

from raft import (
    Batch,
    LeaderChangeMessage,
    RaftNode,
    RaftStorage,
    Role,
    Snapshot,
    SnapshotId,
)
from raft.messages import Errors, FetchRequest, FetchResponse
from tests.raft.kafka_context import Context

_BOOTSTRAP = Snapshot(SnapshotId(0, 0), ("bootstrap",))


def test_the_leader_writes_only_its_leader_change_under_a_static_quorum() -> None:
    """testLeaderDoesNotBootstrapRecordsWithKraftVersion0: the new leader's first batch is
    one control batch holding one LeaderChange (leader, voters, granting voters), and no
    KRaftVersion or Voters record."""
    ctx = Context(1, (1, 2), epoch=0)
    epoch = ctx.become_leader()
    [batch] = ctx.log.batches
    assert batch.is_control and (batch.base_offset, batch.epoch) == (0, epoch)
    assert batch.control_records == (LeaderChangeMessage(1, (1, 2), (1, 2)),)


def test_a_leader_holding_the_bootstrap_snapshot_answers_a_fetch_at_0_from_its_log() -> None:
    """testBootstrapCheckpointIsNotReturnedOnFetch: a follower fetching at offset 0 from a
    leader whose disk holds the bootstrap snapshot (ending at 0) is answered from the log,
    with no snapshot id."""
    ctx = Context(1, (1, 2), snapshot=_BOOTSTRAP, epoch=0)
    epoch = ctx.become_leader()
    ctx.deliver(2, ctx.fetch_request(2, 0, 0))
    _, resp = ctx.one_sent(FetchResponse)
    assert (resp.error, resp.epoch, resp.leader_id) == (Errors.NONE, epoch, 1)
    assert resp.snapshot_id is None and resp.diverging is None
    assert [b.base_offset for b in resp.batches] == [0]


def test_a_follower_told_of_a_snapshot_it_holds_fetches_the_log_again() -> None:
    """testFollowerDoesNotRequestLeaderBootstrapSnapshot: a fetch answer naming a snapshot
    the follower already holds (here the bootstrap snapshot) starts no download (Kafka's
    createNewSnapshotUnchecked hands back no writer for a snapshot on disk): the follower
    sends a Fetch again at once, at offset 0 and epoch 0, and takes the log from its
    answer."""
    ctx = Context(1, (1, 2), snapshot=_BOOTSTRAP, epoch=1, leader=2)
    dst, fetch = ctx.one_sent(FetchRequest)
    assert (dst, fetch.epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (2, 1, 0, 0)
    ctx.deliver(2, ctx.fetch_response(fetch, 2, snapshot_id=SnapshotId(0, 0), high_watermark=0))
    sent = [(e.dst, e.message) for e in ctx.drain()]
    assert len(sent) == 1 and isinstance(sent[0][1], FetchRequest), sent
    dst, again = sent[0]
    assert isinstance(again, FetchRequest)
    assert (dst, again.epoch, again.fetch_offset, again.last_fetched_epoch) == (2, 1, 0, 0)
    ctx.deliver(2, ctx.fetch_response(again, 2, batches=[Batch(0, 1, ("a",))],
                                      high_watermark=1))
    assert ctx.log.end_offset == 1 and ctx.listener.data_batches == [("a",)]


# ---------------------------------------------------------------------- VoterSetTest, static


def test_an_empty_voter_set_is_refused() -> None:
    """VoterSetTest.testEmptyVoterSet: a quorum with no voter cannot be built."""
    with pytest.raises(ValueError, match="at least one voter"):
        RaftNode(1, (), RaftStorage(), random.Random(0), 0)


def test_voter_ids_are_the_distinct_voters_and_membership_follows_them() -> None:
    """VoterSetTest.testVoterIds, testIsVoterWithoutDirectoryId: the voter set is the
    distinct ids given (in id order); a node is a voter when its id is among them, else
    an observer."""
    storage = RaftStorage()
    voter = RaftNode(2, (3, 1, 2, 3), storage, random.Random(0), 0)
    assert voter.voters == (1, 2, 3) and voter.is_voter
    observer = RaftNode(4, (3, 1, 2), RaftStorage(), random.Random(0), 0)
    assert observer.voters == (1, 2, 3) and not observer.is_voter


@pytest.mark.parametrize(("voters", "alone"), [((1,), True), ((1, 2), False), ((1, 2, 3), False)],
                         ids=["standalone", "two", "three"])
def test_only_the_only_voter_leads_at_start(voters: tuple[int, ...], alone: bool) -> None:
    """VoterSetTest.testIsOnlyVoterInStandalone, testIsOnlyVoterInNotStandalone: the only
    voter of a quorum elects itself at start, without asking anyone; a voter among others
    waits for an election."""
    ctx = Context(1, voters, pre_vote=True)
    assert (ctx.node.role is Role.LEADER) is alone
    if not alone:
        assert ctx.node.role is Role.UNATTACHED and ctx.node.epoch == 0
