"""Data partition segments, transaction markers, the abort index and __transaction_state
records: Kafka's bytes, round trips, damage reported, real Kafka batches re-read."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kafka_format.batch_format import (
    CONTROL_FLAG,
    HEADER_SIZE,
    TRANSACTIONAL_FLAG,
    crc32c_of_bytes,
)
from kafka_format.data_log import (
    AbortedTxnEntry,
    DataBatch,
    DataRecord,
    decode_data_log,
    decode_marker,
    decode_txn_index,
    encode_data_batch,
    encode_data_log,
    encode_txn_index,
    marker_record,
)
from kafka_format.errors import DecodeError, DecodeFailure, EncodeError
from kafka_format.files import read_data_segment, read_txn_index, write_partition_dir
from kafka_format.transaction_log import (
    TxnLogValue,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    value_json,
)

from .conftest import FIRST_SEGMENT, METADATA_DIR


def _txn_batch(base: int, values: list[str], producer_id: int = 7, epoch: int = 3,
               sequence: int = 0) -> DataBatch:
    return DataBatch(base, 2, TRANSACTIONAL_FLAG, 1000, 1000, producer_id, epoch, sequence,
                     tuple(DataRecord(None, v.encode()) for v in values))


def _marker(base: int, commit: bool, coordinator_epoch: int = 5) -> DataBatch:
    return DataBatch(base, 2, TRANSACTIONAL_FLAG | CONTROL_FLAG, 1000, 1000, 7, 3, -1,
                     (marker_record(commit, coordinator_epoch),))


def test_marker_bytes_are_kafkas_end_transaction_marker() -> None:
    commit = marker_record(True, 5)
    abort = marker_record(False, 9)
    assert commit.key == b"\x00\x00\x00\x01" and abort.key == b"\x00\x00\x00\x00"
    assert commit.value == b"\x00\x00\x00\x00\x00\x05"  # version 0, coordinatorEpoch int32
    marker = decode_marker(abort)
    assert marker is not None and (marker.name, marker.coordinator_epoch) == ("ABORT", 9)
    batch = encode_data_batch(_marker(4, True))
    assert len(batch) == 78  # the size kafka-dump-log shows for a marker batch
    attributes = struct.unpack_from(">h", batch, 21)[0]
    assert attributes == 0x30  # isTransactional | isControl


def test_transactional_segment_round_trips_byte_for_byte() -> None:
    batches = [_txn_batch(0, ["a", "b"]), _marker(2, False), _txn_batch(3, ["c"], sequence=2),
               _marker(4, True)]
    data = encode_data_log(batches)
    result = decode_data_log(data)
    assert result.error is None
    assert [b.records for b in result.batches] == [b.records for b in batches]
    assert [(b.is_transactional, b.is_control, b.producer_id, b.producer_epoch,
             b.base_sequence) for b in result.batches] == [
        (True, False, 7, 3, 0), (True, True, 7, 3, -1), (True, False, 7, 3, 2),
        (True, True, 7, 3, -1)]
    assert encode_data_log(result.batches) == data


def test_damage_keeps_the_good_batches() -> None:
    data = encode_data_log([_txn_batch(0, ["a"]), _txn_batch(1, ["b"], sequence=1)])
    cut = decode_data_log(data[:-3], "seg")
    assert len(cut.batches) == 1 and cut.error is not None and cut.error.kind == "truncated"
    flipped = bytearray(data)
    flipped[-1] ^= 0xFF
    bad = decode_data_log(bytes(flipped), "seg")
    assert len(bad.batches) == 1 and bad.error is not None
    assert bad.error.kind == "crc-mismatch" and bad.error.batch_offset == 1


def test_damage_in_a_later_batch_is_reported_where_it_is() -> None:
    """Each kind of damage in the second batch: the first is kept, and the report names
    the batch's byte and the field's (Kafka's header: magic at +16, CRC at +17,
    attributes at +21)."""
    data = encode_data_log([_txn_batch(0, ["a"]), _txn_batch(1, ["b"], sequence=1)])
    second = len(encode_data_batch(_txn_batch(0, ["a"])))

    def damage(bad: bytes) -> DecodeFailure:
        result = decode_data_log(bad, "seg")
        assert len(result.batches) == 1 and result.error is not None
        assert result.error.batch_position == second
        return result.error

    header = damage(data[:second + HEADER_SIZE - 1])
    assert (header.kind, header.position) == ("truncated", second)
    assert f"batch header needs {HEADER_SIZE} bytes at byte {second} but only " \
        f"{HEADER_SIZE - 1} remain" in header.message
    body = damage(data[:-3])
    assert (body.kind, body.position) == ("truncated", second)
    assert f"batch needs {len(data) - second} bytes at byte {second} but only " \
        f"{len(data) - 3 - second} remain" in body.message
    crc = bytearray(data)
    crc[-1] ^= 0xFF
    assert (damage(bytes(crc)).kind, damage(bytes(crc)).position) == \
        ("crc-mismatch", second + 17)
    magic = bytearray(data)
    magic[second + 16] = 1
    assert (damage(bytes(magic)).kind, damage(bytes(magic)).position) == \
        ("unsupported", second + 16)
    unknown_codec = _with_attributes(data, second, TRANSACTIONAL_FLAG | 5)
    assert (damage(unknown_codec).kind, damage(unknown_codec).position) == \
        ("unsupported", second + 21)
    not_gzip = damage(_with_attributes(data, second, TRANSACTIONAL_FLAG | 1))
    assert (not_gzip.kind, not_gzip.position) == ("corrupt", second + HEADER_SIZE)
    assert "do not decompress" in not_gzip.message


def _with_attributes(data: bytes, at: int, attributes: int) -> bytes:
    """``data`` with the attributes of the batch at ``at`` replaced, its CRC made right."""
    out = bytearray(data)
    struct.pack_into(">h", out, at + 21, attributes)
    end = at + 12 + struct.unpack_from(">i", out, at + 8)[0]
    struct.pack_into(">I", out, at + 17, crc32c_of_bytes(bytes(out[at + 21:end])))
    return bytes(out)


def test_record_headers_round_trip_up_to_the_records_last_byte() -> None:
    batch = DataBatch(0, 2, 0, 1000, 1000, -1, -1, -1, (
        DataRecord(b"k", b"v", 0, ((b"h1", b"x"), (b"h2", None), (b"h3", b"last"))),
        DataRecord(None, None, 5, ((b"h", b""),))))
    [decoded] = decode_data_log(encode_data_log([batch])).batches
    assert decoded.records == batch.records


def test_txn_index_entries_are_34_bytes_big_endian() -> None:
    entries = [AbortedTxnEntry(7, 3, 6, 7), AbortedTxnEntry(9, 10, 20, 12)]
    data = encode_txn_index(entries)
    assert len(data) == 68
    assert data[:34] == struct.pack(">hqqqq", 0, 7, 3, 6, 7)
    assert decode_txn_index(data).entries == tuple(entries)
    cut = decode_txn_index(data[:50], "x.txnindex")
    assert cut.entries == (entries[0],) and cut.error is not None
    assert cut.error.kind == "truncated"
    versioned = decode_txn_index(struct.pack(">hqqqq", 1, 7, 3, 6, 7))
    assert versioned.error is not None and versioned.error.kind == "unsupported"


def test_transaction_log_records_round_trip() -> None:
    key = encode_key("app")
    assert key == b"\x00\x00\x00\x03app"
    assert decode_key(key) == "app"
    ongoing = TxnLogValue(4, 2, 60000, 1, (("orders", (0, 1)), ("t", (3,))), 50, 40, 4, -1)
    empty = TxnLogValue(4, 3, 60000, 0, None, 70, -1)
    two_phase = TxnLogValue(4, 5, 2**31 - 1, 1, (("t", (0,)),), 80, 75, 4, 9, 2, 0)
    for value in (ongoing, empty, two_phase):
        data = encode_value(value)
        assert data[:2] == b"\x00\x01"  # version 1 (flexible)
        assert decode_value(data) == value
    # fixed fields in order: ProducerId, ProducerEpoch, TransactionTimeoutMs, TransactionStatus
    assert encode_value(empty)[2:17] == struct.pack(">qhib", 4, 3, 60000, 0)
    with pytest.raises(DecodeError):
        decode_value(b"\x00\x07")
    # TransactionLogValue has versions 0 and 1 only: a version 2 value is not read as 1
    with pytest.raises(DecodeError, match="version 2"):
        decode_value(b"\x00\x02" + encode_value(empty)[2:])
    # TransactionalId is a non-nullable string: a length of -1 is refused
    with pytest.raises(DecodeError):
        decode_key(b"\x00\x00\xff\xff")


def test_an_empty_partition_list_is_not_a_null_one() -> None:
    """TransactionPartitions: an empty array (compact length 1) and null (compact length 0)
    are different values and each reads back as itself."""
    empty_list = TxnLogValue(4, 3, 60000, 4, (), 70, 60)
    null_list = TxnLogValue(4, 3, 60000, 0, None, 70, -1)
    assert encode_value(empty_list)[17] == 1 and encode_value(null_list)[17] == 0
    assert decode_value(encode_value(empty_list)).TransactionPartitions == ()
    assert decode_value(encode_value(null_list)).TransactionPartitions is None


def test_transaction_log_values_have_kafkas_bytes_in_both_versions() -> None:
    """Version 1 writes a tagged field only when it differs from its default (-1 for the
    producer ids and the next epoch, 0 for the client version); version 0, which Kafka
    wrote before 2.8's flexible value, has int16 strings and int32 counts, and no tags."""
    head = struct.pack(">qhib", 4, 3, 60000, 0)
    times = struct.pack(">qq", 70, -1)
    empty = TxnLogValue(4, 3, 60000, 0, None, 70, -1)
    assert encode_value(empty) == b"\x00\x01" + head + b"\x00" + times + b"\x00"
    tagged = TxnLogValue(4, 3, 60000, 0, None, 70, -1, PreviousProducerId=0,
                         NextProducerEpoch=0)
    assert encode_value(tagged) == b"\x00\x01" + head + b"\x00" + times + b"\x02" + \
        b"\x00\x08" + struct.pack(">q", 0) + b"\x03\x02" + struct.pack(">h", 0)
    assert decode_value(encode_value(tagged)) == tagged
    version0 = (b"\x00\x00" + struct.pack(">qhib", 4, 2, 60000, 1) + struct.pack(">i", 2)
                + struct.pack(">h", 6) + b"orders" + struct.pack(">iii", 2, 0, 1)
                + struct.pack(">h", 1) + b"t" + struct.pack(">ii", 1, 3)
                + struct.pack(">qq", 50, 40))
    assert decode_value(version0) == TxnLogValue(4, 2, 60000, 1,
                                                 (("orders", (0, 1)), ("t", (3,))), 50, 40)
    # a tag this schema does not know (7) is skipped, whatever its size
    unknown = b"\x00\x01" + head + b"\x00" + times + b"\x01" + b"\x07\x08" + bytes(8)
    assert decode_value(unknown) == empty


