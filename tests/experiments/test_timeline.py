"""``--replay`` writes timeline.html: self-contained, and it renders in headless Chromium.

Chromium is Debian's ``chromium`` package (``make test`` installs it when
missing). Without it the browser tests skip with the reason shown, except
under CI=true, where they fail: the suite must not lose them silently.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from experiments.sweep import run_command
from sim.raft_sim import RaftSimConfig, run_raft_sim
from sim.timeline_html import render_timeline

REPLAY = ["scenario=crash", "window=inside", "mode=transactional"]


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is not None:
        return path
    message = ("chromium is not installed: the timeline.html browser test needs Debian's "
               "chromium package (apt-get install chromium; make test installs it)")
    pytest.fail(message)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("replay")
    out, err = io.StringIO(), io.StringIO()
    code = run_command("failover", seed=1, params=REPLAY, replay=0,
                       trace=str(folder / "run.jsonl"), stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["valid"] == "true"  # JSON only on stdout
    assert f"timeline: {folder / 'timeline.html'}" in err.getvalue()
    return folder / "timeline.html"


def test_the_page_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert re.findall(r"https?://[^\s\"'<>]+", text) == ["http://www.w3.org/2000/svg"]
    assert not re.search(r"\b(src|href)\s*=", text)
    assert "<svg" in text and "<style>" in text and "<script>" in text
    for lane in ("epochs", "faults &amp; clients", "transactions", "controller 3000",
                 "controller 3002", "broker 0", "broker 1", "invariants"):
        assert f">{lane}</text>" in text
    assert "Abort at offset" in text and "published the image" in text
    assert re.search(r"crash:300\d@\d+", text)  # the leader the run's boot elected


def test_a_raft_only_trace_gives_lanes_too(tmp_path: Path) -> None:
    trace = tmp_path / "raft.jsonl"
    with trace.open("wb") as stream:
        run_raft_sim(RaftSimConfig(seed=3, voters=3, duration_ms=3000), stream)
    lines = [json.loads(line) for line in trace.read_bytes().splitlines()]
    text = render_timeline(lines)
    assert ">node 0</text>" in text or ">controller 0</text>" in text
    assert "leader e" in text or "Leader in epoch" in text


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * bpp
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, [b"".join(r[i:i + 3] for i in range(0, stride, bpp)) for r in rows]


def _browser(page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=1", "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1300,700", *args,
         page.as_uri()],
        capture_output=True, text=True, timeout=120, cwd=page.parent)


def test_chromium_opens_the_page_without_a_console_error(page: Path) -> None:
    done = _browser(page, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], "\n".join(console)
    assert 'id="timeline"' in done.stdout and ">broker 1</text>" in done.stdout


def test_a_screenshot_shows_the_lanes(page: Path) -> None:
    shot = page.with_name("timeline.png")
    done = _browser(page, f"--screenshot={shot}")
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, rows = _png_pixels(shot.read_bytes())
    assert (width, height) == (1300, 700)

    def count(rgb: str) -> int:
        colour = bytes.fromhex(rgb)
        return sum(row[i:i + 3] == colour for row in rows for i in range(0, len(row), 3))

    assert count("2e7d32") > 2000  # leader bars
    assert count("a5d6a7") > 20_000  # follower lanes
    assert count("e53935") > 2000  # the crashed controller
    assert count("c62828") > 500  # the aborted transaction
