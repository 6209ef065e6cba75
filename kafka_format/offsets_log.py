"""``__consumer_offsets`` records: the group coordinator's keys and values, as JSON.

A record key is an int16, which Kafka calls the record type (it is also the
version the key message is read at), then the key message; a value is an
int16 version then the value message; a null value is a tombstone. Keys are
never flexible (int16-length strings). Types and values read here:

- 0 and 1, OffsetCommitKey (group, topic, partition) and OffsetCommitValue
  versions 0-4 (leaderEpoch from 3; expireTimestamp in 1 only; flexible from
  4: compact strings and arrays, tagged fields);
- 2, GroupMetadataKey (group) and GroupMetadataValue versions 0-4
  (currentStateTimestamp from 2, a member's rebalanceTimeout from 1 and
  groupInstanceId from 3; flexible from 4). For protocolType ``consumer``,
  each member's subscription and assignment bytes are decoded as
  ConsumerProtocolSubscription (versions 0-3) and ConsumerProtocolAssignment,
  each prefixed with its own int16 version and never flexible; bytes that do
  not decode stay bytes, as Kafka keeps them;
- the consumer groups of KIP-848 (Kafka 3.7+), all values flexible version 0:
  3 ConsumerGroupMetadata (tagged metadataHash and creationTimeMs), 4
  ConsumerGroupPartitionMetadata, 5 ConsumerGroupMemberMetadata (tagged
  classicMemberMetadata), 6 ConsumerGroupTargetAssignmentMetadata, 7
  ConsumerGroupTargetAssignmentMember, 8 ConsumerGroupCurrentMemberAssignment
  and 16 ConsumerGroupRegularExpression (Kafka 4.0);
- the share groups of KIP-932, 9 to 15, with the schemas of Kafka's trunk of
  late 2024 (4.0's early access; KIP-932 still changed its values after that,
  so a later broker's share group value may not decode, which is then said).

Other types (the streams groups of Kafka 4.1, 17 and up) are reported as
unknown. A value newer than the versions listed is read as the newest one
(KIP-915: later versions only add tagged fields), as Kafka reads it.

The JSON is what Kafka's generated JsonConverters write: each field under its
schema name with the first letter lowercased, in schema order; a field absent
from the version is left out, a tagged field is written only when it is not
its default; bytes are base64, a Uuid is its base64url text. Unlike Kafka, a
key or value with bytes left after its message is an error (the schema did
not fit).
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from typing import Any

import msgspec

from kafka_format import wire
from kafka_format.errors import DecodeError, EncodeError

OFFSETS_TOPIC = "__consumer_offsets"
CONSUMER_PROTOCOL_TYPE = "consumer"
"""The protocolType whose members' subscription and assignment Kafka decodes."""


@dataclass(frozen=True)
class Struct:
    """A nested struct: its fields (read at the enclosing message's version)."""

    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Array:
    """An array of a primitive type name or of a :class:`Struct`."""

    element: str | Struct


FieldType = str | Struct | Array
"""``int8``, ``int16``, ``int32``, ``int64``, ``bool``, ``uuid``, ``string``, ``bytes``,
a :class:`Struct` or an :class:`Array`."""


@dataclass(frozen=True)
class Field:
    """One schema field: JSON name, type, versions ``since..until``, nullability, tag."""

    name: str
    type: FieldType
    since: int = 0
    until: int | None = None
    nullable: bool = False
    tag: int | None = None
    default: Any = None

    def present(self, version: int) -> bool:
        """Whether the field exists at ``version``."""
        return self.since <= version and (self.until is None or version <= self.until)


@dataclass(frozen=True)
class Message:
    """A key or value message: Kafka's name, fields, newest known version, first flexible."""

    name: str
    fields: tuple[Field, ...]
    max_version: int = 0
    flexible_from: int | None = 0


class OffsetsRecord(msgspec.Struct, frozen=True, gc=False):
    """A decoded record: the key's type and JSON, the value's version and JSON (None if null)."""

    record_type: int
    key: dict[str, Any]
    value_version: int | None
    value: dict[str, Any] | None


