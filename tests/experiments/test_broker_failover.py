"""The broker-failover experiment as a pure function: a row's fields, replay determinism."""

from __future__ import annotations

import pytest

from experiments.broker_failover import BROKER_FAILOVER
from experiments.grid import cells, parse_params
from experiments.model import ExperimentError
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


CASCADE = {"scenario": "cascade", "mode": "transactional", "zone_size": 3, "brokers": 4,
           "partitions": 6, "records": 40, "down_ms": 10_000}
"""Three of four brokers shut down in turn and return 10 s apart: partitions whose three
replicas all went down lose every ISR member."""


def test_with_eligible_leader_replicas_a_cascade_gets_its_leaders_back_one_return_earlier(
        ) -> None:
    """Without ELR a partition whose replicas all shut down waits for its last ISR member,
    the last broker to return; with ELR (bootstrapped at 4.1-IV0) the second broker down,
    eligible since it left an ISR of two, leads on its return, 10 s (down-ms) earlier.
    Nothing acknowledged is lost either way."""
    off = run(spec("broker-failover", metadata_version="4.0-IV0", **CASCADE))
    on = run(spec("broker-failover", metadata_version="4.1-IV0", **CASCADE))
    for row in (off, on):
        BROKER_FAILOVER.check_row(row)
        assert row["valid"] == "true", row["message"]
        assert row["records_lost"] == 0 and row["duplicates"] == 0
        assert row["acked"] == 6 * 40 and len(row["failed_brokers"]) == 3
    assert (off["metadata_version"], off["elr"], on["metadata_version"], on["elr"]) == \
        ("4.0-IV0", False, "4.1-IV0", True)
    assert on["leaderless_partitions"] == off["leaderless_partitions"] > 0
    assert off["elr_elections"] == 0
    assert on["elr_elections"] == on["leaderless_partitions"]  # each led by an ELR member
    saved = off["leaderless_max_ms"] - on["leaderless_max_ms"]
    assert 9_000 <= saved <= 11_000  # one down-ms: the second return instead of the third
    assert off["leaderless_max_ms"] > 2 * 10_000
    assert on["unavailable_max_ms"] < off["unavailable_max_ms"]


def test_eligible_leader_replicas_do_not_survive_a_crash() -> None:
    """A zone of three crashes: the brokers come back uncleanly and leave every ELR
    (KIP-966), so no leader comes from the ELR, the partitions that lost every replica
    wait as long as without ELR, and nothing is lost."""
    zone = {**CASCADE, "scenario": "zone"}
    off = run(spec("broker-failover", metadata_version="4.0-IV0", **zone))
    on = run(spec("broker-failover", metadata_version="4.1-IV0", **zone))
    assert on["valid"] == off["valid"] == "true", (on["message"], off["message"])
    assert on["elr"] and on["elr_elections"] == off["elr_elections"] == 0
    assert on["leaderless_partitions"] == off["leaderless_partitions"] > 0
    assert abs(on["leaderless_max_ms"] - off["leaderless_max_ms"]) < 1_000
    assert on["records_lost"] == off["records_lost"] == 0
    assert on["duplicates"] == off["duplicates"] == 0


def test_a_cluster_without_metadata_transactions_runs_non_atomic_and_refuses_transactional(
        ) -> None:
    """At 3.5-IV2 the topic is set up non-atomically and the fence written as the mode says;
    mode transactional is refused before any run, naming both parameters."""
    row = run(spec("broker-failover", scenario="crash", mode="non-atomic",
                   metadata_version="3.5-IV2", **{**SMALL, "records": 6}))
    assert row["valid"] == "true", row["message"]
    assert (row["metadata_version"], row["elr"]) == ("3.5-IV2", False)
    assert row["fence_ms"] is not None and row["records_lost"] == 0
    with pytest.raises(ExperimentError) as refused:
        spec("broker-failover", scenario="crash", mode="non-atomic,transactional",
             metadata_version="3.5-IV2")
    assert str(refused.value) == (
        "parameters mode and metadata-version: mode transactional needs metadata-version "
        "3.6-IV1 or later (metadata transactions, KIP-868), got 3.5-IV2; give --param "
        "mode=non-atomic,atomic for that level")


def test_metadata_version_is_an_axis_named_either_way() -> None:
    """Release names and feature levels are one value (the name); the default grid has the
    four scenarios it had before cascade and one metadata.version."""
    axes = parse_params(BROKER_FAILOVER, ["metadata-version=4.0-IV0,26,4.1-IV0"])
    assert axes["metadata-version"] == ("4.0-IV0", "4.1-IV0")
    assert len(cells(BROKER_FAILOVER, axes)) == 2 * 4 * 3
    defaults = parse_params(BROKER_FAILOVER, [])
    assert defaults["metadata-version"] == ("4.0-IV0",)
    assert defaults["scenario"] == ("crash", "isolate", "shutdown", "zone")
    with pytest.raises(ExperimentError) as bad:
        parse_params(BROKER_FAILOVER, ["metadata-version=4.0-IV0,3.2-IV0"])
    assert str(bad.value) == (
        "parameter metadata-version: must be a metadata.version in 3.3-IV0..4.5-IV0: "
        "Bootstrap metadata.version before 3.3-IV0 are not supported, got 3.2-IV0")
