"""The report's PNG plots (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

DPI = 80
LINE_STYLES = ("-", "--", ":", "-.")
OUTCOME_COLORS = {"committed": "#4c9a2a", "aborted": "#e8a33d", "dropped": "#9aa5b1",
                  "partial": "#c8553d", "refused": "#5b6c8f", "open": "#333333"}


def cdf_grid(frame: Any, panel: str, line: str, value: str, title: str, xlabel: str,
             path: Path, ylabel: str = "fraction of runs") -> None:
    """One CDF panel per value of ``panel``, one line per value of ``line``."""
    panels = sorted(frame[panel].unique()) if len(frame) else ["(no data)"]
    columns = min(2, len(panels))
    rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.0 * rows),
                             squeeze=False, sharex=True, sharey=True)
    for index, name in enumerate(panels):
        ax = axes[index // columns][index % columns]
        part = frame[frame[panel] == name] if len(frame) else frame
        for number, key in enumerate(sorted(part[line].unique()) if len(part) else []):
            values = sorted(float(v) for v in part[part[line] == key][value])
            n = len(values)
            ax.step([0.0, *values], [0.0, *((i + 1) / n for i in range(n))], where="post",
                    label=f"{key}", linestyle=LINE_STYLES[number % len(LINE_STYLES)],
                    linewidth=1.6)
        ax.set_title(str(name), fontsize=10)
        ax.grid(alpha=0.3)
        if index % columns == 0:
            ax.set_ylabel(ylabel)
        if index // columns == rows - 1:
            ax.set_xlabel(xlabel)
        if len(part):
            ax.legend(fontsize=8, loc="lower right")
    for index in range(len(panels), rows * columns):
        axes[index // columns][index % columns].axis("off")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def grouped_bars(frame: Any, group: str, bar: str, value: str, title: str, ylabel: str,
                 path: Path) -> None:
    """Bars of ``value``: one group per value of ``group``, one bar per value of ``bar``."""
    groups = list(dict.fromkeys(frame[group])) if len(frame) else []
    bars = sorted(frame[bar].unique()) if len(frame) else []
    fig, ax = plt.subplots(figsize=(max(4.5, 1.4 * len(groups) + 2), 3.2))
    width = 0.8 / max(1, len(bars))
    for j, key in enumerate(bars):
        heights = []
        for name in groups:
            match = frame[(frame[group] == name) & (frame[bar] == key)][value]
            heights.append(float(match.iloc[0]) if len(match) else 0.0)
        ax.bar([i + j * width for i in range(len(groups))], heights, width, label=str(key))
    ax.set_xticks([i + width * (len(bars) - 1) / 2 for i in range(len(groups))],
                  [str(g) for g in groups], fontsize=9)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    if bars:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def outcome_bars(frame: Any, order: list[str], path: Path) -> None:
    """Per mode, per fault window: the share of each outcome (stacked)."""
    modes = sorted(frame["mode"].unique()) if len(frame) else ["(no data)"]
    fig, axes = plt.subplots(1, len(modes), figsize=(4.2 * len(modes), 3.4), squeeze=False,
                             sharey=True)
    outcomes = [o for o in OUTCOME_COLORS if len(frame) and o in set(frame["outcome"])]
    for index, mode in enumerate(modes):
        ax = axes[0][index]
        part = frame[frame["mode"] == mode] if len(frame) else frame
        windows = [w for w in order if len(part) and w in set(part["window"])]
        bottoms = [0.0] * len(windows)
        totals = [float(part[part["window"] == w]["runs"].sum()) for w in windows]
        for outcome in outcomes:
            shares = []
            for w, total in zip(windows, totals, strict=True):
                match = part[(part["window"] == w) & (part["outcome"] == outcome)]["runs"]
                shares.append(float(match.sum()) / total if total else 0.0)
            ax.bar(windows, shares, bottom=bottoms, label=outcome,
                   color=OUTCOME_COLORS[outcome])
            bottoms = [b + s for b, s in zip(bottoms, shares, strict=True)]
        ax.set_title(str(mode), fontsize=10)
        ax.tick_params(axis="x", labelsize=8)
        if index == 0:
            ax.set_ylabel("share of runs")
    if outcomes:
        axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.suptitle("Outcome of the operation by fault window", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
