"""Raft control records: the key (version, type) and the value of each type.

A record of a control batch has a 4-byte key, int16 key version (0) and int16
type (Kafka's ``ControlRecordType``), and a value in the flexible encoding of
that type's schema (``clients/src/main/resources/common/message/``). Kafka
always reads a control value with schema version 0 and carries the message's
own version in its ``Version`` field, so this codec does the same.

Types 2-6 decode to the Structs of :mod:`raft.batch`; any other type (0/1 are
a producer's transaction markers, never in a metadata log) decodes to
:class:`UnknownControlRecord`.
"""

from __future__ import annotations

import struct
from typing import Any

import msgspec

from kafka_format.errors import DecodeError, EncodeError
from kafka_format.message_codec import (
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UUID,
    ArrayOf,
    Field,
    MessageCodec,
    MessageSchema,
    StructOf,
    as_attributes,
    compile_codec,
)
from kafka_format.wire import TaggedField
from raft.batch import (
    KRaftVersionRecord,
    LeaderChangeMessage,
    SnapshotFooterRecord,
    SnapshotHeaderRecord,
    Voter,
    VoterEndpoint,
    VotersRecord,
)

CONTROL_KEY = struct.Struct(">hh")
"""The control record key: version, type."""
CONTROL_KEY_VERSION = 0
"""The key version Kafka writes."""

LEADER_CHANGE = 2
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
KRAFT_VERSION = 5
KRAFT_VOTERS = 6
KRAFT_CONTROL_TYPE_NAMES = {LEADER_CHANGE: "LEADER_CHANGE", SNAPSHOT_HEADER: "SNAPSHOT_HEADER",
                            SNAPSHOT_FOOTER: "SNAPSHOT_FOOTER", KRAFT_VERSION: "KRAFT_VERSION",
                            KRAFT_VOTERS: "KRAFT_VOTERS"}
"""Kafka's ControlRecordType enum names of the KRaft control records."""


class UnknownControlRecord(msgspec.Struct, frozen=True, gc=False):
    """A control record of a type this codec does not model, kept as bytes."""

    type: int
    value: bytes


def _voter_id_only(values: dict[str, Any]) -> int:
    return int(values["voter_id"])


def _voter_id_fields(voter_id: int) -> Any:
    return as_attributes({"voter_id": voter_id})


def _kraft_range(values: dict[str, Any]) -> tuple[int, int]:
    return values["min_supported_version"], values["max_supported_version"]


def _kraft_range_fields(pair: tuple[int, int]) -> Any:
    return as_attributes({"min_supported_version": pair[0], "max_supported_version": pair[1]})


def _voter(values: dict[str, Any]) -> Voter:
    low, high = values.pop("kraft_version_feature")
    return Voter(**values, min_kraft_version=low, max_kraft_version=high)


def _voter_fields(voter: Voter) -> Any:
    return as_attributes({
        "voter_id": voter.voter_id,
        "voter_directory_id": voter.voter_directory_id,
        "endpoints": voter.endpoints,
        "kraft_version_feature": (voter.min_kraft_version, voter.max_kraft_version),
    })


def _voter_endpoint(values: dict[str, Any]) -> VoterEndpoint:
    return VoterEndpoint(**values)


# LeaderChangeMessage's Voter struct has only VoterId at version 0; kraftsim's
# Struct keeps the voters as plain ids.
_LEADER_CHANGE_VOTER = StructOf(
    "Voter", (Field("voter_id", INT32),), _voter_id_only, _voter_id_fields
)
_KRAFT_VERSION_FEATURE = StructOf(
    "KRaftVersionFeature",
    (Field("min_supported_version", INT16), Field("max_supported_version", INT16)),
    _kraft_range,
    _kraft_range_fields,
)
_VOTER_ENDPOINT = StructOf(
    "Endpoint",
    (Field("name", STRING), Field("host", STRING), Field("port", UINT16)),
    _voter_endpoint,
)
_VOTER = StructOf(
    "Voter",
    (
        Field("voter_id", INT32),
        Field("voter_directory_id", UUID),
        Field("endpoints", ArrayOf(_VOTER_ENDPOINT)),
        Field("kraft_version_feature", _KRAFT_VERSION_FEATURE),
    ),
    _voter,
    _voter_fields,
)

CONTROL_SCHEMAS: dict[int, MessageSchema] = {
    LEADER_CHANGE: MessageSchema(LeaderChangeMessage, "LeaderChangeMessage", 0, (
        Field("version", INT16),
        Field("leader_id", INT32),
        Field("voters", ArrayOf(_LEADER_CHANGE_VOTER)),
        Field("granting_voters", ArrayOf(_LEADER_CHANGE_VOTER)),
    )),
    SNAPSHOT_HEADER: MessageSchema(SnapshotHeaderRecord, "SnapshotHeaderRecord", 0, (
        Field("version", INT16),
        Field("last_contained_log_timestamp", INT64),
    )),
    SNAPSHOT_FOOTER: MessageSchema(SnapshotFooterRecord, "SnapshotFooterRecord", 0, (
        Field("version", INT16),
    )),
    KRAFT_VERSION: MessageSchema(KRaftVersionRecord, "KRaftVersionRecord", 0, (
        Field("version", INT16),
        Field("kraft_version", INT16),
    )),
    KRAFT_VOTERS: MessageSchema(VotersRecord, "VotersRecord", 0, (
        Field("version", INT16),
        Field("voters", ArrayOf(_VOTER)),
    )),
}  # fmt: skip
"""The schema of each modelled control record type, by type id."""

