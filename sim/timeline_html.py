"""A run's trace drawn as one self-contained HTML page (``timeline.html``).

Like the timelines of Jepsen and Maelstrom: time runs left to right, one lane
per node shows its status and raft role (leader bars carry their epoch),
brokers' lanes show each published image; above them the leader epochs,
faults and client requests, and the transactions from Begin to End or
Abort; below them the invariant checks (one after every event) and the
violation, if any. Everything is inline (CSS, SVG, a few lines of
JavaScript for a time cursor): no network, no other file. Hovering a mark
shows its details (SVG ``<title>``).

The page is built from the trace alone (:mod:`sim.trace`, with the notes a
cluster run writes), so it works for every experiment's replay; a trace
without notes (a raft-only run) still gives the lanes from the states its
events carry.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROLE_COLOURS = {
    "Leader": "#2e7d32", "Follower": "#a5d6a7", "Candidate": "#fb8c00",
    "Prospective": "#ffcc80", "Voted": "#fff176", "Unattached": "#e0e0e0",
    "Resigned": "#ce93d8", "crashed": "#e53935", "stopped": "#757575", "paused": "#64b5f6",
}
"""Fill of a node's lane by raft role, or by status when the node does not run."""

MARKER_COLOURS = {"begin": "#1565c0", "end": "#2e7d32", "abort": "#c62828"}

_LEFT, _WIDTH, _LANE, _TOP = 150, 1000, 30, 40
_STYLE = """
body{font:13px system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 4px} p.sub{margin:0 0 12px;color:#555}
svg{background:#fff;border:1px solid #ccc} .lane-label{font-size:12px}
.axis{font-size:10px;fill:#555} .small{font-size:10px}
table{border-collapse:collapse;margin-top:12px} td,th{padding:2px 8px;text-align:left;
border-bottom:1px solid #eee;font-size:12px} .legend span{display:inline-block;
margin-right:12px} .legend i{display:inline-block;width:12px;height:12px;
margin-right:4px;vertical-align:middle;border:1px solid #999}
#cursor-time{font-weight:bold}
"""
_SCRIPT = """
(function(){
  var svg=document.getElementById('timeline');
  var line=document.getElementById('cursor');
  var out=document.getElementById('cursor-time');
  var left=%d, width=%d, end=%d;
  svg.addEventListener('mousemove',function(e){
    var box=svg.getBoundingClientRect();
    var x=e.clientX-box.left;
    if(x<left||x>left+width){line.setAttribute('visibility','hidden');return;}
    line.setAttribute('x1',x);line.setAttribute('x2',x);
    line.setAttribute('visibility','visible');
    out.textContent=Math.round((x-left)/width*end)+' ms';
  });
})();
"""


@dataclass
class _Run:
    """What the page shows, gathered from the trace."""

    title: str = "run"
    controllers: list[int] = field(default_factory=list)
    brokers: list[int] = field(default_factory=list)
    end_ms: int = 0
    events: int = 0
    event_times: list[int] = field(default_factory=list)
    states: dict[int, list[tuple[int, str, int]]] = field(default_factory=dict)
    publications: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    activations: list[tuple[int, int, int, str]] = field(default_factory=list)
    faults: list[tuple[int, str]] = field(default_factory=list)
    submits: list[tuple[int, str]] = field(default_factory=list)
    markers: list[dict[str, Any]] = field(default_factory=list)
    violation: tuple[int, str] | None = None


def _nodes_of(config: dict[str, Any]) -> tuple[list[int], list[int]]:
    if "controllers" in config:
        controllers = [3000 + i for i in range(int(config["controllers"]))]
        return controllers, list(range(int(config.get("brokers", 0))))
    voters = int(config.get("voters", 0))
    return list(range(voters)), list(range(voters, voters + int(config.get("observers", 0))))


def _gather(lines: Iterable[dict[str, Any]]) -> _Run:
    run = _Run()
    noted = False
    for line in lines:
        t = int(line.get("t", 0))
        run.end_ms = max(run.end_ms, t)
        note = line.get("note")
        if note is not None:
            noted = True
            _take_note(run, note, line, t)
            continue
        ev = line.get("ev")
        if ev == "config":
            config = line.get("config", {})
            run.controllers, run.brokers = _nodes_of(config)
            run.title = f"seed {config.get('seed')}"
            continue
        if ev == "violation":
            run.violation = (t, f"{line.get('invariant')}: {line.get('message')}")
            continue
        run.events += 1
        run.event_times.append(t)
        if ev == "action":
            what = str(line.get("what", ""))
            if what.startswith("submit "):
                run.submits.append((t, what.removeprefix("submit ")))
            elif what.startswith(("fault ", "crash ", "restart ", "shutdown ", "wipe ")) \
                    and not noted:
                run.faults.append((t, what.removeprefix("fault ")))
        state = line.get("state")
        node = line.get("dst", line.get("node"))
        if state is not None and node is not None and not noted:
            _set_state(run, int(node), t, str(state.get("role")), int(state.get("epoch", 0)))
    return run


