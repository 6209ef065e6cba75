"""The report's plots say what they show: legends, refusals, coinciding lines, time series."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import msgspec
import pandas as pd
import pytest

from experiments import plots
from experiments.failover import FAILOVER
from experiments.grid import build_grid, parse_params
from experiments.model import Row, RunSpec
from experiments.pipeline import ReportPrework
from experiments.registry import get_experiment
from experiments.report import TimeSeries, time_series_of
from experiments.series import representative_runs, series_of

PNG = b"\x89PNG\r\n\x1a\n"


def test_bars_that_are_zero_everywhere_have_no_legend_entry(tmp_path: Path) -> None:
    frame = pd.DataFrame({"window": ["inside", "inside", "committed", "committed"],
                          "mode": ["transactional", "non-atomic"] * 2,
                          "rate": [0.0, 0.8, 0.0, 1.0]})
    labels = plots.grouped_bars(frame, "window", "mode", "rate", "t", "share",
                                tmp_path / "bars.png")
    assert labels == ["non-atomic", "0 everywhere: transactional"]
    assert (tmp_path / "bars.png").read_bytes()[:8] == PNG


def test_outcome_legend_lists_only_outcomes_that_occur(tmp_path: Path) -> None:
    frame = pd.DataFrame({"mode": ["transactional"] * 3, "window": ["inside"] * 3,
                          "outcome": ["aborted", "committed", "refused"], "runs": [3, 1, 0]})
    labels = plots.outcome_bars(frame, ["inside"], tmp_path / "outcomes.png")
    assert labels == ["committed", "aborted"]


def test_cdf_lines_that_coincide_say_so_and_refusals_are_shown(tmp_path: Path) -> None:
    frame = pd.DataFrame({"scenario": ["steady"] * 6,
                          "mode": ["transactional"] * 3 + ["non-atomic"] * 3,
                          "latency": [30, 31, 32, 30, 31, 32]})
    notes = {("steady", "atomic"): "refused 411 of 480 operations"}
    legends = plots.cdf_grid(frame, "scenario", "mode", "latency", "t", "ms",
                             tmp_path / "cdf.png", notes=notes)
    assert legends["steady"] == ["non-atomic (n=3)", "transactional (n=3), same as non-atomic",
                                 "atomic: refused 411 of 480 operations"]


def test_series_of_a_trace_shows_leaders_gaps_and_publications() -> None:
    notes: list[dict[str, object]] = [
        {"t": 0, "note": "node", "node": 3000, "status": "running", "role": "Leader",
         "epoch": 1, "leader": 3000},
        {"t": 100, "note": "publish", "node": 0, "offset": 5, "topics": 1},
        {"t": 500, "note": "fault", "what": "crash:3000@500"},
        {"t": 500, "note": "node", "node": 3000, "status": "crashed", "role": "Leader",
         "epoch": 1, "leader": 3000},
        {"t": 2500, "note": "node", "node": 3001, "status": "running", "role": "Leader",
         "epoch": 2, "leader": 3001},
        {"t": 2600, "note": "publish", "node": 0, "offset": 9, "topics": 1},
    ]
    series = series_of("crash", notes, 4000)
    assert series.leaderless == [(500, 2500)]
    assert series.epochs == [(0, 1), (2500, 2), (4000, 2)]
    assert series.published == {0: [(100, 5), (2600, 9), (4000, 9)]}
    assert series.faults == [(500, "crash:3000@500")]


def test_a_new_leader_is_drawn_while_the_cut_off_old_one_still_leads() -> None:
    """A partitioned leader still thinks it leads: the plot labels the new, higher epoch
    when it is elected, not when the old leader learns of it."""
    notes: list[dict[str, object]] = [
        {"t": 0, "note": "node", "node": 3000, "status": "running", "role": "Leader",
         "epoch": 1, "leader": 3000},
        {"t": 500, "note": "fault", "what": "isolate:3000@500"},
        {"t": 2500, "note": "node", "node": 3001, "status": "running", "role": "Leader",
         "epoch": 2, "leader": 3001},
        {"t": 3500, "note": "node", "node": 3000, "status": "running", "role": "Follower",
         "epoch": 2, "leader": 3001},
    ]
    series = series_of("partition", notes, 4000)
    assert series.epochs == [(0, 1), (2500, 2), (4000, 2)]
    assert series.leaderless == []


def test_one_run_per_cell_over_time(tmp_path: Path) -> None:
    axes = parse_params(FAILOVER, ["scenario=crash", "window=inside,committed",
                                   "mode=transactional"])
    specs = build_grid(FAILOVER, axes, 6, 1)
    series = representative_runs(FAILOVER, specs, axes, 36)
    assert [s.label for s in series] == ["inside", "committed"]
    for one in series:
        assert one.faults and one.leaderless and len(one.epochs) >= 2
        assert set(one.published) == {0, 1}
    titles = plots.time_series(series, "t", tmp_path / "timeseries.png")
    assert titles == ["inside", "committed"]
    assert (tmp_path / "timeseries.png").read_bytes()[:8] == PNG


def test_unavailable_window_boxes_per_fault_window_and_mode(tmp_path: Path) -> None:
    frame = pd.DataFrame({"scenario": ["crash"] * 4 + ["resign"] * 2,
                          "window": ["inside", "inside", "committed", "committed", "inside",
                                     "inside"],
                          "mode": ["transactional", "non-atomic"] * 3,
                          "unavailable_ms": [2000, 2010, 3900, 3950, 40, 45]})
    labels = plots.distribution_boxes(frame, "scenario", "window", "mode", "unavailable_ms",
                                      "t", "ms", tmp_path / "unavailable.png",
                                      order=["inside", "committed"])
    assert labels == ["non-atomic", "transactional"]
    assert (tmp_path / "unavailable.png").read_bytes()[:8] == PNG


def test_the_report_prework_makes_the_time_series_the_report_would() -> None:
    """A sweep makes the time-series plot in a thread while Spark runs: the same plot and
    section as made when the report is written, and none for swarm."""
    specs = build_grid(FAILOVER, parse_params(FAILOVER, ["scenario=crash", "window=inside"]),
                       4, 5)
    axes = FAILOVER.defaults()
    made = ReportPrework(FAILOVER, specs, axes).result()
    assert made == time_series_of(FAILOVER, specs, axes)
    assert made.png is not None and made.png[:8] == PNG
    assert "![one run per cell over time](timeseries.png)" in made.section
    swarm = get_experiment("swarm")
    assert ReportPrework(swarm, [], swarm.defaults()).result() == TimeSeries(None, [])


def test_an_error_making_the_time_series_reaches_the_sweep() -> None:
    broken = msgspec.structs.replace(FAILOVER, run=_raise)
    specs = build_grid(FAILOVER, parse_params(FAILOVER, []), 1, 5)
    with pytest.raises(RuntimeError, match="rerun failed"):
        ReportPrework(broken, specs, FAILOVER.defaults()).result()


def test_a_failed_sweep_cancels_the_prework_after_the_rerun_in_progress() -> None:
    reruns: list[int] = []
    running = threading.Event()
    cancelled = threading.Event()

    def rerun(spec: RunSpec, trace: Any) -> Row:
        reruns.append(spec.index)
        running.set()
        assert cancelled.wait(10)  # the sweep fails while this rerun runs
        return FAILOVER.run(spec, trace)

    slow = msgspec.structs.replace(FAILOVER, run=rerun)
    specs = build_grid(FAILOVER, parse_params(FAILOVER, []), 32, 5)  # 32 cells
    prework = ReportPrework(slow, specs, FAILOVER.defaults())
    assert running.wait(10)
    threading.Timer(0.05, cancelled.set).start()
    prework.cancel()  # returns once the rerun in progress ends
    assert len(reruns) == 1
    assert prework.result() == TimeSeries(None, [])


def _raise(*_: object) -> Row:
    raise RuntimeError("rerun failed")
