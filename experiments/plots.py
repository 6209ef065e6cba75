"""The report's PNG plots (matplotlib, no display needed).

Every figure returns what it drew that a reader relies on (legend labels),
so tests can check the content, not just that a file exists. Legends sit
outside the plotting area; a series that is zero everywhere gets no legend
entry (its bars are marked "0" instead); lines that coincide are told apart
by markers and say so in their label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from experiments.series import Series

DPI = 80
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")
OUTCOME_COLORS = {"committed": "#4c9a2a", "aborted": "#e8a33d", "dropped": "#9aa5b1",
                  "partial": "#c8553d", "refused": "#5b6c8f", "open": "#333333"}
MAX_PANELS = 36
"""Time-series panels at most (one per cell, the first cells of a larger grid)."""


def _save(fig: Any, path: Path) -> None:
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def _outside_legend(ax: Any, handles: list[Any] | None = None,
                    labels: list[str] | None = None) -> None:
    if handles is None:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0)


def cdf_grid(frame: Any, panel: str, line: str, value: str, title: str, xlabel: str,
             path: Path, ylabel: str = "fraction of runs",
             notes: Mapping[tuple[str, str], str] | None = None) -> dict[str, list[str]]:
    """One CDF panel per value of ``panel``, one line per value of ``line``; returns each
    panel's legend labels.

    Each panel has its own x range (from its smallest value, padded), so a panel
    whose values are close together is not squeezed into a vertical line. Lines
    that coincide get distinct markers and a label saying so; ``notes`` adds a
    text to a (panel, line) label (e.g. how many operations were refused).
    """
    panels = sorted(frame[panel].unique()) if len(frame) else []
    names = [*panels, *sorted({p for p, _ in (notes or {}) if p not in panels})]
    names = names or ["(no data)"]
    columns = min(2, len(names))
    rows = (len(names) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.0 * rows),
                             squeeze=False, sharey=True)
    legends: dict[str, list[str]] = {}
    for index, name in enumerate(names):
        ax = axes[index // columns][index % columns]
        part = frame[frame[panel] == name] if len(frame) else frame
        keys = sorted(part[line].unique()) if len(part) else []
        drawn: dict[tuple[float, ...], str] = {}
        low, high = float("inf"), float("-inf")
        for number, key in enumerate(keys):
            values = tuple(sorted(float(v) for v in part[part[line] == key][value]))
            n = len(values)
            label = f"{key} (n={n:,})"
            if values in drawn:
                label += f", same as {drawn[values]}"
            else:
                drawn[values] = str(key)
            note = (notes or {}).get((str(name), str(key)))
            if note:
                label += f"; {note}"
            ax.step([values[0], *values], [0.0, *((i + 1) / n for i in range(n))],
                    where="post", label=label, linestyle=LINE_STYLES[number % len(LINE_STYLES)],
                    linewidth=2.6 - 0.7 * min(number, 2), marker=MARKERS[number % len(MARKERS)],
                    markevery=max(1, n // 6), markersize=4, alpha=0.85)
            low, high = min(low, values[0]), max(high, values[-1])
        for (panel_name, key), note in sorted((notes or {}).items()):
            if panel_name == str(name) and key not in {str(k) for k in keys}:
                ax.plot([], [], linestyle="none", label=f"{key}: {note}")
        if low <= high:
            pad = max(1.0, 0.08 * (high - low))
            ax.set_xlim(low - pad, high + pad)
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(str(name), fontsize=10)
        ax.grid(alpha=0.3)
        if index % columns == 0:
            ax.set_ylabel(ylabel)
        if index // columns == rows - 1 or index + columns >= len(names):
            ax.set_xlabel(xlabel)
        if ax.get_legend_handles_labels()[1]:
            _outside_legend(ax)
        legends[str(name)] = ax.get_legend_handles_labels()[1]
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].axis("off")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _save(fig, path)
    return legends


def grouped_bars(frame: Any, group: str, bar: str, value: str, title: str, ylabel: str,
                 path: Path) -> list[str]:
    """Bars of the share ``value``: one group per value of ``group``, one bar per value of
    ``bar``; returns the legend labels (a series that is 0 everywhere has none)."""
    groups = list(dict.fromkeys(frame[group])) if len(frame) else []
    bars = sorted(frame[bar].unique()) if len(frame) else []
    fig, ax = plt.subplots(figsize=(max(4.5, 1.4 * len(groups) + 2), 3.2))
    width = 0.8 / max(1, len(bars))
    zero_keys = []
    for j, key in enumerate(bars):
        heights = []
        for name in groups:
            match = frame[(frame[group] == name) & (frame[bar] == key)][value]
            heights.append(float(match.iloc[0]) if len(match) else 0.0)
        xs = [i + j * width for i in range(len(groups))]
        everywhere_zero = not any(heights)
        if everywhere_zero:
            zero_keys.append(str(key))
        ax.bar(xs, heights, width, label="_nolegend_" if everywhere_zero else str(key))
        for x, height in zip(xs, heights, strict=True):
            if height == 0:
                ax.text(x, 0.01, "0", ha="center", va="bottom", fontsize=7, color="#555555")
    ax.set_xticks([i + width * (len(bars) - 1) / 2 for i in range(len(groups))],
                  [str(g) for g in groups], fontsize=9)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if zero_keys:
        labels.append(f"0 everywhere: {', '.join(zero_keys)}")
        handles.append(ax.plot([], [], linestyle="none")[0])
    if labels:
        _outside_legend(ax, handles, labels)
    fig.tight_layout()
    _save(fig, path)
    return labels


def outcome_bars(frame: Any, order: list[str], path: Path) -> list[str]:
    """Per mode, per fault window: the share of each outcome (stacked); returns the legend
    labels (only outcomes that occur)."""
    modes = sorted(frame["mode"].unique()) if len(frame) else ["(no data)"]
    fig, axes = plt.subplots(1, len(modes), figsize=(3.8 * len(modes) + 1.5, 3.4),
                             squeeze=False, sharey=True)
    outcomes = [o for o in OUTCOME_COLORS if len(frame) and
                float(frame[frame["outcome"] == o]["runs"].sum()) > 0]
    handles: dict[str, Any] = {}
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
            if not any(shares):
                continue
            handles[outcome] = ax.bar(windows, shares, bottom=bottoms, label=outcome,
                                      color=OUTCOME_COLORS[outcome])
            bottoms = [b + s for b, s in zip(bottoms, shares, strict=True)]
        ax.set_title(str(mode), fontsize=10)
        ax.set_ylim(0, 1.02)
        ax.tick_params(axis="x", labelsize=8, rotation=20)
        if index == 0:
            ax.set_ylabel("share of runs")
    labels = [o for o in outcomes if o in handles]
    if labels:
        _outside_legend(axes[0][-1], [handles[o] for o in labels], labels)
    fig.suptitle("Outcome of the operation by fault window", fontsize=11)
    fig.tight_layout()
    _save(fig, path)
    return labels


def distribution_boxes(frame: Any, panel: str, group: str, box: str, value: str, title: str,
                       ylabel: str, path: Path, order: Sequence[str] | None = None) -> list[str]:
    """The distribution of ``value`` as box plots: a panel per ``panel``, a group of boxes
    per ``group`` (in ``order``), one box per ``box`` with every run drawn as a dot;
    returns the legend labels."""
    panels = sorted(frame[panel].unique()) if len(frame) else ["(no data)"]
    keys = sorted(frame[box].unique()) if len(frame) else []
    columns = min(2, len(panels))
    rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.0 * rows),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    handles: dict[str, Any] = {}
    for index, name in enumerate(panels):
        ax = axes[index // columns][index % columns]
        part = frame[frame[panel] == name] if len(frame) else frame
        groups = [g for g in (order or sorted(part[group].unique())) if len(part) and
                  g in set(part[group])]
        width = 0.8 / max(1, len(keys))
        for j, key in enumerate(keys):
            data, positions = [], []
            for i, g in enumerate(groups):
                values = [float(v) for v in part[(part[group] == g) & (part[box] == key)][value]]
                if values:
                    data.append(values)
                    positions.append(i + (j - (len(keys) - 1) / 2) * width)
            if not data:
                continue
            color = colors[j % len(colors)]
            ax.boxplot(data, positions=positions, widths=width * 0.8, showfliers=False,
                       patch_artist=True, boxprops={"facecolor": color, "alpha": 0.35},
                       medianprops={"color": color})
            for x, values in zip(positions, data, strict=True):
                ax.plot([x] * len(values), values, linestyle="none", marker=MARKERS[j % 6],
                        markersize=3, color=color, alpha=0.6)
            handles[str(key)] = ax.plot([], [], linestyle="none", marker=MARKERS[j % 6],
                                        color=color)[0]
        ax.set_xticks(range(len(groups)), [str(g) for g in groups], fontsize=8, rotation=20)
        ax.set_title(str(name), fontsize=10)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    for index in range(len(panels), rows * columns):
        axes[index // columns][index % columns].axis("off")
    labels = [k for k in (str(k) for k in keys) if k in handles]
    if labels:
        _outside_legend(axes[0][columns - 1], [handles[k] for k in labels], labels)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _save(fig, path)
    return labels


def time_series(series: Sequence[Series], title: str, path: Path | IO[bytes]) -> list[str]:
    """One panel per representative run: each broker's published metadata offset over
    simulated time, each new controller leader as a dotted line labelled with its epoch,
    spans with no leader shaded, faults as dashed lines. Returns the panels' titles."""
    shown = list(series[:MAX_PANELS]) or [Series("(no runs)")]
    columns = min(4, len(shown))
    rows = (len(shown) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 2.4 * rows + 0.9),
                             squeeze=False)
    titles = []
    legend: dict[str, Any] = {}
    for index, one in enumerate(shown):
        ax = axes[index // columns][index % columns]
        for number, (broker, points) in enumerate(sorted(one.published.items())):
            xs, ys = zip(*points, strict=True)
            legend[f"broker {broker}: published offset"] = ax.step(
                xs, ys, where="post", linewidth=1.4,
                linestyle=LINE_STYLES[number % len(LINE_STYLES)])[0]
        for start, end in one.leaderless:
            legend["no controller leader"] = ax.axvspan(start, end, color="#c8553d",
                                                        alpha=0.15, linewidth=0)
        for at, _ in one.faults:
            legend["fault"] = ax.axvline(at, color="#333333", linestyle="--", linewidth=1)
        for at, epoch in one.epochs[:-1]:
            legend["new leader (epoch)"] = ax.axvline(at, color="#7a4fa0", linestyle=":",
                                                      linewidth=1)
            ax.text(at, 1.0, f" e{epoch}", transform=ax.get_xaxis_transform(), fontsize=7,
                    color="#7a4fa0", va="top", ha="left")
        ax.set_title(one.label, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.yaxis.set_major_locator(MaxNLocator(3, integer=True))
        if one.end_ms > one.start_ms:
            ax.set_xlim(one.start_ms, one.end_ms)
        if index // columns == rows - 1 or index + columns >= len(shown):
            ax.set_xlabel("simulated ms", fontsize=8)
        if index % columns == 0:
            ax.set_ylabel("metadata offset", fontsize=8)
        titles.append(one.label)
    for index in range(len(shown), rows * columns):
        axes[index // columns][index % columns].axis("off")
    legend_rows = -(-len(legend) // 4)
    height = 2.4 * rows + 0.9 + 0.2 * legend_rows
    fig.set_size_inches(3.6 * columns, height)
    fig.subplots_adjust(left=0.06, right=0.98, top=1 - 0.5 / height,
                        bottom=(0.6 + 0.2 * legend_rows) / height, hspace=0.45, wspace=0.25)
    if legend:
        fig.legend(list(legend.values()), list(legend), fontsize=8, loc="lower center",
                   ncol=min(4, len(legend)), frameon=False)
    fig.suptitle(title, fontsize=11, y=1 - 0.1 / height)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return titles
