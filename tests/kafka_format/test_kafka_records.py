"""Metadata and control record serde: every modelled type at every Kafka version."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format import (
    DecodeError,
    EncodeError,
    decode_log,
    decode_metadata_record,
    encode_decoded_batch,
    encode_metadata_record,
    record_version,
)
from kafka_format.batch_format import plain_prefix, plain_prefixes, to_decoded_batch
from kafka_format.control_records import (
    UnknownControlRecord,
    decode_control_record,
    encode_control_key,
    encode_control_value,
)
from kafka_format.metadata_serde import supported_versions
from metadata import schema as rec
from metadata import versions as mv
from raft import Batch

from .samples import TOPIC_A, sample_control_records, sample_record

KAFKA_VERSIONS = {0: 3, 3: 2, 5: 2, 17: 2}
"""Highest version of the multi-version types (Kafka's validVersions, October 2024)."""

ALL_TYPE_VERSIONS = [
    (api_key, version)
    for api_key in sorted(rec.RECORD_TYPES)
    for version in range(KAFKA_VERSIONS.get(api_key, 0) + 1)
]


def test_every_modelled_type_has_a_schema_with_kafkas_versions() -> None:
    for api_key in rec.RECORD_TYPES:
        assert supported_versions(api_key) == range(KAFKA_VERSIONS.get(api_key, 0) + 1)
    assert list(supported_versions(200)) == []  # an apiKey Kafka does not define: no version


@pytest.mark.parametrize(("api_key", "version"), ALL_TYPE_VERSIONS)
def test_round_trip_every_type_and_version(api_key: int, version: int) -> None:
    record = sample_record(api_key, version)
    data = encode_metadata_record(record, version)
    assert data[:3] == bytes([1, api_key, version])  # frame version, apiKey, version
    decoded = decode_metadata_record(data)
    assert decoded.record == record
    assert decoded.version == version
    assert encode_metadata_record(decoded.record, decoded.version) == data


def test_known_bytes_of_begin_transaction() -> None:
    # frame 1, apiKey 23, version 0, one tagged field: tag 0, 18 bytes, compact string.
    data = bytes.fromhex("01170001001212") + b"Bootstrap records"
    decoded = decode_metadata_record(data)
    assert decoded.record == rec.BeginTransactionRecord(name="Bootstrap records")
    assert encode_metadata_record(decoded.record, 0) == data


def test_tagged_defaults_are_not_written() -> None:
    assert encode_metadata_record(rec.BeginTransactionRecord(), 0) == bytes([1, 23, 0, 0])
    change = rec.PartitionChangeRecord(partition_id=1, topic_id=TOPIC_A)
    assert encode_metadata_record(change, 0)[-1] == 0  # no tagged fields at all


def test_unknown_tagged_fields_are_kept_and_rewritten() -> None:
    base = encode_metadata_record(rec.TopicRecord(name="t", topic_id=TOPIC_A), 0)
    with_tags = base[:-1] + bytes([2, 5, 2, 0xAB, 0xCD, 9, 0])
    decoded = decode_metadata_record(with_tags)
    assert decoded.record == rec.TopicRecord(name="t", topic_id=TOPIC_A)
    assert decoded.unknown_tagged_fields == ((5, b"\xab\xcd"), (9, b""))
    assert encode_metadata_record(decoded.record, 0, decoded.unknown_tagged_fields) == with_tags


@pytest.mark.parametrize(
    "data",
    [
        bytes([1, 99, 0, 1, 2, 3]),  # unknown apiKey
        bytes([1, 3, 7, 0xFF]),  # PartitionRecord at a version Kafka did not define (yet)
        bytes([1, 26, 1, 0]),  # RemoveDelegationTokenRecord at a version Kafka has not
    ],
)
def test_unknown_types_and_versions_round_trip_as_unknown_record(data: bytes) -> None:
    decoded = decode_metadata_record(data)
    assert isinstance(decoded.record, rec.UnknownRecord)
    assert (decoded.record.api_key, decoded.record.version) == (data[1], data[2])
    assert decoded.record.payload == data[3:]
    assert encode_metadata_record(decoded.record, decoded.version) == data


def test_a_version_cannot_hold_a_later_field() -> None:
    record = sample_record(3, 2)  # has directories and ELR
    with pytest.raises(EncodeError, match="directories"):
        encode_metadata_record(record, 0)
    with pytest.raises(EncodeError):
        encode_metadata_record(rec.NoOpRecord(), 1)


@pytest.mark.parametrize(
    "data",
    [
        bytes([2, 20, 0, 0]),  # frame version 2
        bytes([1, 2, 0, 0xFF, 0xFF, 0xFF, 0x7F]),  # TopicRecord name of 268M bytes
        bytes([1, 3, 0, 0, 0, 0, 1]),  # PartitionRecord cut short
        bytes([1, 20, 0, 0, 0]),  # NoOpRecord with a trailing byte
        bytes([1, 20, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),  # varint that never ends
        bytes([1, 20, 0, 1, 3, 0x7F]),  # tagged field longer than the value
    ],
)
def test_bad_values_raise_decode_error(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_metadata_record(data)


def test_record_versions_follow_metadata_version() -> None:
    broker = sample_record(0, 0)
    assert [record_version(broker, level) for level in (1, 7, 8, 16, 17, 22)] == [0, 1, 2, 2, 3, 3]
    partition = sample_record(3, 0)
    assert [record_version(partition, level) for level in (14, 17, 22, 23)] == [0, 1, 1, 2]
    change = sample_record(5, 0)
    assert record_version(change, mv.ELR) == 2
    assert record_version(rec.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=2,
                                                             fenced=1), 22) == 0  # fmt: skip
    assert record_version(sample_record(17, 1), 22) == 1
    assert record_version(sample_record(17, 2), 22) == 2
    assert record_version(rec.NoOpRecord(), 22) == 0
    assert record_version(sample_record(27, 0), mv.LEVELS["3.7-IV0"]) == 0
    with pytest.raises(EncodeError):
        record_version(sample_record(27, 0), mv.LEVELS["3.6-IV2"])
    unknown = rec.UnknownRecord(api_key=99, version=4, payload=b"")
    assert record_version(unknown, 1) == 4


@pytest.mark.parametrize("record", sample_control_records(), ids=lambda r: type(r).__name__)
def test_control_records_round_trip(record: object) -> None:
    key = encode_control_key(record)
    value = encode_control_value(record)
    buf = key + value
    decoded = decode_control_record(buf, 0, len(key), len(key), len(buf))
    assert decoded.record == record
    assert decoded.key_version == 0
    assert encode_control_value(decoded.record) == value


def test_leader_change_known_bytes() -> None:
    # version 0, leader 1, voters [{1}], granting [{1}]: as Kafka wrote it in bootstrap-txn.
    value = bytes.fromhex("0000" "00000001" "02" "00000001" "00" "02" "00000001" "00" "00")
    buf = bytes.fromhex("00000002") + value
    decoded = decode_control_record(buf, 0, 4, 4, len(buf))
    assert decoded.record.leader_id == 1
    assert decoded.record.voters == (1,) and decoded.record.granting_voters == (1,)
    assert encode_control_value(decoded.record) == value


def test_a_control_key_shorter_than_four_bytes_is_refused() -> None:
    buf = bytes(5) + bytes.fromhex("000000") + bytes.fromhex("0000" "00000001" "00" "00" "00")
    with pytest.raises(DecodeError, match="control record key at byte 5 has 3 bytes, not 4"):
        decode_control_record(buf, 5, 8, 8, len(buf))


def test_unknown_control_type_is_kept_as_bytes() -> None:
    buf = bytes.fromhex("0000" "0001") + b"\x00\x00\x00\x00\x00\x05"
    decoded = decode_control_record(buf, 0, 4, 4, len(buf))
    assert decoded.record == UnknownControlRecord(type=1, value=b"\x00\x00\x00\x00\x00\x05")
    assert encode_control_key(decoded.record) == buf[:4]
    assert encode_control_value(decoded.record) == buf[4:]


_int32 = st.integers(-(2**31), 2**31 - 1)
_ids = st.lists(_int32, max_size=6).map(tuple)
_maybe_ids = st.none() | _ids


@settings(max_examples=150, deadline=None)
@given(
    version=st.integers(0, 2),
    partition_id=_int32,
    leader=_int32,
    isr=_maybe_ids,
    replicas=_maybe_ids,
    elr=_maybe_ids,
    recovery=st.integers(-128, 127),
)
def test_partition_change_round_trips(
    version: int,
    partition_id: int,
    leader: int,
    isr: tuple[int, ...] | None,
    replicas: tuple[int, ...] | None,
    elr: tuple[int, ...] | None,
    recovery: int,
) -> None:
    record = rec.PartitionChangeRecord(
        partition_id=partition_id, topic_id=TOPIC_A, isr=isr, leader=leader, replicas=replicas,
        leader_recovery_state=recovery, eligible_leader_replicas=elr if version >= 2 else None,
    )  # fmt: skip
    data = encode_metadata_record(record, version)
    decoded = decode_metadata_record(data)
    assert decoded.record == record and decoded.version == version


def test_record_headers_round_trip_with_kafkas_bytes_null_values_included() -> None:
    """A record header is a varint key length, the key, then a varint value length (-1 for
    a null value) and the value (Kafka's DefaultRecord); metadata records carry none, but a
    batch that has some is read and written back exactly."""
    decoded = to_decoded_batch(Batch(0, 1, (rec.NoOpRecord(), rec.TopicRecord("foo", TOPIC_A))),
                               20)
    headers = ((b"k", b"v"), (b"null", None), (b"", b""))
    with_headers = msgspec.structs.replace(decoded, facts=(
        msgspec.structs.replace(decoded.facts[0], headers=headers), decoded.facts[1]))
    data = encode_decoded_batch(with_headers)
    assert b"\x06\x02k\x02v\x08null\x01\x00\x00" in data  # 3 headers (zigzag 6), then each
    result = decode_log(data)
    assert result.error is None
    assert [facts.headers for facts in result.batches[0].facts] == [headers, ()]
    assert encode_decoded_batch(result.batches[0]) == data


def test_a_batch_of_more_records_than_the_cached_prefixes_round_trips() -> None:
    """Record prefixes (attributes, deltas) are cached for the first 1,024 records of a
    batch and the cache grows on demand: a batch of 3,000 records is written and read back."""
    records = tuple(rec.PartitionRecord(partition_id=p, topic_id=TOPIC_A, replicas=(1, 2),
                                        isr=(1, 2), leader=1, leader_epoch=0,
                                        partition_epoch=0) for p in range(3_000))
    data = encode_decoded_batch(to_decoded_batch(Batch(0, 1, records), 20))
    result = decode_log(data)
    assert result.error is None and result.batches[0].batch.records == records
    # Kafka's bytes before a value: attributes 0, timestamp delta 0, the offset delta
    # (zig-zag varint), a null key (-1)
    assert (plain_prefix(0), plain_prefix(63), plain_prefix(64), plain_prefix(1_500)) == \
        (b"\x00\x00\x00\x01", b"\x00\x00\x7e\x01", b"\x00\x00\x80\x01\x01",
         b"\x00\x00\xb8\x17\x01")
    known = plain_prefixes(3_000)  # the cache: at least these, more after a longer batch
    assert known[:3_000] == tuple(map(plain_prefix, range(3_000))) and len(known) >= 3_000
    assert data.count(plain_prefix(2_999)) == 1


@pytest.mark.parametrize("count", [126, 127, 128, 300])
def test_int32_arrays_at_the_one_byte_length_edge(count: int) -> None:
    """A compact array's length is count + 1 as an unsigned varint: one byte up to 126
    elements, two from 127 (Kafka's ByteUtils.writeUnsignedVarint)."""
    replicas = tuple(range(count))
    record = rec.PartitionRecord(partition_id=0, topic_id=TOPIC_A, replicas=replicas,
                                 isr=replicas, leader=0, leader_epoch=0, partition_epoch=0)
    length = bytes([count + 1]) if count + 1 < 0x80 else \
        bytes([(count + 1) & 0x7F | 0x80, (count + 1) >> 7])
    array = length + b"".join(n.to_bytes(4, "big") for n in replicas)
    tags = ((9, b"\x01"),)  # an unknown tag: written by the general codec, not the fast one
    for data in (encode_metadata_record(record, 0), encode_metadata_record(record, 0, tags)):
        assert decode_metadata_record(data).record == record
        assert array in data