def _take_note(run: _Run, note: str, line: dict[str, Any], t: int) -> None:
    if note == "node":
        status = str(line["status"])
        shown = str(line["role"]) if status == "running" else status
        _set_state(run, int(line["node"]), t, shown, int(line["epoch"]))
    elif note == "publish":
        run.publications.setdefault(int(line["node"]), []).append(
            (t, int(line["offset"]), int(line["topics"])))
    elif note == "active":
        writes = ", ".join(line.get("writes", [])) or "nothing to abort or bootstrap"
        run.activations.append((t, int(line["node"]), int(line["epoch"]), writes))
    elif note == "fault":
        run.faults.append((t, str(line["what"])))
    elif note == "txn":
        run.markers.append({**line, "t": t})


def _set_state(run: _Run, node: int, t: int, role: str, epoch: int) -> None:
    states = run.states.setdefault(node, [])
    if states and states[-1][1:] == (role, epoch):
        return
    states.append((t, role, epoch))


class _Svg:
    """Collects SVG elements."""

    def __init__(self, end_ms: int) -> None:
        self.end_ms = max(end_ms, 1)
        self.parts: list[str] = []

    def x(self, t: int) -> float:
        return round(_LEFT + t / self.end_ms * _WIDTH, 1)

    def add(self, element: str) -> None:
        self.parts.append(element)

    def rect(self, t0: int, t1: int, y: float, h: float, fill: str, title: str,
             cls: str = "") -> None:
        x0, x1 = self.x(t0), self.x(t1)
        self.add(f'<rect class="{cls}" x="{x0}" y="{y}" width="{max(x1 - x0, 1.5)}" '
                 f'height="{h}" fill="{fill}"><title>{html.escape(title)}</title></rect>')

    def text(self, x: float, y: float, text: str, cls: str = "", fill: str = "#222") -> None:
        self.add(f'<text class="{cls}" x="{x}" y="{y}" fill="{fill}">{html.escape(text)}</text>')


def _tick_step(end_ms: int) -> int:
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000):
        if end_ms / step <= 12:
            return step
    return 100_000