def test_transaction_log_json_names_fields_as_kafka_dump_log_does() -> None:
    """Kafka's JSON converter writes the schema's fields in order, a tagged one only
    when it is not its default; a transactional id is a string of at most 32,767 bytes."""
    plain = value_json(TxnLogValue(4, 3, 60000, 0, None, 70, -1))
    assert list(plain) == ["producerId", "producerEpoch", "transactionTimeoutMs",
                           "transactionStatus", "transactionPartitions",
                           "transactionLastUpdateTimestampMs", "transactionStartTimestampMs"]
    tagged = value_json(TxnLogValue(4, 3, 60000, 1, (("t", (0, 2)),), 70, 60, 0, 5, 2, 0))
    assert list(tagged) == ["producerId", "previousProducerId", "nextProducerId",
                            "producerEpoch", "transactionTimeoutMs", "transactionStatus",
                            "transactionPartitions", "transactionLastUpdateTimestampMs",
                            "transactionStartTimestampMs", "clientTransactionVersion",
                            "nextProducerEpoch"]
    assert (tagged["previousProducerId"], tagged["nextProducerId"],
            tagged["nextProducerEpoch"]) == (0, 5, 0)
    assert tagged["transactionPartitions"] == [{"topic": "t", "partitionIds": [0, 2]}]
    longest = "x" * 0x7FFF
    assert decode_key(encode_key(longest)) == longest
    with pytest.raises(EncodeError, match="32768 bytes is too long"):
        encode_key(longest + "x")


