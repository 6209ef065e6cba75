"""Text layout helpers: columns like ``ls``, aligned tables, compact JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def columns(names: Sequence[str], width: int = 80) -> list[str]:
    """Names in columns filled top to bottom, as ``ls`` lays them out in a terminal."""
    if not names:
        return []
    gap = 2
    longest = max(len(n) for n in names)
    per_line = max(1, (width + gap) // (longest + gap))
    rows = -(-len(names) // per_line)
    per_line = -(-len(names) // rows)
    lines = []
    for r in range(rows):
        cells = [names[c * rows + r] for c in range(per_line) if c * rows + r < len(names)]
        lines.append((" " * gap).join(cell.ljust(longest) for cell in cells).rstrip())
    return lines


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """Left-aligned columns separated by two spaces."""
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in cells]


def plural(count: int, noun: str) -> str:
    """``1 record``, ``2 records``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def to_json(value: Any) -> str:
    """One line of JSON, keys in a stable order."""
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))
