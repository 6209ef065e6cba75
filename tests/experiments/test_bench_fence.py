"""The fence benchmark fences what it says and reports its ratio (no figure is asserted)."""

from __future__ import annotations

import re

from bench.broker_fence import _fence_seconds, _image, bench_fence_one_broker, zonal_records


def test_a_fence_changes_every_partition_of_the_broker_and_fences_it() -> None:
    image = _image(zonal_records(topics=40, partitions=10, brokers=12))
    held = sum(1 for topic in image.topics_by_id.values()
               for reg in topic.partitions.values() if 3 in reg.replicas)
    controller_s, publish_s, changes = _fence_seconds(image, 3)
    assert changes == held  # every partition it is in leaves its ISR (RF 3: others remain)
    assert controller_s >= 0 and publish_s >= 0


def test_the_report_gives_the_median_the_worst_broker_and_kafkas_broker_0() -> None:
    lines: list[str] = []
    ratio = bench_fence_one_broker(lines.append, topics=60, partitions=10, brokers=15,
                                   fenced=3, repeats=2)
    assert ratio > 0
    assert len(lines) == 1
    assert "best of 2" in lines[0] and "median of brokers 0-2" in lines[0]
    assert re.search(r"ratio \d+\.\d\d, worst broker \d+\.\d\d, broker 0 \(the one Kafka's "
                     r"zonal-outage benchmark perturbs\) \d+\.\d\d \(aim <= 2\)", lines[0])
