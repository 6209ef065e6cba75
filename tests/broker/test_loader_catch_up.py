"""A broker that catches up from a snapshot publishes it (no new commit needed)."""

from __future__ import annotations

from broker import Manifest, MetadataImage, MetadataLoader
from controller.operations import CreateTopics, NewTopic
from metadata.schema import TopicRecord
from raft import Batch
from tests.controller.conftest import cluster


def test_a_restarted_broker_publishes_a_snapshot_at_the_log_end_without_new_commits() -> None:
    c = cluster(seed=3, noop_ms=0, snapshot_every=1)
    c.sim.crash(0)
    for name in ("a", "b", "c"):
        handle = c.submit(CreateTopics((NewTopic(name, 2, 3),)))
        assert c.wait(handle, 10_000) and handle.error is None
    assert c.run_until(c.idle, 10_000)
    active = c.active_controller()
    assert active is not None
    end = active.raft.log.end_offset
    assert active.raft.log.start_offset > 0  # the broker's next offset is gone: a snapshot
    c.sim.restart(0)
    c.sim.run_for(5_000)  # nothing new commits: no NoOps, no operations
    assert c.sim.violation is None, c.sim.violation
    assert active.raft.log.end_offset == end
    loader = c.loader(0)
    assert loader is not None
    assert loader.published is not None, "the restarted broker published nothing"
    assert loader.published_offset == end - 1
    assert loader.published.topic("c") is not None


def test_a_publisher_subscribed_late_gets_the_current_image_at_once() -> None:
    loader = MetadataLoader(1)
    batch = Batch(0, 1, (TopicRecord("late", "AAAAAAAAAAAAAAAAAAAAAg"),))
    loader.handle_commit((batch,), batch.end_offset)
    assert loader.published_offset == 0
    seen: list[tuple[MetadataImage, Manifest]] = []
    loader.subscribe(lambda image, manifest: seen.append((image, manifest)))
    assert len(seen) == 1
    image, manifest = seen[0]
    assert image is loader.published and image.topic("late") is not None
    assert manifest.offset == 0
    later = Batch(1, 1, (TopicRecord("later", "AAAAAAAAAAAAAAAAAAAAAw"),))
    loader.handle_commit((later,), later.end_offset)
    assert [i.offset for i, _ in seen] == [0, 1]


def test_a_publisher_subscribed_before_any_image_gets_nothing_yet() -> None:
    loader = MetadataLoader(1)
    seen: list[MetadataImage] = []
    loader.subscribe(lambda image, manifest: seen.append(image))
    assert seen == []
