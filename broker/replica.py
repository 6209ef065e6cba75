"""Replica: one partition as hosted on one broker, leader or follower (Kafka's Partition).

The role, leader, ISR and epochs come from the broker's *published* image
only (``become``). As leader it serves follower fetches, tracks each
follower's LEO and when it was last caught up, and moves the high watermark
to the minimum LEO over the maximal ISR (the image's ISR plus a pending
expansion, so a shrink counts only once the controller has written it —
Kafka's ``PartitionState.maximalIsr``) and over the followers outside it that
are about to join: eligible, caught up within ``replica.lag.time.max.ms`` and
fetching from this leader already (Kafka's ``maybeIncrementLeaderHW``, whose
eligibility needs a broker epoch stored by a fetch; a follower outside the ISR when this
leader's epoch began counts as never caught up until it catches up). It
proposes ISR changes with AlterPartition: a follower not caught up for
``replica.lag.time.max.ms`` leaves (never one whose log end offset is the leader's:
Kafka's ``isCaughtUp``), a follower caught up to the HW (and to
this leader's epoch start) comes back; one proposal at a time, naming the broker epoch
the leader holds for each member (KIP-903: :meth:`Replica.isr_epochs`). Only an eligible
follower comes back
(Kafka's ``isReplicaIsrEligible``, KIP-841/KIP-903: unfenced, not in
controlled shutdown, fetching with its current broker epoch), as the
manager's image says. The HW does not move while the ISR is smaller than
the effective ``min.insync.replicas`` (the topic's, at most the replication
factor: Kafka's ``effectiveMinIsr``, KAFKA-15583). A fetch from a broker that
is not a replica is refused UNKNOWN_LEADER_EPOCH (the leader may not know the
assignment the follower knows yet: Kafka's ``followerReplicaOrThrow``); one whose
broker epoch is stale, NOT_LEADER_OR_FOLLOWER, recording nothing (``serve_fetch``).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from broker.fetch_messages import (
    NO_LEADER_EPOCH,
    FetchedPartition,
    FetchPartition,
    not_a_replica,
)
from broker.partition_log import PartitionLog
from metadata.image import PartitionRegistration


class FetchClock(msgspec.Struct, gc=False):
    """When a follower's fetch session last fetched (see :class:`FollowerState`)."""

    at: int = -1
    broker_epoch: int = -1
    """The broker epoch that fetch carried (a session's clock; -1 otherwise)."""


class FollowerState(msgspec.Struct, gc=False):
    """What the leader knows of one follower.

    ``idle_clock``: set while the follower is caught up on this partition and
    has nothing new to learn, so that its incremental fetches (KIP-227) leave
    the partition out; each of its fetches then counts as a fetch of this
    partition at the clock's time, as a full fetch would have made it.
    """

    broker_id: int = -1
    end_offset: int = -1
    caught_up_at: int = 0
    last_fetch_at: int = -1
    leo_at_last_fetch: int = -1
    idle_clock: FetchClock | None = None
    broker_epoch: int = -1
    """The broker epoch its last fetch carried (-1: unknown, which the eligibility check
    lets pass, as Kafka does for a request without one). Eligibility reads it only once
    the follower has fetched: before that Kafka stores no epoch, and the follower is not
    eligible. An AlterPartition names it for the follower (-1 when none is stored), and
    a leader that leads again keeps it (see :meth:`Replica.become`)."""

    def wake(self) -> None:
        """Make the fetches an idle clock stands for explicit (before any other change)."""
        clock = self.idle_clock
        if clock is not None:
            self.caught_up_at = max(self.caught_up_at, clock.at)
            self.last_fetch_at = max(self.last_fetch_at, clock.at)
            self.broker_epoch = clock.broker_epoch
            self.idle_clock = None

    def fetched_broker_epoch(self) -> int:
        """The broker epoch its last fetch carried, its idle fetches included."""
        clock = self.idle_clock
        return self.broker_epoch if clock is None else clock.broker_epoch

    def last_caught_up(self) -> int:
        """When the follower was last caught up (its idle fetches included)."""
        clock = self.idle_clock
        return self.caught_up_at if clock is None else max(self.caught_up_at, clock.at)

    def has_fetched(self) -> bool:
        """True once the follower fetched this partition from this leader."""
        return self.last_fetch_at >= 0 or self.idle_clock is not None


