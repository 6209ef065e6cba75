"""Bounded input: every size a user types is checked, with one line, before work starts."""

from __future__ import annotations

import pytest

from kraftsim.cli import main
from raft.config import ConfigError
from shell.session import Session
from sim.cluster import ClusterConfig
from sim.settings import parse_settings

HUGE = "9" * 5000


def _shell(*commands: str) -> tuple[list[str], list[str]]:
    out: list[str] = []
    err: list[str] = []
    session = Session(lambda line, is_error: (err if is_error else out).append(line))
    for command in commands:
        session.execute(command)
    return out, err


@pytest.mark.parametrize("command", [
    f"cluster controllers={HUGE}", "cluster brokers=51", f"cluster seed={HUGE}",
    "cluster broker-fetch-lag=1998", f"cluster max-records-per-batch=-{HUGE}",
    f"tick {HUGE}", f"run-until idle timeout={HUGE}",
    f"create-topic t partitions={HUGE}", "create-topic t partitions=1000001",
    "create-topic t replication-factor=51", "register-broker 2147483648",
    f"register-broker {HUGE}", f"log 0 0 {HUGE}", f"history {HUGE}",
])
def test_shell_refuses_huge_numbers_with_one_line(command: str) -> None:
    _out, err = _shell("cluster controllers=1 brokers=1", command)
    assert len(err) == 1
    assert "\n" not in err[0] and len(err[0]) < 200
    assert "must be" in err[0]


def test_a_cluster_without_brokers_elects_and_refuses_topics_at_once() -> None:
    out, err = _shell("cluster brokers=0", "create-topic t partitions=1")
    assert any("leads epoch 1" in line for line in out)
    assert len(err) == 1 and "INVALID_REPLICATION_FACTOR" in err[0]
    assert "All brokers are currently fenced" in err[0]  # Kafka's words for no broker


def test_a_fetch_lag_that_starves_the_brokers_is_refused() -> None:
    with pytest.raises(ConfigError, match="every fetch of a broker times out"):
        ClusterConfig(broker_fetch_lag_ms=1998).validate()
    parse_settings(["broker-fetch-lag=1997"]).validate()


@pytest.mark.parametrize("argv", [
    ["--voters", "10"], ["--observers", "51"], ["--duration", "2592000001"],
    ["--random-faults", "1001"], ["--faults", f"crash:1@{HUGE}"],
    ["--faults", f"pause:1@5+{HUGE}"], ["--seed", "9" * 41],
])
def test_raft_sim_refuses_huge_numbers(capsys: pytest.CaptureFixture[str],
                                       argv: list[str]) -> None:
    assert main(["raft-sim", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kraftsim: error: ") and len(err.strip().splitlines()) == 1
    assert len(err) < 300


@pytest.mark.parametrize("param", [
    f"batches={HUGE}", "batches=200000", "controllers=10", "brokers=51", "fetch-records=0",
    f"linger-ms={HUGE}", "rejoin-ms=2592000001", "timeout-ms=999", "batch-records=3",
])
def test_experiment_params_are_bounded(capsys: pytest.CaptureFixture[str], param: str) -> None:
    code = main(["experiment", "failover", "--seed", "5", "--replay", "0", "--param",
                 "scenario=crash", "--param", "window=inside", "--param",
                 "mode=transactional", "--param", param])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("kraftsim: error: parameter") and len(err.strip().splitlines()) == 1
    assert len(err) < 300


def test_experiment_master_seed_is_a_long(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["experiment", "failover", "--seed", "9" * 30, "--replay", "0", "--param",
                 "scenario=crash", "--param", "window=inside", "--param", "mode=transactional"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("kraftsim: error: --seed must be within")
