"""A leader replica whose log is empty, held without a Replica of its own.

A leader that has no records yet (a new partition, or leadership that moved to
a broker whose replica was compact) owns nothing but its registration and what
it knows of its followers. With an empty log that knowledge is small: each
follower has either not fetched since the leader epoch began (caught up as of
the epoch's start, ``since``), fetched at some time (its end offset is then 0,
the log end, so it was caught up at that fetch), or is idle on its fetch
session's :class:`~broker.replica.FetchClock` (caught up at every fetch of the
session). :class:`CompactLeader` holds exactly that: the registration, the
epoch's start time and one clock per follower; :func:`materialize` makes the
Replica that holds the same state, field for field where it is read.

The replica manager answers the plain fetch of an empty log (no divergence
check, the current epoch) and the refusals from the compact form and makes a Replica for
anything else: a produce, a marker, a fetch it cannot answer plainly, an ISR
change to propose, a reassignment.
"""

from __future__ import annotations

import msgspec

from broker.fetch_messages import (
    NO_LEADER_EPOCH,
    FetchedPartition,
    FetchPartition,
    not_a_replica,
)
from broker.replica import FetchClock, FollowerState, Replica
from metadata.image import PartitionRegistration


class FetchedAt(FetchClock, gc=False):
    """A follower that fetched at ``at`` and is not idle (no session clock stands for it).
    Never changed once made, so one serves every fetch at the same time."""


CAUGHT_UP = FetchedPartition("", -1, "NONE")
"""What :meth:`CompactLeader.serve` answers for a follower caught up on the empty log: the
answer is NONE with high watermark 0 and no records, made for the partition when it is
sent (a held fetch never makes it)."""


_latest: list[FetchedAt] = [FetchedAt(-1)]


def fetched_at(now: int) -> FetchedAt:
    """A FetchedAt of ``now``: the one made last when it is of the same time."""
    latest = _latest[0]
    if latest.at != now:
        latest = _latest[0] = FetchedAt(now)
    return latest


Clock = FetchClock | None
"""A follower's state as a compact leader keeps it: None (not fetched in this epoch),
a FetchedAt (fetched then), or its session's clock (idle on it)."""


class CompactLeader(msgspec.Struct, gc=False):
    """A leader with an empty log: see the module docs. ``clocks`` follow the order of the
    followers in ``reg.replicas`` (this broker left out); ``since`` is when its epoch
    began here."""

    reg: PartitionRegistration
    since: int
    clocks: tuple[Clock, ...]

    @property
    def leader(self) -> int:
        """The registration's leader (this broker)."""
        return self.reg.leader

    @property
    def leader_epoch(self) -> int:
        """The registration's leader epoch."""
        return self.reg.leader_epoch

    def follower_index(self, follower: int, me: int) -> int:
        """The position of ``follower`` in ``clocks``; -1 when it is not one."""
        index = 0
        for replica in self.reg.replicas:
            if replica == me:
                continue
            if replica == follower:
                return index
            index += 1
        return -1

    def last_caught_up(self, index: int) -> int:
        """When follower ``index`` was last caught up (FollowerState.last_caught_up)."""
        clock = self.clocks[index]
        return self.since if clock is None else clock.at


    def serve(self, follower: int, me: int, part: FetchPartition, share: ClockShare,
              clock: FetchClock, stale: bool = False) -> FetchedPartition | None:
        """Replica.serve_fetch of an empty log: :data:`CAUGHT_UP` for the plain answer, an
        error answer (a stale or future epoch, a broker that is not a replica), or None
        when the answer needs the Replica (a divergence check). A caught-up follower's
        clock becomes ``clock``: :func:`fetched_at` the fetch's time, or the session's
        clock when the answer is sent now and the follower goes idle at once (as
        :meth:`idle` after it, without the step between). ``stale``: a fetch with a stale
        broker epoch, refused NOT_LEADER_OR_FOLLOWER with no clock changed (as
        Replica.serve_fetch refuses it)."""
        epoch, current = self.reg.leader_epoch, part.current_leader_epoch
        if current != epoch and current != NO_LEADER_EPOCH:
            return FetchedPartition(part.topic_id, part.partition_id, "FENCED_LEADER_EPOCH"
                                    if current < epoch else "UNKNOWN_LEADER_EPOCH")
        index = self.follower_index(follower, me)
        if index < 0:  # not a replica (as Replica.serve_fetch answers it)
            return FetchedPartition(part.topic_id, part.partition_id, not_a_replica(current))
        if part.last_fetched_epoch >= 0:
            return None
        if stale:
            return FetchedPartition(part.topic_id, part.partition_id, "NOT_LEADER_OR_FOLLOWER")
        self.clocks = share.replaced(self.clocks, index, clock)  # caught up
        return CAUGHT_UP

    def wake(self, follower: int, me: int, share: ClockShare) -> None:
        """FollowerState.wake: a follower idle on a session clock fetched at its time."""
        index = self.follower_index(follower, me)
        clock = self.clocks[index] if index >= 0 else None
        if clock is not None and type(clock) is not FetchedAt:
            self.clocks = share.replaced(self.clocks, index, fetched_at(clock.at))

    def idle(self, follower: int, me: int, clock: FetchClock, share: ClockShare) -> bool:
        """A follower answered and caught up goes idle on its session's ``clock``; False
        when it has not fetched (not caught up: it stays pending)."""
        index = self.follower_index(follower, me)
        if index < 0 or self.clocks[index] is None:
            return False
        self.clocks = share.replaced(self.clocks, index, clock)
        return True

    def isr_change_due(self, me: int, now: int, lag_max_ms: int) -> bool:
        """True when the full replica's periodic check would shrink the ISR now (or might: a
        member this form does not know of); Replica.isr_proposal then says how. The check
        never expands an ISR: a follower back in sync joins at its fetch. A member that
        fetched in this epoch holds the whole (empty) log, so it is never out of sync
        (Kafka's isCaughtUp: its log end offset is the leader's); one that has not is out
        once the epoch began longer than ``lag_max_ms`` ago."""
        for member in self.reg.isr:
            if member == me:
                continue
            index = self.follower_index(member, me)
            if index < 0 or (self.clocks[index] is None and now - self.since > lag_max_ms):
                return True
        return False


