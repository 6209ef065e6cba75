"""Why the demo's gaps are as long as they are, computed from the run.

:class:`StateLog` notes every change of a node's status, raft role, epoch and
known leader while the cluster runs. After a leader crash,
:func:`explain_gaps` reads it and writes one line for each gap a user sees:
why the new leader's epoch is what it is (each election round spends an
epoch: a split vote, a candidate that got no majority), the time with no
leader (the followers notice the crash only when their fetch timeout runs
out, then the election rounds), and the time before brokers show the result
(observers are told of a new leader by no one: as Kafka's, each keeps following
the crashed leader and, once a fetch to it times out, asks a voter drawn at random,
again after each timeout, until one names the newer epoch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from raft import RaftConfig
from sim.world import Monitor, NodeSlot, Simulation


@dataclass(frozen=True)
class NodeState:
    """One node's state from ``at_ms`` on."""

    at_ms: int
    node: int
    status: str
    role: str
    epoch: int
    leader: int | None


class StateLog(Monitor):
    """Notes each node's status, role, epoch and leader whenever one changes."""

    def __init__(self) -> None:
        self.changes: list[NodeState] = []
        self._last: dict[int, tuple[str, str, int, int | None]] = {}

    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Note the nodes whose state changed in the last event."""
        for slot in sim.slots.values():
            raft = slot.raft
            state = (slot.status.value, raft.role.value if raft else "",
                     raft.epoch if raft else -1, raft.leader_id if raft else None)
            if self._last.get(slot.node_id) != state:
                self._last[slot.node_id] = state
                self.changes.append(NodeState(sim.now, slot.node_id, *state))


def _s(ms: int) -> str:
    return f"{ms / 1000:.2f} s"


def _names(nodes: Sequence[int]) -> str:
    return " and ".join(str(n) for n in nodes)


def explain_gaps(log: StateLog, *, crashed: int, crash_ms: int, old_epoch: int,
                 controllers: Sequence[int], brokers: Sequence[int], raft: RaftConfig,
                 committed_ms: int | None, published_ms: int | None) -> list[str]:
    """One line per gap after the crash of leader ``crashed`` at ``crash_ms`` (see the
    module docs); ``committed_ms`` is when the operation committed on the new leader,
    ``published_ms`` when the last broker showed it."""
    after = [c for c in log.changes if c.at_ms >= crash_ms]
    elected = next((c for c in after if c.role == "Leader" and c.node != crashed), None)
    if elected is None:
        return ["no new leader was elected after the crash"]
    lines = [_epoch_line(after, elected, old_epoch)]
    noticed = next((c for c in after if c.node in controllers and c.node != crashed
                    and c.role in ("Prospective", "Candidate")), None)
    gap = elected.at_ms - crash_ms
    if noticed is not None:
        waited = noticed.at_ms - crash_ms
        why = (f"the fetch timeout ({raft.fetch_timeout_ms} ms): followers notice a dead "
               f"leader only when its fetches stop answering"
               if abs(waited - raft.fetch_timeout_ms) <= 50
               else "their timers")
        lines.append(f"no leader for {_s(gap)} ({crash_ms}-{elected.at_ms} ms): "
                     f"{_s(waited)} until controller {noticed.node} noticed the crash, set by "
                     f"{why}; then {_s(elected.at_ms - noticed.at_ms)} of election")
    if committed_ms is not None and published_ms is not None and brokers:
        lines.append(_broker_line(after, brokers, crashed, elected, raft, committed_ms,
                                  published_ms))
    return lines


def _epoch_line(after: list[NodeState], elected: NodeState, old_epoch: int) -> str:
    rounds = []
    for epoch in range(old_epoch + 1, elected.epoch):
        candidates = sorted({c.node for c in after if c.epoch == epoch and c.role == "Candidate"})
        started = [c.at_ms for c in after if c.epoch == epoch and c.role == "Candidate"]
        if len(candidates) >= 2:
            rounds.append(f"epoch {epoch} was a split vote: controllers {_names(candidates)} "
                          f"became candidates {max(started) - min(started)} ms apart and each "
                          f"voted for itself, so neither had a majority")
        elif candidates:
            rounds.append(f"in epoch {epoch} candidate {candidates[0]} got no majority")
        else:
            rounds.append(f"epoch {epoch} ended with no leader")
    stood = [c for c in after if c.node == elected.node and c.role == "Candidate"
             and c.epoch < elected.epoch]
    if not rounds:
        return (f"the new leader is in epoch {elected.epoch}: each election round spends "
                f"one epoch (a pre-vote spends none), and the first round after epoch "
                f"{old_epoch} elected controller {elected.node}")
    retry = ""
    if stood:
        again = next((c for c in after if c.node == elected.node and c.at_ms > stood[-1].at_ms
                      and c.role in ("Prospective", "Candidate")), None)
        if again is not None:
            retry = (f"; controller {elected.node} waited out its election timeout and a "
                     f"random backoff ({again.at_ms - stood[-1].at_ms} ms) and stood again")
    return (f"the new leader is in epoch {elected.epoch}, not {old_epoch + 1}, because each "
            f"election round spends an epoch: {'; '.join(rounds)}{retry}, winning epoch "
            f"{elected.epoch} at {elected.at_ms} ms")


def _broker_line(after: list[NodeState], brokers: Sequence[int], crashed: int,
                 elected: NodeState, raft: RaftConfig, committed_ms: int,
                 published_ms: int) -> str:
    broker = brokers[0]
    steps = [c for c in after if c.node == broker]
    found = next((c.at_ms for c in steps if c.role == "Follower" and c.leader == elected.node),
                 None)
    lag = f"brokers showed the result {_s(published_ms - committed_ms)} after it committed " \
          f"({committed_ms}-{published_ms} ms)"
    if found is not None and found <= committed_ms:
        return (f"{lag}: broker {broker} had found leader {elected.node} by then ({found} ms); "
                f"the rest is fetching ({raft.fetch_max_records} records a fetch at most) and "
                f"publishing once the End is committed")
    told: list[str] = []
    for change in steps:
        if change.role == "Unattached":
            told.append(f"dropped its leader at {change.at_ms} ms (a voter named the newer "
                        f"epoch, with no leader yet)")
        elif change.role == "Follower" and change.leader == crashed:
            told.append(f"followed the crashed {crashed} again at {change.at_ms} ms (a voter "
                        f"still named it)")
        elif change.role == "Follower" and change.leader == elected.node:
            told.append(f"found leader {elected.node} at {change.at_ms} ms")
            break
    return (f"{lag}: they are observers, told of a new leader by no one, so each keeps "
            f"following the crashed leader until a fetch to it times out "
            f"({raft.request_timeout_ms} ms), then asks a voter drawn at random (the crashed "
            f"one may be drawn again), until one names the new epoch; broker {broker} "
            + ", ".join(told))
