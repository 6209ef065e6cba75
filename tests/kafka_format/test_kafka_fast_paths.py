"""The generated fast paths agree with the generic (reference) codec, byte for byte.

A fast decoder may decline any value (the generic decoder then decides), but
when it returns a record that record must be the generic decoder's, with no
unknown tags, and re-encoding it must give the very bytes it came from. A fast
encoder must write the generic encoder's bytes, or leave the value (and its
error) to the generic encoder.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import google_crc32c
import msgspec
import pytest

from kafka_format import (
    LogDecodeResult,
    batch_format,
    decode_log,
    encode_batches,
    encode_log,
    encode_metadata_record,
    fast_codec,
    log_codec,
    metadata_serde,
)
from kafka_format.batch_format import assemble_batch
from kafka_format.errors import DecodeError, EncodeError
from kafka_format.metadata_serde import (
    decode_canonical_value,
    decode_generic_value,
    decode_metadata_record,
    fast_decoder,
    fast_encoder,
    write_generic_value,
)
from metadata import schema as rec
from raft.batch import Batch

from .samples import TOPIC_A, sample_record
from .test_kafka_records import ALL_TYPE_VERSIONS


def generic_bytes(record: Any, version: int, unknown: tuple[Any, ...] = ()) -> bytes:
    out = bytearray()
    write_generic_value(out, record, version, unknown)
    return bytes(out)


def check_value(data: bytes) -> None:
    """The fast decoder's verdict on ``data`` is the reference's, or it declines."""
    fast = decode_canonical_value(data, 0, len(data))
    try:
        generic = decode_generic_value(data, 0, len(data))
    except DecodeError as exc:
        assert fast is None, data.hex()
        with pytest.raises(DecodeError) as raised:
            decode_metadata_record(data)
        assert (raised.value.message, raised.value.position) == (exc.message, exc.position)
        return
    assert decode_metadata_record(data) == generic
    if fast is None:
        return
    record, version = fast
    assert (record, version, ()) == (generic.record, generic.version,
                                     generic.unknown_tagged_fields), data.hex()  # fmt: skip
    assert type(record) is type(generic.record)
    assert generic_bytes(record, version) == data, data.hex()


def mutations(data: bytes, rng: random.Random) -> list[bytes]:
    out = []
    for position in range(len(data)):
        for value in {0, 1, 2, 0x7F, 0x80, 0xFF, data[position] ^ 1, rng.randrange(256)}:
            out.append(data[:position] + bytes([value]) + data[position + 1 :])
        out.append(data[:position] + data[position + 1 :])
        out.append(data[:position] + bytes([rng.randrange(256)]) + data[position:])
    return out


@pytest.mark.parametrize(("api_key", "version"), ALL_TYPE_VERSIONS)
def test_fast_paths_match_the_generic_codec(api_key: int, version: int) -> None:
    record = sample_record(api_key, version)
    data = encode_metadata_record(record, version)
    assert data == generic_bytes(record, version)
    assert fast_decoder(bytes([1, api_key, version])) is not None
    encoder = fast_encoder(type(record), version)
    assert encoder is not None
    written = bytearray()
    encoder(written, record)  # the sample is plain: no fallback to the generic encoder
    assert written == data
    assert decode_canonical_value(data, 0, len(data)) == (record, version)
    rng = random.Random(api_key * 100 + version)
    for mutated in mutations(data, rng):
        check_value(mutated)


def test_values_that_are_not_canonical_are_left_to_the_generic_decoder() -> None:
    base = encode_metadata_record(rec.TopicRecord(name="t", topic_id=TOPIC_A), 0)
    cases = [
        base[:-1] + bytes([1, 5, 0]),  # an unknown tagged field
        base[:3] + bytes([0x82, 0x00]) + base[4:],  # a two-byte name length (non-minimal)
    ]
    plain_change = rec.PartitionChangeRecord(partition_id=1, topic_id=TOPIC_A)
    change = encode_metadata_record(plain_change, 0)
    default_leader = plain_change.leader.to_bytes(4, "big", signed=True)
    cases.append(change[:-1] + bytes([1, 1, 4]) + default_leader)  # a tag at its default
    cases.append(change[:-1] + bytes([2, 1, 4, 0, 0, 0, 1, 1, 4, 0, 0, 0, 2]))  # tag twice
    cases.append(change[:-1] + bytes([2, 1, 4, 0, 0, 0, 1, 0, 1, 1]))  # tags descending
    broker = rec.RegisterBrokerRecord(broker_id=1, incarnation_id=TOPIC_A, broker_epoch=2)
    data = encode_metadata_record(broker, 1)
    bools = len(data) - 3  # fenced, in_controlled_shutdown, tagged count
    cases.append(data[:bools] + bytes([2]) + data[bools + 1 :])  # a bool byte of 2
    for data in cases:
        assert decode_canonical_value(data, 0, len(data)) is None
        check_value(data)


LONG = tuple(range(300))


@pytest.mark.parametrize(
    "record",
    [
        rec.PartitionRecord(partition_id=1, topic_id=TOPIC_A, replicas=LONG, isr=LONG,
                            eligible_leader_replicas=LONG, last_known_elr=()),
        rec.ConfigRecord(resource_type=2, resource_name="x" * 200, name="\u00e9" * 70,
                         value="v" * 5000),
        rec.BeginTransactionRecord(name="n" * 300),
        rec.PartitionChangeRecord(partition_id=1, topic_id=TOPIC_A, isr=LONG, leader=3),
    ],
    ids=lambda r: type(r).__name__,
)  # fmt: skip
def test_long_values_round_trip_alike(record: Any) -> None:
    version = 2 if isinstance(record, rec.PartitionRecord) else 0
    data = encode_metadata_record(record, version)
    assert data == generic_bytes(record, version)
    assert decode_metadata_record(data).record == record
    check_value(data)


@pytest.mark.parametrize(
    ("record", "version"),
    [
        (rec.TopicRecord(name=None, topic_id=TOPIC_A), 0),
        (rec.TopicRecord(name="t", topic_id="not a uuid"), 0),
        (rec.TopicRecord(name="\ud800", topic_id=TOPIC_A), 0),
        (rec.FenceBrokerRecord(id=1 << 40, epoch=1), 0),
        (rec.PartitionRecord(partition_id=1, topic_id=TOPIC_A, replicas=None, isr=()), 0),
        (rec.PartitionRecord(partition_id=1, topic_id=TOPIC_A, replicas=(1 << 33,), isr=()), 0),
        (rec.PartitionRecord(partition_id=1, topic_id=TOPIC_A, replicas=(), isr=(),
                             directories=(TOPIC_A,)), 0),
        (rec.PartitionRecord(partition_id=1, topic_id=TOPIC_A, replicas=(), isr=(),
                             directories=("bad",)), 1),
        (rec.PartitionChangeRecord(partition_id=1, topic_id=TOPIC_A, leader="x"), 0),
        (rec.RegisterBrokerRecord(broker_id=1, incarnation_id=TOPIC_A, broker_epoch=1,
                                  end_points=(None,)), 0),
        (rec.RegisterBrokerRecord(broker_id=1, incarnation_id=TOPIC_A, broker_epoch=1,
                                  end_points=None), 0),
        (rec.NoOpRecord(), 1),
    ],
)
def test_bad_values_fail_as_the_generic_encoder_fails(record: Any, version: int) -> None:
    with pytest.raises(Exception) as generic:
        generic_bytes(record, version)
    with pytest.raises(Exception) as fast:
        encode_metadata_record(record, version)
    assert type(fast.value) is type(generic.value)
    assert str(fast.value) == str(generic.value)
    assert isinstance(generic.value, EncodeError | UnicodeEncodeError)


def random_partition(rng: random.Random, partition: int) -> rec.PartitionRecord:
    def ints(most: int) -> tuple[int, ...]:
        return tuple(rng.randrange(-(1 << 31), 1 << 31) for _ in range(rng.randrange(most)))

    elr = rng.choice([None, (), ints(4)])
    return rec.PartitionRecord(
        partition_id=partition, topic_id=TOPIC_A, replicas=ints(6), isr=ints(6),
        removing_replicas=ints(2), adding_replicas=ints(2), leader=rng.randrange(-1, 5),
        leader_recovery_state=rng.choice([0, 0, 1]), leader_epoch=rng.randrange(1 << 20),
        partition_epoch=rng.randrange(1 << 20), directories=(TOPIC_A,) * rng.randrange(3),
        eligible_leader_replicas=elr, last_known_elr=rng.choice([None, (), ints(3)]),
    )  # fmt: skip


def test_a_log_of_distinct_records_re_encodes_to_identical_bytes() -> None:
    rng = random.Random(5)
    batches = [
        Batch(base, 3, tuple(random_partition(rng, base + i) for i in range(50)), (), base)
        for base in range(0, 1000, 50)
    ]
    data = encode_batches(batches, 23)  # PartitionRecord v2 (ELR)
    result = decode_log(data)
    assert result.ok
    assert [d.batch for d in result.batches] == batches
    assert all(f.raw_value is None and f == type(f)(f.version) for d in result.batches
               for f in d.facts)  # fmt: skip
    assert encode_log(result.batches) == data


def one_record_batch(value: bytes) -> bytes:
    record = bytearray(b"\x00\x00\x00\x01")  # attributes, timestamp delta, offset delta, no key
    record += bytes([len(value) * 2]) + value + b"\x00"  # zig-zag length < 64
    section = bytes([len(record) * 2]) + record
    return assemble_batch(Batch(0, 1, (), (), 5), 0, 5, (-1, -1, -1), 1, section)


def test_unusual_values_in_a_log_round_trip_byte_for_byte() -> None:
    topic = encode_metadata_record(rec.TopicRecord(name="t", topic_id=TOPIC_A), 0)
    unknown_tag = topic[:-1] + bytes([1, 9, 2, 0xAB, 0xCD])
    non_minimal = topic[:3] + bytes([0x82, 0x00]) + topic[4:]
    for value, unknown, raw in ((unknown_tag, ((9, b"\xab\xcd"),), None),
                                (non_minimal, (), non_minimal), (topic, (), None)):  # fmt: skip
        data = one_record_batch(value)
        result = decode_log(data)
        assert result.ok
        [facts] = result.batches[0].facts
        assert (facts.unknown_tagged_fields, facts.raw_value) == (unknown, raw)
        assert result.batches[0].batch.records == (rec.TopicRecord(name="t", topic_id=TOPIC_A),)
        assert encode_log(result.batches) == data


def test_generated_constructors_keep_defaults_shared_and_equal() -> None:
    record = rec.PartitionRecord(partition_id=1, topic_id=TOPIC_A, replicas=(1,), isr=(1,))
    decoded = decode_metadata_record(encode_metadata_record(record, 0)).record
    assert decoded == record
    assert msgspec.structs.asdict(decoded) == msgspec.structs.asdict(record)


# --- whole logs: the same results with and without the fast paths ---------------------------


@pytest.fixture
def generic_only(monkeypatch: pytest.MonkeyPatch) -> Callable[[], AbstractContextManager[None]]:
    """A context in which every fast path is switched off (the reference codec alone)."""

    @contextmanager
    def off() -> Iterator[None]:
        with monkeypatch.context() as patch:
            patch.setattr(log_codec, "_FAST_VALUES", {})
            patch.setattr(log_codec, "_fast_value", lambda frame: None)
            patch.setattr(metadata_serde, "FAST_DECODERS", {})
            patch.setattr(metadata_serde, "fast_decoder", lambda frame: None)
            patch.setattr(metadata_serde, "FAST_ENCODERS", {})
            patch.setattr(metadata_serde, "fast_encoder", lambda cls, version: None)
            patch.setattr(batch_format, "fast_encoder", lambda cls, version: None)
            no_op = encode_metadata_record(rec.NoOpRecord(), 0)
            assert decode_canonical_value(no_op, 0, len(no_op)) is None
            yield

    return off


def both_ways(data: bytes, off: Callable[[], AbstractContextManager[None]]) -> LogDecodeResult:
    fast = decode_log(data, source="x")
    with off():
        generic = decode_log(data, source="x")
        assert fast == generic
        reference = encode_log(generic.batches)
    assert encode_log(fast.batches) == reference == data[: fast.valid_bytes]
    return fast


def test_every_real_file_decodes_as_without_fast_paths(
    kafka_data: Path, generic_only: Callable[[], AbstractContextManager[None]]
) -> None:
    paths = sorted(kafka_data.glob("*/__cluster_metadata-0/*.*")) + sorted(
        kafka_data.glob("*/bootstrap.checkpoint")
    )
    paths = [p for p in paths if p.suffix in (".log", ".checkpoint")]
    assert len(paths) == 11
    for path in paths:
        assert both_ways(path.read_bytes(), generic_only).ok, path


def test_damaged_records_with_valid_crcs_decode_as_without_fast_paths(
    kafka_data: Path, generic_only: Callable[[], AbstractContextManager[None]]
) -> None:
    rng = random.Random(11)
    for dataset in ("partition-v1", "topics-configs", "bootstrap-txn"):
        path = kafka_data / dataset / "__cluster_metadata-0" / "00000000000000000000.log"
        data = path.read_bytes()
        batches = [(b.position, b.size) for b in decode_log(data).batches][:300]
        failures = 0
        for _ in range(300):
            position, size = rng.choice(batches)
            batch = bytearray(data[position : position + size])
            for _ in range(rng.choice((1, 1, 2))):
                spot = rng.randrange(61, size)
                batch[spot] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, batch[spot] ^ 1,
                                          rng.randrange(256)))  # fmt: skip
            batch[17:21] = google_crc32c.value(bytes(batch[21:])).to_bytes(4, "big")
            damaged = bytes(batch)
            result = both_ways(damaged, generic_only)
            failures += result.error is not None
        assert 0 < failures < 300


def test_simulated_logs_decode_as_without_fast_paths(
    generic_only: Callable[[], AbstractContextManager[None]]
) -> None:
    rng = random.Random(3)
    records: list[Any] = [random_partition(rng, i) for i in range(300)]
    records += [sample_record(api_key, version) for api_key, version in ALL_TYPE_VERSIONS]
    records.append(rec.ConfigRecord(resource_type=2, resource_name="t", name="n", value="v" * 300))
    batches = [Batch(base, 1, tuple(records[base : base + 40]), (), base)
               for base in range(0, len(records), 40)]  # fmt: skip
    data = encode_batches(batches, 23)
    with generic_only():
        assert encode_batches(batches, 23) == data
    result = both_ways(data, generic_only)
    assert [d.batch for d in result.batches] == batches


def test_a_batch_of_more_records_than_the_prefix_table_round_trips(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """70,000 NoOpRecords in one batch: past the 65,536 record prefixes built ahead, it
    encodes, decodes (each record's offset delta checked) and re-encodes alike."""
    monkeypatch.setattr(batch_format, "_prefixes", batch_format._prefixes)  # as it was after
    noops = tuple(rec.NoOpRecord() for _ in range(70_000))
    data = encode_batches([Batch(0, 1, noops, (), 5)], 7)
    decoded = decode_log(data)
    assert decoded.error is None and len(decoded.batches[0].batch.records) == 70_000
    assert decoded.batches[0].last_offset == 69_999
    assert [f.version for f in decoded.batches[0].facts[-2:]] == [0, 0]
    assert encode_log(decoded.batches) == data


def test_a_record_of_more_than_4_kib_in_a_batch_declares_its_length() -> None:
    """A ConfigRecord with a 5,000-byte value: its record length (two varint bytes after the
    61-byte header) counts the record's bytes to the batch's end, and the batch reads back."""
    config = rec.ConfigRecord(resource_type=2, resource_name="t", name="n", value="v" * 5000)
    data = encode_batches([Batch(0, 1, (config,), (), 5)], 7)
    raw = data[61] & 0x7F | data[62] << 7
    assert data[61] & 0x80 and raw // 2 == len(data) - 63
    decoded = decode_log(data)
    assert decoded.error is None and decoded.batches[0].batch.records == (config,)


def test_the_source_of_a_generated_decoder_can_be_read() -> None:
    """``fast_source`` shows the code generated for a record version (for debugging)."""
    assert fast_decoder(bytes([1, rec.TopicRecord.API_KEY, 0])) is not None
    text = fast_codec.fast_source("decode_TopicRecord_v0")
    assert text.startswith("def decode_TopicRecord_v0(")
    compile(text, "<source>", "exec")