_CODECS: dict[int, tuple[type[Any], MessageCodec]] = {
    kind: (schema.cls, compile_codec(schema, 0)) for kind, schema in CONTROL_SCHEMAS.items()
}
CONTROL_TYPE_IDS: dict[type[Any], int] = {cls: kind for kind, (cls, _) in _CODECS.items()}
"""The type id of each control record Struct."""


class DecodedControlRecord(msgspec.Struct, frozen=True, gc=False):
    """A control record with its key version and any tags this codec does not model."""

    record: Any
    key_version: int = CONTROL_KEY_VERSION
    unknown_tagged_fields: tuple[TaggedField, ...] = ()


def decode_control_record(
    buf: bytes, key_pos: int, key_end: int, value_pos: int, value_end: int
) -> DecodedControlRecord:
    """Decode a control record from its key and value ranges in ``buf``."""
    if key_end - key_pos < CONTROL_KEY.size:
        raise DecodeError(
            f"control record key at byte {key_pos} has {key_end - key_pos} bytes, not 4", key_pos
        )
    key_version, kind = CONTROL_KEY.unpack_from(buf, key_pos)
    if key_version < 0:  # Kafka reads a newer key version as version 0, a negative one never
        raise DecodeError(f"control record key at byte {key_pos} has version {key_version}",
                          key_pos)
    entry = _CODECS.get(kind)
    if entry is None:
        unknown_record = UnknownControlRecord(kind, buf[value_pos:value_end])
        return DecodedControlRecord(unknown_record, key_version)
    cls, codec = entry
    values, unknown, after = codec.decode(buf, value_pos, value_end)
    if after != value_end:
        raise DecodeError(
            f"{codec.name} ends at byte {after} but its value runs to byte {value_end}", after
        )
    return DecodedControlRecord(cls(**values), key_version, unknown)


def control_type_id(record: Any) -> int:
    """The control record type id of a control record Struct."""
    if isinstance(record, UnknownControlRecord):
        return record.type
    kind = CONTROL_TYPE_IDS.get(type(record))
    if kind is None:
        raise EncodeError(f"{type(record).__name__} is not a control record")
    return kind


def encode_control_key(record: Any, key_version: int = CONTROL_KEY_VERSION) -> bytes:
    """The 4-byte key of a control record."""
    try:
        return CONTROL_KEY.pack(key_version, control_type_id(record))
    except struct.error as exc:
        raise EncodeError(f"control record key: {exc}") from None


def encode_control_value(record: Any, unknown_tagged_fields: tuple[TaggedField, ...] = ()) -> bytes:
    """The value bytes of a control record."""
    if isinstance(record, UnknownControlRecord):
        return record.value
    kind = control_type_id(record)
    out = bytearray()
    try:
        _CODECS[kind][1].encode(out, record, unknown_tagged_fields)
    except (struct.error, TypeError, AttributeError, OverflowError) as exc:
        raise EncodeError(f"{type(record).__name__}: {exc}") from None
    return bytes(out)


def _voter_json(voter: Voter) -> dict[str, Any]:
    return {
        "voterId": voter.voter_id,
        "voterDirectoryId": voter.voter_directory_id,
        "endpoints": [{"name": e.name, "host": e.host, "port": e.port} for e in voter.endpoints],
        "kRaftVersionFeature": {"minSupportedVersion": voter.min_kraft_version,
                                "maxSupportedVersion": voter.max_kraft_version},
    }


def control_record_json(record: Any) -> dict[str, Any]:
    """A modelled control record as Kafka's generated JSON converters write it at version 0
    (what kafka-dump-log prints): the schema's fields in its order, each named by its
    schema name with the first letter lowercased (``kRaftVersion``), nested structs as
    objects (a LeaderChange voter is ``{"voterId": n}``)."""
    if isinstance(record, LeaderChangeMessage):
        return {"version": record.version, "leaderId": record.leader_id,
                "voters": [{"voterId": v} for v in record.voters],
                "grantingVoters": [{"voterId": v} for v in record.granting_voters]}
    if isinstance(record, SnapshotHeaderRecord):
        return {"version": record.version,
                "lastContainedLogTimestamp": record.last_contained_log_timestamp}
    if isinstance(record, SnapshotFooterRecord):
        return {"version": record.version}
    if isinstance(record, KRaftVersionRecord):
        return {"version": record.version, "kRaftVersion": record.kraft_version}
    if isinstance(record, VotersRecord):
        return {"version": record.version, "voters": [_voter_json(v) for v in record.voters]}
    raise EncodeError(f"{type(record).__name__} is not a modelled control record")


def control_record_name(record: Any) -> str:
    """Kafka's name of a control record type, e.g. ``LeaderChange``."""
    if isinstance(record, UnknownControlRecord):
        return f"UnknownControlRecord(type={record.type})"
    return {
        LEADER_CHANGE: "LeaderChange",
        SNAPSHOT_HEADER: "SnapshotHeader",
        SNAPSHOT_FOOTER: "SnapshotFooter",
        KRAFT_VERSION: "KRaftVersion",
        KRAFT_VOTERS: "KRaftVoters",
    }.get(control_type_id(record), "Unknown")

