"""``__consumer_offsets`` keys and values, from bytes built by hand after Kafka's schemas.

Each test lays the bytes out field by field as the schema orders them (int16
lengths before flexible versions, compact lengths and tagged fields after) and
checks the JSON that Kafka's offsets decoder would print.
"""

from __future__ import annotations

import base64
import uuid

import pytest

from kafka_format.errors import DecodeError, EncodeError
from kafka_format.offsets_log import (
    RECORD_TYPES,
    UnknownRecordType,
    decode_key,
    decode_record,
    decode_value,
    encode_offset_commit,
    record_type_name,
)
from tests.kafka_format.kafka_bytes import b32, cb, cs, i8, i16, i32, i64, s16, uvarint

NO_TAGS = b"\x00"
TOPIC_ID = uuid.UUID("5f4f3a1e-0d1c-4b5a-9e8f-7a6b5c4d3e2f").bytes
TOPIC_ID_TEXT = base64.urlsafe_b64encode(TOPIC_ID).rstrip(b"=").decode()


def offset_commit_key(group: str = "g", topic: str = "orders", partition: int = 3) -> bytes:
    return i16(1) + s16(group) + s16(topic) + i32(partition)


def test_offset_commit_key_v1_and_value_v3() -> None:
    value = i16(3) + i64(42) + i32(5) + s16("meta") + i64(1_700_000_000_000)
    record = decode_record(offset_commit_key(), value)
    assert record.record_type == 1
    assert record.key == {"group": "g", "topic": "orders", "partition": 3}
    assert record.value_version == 3
    assert record.value == {"offset": 42, "leaderEpoch": 5, "metadata": "meta",
                            "commitTimestamp": 1_700_000_000_000}


def test_offset_commit_value_v4_is_flexible_and_skips_unknown_tags() -> None:
    tags = uvarint(1) + uvarint(7) + uvarint(2) + b"\xab\xcd"  # a tag from a later Kafka
    value = i16(4) + i64(-1) + i32(-1) + cs("") + i64(9) + tags
    assert decode_value(1, value) == (4, {"offset": -1, "leaderEpoch": -1, "metadata": "",
                                          "commitTimestamp": 9})


@pytest.mark.parametrize(("version", "body", "expected"), [
    (0, i64(1) + s16("m") + i64(2), {"offset": 1, "metadata": "m", "commitTimestamp": 2}),
    (1, i64(1) + s16("m") + i64(2) + i64(3),
     {"offset": 1, "metadata": "m", "commitTimestamp": 2, "expireTimestamp": 3}),
    (2, i64(1) + s16("m") + i64(2), {"offset": 1, "metadata": "m", "commitTimestamp": 2}),
])
def test_offset_commit_value_old_versions_hold_the_fields_of_their_version(
        version: int, body: bytes, expected: dict[str, int | str]) -> None:
    assert decode_value(0, i16(version) + body) == (version, expected)


def test_offset_commit_key_type_0_reads_like_type_1() -> None:
    key = i16(0) + s16("old") + s16("t") + i32(0)
    assert decode_key(key) == (0, {"group": "old", "topic": "t", "partition": 0})


def subscription_v3() -> bytes:
    return (i16(3) + i32(1) + s16("orders") + b32(None)
            + i32(1) + s16("orders") + i32(2) + i32(0) + i32(1)  # ownedPartitions
            + i32(4) + s16("rack-a"))


def assignment_v0() -> bytes:
    return i16(0) + i32(1) + s16("orders") + i32(2) + i32(0) + i32(1) + b32(b"\x01\x02")


SUBSCRIPTION_JSON = {"topics": ["orders"], "userData": None,
                     "ownedPartitions": [{"topic": "orders", "partitions": [0, 1]}],
                     "generationId": 4, "rackId": "rack-a"}
ASSIGNMENT_JSON = {"assignedPartitions": [{"topic": "orders", "partitions": [0, 1]}],
                   "userData": "AQI="}


def test_group_metadata_v3_decodes_a_consumer_members_subscription_and_assignment() -> None:
    member = (s16("m-1") + s16("static-1") + s16("client") + s16("/10.0.0.1") + i32(300_000)
              + i32(45_000) + b32(subscription_v3()) + b32(assignment_v0()))
    value = (i16(3) + s16("consumer") + i32(7) + s16("range") + s16("m-1") + i64(123)
             + i32(1) + member)
    record = decode_record(i16(2) + s16("g"), value)
    assert record.record_type == 2 and record.key == {"group": "g"}
    assert record.value == {
        "protocolType": "consumer", "generation": 7, "protocol": "range", "leader": "m-1",
        "currentStateTimestamp": 123,
        "members": [{"memberId": "m-1", "groupInstanceId": "static-1", "clientId": "client",
                     "clientHost": "/10.0.0.1", "rebalanceTimeout": 300_000,
                     "sessionTimeout": 45_000, "subscription": SUBSCRIPTION_JSON,
                     "assignment": ASSIGNMENT_JSON}]}