class UnknownRecordType(DecodeError):
    """A key whose record type this module does not read."""

    def __init__(self, record_type: int) -> None:
        super().__init__(f"unknown record type {record_type}", 0, "unsupported")
        self.record_type = record_type


# --- schemas ---------------------------------------------------------------------------------


def _key(name: str, *fields: Field) -> Message:
    return Message(name, fields, flexible_from=None)


_GROUP_ID = Field("groupId", "string")
_MEMBER_ID = Field("memberId", "string")
_TOPIC_PARTITIONS = Array(Struct((Field("topicId", "uuid"), Field("partitions", Array("int32")))))
_TOPIC_METADATA = Array(Struct((
    Field("topicId", "uuid"), Field("topicName", "string"), Field("numPartitions", "int32"),
    Field("partitionMetadata", Array(Struct((
        Field("partition", "int32"), Field("racks", Array("string")))))))))

OFFSET_COMMIT_KEY = _key("OffsetCommitKey", Field("group", "string"), Field("topic", "string"),
                         Field("partition", "int32"))
OFFSET_COMMIT_VALUE = Message("OffsetCommitValue", (
    Field("offset", "int64"),
    Field("leaderEpoch", "int32", since=3),
    Field("metadata", "string"),
    Field("commitTimestamp", "int64"),
    Field("expireTimestamp", "int64", since=1, until=1),
), max_version=4, flexible_from=4)
GROUP_METADATA_KEY = _key("GroupMetadataKey", Field("group", "string"))
GROUP_METADATA_VALUE = Message("GroupMetadataValue", (
    Field("protocolType", "string"),
    Field("generation", "int32"),
    Field("protocol", "string", nullable=True),
    Field("leader", "string", nullable=True),
    Field("currentStateTimestamp", "int64", since=2),
    Field("members", Array(Struct((
        Field("memberId", "string"),
        Field("groupInstanceId", "string", since=3, nullable=True),
        Field("clientId", "string"),
        Field("clientHost", "string"),
        Field("rebalanceTimeout", "int32", since=1),
        Field("sessionTimeout", "int32"),
        Field("subscription", "bytes"),
        Field("assignment", "bytes"),
    )))),
), max_version=4, flexible_from=4)

CONSUMER_PROTOCOL_SUBSCRIPTION = Message("ConsumerProtocolSubscription", (
    Field("topics", Array("string")),
    Field("userData", "bytes", nullable=True),
    Field("ownedPartitions", Array(Struct((
        Field("topic", "string"), Field("partitions", Array("int32"))))), since=1),
    Field("generationId", "int32", since=2),
    Field("rackId", "string", since=3, nullable=True),
), max_version=3, flexible_from=None)
CONSUMER_PROTOCOL_ASSIGNMENT = Message("ConsumerProtocolAssignment", (
    Field("assignedPartitions", Array(Struct((
        Field("topic", "string"), Field("partitions", Array("int32")))))),
    Field("userData", "bytes", nullable=True),
), max_version=3, flexible_from=None)

_CLASSIC_MEMBER = Struct((
    Field("sessionTimeoutMs", "int32"),
    Field("supportedProtocols", Array(Struct((Field("name", "string"),
                                              Field("metadata", "bytes"))))),
))

