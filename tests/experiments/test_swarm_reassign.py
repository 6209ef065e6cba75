"""The swarm's partition reassignments: how they are drawn and replayed, how they are
judged after the heal, and a small sweep in which every run holds."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from broker.lifecycle import BrokerLifecycleManager
from controller.broker_service import ControllerBrokerService
from controller.errors import ApiError
from controller.handle import OperationHandle
from controller.operations.partition_change import reassignment_in_progress
from experiments import shrink as shrinking
from experiments import swarm_reassign, swarm_run
from experiments.common import partitions_for
from experiments.swarm_reassign import (
    CANCEL_INVARIANT,
    REASSIGN_INVARIANT,
    REFUSED_INVARIANT,
    created_replicas,
    partition_error,
    reassign_problem,
    unsettled,
)
from experiments.swarm_setup import (
    MAX_BROKERS,
    REASSIGN_KINDS,
    SwarmFault,
    SwarmSetup,
    WorkOp,
    draw_reassignments,
    draw_setup,
    merge_ops,
    setup_params,
)
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.schema import PartitionRecord, RegisterBrokerRecord, TopicRecord
from tests.experiments.helpers import replay_swarm, run, spec, without_wall

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"

QUIET = msgspec.structs.replace(
    draw_setup(1, {"faults": "none", "ops": "0"}), controllers=1, brokers=4,
    batch_records=4, snapshot_every=0, horizon_ms=3_000, kinds=())
"""One controller, four brokers, no fault: the setup the hand-made workloads run in."""


def _same(setup: SwarmSetup, seed: int) -> bool:
    """``setup`` is what its parameters redraw (the fault kinds aside)."""
    again = draw_setup(seed, setup_params(setup))
    return msgspec.structs.replace(again, kinds=setup.kinds) == setup


def test_reassignments_are_drawn_for_created_topics_with_one_to_three_brokers() -> None:
    """Every drawn reassignment names a partition of a topic the workload creates, at or
    after the create, and resolves to 1..min(3, brokers) distinct brokers of the cluster,
    not always in id order; cancels come alone and right after a reassignment."""
    setups = [(seed, draw_setup(seed, {})) for seed in range(80)]
    kinds = {op.kind for _, s in setups for op in s.ops}
    assert {"reassign", "cancel"} <= kinds
    unsorted = 0
    for _seed, setup in setups:
        creates = {op.topic: op for op in setup.ops if op.kind == "create"}
        for op in setup.ops:
            if op.kind not in REASSIGN_KINDS:
                continue
            assert setup.brokers > 0
            create = creates[op.topic]
            assert op.at_ms >= create.at_ms
            assert 0 <= op.partition < partitions_for(create.batches, setup.batch_records)
            target = op.target(setup.brokers)
            if op.kind == "cancel":
                assert target is None
                continue
            assert target is not None
            assert sorted(op.order) == list(range(MAX_BROKERS))
            assert 1 <= len(target) <= min(3, setup.brokers)
            assert len(set(target)) == len(target)
            assert all(0 <= b < setup.brokers for b in target)
            unsorted += list(target) != sorted(target)
    assert unsorted > 0


def test_a_target_shrinks_with_the_cluster() -> None:
    op = WorkOp("reassign", 0, "t0", partition=3, order=(4, 1, 3, 0, 2), replicas=3)
    assert [op.target(n) for n in (5, 4, 3, 2, 1)] == [
        (4, 1, 3), (1, 3, 0), (1, 0, 2), (1, 0), (0,)]
    assert WorkOp("cancel", 0, "t0", partition=3).target(5) is None


def _draws(ops: tuple[WorkOp, ...]) -> list[tuple[WorkOp, WorkOp | None]]:
    """``draw_reassignments``'s answer as its draws: a cancel alone, or a reassignment and
    the cancel that follows it (the next operation, same partition, within 20 ms)."""
    draws: list[tuple[WorkOp, WorkOp | None]] = []
    i = 0
    while i < len(ops):
        op, after = ops[i], ops[i + 1] if i + 1 < len(ops) else None
        if op.kind == "reassign" and after is not None and after.kind == "cancel" \
                and after.partition == op.partition and 0 <= after.at_ms - op.at_ms < 20:
            draws.append((op, after))
            i += 2
        else:
            draws.append((op, None))
            i += 1
    return draws


def test_reassignments_are_drawn_as_the_docs_say() -> None:
    """Over 300 streams: each operation at or after its topic's create and before the
    horizon, 0 to 4 draws a run, a fifth of them cancels alone, a third of the
    reassignments followed by a cancel 0 to 19 ms later, targets of 1 to 3 replicas."""
    workload = (WorkOp("create", 100, "t0", batches=6), WorkOp("create", 200, "t1", batches=3))
    per_run, draws = set(), []
    for seed in range(300):
        ops = draw_reassignments(random.Random(f"test/{seed}"), workload, 10, 10_000)
        created = {create.topic: create.at_ms for create in workload}
        assert all(created[op.topic] <= op.at_ms < 10_000 for op in ops)
        drawn = _draws(ops)
        per_run.add(len(drawn))
        draws += drawn
    assert per_run == {0, 1, 2, 3, 4}
    alone = [op for op, _ in draws if op.kind == "cancel"]
    assert 0.15 < len(alone) / len(draws) < 0.25
    reassigns = [(op, cancel) for op, cancel in draws if op.kind == "reassign"]
    followed = [cancel.at_ms - op.at_ms for op, cancel in reassigns if cancel is not None]
    assert 0.29 < len(followed) / len(reassigns) < 0.38
    assert (min(followed), max(followed)) == (0, 19)
    assert {op.replicas for op, _ in reassigns} == {1, 2, 3}


def test_reassignments_are_drawn_within_the_horizon() -> None:
    """A topic created in the horizon's last ms is reassigned (and cancelled) in that ms,
    never at or after the horizon."""
    workload = (WorkOp("create", 999, "t0", batches=2),)
    ops = [op for seed in range(100)
           for op in draw_reassignments(random.Random(f"test/{seed}"), workload, 4, 1_000)]
    assert {op.kind for op in ops} == {"reassign", "cancel"}
    assert {op.at_ms for op in ops} == {999}


def test_a_drawn_reassignment_at_the_moment_of_its_create_comes_after_it() -> None:
    """Merged by time, and at the same ms the workload's operation first (so that a topic is
    created before it is reassigned), whatever the operations' places in their lists."""
    workload = (WorkOp("create", 0, "t0", 1), WorkOp("alter-broker", 5, value=1),
                WorkOp("create", 5, "t2", 1))
    more = (WorkOp("reassign", 5, "t2", partition=0, order=(0, 1, 2, 3, 4), replicas=1),
            WorkOp("cancel", 7, "t0"))
    assert merge_ops(workload, more) == (workload[0], workload[1], workload[2], more[0],
                                         more[1])


