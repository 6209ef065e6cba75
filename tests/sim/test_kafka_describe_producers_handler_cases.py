"""Kafka's DescribeProducersHandlerTest, against kraftsim's describeProducers
(:meth:`sim.txn_admin.TxnAdmin.describe_producers`, KIP-664) and its error sorting
(:func:`sim.admin_handlers.describe_producers_outcome`).

Kafka class followed: ``DescribeProducersHandlerTest``
(``clients/src/test/java/org/apache/kafka/clients/admin/internals``). Kafka's sample
response is replaced by the producers of a simulated partition. kraftsim had the
broker's side (``ReplicaManager.describe_producers``) but no Admin call; it has one now.

Ported: testBrokerIdSetInOptions (the named broker answers, a follower too),
testBrokerIdNotSetInOptions (the leader answers), testAuthorizationFailure,
testInvalidTopic and testUnexpectedError (fatal), testRetriableErrors
(UNKNOWN_TOPIC_OR_PARTITION retried: a partition created later is described),
testUnmappedAfterNotLeaderError (the leader looked up again, here after the leader
crashed), testFatalNotLeaderErrorIfStaticMapped (a named broker hosting no replica
fails NOT_LEADER_OR_FOLLOWER at once), testCompletedResult (each producer's id, epoch,
last sequence, last timestamp and open transaction's first offset).

Beside them: the default (no broker named) looks the leader up again after
NOT_LEADER_OR_FOLLOWER, a call naming no timeout gives up at exactly 60 s
(default.api.timeout.ms), and a broker's UNKNOWN_SERVER_ERROR fails the call at once.

Left out: testBuildRequest (how Kafka's request groups many partitions by topic; a
kraftsim call describes one partition).
"""

from __future__ import annotations

import pytest

from controller.operations import CreateTopics, NewTopic
from sim.admin_handlers import Outcome, describe_producers_outcome
from tests.sim.admin_world import AdminWorld


def _world_with_producers() -> tuple[AdminWorld, int, int, int]:
    """``t``-0 with a producer whose transaction committed and one whose transaction is
    open: (world, committed producer id, open producer id, the open one's first offset)."""
    w = AdminWorld()
    done = w.producer("done", "done-1")
    assert done.transaction([("t", 0, 3)], commit=True)
    w.idle(done)
    opened_at = w.cluster.replica_manager(w.leader(0))
    assert opened_at is not None
    replica = opened_at.leader_replica("t", 0)
    assert not isinstance(replica, str)
    first_offset = replica.log.end_offset
    w.open_transaction("open", "open-1")
    return w, done.producer_id, w.describe("open").ProducerId, first_offset


def test_completed_result() -> None:
    w, done, opened, first_offset = _world_with_producers()
    error, producers = w.describe_producers(0)
    assert error == "NONE"
    by_id = {p.producer_id: p for p in producers}
    assert set(by_id) == {done, opened}
    assert by_id[done].current_txn_start_offset == -1
    assert by_id[opened].current_txn_start_offset == first_offset
    # one batch of two records at sequence 0 of epoch 0; the committed one sent three
    assert (by_id[opened].producer_epoch, by_id[opened].last_sequence) == (0, 1)
    assert by_id[done].last_sequence == 2
    assert 0 < by_id[done].last_timestamp <= by_id[opened].last_timestamp <= w.sim.now


def test_broker_id_not_set_asks_the_leader() -> None:
    w, _done, _opened, _ = _world_with_producers()
    leader = w.cluster.replica_manager(w.leader(0))
    assert leader is not None
    assert w.describe_producers(0) == ("NONE", leader.describe_producers("t", 0))


def test_broker_id_set_asks_that_broker_a_follower_too() -> None:
    w, done, opened, _ = _world_with_producers()
    follower = next(b for b in w.cluster.config.broker_ids if b != w.leader(0))
    error, producers = w.describe_producers(0, broker_id=follower)
    assert error == "NONE" and {p.producer_id for p in producers} == {done, opened}