RECORD_TYPES: dict[int, tuple[Message, Message]] = {
    0: (OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: (OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: (GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    3: (_key("ConsumerGroupMetadataKey", _GROUP_ID),
        Message("ConsumerGroupMetadataValue", (
            Field("epoch", "int32"),
            Field("metadataHash", "int64", tag=0, default=0),
            Field("creationTimeMs", "int64", tag=1, default=-1)))),
    4: (_key("ConsumerGroupPartitionMetadataKey", _GROUP_ID),
        Message("ConsumerGroupPartitionMetadataValue", (Field("topics", _TOPIC_METADATA),))),
    5: (_key("ConsumerGroupMemberMetadataKey", _GROUP_ID, _MEMBER_ID),
        Message("ConsumerGroupMemberMetadataValue", (
            Field("instanceId", "string", nullable=True),
            Field("rackId", "string", nullable=True),
            Field("clientId", "string"),
            Field("clientHost", "string"),
            Field("subscribedTopicNames", Array("string")),
            Field("subscribedTopicRegex", "string", nullable=True),
            Field("rebalanceTimeoutMs", "int32"),
            Field("serverAssignor", "string", nullable=True),
            Field("classicMemberMetadata", _CLASSIC_MEMBER, nullable=True, tag=0)))),
    6: (_key("ConsumerGroupTargetAssignmentMetadataKey", _GROUP_ID),
        Message("ConsumerGroupTargetAssignmentMetadataValue",
                (Field("assignmentEpoch", "int32"),))),
    7: (_key("ConsumerGroupTargetAssignmentMemberKey", _GROUP_ID, _MEMBER_ID),
        Message("ConsumerGroupTargetAssignmentMemberValue",
                (Field("topicPartitions", _TOPIC_PARTITIONS),))),
    8: (_key("ConsumerGroupCurrentMemberAssignmentKey", _GROUP_ID, _MEMBER_ID),
        Message("ConsumerGroupCurrentMemberAssignmentValue", (
            Field("memberEpoch", "int32"),
            Field("previousMemberEpoch", "int32"),
            Field("state", "int8"),
            Field("assignedPartitions", _TOPIC_PARTITIONS),
            Field("partitionsPendingRevocation", _TOPIC_PARTITIONS)))),
    9: (_key("ShareGroupPartitionMetadataKey", _GROUP_ID),
        Message("ShareGroupPartitionMetadataValue", (Field("topics", _TOPIC_METADATA),))),
    10: (_key("ShareGroupMemberMetadataKey", _GROUP_ID, _MEMBER_ID),
         Message("ShareGroupMemberMetadataValue", (
             Field("rackId", "string", nullable=True),
             Field("clientId", "string"),
             Field("clientHost", "string"),
             Field("subscribedTopicNames", Array("string"))))),
    11: (_key("ShareGroupMetadataKey", _GROUP_ID),
         Message("ShareGroupMetadataValue", (Field("epoch", "int32"),))),
    12: (_key("ShareGroupTargetAssignmentMetadataKey", _GROUP_ID),
         Message("ShareGroupTargetAssignmentMetadataValue", (Field("assignmentEpoch", "int32"),))),
    13: (_key("ShareGroupTargetAssignmentMemberKey", _GROUP_ID, _MEMBER_ID),
         Message("ShareGroupTargetAssignmentMemberValue",
                 (Field("topicPartitions", _TOPIC_PARTITIONS),))),
    14: (_key("ShareGroupCurrentMemberAssignmentKey", _GROUP_ID, _MEMBER_ID),
         Message("ShareGroupCurrentMemberAssignmentValue", (
             Field("memberEpoch", "int32"),
             Field("previousMemberEpoch", "int32"),
             Field("state", "int8"),
             Field("assignedPartitions", _TOPIC_PARTITIONS)))),
    15: (_key("ShareGroupStatePartitionMetadataKey", _GROUP_ID),
         Message("ShareGroupStatePartitionMetadataValue", (
             Field("initializedTopics", Array(Struct((
                 Field("topicId", "uuid"), Field("topicName", "string"),
                 Field("partitions", Array("int32")))))),
             Field("deletingTopics", Array(Struct((
                 Field("topicId", "uuid"), Field("topicName", "string")))))))),
    16: (_key("ConsumerGroupRegularExpressionKey", _GROUP_ID,
              Field("regularExpression", "string")),
         Message("ConsumerGroupRegularExpressionValue", (
             Field("topics", Array("string")),
             Field("version", "int64"),
             Field("timestamp", "int64")))),
}
"""Each record type Kafka's group coordinator writes: its key and value messages."""


# --- the reader ------------------------------------------------------------------------------

_FIXED = {"int8": wire.read_int8, "int16": wire.read_int16, "int32": wire.read_int32,
          "int64": wire.read_int64, "bool": wire.read_bool, "uuid": wire.read_uuid}


class _Reader:
    """Reads one message at one version from ``data[:end]``."""

    def __init__(self, data: bytes, end: int, version: int, flexible: bool) -> None:
        self.data = data
        self.end = end
        self.version = version
        self.flexible = flexible

    def length(self, pos: int, kind: str) -> tuple[int, int]:
        """A string's, bytes' or array's length (-1: null)."""
        if self.flexible:
            encoded, pos = wire.read_uvarint(self.data, pos, self.end)
            return encoded - 1, pos
        if kind == "string":
            return wire.read_int16(self.data, pos, self.end)
        return wire.read_int32(self.data, pos, self.end)

    def value(self, field: Field, kind: FieldType, pos: int) -> tuple[Any, int]:
        """One value of ``kind`` (the field's type or its array's element type)."""
        reader = _FIXED.get(kind) if isinstance(kind, str) else None
        if reader is not None:
            return reader(self.data, pos, self.end)
        if isinstance(kind, Struct):
            return self.struct(kind.fields, pos)
        what = "array" if isinstance(kind, Array) else kind
        start = pos
        length, pos = self.length(pos, what)
        if length < 0:
            if not field.nullable or kind is not field.type:
                raise DecodeError(f"{field.name} at byte {start} is null but may not be", start)
            return None, pos
        if isinstance(kind, Array):
            if length > self.end - pos:
                raise DecodeError(f"{field.name} at byte {start} declares {length} entries but "
                                  f"only {self.end - pos} bytes remain", start)
            items = []
            for _ in range(length):
                item, pos = self.value(field, kind.element, pos)
                items.append(item)
            return items, pos
        if kind == "string" and length > 0x7FFF:
            raise DecodeError(f"{field.name} at byte {start} is a string of {length} bytes",
                              start)
        if length > self.end - pos:
            raise wire.truncated(field.name, pos, length, self.end)
        raw = self.data[pos:pos + length]
        if kind == "string":
            return raw.decode("utf-8", "replace"), pos + length
        return base64.b64encode(raw).decode("ascii"), pos + length

    def struct(self, fields: tuple[Field, ...], pos: int) -> tuple[dict[str, Any], int]:
        """The fields of a struct at this version, then (flexible) its tagged fields."""
        out: dict[str, Any] = {}
        tagged: dict[int, Field] = {}
        for field in fields:
            if not field.present(self.version):
                continue
            if field.tag is not None:
                tagged[field.tag] = field
                continue
            out[field.name], pos = self.value(field, field.type, pos)
        if not self.flexible:
            return out, pos
        found: dict[str, Any] = {}
        count, pos = wire.read_uvarint(self.data, pos, self.end)
        for _ in range(count):
            tag, size, pos = wire.read_tagged_header(self.data, pos, self.end)
            known = tagged.get(tag)
            if known is not None:
                found[known.name] = self.tagged(known, pos, pos + size)
            pos += size
        if not tagged:
            return out, pos
        ordered: dict[str, Any] = {}
        for field in fields:  # Kafka writes the fields in schema order
            if field.tag is not None:
                if field.name in found and found[field.name] != field.default:
                    ordered[field.name] = found[field.name]
            elif field.name in out:
                ordered[field.name] = out[field.name]
        return ordered, pos

    def tagged(self, field: Field, pos: int, end: int) -> Any:
        """A tagged field's payload; a nullable struct starts with 0 (null) or 1."""
        inner = _Reader(self.data, end, self.version, True)
        if isinstance(field.type, Struct) and field.nullable:
            present, pos = wire.read_uvarint(self.data, pos, end)
            if present == 0:
                return None
        value, pos = inner.value(field, field.type, pos)
        if pos != end:
            raise DecodeError(f"tagged field {field.name} leaves {end - pos} of its bytes", pos)
        return value


def read_message(message: Message, data: bytes, pos: int, version: int,
                 *, whole: bool = True) -> dict[str, Any]:
    """``message`` at ``version`` from ``data[pos:]`` as Kafka's JSON names it.

    With ``whole``, bytes left after the message are an error. Raises DecodeError.
    """
    flexible = message.flexible_from is not None and version >= message.flexible_from
    reader = _Reader(data, len(data), version, flexible)
    try:
        out, pos = reader.struct(message.fields, pos)
    except DecodeError as exc:
        raise DecodeError(f"{message.name} version {version}: {exc.message}", exc.position,
                          exc.kind) from None
    if whole and pos != len(data):
        raise DecodeError(f"{message.name} version {version} ends at byte {pos}, "
                          f"{len(data) - pos} bytes before the end", pos)
    return out


def _version(data: bytes, what: str) -> int:
    if len(data) < 2:
        raise DecodeError(f"{what} of {len(data)} bytes has no version", 0, "truncated")
    version: int = wire.INT16.unpack_from(data, 0)[0]
    return version


def decode_key(data: bytes) -> tuple[int, dict[str, Any]]:
    """A record key: its type and its fields; raises DecodeError (UnknownRecordType)."""
    record_type = _version(data, "key")
    messages = RECORD_TYPES.get(record_type)
    if messages is None:
        raise UnknownRecordType(record_type)
    return record_type, read_message(messages[0], data, 2, record_type)


def decode_value(record_type: int, data: bytes) -> tuple[int, dict[str, Any]]:
    """A record value of a known ``record_type``: its version and fields; raises DecodeError."""
    message = RECORD_TYPES[record_type][1]
    version = _version(data, "value")
    if version < 0:
        raise DecodeError(f"{message.name} version {version}", 0, "unsupported")
    out = read_message(message, data, 2, version)
    if message is GROUP_METADATA_VALUE and out.get("protocolType") == CONSUMER_PROTOCOL_TYPE:
        for member in out.get("members") or ():
            member["subscription"] = _embedded(CONSUMER_PROTOCOL_SUBSCRIPTION,
                                               member["subscription"])
            member["assignment"] = _embedded(CONSUMER_PROTOCOL_ASSIGNMENT, member["assignment"])
    return version, out


def _embedded(message: Message, text: str) -> Any:
    """A consumer member's subscription or assignment (base64) decoded, or kept as it is."""
    raw = base64.b64decode(text)
    try:
        version = _version(raw, message.name)
        if version < 0:
            return text
        return read_message(message, raw, 2, version, whole=False)
    except DecodeError:
        return text


def decode_record(key: bytes, value: bytes | None) -> OffsetsRecord:
    """A whole record; raises DecodeError (UnknownRecordType for an unknown key type)."""
    record_type, key_json = decode_key(key)
    if value is None:
        return OffsetsRecord(record_type, key_json, None, None)
    version, value_json = decode_value(record_type, value)
    return OffsetsRecord(record_type, key_json, version, value_json)


def record_type_name(record_type: int) -> str:
    """Kafka's name of a record type's key message (``?`` when unknown)."""
    messages = RECORD_TYPES.get(record_type)
    return "?" if messages is None else messages[0].name


def _short_string(value: str) -> bytes:
    data = value.encode("utf-8")
    if len(data) > 0x7FFF:
        raise EncodeError(f"string of {len(data)} bytes is too long for an int16 length")
    return wire.INT16.pack(len(data)) + data


OFFSET_COMMIT_KEY_TYPE = 1
"""The key type Kafka's group coordinator writes an offset commit under."""
OFFSET_COMMIT_VALUE_VERSION = 3
"""The value version Kafka writes for an offset commit without a topic id (leaderEpoch on)."""


def encode_offset_commit(group: str, topic: str, partition: int, offset: int,
                         leader_epoch: int, metadata: str, commit_timestamp: int
                         ) -> tuple[bytes, bytes]:
    """An offset commit's record key (type 1) and value (version 3), as Kafka writes them;
    raises EncodeError."""
    try:
        key = (wire.INT16.pack(OFFSET_COMMIT_KEY_TYPE) + _short_string(group)
               + _short_string(topic) + struct.pack(">i", partition))
        value = (wire.INT16.pack(OFFSET_COMMIT_VALUE_VERSION) + struct.pack(">qi", offset,
                                                                             leader_epoch)
                 + _short_string(metadata) + struct.pack(">q", commit_timestamp))
    except struct.error as exc:
        raise EncodeError(f"offset commit: {exc}") from None
    return key, value
