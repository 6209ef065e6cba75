"""Control record keys and values, following Kafka's ``ControlRecordTest`` (raft) and
``ControlRecordTypeTest`` (clients).

A control record's key is (key version int16, type int16). kraftsim decodes types 2-6
to the Structs of :mod:`raft.batch` (:mod:`kafka_format.control_records`), the
transaction markers ABORT (0) and COMMIT (1) of a data partition with
:mod:`kafka_format.data_log`, and keeps any other type as an ``UnknownControlRecord``
(Kafka's ``ControlRecordType.UNKNOWN``, which a reader skips).

Ported: every one of Kafka's eight types round-trips through its key, UNKNOWN's -1
included (testRoundTrip); an unknown type id parses as unknown (testParseUnknownType);
a newer key version is read as version 0, bytes after the type ignored
(testParseUnknownVersion); each of the five raft control messages encodes under its own
type, and an object that is not one is refused (testCtr); the set of types is Kafka's
eight (testControlRecordTypeValues).

Where kraftsim differs by construction: a control record's type is its Struct's class,
so Kafka's mismatched pairs of testCtr (an ABORT holding a SnapshotFooterRecord, a
LEADER_CHANGE holding a SnapshotHeaderRecord) cannot be built at all.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest

from kafka_format.control_records import (
    CONTROL_SCHEMAS,
    KRAFT_VERSION,
    KRAFT_VOTERS,
    LEADER_CHANGE,
    SNAPSHOT_FOOTER,
    SNAPSHOT_HEADER,
    UnknownControlRecord,
    control_type_id,
    decode_control_record,
    encode_control_key,
    encode_control_value,
)
from kafka_format.data_log import ABORT, COMMIT, CONTROL_TYPE_NAMES, DataRecord, decode_marker
from kafka_format.errors import DecodeError, EncodeError
from metadata.schema import TopicRecord
from raft.batch import (
    KRaftVersionRecord,
    LeaderChangeMessage,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    VotersRecord,
)

UNKNOWN = -1
"""Kafka's ControlRecordType.UNKNOWN."""
MESSAGES: dict[int, Any] = {
    LEADER_CHANGE: LeaderChangeMessage(leader_id=1, voters=(1, 2), granting_voters=(1,)),
    SNAPSHOT_HEADER: SnapshotHeaderRecord(last_contained_log_timestamp=0),
    SNAPSHOT_FOOTER: SnapshotFooterRecord(),
    KRAFT_VERSION: KRaftVersionRecord(kraft_version=1),
    KRAFT_VOTERS: VotersRecord(voters=()),
}


def decode(key: bytes, value: bytes = b"") -> Any:
    """The record a control record with this key and value decodes to."""
    buf = key + value
    return decode_control_record(buf, 0, len(key), len(key), len(buf)).record


def test_parse_unknown_type() -> None:
    """ControlRecordTypeTest.testParseUnknownType: type 337 is kept as unknown."""
    assert decode(struct.pack(">hh", 0, 337), b"\x01\x02") == UnknownControlRecord(
        337, b"\x01\x02")


def test_parse_unknown_version() -> None:
    """ControlRecordTypeTest.testParseUnknownVersion: key version 5 with a field after the
    type still gives the type (ABORT), for a data partition's marker too."""
    key = struct.pack(">hhi", 5, ABORT, 23432)
    assert decode(key) == UnknownControlRecord(ABORT, b"")  # no raft record of type 0
    marker = decode_marker(DataRecord(key, struct.pack(">hi", 0, 7)))
    assert marker is not None and marker.control_type == ABORT
    assert decode(struct.pack(">hhi", 5, SNAPSHOT_FOOTER, 23432),
                  encode_control_value(SnapshotFooterRecord())) == SnapshotFooterRecord()


@pytest.mark.parametrize("kind", [ABORT, COMMIT, LEADER_CHANGE, SNAPSHOT_HEADER,
                                  SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS, UNKNOWN])
def test_round_trip(kind: int) -> None:
    """ControlRecordTypeTest.testRoundTrip: each type's key parses back to that type."""
    key = struct.pack(">hh", 0, kind)
    message = MESSAGES.get(kind)
    if message is None:
        assert control_type_id(decode(key)) == kind
        return
    assert encode_control_key(message) == key
    assert decode(key, encode_control_value(message)) == message


def test_a_negative_key_version_is_refused() -> None:
    """Beyond Kafka's cases: as Kafka's parser, a key version below 0 is invalid, and so is
    a key shorter than its 4 bytes."""
    with pytest.raises(DecodeError, match="version -1"):
        decode(struct.pack(">hh", -1, SNAPSHOT_HEADER))
    with pytest.raises(DecodeError, match="not 4"):
        decode(b"\x00\x00\x03")


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_ctr_each_message_has_its_type(kind: int) -> None:
    """ControlRecordTest.testCtr, the valid constructions: each raft control message is
    written under its own type."""
    assert control_type_id(MESSAGES[kind]) == kind


@pytest.mark.parametrize("message", [TopicRecord("foo", "3B134hrsQgKtz8Sp6QBIfg"), object()])
def test_ctr_an_object_that_is_no_control_message_is_refused(message: object) -> None:
    """ControlRecordTest.testCtr, the last invalid construction: no control type for an
    arbitrary message."""
    with pytest.raises(EncodeError, match="is not a control record"):
        encode_control_key(message)


def test_control_record_type_values() -> None:
    """ControlRecordTest.testControlRecordTypeValues: Kafka's eight types, UNKNOWN
    included, are the ones kraftsim models (the raft five, the two markers)."""
    modelled = {*CONTROL_SCHEMAS, *CONTROL_TYPE_NAMES, UNKNOWN}
    assert modelled == {ABORT, COMMIT, LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER,
                        KRAFT_VERSION, KRAFT_VOTERS, UNKNOWN}
    assert len(modelled) == 8