def test_a_given_shorter_horizon_drops_the_operations_at_or_after_it() -> None:
    """``horizon-ms=T`` keeps the drawn operations before T, not the one drawn at T."""
    drawn = draw_setup(1, {})
    op = drawn.ops[-1]
    assert op.at_ms > drawn.ops[0].at_ms
    shorter = draw_setup(1, {"horizon-ms": str(op.at_ms)})
    assert shorter.ops == tuple(o for o in drawn.ops if o.at_ms < op.at_ms)
    assert op not in shorter.ops


@pytest.mark.parametrize("seed", range(12))
def test_the_drawn_workload_round_trips_through_the_parameters(seed: int) -> None:
    """The parameters of a drawn setup redraw it, reassignments included; ``ops=N`` keeps
    the first N operations; without brokers no reassignment is drawn and the other
    operations are the same."""
    drawn = draw_setup(seed, {})
    assert _same(drawn, seed)
    for count in range(len(drawn.ops) + 1):
        assert draw_setup(seed, {"ops": str(count)}).ops == drawn.ops[:count]
    none = draw_setup(seed, {"brokers": "0"})
    assert none.ops == tuple(op for op in drawn.ops if op.kind not in REASSIGN_KINDS)


@pytest.mark.parametrize("seed", [1, 4, 9, 17])
def test_every_shrinking_step_is_a_replayable_setup(seed: int) -> None:
    """Each setup the shrinker may propose (fewer faults, fewer operations, a shorter
    schedule, fewer controllers or brokers, Kafka's defaults) is exactly what its
    parameters redraw, so a shrunk reproduction's replay command reruns it; without
    brokers its reassignments go, as a drawn run without brokers has none."""
    setup = draw_setup(seed, {})
    assert any(op.kind in REASSIGN_KINDS for op in setup.ops), seed
    proposers = (shrinking._fewer_faults, shrinking._fewer_ops, shrinking._shorter,
                 shrinking._smaller_cluster, shrinking._defaults)
    candidates = [c for propose in proposers for c in propose(setup)]
    assert any(c.brokers == 0 for c in candidates)
    for candidate in candidates:
        assert _same(candidate, seed), candidate