def test_a_version_2_subscription_has_a_generation_but_no_rack() -> None:
    """ConsumerProtocolSubscription v2 adds generationId; rackId only comes with v3."""
    subscription = (i16(2) + i32(1) + s16("orders") + b32(b"u")
                    + i32(1) + s16("orders") + i32(1) + i32(0) + i32(9))
    member = (s16("m-1") + s16(None) + s16("client") + s16("/10.0.0.1") + i32(300_000)
              + i32(45_000) + b32(subscription) + b32(assignment_v0()))
    value = (i16(3) + s16("consumer") + i32(9) + s16("range") + s16("m-1") + i64(123)
             + i32(1) + member)
    _, data = decode_value(2, value)
    assert data["members"][0]["subscription"] == {
        "topics": ["orders"], "userData": "dQ==",
        "ownedPartitions": [{"topic": "orders", "partitions": [0]}], "generationId": 9}


def test_group_metadata_v4_is_flexible() -> None:
    member = (cs("m-1") + cs(None) + cs("client") + cs("/10.0.0.1") + i32(-1) + i32(10_000)
              + cb(subscription_v3()) + cb(assignment_v0()) + NO_TAGS)
    value = (i16(4) + cs("consumer") + i32(1) + cs(None) + cs(None) + i64(-1)
             + uvarint(2) + member + NO_TAGS)
    version, data = decode_value(2, value)
    assert version == 4
    assert data["protocol"] is None and data["leader"] is None
    assert data["members"] == [{
        "memberId": "m-1", "groupInstanceId": None, "clientId": "client",
        "clientHost": "/10.0.0.1", "rebalanceTimeout": -1, "sessionTimeout": 10_000,
        "subscription": SUBSCRIPTION_JSON, "assignment": ASSIGNMENT_JSON}]


def test_member_bytes_that_do_not_decode_stay_base64_as_kafka_keeps_them() -> None:
    # A version 1 subscription without its ownedPartitions (some clients write it so).
    short = i16(1) + i32(1) + s16("orders") + b32(None)
    member = (s16("m") + s16("c") + s16("h") + i32(1) + b32(short) + b32(b""))
    value = i16(0) + s16("consumer") + i32(1) + s16("range") + s16("m") + i32(1) + member
    member_json = decode_value(2, value)[1]["members"][0]
    assert member_json == {"memberId": "m", "clientId": "c", "clientHost": "h",
                           "sessionTimeout": 1,
                           "subscription": base64.b64encode(short).decode(),
                           "assignment": ""}


def test_other_protocol_types_keep_their_member_bytes() -> None:
    metadata = subscription_v3()
    member = (s16("w") + s16("c") + s16("h") + i32(1) + i32(2) + b32(metadata) + b32(b"\x00"))
    value = i16(1) + s16("connect") + i32(1) + s16("sessioned") + s16("w") + i32(1) + member
    member_json = decode_value(2, value)[1]["members"][0]
    assert member_json["subscription"] == base64.b64encode(metadata).decode()
    assert member_json["assignment"] == "AA=="


def test_kip_848_member_metadata_with_its_tagged_classic_metadata() -> None:
    key = i16(5) + s16("g") + s16("member-1")
    classic = (uvarint(1)  # present (a nullable struct in a tagged field)
               + i32(45_000) + uvarint(2) + cs("range") + cb(b"\x00\x03") + NO_TAGS + NO_TAGS)
    value = (i16(0) + cs(None) + cs("rack-a") + cs("client") + cs("/10.0.0.2")
             + uvarint(3) + cs("a") + cs("b") + cs(None) + i32(60_000) + cs("uniform")
             + uvarint(1) + uvarint(0) + uvarint(len(classic)) + classic)
    record = decode_record(key, value)
    assert record_type_name(record.record_type) == "ConsumerGroupMemberMetadataKey"
    assert record.key == {"groupId": "g", "memberId": "member-1"}
    assert record.value == {
        "instanceId": None, "rackId": "rack-a", "clientId": "client", "clientHost": "/10.0.0.2",
        "subscribedTopicNames": ["a", "b"], "subscribedTopicRegex": None,
        "rebalanceTimeoutMs": 60_000, "serverAssignor": "uniform",
        "classicMemberMetadata": {"sessionTimeoutMs": 45_000, "supportedProtocols": [
            {"name": "range", "metadata": "AAM="}]}}


def test_kip_848_member_metadata_without_classic_metadata_leaves_it_out() -> None:
    value = (i16(0) + cs(None) + cs(None) + cs("c") + cs("h") + uvarint(1) + cs(None)
             + i32(1) + cs(None) + NO_TAGS)
    assert "classicMemberMetadata" not in decode_value(5, value)[1]


