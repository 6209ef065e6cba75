"""Cases of Kafka's ScramCredentialDataTest, against kraftsim's
:class:`metadata.image.ScramCredentialData`: its values, equality by content, a ``repr``
that hides every field, and the round trip through a UserScramCredentialRecord (here
also through the record's bytes, version 0, as Kafka's ApiMessageAndVersion holds it).

Kafka class followed: ``ScramCredentialDataTest``
(``metadata/src/test/java/org/apache/kafka/metadata``).
Kafka's three credentials have 1024 random bytes each of salt, stored key and server key
(a seeded generator here) and 4096, 8192 and 10000 iterations.

Ported: testValues, testEquals, testToString, testFromRecordAndToRecord,
testEqualsAndHashCode, testNotEqualsDifferentContent, testEqualsSameInstance.

Not ported: none.
"""

from __future__ import annotations

import random

from kafka_format.metadata_serde import decode_metadata_record, encode_metadata_record
from metadata.image import ScramCredentialData
from metadata.schema import UserScramCredentialRecord

SCRAM_SHA_256 = 1
"""Kafka's ScramMechanism.SCRAM_SHA_256 type."""
_random = random.Random(853)
DATA = [ScramCredentialData(_random.randbytes(1024), _random.randbytes(1024),
                            _random.randbytes(1024), iterations)
        for iterations in (4096, 8192, 10000)]


def test_values() -> None:
    assert [d.iterations for d in DATA] == [4096, 8192, 10000]


def test_equals() -> None:
    assert DATA[0] != DATA[1] and DATA[1] != DATA[0]
    assert DATA[0] != DATA[2] and DATA[2] != DATA[0]
    assert all(d == d for d in DATA)


def test_to_string() -> None:
    """Nothing of the credential shows, not even its iterations: in a log line, an error
    message or a container's repr."""
    expected = ("ScramCredentialData(salt=[hidden], storedKey=[hidden], serverKey=[hidden], "
                "iterations=[hidden])")
    assert repr(DATA[0]) == str(DATA[0]) == expected
    assert repr([DATA[0]]) == f"[{expected}]"
    assert DATA[0].salt.hex()[:16] not in repr({"alice": DATA[0]})


def _round_trip(data: ScramCredentialData) -> None:
    record = data.to_record("alice", SCRAM_SHA_256)
    assert record == UserScramCredentialRecord(
        name="alice", mechanism=SCRAM_SHA_256, salt=data.salt, stored_key=data.stored_key,
        server_key=data.server_key, iterations=data.iterations)
    decoded = decode_metadata_record(encode_metadata_record(record, 0)).record
    assert isinstance(decoded, UserScramCredentialRecord)
    again = ScramCredentialData.from_record(decoded)
    assert again == data
    assert again.to_record("alice", SCRAM_SHA_256) == record


def test_from_record_and_to_record() -> None:
    for data in DATA:
        _round_trip(data)


def test_equals_and_hash_code() -> None:
    """Equal content (different objects) is equal, with one hash."""
    a = ScramCredentialData(bytes([1, 2, 3]), bytes([4, 5, 6]), bytes([7, 8, 9]), 1000)
    b = ScramCredentialData(bytes([1, 2, 3]), bytes([4, 5, 6]), bytes([7, 8, 9]), 1000)
    assert a == b and hash(a) == hash(b)


def test_not_equals_different_content() -> None:
    a = ScramCredentialData(bytes([1, 2, 3]), bytes([4, 5, 6]), bytes([7, 8, 9]), 1000)
    b = ScramCredentialData(bytes([9, 8, 7]), bytes([6, 5, 4]), bytes([3, 2, 1]), 2000)
    assert a != b and hash(a) != hash(b)


def test_equals_same_instance() -> None:
    a = ScramCredentialData(bytes([1, 2, 3]), bytes([4, 5, 6]), bytes([7, 8, 9]), 1000)
    assert a == a and hash(a) == hash(a)
