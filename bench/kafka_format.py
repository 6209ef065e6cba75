"""Benchmark of the Kafka file codec: decode and re-encode real KRaft logs.

Run: ``kraftsim bench files`` (or ``python -m bench.kafka_format [--repeat N]``). Prints
figures, asserts nothing about timing. The main figure is the 1.27 MB
noop-heavy log (17,670 batches): decode (every CRC checked, every record
decoded) and encode back to identical bytes. Best-of-N is the figure to
compare (the machine's other load only ever slows a run down); the median is
printed too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import google_crc32c

from kafka_format import decode_log, encode_batches, encode_log
from metadata import schema as rec
from raft.batch import Batch

SEGMENT = Path("__cluster_metadata-0") / "00000000000000000000.log"
DATA_ENV = "KRAFTSIM_KAFKA_DATA"
"""The environment variable naming the directory of real Kafka files."""


def data_dir(option: str | None) -> Path | None:
    """Where the real Kafka files are: ``--data DIR``, else ``$KRAFTSIM_KAFKA_DATA``, else None."""
    configured = option or os.environ.get(DATA_ENV)
    return Path(configured) if configured else None


def timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(best, median) wall time in seconds over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def report(label: str, size: int, units: int, unit: str, best: float, median: float) -> None:
    """Print one figure line."""
    print(
        f"{label:<34} {size / best / 1e6:7.1f} MB/s  {units / best:11,.0f} {unit}/s  "
        f"best {best * 1e3:7.1f} ms  (median {size / median / 1e6:6.1f} MB/s)"
    )


def bench_log(data_root: Path, name: str, repeat: int) -> None:
    """Decode and re-encode one real log segment."""
    path = data_root / name / SEGMENT
    data = path.read_bytes()
    result = decode_log(data, first_offset=0)
    if result.error is not None:
        print(f"{name}: {result.error.describe()}")
        return
    batches = len(result.batches)
    records = sum(len(b.facts) for b in result.batches)
    print(f"\n{name}: {len(data):,} bytes, {batches:,} batches, {records:,} records")
    best, median = timed(lambda: decode_log(data, first_offset=0), repeat)
    report("  decode (CRC + records)", len(data), batches, "batches", best, median)
    encoded = encode_log(result.batches)
    assert encoded == data, "re-encoding changed the bytes"
    best, median = timed(lambda: encode_log(result.batches), repeat)
    report("  encode (identical bytes)", len(data), batches, "batches", best, median)


def bench_crc_only(data_root: Path, repeat: int) -> None:
    """CRC-32C of every batch of the noop-heavy log, alone."""
    data = (data_root / "noop-heavy" / SEGMENT).read_bytes()
    spans = [(b.position, b.size) for b in decode_log(data).batches]

    def checksums() -> None:
        for position, size in spans:
            google_crc32c.value(data[position + 21 : position + size])

    best, median = timed(checksums, repeat)
    report("  CRC-32C of every batch alone", len(data), len(spans), "batches", best, median)


def bench_simulated_encode(repeat: int) -> None:
    """Encode and decode 20,000 distinct simulated PartitionRecords."""
    topic = "YNY5hm01SZ-bAGeCLAGqWA"
    batches = [
        Batch(base, 1, tuple(
            rec.PartitionRecord(partition_id=base + i, topic_id=topic, replicas=(1, 2, 3),
                                isr=(1, 2, 3), leader=1, leader_epoch=0, partition_epoch=0)
            for i in range(100)
        ), (), 1_000 + base)
        for base in range(0, 20_000, 100)
    ]  # fmt: skip
    data = encode_batches(batches, 22)
    records = 20_000
    print(f"\nsimulated: {records:,} PartitionRecords v1, {len(batches)} batches, {len(data):,} B")
    best, median = timed(lambda: encode_batches(batches, 22), repeat)
    report("  encode from Batch objects", len(data), records, "records", best, median)
    best, median = timed(lambda: decode_log(data), repeat)
    report("  decode (all distinct records)", len(data), records, "records", best, median)


def bench_million_partition_run(tmp: Path) -> None:
    """Write then read back a run of 1,000,000 partitions: MB/s each way."""
    from bench.metadata import topic_records
    from kafka_format import files

    records = topic_records(100, 10_000)
    batches = [Batch(base, 1, tuple(records[base:base + 10_000]), (), base)
               for base in range(0, len(records), 10_000)]
    started = time.perf_counter()
    files.write_node_log(tmp, batches, metadata_version=22)
    write = time.perf_counter() - started
    size = sum(p.stat().st_size for p in (tmp / "__cluster_metadata-0").glob("*.log"))
    started = time.perf_counter()
    log = files.read_log_dir(tmp)
    read = time.perf_counter() - started
    assert [d.batch for d in log.batches] == batches
    print(f"\n1,000,000-partition run: {len(records):,} records, {size / 1e6:.1f} MB; write "
          f"{size / write / 1e6:.1f} MB/s ({write:.1f} s), read back {size / read / 1e6:.1f} "
          f"MB/s ({read:.1f} s), identical records")


def main(argv: list[str] | None = None) -> int:
    """Run every file benchmark; 1 when the Kafka test files are missing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs per figure (default 15)")
    parser.add_argument("--data", metavar="DIR",
                        help=f"the directory of real Kafka files (default ${DATA_ENV})")
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    if data is None:
        print(f"no Kafka test files: give --data DIR or set {DATA_ENV}", file=sys.stderr)
        return 1
    if not (data / "noop-heavy" / SEGMENT).is_file():
        print(f"the Kafka test files are not in {data} (no noop-heavy/{SEGMENT})",
              file=sys.stderr)
        return 1
    crc = google_crc32c.implementation
    print(f"Python {sys.version.split()[0]}, CRC-32C: {crc} implementation")
    bench_log(data, "noop-heavy", args.repeat)
    bench_crc_only(data, args.repeat)
    bench_log(data, "topics-configs", args.repeat)
    bench_log(data, "partition-v1", args.repeat)
    bench_simulated_encode(max(3, args.repeat // 3))
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        bench_million_partition_run(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