_NO_FOLLOWERS: tuple[FollowerState, ...] = ()

_UNKNOWN = (-1, -1)
"""A follower's log end offset and broker epoch when this leader knows neither."""

NEVER_CAUGHT_UP = -(1 << 62)
"""``caught_up_at`` of a follower outside the ISR when the leader's epoch began (Kafka
resets its last caught-up time to 0): it holds no high watermark until it catches up."""

Eligible = Callable[[int, int], bool]
"""eligible(broker id, broker epoch of its fetch): may that follower join the ISR?"""


def _always_eligible(broker_id: int, broker_epoch: int) -> bool:
    return True


class IsrRules:
    """What a leader asks of a follower about to join its ISR: caught up within
    ``lag_max_ms`` (``replica.lag.time.max.ms``) and ``eligible`` (one object per
    broker, shared by its replicas)."""

    __slots__ = ("eligible", "lag_max_ms")

    def __init__(self, lag_max_ms: int, eligible: Eligible = _always_eligible) -> None:
        self.lag_max_ms = lag_max_ms
        self.eligible = eligible


DEFAULT_ISR_RULES = IsrRules(30_000)
"""Kafka's default replica.lag.time.max.ms, every follower eligible (a replica made
without a replica manager)."""


def _by_broker(state: FollowerState) -> int:
    return state.broker_id


