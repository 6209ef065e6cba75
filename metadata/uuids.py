"""Kafka Uuids in Kafka's text form, made deterministically from a seeded Random.

Kafka prints a Uuid as the URL-safe base64 of its 16 bytes without padding
(``Uuid.toString``). Ids are generated from a ``random.Random`` handed in by
the simulator, never from the global generator, so a seed fixes every id.
"""

from __future__ import annotations

import base64
import random

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
"""Kafka's ``Uuid.ZERO_UUID``."""

METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
"""Kafka's ``Uuid.METADATA_TOPIC_ID`` (the id of ``__cluster_metadata``)."""


def uuid_to_str(raw: bytes) -> str:
    """Kafka's text form of a 16-byte Uuid."""
    if len(raw) != 16:
        raise ValueError(f"a Uuid has 16 bytes, not {len(raw)}")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def uuid_to_bytes(text: str) -> bytes:
    """The 16 bytes of a Uuid given in Kafka's text form; raises ValueError."""
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except ValueError as exc:
        raise ValueError(f"not a Kafka Uuid: {text!r}") from exc
    if len(raw) != 16:
        raise ValueError(f"not a Kafka Uuid: {text!r}")
    return raw


def uuid_order(text: str) -> tuple[int, int]:
    """The sort key of a Uuid in Kafka's order (``Uuid.compareTo``): its high, then its
    low 64 bits, each as a signed long. Raises ValueError for a malformed Uuid."""
    raw = uuid_to_bytes(text)
    return (int.from_bytes(raw[:8], "big", signed=True),
            int.from_bytes(raw[8:], "big", signed=True))


def sorted_uuids(texts: tuple[str, ...]) -> tuple[str, ...]:
    """``texts`` in Kafka's Uuid order (see :func:`uuid_order`); as given when one of them
    is not a Uuid (only hand-made records hold such names)."""
    if len(texts) < 2:
        return texts
    try:
        return tuple(sorted(texts, key=uuid_order))
    except ValueError:
        return texts


def random_uuid(rng: random.Random) -> str:
    """A fresh Uuid, skipping the reserved ones and those starting with '-' (as Kafka)."""
    while True:
        text = uuid_to_str(rng.getrandbits(128).to_bytes(16, "big"))
        if text not in (ZERO_UUID, METADATA_TOPIC_ID) and not text.startswith("-"):
            return text
