"""Cases of Kafka's DelegationTokenDataTest, against kraftsim's
:class:`metadata.image.DelegationTokenData`: its values, equality, a ``repr`` that hides
the token, and the round trip through a DelegationTokenRecord (here also through the
record's bytes, version 0).

Kafka class followed: ``DelegationTokenDataTest``
(``metadata/src/test/java/org/apache/kafka/metadata``).
Kafka's three tokens have random ids, owner ``User:alice`` (the third ``User:fred``),
requester ``User:alice``, no renewers, issued at 0, max and expiration time 100.

Ported: testValues, testEquals, testToString, testFromRecordAndToRecord.

Not ported: none.
"""

from __future__ import annotations

from kafka_format.metadata_serde import decode_metadata_record, encode_metadata_record
from metadata.image import DelegationTokenData
from metadata.schema import DelegationTokenRecord

TOKEN_IDS = ["1BQ9MGt0QmKXc5pWxFEaTQ", "xHNDwlXuQ5-6uLKxo9Dwzg", "Z0dyAzPcT3KCjbOvZqimVA"]
DATA = [DelegationTokenData(token_id, owner, "User:alice", (), 0, 100, 100)
        for token_id, owner in zip(TOKEN_IDS, ("User:alice", "User:alice", "User:fred"),
                                   strict=True)]


def test_values() -> None:
    """Kafka's tokenInformation(): the fields given."""
    assert [(d.token_id, d.owner, d.requester, d.renewers, d.issue_timestamp,
             d.max_timestamp, d.expiration_timestamp) for d in DATA] == [
        (TOKEN_IDS[0], "User:alice", "User:alice", (), 0, 100, 100),
        (TOKEN_IDS[1], "User:alice", "User:alice", (), 0, 100, 100),
        (TOKEN_IDS[2], "User:fred", "User:alice", (), 0, 100, 100)]


def test_equals() -> None:
    assert DATA[0] != DATA[1] and DATA[1] != DATA[0]
    assert DATA[0] != DATA[2] and DATA[2] != DATA[0]
    assert all(d == d for d in DATA)


def test_to_string() -> None:
    assert repr(DATA[0]) == str(DATA[0]) == "DelegationTokenData(tokenInformation=[hidden])"
    assert TOKEN_IDS[0] not in repr({TOKEN_IDS[0][:4]: DATA[0]})


def test_from_record_and_to_record() -> None:
    for data in DATA:
        record = data.to_record()
        assert record == DelegationTokenRecord(
            owner=data.owner, requester=data.requester, renewers=(), issue_timestamp=0,
            max_timestamp=100, expiration_timestamp=100, token_id=data.token_id)
        decoded = decode_metadata_record(encode_metadata_record(record, 0)).record
        assert isinstance(decoded, DelegationTokenRecord)
        again = DelegationTokenData.from_record(decoded)
        assert again == data and again.to_record() == record
