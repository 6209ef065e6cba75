"""A broker's producer ids, following the cases of Kafka's ``ProducerIdManagerTest``
(core/src/test/scala/unit/kafka/coordinator/transaction/).

Kafka's ``RPCProducerIdManager`` is kraftsim's :class:`~broker.producer_ids.ProducerIdManager`;
Kafka's mock controller, which answers each AllocateProducerIds with the next block (its
start moving on by the block's length), is played here by the test. testRetryBackoff,
testInvalidRanges and testUnrecoverableErrors are ported in
tests/broker/test_producer_ids.py (named in their docstrings), with the prefetch, the
monotonic check and the controller channel's part (NOT_CONTROLLER resent by the channel,
never seen by the manager; the 100 ms looks; the request and retry timeouts; the 50 ms
reconnect back-off); the controller's side of a block is in
tests/controller/test_kafka_producer_ids_block_cases.py.

Not ported:

- ``testGetProducerIdZk`` and ``testExceedProducerIdLimitZk``: the ZooKeeper
  ``ZkProducerIdManager``; kraftsim models KRaft only. (Its controller refuses a block past
  Long.MAX_VALUE: tests/controller/test_kafka_producer_id_cases.py.)
"""

from __future__ import annotations

import pytest

from broker.producer_ids import REQUEST_RETRY_TIMEOUT_MS, ProducerIdManager
from metadata.controller_channel import ControllerChannel
from metadata.requests import AllocateProducerIdsRequest, AllocateProducerIdsResponse, NodeMessage

EPOCH = 1
CONTROLLER = 3000
HANDLERS = 5
"""Kafka's numThreads: the request handlers asking for ids."""


@pytest.mark.parametrize("block_len", [1, 2, 10, 100])
def test_handlers_asking_in_turn_get_unique_ids_from_contiguous_blocks(block_len: int) -> None:
    """testConcurrentGeneratePidRequests: five handlers ask for ids in turn while the
    controller hands out blocks of ``block_len`` from 0; an asker gets an id or
    COORDINATOR_LOAD_IN_PROGRESS, never another error, and the first three blocks' ids
    are each handed out once, every block exhausted before the next is used (no id
    beyond 3 * block_len + 5)."""
    sent: list[AllocateProducerIdsRequest] = []

    def send(env: NodeMessage) -> None:
        assert isinstance(env.message, AllocateProducerIdsRequest)
        sent.append(env.message)

    manager = ProducerIdManager(0, ControllerChannel(
        0, lambda: CONTROLLER, retry_timeout_ms=REQUEST_RETRY_TIMEOUT_MS, emit=send))
    next_start = 0
    answered = 0
    handed: dict[int, int] = {}
    wanted = block_len * 3
    for _ in range(10_000):
        if len(handed) >= wanted:
            break
        for _ in range(HANDLERS):
            error, pid = manager.next_id(EPOCH)
            if error == "NONE":
                if len(handed) < wanted:
                    handed[pid] = handed.get(pid, 0) + 1
            else:
                assert (error, pid) == ("COORDINATOR_LOAD_IN_PROGRESS", -1)
        # the mock controller answers what was asked since the last round
        for request in sent[answered:]:
            manager.channel.handle_message(NodeMessage(CONTROLLER, 0, AllocateProducerIdsResponse(
                request.correlation_id, "NONE", next_start, block_len)), 0)
            next_start += block_len
        answered = len(sent)
    assert len(handed) == wanted
    assert all(count == 1 for count in handed.values())
    assert all(pid < wanted + HANDLERS for pid in handed), sorted(handed)
    assert sorted(handed) == list(range(wanted))