def _image(replicas: tuple[int, ...], isr: tuple[int, ...], leader: int,
           adding: tuple[int, ...] = (), removing: tuple[int, ...] = ()) -> MetadataImage:
    """Topic t0 whose partition 0 has the given replicas and ISR (created on 0, 1, 2)."""
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay(TopicRecord("t0", TOPIC_ID))
    delta.replay(PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=replicas,
                                 isr=isr, leader=leader, adding_replicas=adding,
                                 removing_replicas=removing))
    return delta.apply(2, 1)


CREATED = {(TOPIC_ID, 0): (0, 1, 2)}
REASSIGN = WorkOp("reassign", 10, "t0", partition=0, order=(3, 1, 0, 2, 4), replicas=2)
"""Partition t0-0 to brokers 3 and 1, in that order, in a cluster of four."""
CANCEL = WorkOp("cancel", 20, "t0", partition=0)


def _handle(error: str | None = "NONE", records: int = 1, failed: str | None = None,
            written: bool = True) -> OperationHandle:
    """A reassignment's handle: answered with ``error`` for the partition, or failed with
    ``failed`` (after it was written, or before)."""
    handle = OperationHandle(1, "AlterPartitionReassignments(t0-0 ...)", 3000, 0,
                             "transactional")
    if written:
        handle.first_offset, handle.last_offset = 5, 4 + records
        handle.record_count = records
    if failed is not None:
        handle.fail(ApiError(failed, ""), 10)
        return handle
    handle.response = {"responses": [{"name": "t0", "partitions": [
        {"partitionIndex": 0, "errorCode": error, "errorMessage": None}]}]}
    handle.commit(10)
    return handle


