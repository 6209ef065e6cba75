"""The broker-failover experiment as a pure function: a row's fields, replay determinism."""

from __future__ import annotations

from experiments.broker_failover import BROKER_FAILOVER
from tests.experiments.helpers import run, spec, without_wall

SMALL = {"partitions": 6, "records": 12, "down_ms": 10_000, "brokers": 4}


def test_a_crashed_broker_is_fenced_and_loses_nothing() -> None:
    row = run(spec("broker-failover", scenario="crash", mode="transactional", **SMALL))
    BROKER_FAILOVER.check_row(row)
    assert row["valid"] == "true", row["message"]
    assert len(row["failed_brokers"]) == 1
    # the session (broker.session.timeout.ms 9,000) expires after the last heartbeat
    assert 7_000 <= row["fence_ms"] <= 10_000
    assert row["leaders_ms"] <= row["fence_ms"]
    assert row["partition_changes"] >= row["moved_leaders"]
    assert len(row["unavailable_ms"]) == 6
    assert row["acked"] == 6 * 12
    assert row["records_lost"] == 0 and row["duplicates"] == 0


def test_a_controlled_shutdown_moves_leaders_before_the_fence() -> None:
    row = run(spec("broker-failover", scenario="shutdown", mode="transactional", **SMALL))
    assert row["valid"] == "true", row["message"]
    assert row["leaders_ms"] < 1_000 and row["unavailable_max_ms"] < 2_000
    assert row["records_lost"] == 0 and row["duplicates"] == 0


def test_a_replay_is_the_same_row() -> None:
    one = spec("broker-failover", scenario="zone", mode="non-atomic", **SMALL)
    first, second = run(one), run(one)
    assert without_wall(first) == without_wall(second)
    assert first["fingerprint"] == second["fingerprint"]
