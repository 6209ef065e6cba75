"""Kafka's ListTransactionsResultTest, against kraftsim's
:class:`sim.txn_admin.ListTransactionsByBroker` (what listTransactions answers: each
broker's listing, and ``all()`` merging them or failing with the first failure).

Kafka class followed: ``ListTransactionsResultTest``
(``clients/src/test/java/org/apache/kafka/clients/admin``). Kafka's futures are answers
here: a broker's future completed exceptionally is a listing with an error code.

Ported: testAllFuturesFailIfLookupFails (no broker to ask which brokers are alive: the
whole call fails, here at its timeout, the call on the simulated cluster),
testAllFuturesSucceed (each broker's listing as it answered, ``all()`` their union),
testPartialFailure (the broker that answered keeps its listing, ``all()`` fails).
Beside them: the lookup retried until a broker is back, and ``all()`` with two failed
brokers failing with the lowest one's error.

Not ported: none (Kafka's ``allByBrokerId`` is ``by_broker_id`` when nothing failed).
"""

from __future__ import annotations

from broker.txn.admin import ListTransactionsResult, TransactionListing
from sim.txn_admin import ListTransactionsByBroker
from tests.sim.admin_world import AdminWorld

BROKER_1 = [TransactionListing("foo", 12345, "Ongoing"),
            TransactionListing("bar", 98765, "PrepareAbort")]
BROKER_2 = [TransactionListing("baz", 13579, "CompleteCommit")]


def test_all_futures_fail_if_lookup_fails() -> None:
    failed = ListTransactionsByBroker({}, "REQUEST_TIMED_OUT")
    assert failed.all() == ListTransactionsResult("REQUEST_TIMED_OUT", [], [])
    w = AdminWorld()
    for broker in w.cluster.config.broker_ids:
        w.sim.crash(broker)
    done: list[ListTransactionsByBroker] = []
    start = w.sim.now
    w.admin.list_transactions_call(done.append, timeout_ms=1_000)
    assert w.sim.run_until_true(lambda: bool(done), 5_000)
    assert done == [failed]
    assert w.sim.now == start + 1_000      # the lookup is retried until the timeout


def test_a_lookup_retried_before_the_timeout_finds_the_brokers() -> None:
    """The lookup of the alive brokers is retried every retry.backoff.ms: a broker back
    before the call's timeout is asked."""
    w = AdminWorld()
    brokers = w.cluster.config.broker_ids
    for broker in brokers:
        w.sim.crash(broker)
    done: list[ListTransactionsByBroker] = []
    w.admin.list_transactions_call(done.append, timeout_ms=30_000)
    w.sim.run_for(500)
    assert done == []
    for broker in brokers:
        w.sim.restart(broker)
    assert w.sim.run_until_true(lambda: bool(done), 40_000)
    assert done[0].lookup_error == "NONE" and done[0].all().ErrorCode == "NONE"


def test_all_futures_succeed() -> None:
    result = ListTransactionsByBroker({1: ListTransactionsResult("NONE", [], BROKER_1),
                                       2: ListTransactionsResult("NONE", [], BROKER_2)})
    assert result.by_broker_id[1].TransactionStates == BROKER_1
    assert result.by_broker_id[2].TransactionStates == BROKER_2
    merged = result.all()
    assert merged.ErrorCode == "NONE"
    assert sorted(merged.TransactionStates, key=lambda t: t.TransactionalId) == \
        sorted(BROKER_1 + BROKER_2, key=lambda t: t.TransactionalId)


def test_partial_failure() -> None:
    result = ListTransactionsByBroker({
        1: ListTransactionsResult("NONE", [], BROKER_1),
        2: ListTransactionsResult("REQUEST_TIMED_OUT", [], [])})
    assert result.by_broker_id[1].TransactionStates == BROKER_1
    assert result.by_broker_id[2].ErrorCode == "REQUEST_TIMED_OUT"
    assert result.all() == ListTransactionsResult("REQUEST_TIMED_OUT", [], [])


def test_all_fails_with_the_lowest_failed_brokers_error() -> None:
    """With every broker's answer in, Kafka's ``all()`` fails with the failure it meets
    first, walking the brokers in id order: the lowest failed broker's."""
    result = ListTransactionsByBroker({
        1: ListTransactionsResult("NONE", [], BROKER_1),
        2: ListTransactionsResult("COORDINATOR_NOT_AVAILABLE", [], []),
        3: ListTransactionsResult("REQUEST_TIMED_OUT", [], [])})
    assert result.all() == ListTransactionsResult("COORDINATOR_NOT_AVAILABLE", [], [])
