"""An operation's records go into a bounded list: too many fail at once (Kafka's BoundedList)."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from controller.errors import ApiError
from controller.operations import CreateTopics, NewTopic, OperationContext
from controller.operations.bounded import MAX_RECORDS_PER_USER_OP, BoundedRecords
from metadata.schema import NoOpRecord
from tests.controller.conftest import cluster

MESSAGE = "Unable to perform excessively large batch operation."


def test_the_bounded_list_fails_on_the_first_record_past_the_limit() -> None:
    records = BoundedRecords(3)
    records.extend([NoOpRecord()] * 3)
    with pytest.raises(ApiError) as raised:
        records.append(NoOpRecord())
    assert raised.value.code == "POLICY_VIOLATION" and raised.value.message == MESSAGE
    assert len(records) == 3
    with pytest.raises(ApiError):
        records.extend(NoOpRecord() for _ in range(10**12))  # stops at once


def test_an_operation_over_the_limit_is_refused_and_writes_nothing() -> None:
    c = cluster(seed=4)
    active = c.active_controller()
    assert active is not None
    end = active.raft.log.end_offset
    # 3 x 5,000 partitions: 15,003 records, past Kafka's 10,000 per user operation
    handle = c.submit(CreateTopics(tuple(NewTopic(f"t{i}", 5_000, 3) for i in range(3))))
    assert handle.error is not None, "the oversized operation was accepted"
    assert handle.error.code == "POLICY_VIOLATION" and handle.error.message == MESSAGE
    assert active.raft.log.end_offset == end and active.active
    ok = c.submit(CreateTopics((NewTopic("fits", MAX_RECORDS_PER_USER_OP - 1, 3),)))
    assert c.wait(ok, 60_000) and ok.error is None, ok.error


def test_a_huge_request_fails_before_its_records_are_generated() -> None:
    c = cluster(seed=4)
    active = c.active_controller()
    assert active is not None
    request = CreateTopics(tuple(NewTopic(f"t{i}", 100_000, 3) for i in range(10_001)))
    ctx = OperationContext(active.image, random.Random(0), 0, active.node_id)
    tracemalloc.start()
    try:
        with pytest.raises(ApiError, match="excessively large"):
            request.generate(ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20  # ~10,000 records, not 10^9
    handle = c.submit(request)
    assert handle.error is not None and handle.error.code == "POLICY_VIOLATION"
