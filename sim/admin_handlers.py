"""How Kafka's Admin client takes each answer of its transaction calls.

Kafka's Admin sends these calls through one handler each (``AdminApiHandler``
in ``clients/admin/internals``) that sorts every error of an answer:

- ``retry``: ask the same broker again after ``retry.backoff.ms``
  (COORDINATOR_LOAD_IN_PROGRESS; for fenceProducers also CONCURRENT_TRANSACTIONS,
  the coordinator still aborting the transaction it fenced; for describeProducers
  UNKNOWN_TOPIC_OR_PARTITION, metadata not there yet);
- ``lookup``: find the coordinator (FindCoordinator) or the partition leader
  (Metadata) again, then ask it (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE; a
  partition's leader moving: NOT_LEADER_OR_FOLLOWER and, for abortTransaction,
  UNKNOWN_TOPIC_OR_PARTITION, REPLICA_NOT_AVAILABLE, BROKER_NOT_AVAILABLE);
- ``fail``: the call fails with that error (everything else, authorization and
  TRANSACTIONAL_ID_NOT_FOUND included).

The call as a whole gives up at its timeout (default.api.timeout.ms, 60 s, unless
the call names one) with a TimeoutException, REQUEST_TIMED_OUT here. ListTransactions
goes to every broker the metadata names alive and sorts each broker's answer on its
own: COORDINATOR_LOAD_IN_PROGRESS is retried, any other error fails that broker's
listing (kraftsim's coordinator loads a partition in the step it gains it, so it
answers NONE, but a broker that does not answer fails its listing at the timeout).
"""

from __future__ import annotations

from enum import StrEnum

DEFAULT_API_TIMEOUT_MS = 60_000
"""Kafka's default.api.timeout.ms: how long an Admin call retries unless it names a timeout."""


class Outcome(StrEnum):
    """What the Admin client does with one answer."""

    DONE = "done"
    RETRY = "retry"
    LOOKUP = "lookup"
    FAIL = "fail"


def list_transactions_outcome(error: str) -> Outcome:
    """ListTransactions (Kafka's ListTransactionsHandler), per broker."""
    if error == "NONE":
        return Outcome.DONE
    return Outcome.RETRY if error == "COORDINATOR_LOAD_IN_PROGRESS" else Outcome.FAIL


_COORDINATOR_MOVED = frozenset({"NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE"})


def describe_transactions_outcome(error: str) -> Outcome:
    """DescribeTransactions (Kafka's DescribeTransactionsHandler), per transactional id."""
    if error == "NONE":
        return Outcome.DONE
    if error == "COORDINATOR_LOAD_IN_PROGRESS":
        return Outcome.RETRY
    return Outcome.LOOKUP if error in _COORDINATOR_MOVED else Outcome.FAIL


def fence_producers_outcome(error: str) -> Outcome:
    """fenceProducers' InitProducerId (Kafka's FenceProducersHandler). The request names
    no producer id or epoch, so PRODUCER_FENCED, INVALID_PRODUCER_EPOCH and
    TRANSACTIONAL_ID_NOT_FOUND are unexpected answers: they fail the call."""
    if error == "NONE":
        return Outcome.DONE
    if error in ("COORDINATOR_LOAD_IN_PROGRESS", "CONCURRENT_TRANSACTIONS"):
        return Outcome.RETRY
    return Outcome.LOOKUP if error in _COORDINATOR_MOVED else Outcome.FAIL


def describe_producers_outcome(error: str, broker_named: bool = False) -> Outcome:
    """DescribeProducers (Kafka's DescribeProducersHandler), per partition.

    With ``broker_named`` (the call's ``brokerId`` option: ask that broker, not the
    leader) NOT_LEADER_OR_FOLLOWER fails the call instead of looking the leader up again.
    """
    if error == "NONE":
        return Outcome.DONE
    if error == "UNKNOWN_TOPIC_OR_PARTITION":
        return Outcome.RETRY
    if error == "NOT_LEADER_OR_FOLLOWER":
        return Outcome.FAIL if broker_named else Outcome.LOOKUP
    return Outcome.FAIL


_LEADER_MOVED = frozenset({"NOT_LEADER_OR_FOLLOWER", "UNKNOWN_TOPIC_OR_PARTITION",
                           "REPLICA_NOT_AVAILABLE", "BROKER_NOT_AVAILABLE"})


def abort_transaction_outcome(error: str) -> Outcome:
    """abortTransaction's WriteTxnMarkers (Kafka's AbortTransactionHandler)."""
    if error == "NONE":
        return Outcome.DONE
    return Outcome.LOOKUP if error in _LEADER_MOVED else Outcome.FAIL
