"""A node's steps: listeners are called at the end of a step, never inside a request."""

from __future__ import annotations

import random

import pytest

from raft import LeaderAndEpoch, RaftConfig, RaftNode, RaftStorage, Role, Snapshot, SnapshotId
from raft.messages import Envelope, VoteRequest, VoteResponse


class Recorder:
    """A listener that notes every callback."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def handle_commit(self, batches: object, high_watermark: int) -> None:
        self.calls.append(f"commit {high_watermark}")

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        self.calls.append("snapshot")

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.calls.append(f"leader {leader.leader_id}")


def test_append_with_linger_zero_does_not_call_listeners() -> None:
    node = RaftNode(1, (1,), RaftStorage(), random.Random(0), 0,
                    config=RaftConfig(append_linger_ms=0))
    listener = Recorder()
    node.register_listener(listener)
    deadline = node.next_deadline()
    assert deadline is not None
    node.poll(deadline)
    assert node.role is Role.LEADER
    listener.calls.clear()
    now = deadline + 1
    last = node.append(["a", "b"], node.epoch, now)
    assert listener.calls == []  # the append is a request, not a step
    assert node.next_deadline() == now  # the flush is due at once, at the next step
    node.poll(now)
    assert node.high_watermark == last + 1
    assert listener.calls == [f"commit {last + 1}"]




def test_a_listener_cannot_start_a_step_of_its_own_node() -> None:
    node = RaftNode(1, (1,), RaftStorage(), random.Random(0), 0,
                    config=RaftConfig(append_linger_ms=0))
    assert node.role is Role.LEADER  # the only voter leads as it starts

    class Reentrant(Recorder):
        def handle_commit(self, batches: object, high_watermark: int) -> None:
            node.poll(0)

    node.register_listener(Reentrant())
    node.append(["a"], node.epoch, 0)
    with pytest.raises(RuntimeError, match="inside another step"):
        node.poll(0)


def test_a_listener_cannot_make_its_own_node_resign_in_a_callback() -> None:
    """A resignation is a step too: asked for from inside a listener callback, it is
    refused, and the node still leads."""
    node = RaftNode(1, (1,), RaftStorage(), random.Random(0), 0,
                    config=RaftConfig(append_linger_ms=0))

    class Resigning(Recorder):
        def handle_commit(self, batches: object, high_watermark: int) -> None:
            if high_watermark > 1:  # past the LeaderChange record: the append committed
                node.resign(0)

    node.register_listener(Resigning())
    node.append(["a"], node.epoch, 0)
    with pytest.raises(RuntimeError, match="inside another step"):
        node.poll(0)
    assert node.role is Role.LEADER


def test_a_new_listener_loads_a_snapshot_at_offset_zero() -> None:
    storage = RaftStorage()
    bootstrap = Snapshot(SnapshotId(0, 0), ("bootstrap",))
    storage.log.install_snapshot(bootstrap)
    node = RaftNode(1, (1, 2, 3), storage, random.Random(0), 0)
    listener = Recorder()
    node.register_listener(listener)
    assert listener.calls.count("snapshot") == 1
    node.poll(node.next_deadline() or 0)
    assert listener.calls.count("snapshot") == 1  # loaded once


def test_a_vote_in_the_current_epoch_is_granted_again_to_its_candidate_only() -> None:
    """A fresh voter (epoch 0, no leader) gets VoteRequests for epoch 1: it grants the first
    candidate, grants the same candidate's retry, refuses another in that epoch, and
    refuses any request for an older epoch (Kafka's handleVoteRequest)."""
    node = RaftNode(1, (1, 2, 3), RaftStorage(), random.Random(0), 0)

    def vote(candidate: int, epoch: int) -> bool:
        node.handle(Envelope(candidate, 1, VoteRequest(epoch, candidate, 0, 0)), 1)
        [answer] = [env.message for env in node.drain_outbox()
                    if isinstance(env.message, VoteResponse)]
        return answer.vote_granted

    assert vote(2, 1)
    assert node.epoch == 1 and node.voted_id == 2
    assert vote(2, 1)  # the candidate's retry: same epoch, same vote
    assert not vote(3, 1)  # one vote per epoch
    assert not vote(3, 0)  # an older epoch
    assert vote(3, 2)  # a newer epoch: a new vote