class ClockShare:
    """One tuple per combination of follower clocks: the compact leaders of a broker whose
    followers idle on the same sessions (or fetched at the same time) share it. Bounded:
    emptied when full."""

    LIMIT = 1 << 10

    def __init__(self) -> None:
        self._tuples: dict[tuple[int, ...], tuple[Clock, ...]] = {}
        # (id(clocks), index, id(clock)) -> (clocks, clock, the result): the same change
        # of the same tuple, made for the next leader at once
        self._moves: dict[tuple[int, int, int],
                          tuple[tuple[Clock, ...], Clock, tuple[Clock, ...]]] = {}
        # the last move per follower index, asked first: a fetch moves its follower's
        # clock alike in every leader it reads
        self._last: dict[int, tuple[tuple[Clock, ...], Clock, tuple[Clock, ...]]] = {}

    def replaced(self, clocks: tuple[Clock, ...], index: int, clock: Clock
                 ) -> tuple[Clock, ...]:
        """``clocks`` with follower ``index`` on ``clock``, shared."""
        last = self._last.get(index)
        if last is not None and last[0] is clocks and last[1] is clock:
            return last[2]
        key = (id(clocks), index, id(clock))
        moves = self._moves
        hit = moves.get(key)
        if hit is None or hit[0] is not clocks or hit[1] is not clock:
            changed = list(clocks)
            changed[index] = clock
            hit = (clocks, clock, self.shared(tuple(changed)))
            if len(moves) >= self.LIMIT:
                moves.clear()
            moves[key] = hit
        self._last[index] = hit
        return hit[2]

    def shared(self, clocks: tuple[Clock, ...]) -> tuple[Clock, ...]:
        """``clocks``, or the equal tuple made before (by identity of its clocks)."""
        key = tuple(0 if clock is None else id(clock) for clock in clocks)
        tuples = self._tuples
        found = tuples.get(key)
        # the held tuples keep their clocks (and ids) alive; the identity check covers a
        # copy of this object (a forked cluster), whose keys are the original's ids
        if found is not None and all(a is b for a, b in zip(found, clocks, strict=True)):
            return found
        if len(tuples) >= self.LIMIT:
            tuples.clear()
        tuples[key] = clocks
        return clocks


def new_compact_leader(reg: PartitionRegistration, me: int, now: int) -> CompactLeader:
    """The compact form of a replica that becomes leader of ``reg`` at ``now`` with an empty
    log: no follower has fetched in the new epoch."""
    return CompactLeader(reg, now, unfetched(len(reg.replicas) - (me in reg.replicas)))


def unfetched(followers: int) -> tuple[None, ...]:
    """The clocks of ``followers`` none of which has fetched: ``(None,) * followers``, one
    tuple per count."""
    found = _UNFETCHED.get(followers)
    if found is None:
        found = _UNFETCHED[followers] = (None,) * followers
    return found


_UNFETCHED: dict[int, tuple[None, ...]] = {}
"""(None,) * n, one tuple per n."""


def materialize(leader: CompactLeader, replica: Replica) -> None:
    """Give the new ``replica`` (empty log) the state ``leader`` stands for."""
    replica.become(leader.reg, leader.since)
    for state, clock in zip(replica.followers, leader.clocks, strict=True):
        if clock is not None:
            _fetched(state, clock)


def _fetched(state: FollowerState, clock: FetchClock) -> None:
    """A follower that fetched the empty log: at ``clock.at`` (FetchedAt), or idle on the
    session ``clock`` (its own fetch times are then at most the clock's, and are only read
    combined with it)."""
    state.end_offset = 0
    state.leo_at_last_fetch = 0
    state.caught_up_at = state.last_fetch_at = clock.at
    if type(clock) is not FetchedAt:
        state.idle_clock = clock
