"""Consume-transform-produce end to end: each input record's output exactly once, under faults."""

from __future__ import annotations

import pytest

from broker.txn.mutations import TxnMutation
from sim.cluster import ClusterConfig, KRaftCluster
from sim.eos_world import EosSettings, EosWorld, eos_monitors
from sim.faults import parse_fault
from sim.txn_clients import TxnProducerState
from sim.world import InvariantViolation


def _world(settings: EosSettings, seed: int = 1) -> EosWorld:
    txn, eos = eos_monitors()
    cluster = KRaftCluster(ClusterConfig(seed=seed, controllers=3, brokers=3),
                           extra_monitors=[txn, eos])
    cluster.start()
    world = EosWorld(cluster, settings, txn, eos if settings.transactional else None)
    assert world.setup()
    cluster.sim.run_for(500)
    world.start()
    return world


def _finish(world: EosWorld) -> None:
    sim = world.cluster.sim
    assert sim.run_until_true(world.finished, 120_000), sim.violation
    sim.run_for(2_000)
    assert sim.violation is None


def _fault(world: EosWorld, text: str) -> None:
    sim = world.cluster.sim
    sim.apply_fault(parse_fault(f"{text}@{sim.now}"))


def test_every_input_record_yields_one_committed_output() -> None:
    world = _world(EosSettings(records=20))
    _finish(world)
    check = world.final_check()
    assert (check.outputs, check.duplicates, check.missing, check.aborted_reads) == (20, 0, 0, 0)
    loop = world.loops[0]
    assert loop.committed_txns == 4 and loop.aborted_txns == 0


def test_an_aborted_transaction_is_consumed_again_from_the_committed_offset() -> None:
    world = _world(EosSettings(records=20))
    loop = world.loops[0]
    assert world.cluster.sim.run_until_true(lambda: loop.committed_txns >= 1, 30_000)
    loop.abort_next = True
    _finish(world)
    check = world.final_check()
    assert world.loops[0].aborted_txns == 1
    assert (check.outputs, check.duplicates, check.missing) == (20, 0, 0)


@pytest.mark.parametrize("fault", ["producer", "coordinator", "output-leader"])
def test_exactly_once_survives_a_failure_in_the_middle(fault: str) -> None:
    world = _world(EosSettings(records=20))
    sim = world.cluster.sim
    loop = world.loops[0]
    assert sim.run_until_true(lambda: loop.committed_txns >= 1 and loop.busy, 30_000)
    if fault == "producer":
        loop.crash_producer()
    else:
        broker = world.txns.find_coordinator(loop.name) if fault == "coordinator" else \
            world.cluster.partition_leader("out", 0)
        assert broker is not None
        _fault(world, f"crash:{broker}")
        sim.run_for(12_000)  # past the broker session timeout, then back
        _fault(world, f"restart:{broker}")
    _finish(world)
    check = world.final_check()
    assert (check.outputs, check.duplicates, check.missing, check.aborted_reads) == (20, 0, 0, 0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_fenced_zombie_cannot_commit_its_output(seed: int) -> None:
    """The instance is cut off once its second transaction has a partition in it: the new
    instance's InitProducerId fences it before its EndTxn, so that transaction never
    commits and the zombie's next request fails PRODUCER_FENCED."""
    world = _world(EosSettings(records=20), seed=seed)
    sim = world.cluster.sim
    loop = world.loops[0]

    def second_transaction_started() -> bool:
        producer = loop.producer
        return loop.committed_txns >= 1 and loop.busy and producer is not None and \
            bool(producer.added)

    assert sim.run_until_true(second_transaction_started, 30_000)
    zombie = loop.producer
    assert zombie is not None
    loop.crash_producer(zombie=True)
    _finish(world)
    assert zombie.state == TxnProducerState.FATAL_ERROR and zombie.fatal == "PRODUCER_FENCED"
    assert zombie.committed == [1]
    assert world.final_check().duplicates == 0


def test_idempotence_alone_duplicates_after_a_crash_between_output_and_offsets() -> None:
    world = _world(EosSettings(records=20, transactional=False))
    sim = world.cluster.sim
    loop = world.loops[0]
    assert sim.run_until_true(lambda: loop.committed_txns >= 1 and
                              loop.idem.commit_offset is not None and not loop.idem.outputs,
                              30_000)
    loop.crash_producer()
    _finish(world)
    check = world.final_check()
    assert check.duplicates == 5 and check.missing == 0 and check.aborted_reads == 0


def test_offsets_committed_outside_the_transaction_break_exactly_once() -> None:
    world = _world(EosSettings(records=20,
                               mutations=frozenset({TxnMutation.OFFSETS_OUTSIDE_TXN})))
    sim = world.cluster.sim
    assert sim.run_until_true(lambda: world.loops[0].committed_txns >= 1, 30_000)
    world.loops[0].abort_next = True
    sim.run_until_true(lambda: sim.violation is not None, 60_000)
    assert isinstance(sim.violation, InvariantViolation)
    assert sim.violation.invariant == "ExactlyOnce"
