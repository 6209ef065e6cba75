"""Java's ``Integer.parseInt``, which Kafka uses to read node ids from names."""

from __future__ import annotations

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
"""The int32 range."""


def parse_java_int(text: str) -> int | None:
    """``text`` as Java's Integer.parseInt reads it (an optional sign, then decimal digits
    of any script, within int32), or None where it would throw."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits.isdecimal():
        return None
    value = int(text)
    return value if INT_MIN <= value <= INT_MAX else None
