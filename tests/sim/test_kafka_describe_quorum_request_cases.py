"""DescribeQuorum of a running cluster, following Kafka's DescribeQuorumRequestTest
(core/src/test/scala/unit/kafka/server/).

Kafka's test starts a KRaft cluster (one controller, one broker), sends DescribeQuorum for
``__cluster_metadata-0`` at each version of the API to a broker (which forwards it to the
controller quorum's leader) and checks the answer: no error, the leader's id and epoch, a
high watermark and end offsets past 0, the controllers as the voters and the brokers as the
observers, and each replica's last fetch and last caught-up times known (version 1 on).
kraftsim has no request versions and no forwarding broker: the answer here is
:meth:`raft.RaftNode.describe_quorum` of the quorum's leader (:mod:`raft.quorum_info`),
which holds what every version from 1 holds; the shell's ``status --format json`` shows
it under ``quorum``. A last case checks what any other node answers.

Not ported (parts of testDescribeQuorum):

- version 0's -1 timestamps: request versions are not modelled (the answer is version 1's
  on).
- version 2's nodes (each voter's listeners) and replica directory ids: kraftsim's
  controllers have no listeners or directory ids.
"""

from __future__ import annotations

from raft import Errors, RaftNode
from raft.quorum_info import METADATA_PARTITION, METADATA_TOPIC
from shell.lab import Lab
from shell.status import status_json
from sim.cluster import ClusterConfig, KRaftCluster


def _leader(cluster: KRaftCluster) -> RaftNode:
    slot = cluster.sim.leader_slot()
    assert slot is not None and slot.raft is not None
    return slot.raft


def test_describe_quorum() -> None:
    """testDescribeQuorum (Kafka's default cluster: one controller, one broker)."""
    cluster = KRaftCluster(ClusterConfig(seed=9, controllers=1, brokers=1))
    assert cluster.start()
    assert cluster.run_until(cluster.idle, 10_000)
    answer = _leader(cluster).describe_quorum(cluster.sim.now)

    assert answer.error is Errors.NONE
    assert (answer.topic_name, answer.partition_index) == (METADATA_TOPIC, METADATA_PARTITION)
    assert answer.leader_epoch > 0
    assert answer.leader_id > 0
    assert answer.high_watermark > 0
    [leader_state] = [v for v in answer.current_voters if v.replica_id == answer.leader_id]
    assert leader_state.log_end_offset > 0
    assert {v.replica_id for v in answer.current_voters} == set(cluster.config.controller_ids)
    assert {o.replica_id for o in answer.observers} == set(cluster.config.broker_ids)
    for state in (*answer.current_voters, *answer.observers):
        assert state.log_end_offset > 0
        assert state.last_fetch_timestamp != -1
        assert state.last_caught_up_timestamp != -1


def test_every_voter_and_observer_as_the_leader_knows_them() -> None:
    """The same with three controllers and three brokers, the cluster idle: each follower's
    end offset is the one its last fetch gave (the high watermark, all caught up), fetched
    and caught up since the cluster started; the leader counts as both now."""
    cluster = KRaftCluster(ClusterConfig(seed=4, controllers=3, brokers=3))
    assert cluster.start()
    assert cluster.run_until(cluster.idle, 10_000)
    cluster.sim.run_for(1_000)  # a few fetches more: every replica at the leader's end
    leader = _leader(cluster)
    now = cluster.sim.now
    answer = leader.describe_quorum(now)
    assert answer.error is Errors.NONE and answer.leader_id == leader.id
    assert [v.replica_id for v in answer.current_voters] == list(cluster.config.controller_ids)
    assert [o.replica_id for o in answer.observers] == list(cluster.config.broker_ids)
    for state in (*answer.current_voters, *answer.observers):
        if state.replica_id == leader.id:
            assert (state.last_fetch_timestamp, state.last_caught_up_timestamp) == (now, now)
            assert state.log_end_offset == leader.log.flushed_end
        else:
            assert 0 < state.last_caught_up_timestamp <= state.last_fetch_timestamp <= now
            assert state.log_end_offset >= answer.high_watermark


def test_a_node_that_does_not_lead_answers_not_leader_or_follower() -> None:
    """Kafka's handleDescribeQuorumRequest on a node that is not the leader: the error and
    nothing else."""
    cluster = KRaftCluster(ClusterConfig(seed=4, controllers=3, brokers=1))
    assert cluster.start()
    leader = _leader(cluster)
    for node_id, slot in cluster.sim.slots.items():
        if node_id != leader.id:
            assert slot.raft is not None
            answer = slot.raft.describe_quorum(cluster.sim.now)
            assert answer.error is Errors.NOT_LEADER_OR_FOLLOWER
            assert (answer.leader_id, answer.current_voters, answer.observers) == (-1, (), ())


def test_the_shell_status_shows_the_leaders_answer() -> None:
    """The lab's ``status --format json`` carries the same answer under ``quorum``, with
    Kafka's field names (testDescribeQuorum's checks, on what a user sees)."""
    lab = Lab(ClusterConfig(seed=9, controllers=1, brokers=1))
    assert lab.cluster.start()
    assert lab.cluster.run_until(lab.cluster.idle, 10_000)
    quorum = status_json(lab)["quorum"]
    assert quorum["leaderId"] == 3000 and quorum["leaderEpoch"] > 0
    assert quorum["highWatermark"] > 0
    assert [v["replicaId"] for v in quorum["currentVoters"]] == [3000]
    assert [o["replicaId"] for o in quorum["observers"]] == [0]
    for state in (*quorum["currentVoters"], *quorum["observers"]):
        assert state["logEndOffset"] > 0
        assert state["lastFetchTimestamp"] != -1 and state["lastCaughtUpTimestamp"] != -1
