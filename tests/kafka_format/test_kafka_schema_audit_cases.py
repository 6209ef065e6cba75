"""What an audit of kraftsim's wire schemas against Kafka's own JSON message schemas found.

The audit (a throwaway script, not kept: Kafka's sources are not here in CI) parsed
Kafka's JSON schemas at trunk of October 2024 and at the 3.3-3.9 branches, and compared
each with kraftsim's restatement: the 25 metadata record schemas of
``metadata/src/main/resources/common/metadata`` (apiKey, validVersions,
flexibleVersions, and for every field, nested ones included, its name, order, type,
versions, nullableVersions, taggedVersions, tag and default) against
:mod:`kafka_format.metadata_schemas`; the five KRaft control records
(LeaderChangeMessage, SnapshotHeader/Footer, KRaftVersion, Voters) against
:mod:`kafka_format.control_records`; the group coordinator's keys and values and
ConsumerProtocolSubscription/Assignment against :mod:`kafka_format.offsets_log`;
TransactionLogKey/Value and QuorumStateData by hand. At trunk: 64 schemas, 256 fields
and 90 field orders compared, and no schema differs. What differs is around the
schemas, in the codec and in what a reader does with what it does not model; each
case below builds Kafka's bytes by hand, with none of kraftsim's encoder (the audit also
checked that every metadata schema's full field order, tagged fields included, and each
field's JSON name agree):

- strings: Kafka's generated readers refuse a string longer than 32767 bytes and its
  writers refuse to write one, compact (flexible) strings included; kraftsim read and
  wrote any length;
- a metadata record type kraftsim does not model (a newer Kafka's, or a type whose
  newer version adds a regular field): the log decodes (kept as bytes, printed by
  dump-log as ``UNKNOWN(apiKey=N)``), the loader skips it with a warning at its offset,
  and the warning named ``apiKey -1`` instead of the record's own apiKey and version;
- a control record type Kafka does not know: kafka-dump-log prints ``controlType:
  UNKNOWN(id)``; kraftsim printed ``UnknownControlRecord(type=id)`` (metadata logs)
  and ``unknown`` (data logs);
- TransactionLogValue: Kafka refuses a null topic or a null PartitionIds (both
  non-nullable); kraftsim read a version-0 null topic at a wrong position and null ids
  as an empty list;
- dump-log's JSON of metadata and control records: kafka-dump-log prints each with its
  type's generated JSON converter at the record's version (schema order and names,
  fields the version lacks left out, tagged fields only when not default, a
  LeaderChange voter as ``{"voterId": n}``, ``kRaftVersion``); kraftsim printed every
  attribute of its own Struct in its own order (``logDirs`` on a RegisterBrokerRecord
  v2, ``leaderRecoveryState`` 0 on a PartitionRecord v0, ``version`` last);
- batch attributes: Kafka's raft reader (and kafka-dump-log) decompresses a metadata
  batch compressed with gzip, snappy, lz4 or zstd, though its raft layer never writes
  one; kraftsim refused it as unsupported. A codec id Kafka does not have (5-7) stays
  an ``unsupported`` error at the attributes.

Left as they are, with the reason: BrokerRegistrationChangeRecord.LogDirs is read as a
nullable array (kraftsim keeps ``None`` for "absent"; Kafka never writes it null, and
an empty array means no change in both); LeaderChangeMessage's version 1 (a voter's
directory id) is not read, as Kafka reads every control record at version 0;
TransactionLogValue versions above 1 are refused, as Kafka's coordinator refuses them.
Records of KRaft's preview releases (3.0-3.2: FeatureLevelRecord with min/max levels,
ProducerIdsRecord with ProducerIdsEnd, RemoveFeatureLevelRecord apiKey 16,
AccessControlRecord apiKey 6 until 3.4) and the 3.3/3.4 versions 0 of
DelegationTokenRecord and UserScramCredentialRecord (never written by a release) are
not modelled: Kafka 3.3+ cannot read them either, and kraftsim names the record and
its byte. The KIP-848 early-access consumer group records of 3.5-3.7, the share group
records before Kafka 4.1 and the streams groups' records (types 17 and up, whose
schemas were still changing) are not modelled: a value that does not fit is reported
on its record, an unknown type as ``Unknown record type N at offset X, skipping.``, as
kafka-dump-log prints a type it does not know.
"""