class Replica:
    """One partition on one broker; see the module docs."""

    __slots__ = (
        "broker_id",
        "followers",
        "hw_ignores_isr",
        "isr",
        "isr_rules",
        "leader",
        "leader_epoch",
        "leader_epoch_start",
        "log",
        "min_isr",
        "partition_epoch",
        "partition_id",
        "pending_isr",
        "replicas",
        "topic",
        "topic_id",
    )

    def __init__(self, broker_id: int, topic_id: str, topic: str, partition_id: int,
                 log: PartitionLog) -> None:
        self.broker_id = broker_id
        self.topic_id = topic_id
        self.topic = topic
        self.partition_id = partition_id
        self.log = log
        self.leader = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()
        # as leader only: one state per follower (a tuple: most partitions have two)
        self.followers: tuple[FollowerState, ...] = _NO_FOLLOWERS
        self.pending_isr: tuple[int, ...] | None = None
        self.leader_epoch_start = 0
        self.hw_ignores_isr = False  # the hw-ignores-isr mutation
        self.min_isr = 1
        """The topic's min.insync.replicas (kept up to date by the manager)."""
        self.isr_rules = DEFAULT_ISR_RULES

    @property
    def is_leader(self) -> bool:
        """True while the published image makes this broker the leader."""
        return self.leader == self.broker_id

    def become(self, reg: PartitionRegistration, now: int) -> bool:
        """Take the image's registration; True when the leader epoch changed.

        A new leader epoch led here starts every follower's state afresh (Kafka's
        resetReplicaState); a broker that led the previous epoch too keeps what it knew of
        each follower's log end offset and broker epoch, as Kafka does when the leader is
        not new.
        """
        leader, me = reg.leader, self.broker_id
        new_epoch = reg.leader_epoch != self.leader_epoch
        was_leader = self.leader == me
        self.leader, self.leader_epoch = leader, reg.leader_epoch
        self.isr, self.replicas = reg.isr, reg.replicas
        if reg.partition_epoch != self.partition_epoch:
            self.partition_epoch = reg.partition_epoch
            self.pending_isr = None
        if leader == me:
            if new_epoch:
                self.leader_epoch_start = self.log.end_offset
                isr = reg.isr
                known = {s.broker_id: (s.end_offset, s.fetched_broker_epoch())
                         for s in self.followers} if was_leader else {}
                followers = []
                for r in reg.replicas:
                    if r != me:
                        end, epoch = known.get(r, _UNKNOWN)
                        followers.append(FollowerState(
                            r, end_offset=end, broker_epoch=epoch,
                            caught_up_at=now if r in isr else NEVER_CAUGHT_UP))
                self.followers = tuple(followers)
            self.maybe_advance_high_watermark(now)
        else:
            self.followers = _NO_FOLLOWERS
        return new_epoch

    # ------------------------------------------------------------------ leader
    def follower(self, broker_id: int) -> FollowerState | None:
        """What this leader knows of follower ``broker_id`` (None: nothing yet)."""
        for state in self.followers:
            if state.broker_id == broker_id:
                return state
        return None

    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR the HW must respect: the image's, plus a pending expansion."""
        if self.pending_isr is None:
            return self.isr
        return tuple(sorted(set(self.isr) | set(self.pending_isr)))

    def effective_min_isr(self) -> int:
        """min.insync.replicas, at most the replication factor (Kafka's effectiveMinIsr)."""
        return min(self.min_isr, len(self.replicas)) if self.replicas else self.min_isr

    def under_min_isr(self) -> bool:
        """True while this leader's ISR (as written) is smaller than the effective min ISR."""
        return len(self.isr) < self.effective_min_isr()

    def maybe_advance_high_watermark(self, now: int) -> bool:
        """HW = min LEO over the maximal ISR and the followers about to join it (see the
        module docs), not while under min ISR; True when it moved."""
        if not self.log.entries:
            return False  # an empty log's HW is 0 and stays there
        if self.min_isr > 1 and self.under_min_isr():
            return False  # KAFKA-15583: an ISR below min.insync.replicas holds the HW
        hw = self.log.end_offset
        if not self.hw_ignores_isr:
            isr = self.maximal_isr()
            rules = self.isr_rules
            for state in self.followers:
                end = state.end_offset
                if end < hw and (state.broker_id in isr or (
                        now - state.last_caught_up() <= rules.lag_max_ms
                        and state.broker_id in self.replicas and state.has_fetched()
                        and rules.eligible(state.broker_id, state.fetched_broker_epoch()))):
                    hw = end
            for member in isr:  # an ISR member this leader has no state of has not fetched
                if member != self.broker_id and self.follower(member) is None:
                    hw = -1
                    break
        before = self.log.high_watermark
        self.log.update_high_watermark(hw)
        return self.log.high_watermark != before

    def serve_fetch(self, replica_id: int, req: FetchPartition, now: int,
                    max_records: int, broker_epoch: int = -1,
                    stale: bool = False) -> FetchedPartition:
        """Answer one partition of a follower's fetch (and learn its LEO); ``broker_epoch``
        is the broker epoch the fetch carried.

        ``stale``: that epoch is older than the one this broker's image holds for the
        follower (see :meth:`~broker.replica_manager.ReplicaManager.stale_fetch`). Kafka's
        leader checks it when it records the follower's fetch (Replica's
        updateFetchStateOrThrow, after the leader epoch checks, the replica check and
        the read, and only when the read found no divergence): such a fetch is answered
        NOT_LEADER_OR_FOLLOWER and nothing of it is recorded (no end offset, no fetch or
        caught-up time, no broker epoch), so the high watermark and the ISR see nothing
        of it. A divergence is answered as to any fetch (Kafka records nothing then
        either)."""
        current = req.current_leader_epoch  # the epoch first (Kafka's getLocalLog)
        if current != self.leader_epoch and current != NO_LEADER_EPOCH:
            return FetchedPartition(self.topic_id, self.partition_id, "FENCED_LEADER_EPOCH"
                                    if current < self.leader_epoch else "UNKNOWN_LEADER_EPOCH")
        if self.leader != self.broker_id:
            return FetchedPartition(self.topic_id, self.partition_id, "NOT_LEADER_OR_FOLLOWER")
        if replica_id not in self.replicas:
            return FetchedPartition(self.topic_id, self.partition_id, not_a_replica(current))
        log = self.log
        if req.last_fetched_epoch >= 0:
            epoch, end = log.end_offset_for_epoch(req.last_fetched_epoch)
            if epoch != req.last_fetched_epoch or end < req.fetch_offset:
                return FetchedPartition(self.topic_id, self.partition_id, "NONE",
                                        log.high_watermark, diverging=True,
                                        diverging_epoch=epoch,
                                        diverging_end_offset=end)
        if stale:
            return FetchedPartition(self.topic_id, self.partition_id, "NOT_LEADER_OR_FOLLOWER")
        state = self.follower(replica_id)
        if state is None:
            state = FollowerState(replica_id, caught_up_at=now if replica_id in self.isr
                                  else NEVER_CAUGHT_UP)
            self.followers = (*self.followers, state)
        state.wake()
        state.broker_epoch = broker_epoch
        leo = log.end_offset
        offset = min(req.fetch_offset, leo)
        if offset >= leo:
            state.caught_up_at = now
        elif offset >= state.leo_at_last_fetch >= 0:
            state.caught_up_at = max(state.caught_up_at, state.last_fetch_at)
        state.end_offset = offset
        state.last_fetch_at, state.leo_at_last_fetch = now, leo
        self.maybe_advance_high_watermark(now)
        entries = tuple(log.read(offset, max_records)) if offset < leo else ()
        return FetchedPartition(self.topic_id, self.partition_id, "NONE", log.high_watermark,
                                entries)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(largest epoch <= ``epoch``, its end offset) as this replica's leader-epoch cache
        answers an OffsetsForLeaderEpoch request (Kafka's Partition.lastOffsetForLeaderEpoch).

        Kafka's leader enters its own epoch in its cache when the epoch begins, at the log
        end offset of that moment; kraftsim's log enters it with its first record (see
        :meth:`~broker.partition_log.PartitionLog.end_offset_for_epoch`), so a leader that
        has written nothing in its epoch yet counts it here. As Kafka's
        LeaderEpochFileCache.endOffsetFor: the latest epoch ends at the log end offset, an
        epoch above it (or UNDEFINED_EPOCH, or an empty cache) gives (-1, -1).
        """
        log = self.log
        starts = log.epoch_starts
        cached = starts[-1][0] if starts else -1
        own = self.leader_epoch if self.is_leader and self.leader_epoch > cached else -1
        latest = max(cached, own)
        if epoch == -1 or latest < 0 or epoch > latest:
            return -1, -1
        if epoch == latest:
            return epoch, log.end_offset
        if not starts:  # only the leader's own epoch, which starts above ``epoch``
            return epoch, self.leader_epoch_start
        found, end = log.end_offset_for_epoch(epoch)
        if own >= 0 and found == cached:  # the leader's epoch follows the last cached one
            end = self.leader_epoch_start
        return found, end

    def epoch_at_log_start(self) -> int:
        """The epoch of the first leader-epoch entry, as ListOffsets EARLIEST answers it
        (Kafka's UnifiedLog.fetchOffsetByTimestamp: logs start at 0 here, so the first
        entry always covers the log start); a leader that has written nothing counts its
        own epoch (see :meth:`end_offset_for_epoch`); -1 for none."""
        starts = self.log.epoch_starts
        if starts:
            return starts[0][0]
        return self.leader_epoch if self.is_leader and self.leader_epoch_start == 0 else -1

    def isr_proposal(self, now: int, lag_max_ms: int, eligible: Eligible = _always_eligible,
                     shrink: bool = True, expand: bool = True,
                     fetch: tuple[int, int] | None = None) -> tuple[int, ...] | None:
        """A new ISR to ask the controller for, or None (nothing to change, or one pending).

        A shrink first (unless ``shrink`` is False: Kafka's maybeExpandIsr at a fetch), else
        (unless ``expand`` is False: Kafka's periodic maybeShrinkIsr) the followers back in
        sync that are ``eligible``. ``fetch`` (follower, the broker epoch its fetch carried):
        only that follower may join, judged by that epoch, as Kafka's maybeExpandIsr judges
        the follower whose fetch it handles.
        """
        if not self.is_leader or self.pending_isr is not None:
            return None
        out = [r for r in self.isr if r != self.broker_id
               and self._out_of_sync(self.follower(r), now, lag_max_ms)] if shrink else None
        if out:
            return tuple(r for r in self.isr if r not in out)
        if not expand:
            return None
        hw = self.log.high_watermark
        back = [s.broker_id for s in sorted(self.followers, key=_by_broker)
                if s.broker_id not in self.isr and s.broker_id in self.replicas
                and s.end_offset >= max(hw, self.leader_epoch_start) and s.has_fetched()
                and (fetch is None or s.broker_id == fetch[0])
                and eligible(s.broker_id, s.fetched_broker_epoch() if fetch is None
                             else fetch[1])]
        if back:
            return (*self.isr, *back)
        return None

    def _out_of_sync(self, state: FollowerState | None, now: int, lag_max_ms: int) -> bool:
        """Kafka's isFollowerOutOfSync: a follower this leader knows nothing of is out of
        sync; one whose log end offset is the leader's never is, however long ago it last
        fetched (nothing was appended since: ``ReplicaState.isCaughtUp``); any other is out
        once it has not been caught up for longer than ``lag_max_ms``."""
        if state is None:
            return True
        return state.end_offset != self.log.end_offset and \
            now - state.last_caught_up() > lag_max_ms

    def isr_epochs(self, isr: tuple[int, ...], own_epoch: int,
                   fetch: tuple[int, int] | None = None) -> tuple[int, ...]:
        """The broker epoch this leader holds for each member of ``isr``, in its order, for
        an AlterPartition (KIP-903; Kafka's addBrokerEpochToIsr): ``own_epoch`` for this
        broker, the one the follower's fetch carried for a follower (``fetch``: the
        follower whose fetch asks for the change, and that fetch's epoch), and -1 for a
        follower this leader stores none of (not fetched since its epoch began here; the
        controller lets -1 pass)."""
        me = self.broker_id
        epochs: list[int] = []
        for member in isr:
            if member == me:
                epochs.append(own_epoch)
            elif fetch is not None and member == fetch[0]:
                epochs.append(fetch[1])
            else:
                state = self.follower(member)
                epochs.append(state.fetched_broker_epoch() if state is not None else -1)
        return tuple(epochs)

    # ------------------------------------------------------------------ follower
    def fetch_position(self) -> FetchPartition:
        """What a follower asks its leader for next."""
        return FetchPartition(self.topic_id, self.partition_id, self.leader_epoch,
                              self.log.end_offset, self.log.last_epoch)

    def apply_fetched(self, part: FetchedPartition) -> bool:
        """Take a leader's answer; True when records arrived."""
        log = self.log
        if part.error != "NONE" or self.is_leader:
            return False
        if part.diverging:
            log.truncate_to(_diverged_end(log, part.diverging_epoch,
                                          part.diverging_end_offset))
            return False
        if part.entries:
            first = part.entries[0].offset
            if first != log.end_offset:
                return False
            log.append_entries(list(part.entries))
        log.update_high_watermark(part.high_watermark)
        return bool(part.entries)


def _diverged_end(log: PartitionLog, leader_epoch: int, leader_end: int) -> int:
    """Where a follower cuts its log when the leader answers that it diverged: the
    leader's largest epoch at or below the follower's last and where it ends there
    (Kafka's AbstractFetcherThread.getOffsetTruncationState). This is below the
    follower's HW only after an unclean election (the HW then comes down with it).

    - the leader's log is empty (end -1): to 0 (Kafka's leader knows its own epoch from
      offset 0 and answers an older epoch with that start);
    - the follower has the leader's epoch: where the first of the two ends;
    - the follower has only older epochs: where its largest one ends (KIP-279); its
      next fetch names that epoch, and the leader answers again if need be;
    - the follower has only later epochs: from its first epoch's start (Kafka's
      epoch cache answers an epoch below its first with that start).
    """
    if leader_end < 0:
        return 0
    epoch, mine = log.end_offset_for_epoch(leader_epoch)
    if mine < 0:
        starts = log.epoch_starts
        return min(starts[0][1], leader_end) if starts else 0
    return min(mine, leader_end) if epoch == leader_epoch else mine
