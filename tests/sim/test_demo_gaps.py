"""The demo explains each gap it shows, from the run itself."""

from __future__ import annotations

from controller import WriteMode
from sim.demo import format_demo, run_demo


def test_seed_7_explains_epoch_3_the_leaderless_time_and_the_brokers_lag() -> None:
    result = run_demo(7)
    epochs = {e["epoch"]: e for e in result.leader_epochs}
    assert sorted(epochs) == [1, 3]
    elected = epochs[3]["at_ms"]
    why_epoch, no_leader, brokers = result.gaps
    assert "epoch 2 was a split vote" in why_epoch and f"at {elected} ms" in why_epoch
    assert no_leader.startswith("no leader for ") and f"-{elected} ms)" in no_leader
    assert "fetch timeout (2000 ms)" in no_leader
    assert brokers.startswith("brokers showed the result ") and "observers" in brokers
    text = format_demo(result)
    assert "why the gaps:" in text and all(f"  - {gap}" in text for gap in result.gaps)


def test_a_first_round_win_is_explained_differently() -> None:
    result = run_demo(1)
    assert [e["epoch"] for e in result.leader_epochs] == [1, 2]
    assert "the first round after epoch 1 elected" in result.gaps[0]
    assert "split vote" not in " ".join(result.gaps)


def test_no_crash_no_gaps() -> None:
    assert run_demo(7, mode=WriteMode.ATOMIC).gaps == []
