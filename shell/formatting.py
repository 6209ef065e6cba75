"""Text layout helpers: columns like ``ls``, aligned tables, compact JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def columns(names: Sequence[str], width: int | None = 80) -> list[str]:
    """Names in columns filled top to bottom, as Kafka's metadata shell lays out ``ls``.

    ``width`` None (output that is not a terminal's) gives one name per line, as Kafka's
    shell prints outside its interactive mode.

    Kafka's ``LsCommandHandler``: each column is as wide as its longest name plus two
    spaces; of at most ``width // 4`` columns, the most that fill their last column and
    fit in ``width`` are taken (one column when none do). A line ends after its last
    name: kraftsim drops the padding Kafka leaves after the last name of a short line.
    """
    if not names:
        return []
    if width is None:
        return list(names)
    count = len(names)
    lengths = [len(name) for name in names]
    per_column, widths = count, [max(lengths) + 2]
    for column_count in range(width // 4, 1, -1):
        rows = -(-count // column_count)
        if (column_count - 1) * rows >= count:  # the last column would be empty
            continue
        candidate = [max(lengths[start:start + rows]) + 2 for start in range(0, count, rows)]
        if sum(candidate) <= width:
            per_column, widths = rows, candidate
            break
    lines = []
    for row in range(per_column):
        cells = [names[index].ljust(widths[column])
                 for column, index in enumerate(range(row, count, per_column))]
        lines.append("".join(cells).rstrip())
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
