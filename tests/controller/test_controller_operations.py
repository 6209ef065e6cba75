"""Operations on the active controller: records, refusals with Kafka's error names, reads."""

from __future__ import annotations

import pytest

from controller import WriteMode
from controller.operations import (
    AllocateProducerIds,
    AlterPartition,
    ConfigChange,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    FeatureUpdate,
    FenceBroker,
    IncrementalAlterConfigs,
    NewTopic,
    Operation,
    RegisterBroker,
    UnfenceBroker,
    UnregisterBroker,
    UpdateFeatures,
)
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from sim.cluster import KRaftCluster
from sim.faults import parse_fault
from tests.controller.conftest import cluster


def run(c: KRaftCluster, op: Operation, mode: WriteMode | None = None) -> str:
    handle = c.submit(op, mode)
    assert c.wait(handle), handle
    assert c.sim.violation is None
    return handle.outcome()


@pytest.fixture(scope="module")
def shared() -> KRaftCluster:
    c = cluster(seed=3, batch=100)
    assert run(c, CreateTopics((NewTopic("foo", 3, 2),))) == "committed"
    return c


@pytest.mark.parametrize(("op", "error"), [
    (CreateTopics((NewTopic("foo", 1, 1),)), "TOPIC_ALREADY_EXISTS"),
    (CreateTopics((NewTopic("bar", 1, 4),)), "INVALID_REPLICATION_FACTOR"),
    (CreateTopics((NewTopic("bar", 0, 1),)), "INVALID_PARTITIONS"),
    (CreateTopics((NewTopic("bad name!", 1, 1),)), "INVALID_TOPIC_EXCEPTION"),
    (CreateTopics((NewTopic("bar", 1, 1, (("retention.ms", "soon"),)),)), "INVALID_CONFIG"),
    (DeleteTopics(("nope",)), "UNKNOWN_TOPIC_OR_PARTITION"),
    (CreatePartitions("foo", 2), "INVALID_PARTITIONS"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "foo", (ConfigChange("no.such.key", "1"),)),
     "INVALID_CONFIG"),
    (IncrementalAlterConfigs(TOPIC_RESOURCE, "nope", (ConfigChange("retention.ms", "1"),)),
     "UNKNOWN_TOPIC_OR_PARTITION"),
    (UpdateFeatures((FeatureUpdate("metadata.version", 3),)), "INVALID_UPDATE_VERSION"),
    (AlterPartition("foo", 7, (0,)), "UNKNOWN_TOPIC_OR_PARTITION"),
    (UnfenceBroker(42), "BROKER_ID_NOT_REGISTERED"),
])
def test_refusals_carry_kafka_error_names_and_write_nothing(
        shared: KRaftCluster, op: Operation, error: str) -> None:
    leader = shared.active_controller()
    assert leader is not None
    end_before = leader.raft.log.end_offset
    assert run(shared, op) == error
    assert leader.raft.log.end_offset == end_before
    assert leader.active


def test_operations_change_what_reads_see() -> None:
    c = cluster(seed=4, batch=100)
    assert run(c, CreateTopics((NewTopic("foo", 4, 3, (("cleanup.policy", "compact"),)),))) \
        == "committed"
    assert run(c, CreatePartitions("foo", 6)) == "committed"
    assert run(c, IncrementalAlterConfigs(TOPIC_RESOURCE, "foo", (
        ConfigChange("retention.ms", "1000"), ConfigChange("cleanup.policy", None, "DELETE"))))\
        == "committed"
    assert run(c, IncrementalAlterConfigs(BROKER_RESOURCE, "1", (
        ConfigChange("log.retention.ms", "5"),))) == "committed"
    assert run(c, AllocateProducerIds(1)) == "committed"
    assert run(c, AlterPartition("foo", 0, (0, 1, 2)[:2])) in ("committed",)
    active = c.active_controller()
    assert active is not None
    image = active.committed_image()
    foo = image.topic("foo")
    assert foo is not None and len(foo.partitions) == 6
    assert dict(image.configs[(TOPIC_RESOURCE, "foo")]) == {"retention.ms": "1000"}
    assert image.configs[(BROKER_RESOURCE, "1")]["log.retention.ms"] == "5"
    assert image.next_producer_id == 1000
    assert run(c, FenceBroker(1)) == "committed"
    image = active.committed_image()
    assert image.brokers[1].fenced
    assert all(1 not in p.isr or p.isr == (1,) for p in image.topic("foo").partitions.values())
    assert all(p.leader != 1 for p in image.topic("foo").partitions.values())
    assert run(c, UnregisterBroker(2)) == "committed"
    assert run(c, RegisterBroker(2)) == "committed"
    assert active.committed_image().brokers[2].fenced
    assert run(c, DeleteTopics(("foo",))) == "committed"
    image = active.committed_image()
    assert image.topic("foo") is None and (TOPIC_RESOURCE, "foo") not in image.configs
    assert run(c, UpdateFeatures((FeatureUpdate("metadata.version", 23),))) == "committed"
    assert active.committed_image().metadata_version == 23


def test_atomic_mode_refuses_an_oversized_operation_and_stays_active() -> None:
    c = cluster(seed=5, batch=10, mode=WriteMode.ATOMIC)
    active = c.active_controller()
    assert active is not None
    end = active.raft.log.end_offset
    handle = c.submit(CreateTopics((NewTopic("big", 30, 1),)))
    assert handle.outcome() == "POLICY_VIOLATION"
    assert active.raft.log.end_offset == end
    assert active.active
    assert run(c, CreateTopics((NewTopic("small", 3, 1),))) == "committed"


def test_transactional_writes_are_acknowledged_only_when_the_end_commits() -> None:
    c = cluster(seed=6, batch=10, fetch=10)
    handle = c.submit(CreateTopics((NewTopic("big", 40, 3),)))
    assert handle.transactional and handle.batch_count == 5
    active = c.active_controller()
    assert active is not None
    assert c.run_until(c.transaction_window_open, 5_000)
    assert not handle.done
    assert active.committed_image().topic("big") is None  # reads never see an open txn
    assert c.wait(handle)
    assert handle.outcome() == "committed"
    assert active.committed_image().topic("big") is not None


def test_losing_leadership_fails_pending_operations_with_not_controller() -> None:
    c = cluster(seed=7, batch=10, fetch=10)
    active = c.active_controller()
    assert active is not None
    handle = c.submit(CreateTopics((NewTopic("big", 40, 3),)))
    c.sim.apply_fault(parse_fault(f"isolate:{active.node_id}@0"))
    assert c.wait(handle, 20_000)
    assert handle.outcome() == "NOT_CONTROLLER"
    assert handle.error is not None and handle.error.retriable