def test_fatal_not_leader_error_if_static_mapped() -> None:
    w = AdminWorld()
    assert w.cluster.wait(w.cluster.submit(CreateTopics((NewTopic("u", 1, 1),))))
    w.sim.run_for(1_000)
    leader = w.cluster.partition_leader("u", 0)
    other = next(b for b in w.cluster.config.broker_ids if b != leader)
    done: list[str] = []
    w.admin.describe_producers("u", 0, lambda e, _: done.append(e), broker_id=other)
    w.sim.run_for(0)
    assert done == ["NOT_LEADER_OR_FOLLOWER"]


def test_unmapped_after_not_leader_error() -> None:
    w, done, opened, _ = _world_with_producers()
    old = w.leader(0)
    w.sim.crash(old)
    error, producers = w.describe_producers(0)
    assert error == "NONE" and w.leader(0) != old
    assert {p.producer_id for p in producers} == {done, opened}   # the new leader has them


def test_retriable_unknown_topic_or_partition() -> None:
    w = AdminWorld()
    done: list[str] = []
    w.admin.describe_producers("later", 0, lambda e, _: done.append(e))
    w.sim.run_for(1_000)
    assert done == []                                     # still asking
    assert w.cluster.wait(w.cluster.submit(CreateTopics((NewTopic("later", 1, 3),))))
    assert w.sim.run_until_true(lambda: bool(done), 5_000) and done == ["NONE"]
    error, _ = w.describe_producers(7, timeout_ms=2_000)  # a partition t never has
    assert error == "REQUEST_TIMED_OUT"


@pytest.mark.parametrize(("error", "broker_named", "outcome"), [
    ("TOPIC_AUTHORIZATION_FAILED", False, Outcome.FAIL),
    ("INVALID_TOPIC_EXCEPTION", False, Outcome.FAIL),
    ("UNKNOWN_SERVER_ERROR", False, Outcome.FAIL),
    ("UNKNOWN_TOPIC_OR_PARTITION", False, Outcome.RETRY),
    ("NOT_LEADER_OR_FOLLOWER", False, Outcome.LOOKUP),
    ("NOT_LEADER_OR_FOLLOWER", True, Outcome.FAIL),
    ("NONE", True, Outcome.DONE),
])
def test_error_sorting(error: str, broker_named: bool, outcome: Outcome) -> None:
    assert describe_producers_outcome(error, broker_named) is outcome


def test_without_a_named_broker_not_leader_looks_the_leader_up_again() -> None:
    """The call's default (no brokerId option) asks the leader, so a NOT_LEADER_OR_FOLLOWER
    answer means the leader moved: look it up again."""
    assert describe_producers_outcome("NOT_LEADER_OR_FOLLOWER") is Outcome.LOOKUP


def test_a_call_naming_no_timeout_retries_for_the_default_api_timeout() -> None:
    """default.api.timeout.ms is 60 s: a partition that never appears is asked for every
    retry.backoff.ms until exactly 60 s after the call, then the call fails."""
    w = AdminWorld()
    start = w.sim.now
    done: list[tuple[str, int]] = []
    w.admin.describe_producers("t", 7, lambda e, _: done.append((e, w.sim.now)))
    assert w.sim.run_until_true(lambda: bool(done), 120_000)
    assert done == [("REQUEST_TIMED_OUT", start + 60_000)]


def test_an_unexpected_broker_error_fails_the_call_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker's UNKNOWN_SERVER_ERROR is fatal, as in Kafka's handler (only a broker that
    cannot be reached is retried)."""
    w = AdminWorld()
    manager = w.cluster.replica_manager(w.leader(0))
    assert manager is not None
    monkeypatch.setattr(manager, "describe_producers", lambda *_: "UNKNOWN_SERVER_ERROR")
    start = w.sim.now
    done: list[tuple[str, int]] = []
    w.admin.describe_producers("t", 0, lambda e, _: done.append((e, w.sim.now)))
    assert done == [("UNKNOWN_SERVER_ERROR", start)]
