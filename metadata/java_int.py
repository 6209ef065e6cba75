"""Java's ``Integer.parseInt`` and ``Long.parseLong``, which Kafka uses to read numbers from
names and text files."""

from __future__ import annotations

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
"""The int32 range."""
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
"""The int64 range."""


def _parse_java_number(text: str, low: int, high: int) -> int | None:
    digits = text[1:] if text[:1] in ("+", "-") else text
    # Java reads one UTF-16 unit at a time: a digit outside the BMP is two non-digits
    if not digits.isdecimal() or any(ord(char) > 0xFFFF for char in digits):
        return None
    value = int(text)
    return value if low <= value <= high else None


def parse_java_int(text: str) -> int | None:
    """``text`` as Java's Integer.parseInt reads it (an optional sign, then decimal digits
    of any script, within int32; no whitespace, no underscores), or None where it would
    throw."""
    return _parse_java_number(text, INT_MIN, INT_MAX)


def parse_java_long(text: str) -> int | None:
    """``text`` as Java's Long.parseLong reads it (as :func:`parse_java_int`, within
    int64), or None where it would throw."""
    return _parse_java_number(text, LONG_MIN, LONG_MAX)
