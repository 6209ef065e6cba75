"""The metadata record frame in the cases of Kafka's ``MetadataRecordSerdeTest``
(``metadata/src/test/java/org/apache/kafka/metadata``).

A value is frame version (unsigned varint, 1), apiKey and record version (unsigned
varints that Kafka narrows to int16), then the record. Kafka refuses an apiKey it does not
know; kraftsim keeps such a value as an :class:`UnknownRecord` that writes back the same
bytes (its docs: a file of a newer Kafka still reads), so that case is checked as such.
"""

from __future__ import annotations

import msgspec
import pytest

from kafka_format import (
    DecodeError,
    EncodeError,
    decode_log,
    decode_metadata_record,
    encode_log,
    encode_metadata_record,
)
from kafka_format.batch_format import crc32c, encode_batch
from kafka_format.metadata_serde import supported_versions
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import (
    BrokerRegistrationChangeRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnknownRecord,
)
from metadata.versions import LEVELS
from raft import Batch


def _refused(data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as caught:
        decode_metadata_record(data)
    return caught.value


def test_topic_record_round_trips_at_every_version() -> None:
    """testSerde: the encoded size is the whole value, and it reads back equal."""
    record = TopicRecord(name="foo", topic_id="AAAAAAAAAAAAAAAAAAAAAQ")
    for version in supported_versions(TopicRecord.API_KEY):
        data = encode_metadata_record(record, version)
        assert data[:3] == bytes([1, TopicRecord.API_KEY, version])
        decoded = decode_metadata_record(data)
        assert (decoded.record, decoded.version) == (record, version)


@pytest.mark.parametrize("frame", [0, 2, 15])
def test_an_unknown_frame_version_is_refused_at_its_byte(frame: int) -> None:
    """testDeserializeWithUnhandledFrameVersion (15), and frame 0 (KRaft's 2.8 preview)."""
    error = _refused(bytes([frame, 2, 0, 0]))
    assert error.position == 0 and f"frame version {frame}" in error.message


def test_a_multi_byte_unknown_frame_version_is_named_at_its_first_byte() -> None:
    error = _refused(bytes.fromhex("8f 01 02 00"))  # 143
    assert error.position == 0 and "143" in error.message


@pytest.mark.parametrize(("data", "position"), [
    (b"\x80" * 6, 0),  # testParsingMalformedFrameVersionVarint
    (b"\x01" + b"\x80" * 6, 1),  # testParsingMalformedMessageTypeVarint
    (b"\x01\x08" + b"\x80" * 5, 2),  # testParsingMalformedMessageVersionVarint
])
def test_a_varint_of_the_frame_that_runs_past_five_bytes(data: bytes, position: int) -> None:
    assert _refused(data).position == position


def test_a_record_version_above_int16_is_refused() -> None:
    """testParsingVersionTooLarge: version 0x0fffffff."""
    error = _refused(bytes.fromhex("01 08 ffffff7f 80"))
    assert error.position == 2 and "does not fit an int16" in error.message


def test_an_api_key_above_int16_is_refused() -> None:
    """The same narrowing for the apiKey (32768)."""
    assert _refused(bytes.fromhex("01 808002 00")).position == 1


def test_an_api_key_kafka_does_not_know_is_kept_as_an_unknown_record() -> None:
    """testParsingUnsupportedApiKey: Kafka refuses apiKey 16383; kraftsim keeps it whole."""
    data = bytes.fromhex("01 ff7f 00 80")
    decoded = decode_metadata_record(data)
    assert decoded.record == UnknownRecord(api_key=16383, version=0, payload=b"\x80")
    assert encode_metadata_record(decoded.record, decoded.version) == data


def test_a_malformed_record_body_is_refused() -> None:
    """testParsingMalformedMessage: RegisterBrokerRecord v0 with one byte of body."""
    error = _refused(bytes.fromhex("01 00 00 80"))
    assert (error.kind, error.position) == ("truncated", 3)


def test_garbage_after_a_record_is_refused_where_the_record_ends() -> None:
    """testParsingRecordWithGarbageAtEnd: one extra byte after RegisterBrokerRecord v0."""
    data = encode_metadata_record(RegisterBrokerRecord(broker_id=1, broker_epoch=2), 0)
    error = _refused(data + b"\x00")
    assert error.position == len(data)


def test_an_unknown_record_is_written_only_at_its_own_version() -> None:
    """An UnknownRecord carries its version with its payload: writing it as another version
    is refused (the bytes would claim a version the payload was not written for)."""
    record = UnknownRecord(api_key=200, version=3, payload=b"\x05\x00")
    # frame 1, apiKey 200 (a two-byte varint), version 3, the payload
    assert encode_metadata_record(record, 3) == bytes([1, 0xC8, 0x01, 3, 5, 0])
    with pytest.raises(EncodeError):
        encode_metadata_record(record, 2)


def test_a_newer_version_that_adds_tagged_fields_reads_as_the_newest_modelled() -> None:
    """Kafka 4.3's RegisterBrokerRecord v4 is v3 and a tagged CordonedLogDirs (tag 1): it
    reads as the v3 record, keeps its version and the tag, and cannot be written back at
    v4 (a log keeps such a value's bytes)."""
    record = RegisterBrokerRecord(broker_id=1, broker_epoch=2, log_dirs=("A" * 22,))
    cordoned = (1, bytes([2]) + bytes(16))  # a compact array of one UUID
    v3 = encode_metadata_record(record, 3, (cordoned,))
    v4 = v3[:2] + bytes([4]) + v3[3:]
    decoded = decode_metadata_record(v4)
    assert (decoded.record, decoded.version, decoded.unknown_tagged_fields) == (
        record, 4, (cordoned,))
    with pytest.raises(EncodeError):
        encode_metadata_record(decoded.record, 4, decoded.unknown_tagged_fields)


def test_a_newer_version_the_newest_schema_cannot_read_stays_unknown() -> None:
    """A TopicRecord v1 whose body is not a v0 body (here: cut short) is kept whole."""
    body = encode_metadata_record(TopicRecord(name="foo", topic_id="A" * 22), 0)[3:]
    data = bytes([1, 2, 1]) + body[:-3]
    decoded = decode_metadata_record(data)
    assert decoded.record == UnknownRecord(api_key=2, version=1, payload=body[:-3])
    assert encode_metadata_record(decoded.record, 1) == data


def test_a_log_with_a_newer_record_version_keeps_its_bytes_and_replays() -> None:
    """The v4 RegisterBrokerRecord in a log segment: decoded as the record, written back
    byte for byte, and replayed into an image like any registration."""
    record = RegisterBrokerRecord(broker_id=1, broker_epoch=2, fenced=False,
                                  log_dirs=("A" * 22,))
    data = bytearray(encode_batch(Batch(0, 1, (record,), (), 5), LEVELS["3.7-IV2"]))
    v3 = encode_metadata_record(record, 3)
    at = bytes(data).index(v3)
    data[at + 2] = 4  # the record version
    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    decoded = decode_log(bytes(data))
    assert decoded.batches[0].batch.records == (record,)
    assert encode_log(decoded.batches) == bytes(data)
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(decoded.batches[0].batch.records)
    assert not delta.apply(0, 1).brokers[1].fenced


def test_a_kafka_43_registration_change_reads_as_version_2() -> None:
    """BrokerRegistrationChangeRecord v3 (Kafka 4.3) is v2 and a tagged CordonedLogDirs
    (after Fenced, InControlledShutdown and LogDirs: tag 3)."""
    record = BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=2, fenced=-1,
                                            log_dirs=("A" * 22,))
    cordoned = (3, bytes([1]))  # an empty compact array
    v2 = encode_metadata_record(record, 2, (cordoned,))
    decoded = decode_metadata_record(v2[:2] + bytes([3]) + v2[3:])
    assert (decoded.record, decoded.version, decoded.unknown_tagged_fields) == (
        record, 3, (cordoned,))


def test_register_broker_record_has_in_controlled_shutdown_from_version_1() -> None:
    """RegisterBrokerRecord v0 ends fenced, tagged fields; v1 adds InControlledShutdown (one
    bool) between them. A v0 value cannot hold a broker in controlled shutdown."""
    record = RegisterBrokerRecord(broker_id=1, incarnation_id="AAAAAAAAAAAAAAAAAAAAAQ",
                                  broker_epoch=2, rack="r")
    body = (bytes.fromhex("00000001") + bytes(15) + b"\x01" + bytes.fromhex("0000000000000002")
            + b"\x01\x01" + b"\x02r" + b"\x01")  # id, incarnation, epoch, [] [], rack, fenced
    assert encode_metadata_record(record, 0) == bytes([1, 0, 0]) + body + b"\x00"
    assert encode_metadata_record(record, 1) == bytes([1, 0, 1]) + body + b"\x00\x00"
    assert decode_metadata_record(bytes([1, 0, 0]) + body + b"\x00").record == record
    with pytest.raises(EncodeError):
        encode_metadata_record(msgspec.structs.replace(record, in_controlled_shutdown=True), 0)