def _problem(image: MetadataImage, submitted: list[tuple[WorkOp, OperationHandle]],
             index: int = 0, deletes: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    return reassign_problem(image, QUIET, submitted, index, set(deletes), CREATED)


def test_an_acknowledged_reassignment_must_have_completed() -> None:
    """Replicas the target in its order, nothing being added or removed, the leader in
    the target, the ISR within the replicas: each broken alone is found and named."""
    acked = [(REASSIGN, _handle())]
    assert _problem(_image((3, 1), (1, 3), 3), acked) is None
    broken = {
        "replicas [1, 3] are not the target": _image((1, 3), (1, 3), 3),
        "still being reassigned": _image((3, 1), (1, 3), 1, adding=(3,)),
        "leader 0 is not in the target": _image((3, 1), (1, 3), 0),
        "leader -1 is not in the target": _image((3, 1), (1, 3), -1),
        "ISR members [2] are not replicas": _image((3, 1), (1, 2, 3), 3),
    }
    for what, image in broken.items():
        found = _problem(image, acked)
        assert found is not None and found[0] == REASSIGN_INVARIANT, what
        assert found[1].startswith("partition t0-0, target [3, 1]: "), found
        assert what in found[1], found
    gone = _problem(MetadataImage.EMPTY, acked)
    assert gone == (REASSIGN_INVARIANT, "partition t0-0 does not exist")


def test_a_replaced_or_deleted_reassignment_is_not_judged() -> None:
    """A later cancel that may have applied (acknowledged, or failed after it was
    written) replaces it; a refused one or one never written does not; a delete of the
    topic that may have applied ends it."""
    stuck = _image((3, 1, 0, 2), (0, 1, 2), 0, adding=(3,), removing=(0, 2))
    for later, replaces in ((_handle(), True), (_handle(failed="NOT_CONTROLLER"), True),
                            (_handle("NO_REASSIGNMENT_IN_PROGRESS", 0), False),
                            (_handle(failed="NOT_CONTROLLER", written=False), False)):
        found = _problem(stuck, [(REASSIGN, _handle()), (CANCEL, later)])
        assert (found is None) == replaces, later
    assert _problem(stuck, [(REASSIGN, _handle())], deletes=frozenset({"t0"})) is None


def test_an_acknowledged_cancel_leaves_no_reassignment_in_progress() -> None:
    acked = [(CANCEL, _handle())]
    assert _problem(_image((0, 1, 2), (0, 1, 2), 0), acked) is None
    found = _problem(_image((3, 1, 0, 2), (0, 1, 2), 0, adding=(3,), removing=(0, 2)), acked)
    assert found == (CANCEL_INVARIANT, "partition t0-0 is still being reassigned after the "
                     "cancel (replicas [3, 1, 0, 2], adding [3], removing [0, 2], ISR "
                     "[0, 1, 2], leader 0)")


def test_a_refused_reassignment_changed_nothing() -> None:
    """Refused for the partition or failed before it was written: it wrote no record, and
    while nothing else may have moved the partition it keeps the replicas it was created
    with, no reassignment in progress."""
    created = _image((0, 1, 2), (0, 1, 2), 0)
    moved = _image((3, 1), (1, 3), 3)
    for refused in (_handle("UNKNOWN_TOPIC_OR_PARTITION", 0),
                    _handle(failed="NOT_CONTROLLER", written=False)):
        for op in (REASSIGN, CANCEL):
            assert _problem(created, [(op, refused)]) is None
            found = _problem(moved, [(op, refused)])
            assert found is not None and found[0] == REFUSED_INVARIANT
            assert "was created on [0, 1, 2] and now has replicas [3, 1]" in found[1], found
            # an accepted reassignment of the same partition may have moved it
            assert _problem(moved, [(REASSIGN, _handle()), (op, refused)], index=1) is None
    wrote = _problem(created, [(REASSIGN, _handle("INVALID_REPLICA_ASSIGNMENT", 2))])
    assert wrote == (REFUSED_INVARIANT, "refused with INVALID_REPLICA_ASSIGNMENT but wrote "
                                        "2 record(s) at offsets 5-6")
    never_written = _problem(moved, [(REASSIGN, _handle(failed="NOT_CONTROLLER",
                                                        written=False))])
    assert never_written == (REFUSED_INVARIANT, "refused with NOT_CONTROLLER, yet partition "
                             "t0-0 was created on [0, 1, 2] and now has replicas [3, 1], "
                             "adding [], removing [], ISR [1, 3], leader 3")
    # another refused one of the partition excuses nothing
    assert _problem(moved, [(REASSIGN, _handle("UNKNOWN_TOPIC_OR_PARTITION", 0)),
                            (CANCEL, _handle("NO_REASSIGNMENT_IN_PROGRESS", 0))]) is not None
    # a partition whose creation the history does not hold is not judged
    assert reassign_problem(moved, QUIET, [(REASSIGN, _handle(failed="NOT_CONTROLLER",
                                                             written=False))],
                            0, set(), {}) is None


def test_a_failed_reassignment_that_was_written_may_have_applied() -> None:
    """Failed after it was written (the controller lost its leadership, say), it may have
    been committed: neither its partition's move nor its staying put is a violation."""
    failed = _handle(failed="NOT_CONTROLLER")
    for image in (_image((0, 1, 2), (0, 1, 2), 0), _image((3, 1), (1, 3), 3),
                  _image((3, 1, 0, 2), (0, 1, 2), 0, adding=(3,), removing=(0, 2))):
        for op in (REASSIGN, CANCEL):
            assert _problem(image, [(op, failed)]) is None


def test_a_reassignment_of_another_partition_replaces_nothing() -> None:
    """Only a later reassignment or cancel of the same partition replaces an acknowledged
    one: of another partition, or of another topic, it does not."""
    stuck = _image((3, 1, 0, 2), (0, 1, 2), 0, adding=(3,), removing=(0, 2))
    for later in (WorkOp("reassign", 30, "t0", partition=1, order=(0, 1, 2, 3, 4),
                         replicas=1),
                  WorkOp("cancel", 30, "t1", partition=0)):
        found = _problem(stuck, [(REASSIGN, _handle()), (later, _handle())])
        assert found is not None and found[0] == REASSIGN_INVARIANT, later


def _cluster(image: MetadataImage, shutting: tuple[int, ...] = (),
             active: bool = True) -> Any:
    """A stand-in for a KRaftCluster of brokers 0-2 whose active controller has ``image``."""
    controller = SimpleNamespace(committed_image=lambda: image)
    return SimpleNamespace(
        sim=SimpleNamespace(slots={n: SimpleNamespace(shutting_down=n in shutting)
                                   for n in (0, 1, 2, 3000)}),
        active_controller=lambda: controller if active else None,
        config=SimpleNamespace(broker_ids=[0, 1, 2]))


def _brokers(*records: RegisterBrokerRecord) -> MetadataImage:
    delta = MetadataDelta(_image((0, 1, 2), (0, 1, 2), 0))
    for record in records:
        delta.replay(record)
    return delta.apply(3, 1)


def test_unsettled_names_what_the_healed_cluster_still_waits_for() -> None:
    """The reason a run does not settle, in order: a node still shutting down, brokers
    fenced or unregistered, brokers in controlled shutdown, a partition being reassigned
    (nothing to say without an active controller: the timeout alone is the reason)."""
    up = [RegisterBrokerRecord(b, broker_epoch=10 + b, fenced=False) for b in (0, 1, 2)]
    assert unsettled(_cluster(_brokers(*up))) is None
    assert unsettled(_cluster(_brokers(*up), shutting=(1,))) == \
        "node(s) [1] still shutting down"
    assert unsettled(_cluster(_brokers(*up), shutting=(1,), active=False)) == \
        "node(s) [1] still shutting down"
    assert unsettled(_cluster(_brokers(*up), active=False)) is None
    fenced = _brokers(up[0], RegisterBrokerRecord(1, broker_epoch=11))
    assert unsettled(_cluster(fenced)) == "broker(s) [1, 2] still fenced or unregistered"
    stopping = _brokers(up[0], up[1], RegisterBrokerRecord(2, broker_epoch=12, fenced=False,
                                                           in_controlled_shutdown=True))
    assert unsettled(_cluster(stopping)) == "broker(s) [2] still in controlled shutdown"
    moving = MetadataDelta(_image((3, 1, 0, 2), (0, 1, 2), 0, adding=(3,), removing=(0, 2)))
    for record in up:
        moving.replay(record)
    assert unsettled(_cluster(moving.apply(3, 1))) == (
        "partition t0-0 is still being reassigned (replicas [3, 1, 0, 2], adding [3], "
        "removing [0, 2], ISR [0, 1, 2], leader 0)")


def test_reassignments_and_cancels_are_acknowledged_and_checked() -> None:
    """No fault (seed 1 places t0-0 on 1, 2, 3 and t0-3 on 0, 1, 2): t0-0 reassigned to
    3, 1; t0-3 to the new broker 3 and cancelled in the same ms; a cancel of t0-0 with
    nothing to cancel. The first completes, the second goes back to the replicas it was
    created with, the third is refused; the run is ok and the final state holds the
    first target."""
    setup = msgspec.structs.replace(QUIET, ops=(
        WorkOp("create", 100, "t0", 2),
        WorkOp("reassign", 400, "t0", partition=0, order=(3, 1, 0, 2, 4), replicas=2),
        WorkOp("reassign", 500, "t0", partition=3, order=(3, 4, 2, 1, 0), replicas=1),
        WorkOp("cancel", 500, "t0", partition=3),
        WorkOp("cancel", 600, "t0", partition=0)))
    seen: dict[str, Any] = {}
    judge = swarm_run._judge

    def spy(cluster: Any, *args: Any) -> swarm_run.Outcome:
        seen["cluster"], seen["submitted"] = cluster, args[2]
        return judge(cluster, *args)
    outcome = _simulate(setup, spy)
    assert (outcome.verdict, outcome.acknowledged, outcome.failed_ops) == ("ok", 5, 0)
    errors = [h.response["responses"][0]["partitions"][0]["errorCode"]
              for _, h in seen["submitted"][1:]]
    assert errors == ["NONE", "NONE", "NONE", "NO_REASSIGNMENT_IN_PROGRESS"]
    active = seen["cluster"].active_controller()
    partitions = active.committed_image().topic("t0").partitions
    assert partitions[0].replicas == (3, 1) and partitions[0].leader in (3, 1)
    assert partitions[3].replicas == (0, 1, 2)
    assert not any(reassignment_in_progress(reg) for reg in partitions.values())
    # the replicas each partition was created with, which the refused rule compares with
    topic_id = active.committed_image().topics_by_name["t0"]
    created = created_replicas(seen["cluster"])
    assert set(created) == {(topic_id, p) for p in partitions}
    assert created[(topic_id, 0)] == (1, 2, 3) and created[(topic_id, 3)] == (0, 1, 2)


def _simulate(setup: SwarmSetup, judge: Any = None) -> swarm_run.Outcome:
    """Run ``setup`` (seed 1, transactional, 20 s to settle), ``judge`` spying if given."""
    if judge is None:
        return swarm_run.simulate(1, "transactional", frozenset(), setup, 20_000)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(swarm_run, "_judge", judge)
        return swarm_run.simulate(1, "transactional", frozenset(), setup, 20_000)


def test_a_reassignment_that_cannot_complete_does_not_settle(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the controller deaf to AlterPartition (a deliberately broken cluster) the new
    replica never joins the ISR: the run is non_terminating and says which partition is
    still being reassigned."""
    monkeypatch.setattr(ControllerBrokerService, "_on_alter_partition",
                        lambda self, src, req: None)
    setup = msgspec.structs.replace(QUIET, ops=(
        WorkOp("create", 100, "t0", 2),
        WorkOp("reassign", 400, "t0", partition=3, order=(3, 0, 1, 2, 4), replicas=1)))
    outcome = _simulate(setup)
    assert (outcome.verdict, outcome.valid) == ("non_terminating", "unknown")
    assert outcome.message is not None
    assert outcome.message.startswith(
        "the cluster did not settle within 20000 ms of the horizon: partition t0-3 is "
        "still being reassigned (replicas [3, "), outcome.message
    assert "adding [3]" in outcome.message


def test_a_broker_in_controlled_shutdown_at_the_horizon_is_restarted_once_stopped() -> None:
    """A broker leading partitions shuts down 1 ms before the horizon: the heal finds it
    still running (moving its leaderships away), so it is restarted once it has stopped,
    and the run settles with every broker back and unfenced."""
    setup = msgspec.structs.replace(
        QUIET, horizon_ms=1_000, ops=(WorkOp("create", 100, "t0", 1),),
        faults=(SwarmFault("shutdown", 999, "0"),), kinds=("shutdown",))
    seen: dict[str, Any] = {}
    judge = swarm_run._judge

    def spy(cluster: Any, *args: Any) -> swarm_run.Outcome:
        seen["brokers"] = cluster.active_controller().committed_image().brokers
        seen["shutting_down"] = cluster.sim.slots[0].shutting_down
        return judge(cluster, *args)
    started = _simulate(msgspec.structs.replace(setup, faults=(), kinds=()), spy)
    first_epoch = seen["brokers"][0].epoch
    outcome = _simulate(setup, spy)
    assert (started.verdict, outcome.verdict) == ("ok", "ok"), outcome.message
    broker = seen["brokers"][0]
    assert not seen["shutting_down"]
    assert broker.epoch > first_epoch  # registered anew: it was restarted
    assert not broker.fenced and not broker.in_controlled_shutdown


def test_a_shutdown_that_never_ends_uses_up_the_settle_time_and_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker whose controlled shutdown never completes (a deliberately broken broker):
    the run is non_terminating after exactly ``settle-ms`` past the heal (waiting for the
    shutdown counts against it) and its message names the node."""
    monkeypatch.setattr(BrokerLifecycleManager, "shutdown_complete", property(lambda _: False))
    healed: list[int] = []
    heal_all = swarm_run._heal_all

    def heal(cluster: Any) -> None:
        healed.append(cluster.sim.now)
        heal_all(cluster)
    monkeypatch.setattr(swarm_run, "_heal_all", heal)
    setup = msgspec.structs.replace(
        QUIET, horizon_ms=1_000, ops=(WorkOp("create", 100, "t0", 1),),
        faults=(SwarmFault("shutdown", 999, "0"),), kinds=("shutdown",))
    outcome = swarm_run.simulate(1, "transactional", frozenset(), setup, 3_000)
    assert (outcome.verdict, outcome.message) == (
        "non_terminating", "the cluster did not settle within 3000 ms of the horizon: "
        "node(s) [0] still shutting down")
    assert len(healed) == 1 and outcome.simulated_ms == healed[0] + 3_000


def test_a_small_sweep_holds_every_rule() -> None:
    """Sixty drawn worlds (wipes left out: they may leave the model) in transactional mode:
    every run is ok, and between them reassignments are acknowledged and refused and
    cancels refused, so the rules were applied (an acknowledged cancel is rare in so few
    runs: the test above has one)."""
    answers: dict[str, int] = {}
    judge = swarm_run._judge

    def spy(cluster: Any, setup: SwarmSetup, mode: str, submitted: Any, *rest: Any
            ) -> swarm_run.Outcome:
        for op, handle in submitted:
            if op.kind in REASSIGN_KINDS:
                key = f"{op.kind} {partition_error(handle) or handle.outcome()}"
                answers[key] = answers.get(key, 0) + 1
        return judge(cluster, setup, mode, submitted, *rest)
    verdicts = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(swarm_run, "_judge", spy)
        for seed in range(60):
            drawn = draw_setup(seed, {})
            setup = msgspec.structs.replace(
                drawn, faults=tuple(f for f in drawn.faults if f.kind != "wipe"))
            outcome = swarm_run.simulate(seed, "transactional", frozenset(), setup, 60_000)
            verdicts.append((seed, outcome.verdict, outcome.message))
    assert [v for v in verdicts if v[1] != "ok"] == []
    for key in ("reassign NONE", "reassign UNKNOWN_TOPIC_OR_PARTITION",
                "cancel NO_REASSIGNMENT_IN_PROGRESS"):
        assert answers.get(key, 0) > 0, answers


def test_a_failing_run_with_reassignments_shrinks_to_a_replay_of_the_same_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With a judge that finds every acknowledged reassignment incomplete (deliberately
    wrong), index 4 of seed 1 (three brokers, twelve operations) is a violation. Its shrunk
    reproduction, a replay command with every drawn value given, keeps a reassignment
    and reruns exactly that run: the same verdict and message, nothing left to shrink."""
    monkeypatch.setattr(swarm_reassign, "_incomplete", lambda reg, target: ["broken"])
    row = run(spec("swarm", 4, mode="transactional", shrink_budget=40))
    assert (row["verdict"], row["invariant"]) == ("violation", REASSIGN_INVARIANT)
    assert row["shrunk_size"] < row["fault_count"] + row["operations"] + row["controllers"] \
        + row["brokers"]
    reproduced = replay_swarm(row["shrunk_replay"], tmp_path / "shrunk.jsonl")
    assert (reproduced["verdict"], reproduced["invariant"], reproduced["shrink_runs"]) == (
        "violation", REASSIGN_INVARIANT, 0)
    assert reproduced["replay"] == row["shrunk_replay"]
    assert reproduced["shrunk_size"] is None
    assert reproduced["fault_count"] + reproduced["operations"] + reproduced["controllers"] \
        + reproduced["brokers"] == row["shrunk_size"]
    again = replay_swarm(row["shrunk_replay"], tmp_path / "again.jsonl")
    assert without_wall(again) == without_wall(reproduced)