def test_partition_directory_round_trips(tmp_path: Path) -> None:
    batches = [_txn_batch(0, ["a", "b"]), _marker(2, False)]
    written = write_partition_dir(tmp_path / "orders-0", batches, [AbortedTxnEntry(7, 0, 2, 3)])
    assert [p.name for p in written] == ["00000000000000000000.log",
                                         "00000000000000000000.txnindex"]
    assert [b.records for b in read_data_segment(written[0]).batches] == \
        [b.records for b in batches]
    assert read_txn_index(written[1]).entries == (AbortedTxnEntry(7, 0, 2, 3),)
    clean = write_partition_dir(tmp_path / "orders-1", batches[:1])
    assert [p.name for p in clean] == ["00000000000000000000.log"]  # no abort, no index
    missing = read_txn_index(tmp_path / "none.txnindex")
    assert missing.error is not None and missing.error.kind == "unreadable"


@pytest.mark.parametrize("dataset", ["bootstrap-txn", "noop-heavy", "topics-configs"])
def test_real_kafka_batches_read_as_raw_records_and_rewrite_identically(
        kafka_data: Path, dataset: str) -> None:
    """Kafka's own segments (metadata records, control batches) through the raw codec."""
    data = (kafka_data / dataset / METADATA_DIR / FIRST_SEGMENT).read_bytes()
    result = decode_data_log(data, dataset)
    assert result.error is None and result.batches
    assert encode_data_log(result.batches) == data
    assert any(b.is_control for b in result.batches)
    assert not any(b.is_transactional for b in result.batches)  # KIP-868: not producer txns
