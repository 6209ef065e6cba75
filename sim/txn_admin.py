"""The Admin client's transaction calls against a simulated cluster.

- :meth:`TxnAdmin.list_transactions`: ListTransactions sent to every running
  broker's coordinator, the answers merged (Kafka's Admin does the same), with
  the state, producer-id and duration filters (KIP-994 ``DurationFilter``,
  KIP-939's "running longer than").
- :meth:`TxnAdmin.describe_transactions`: DescribeTransactions at each id's
  coordinator (FindCoordinator first).
- :meth:`TxnAdmin.force_terminate_transaction`: KIP-939's
  ``forceTerminateTransaction``: as Kafka builds it, through ``fenceProducers``,
  InitProducerId with Enable2Pc=false and KeepPreparedTxn=false, retried while
  the coordinator answers CONCURRENT_TRANSACTIONS (the abort of the ongoing
  transaction is under way) or is unavailable. An ongoing transaction, prepared
  or not, is aborted and its producer fenced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from broker.txn.admin import (
    ListTransactionsResult,
    TransactionDescription,
    describe_transactions,
    list_transactions,
)
from broker.txn.coordinator import TxnResult
from sim.txn_clients import RETRIABLE, RETRY_BACKOFF_MS
from sim.txn_cluster import TxnCluster

FENCE_TIMEOUT_MS = 1
"""The transaction timeout fenceProducers' InitProducerId carries (no transaction follows)."""


class TxnAdmin:
    """See the module docs."""

    def __init__(self, txns: TxnCluster) -> None:
        self.txns = txns

    def list_transactions(self, states_filter: Sequence[str] = (),
                          producer_id_filter: Sequence[int] = (),
                          duration_filter_ms: int = -1) -> ListTransactionsResult:
        """ListTransactions on every running broker, merged and sorted by transactional id."""
        now = self.txns.cluster.sim.now
        unknown: set[str] = set()
        listed = []
        for broker in self.txns.cluster.config.broker_ids:
            coordinator = self.txns.sync(broker)
            if coordinator is None:
                continue
            result = list_transactions(coordinator, now, states_filter, producer_id_filter,
                                       duration_filter_ms)
            unknown.update(result.UnknownStateFilters)
            listed += result.TransactionStates
        return ListTransactionsResult("NONE", sorted(unknown),
                                      sorted(listed, key=lambda t: t.TransactionalId))

    def describe_transactions(self, transactional_ids: Sequence[str]
                              ) -> list[TransactionDescription]:
        """DescribeTransactions, each id at its coordinator."""
        out = []
        for txn_id in transactional_ids:
            broker = self.txns.find_coordinator(txn_id)
            coordinator = self.txns.sync(broker) if broker is not None else None
            if coordinator is None:
                out.append(TransactionDescription("COORDINATOR_NOT_AVAILABLE", txn_id))
            else:
                out += describe_transactions(coordinator, [txn_id])
        return out

    def force_terminate_transaction(self, transactional_id: str,
                                    on_done: Callable[[str], None],
                                    deadline_ms: int = 60_000) -> None:
        """forceTerminateTransaction: fence the id's producer, aborting what it has open.

        ``on_done`` gets NONE, or the error that ended the attempts (REQUEST_TIMED_OUT
        after ``deadline_ms``).
        """
        sim = self.txns.cluster.sim
        give_up = sim.now + deadline_ms

        def attempt() -> None:
            broker = self.txns.find_coordinator(transactional_id)
            coordinator = self.txns.sync(broker) if broker is not None else None
            if coordinator is None or broker is None:
                retry("COORDINATOR_NOT_AVAILABLE")
                return
            coordinator.handle_init_producer_id(
                transactional_id, FENCE_TIMEOUT_MS, None, sim.now,
                lambda r: sim.schedule(sim.now, lambda: answered(r), "admin fence answer"),
                enable_2pc=False, keep_prepared_txn=False)
            self.txns.flush(broker)

        def answered(result: TxnResult) -> None:
            if result.error in RETRIABLE:
                retry(result.error)
            else:
                on_done(result.error)

        def retry(error: str) -> None:
            if sim.now + RETRY_BACKOFF_MS > give_up:
                on_done("REQUEST_TIMED_OUT")
            else:
                sim.schedule(sim.now + RETRY_BACKOFF_MS, attempt, "admin fence retry")

        attempt()