def test_kip_848_current_assignment_topic_ids_print_as_kafka_uuids() -> None:
    partitions = uvarint(2) + TOPIC_ID + uvarint(3) + i32(0) + i32(2) + NO_TAGS
    value = i16(0) + i32(5) + i32(4) + i8(0) + partitions + uvarint(1) + NO_TAGS
    record = decode_record(i16(8) + s16("g") + s16("m"), value)
    assert record.value == {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
                            "assignedPartitions": [{"topicId": TOPIC_ID_TEXT,
                                                    "partitions": [0, 2]}],
                            "partitionsPendingRevocation": []}


@pytest.mark.parametrize(("tags", "expected"), [
    (NO_TAGS, {"epoch": 3}),
    (uvarint(1) + uvarint(0) + uvarint(8) + i64(77), {"epoch": 3, "metadataHash": 77}),
    (uvarint(1) + uvarint(0) + uvarint(8) + i64(0), {"epoch": 3}),  # the default: not written
    (uvarint(1) + uvarint(1) + uvarint(8) + i64(0), {"epoch": 3, "creationTimeMs": 0}),
    (uvarint(1) + uvarint(1) + uvarint(8) + i64(-1), {"epoch": 3}),  # creationTimeMs default
])
def test_kip_848_group_metadata_tagged_fields_print_only_when_not_default(
        tags: bytes, expected: dict[str, int]) -> None:
    assert decode_value(3, i16(0) + i32(3) + tags) == (0, expected)


def test_every_known_type_has_a_key_and_a_value() -> None:
    assert sorted(RECORD_TYPES) == list(range(17))
    for record_type, (key, value) in RECORD_TYPES.items():
        assert key.name.endswith("Key") and value.name.endswith("Value"), record_type


def test_tombstone_has_no_value() -> None:
    record = decode_record(i16(2) + s16("gone"), None)
    assert (record.key, record.value_version, record.value) == ({"group": "gone"}, None, None)


def test_unknown_type_is_reported_with_its_number() -> None:
    with pytest.raises(UnknownRecordType) as caught:
        decode_record(i16(17) + s16("streams-group"), b"\x00\x00")
    assert caught.value.record_type == 17
    assert caught.value.kind == "unsupported"


@pytest.mark.parametrize(("key", "value", "words"), [
    (offset_commit_key()[:-2], None, ["OffsetCommitKey version 1", "int32", "truncated"]),
    (b"\x00", None, ["key of 1 bytes has no version", "truncated"]),
    (offset_commit_key(), i16(3) + i64(1) + i32(0) + s16("meta")[:3],
     ["OffsetCommitValue version 3", "metadata", "truncated"]),
    (offset_commit_key(), i16(3) + i64(1) + i32(0) + s16("") + i64(2) + b"\x00",
     ["OffsetCommitValue version 3 ends at byte 24, 1 bytes before the end", "corrupt"]),
    (i16(2) + s16("g"), i16(3) + s16(None), ["protocolType", "null but may not be"]),
    (offset_commit_key(), i16(-1) + i64(0), ["OffsetCommitValue version -1", "unsupported"]),
])
def test_bytes_that_do_not_fit_the_schema_say_where_and_why(
        key: bytes, value: bytes | None, words: list[str]) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_record(key, value)
    text = f"{caught.value.message} {caught.value.kind}"
    for word in words:
        assert word in text


def test_a_huge_declared_array_is_refused_before_reading() -> None:
    value = i16(3) + s16("consumer") + i32(1) + s16(None) + s16(None) + i64(0) + i32(1 << 30)
    with pytest.raises(DecodeError, match="members at byte 28 declares 1073741824 entries"):
        decode_value(2, value)


def test_a_subscription_with_bytes_after_its_fields_still_decodes() -> None:
    """Kafka's ConsumerProtocol reads a member's subscription up to its last field and
    ignores what follows (a newer client's additions)."""
    member = (s16("m-1") + s16(None) + s16("client") + s16("/10.0.0.1") + i32(300_000)
              + i32(45_000) + b32(subscription_v3() + b"\x00\x07") + b32(assignment_v0()))
    value = (i16(3) + s16("consumer") + i32(7) + s16("range") + s16("m-1") + i64(123)
             + i32(1) + member)
    record = decode_record(i16(2) + s16("g"), value)
    assert record.value is not None
    assert record.value["members"][0]["subscription"] == SUBSCRIPTION_JSON


def test_a_key_too_short_for_its_type_is_truncated() -> None:
    with pytest.raises(DecodeError) as caught:
        decode_record(b"\x00", None)
    assert (caught.value.kind, caught.value.position) == ("truncated", 0)


def test_an_offset_commit_with_a_name_too_long_for_kafka_is_refused() -> None:
    encode_offset_commit("g" * 0x7FFF, "t", 0, 1, -1, "", 0)  # the longest Kafka writes
    with pytest.raises(EncodeError):
        encode_offset_commit("g" * 0x8000, "t", 0, 1, -1, "", 0)


def test_a_key_with_its_type_only_is_cut_after_the_type() -> None:
    with pytest.raises(DecodeError) as caught:
        decode_record(i16(2), None)
    assert (caught.value.kind, caught.value.position) == ("truncated", 2)
