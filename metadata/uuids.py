"""Kafka Uuids in Kafka's text form, made deterministically from a seeded Random.

Kafka prints a Uuid as the URL-safe base64 of its 16 bytes without padding
(``Uuid.toString``). Ids are generated from a ``random.Random`` handed in by
the simulator, never from the global generator, so a seed fixes every id.
"""

from __future__ import annotations

import base64
import random
import re

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
"""Kafka's ``Uuid.ZERO_UUID``."""

METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
"""Kafka's ``Uuid.METADATA_TOPIC_ID`` (the id of ``__cluster_metadata``)."""

MIGRATING_DIRECTORY = ZERO_UUID
"""Kafka's ``DirectoryId.MIGRATING``: a replica placed before directories were tracked
(the directory of a broker that registered none)."""
UNASSIGNED_DIRECTORY = METADATA_TOPIC_ID
"""Kafka's ``DirectoryId.UNASSIGNED``: a replica waiting for its broker to pick one."""
LOST_DIRECTORY = "AAAAAAAAAAAAAAAAAAAAAg"
"""Kafka's ``DirectoryId.LOST``: a replica in a directory that went offline."""


def uuid_to_str(raw: bytes) -> str:
    """Kafka's text form of a 16-byte Uuid."""
    if len(raw) != 16:
        raise ValueError(f"a Uuid has 16 bytes, not {len(raw)}")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


_UUID_TEXT = re.compile(r"[A-Za-z0-9_-]{22}(?:==)?")
"""What Kafka's ``Uuid.fromString`` decodes to 16 bytes: 22 characters of the URL-safe base64
alphabet, then at most the ``==`` padding (Java's decoder refuses any other character, a
partial padding and anything after it)."""


def uuid_to_bytes(text: str) -> bytes:
    """The 16 bytes of a Uuid given in Kafka's text form, read as Kafka's ``Uuid.fromString``
    reads it; raises ValueError."""
    if not isinstance(text, str) or _UUID_TEXT.fullmatch(text) is None:
        raise ValueError(f"not a Kafka Uuid: {text!r}")
    return base64.urlsafe_b64decode(text[:22] + "==")


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