from __future__ import annotations

import gzip
import json
import struct
from collections.abc import Callable
from pathlib import Path

import cramjam
import google_crc32c
import pytest

from kafka_format import (
    decode_log,
    decode_metadata_record,
    encode_batch,
    encode_log,
    encode_metadata_record,
    transaction_log,
)
from kafka_format.errors import DecodeError, EncodeError
from kraftsim.dump_log import main as dump_log
from metadata.schema import ConfigRecord, TopicRecord, UnknownRecord
from raft.batch import Batch
from shell.file_source import open_files

from .kafka_bytes import cs, i8, i16, i32, i64, uvarint

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
TOPIC_ID_BYTES = bytes(15) + b"\x01"
LIMIT = 0x7FFF
"""The longest string Kafka reads or writes, in UTF-8 bytes."""


def varint(value: int) -> bytes:
    """A zig-zag varint of the record format."""
    return uvarint((value << 1) ^ (value >> 63))


def record(offset_delta: int, key: bytes | None, value: bytes) -> bytes:
    """One record of a v2 batch: no attributes, no timestamp delta, no headers."""
    body = (i8(0) + varint(0) + varint(offset_delta)
            + (varint(-1) if key is None else varint(len(key)) + key)
            + varint(len(value)) + value + varint(0))
    return varint(len(body)) + body


def batch(base_offset: int, epoch: int, records: list[tuple[bytes | None, bytes]],
          attributes: int = 0, producer_id: int = -1) -> bytes:
    """A record batch v2 as Kafka lays it out, its CRC-32C over attributes onwards."""
    tail = (i16(attributes) + i32(len(records) - 1) + i64(1000) + i64(1000)
            + i64(producer_id) + i16(-1) + i32(-1) + i32(len(records))
            + b"".join(record(i, key, value) for i, (key, value) in enumerate(records)))
    crc = google_crc32c.value(tail)
    after_length = i32(epoch) + i8(2) + struct.pack(">I", crc) + tail
    return i64(base_offset) + i32(len(after_length)) + after_length


CONTROL = 0x20
LEADER_CHANGE = (i16(0) + i16(2),  # key: version 0, LEADER_CHANGE
                 i16(0) + i32(1) + uvarint(2) + i32(1) + b"\x00"
                 + uvarint(2) + i32(1) + b"\x00" + b"\x00")


def metadata_value(api_key: int, version: int, body: bytes) -> bytes:
    """A metadata record value: frame version 1, apiKey, version (unsigned varints), body."""
    return uvarint(1) + uvarint(api_key) + uvarint(version) + body


def topic_record(name: str) -> bytes:
    return metadata_value(2, 0, cs(name) + TOPIC_ID_BYTES + b"\x00")


def config_record(value_bytes: int) -> bytes:
    """A ConfigRecord v0 (a TOPIC config) whose value takes ``value_bytes`` bytes."""
    return metadata_value(4, 0, i8(2) + cs("t") + cs("cleanup.policy")
                          + cs("x" * value_bytes) + b"\x00")


# --- strings: Kafka's 32767-byte limit ---------------------------------------------------------


@pytest.mark.parametrize("length", [LIMIT, LIMIT + 1, 3 * LIMIT])
def test_a_string_longer_than_kafkas_limit_is_refused_on_read(length: int) -> None:
    """Kafka's generated reader: ``string field value had invalid length``."""
    data = config_record(length)
    if length <= LIMIT:
        decoded = decode_metadata_record(data)
        assert decoded.record == ConfigRecord(2, "t", "cleanup.policy", "x" * length)
        return
    with pytest.raises(DecodeError, match=f"has length {length}, more than Kafka's 32767"):
        decode_metadata_record(data)


