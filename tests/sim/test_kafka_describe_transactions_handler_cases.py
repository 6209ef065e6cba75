"""Kafka's DescribeTransactionsHandlerTest, against kraftsim's describeTransactions
(:meth:`sim.txn_admin.TxnAdmin.describe_transactions`, one round answered at once, and
:meth:`sim.txn_admin.TxnAdmin.describe_transaction`, Kafka's call with its retries) and
its error sorting (:func:`sim.admin_handlers.describe_transactions_outcome`).

Kafka class followed: ``DescribeTransactionsHandlerTest``
(``clients/src/test/java/org/apache/kafka/clients/admin/internals``). Kafka's sample
responses are replaced by the transactions of simulated producers.

Ported: testBuildRequest (every id asked is answered, in the order asked),
testHandleSuccessfulResponse (an Ongoing transaction's producer id and epoch, timeout,
start time and partitions; an Empty one's start time -1, Kafka's empty
``transactionStartTimeMs``), testHandleErrorResponse (every error of Kafka's case sorted
as Kafka sorts it; kraftsim's call answered COORDINATOR_NOT_AVAILABLE for an id whose
coordinator was down where Kafka's Admin looks the coordinator up again and retries:
``describe_transaction`` now does; TRANSACTIONAL_ID_NOT_FOUND fails at once).

Left out: the ``coordinatorId`` Kafka's client adds to each description (kraftsim's
answer is the response's entry; the coordinator is ``TxnCluster.find_coordinator``).
"""

from __future__ import annotations

import pytest

from sim.admin_handlers import Outcome, describe_transactions_outcome
from tests.sim.admin_world import AdminWorld


def test_build_request_answers_every_id_asked() -> None:
    w = AdminWorld()
    for txn_id in ("foo", "bar", "baz"):
        w.producer(txn_id, f"{txn_id}-1")
    for ids in (["foo", "bar", "baz"], ["foo"], ["bar", "baz"]):
        answered = w.admin.describe_transactions(ids)
        assert [(d.TransactionalId, d.ErrorCode) for d in answered] == \
            [(i, "NONE") for i in ids]


def test_handle_successful_response() -> None:
    w = AdminWorld()
    foo = w.producer("foo", "foo-1")
    foo.begin_transaction()
    foo.send("t", 0, 1)
    foo.send("t", 1, 1)
    started = w.sim.now
    w.idle(foo)
    bar = w.producer("bar", "bar-1")
    ongoing, empty = w.describe("foo"), w.describe("bar")
    assert (ongoing.ErrorCode, ongoing.TransactionState, ongoing.ProducerId,
            ongoing.ProducerEpoch, ongoing.TransactionTimeoutMs, ongoing.Topics) == (
        "NONE", "Ongoing", foo.producer_id, foo.producer_epoch, foo.txn_timeout_ms,
        [("t", [0, 1])])
    assert started <= ongoing.TransactionStartTimeMs <= w.sim.now
    assert (empty.ErrorCode, empty.TransactionState, empty.ProducerId,
            empty.ProducerEpoch, empty.TransactionStartTimeMs, empty.Topics) == (
        "NONE", "Empty", bar.producer_id, bar.producer_epoch, -1, [])


@pytest.mark.parametrize(("error", "outcome"), [
    ("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", Outcome.FAIL),
    ("TRANSACTIONAL_ID_NOT_FOUND", Outcome.FAIL),
    ("UNKNOWN_SERVER_ERROR", Outcome.FAIL),
    ("COORDINATOR_LOAD_IN_PROGRESS", Outcome.RETRY),
    ("NOT_COORDINATOR", Outcome.LOOKUP),
    ("COORDINATOR_NOT_AVAILABLE", Outcome.LOOKUP),
    ("NONE", Outcome.DONE),
])
def test_handle_error_response(error: str, outcome: Outcome) -> None:
    assert describe_transactions_outcome(error) is outcome


def test_an_unknown_id_fails_at_once() -> None:
    w = AdminWorld()
    start = w.sim.now
    assert w.describe("nobody").ErrorCode == "TRANSACTIONAL_ID_NOT_FOUND"
    assert w.sim.now == start


def test_a_crashed_coordinator_is_looked_up_again() -> None:
    w = AdminWorld()
    p = w.open_transaction("foo", "foo-1")
    coordinator = w.coordinator("foo")
    w.sim.crash(coordinator)
    # one round at once: the metadata still names the crashed broker
    [now] = w.admin.describe_transactions(["foo"])
    assert now.ErrorCode == "COORDINATOR_NOT_AVAILABLE", now
    described = w.describe("foo")           # Kafka's call waits for the new coordinator
    assert described.ErrorCode == "NONE" and w.coordinator("foo") != coordinator
    assert described.ProducerId == p.producer_id


def test_the_call_gives_up_at_its_timeout() -> None:
    w = AdminWorld()
    w.producer("foo", "foo-1")
    for broker in w.cluster.config.broker_ids:
        w.sim.crash(broker)
    assert w.describe("foo", timeout_ms=2_000).ErrorCode == "REQUEST_TIMED_OUT"
