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


def test_an_isolated_broker_is_fenced_like_a_crashed_one() -> None:
    """Cut off, it keeps running but its heartbeats stop reaching the controllers: its
    session expires, the fence moves its leaderships, and healing loses nothing."""
    row = run(spec("broker-failover", scenario="isolate", mode="transactional", **SMALL))
    assert row["valid"] == "true", row["message"]
    assert 7_000 <= row["fence_ms"] <= 10_000
    assert row["leaders_ms"] == row["fence_ms"]  # the fence's own PartitionChangeRecords
    assert row["partition_changes"] >= row["moved_leaders"] > 0
    assert row["records_lost"] == 0 and row["duplicates"] == 0


def test_a_controlled_shutdown_moves_leaders_before_the_fence() -> None:
    row = run(spec("broker-failover", scenario="shutdown", mode="transactional", **SMALL))
    assert row["valid"] == "true", row["message"]
    assert row["leaders_ms"] < 1_000 and row["unavailable_max_ms"] < 2_000
    assert row["fence_ms"] is not None and row["leaders_ms"] < row["fence_ms"]
    assert row["records_lost"] == 0 and row["duplicates"] == 0


def test_producers_that_do_not_finish_in_time_make_an_unknown_row() -> None:
    """2,000 records per partition cannot be acknowledged within a 1 s limit: the row is
    unknown and says why; nothing acknowledged is lost."""
    row = run(spec("broker-failover", scenario="crash", mode="transactional", **{
        **SMALL, "records": 2000, "down_ms": 0, "timeout_ms": 1000}))
    assert (row["valid"], row["invariant"], row["message"]) == \
        ("unknown", None, "the producers or the cluster did not settle within 1000 ms")
    assert 0 < row["acked"] < 6 * 2000 and row["records_lost"] == 0


def test_a_zone_spares_one_broker_at_least() -> None:
    """A zone as large as the cluster crashes every broker but one, each once."""
    row = run(spec("broker-failover", scenario="zone", mode="transactional", brokers=3,
                   zone_size=5, partitions=3, records=5, down_ms=0))
    assert row["valid"] == "true", row["message"]
    assert len(row["failed_brokers"]) == len(set(row["failed_brokers"])) == 2


def test_a_run_stopped_while_the_cluster_starts_counts_nothing() -> None:
    """A deliberate bug caught during start-up: the row names the invariant, no broker
    failed, nothing moved or changed, and the read-back is not made."""
    row = run(spec("broker-failover", scenario="crash", mode="transactional", partitions=3,
                   records=5, brokers=3, mutations="hw-without-majority"))
    assert (row["valid"], row["invariant"]) == ("false", "MajorityReachedHighWatermark")
    assert (row["failed_brokers"], row["moved_leaders"], row["partition_changes"]) == ([], 0, 0)
    assert (row["acked"], row["records_lost"], row["duplicates"]) == (0, None, None)


def test_a_replay_is_the_same_row() -> None:
    one = spec("broker-failover", scenario="zone", mode="non-atomic", **SMALL)
    first, second = run(one), run(one)
    assert without_wall(first) == without_wall(second)
    assert first["fingerprint"] == second["fingerprint"]
