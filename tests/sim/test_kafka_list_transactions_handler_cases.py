"""Kafka's ListTransactionsHandlerTest, against kraftsim's listTransactions
(:meth:`sim.txn_admin.TxnAdmin.list_transactions`, one round answered at once, and
:meth:`sim.txn_admin.TxnAdmin.list_transactions_call`, Kafka's call) and its error
sorting (:func:`sim.admin_handlers.list_transactions_outcome`).

Kafka class followed: ``ListTransactionsHandlerTest``
(``clients/src/test/java/org/apache/kafka/clients/admin/internals``). Kafka's cases check
the filters the request carries; here the filters are seen at work on the transactions
of simulated producers. Kafka's sample response is replaced by those transactions.

Ported: testBuildRequestWithoutFilters (every transaction listed),
testBuildRequestWithFilteredProducerId, testBuildRequestWithFilteredState,
testBuildRequestWithDurationFilter (its cases 1 and 2: -1 by default, a filter given is
applied), testHandleSuccessfulResponse (each listing's id, producer id and state name),
testCoordinatorLoadingErrorIsRetriable and testHandleResponseWithFatalErrors (sorted as
Kafka sorts them; kraftsim's coordinator answers neither, so a broker that does not
answer stands in for a fatal one: kraftsim left a stopped broker out of the listing
where Kafka's call fails, until the broker is fenced; ``list_transactions_call`` now
asks every broker the metadata names alive).

Beside them: metadata naming no alive broker lists nothing, at once.

Left out: testBuildRequestWithDurationFilter's cases 3 and 4 (a duration filter refused
at ListTransactions v0: kraftsim's requests have no versions).
"""

from __future__ import annotations

import pytest

from broker.txn.admin import TransactionListing
from controller.operations.brokers import UnregisterBroker
from sim.admin_handlers import Outcome, list_transactions_outcome
from sim.txn_admin import ListTransactionsByBroker
from tests.sim.admin_world import AdminWorld


def _world() -> tuple[AdminWorld, int, int]:
    """``foo`` with an Ongoing transaction (opened after ``bar``'s), ``bar`` CompleteAbort:
    (world, foo's producer id, bar's)."""
    w = AdminWorld()
    bar = w.producer("bar", "bar-1")
    assert bar.transaction([("t", 1, 1)], commit=False)
    w.idle(bar)
    w.sim.run_for(5_000)
    foo = w.open_transaction("foo", "foo-1")
    return w, foo.producer_id, bar.producer_id


def _call(w: AdminWorld, states: tuple[str, ...] = (), pids: tuple[int, ...] = (),
          duration_ms: int = -1, timeout_ms: int | None = None) -> ListTransactionsByBroker:
    done: list[ListTransactionsByBroker] = []
    w.admin.list_transactions_call(done.append, states, pids, duration_ms, timeout_ms)
    assert w.sim.run_until_true(lambda: bool(done), 120_000)
    return done[0]


def test_without_filters_and_successful_response() -> None:
    w, foo, bar = _world()
    expected = [TransactionListing("bar", bar, "CompleteAbort"),
                TransactionListing("foo", foo, "Ongoing")]
    assert w.admin.list_transactions().TransactionStates == expected
    answered = _call(w)
    assert set(answered.by_broker_id) == set(w.cluster.config.broker_ids)
    assert all(r.ErrorCode == "NONE" for r in answered.by_broker_id.values())
    assert answered.all().TransactionStates == expected


def test_filtered_producer_id() -> None:
    w, _foo, bar = _world()
    assert [t.TransactionalId for t in _call(w, pids=(bar,)).all().TransactionStates] == \
        ["bar"]
    assert _call(w, pids=(23423,)).all().TransactionStates == []


def test_filtered_state() -> None:
    w, _foo, _bar = _world()
    assert [t.TransactionalId for t in _call(w, ("Ongoing",)).all().TransactionStates] == \
        ["foo"]
    unknown = _call(w, ("Ongoing", "Bogus")).all()
    assert unknown.UnknownStateFilters == ["Bogus"]


def test_duration_filter() -> None:
    w, _foo, _bar = _world()
    assert len(_call(w, duration_ms=-1).all().TransactionStates) == 2   # the default
    # bar's transaction started over 5 s before foo's: only it runs longer than 3 s
    assert [t.TransactionalId for t in _call(w, duration_ms=3_000).all().TransactionStates
            ] == ["bar"]


@pytest.mark.parametrize(("error", "outcome"), [
    ("COORDINATOR_LOAD_IN_PROGRESS", Outcome.RETRY),
    ("COORDINATOR_NOT_AVAILABLE", Outcome.FAIL),
    ("UNKNOWN_SERVER_ERROR", Outcome.FAIL),
    ("NONE", Outcome.DONE),
])
def test_error_sorting(error: str, outcome: Outcome) -> None:
    assert list_transactions_outcome(error) is outcome


def test_a_crashed_broker_not_yet_fenced_fails_its_listing_and_the_call() -> None:
    w, _foo, _bar = _world()
    down = w.cluster.config.broker_ids[-1]
    w.sim.crash(down)
    answered = _call(w, timeout_ms=1_000)        # well within the broker's session timeout
    assert answered.by_broker_id[down].ErrorCode == "REQUEST_TIMED_OUT"
    assert all(r.ErrorCode == "NONE" for b, r in answered.by_broker_id.items() if b != down)
    assert answered.all().ErrorCode == "REQUEST_TIMED_OUT"
    # once the controller has fenced it, the metadata no longer names it
    w.sim.run_for(20_000)
    later = _call(w)
    assert down not in later.by_broker_id and later.all().ErrorCode == "NONE"
    assert {t.TransactionalId for t in later.all().TransactionStates} == {"foo", "bar"}


def test_no_alive_broker_lists_nothing() -> None:
    """Metadata naming no alive broker (every broker's registration removed, so none is
    asked): the call answers at once with no listing and no error, as Kafka's does with
    an empty broker map."""
    w, _foo, _bar = _world()
    for broker in w.cluster.config.broker_ids:
        assert w.cluster.wait(w.cluster.submit(UnregisterBroker(broker)))
    w.sim.run_for(100)
    done: list[ListTransactionsByBroker] = []
    w.admin.list_transactions_call(done.append)
    assert done == [ListTransactionsByBroker({})]
    assert done[0].all().TransactionStates == []
