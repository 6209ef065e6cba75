"""Failover in the middle of a transaction: all or nothing, and state = replay of the log."""

from __future__ import annotations

import pytest

from controller import ControllerConfig, OperationHandle
from controller.operations import CreateTopics, NewTopic
from metadata.schema import (
    BeginTransactionRecord,
    FeatureLevelRecord,
    TopicRecord,
)
from raft import Batch, RaftConfig
from raft.storage import ElectionState
from sim.cluster import ClusterConfig, KRaftCluster
from sim.faults import parse_fault
from tests.controller.conftest import cluster

BATCHES = 12


def committed_batches_of(c: KRaftCluster, handle: OperationHandle) -> int:
    count, offset = 0, handle.first_offset
    while offset <= handle.last_offset:
        batch = c.history.get(offset)
        if batch is None:
            break
        count += 1
        offset = batch.end_offset
    return count


def assert_all_or_nothing(c: KRaftCluster, name: str, partitions: int) -> bool:
    """Every controller and broker agrees: the whole topic, or no topic. Returns which."""
    seen = set()
    for node in c.config.controller_ids:
        controller = c.controller(node)
        if controller is not None and controller.fault is None:
            topic = controller.committed_image().topic(name)
            seen.add(None if topic is None else len(topic.partitions))
    for node in c.config.broker_ids:
        loader = c.loader(node)
        if loader is not None and loader.published is not None:
            topic = loader.published.topic(name)
            seen.add(None if topic is None else len(topic.partitions))
    assert seen in ({None}, {partitions}), seen
    return seen == {partitions}


@pytest.mark.parametrize("committed", range(BATCHES + 1))
def test_failover_at_every_point_of_a_12_batch_transaction(committed: int) -> None:
    # 116 partitions + TopicRecord + Begin + End = 119 records = 12 batches of 10
    c = cluster(seed=100 + committed, batch=10, fetch=10)
    handle = c.submit(CreateTopics((NewTopic("t", 116, 3),)))
    assert handle.batch_count == BATCHES
    c.run_until(lambda: committed_batches_of(c, handle) >= committed, 10_000)
    assert committed_batches_of(c, handle) == committed
    leader = handle.controller_id
    c.sim.crash(leader)
    assert c.run_until(lambda: handle.done and c.idle(), 30_000), c.sim.violation
    c.sim.restart(leader)
    assert c.run_until(c.idle, 30_000), c.sim.violation
    whole = assert_all_or_nothing(c, "t", 116)
    outcomes = [t.outcome for t in c.txn_invariants.reference.transactions[1:]]
    if committed == BATCHES:
        assert whole and outcomes == ["committed"]
    elif committed == 0:
        assert not whole
    else:
        assert not whole and outcomes == ["aborted"]
    # ControllerMatchesLog/RollbackExact ran after every event; check once more by hand
    expected = c.txn_invariants.reference.image
    for node in c.config.controller_ids:
        controller = c.controller(node)
        assert controller is not None
        assert controller.committed_state().image.same_content(expected)


def test_unflushed_appends_lost_in_a_crash_never_surface() -> None:
    c = cluster(seed=9, batch=10, fetch=10)
    handle = c.submit(CreateTopics((NewTopic("t", 30, 3),)))
    c.sim.crash(handle.controller_id)  # before the linger flush: the appends are gone
    assert c.run_until(lambda: handle.done and c.idle(), 30_000)
    assert handle.outcome() == "NOT_CONTROLLER"
    assert not assert_all_or_nothing(c, "t", 30)


def _renounce_sequence(mutations: frozenset[str]) -> KRaftCluster:
    """Kafka's edge case (b): a transaction begun by the old leader is completed by the new.

    The leader writes B1 [Begin, records] and B2 [records, End]; B1 commits, B2 reaches one
    follower but not the leader's high watermark; the leader is cut off; the follower
    becomes leader and commits B2 with its own epoch start; the old leader comes back.
    """
    c = cluster(seed=11, batch=6, fetch=6, brokers=1, mutations=mutations, noop_ms=0)
    old = c.active_controller()
    assert old is not None
    handle = c.submit(CreateTopics((NewTopic("t", 9, 1),)))  # 12 records: 2 batches of 6
    assert handle.batch_count == 2
    b2_end = handle.last_offset + 1

    def b2_on_a_follower() -> bool:
        return any(c.sim.slots[n].raft is not None and n != old.node_id
                   and c.sim.slots[n].storage.log.end_offset >= b2_end
                   for n in c.config.controller_ids)

    assert c.run_until(b2_on_a_follower, 5_000)
    assert old.raft.high_watermark is not None and old.raft.high_watermark < b2_end
    c.sim.apply_fault(parse_fault(f"isolate:{old.node_id}@0"))
    c.run_until(lambda: (a := c.active_controller()) is not None and a is not old, 30_000)
    c.run_until(lambda: c.history.end >= b2_end and not old.active, 30_000)
    c.sim.apply_fault(parse_fault("heal@0"))
    c.run_until(lambda: old.offsets.last_committed_offset >= b2_end - 1 or
                old.fault is not None, 30_000)
    return c


def test_an_old_leader_ends_equal_to_the_committed_log_after_its_transaction_completes() -> None:
    c = _renounce_sequence(frozenset())
    assert c.sim.violation is None
    [txn] = c.txn_invariants.reference.transactions[1:]
    assert txn.outcome == "committed"  # B2 carried the End; nothing was aborted
    for node in c.config.controller_ids:
        controller = c.controller(node)
        assert controller is not None and controller.fault is None
        assert controller.committed_image().topic("t") is not None
        assert controller.committed_state().image.same_content(
            c.txn_invariants.reference.image_at(controller.offsets.last_committed_offset))


def test_kafkas_revert_to_the_lso_breaks_on_that_sequence() -> None:
    c = _renounce_sequence(frozenset({"revert-to-lso"}))
    broken = c.sim.violation is not None or c.controller_faults
    assert broken, "reverting to the LSO should lose B1's records on the old leader"


def test_an_open_transaction_below_3_6_iv1_stops_the_new_leader() -> None:
    config = ClusterConfig(seed=12, brokers=0, controller=ControllerConfig(
        bootstrap_metadata_version=12), raft=RaftConfig())
    c = KRaftCluster(config)
    log_batches = [
        Batch(0, 1, (FeatureLevelRecord("metadata.version", 12),)),
        Batch(1, 1, (BeginTransactionRecord("left open"),
                     TopicRecord("x", "AAAAAAAAAAAAAAAAAAAABQ"))),
    ]
    for node in config.controller_ids:
        storage = c.sim.slots[node].storage
        for batch in log_batches:
            storage.log.append(batch, flushed=True)
        storage.write_election(ElectionState(epoch=1))
    c.sim.start()
    c.run_until(lambda: bool(c.controller_faults), 30_000)
    assert c.controller_faults
    _, _, message = c.controller_faults[0]
    assert "Detected in-progress transaction at offset 1" in message
    assert "metadata.version 3.6-IV0 does not support transactions" in message