def render_timeline(lines: Iterable[dict[str, Any]], title: str = "") -> str:
    """The HTML page of a trace given as parsed lines (see the module docs)."""
    run = _gather(lines)
    names = {n: f"controller {n}" for n in run.controllers}
    names.update({n: f"broker {n}" for n in run.brokers})
    others = sorted(set(run.states) - set(names))
    names.update({n: f"node {n}" for n in others})
    nodes = [*run.controllers, *run.brokers, *others]
    lanes = ["epochs", "faults & clients", "transactions", *[names[n] for n in nodes],
             "invariants"]
    height = _TOP + len(lanes) * _LANE + 20
    svg = _Svg(run.end_ms)
    y_of = {name: _TOP + i * _LANE for i, name in enumerate(lanes)}
    for i, name in enumerate(lanes):
        y = _TOP + i * _LANE
        if i % 2:
            svg.add(f'<rect x="0" y="{y}" width="{_LEFT + _WIDTH + 10}" height="{_LANE}" '
                    f'fill="#fafafa"/>')
        svg.text(6, y + _LANE / 2 + 4, name, "lane-label")
    _axis(svg, run.end_ms, height)
    _epochs(svg, run, y_of["epochs"])
    _node_lanes(svg, run, nodes, names, y_of)
    _faults_and_clients(svg, run, y_of["faults & clients"], height)
    _transactions(svg, run, y_of["transactions"])
    _invariants(svg, run, y_of["invariants"])
    svg.add(f'<line id="cursor" x1="0" x2="0" y1="{_TOP - 8}" y2="{height - 20}" '
            f'stroke="#000" stroke-width="0.5" visibility="hidden"/>')
    body = "\n".join(svg.parts)
    heading = html.escape(title or f"kraftsim timeline: {run.title}")
    verdict = (f"invariant violated at {run.violation[0]} ms: {run.violation[1]}"
               if run.violation else f"every invariant held after each of {run.events} events")
    legend = "".join(f'<span><i style="background:{c}"></i>{html.escape(k)}</span>'
                     for k, c in ROLE_COLOURS.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{heading}</title>
<style>{_STYLE}</style></head>
<body>
<h1>{heading}</h1>
<p class="sub">{run.end_ms} simulated ms, {run.events} events; {html.escape(verdict)}.
Cursor: <span id="cursor-time">-</span></p>
<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{_LEFT + _WIDTH + 130}"
 height="{height}" viewBox="0 0 {_LEFT + _WIDTH + 130} {height}">
{body}
</svg>
<div class="legend">{legend}<span>| publication: tick on a broker lane;
transaction: Begin (blue) to End (green) or Abort (red); fault: red line</span></div>
{_table(run, names)}
<script>{_SCRIPT % (_LEFT, _WIDTH, max(run.end_ms, 1))}</script>
</body></html>
"""


def _axis(svg: _Svg, end_ms: int, height: int) -> None:
    step = _tick_step(end_ms)
    for t in range(0, end_ms + 1, step):
        x = svg.x(t)
        svg.add(f'<line x1="{x}" x2="{x}" y1="{_TOP - 4}" y2="{height - 20}" stroke="#eee"/>')
        svg.text(x - 8, _TOP - 8, f"{t} ms" if t == 0 else str(t), "axis")


def _epochs(svg: _Svg, run: _Run, y: float) -> None:
    leaders: list[tuple[int, int, int, int]] = []  # (start, end, epoch, node)
    for node, states in run.states.items():
        for i, (t, role, epoch) in enumerate(states):
            if role == "Leader":
                end = states[i + 1][0] if i + 1 < len(states) else run.end_ms
                leaders.append((t, end, epoch, node))
    leaders.sort()
    for i, (t, end, epoch, node) in enumerate(leaders):
        shade = "#c8e6c9" if i % 2 == 0 else "#81c784"
        svg.rect(t, end, y + 5, _LANE - 10, shade,
                 f"epoch {epoch}: node {node} leads from {t} to {end} ms")
        svg.text(svg.x(t) + 3, y + _LANE / 2 + 4, f"epoch {epoch}: {node}", "small")


def _node_lanes(svg: _Svg, run: _Run, nodes: list[int], names: dict[int, str],
                y_of: dict[str, int]) -> None:
    for node in nodes:
        y = y_of[names[node]]
        states = run.states.get(node, [])
        for i, (t, role, epoch) in enumerate(states):
            end = states[i + 1][0] if i + 1 < len(states) else run.end_ms
            colour = ROLE_COLOURS.get(role, "#bdbdbd")
            svg.rect(t, end, y + 6, _LANE - 12, colour,
                     f"{names[node]}: {role} in epoch {epoch} from {t} to {end} ms", "state")
            if role == "Leader" and svg.x(end) - svg.x(t) > 40:
                svg.text(svg.x(t) + 3, y + _LANE / 2 + 4, f"leader e{epoch}", "small", "#fff")
        for t, offset, topics in run.publications.get(node, []):
            x = svg.x(t)
            svg.add(f'<line x1="{x}" x2="{x}" y1="{y + _LANE - 8}" y2="{y + _LANE - 1}" '
                    f'stroke="#0d47a1" stroke-width="1.5"><title>{names[node]} published the '
                    f'image at offset {offset} ({topics} topics) at {t} ms</title></line>')
    for t, node, epoch, writes in run.activations:
        if node in names:
            x, y = svg.x(t), y_of[names[node]] + 3
            svg.add(f'<path d="M{x} {y} l4 4 l-4 4 l-4 -4 z" fill="#000">'
                    f'<title>{names[node]} active in epoch {epoch} at {t} ms; first writes: '
                    f'{html.escape(writes)}</title></path>')


def _faults_and_clients(svg: _Svg, run: _Run, y: float, height: int) -> None:
    free = [0.0, 0.0]  # where each of the two label rows is free again (labels never overlap)
    for t, what in run.faults:
        x = svg.x(t)
        svg.add(f'<line x1="{x}" x2="{x}" y1="{y}" y2="{height - 20}" stroke="#d32f2f" '
                f'stroke-dasharray="4 3"><title>fault at {t} ms: {html.escape(what)}</title>'
                f'</line>')
        label = what.split(" (")[0]
        row = 0 if free[0] <= x else 1 if free[1] <= x else None
        if row is not None:
            svg.text(x + 3, y + 11 + 11 * row, label, "small", "#d32f2f")
            free[row] = x + 6 + 5.5 * len(label)
    for t, what in run.submits:
        svg.add(f'<circle cx="{svg.x(t)}" cy="{y + _LANE - 7}" r="3" fill="#6a1b9a">'
                f'<title>client submits {html.escape(what)} at {t} ms</title></circle>')


def _transactions(svg: _Svg, run: _Run, y: float) -> None:
    begun: dict[int, int] = {}
    for marker in run.markers:
        kind, t = str(marker["marker"]), int(marker["t"])
        if kind == "begin":
            begun[int(marker["offset"])] = t
            continue
        start = begun.pop(int(marker.get("begin", -1)), t)
        svg.rect(start, t, y + 8, _LANE - 16, MARKER_COLOURS[kind],
                 f"{marker.get('name')}: Begin committed at {start} ms, "
                 f"{'End' if kind == 'end' else 'Abort'} at offset {marker['offset']} "
                 f"committed at {t} ms ({marker.get('records')} records)")
    for offset, start in begun.items():
        svg.rect(start, run.end_ms, y + 8, _LANE - 16, "#90a4ae",
                 f"transaction begun at offset {offset} ({start} ms): still open")
    for marker in run.markers:
        x, kind = svg.x(int(marker["t"])), str(marker["marker"])
        label = {"begin": "Begin", "end": "End", "abort": "Abort"}[kind]
        svg.add(f'<rect x="{x - 2}" y="{y + 4}" width="4" height="{_LANE - 8}" '
                f'fill="{MARKER_COLOURS[kind]}"><title>{label} at offset {marker["offset"]} '
                f'committed at {marker["t"]} ms: {html.escape(str(marker.get("name")))}'
                f'</title></rect>')


def _invariants(svg: _Svg, run: _Run, y: float) -> None:
    buckets: dict[int, int] = {}
    for t in run.event_times:
        bucket = int(svg.x(t))
        buckets[bucket] = buckets.get(bucket, 0) + 1
    for x, count in sorted(buckets.items()):
        h = min(_LANE - 8, 3 + count)
        svg.add(f'<rect x="{x}" y="{y + _LANE - 4 - h}" width="1" height="{h}" fill="#43a047">'
                f'<title>{count} event(s), every invariant checked after each</title></rect>')
    if run.violation is not None:
        t, message = run.violation
        svg.add(f'<circle cx="{svg.x(t)}" cy="{y + _LANE / 2}" r="6" fill="#d32f2f">'
                f'<title>invariant violated at {t} ms: {html.escape(message)}</title></circle>')


def _table(run: _Run, names: dict[int, str]) -> str:
    rows: list[tuple[int, str, str]] = []
    for node, states in run.states.items():
        rows.extend((t, names.get(node, str(node)), f"leader of epoch {epoch}")
                    for t, role, epoch in states if role == "Leader")
        rows.extend((t, names.get(node, str(node)), role)
                    for t, role, _ in states if role in ("crashed", "stopped"))
    rows.extend((t, "fault", what) for t, what in run.faults)
    rows.extend((t, names.get(node, str(node)), f"active in epoch {epoch}; first writes: "
                                                f"{writes}")
                for t, node, epoch, writes in run.activations)
    rows.extend((int(m["t"]), "transaction", f"{m['marker']} at offset {m['offset']}: "
                                             f"{m.get('name')}") for m in run.markers)
    rows.extend((t, "client", f"submits {what}") for t, what in run.submits)
    if run.violation is not None:
        rows.append((run.violation[0], "INVARIANT", run.violation[1]))
    body = "".join(f"<tr><td>{t}</td><td>{html.escape(who)}</td><td>{html.escape(what)}</td>"
                   f"</tr>" for t, who, what in sorted(rows, key=lambda r: r[0]))
    return f"<table><tr><th>ms</th><th>who</th><th>what</th></tr>{body}</table>"


def write_timeline(trace_path: Path, html_path: Path, title: str = "") -> None:
    """Read a JSON-lines trace file and write its timeline page."""
    with trace_path.open("rb") as stream:
        lines = [json.loads(raw) for raw in stream if raw.strip()]
    html_path.write_text(render_timeline(lines, title), encoding="utf-8")
