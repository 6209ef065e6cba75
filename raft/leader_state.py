"""The leader's view of its voters: end offsets and the high watermark.

Shaped after Kafka's ``LeaderState``: the high watermark is the largest end
offset held by a majority of voters (the leader included, observers never),
accepted only once it is past the epoch start offset (so that the leader has
committed its own LeaderChange record first) and never moved backwards.
"""

from __future__ import annotations

from raft.mutations import Mutation

_HW_WITHOUT_MAJORITY, _COMMIT_OLD_EPOCH = Mutation.HW_WITHOUT_MAJORITY, Mutation.COMMIT_OLD_EPOCH
"""Read at every high-watermark check (module constants cost less than Enum lookups)."""
_NEVER_FETCHED = (-1, -1, -1)
"""A replica's fetch entry before its first fetch."""


class LeaderState:
    """Replica end offsets as the leader of ``epoch`` knows them."""

    def __init__(self, local_id: int, epoch: int, epoch_start_offset: int,
                 voters: tuple[int, ...],
                 mutations: frozenset[Mutation] = frozenset()) -> None:
        self.local_id = local_id
        self.epoch = epoch
        self.epoch_start_offset = epoch_start_offset
        self.voters = voters
        self.voter_end_offsets: dict[int, int] = {v: -1 for v in voters}
        self.observer_end_offsets: dict[int, int] = {}
        self.high_watermark: int | None = None
        self.acknowledged: set[int] = {local_id}  # voters that know this epoch's leader
        self.fetched_since_check: set[int] = {local_id}
        self.mutations = mutations
        self._fetches: dict[int, tuple[int, int, int]] = {}
        """Each other replica's last fetch: (its time, the leader's end offset then, the
        replica's last caught-up time); one entry, read and replaced once per fetch."""

    @property
    def majority(self) -> int:
        """How many voters make a majority."""
        return len(self.voters) // 2 + 1

    def update_local_end_offset(self, end_offset: int) -> bool:
        """Record the leader's own flushed end; returns True if the HW moved."""
        return self.update_replica_end_offset(self.local_id, end_offset)

    def update_replica_end_offset(self, replica_id: int, end_offset: int,
                                  now: int | None = None) -> bool:
        """Record a replica's end offset from a valid fetch; returns True if the HW moved.

        ``now``: the fetch's time, which updates the replica's fetch and caught-up times
        (Kafka's ReplicaState.updateFollowerState); None for the leader's own end offset.
        A negative replica id (a fetch that is not a replica's, as a consumer's) is
        ignored, as Kafka's LeaderState.updateReplicaState ignores it."""
        if replica_id < 0:
            return False
        if now is not None and replica_id != self.local_id:
            self._fetched_at(replica_id, end_offset, now)
        offsets = self.voter_end_offsets
        if replica_id in offsets:
            self.acknowledged.add(replica_id)
            self.fetched_since_check.add(replica_id)
            if offsets[replica_id] == end_offset:
                return False  # nothing moved: the last advance already saw these offsets
            offsets[replica_id] = end_offset
            return self._maybe_advance()
        self.observer_end_offsets[replica_id] = end_offset
        return False

    def _fetched_at(self, replica_id: int, fetch_offset: int, now: int) -> None:
        last_fetch, told, caught_up = self._fetches.get(replica_id, _NEVER_FETCHED)
        leader_end = self.voter_end_offsets[self.local_id]
        if leader_end >= 0:
            if fetch_offset >= leader_end:
                caught_up = max(caught_up, now)
            elif 0 < told <= fetch_offset:  # it reached the end the last fetch was told of
                caught_up = max(caught_up, last_fetch)
            told = leader_end
        self._fetches[replica_id] = (max(last_fetch, now), told, caught_up)

    def last_fetch_ms(self, replica_id: int) -> int:
        """When another replica last fetched (Kafka's lastFetchTimestamp), -1: never."""
        return self._fetches.get(replica_id, _NEVER_FETCHED)[0]

    def last_caught_up_ms(self, replica_id: int) -> int:
        """When another replica was last known to hold the leader's whole log (Kafka's
        lastCaughtUpTimestamp): the time of a fetch at the leader's end offset, or of the
        fetch before one that reached the end offset that fetch was told of; -1: never."""
        return self._fetches.get(replica_id, _NEVER_FETCHED)[2]

    def update_check_quorum_for_following_voter(self, replica_id: int) -> None:
        """A voter showed it follows this leader without a log fetch (a FetchSnapshot)."""
        if replica_id in self.voter_end_offsets:
            self.fetched_since_check.add(replica_id)

    def _maybe_advance(self) -> bool:
        offsets = sorted(self.voter_end_offsets.values(), reverse=True)
        if _HW_WITHOUT_MAJORITY in self.mutations:
            candidate = offsets[0]
        else:
            candidate = offsets[len(self.voters) // 2]
        if candidate <= self.epoch_start_offset and _COMMIT_OLD_EPOCH not in self.mutations:
            return False
        if self.high_watermark is not None and candidate <= self.high_watermark:
            return False
        self.high_watermark = candidate
        return True

    def check_quorum_reached(self) -> bool:
        """True when a majority fetched since the last check; starts a new check window."""
        if len(self.fetched_since_check) >= self.majority:
            self.fetched_since_check = {self.local_id}
            return True
        return False

    def preferred_successors(self) -> tuple[int, ...]:
        """Other voters, most up to date first (for EndQuorumEpoch)."""
        others = [v for v in self.voters if v != self.local_id]
        return tuple(sorted(others, key=lambda v: (-self.voter_end_offsets[v], v)))