@pytest.mark.parametrize("length", [LIMIT, LIMIT + 1])
def test_a_string_longer_than_kafkas_limit_is_refused_on_write(length: int) -> None:
    """Kafka's generated writer: ``'value' field is too long to be serialized``; the same
    from a whole batch (the fast encoder) as from one record (the generic one)."""
    config = ConfigRecord(2, "t", "cleanup.policy", "x" * length)
    if length <= LIMIT:
        assert encode_metadata_record(config, 0) == config_record(length)
        assert config_record(length) in encode_batch(Batch(0, 1, (config,)), 7)
        return
    with pytest.raises(EncodeError, match="too long to be written"):
        encode_metadata_record(config, 0)
    with pytest.raises(EncodeError, match="too long to be written"):
        encode_batch(Batch(0, 1, (config,)), 7)


def test_a_multi_byte_utf8_string_counts_its_bytes_not_its_characters() -> None:
    text = "\u00e9" * (LIMIT // 2 + 1)  # 16384 characters, 32768 bytes
    with pytest.raises(EncodeError):
        encode_metadata_record(TopicRecord(text, TOPIC_ID), 0)


# --- a metadata record type kraftsim does not model --------------------------------------------


@pytest.mark.parametrize(("api_key", "version"), [(99, 0), (300, 5)])
def test_an_unmodelled_record_type_is_skipped_with_a_warning_naming_it(
        tmp_path: Path, api_key: int, version: int, capsys: pytest.CaptureFixture[str]) -> None:
    """A newer Kafka's record type in the log: it decodes (kept as bytes), dump-log prints
    it, the loader skips it with a warning naming its offset, apiKey and version, and the
    records after it load."""
    unknown = metadata_value(api_key, version, b"\x03ab\x00")
    log = (batch(0, 1, [LEADER_CHANGE], attributes=CONTROL)
           + batch(1, 1, [(None, unknown), (None, topic_record("after-it"))]))
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    segment = directory / "00000000000000000000.log"
    segment.write_bytes(log)

    result = decode_log(log, first_offset=0)
    assert result.ok
    assert result.batches[1].batch.records[0] == UnknownRecord(api_key, version, b"\x03ab\x00")

    source = open_files(str(tmp_path), None)
    assert source.errors == []
    [warning] = source.warnings
    assert warning.startswith("the loader could not apply 1 record (the first at offset 1: ")
    assert f"apiKey {api_key} version {version}" in warning
    assert "after-it" in source.image.topics_by_name

    assert dump_log([str(segment)]) == 0
    out = capsys.readouterr().out
    assert (f'payload: {{"type":"UNKNOWN(apiKey={api_key})","version":{version},'
            f'"data":{{"payload":"03616200"}}}}') in out


# --- a control record type Kafka does not know ------------------------------------------------


@pytest.mark.parametrize(("type_id", "shown"), [(9, "UNKNOWN(9)"), (-3, "UNKNOWN(-3)")])
def test_an_unknown_control_type_in_a_metadata_log_is_printed_as_kafka_does(
        tmp_path: Path, type_id: int, shown: str, capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-dump-log: `` controlType: UNKNOWN(9)`` (its enum's name, then the id)."""
    log = (batch(0, 1, [LEADER_CHANGE], attributes=CONTROL)
           + batch(1, 1, [(i16(0) + i16(type_id), b"\x00\x00\x07")], attributes=CONTROL)
           + batch(2, 1, [(None, topic_record("after-it"))]))
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    segment = directory / "00000000000000000000.log"
    segment.write_bytes(log)
    assert dump_log([str(segment)]) == 0
    lines = capsys.readouterr().out.splitlines()
    [line] = [line for line in lines if line.startswith("| offset: 1 ")]
    assert line.endswith(f"keySize: 4 valueSize: 3 sequence: -1 headerKeys: [] "
                         f"controlType: {shown}")
    source = open_files(str(tmp_path), None)
    assert source.errors == [] and source.warnings == []
    assert "after-it" in source.image.topics_by_name


@pytest.mark.parametrize(("key", "shown"), [
    (i16(0) + i16(9), "controlType: UNKNOWN(9)"),
    (i16(0) + i16(2), "controlType: LEADER_CHANGE(2)"),
    (i16(0) + i16(1), "endTxnMarker: COMMIT coordinatorEpoch: 7"),
])
def test_control_records_in_a_data_log_are_named_as_kafka_does(
        tmp_path: Path, key: bytes, shown: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A data partition's control batch: a marker's type and epoch, any other type by
    Kafka's enum name and id."""
    line = dumped_control_record(tmp_path, key, i16(0) + i32(7), capsys)
    assert line.endswith(f"headerKeys: [] {shown}")


def dumped_control_record(tmp_path: Path, key: bytes | None, value: bytes,
                          capsys: pytest.CaptureFixture[str]) -> str:
    """dump-log's line for the one control record (``key``, ``value``) of a transactional
    control batch, in a data partition's segment written under ``tmp_path``."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    segment = directory / "00000000000000000000.log"
    segment.write_bytes(batch(0, 0, [(key, value)], attributes=CONTROL | 0x10, producer_id=5))
    assert dump_log([str(segment)]) == 0
    lines = capsys.readouterr().out.splitlines()
    [line] = [line for line in lines if line.startswith("| offset: 0 ")]
    return line


# --- __transaction_state: non-nullable fields written null -------------------------------------


def _txn_value(version: int, partitions: bytes) -> bytes:
    """A TransactionLogValue: ProducerId 7, epoch 1, timeout 60000, Ongoing (1), then the
    given TransactionPartitions bytes, both timestamps 500 and (flexible) no tags."""
    return (i16(version) + i64(7) + i16(1) + i32(60000) + i8(1) + partitions
            + i64(500) + i64(500) + (b"\x00" if version else b""))


@pytest.mark.parametrize(("version", "partitions", "error"), [
    (0, i32(1) + i16(-1) + i32(0), "topic at byte 21 is null"),
    (0, i32(1) + i16(40) + b"abc", "truncated"),
    (0, i32(1) + i16(1) + b"t" + i32(-1), "PartitionIds of topic 't' is null"),
    (1, uvarint(2) + cs("t") + b"\x00" + b"\x00", "PartitionIds of topic 't' is null"),
])
def test_a_transaction_value_with_a_null_topic_or_partition_list_is_refused(
        version: int, partitions: bytes, error: str) -> None:
    """Kafka's reader: ``non-nullable field topic (partitionIds) was serialized as null``;
    kraftsim read a null topic as text at a wrong position and null ids as none."""
    with pytest.raises(DecodeError) as caught:
        transaction_log.decode_value(_txn_value(version, partitions))
    assert error in f"{caught.value.message} {caught.value.kind}"


# --- dump-log's JSON: Kafka's generated JSON converters ---------------------------------------

INCARNATION = bytes(range(16))
INCARNATION_TEXT = "AAECAwQFBgcICQoLDA0ODw"
_ENDPOINT = cs("PLAINTEXT") + cs("localhost") + struct.pack(">H", 9092) + i16(0) + b"\x00"
_FEATURE = cs("metadata.version") + i16(1) + i16(14) + b"\x00"

JSON_CASES = {
    # schema order (isMigratingZkBroker second), no logDirs before version 3
    "RegisterBrokerRecord v2": (
        False,
        metadata_value(0, 2, i32(1) + i8(0) + INCARNATION + i64(5) + uvarint(2) + _ENDPOINT
                       + uvarint(2) + _FEATURE + b"\x00" + i8(1) + i8(0) + b"\x00"),
        '{"type":"REGISTER_BROKER_RECORD","version":2,"data":{"brokerId":1,'
        '"isMigratingZkBroker":false,"incarnationId":"' + INCARNATION_TEXT + '",'
        '"brokerEpoch":5,"endPoints":[{"name":"PLAINTEXT","host":"localhost","port":9092,'
        '"securityProtocol":0}],"features":[{"name":"metadata.version",'
        '"minSupportedVersion":1,"maxSupportedVersion":14}],"rack":null,"fenced":true,'
        '"inControlledShutdown":false}}'),
    # a tagged field only when it is not its default; none absent from the version
    "BrokerRegistrationChangeRecord v0": (
        False,
        metadata_value(17, 0, i32(1) + i64(5) + uvarint(1) + uvarint(0) + uvarint(1) + i8(-1)),
        '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":0,"data":{"brokerId":1,'
        '"brokerEpoch":5,"fenced":-1}}'),
    "PartitionRecord v0": (
        False,
        metadata_value(3, 0, i32(0) + TOPIC_ID_BYTES + uvarint(2) + i32(1) + uvarint(2)
                       + i32(1) + uvarint(1) + uvarint(1) + i32(1) + i32(0) + i32(0) + b"\x00"),
        '{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":0,"topicId":"'
        + TOPIC_ID + '","replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],'
        '"leader":1,"leaderEpoch":0,"partitionEpoch":0}}'),
    "PartitionRecord v2": (
        False,
        metadata_value(3, 2, i32(1) + TOPIC_ID_BYTES + uvarint(2) + i32(1) + uvarint(2)
                       + i32(1) + uvarint(1) + uvarint(1) + i32(1) + i32(0) + i32(0)
                       + uvarint(1) + uvarint(2) + uvarint(0) + uvarint(1) + i8(1)
                       + uvarint(1) + uvarint(5) + uvarint(2) + i32(2)),
        '{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":1,"topicId":"'
        + TOPIC_ID + '","replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],'
        '"leader":1,"leaderRecoveryState":1,"leaderEpoch":0,"partitionEpoch":0,'
        '"directories":[],"eligibleLeaderReplicas":[2]}}'),
    # control records: version first, Kafka's names (kRaftVersion), voters as objects
    "KRaftVersion": (
        True, i16(0) + i16(1) + b"\x00", 'KRaftVersion {"version":0,"kRaftVersion":1}'),
    "KRaftVoters": (
        True,
        i16(0) + uvarint(2) + i32(1) + INCARNATION + uvarint(2) + cs("CONTROLLER")
        + cs("localhost") + struct.pack(">H", 9093) + b"\x00" + i16(0) + i16(1) + b"\x00"
        + b"\x00" + b"\x00",
        'KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"'
        + INCARNATION_TEXT + '","endpoints":[{"name":"CONTROLLER","host":"localhost",'
        '"port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,'
        '"maxSupportedVersion":1}}]}'),
    "LeaderChange": (
        True, LEADER_CHANGE[1],
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],'
        '"grantingVoters":[{"voterId":1}]}'),
}
_CONTROL_TYPES = {"KRaftVersion": 5, "KRaftVoters": 6, "LeaderChange": 2}


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_dump_log_prints_records_as_kafkas_json_converters_do(
        tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-dump-log prints a record with its type's generated JSON converter, at the
    record's version: fields in schema order under their schema names (first letter
    lowercased), those the version lacks left out, tagged ones only when not default.
    kraftsim printed every field of its own record, in its own order."""
    control, value, shown = JSON_CASES[case]
    second = (batch(1, 1, [(i16(0) + i16(_CONTROL_TYPES[case]), value)], attributes=CONTROL)
              if control else batch(1, 1, [(None, value)]))
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    segment = directory / "00000000000000000000.log"
    segment.write_bytes(batch(0, 1, [LEADER_CHANGE], attributes=CONTROL) + second)
    assert dump_log([str(segment)]) == 0
    lines = capsys.readouterr().out.splitlines()
    [line] = [line for line in lines if line.startswith("| offset: 1 ")]
    assert line.endswith(f"headerKeys: [] {shown}" if control else f"payload: {shown}")


# --- compressed metadata batches --------------------------------------------------------------


def _snappy_java(data: bytes) -> bytes:
    """snappy-java's framed stream: magic, version 1, compatible version 1, int32-length
    raw blocks."""
    block = bytes(cramjam.snappy.compress_raw(data))
    return b"\x82SNAPPY\x00" + i32(1) + i32(1) + i32(len(block)) + block


COMPRESSORS = {
    "gzip": (1, lambda data: gzip.compress(data, mtime=0)),
    "snappy": (2, _snappy_java),
    "lz4": (3, lambda data: bytes(cramjam.lz4.compress(data))),
    "zstd": (4, lambda data: bytes(cramjam.zstd.compress(data))),
}


def compressed_batch(base_offset: int, epoch: int, values: list[bytes], codec: int,
                     compress: Callable[[bytes], bytes]) -> bytes:
    """A data batch of metadata records whose records section is compressed."""
    section = compress(b"".join(record(i, None, v) for i, v in enumerate(values)))
    tail = (i16(codec) + i32(len(values) - 1) + i64(1000) + i64(1000) + i64(-1) + i16(-1)
            + i32(-1) + i32(len(values)) + section)
    after_length = i32(epoch) + i8(2) + struct.pack(">I", google_crc32c.value(tail)) + tail
    return i64(base_offset) + i32(len(after_length)) + after_length


@pytest.mark.parametrize("name", list(COMPRESSORS))
def test_a_compressed_metadata_batch_is_read_as_kafkas_reader_reads_it(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Kafka's raft layer writes metadata uncompressed, but its reader (and kafka-dump-log)
    decompresses any batch; kraftsim refused one as unsupported. Read now, and written
    back byte for byte."""
    codec, compress = COMPRESSORS[name]
    log = (batch(0, 1, [LEADER_CHANGE], attributes=CONTROL)
           + compressed_batch(1, 1, [topic_record("t1"), config_record(3)], codec, compress))
    result = decode_log(log, first_offset=0)
    assert result.ok
    assert result.batches[1].batch.records == (
        TopicRecord("t1", TOPIC_ID), ConfigRecord(2, "t", "cleanup.policy", "xxx"))
    assert encode_log(result.batches) == log

    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    segment = directory / "00000000000000000000.log"
    segment.write_bytes(log)
    source = open_files(str(tmp_path), None)
    assert source.errors == [] and source.warnings == []
    assert "t1" in source.image.topics_by_name
    assert dump_log([str(segment)]) == 0
    out = capsys.readouterr().out
    assert f"magic: 2 compresscodec: {name} crc: " in out
    assert '"data":{"name":"t1","topicId":"' + TOPIC_ID + '"}}' in out


def test_dump_logs_json_format_carries_the_same_data(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--format json`` holds each record's data as the text form prints it."""
    _, value, _ = JSON_CASES["PartitionRecord v0"]
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(batch(0, 1, [LEADER_CHANGE], attributes=CONTROL)
                        + batch(1, 1, [(None, value)]))
    assert dump_log(["--format", "json", str(segment)]) == 0
    document = json.loads(capsys.readouterr().out)
    [leader], [partition] = (b["records"] for b in document["batches"])
    assert leader["data"] == {"version": 0, "leaderId": 1, "voters": [{"voterId": 1}],
                              "grantingVoters": [{"voterId": 1}]}
    assert list(partition["data"]) == ["partitionId", "topicId", "replicas", "isr",
                                       "removingReplicas", "addingReplicas", "leader",
                                       "leaderEpoch", "partitionEpoch"]
