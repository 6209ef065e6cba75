"""Fencing one broker of a 1,000,000-partition cluster, against a bare persistent-map update.

The shape of Kafka's zonal-outage image benchmark: 100,000 topics of 10
partitions, replication factor 3, 300 brokers (each broker holds about
10,000 replicas and leads about 3,300 partitions). The fence is measured in
two halves, as they happen in a cluster:

- controller work: ``FenceBroker.generate`` over the controller's image (the
  broker index finds the broker's partitions; one PartitionChangeRecord each);
- broker publish: a ``MetadataDelta`` replays those records over the image
  and builds the next image (what a broker's loader does at a commit).

The baseline is the least any persistent image could do: one ``immutables.Map``
of the same 1,000,000 partitions (by (topic id, partition)) updated at the
touched keys in one mutation. The ratio (fence / baseline) is printed beside
the issue's aim (within 2x).

Which broker is fenced matters: with replicas on consecutive brokers, eight
brokers in ten hold their ~10,000 replicas in ~3,300 topics (three
partitions each) and two in ten in ~6,700 topics, and the nested image
(topics, then partitions) pays per topic touched. So ten consecutive brokers
(one of each kind in the layout) are fenced, one at a time on the same image,
after one untimed fence; the ratio is printed as the median over them and
the worst of them. Times are the process's CPU time, so that other
processes on a shared machine do not blur the comparison.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
from collections.abc import Callable

import immutables
import msgspec

from controller.operations.base import OperationContext
from controller.operations.brokers import FenceBroker
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage, PartitionRegistration
from metadata.schema import (
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)
from metadata.uuids import random_uuid

Report = Callable[[str], None]


def zonal_records(topics: int, partitions: int, brokers: int,
                  seed: int = 1) -> list[MetadataRecord]:
    """Unfenced registrations of ``brokers`` brokers, then the topics (RF 3, replicas on
    three consecutive brokers, spread round-robin)."""
    rng = random.Random(seed)
    records: list[MetadataRecord] = [
        RegisterBrokerRecord(b, random_uuid(rng), broker_epoch=b + 1, fenced=False)
        for b in range(brokers)]
    slot = 0
    for t in range(topics):
        topic_id = random_uuid(rng)
        records.append(TopicRecord(f"topic-{t}", topic_id))
        for p in range(partitions):
            replicas = tuple((slot + i) % brokers for i in range(3))
            slot += 1
            records.append(PartitionRecord(partition_id=p, topic_id=topic_id,
                                           replicas=replicas, isr=replicas, leader=replicas[0],
                                           leader_epoch=0, partition_epoch=0))
    return records


def _image(records: list[MetadataRecord]) -> MetadataImage:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(records)
    return delta.apply(len(records) - 1, 1)


def _fence_seconds(image: MetadataImage, broker: int) -> tuple[float, float, int]:
    """(controller seconds, publish seconds, PartitionChangeRecords)."""
    started = time.process_time()
    ctx = OperationContext(image, random.Random(0), image.offset + 1, 3000,
                           max_records=10_000_000)
    generated = FenceBroker(broker).generate(ctx)
    generated_at = time.process_time()
    delta = MetadataDelta(image)
    delta.replay_all(generated.records)
    after = delta.apply(image.offset + len(generated.records), 2)
    published_at = time.process_time()
    assert after.brokers[broker].fenced
    changes = sum(isinstance(r, PartitionChangeRecord) for r in generated.records)
    return generated_at - started, published_at - generated_at, changes


def _baseline_seconds(image: MetadataImage, broker: int) -> tuple[float, int]:
    """One flat persistent map of every partition, updated at the broker's partitions."""
    items: dict[tuple[str, int], PartitionRegistration] = {
        (topic_id, pid): reg for topic_id, topic in image.topics_by_id.items()
        for pid, reg in topic.partitions.items()}
    flat: immutables.Map[tuple[str, int], PartitionRegistration] = immutables.Map(items)
    touched = [key for key, reg in flat.items() if broker in reg.replicas]
    started = time.process_time()
    with flat.mutate() as m:
        for key in touched:
            reg = m[key]
            isr = tuple(r for r in reg.isr if r != broker)
            leader = isr[0] if reg.leader == broker else reg.leader
            m[key] = msgspec.structs.replace(reg, isr=isr, leader=leader)
        m.finish()
    return time.process_time() - started, len(touched)


def bench_fence_one_broker(report: Report, topics: int = 100_000, partitions: int = 10,
                           brokers: int = 300, fenced: int = 10) -> float:
    """Fence one broker of 1,000,000 partitions: controller + publish vs a bare map update
    (median ratio over ``fenced`` consecutive brokers; the worst is printed too)."""
    gc.collect()
    started = time.perf_counter()
    image = _image(zonal_records(topics, partitions, brokers))
    gc.freeze()  # as a long-lived image is: full collections skip it
    built = time.perf_counter() - started
    _fence_seconds(image, brokers - 1)  # untimed: the first fence after the build
    fences = [_fence_seconds(image, b) for b in range(fenced)]
    baselines = [_baseline_seconds(image, b)[0] for b in range(fenced)]
    touched = _baseline_seconds(image, 0)[1]
    gc.unfreeze()
    ratios = [(c + p) / base for (c, p, _), base in zip(fences, baselines, strict=True)]
    ratio = statistics.median(ratios)
    controller = statistics.median(f[0] for f in fences)
    publish = statistics.median(f[1] for f in fences)
    baseline = statistics.median(baselines)
    report(f"fence one broker of {topics * partitions:,} partitions ({topics:,} topics x "
           f"{partitions}, RF 3, {brokers} brokers; image built in {built:.1f} s): "
           f"{fences[0][2]:,} PartitionChangeRecords; median of brokers 0-{fenced - 1}: "
           f"controller {controller * 1000:.0f} ms + broker publish {publish * 1000:.0f} ms "
           f"(CPU) vs a bare immutables.Map update of the {touched:,} touched partitions "
           f"{baseline * 1000:.0f} ms: ratio {ratio:.2f}, worst broker {max(ratios):.2f} "
           f"(aim <= 2)")
    return ratio
