"""What each fault does to a node of the simulated world (a raft-only cluster): a wipe
empties the disk, a graceful shutdown flushes and hands leadership over at once, a
stopped node restarts, a pause freezes only a running node and its resume delivers what
waited."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

from sim.faults import Block, Crash, Heal, Isolate, Partition, Pause
from sim.network import LinkConfig
from sim.raft_sim import RaftSimConfig, build_raft_sim
from sim.world import InvariantViolation, Monitor, NodeSlot, NodeStatus, Simulation


def _status(slot: NodeSlot) -> NodeStatus:
    """The node's status, read afresh (a fault changes it behind the checker's back)."""
    return slot.status


def _healthy() -> tuple[Simulation, NodeSlot, NodeSlot]:
    """A 3-voter raft cluster after 3 s of appends: the simulation, its leader, a follower."""
    sim, _ = build_raft_sim(RaftSimConfig(seed=5, voters=3, duration_ms=10_000,
                                          snapshot_every=0))
    sim.run_for(3000)
    leader = sim.leader_slot()
    assert leader is not None and sim.violation is None
    follower = sim.slots[next(v for v in sim.voter_ids if v != leader.node_id)]
    return sim, leader, follower


def test_a_wipe_kills_the_node_and_empties_its_disk() -> None:
    sim, leader, follower = _healthy()
    assert follower.storage.log.end_offset > 0 and follower.storage.election.epoch > 0
    sim.wipe(follower.node_id)
    assert _status(follower) is NodeStatus.CRASHED and follower.raft is None
    assert follower.storage.log.end_offset == 0 and follower.storage.election.epoch == 0
    assert (sim.wipes, follower.wipe_count) == (1, 1)
    sim.restart(follower.node_id)
    sim.run_for(1000)
    assert sim.violation is None  # caught up again, up to the append in flight
    assert follower.storage.log.end_offset >= leader.storage.log.end_offset - 1


def test_a_stopped_node_restarts() -> None:
    sim, _, follower = _healthy()
    sim.shutdown(follower.node_id)
    assert _status(follower) is NodeStatus.STOPPED
    sim.restart(follower.node_id)
    assert _status(follower) is NodeStatus.RUNNING and follower.raft is not None


def test_pausing_a_node_that_is_down_does_nothing() -> None:
    sim, _, follower = _healthy()
    sim.shutdown(follower.node_id)
    sim.pause(follower.node_id)
    assert _status(follower) is NodeStatus.STOPPED
    sim.resume(follower.node_id)
    assert _status(follower) is NodeStatus.STOPPED


def test_a_resumed_follower_gets_what_waited_and_catches_up_at_once() -> None:
    sim, leader, follower = _healthy()
    sim.pause(follower.node_id)
    sim.run_for(500)
    assert _status(follower) is NodeStatus.PAUSED and follower.inbox
    behind = follower.storage.log.end_offset
    assert behind < leader.storage.log.end_offset
    sim.resume(follower.node_id)
    assert _status(follower) is NodeStatus.RUNNING and not follower.inbox
    sim.run_for(50)  # well below the fetch timeout: the waiting response is delivered
    assert follower.storage.log.end_offset == leader.storage.log.end_offset


def test_a_graceful_shutdown_of_the_leader_flushes_and_hands_over_at_once() -> None:
    sim, leader, _ = _healthy()
    log = leader.storage.log
    log.flushed_end = log.end_offset - 1  # a write not flushed yet
    sim.shutdown(leader.node_id)
    assert _status(leader) is NodeStatus.STOPPED
    assert log.flushed_end == log.end_offset
    old, start = leader.node_id, sim.now
    assert sim.run_until_true(lambda: (new := sim.leader_slot()) is not None
                              and new.node_id != old, 5000)
    assert sim.now - start < 100  # it resigned: no election timeout (1 s) to wait for
    assert sim.violation is None


def test_a_graceful_shutdown_of_a_follower_flushes_its_log() -> None:
    sim, _, follower = _healthy()
    log = follower.storage.log
    log.flushed_end = log.end_offset - 1
    sim.shutdown(follower.node_id)
    assert _status(follower) is NodeStatus.STOPPED and log.flushed_end == log.end_offset


def test_a_crash_loses_the_unflushed_appends() -> None:
    sim, _, follower = _healthy()
    log = follower.storage.log
    flushed = log.end_offset - 2
    log.flushed_end = flushed
    sim.crash(follower.node_id)
    assert _status(follower) is NodeStatus.CRASHED and log.end_offset == flushed


def test_an_isolated_node_gets_nothing_until_the_network_heals() -> None:
    sim, leader, follower = _healthy()
    sim.apply_fault(Isolate(node=follower.node_id))
    assert sim.network.blocked == {(a, b) for other in sim.slots if other != follower.node_id
                                   for a, b in ((follower.node_id, other),
                                                (other, follower.node_id))}
    cut_at = follower.storage.log.end_offset
    sim.run_for(500)
    assert follower.storage.log.end_offset == cut_at < leader.storage.log.end_offset
    sim.apply_fault(Heal())
    assert not sim.network.blocked
    sim.run_for(3000)
    assert follower.storage.log.end_offset > cut_at and sim.violation is None


def test_a_pause_fault_lasts_exactly_its_duration() -> None:
    sim, _, follower = _healthy()
    sim.apply_fault(Pause(node=follower.node_id, duration_ms=100))
    sim.run_for(99)
    assert _status(follower) is NodeStatus.PAUSED
    sim.run_for(1)
    assert _status(follower) is NodeStatus.RUNNING
    assert sim.faults_applied[-1] == f"pause:{follower.node_id}@0+100 (node {follower.node_id})"


def test_a_fault_on_the_leader_when_there_is_none_is_skipped() -> None:
    sim, _ = build_raft_sim(RaftSimConfig(seed=5, voters=3, duration_ms=1000))
    assert sim.leader_slot() is None
    sim.apply_fault(Crash(node="leader"))
    assert sim.faults_applied == ["crash:leader@0 (skipped: no leader)"]
    assert all(slot.status is not NodeStatus.CRASHED for slot in sim.slots.values())


class _Raises(Monitor):
    def __init__(self, invariant: str, at_ms: int) -> None:
        self.invariant, self.at_ms = invariant, at_ms

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        if sim.now >= self.at_ms:
            raise InvariantViolation(self.invariant, f"at {sim.now}")


def test_a_monitors_violation_stops_the_run_and_the_first_one_stays() -> None:
    sim, _, _ = _healthy()
    sim.monitors.append(_Raises("First", sim.now + 100))
    sim.monitors.append(_Raises("Second", sim.now + 100))
    start = sim.now
    assert not sim.run_for(1000)
    assert sim.violation is not None and sim.violation.invariant == "First"
    assert sim.now < start + 1000
    sim.monitors.insert(0, _Raises("Later", 0))
    assert not sim.run_for(10) and sim.violation.invariant == "First"


def test_messages_a_crashed_process_sent_are_lost_even_after_it_restarts() -> None:
    """A crash closes every connection of the old process: what it had in flight is not
    delivered, although the node runs again by the time it would arrive."""
    sim, leader, _ = _healthy()
    sim.run_until_true(lambda: any(event[0] == 0 and event[1].src == leader.node_id
                                   for _, _, event in sim.queue.heap), 1000)
    out = io.BytesIO()
    sim.trace.out = out
    sim.crash(leader.node_id)
    sim.restart(leader.node_id)
    sim.run_for(100)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    lost = [line for line in lines if line.get("ev") == "deliver"
            and line["src"] == leader.node_id and line.get("lost") == "restarted"]
    assert lost and all(line["dst"] != leader.node_id for line in lost)


def test_an_outside_input_made_during_an_event_runs_at_once_within_it() -> None:
    """``act`` from inside an event (a scheduled action starting a client request) runs
    the input there and then, as part of that event: no event of its own."""
    sim, _, _ = _healthy()
    ran: list[int] = []
    at = sim.now + 10
    sim.schedule(at, lambda: sim.act("inner", lambda: ran.append(sim.now)), "outer")
    sim.run_for(20)
    assert ran == [at] and sim.violation is None


def test_after_a_violation_outside_inputs_change_nothing() -> None:
    """A run stopped by a violation stays as it was: a fault or a client request given
    afterwards is not applied."""
    sim, _, follower = _healthy()
    sim.monitors.append(_Raises("Stop", sim.now + 10))
    assert not sim.run_for(100)
    ran: list[str] = []
    sim.act("request", lambda: ran.append("ran"))
    sim.crash(follower.node_id)
    assert ran == [] and _status(follower) is NodeStatus.RUNNING


def _traced(sim: Simulation) -> io.BytesIO:
    out = io.BytesIO()
    sim.trace.out = out
    return out


def _deliveries(out: io.BytesIO) -> list[dict[str, object]]:
    return [line for line in map(json.loads, out.getvalue().splitlines())
            if line.get("ev") == "deliver"]


def test_a_one_way_block_loses_messages_in_its_direction_only() -> None:
    sim, leader, follower = _healthy()
    out = _traced(sim)
    sim.apply_fault(Block(src=leader.node_id, dst=follower.node_id))
    sim.run_for(2000)
    lines = _deliveries(out)
    cut = [line for line in lines if (line["src"], line["dst"]) == (leader.node_id,
                                                                      follower.node_id)]
    back = [line for line in lines if (line["src"], line["dst"]) == (follower.node_id,
                                                                       leader.node_id)]
    assert cut and all(line.get("lost") == "partition" for line in cut)
    assert back and not any("lost" in line for line in back)
    assert sim.faults_applied[-1] == f"block:{leader.node_id}>{follower.node_id}@0"


def test_a_partition_cuts_what_is_in_flight_and_a_heal_lets_through_what_was_sent() -> None:
    """The network looks at a message when it arrives: one sent before the cut that
    arrives during it is lost, one sent during a cut that arrives after the heal gets
    through."""
    sim, leader, follower = _healthy()
    to_follower = (leader.node_id, follower.node_id)
    sim.network.set_link(*to_follower, LinkConfig(latency_ms=20, jitter_ms=0))

    def in_flight(after: int) -> bool:
        return any(event[0] == 0 and (event[1].src, event[1].dst) == to_follower
                   and at > after for at, _, event in sim.queue.heap)

    assert sim.run_until_true(lambda: in_flight(sim.now + 5), 2000)
    out = _traced(sim)
    sim.apply_fault(Partition(groups=((leader.node_id,), (follower.node_id,))))
    sim.run_for(20)
    assert [line.get("lost") for line in _deliveries(out)
            if (line["src"], line["dst"]) == to_follower] == ["partition"]
    sim.apply_fault(Heal())
    sim.apply_fault(Block(src=leader.node_id, dst=follower.node_id))
    assert sim.run_until_true(lambda: in_flight(sim.now + 5), 3000)
    out = _traced(sim)
    sim.apply_fault(Heal())
    sim.run_for(20)
    assert [line.get("lost") for line in _deliveries(out)
            if (line["src"], line["dst"]) == to_follower][:1] == [None]


def test_a_paused_node_holds_its_messages_and_gets_them_in_order_on_resume() -> None:
    sim, paused, _ = _healthy()  # the leader: the followers' fetches keep coming
    out = _traced(sim)
    sim.pause(paused.node_id)
    assert sim.run_until_true(lambda: len(paused.inbox) >= 3, 3000)
    assert all(line.get("lost") == "paused" for line in _deliveries(out)
               if line["dst"] == paused.node_id)
    held = [event[1] for event in paused.inbox]
    out.seek(0)
    out.truncate()
    sim.resume(paused.node_id)
    sim.run_for(0)
    delivered = [line for line in _deliveries(out) if line["dst"] == paused.node_id]
    assert [(line["src"], line["msg"]) for line in delivered[:len(held)]] == \
        [(env.src, type(env.message).__name__) for env in held]
    assert not any("lost" in line for line in delivered[:len(held)])


def test_a_paused_node_neither_leads_nor_wakes_until_resumed() -> None:
    sim, leader, _ = _healthy()
    out = _traced(sim)
    sim.pause(leader.node_id)
    assert sim.leader_slot() is not leader and _status(leader) is NodeStatus.PAUSED
    sim.run_for(500)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert not any(line.get("ev") == "wake" and line["node"] == leader.node_id
                   for line in lines)
    sim.resume(leader.node_id)
    sim.run_for(100)
    assert any(json.loads(line).get("node") == leader.node_id
               for line in out.getvalue().splitlines()[len(lines):])


def test_restarting_a_running_node_and_crashing_a_crashed_one_do_nothing() -> None:
    sim, _, follower = _healthy()
    incarnation, raft = follower.incarnation, follower.raft
    sim.restart(follower.node_id)
    assert (follower.incarnation, follower.raft) == (incarnation, raft)
    sim.crash(follower.node_id)
    fence = follower.crash_fence
    end = follower.storage.log.end_offset
    sim.crash(follower.node_id)
    assert follower.crash_fence == fence and follower.storage.log.end_offset == end
    assert _status(follower) is NodeStatus.CRASHED


def test_a_paused_node_can_crash_and_restart() -> None:
    sim, _, follower = _healthy()
    sim.pause(follower.node_id)
    sim.run_for(100)
    sim.crash(follower.node_id)
    assert _status(follower) is NodeStatus.CRASHED and not follower.inbox
    sim.restart(follower.node_id)
    sim.run_for(2000)
    assert _status(follower) is NodeStatus.RUNNING and sim.violation is None


def test_events_are_numbered_from_zero_and_an_outside_input_is_one_of_them() -> None:
    out = io.BytesIO()
    sim, _ = build_raft_sim(RaftSimConfig(seed=5, voters=3, duration_ms=1000), out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["i"] for line in lines if line["ev"] == "start"] == [0] and sim.events == 1
    sim.act("request", lambda: None)  # before any other event: still an event of its own
    line = json.loads(out.getvalue().splitlines()[-1])
    assert (line["i"], line["ev"], line["what"]) == (1, "action", "request")
    assert sim.events == 2


def test_the_violation_names_the_event_it_came_at() -> None:
    sim, _, _ = _healthy()
    out = _traced(sim)
    sim.monitors.append(_Raises("Stop", sim.now + 10))
    assert not sim.run_for(100)
    [line] = [json.loads(line) for line in out.getvalue().splitlines()
              if json.loads(line)["ev"] == "violation"]
    assert sim.violation_event == line["i"] == sim.events


def test_a_message_to_a_node_that_is_down_is_lost() -> None:
    sim, leader, _ = _healthy()
    out = _traced(sim)
    sim.crash(leader.node_id)  # the followers' votes go to it, and find it down
    sim.run_for(3000)
    to_leader = [line for line in _deliveries(out) if line["dst"] == leader.node_id]
    assert to_leader and all(line["lost"] in ("down", "restarted") for line in to_leader)
    assert any(line["lost"] == "down" and line["msg"] == "VoteRequest" for line in to_leader)
