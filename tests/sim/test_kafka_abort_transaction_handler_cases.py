"""Kafka's AbortTransactionHandlerTest, against kraftsim's abortTransaction
(:meth:`sim.txn_admin.TxnAdmin.abort_transaction`, KIP-664: an ABORT marker written with
WriteTxnMarkers straight to a partition's leader, for a hanging transaction) and its
error sorting (:func:`sim.admin_handlers.abort_transaction_outcome`). kraftsim had the
broker's side (``ReplicaManager.write_txn_marker``) but no Admin call; it has one now.

Kafka class followed: ``AbortTransactionHandlerTest``
(``clients/src/test/java/org/apache/kafka/clients/admin/internals``). Its spec (a
partition, producer id 12345 at epoch 15, coordinator epoch 4321) is replaced by the
open transaction of a simulated producer, the values read with describeProducers, as
``kafka-transactions.sh abort`` reads them.

Ported: testValidBuildRequestCall (the marker carries the spec's producer id, epoch and
coordinator epoch, at the spec's partition), testSuccessfulResponse (NONE, and the
transaction is closed: the last stable offset moves past it), testRetriableErrors (each
of Kafka's four errors looks the leader up again; a crashed leader's successor takes the
marker), testFatalErrors (each of Kafka's four fails; INVALID_PRODUCER_EPOCH and
TRANSACTION_COORDINATOR_FENCED also as the partition answers them).

Left out: testInvalidBuildRequestCall, testInvalidHandleResponseCall and
testInvalidResponse (a request or response naming other partitions or producers than
the spec: kraftsim's call passes no request or response to mismatch).
"""

from __future__ import annotations

import pytest

from broker.partition_log import ActiveProducer
from sim.admin_handlers import Outcome, abort_transaction_outcome
from sim.txn_admin import AbortTransactionSpec
from tests.sim.admin_world import AdminWorld


def _hanging(w: AdminWorld, transactional_id: str) -> ActiveProducer:
    """Leave ``transactional_id``'s transaction open on ``t``-0: its producer there."""
    opened = w.open_transaction(transactional_id, f"{transactional_id}-open")
    error, producers = w.describe_producers(0)
    assert error == "NONE"
    [found] = [p for p in producers if p.producer_id == opened.producer_id]
    assert found.current_txn_start_offset >= 0
    return found


def _spec(p: ActiveProducer, epoch_delta: int = 0,
          coordinator_epoch: int | None = None) -> AbortTransactionSpec:
    return AbortTransactionSpec("t", 0, p.producer_id, p.producer_epoch + epoch_delta,
                                max(0, p.coordinator_epoch) if coordinator_epoch is None
                                else coordinator_epoch)


def _lso(w: AdminWorld) -> tuple[int, int]:
    """(last stable offset, log end offset) of ``t``-0 at its leader."""
    manager = w.cluster.replica_manager(w.leader(0))
    assert manager is not None
    replica = manager.leader_replica("t", 0)
    assert not isinstance(replica, str)
    return replica.log.txns.last_stable_offset(replica.log.high_watermark), \
        replica.log.end_offset


def test_valid_build_request_and_successful_response() -> None:
    w = AdminWorld()
    p = _hanging(w, "hang")
    lso, end = _lso(w)
    assert lso == p.current_txn_start_offset < end          # the open transaction holds it
    assert w.abort(_spec(p)) == "NONE"
    manager = w.cluster.replica_manager(w.leader(0))
    assert manager is not None
    replica = manager.leader_replica("t", 0)
    assert not isinstance(replica, str)
    marker = replica.log.entries[end]
    assert (marker.control, marker.producer_id, marker.producer_epoch,
            marker.coordinator_epoch) == (0, p.producer_id, p.producer_epoch,
                                          max(0, p.coordinator_epoch))
    assert _lso(w)[0] == end + 1                            # the transaction is closed
    _error, producers = w.describe_producers(0)
    assert [q.current_txn_start_offset for q in producers
            if q.producer_id == p.producer_id] == [-1]


def test_a_crashed_leaders_successor_takes_the_marker() -> None:
    w = AdminWorld()
    p = _hanging(w, "hang")
    old = w.leader(0)
    w.sim.crash(old)
    assert w.abort(_spec(p)) == "NONE" and w.leader(0) != old
    _error, producers = w.describe_producers(0)
    assert [q.current_txn_start_offset for q in producers
            if q.producer_id == p.producer_id] == [-1]


def test_an_older_producer_epoch_fails() -> None:
    w = AdminWorld()
    w.producer("hang", "hang-1")                           # epoch 0, then 1 below
    p = _hanging(w, "hang")
    assert p.producer_epoch == 1
    assert w.abort(_spec(p, epoch_delta=-1)) == "INVALID_PRODUCER_EPOCH"
    assert _lso(w)[0] == p.current_txn_start_offset       # still open


def test_an_older_coordinator_epoch_fails() -> None:
    w = AdminWorld()
    first = w.producer("hang", "hang-1")
    assert first.transaction([("t", 0, 1)], commit=True)   # a marker: a coordinator epoch
    w.idle(first)
    p = _hanging(w, "hang")
    assert p.coordinator_epoch >= 0
    assert w.abort(_spec(p, coordinator_epoch=p.coordinator_epoch - 1)) == \
        "TRANSACTION_COORDINATOR_FENCED"
    assert _lso(w)[0] == p.current_txn_start_offset


@pytest.mark.parametrize(("error", "outcome"), [
    ("NONE", Outcome.DONE),
    ("NOT_LEADER_OR_FOLLOWER", Outcome.LOOKUP),
    ("UNKNOWN_TOPIC_OR_PARTITION", Outcome.LOOKUP),
    ("REPLICA_NOT_AVAILABLE", Outcome.LOOKUP),
    ("BROKER_NOT_AVAILABLE", Outcome.LOOKUP),
    ("CLUSTER_AUTHORIZATION_FAILED", Outcome.FAIL),
    ("INVALID_PRODUCER_EPOCH", Outcome.FAIL),
    ("TRANSACTION_COORDINATOR_FENCED", Outcome.FAIL),
    ("UNKNOWN_SERVER_ERROR", Outcome.FAIL),
])
def test_error_sorting(error: str, outcome: Outcome) -> None:
    assert abort_transaction_outcome(error) is outcome
