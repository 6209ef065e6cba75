"""Kafka's FenceProducersHandlerTest, against kraftsim's fenceProducers call
(:meth:`sim.txn_admin.TxnAdmin.force_terminate_transaction`, KIP-939's
forceTerminateTransaction built on it) and its error sorting
(:func:`sim.admin_handlers.fence_producers_outcome`).

Kafka class followed: ``FenceProducersHandlerTest``
(``clients/src/test/java/org/apache/kafka/clients/admin/internals``). Kafka's cases look
at the request the handler builds and at how it sorts one answer; here the request is
seen from what the coordinator keeps (describeTransactions after the fence) and the
sorting both directly and through calls on the simulated cluster.

Ported: testBuildRequest (the InitProducerId names the id and carries request.timeout.ms,
30 s, as its transaction timeout: kraftsim carried 1 ms, Kafka's value before it took
the call's timeout; fixed), testBuildRequestOptionsTimeout (the call's timeout is the
transaction timeout), testHandleSuccessfulResponse (the id's producer id is kept and its
epoch bumped), testHandleErrorResponse (every error of Kafka's case sorted as Kafka
sorts it: kraftsim retried what its producer retries, e.g. NOT_ENOUGH_REPLICAS, where
Kafka's Admin fails; fixed). Beside them: the consequences a user sees, a timeout above
transaction.max.timeout.ms failing INVALID_TRANSACTION_TIMEOUT at once, an Ongoing
transaction aborted through CONCURRENT_TRANSACTIONS retries, and a crashed coordinator
found again.

Not ported: none.
"""

from __future__ import annotations

import pytest

from broker.txn.coordinator import TxnCoordinatorConfig
from sim.admin_handlers import Outcome, fence_producers_outcome
from tests.sim.admin_world import AdminWorld


def test_build_request_carries_request_timeout_as_the_transaction_timeout() -> None:
    w = AdminWorld()
    for txn_id in ("foo", "bar", "baz"):
        w.producer(txn_id, f"{txn_id}-1")
        assert w.fence(txn_id) == "NONE"
        described = w.describe(txn_id)
        assert (described.ErrorCode, described.TransactionTimeoutMs) == ("NONE", 30_000)


def test_build_request_options_timeout() -> None:
    w = AdminWorld()
    for txn_id in ("foo", "bar", "baz"):
        w.producer(txn_id, f"{txn_id}-1")
        assert w.fence(txn_id, timeout_ms=50_000) == "NONE"
        assert w.describe(txn_id).TransactionTimeoutMs == 50_000


def test_handle_successful_response_bumps_the_epoch_of_the_same_producer_id() -> None:
    w = AdminWorld()
    p = w.producer("foo", "foo-1")
    assert w.fence("foo") == "NONE"
    described = w.describe("foo")
    assert (described.TransactionState, described.ProducerId, described.ProducerEpoch) == (
        "Empty", p.producer_id, p.producer_epoch + 1)


@pytest.mark.parametrize(("error", "outcome"), [
    ("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", Outcome.FAIL),
    ("CLUSTER_AUTHORIZATION_FAILED", Outcome.FAIL),
    ("UNKNOWN_SERVER_ERROR", Outcome.FAIL),
    ("PRODUCER_FENCED", Outcome.FAIL),
    ("TRANSACTIONAL_ID_NOT_FOUND", Outcome.FAIL),
    ("INVALID_PRODUCER_EPOCH", Outcome.FAIL),
    ("COORDINATOR_LOAD_IN_PROGRESS", Outcome.RETRY),
    ("NOT_COORDINATOR", Outcome.LOOKUP),
    ("COORDINATOR_NOT_AVAILABLE", Outcome.LOOKUP),
    ("CONCURRENT_TRANSACTIONS", Outcome.RETRY),
    ("NONE", Outcome.DONE),
    # not in Kafka's case: errors the producer retries but the Admin's handler does not
    ("NOT_ENOUGH_REPLICAS", Outcome.FAIL),
    ("INVALID_TRANSACTION_TIMEOUT", Outcome.FAIL),
])
def test_handle_error_response(error: str, outcome: Outcome) -> None:
    assert fence_producers_outcome(error) is outcome


def test_a_timeout_above_the_coordinators_maximum_fails_at_once() -> None:
    w = AdminWorld(TxnCoordinatorConfig(num_partitions=3, max_timeout_ms=10_000))
    w.producer("foo", "foo-1")
    start = w.sim.now
    assert w.fence("foo") == "INVALID_TRANSACTION_TIMEOUT"   # 30 s > 10 s
    assert w.sim.now - start < 100                           # no retries
    assert w.fence("foo", timeout_ms=5_000) == "NONE"


def test_an_ongoing_transaction_is_aborted_through_concurrent_transactions_retries() -> None:
    w = AdminWorld()
    p = w.open_transaction("foo", "foo-1")
    assert w.describe("foo").TransactionState == "Ongoing"
    assert w.fence("foo") == "NONE"
    described = w.describe("foo")
    # the abort bumped the epoch once, the retried InitProducerId once more
    assert (described.TransactionState, described.ProducerEpoch) == (
        "Empty", p.producer_epoch + 2)


def test_a_crashed_coordinator_is_looked_up_again() -> None:
    w = AdminWorld()
    w.producer("foo", "foo-1")
    w.sim.crash(w.coordinator("foo"))
    assert w.fence("foo") == "NONE"
    assert w.describe("foo").TransactionTimeoutMs == 30_000


def test_the_call_gives_up_at_its_timeout() -> None:
    w = AdminWorld()
    w.producer("foo", "foo-1")
    for broker in w.cluster.config.broker_ids:
        w.sim.crash(broker)
    start = w.sim.now
    assert w.fence("foo", timeout_ms=5_000) == "REQUEST_TIMED_OUT"
    assert 4_900 <= w.sim.now - start <= 5_000
