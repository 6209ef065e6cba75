"""ReplicaManager: the partitions a broker hosts, as its published image assigns them.

A publisher of the broker's :class:`~broker.loader.MetadataLoader`: each
published image (and nothing else) decides which replicas exist here, who
leads them and with which epochs; only the topics whose image changed are
visited (through the image's broker index). Replicas start only once the
broker has caught up (its published image holds its own registration, as
Kafka's BrokerServer waits for the lifecycle manager's initial catch-up): a
restarted broker thus never leads in an epoch of its previous incarnation.
Their logs live in the broker's :class:`~broker.log_dir.LogDir` and survive
restarts. Followers fetch from the leader
their image names (one request per leader broker, the next one as soon as
the answer arrives, after ``replica.fetch.backoff.ms`` when it held errors).
Leaders answer, move the high watermark, and propose ISR changes to the
controller: a shrink at the periodic ISR check (Kafka's ``maybeShrinkIsr``, every
half ``replica.lag.time.max.ms``), an expansion as soon as a fetch finds an
eligible follower back in sync (Kafka's ``maybeExpandIsr`` at each follower fetch;
the periodic check only shrinks). Eligible is what this broker's image says of the
follower (KIP-841/KIP-903: unfenced, not in controlled shutdown, fetching with its
current broker epoch), so a fenced broker that still fetches is not proposed again
and again only for the controller to refuse it. Each proposal names the broker
epoch the leader holds for every member of the ISR it asks for (KIP-903), so the
controller can refuse a member that registered again since (the leader's image may
lag). A partition has at most one proposal pending (Kafka's Partition). Proposals
go to the broker's :class:`~broker.alter_partition_manager.AlterPartitionManager`
(:attr:`ReplicaManager.alter_partitions`, Kafka's DefaultAlterPartitionManager),
which sends them batched, one AlterPartition request in flight, the proposals
submitted meanwhile in the next; it sends a request again after a top-level error
(50 ms on), after NOT_CONTROLLER or a lost request (its controller channel, to the
next active controller as soon as the broker's raft client learns of it), and a
partition missing from an answer in the next request. Each partition's answer is
taken as Kafka's Partition takes it (see :meth:`ReplicaManager._on_alter_answer`):
a refusal not applied drops the pending change, an error of stale metadata keeps it
until the image moves, another error submits it again, and an answer to a replaced
proposal is ignored. A proposal the manager refuses because the partition's previous
one (replaced since by the image) is still there is dropped as Kafka's Partition
drops an OPERATION_NOT_ATTEMPTED, and made again at a later fetch or check.
Fetches carry the broker epoch from metadata.version 3.5-IV1 on, and a fetch
whose epoch is older than the unfenced one the leader's image holds for its
follower is refused NOT_LEADER_OR_FOLLOWER, recording nothing (Kafka's
Replica.updateFetchStateOrThrow). A fetch that finds nothing new is held for up
to ``replica.fetch.wait.max.ms`` (Kafka's DelayedFetch) and answered as soon as
one of its partitions gets records or changes leadership.

Fetches use incremental fetch sessions (KIP-227, see
:mod:`broker.fetch_messages`): after a full fetch a follower names only the
partitions whose position changed, and the leader reads only the partitions
named or with something new since its last answer (records, a high watermark
move, leadership); a partition its follower is caught up on is *idle* and
counts as fetched at each of the session's fetches (its
:class:`~broker.replica.FetchClock`), so an idle partition costs nothing per
fetch and the ISR sees the same fetch times as with full fetches.

A follower replica whose log is empty is *compact*: the manager holds its
registration (the image's own object) and nothing else, since a Replica made
from it would hold nothing else either (its log empty, no follower states, no
pending ISR change). It fetches, is answered and is listed like any replica;
it gets a Replica of its own when records arrive, or when someone reads it
through :attr:`replicas`. A leader whose log is empty is compact too
(:class:`~broker.compact_leader.CompactLeader`: its registration, when its
epoch began and one clock per follower) and answers its followers' plain
fetches in that form; a produce, a marker, an ISR change to propose or a
fetch it cannot answer plainly gives it a Replica. At 1,000,000 partitions
that leaves a broker's idle replicas without objects of their own.

Clients call :meth:`produce`, :meth:`fetch`, :meth:`list_offsets` (ListOffsets, for
the earliest and latest offsets), :meth:`last_offset_for_leader_epoch`
(OffsetsForLeaderEpoch) and :meth:`init_producer_id` in-process. The partition's
leader answers the first four (any replica a debugging ListOffsets) after the checks
of Kafka's getPartitionOrError and getLocalLog (see :meth:`local_replica`). A
produce with acks=all waits until the high watermark passes its
last offset (or fails NOT_LEADER_OR_FOLLOWER when leadership moves,
REQUEST_TIMED_OUT after ``request.timeout.ms``). ``min.insync.replicas`` is
Kafka's effective one (at most the replication factor): an acks=all produce or a
transaction marker is refused NOT_ENOUGH_REPLICAS while the ISR is smaller, an
acknowledgement finds NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR
shrank below it, and the high watermark waits while the ISR is below it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

import immutables
import msgspec

from broker.alter_partition_manager import AlterPartitionItem, AlterPartitionManager
from broker.batch_loader import Manifest
from broker.compact_leader import (
    CAUGHT_UP,
    ClockShare,
    CompactLeader,
    fetched_at,
    materialize,
    new_compact_leader,
    unfetched,
)
from broker.config import BrokerConfig
from broker.fetch_messages import (
    NO_LEADER_EPOCH,
    FetchedPartition,
    FetchPartition,
    ReplicaFetchRequest,
    ReplicaFetchResponse,
)
from broker.fetch_session import FetchSession, FetchSessionCache, FetchSessionHandler, HeldFetch
from broker.lifecycle import BrokerLifecycleManager
from broker.loader import MetadataLoader
from broker.log_dir import LogDir
from broker.metadata_cache import alive_broker_epoch, is_broker_shutting_down
from broker.mutations import BrokerMutation
from broker.partition_log import ActiveProducer, LogEntry, PartitionLog, SequenceError
from broker.producer_ids import REQUEST_RETRY_TIMEOUT_MS, ProducerIdManager
from broker.replica import IsrRules, Replica
from broker.replica_view import Held, HeldReplicas, ReplicaView
from broker.txn.fetch import READ_COMMITTED, READ_UNCOMMITTED
from broker.txn.verification import (
    PRODUCE_TV1_VERSION,
    SENTINEL,
    ProduceBatch,
    TxnVerifier,
    VerificationGuard,
)
from metadata.controller_channel import ControllerChannel
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import ConfigKey, MetadataImage, PartitionRegistration
from metadata.requests import (
    AllocateProducerIdsResponse,
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionResponse,
    NodeMessage,
)
from metadata.versions import FETCH_BROKER_EPOCH
from raft import LeaderAndEpoch

MIN_INSYNC_REPLICAS = "min.insync.replicas"
"""Kafka's topic config (and cluster-wide broker default)."""
PRODUCER_ID_EXPIRATION_MS = "producer.id.expiration.ms"
"""Kafka's dynamic broker config."""

ALTER_BACK_TO_COMMITTED = frozenset({"INELIGIBLE_REPLICA", "OPERATION_NOT_ATTEMPTED"})
"""AlterPartition errors after which the leader drops its pending ISR change (Kafka's
handleAlterPartitionError: the request was not applied, the partition epoch is current)."""

ALTER_KEEPS_PENDING = frozenset({
    "UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_ID", "FENCED_LEADER_EPOCH",
    "INVALID_UPDATE_VERSION", "INVALID_REQUEST", "NEW_LEADER_ELECTED"})
"""AlterPartition errors after which the leader keeps its pending ISR change until new
metadata (Kafka's handleAlterPartitionError: its metadata is behind); any other error
not NONE is submitted again at once."""

COMPACT_LEADERS = True
"""Whether a leader with an empty log is held compact (tests switch it off to compare)."""


class ProduceResult(msgspec.Struct, frozen=True):
    """A produce's answer: NONE with the batch's offsets, or a Kafka error name."""

    error: str
    first_offset: int = -1
    last_offset: int = -1
    duplicate: bool = False


ProduceCallback = Callable[[ProduceResult], None]


EARLIEST_TIMESTAMP = -2
"""ListOffsets: the log start offset (Kafka's ListOffsetsRequest.EARLIEST_TIMESTAMP)."""
LATEST_TIMESTAMP = -1
"""ListOffsets: the end a reader may read to (Kafka's ListOffsetsRequest.LATEST_TIMESTAMP)."""
EARLIEST_LOCAL_TIMESTAMP = -4
"""ListOffsets: the local log's start (KIP-405; the log start offset without tiered storage)."""
CONSUMER_REPLICA_ID = -1
"""ListOffsets from a client (Kafka's ListOffsetsRequest.CONSUMER_REPLICA_ID)."""
DEBUGGING_REPLICA_ID = -2
"""ListOffsets that any replica answers (Kafka's ListOffsetsRequest.DEBUGGING_REPLICA_ID)."""


class ListedOffset(msgspec.Struct, frozen=True):
    """One partition's ListOffsets answer: an error name, the offset and the leader epoch
    (-1 and -1: none, as Kafka's UNKNOWN_OFFSET and UNKNOWN_EPOCH)."""

    error: str
    offset: int = -1
    leader_epoch: int = -1


class EpochEndOffset(msgspec.Struct, frozen=True):
    """One partition's OffsetsForLeaderEpoch answer (Kafka's EpochEndOffset): an error
    name, the largest leader epoch at or below the one asked for and where it ends
    (-1 and -1: UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET)."""

    error: str
    leader_epoch: int = -1
    end_offset: int = -1


class _Pending(msgspec.Struct):
    replica: Replica
    result: ProduceResult
    deadline: int
    callback: ProduceCallback


class ReplicaManager:
    """The replicas of one broker; see the module docs."""

    def __init__(self, broker_id: int, loader: MetadataLoader,
                 lifecycle: BrokerLifecycleManager | None, now: int,
                 config: BrokerConfig | None = None,
                 mutations: frozenset[BrokerMutation] = frozenset(),
                 log_dir: LogDir | None = None) -> None:
        self.broker_id = broker_id
        self.log_dir = log_dir if log_dir is not None else LogDir()
        self.loader = loader
        self.lifecycle = lifecycle
        self.config = config or BrokerConfig()
        self.mutations = mutations
        self.now = now
        self.image: MetadataImage | None = None
        # every replica here, by topic and then partition in the order they were made
        # (see HeldReplicas): a Replica, or with an empty log a follower's registration
        # alone or a CompactLeader (see the module docs)
        self._replicas = HeldReplicas()
        self.replicas: Mapping[tuple[str, int], Replica] = ReplicaView(self._replicas,
                                                                       self._replica)
        """Every replica here by (topic id, partition); reading a compact one makes it."""
        self.log_dir.attach(self)
        self.outbox: list[NodeMessage] = []
        self.pending: list[_Pending] = []
        self._correlation = 0
        self._fetch_due: dict[int, int] = {}       # leader broker -> next fetch time
        self._in_flight: dict[int, tuple[int, int]] = {}  # leader -> (correlation, sent at)
        # AlterPartition: partition -> the manager's item of its pending proposal (an
        # answer to any other is ignored)
        self._alter_sent: dict[tuple[str, int], AlterPartitionItem] = {}
        self.alter_partitions = AlterPartitionManager(
            broker_id, self._broker_epoch, self._controller_id,
            request_timeout_ms=self.config.request_timeout_ms, on_answer=self._on_alter_answer,
            emit=self.outbox_append, controller_epoch=self._controller_epoch,
            next_correlation=self._next_correlation)
        """The broker's AlterPartitionManager (Kafka's DefaultAlterPartitionManager): the
        partitions' ISR proposals, one batched request in flight."""
        self.in_controlled_shutdown = False
        """Set once the broker began its controlled shutdown (Kafka's isInControlledShutdown)."""
        # follower partitions an image during the controlled shutdown stopped fetching
        self._stopped: set[tuple[str, int]] = set()
        self._held: dict[int, HeldFetch] = {}  # follower broker -> its held fetch
        self._sessions = FetchSessionCache()  # our followers' sessions, as their leader
        self._handlers: dict[int, FetchSessionHandler] = {}  # leader broker -> our session
        self._followed: dict[int, int] = {}  # leader broker -> partitions we fetch there
        self._changed: dict[tuple[str, int], None] = {}  # insertion-ordered set
        self._next_isr_check = now
        self._clocks = ClockShare()  # the compact leaders' follower clocks
        self._isr_rules = IsrRules(self.config.replica_lag_time_max_ms, self.isr_eligible)
        self.txn_verifier: TxnVerifier | None = None
        """KIP-890 part 1: the transaction verification hook (set where transaction
        coordinators run, :class:`sim.txn_cluster.TxnCluster`); None: nothing verified."""
        self.producer_ids = ProducerIdManager(broker_id, ControllerChannel(
            broker_id, self._controller_id, retry_timeout_ms=REQUEST_RETRY_TIMEOUT_MS,
            request_timeout_ms=self.config.request_timeout_ms, emit=self.outbox_append))
        loader.subscribe(self._on_image)
        loader.watch_leader(self._on_controller_change)

    # ------------------------------------------------------------------ image
    @property
    def started(self) -> bool:
        """True once the replicas act on the published images (after the initial catch-up)."""
        return self.image is not None

    def drain_changed(self) -> list[tuple[str, int]]:
        """The replicas whose role, epochs, log or high watermark may have changed since
        the last call, in the order they changed (for observers such as invariant checks;
        a compact replica, a follower with an empty log, has nothing to observe and may be
        left out)."""
        changed, self._changed = list(self._changed), {}
        return changed

    def _maybe_start(self) -> None:
        """Take the published image once the broker has caught up (see the module docs)."""
        if self.image is None and self.loader.published is not None and \
                (self.lifecycle is None or self.lifecycle.caught_up):
            self._apply(self.loader.published)

    def _on_image(self, image: MetadataImage, manifest: Manifest) -> None:
        if self.image is None:
            self._maybe_start()
        else:
            self._apply(image, full=manifest.from_snapshot)

    def _apply(self, image: MetadataImage, *, full: bool = False) -> None:
        """Take ``image``. ``full``: it comes from a loaded snapshot, which Kafka's delta
        holds whole, so every partition here counts as changed (it matters only during a
        controlled shutdown: see :meth:`_fetching_after_shutdown`)."""
        previous, self.image = self.image, image
        # a snapshot loaded during a controlled shutdown: look at every partition here
        every = full and self.in_controlled_shutdown
        empty: immutables.Map[str, tuple[int, ...]] = immutables.Map()
        mine = image.partitions_by_broker.get(self.broker_id, empty)
        before = previous.partitions_by_broker.get(self.broker_id, empty) if previous \
            else empty
        if previous is None:  # stray logs: replicas this disk holds that are no longer ours
            for key in self.log_dir.replica_keys():
                if key[1] not in mine.get(key[0], ()):
                    self.log_dir.delete(key)
        # logs a previous process left (none, mostly): taking one is only worth a look then
        take_log = self.log_dir.take if self.log_dir.leftover else None
        replicas, changed, me, now = self._replicas, self._changed, self.broker_id, self.now
        by_topic, followed, fetch_due = replicas.by_topic, self._followed, self._fetch_due
        handlers: dict[int, FetchSessionHandler] = {}  # leader -> our session there
        # no session opens or closes here
        all_sessions = list(self._sessions.by_follower.items())
        for topic_id in sorted(set(mine) | set(before)):
            topic = image.topics_by_id.get(topic_id)
            pids = mine.get(topic_id, ())
            old_pids = before.get(topic_id, ())
            if previous is not None and topic is previous.topics_by_id.get(topic_id) \
                    and (pids is old_pids or pids == old_pids) and not every:
                continue
            kept = set(pids)
            for pid in old_pids:  # the replicas the previous image made here
                if pid not in kept:
                    key = (topic_id, pid)
                    gone = replicas.pop(key)
                    if gone is not None:
                        self._follow(key, self._fetching_from(key, gone), None)
                        self._stopped.discard(key)
                        self._touch(key)
                    self.log_dir.delete(key)
            if topic is None or not pids:
                continue
            partitions, name = topic.partitions, topic.name
            here = by_topic.get(topic_id)  # this topic's replicas here, by partition
            if here is None:
                here = by_topic[topic_id] = {}
            sessions = [(follower, session.partitions[topic_id], session.pending)
                        for follower, session in all_sessions  # those that fetch the topic
                        if topic_id in session.partitions]
            if not old_pids and not sessions and take_log is None and COMPACT_LEADERS \
                    and not self.in_controlled_shutdown:
                self._add_topic(topic_id, here, pids, partitions)
                if not here:  # none of its partitions had a registration
                    del by_topic[topic_id]
                continue
            for pid in pids:
                reg = partitions.get(pid)
                if reg is None:
                    continue
                key = (topic_id, pid)
                # a replica here is one the previous image assigned here: none if it
                # assigned none of the topic (e.g. a new topic)
                held = here.get(pid) if old_pids else None
                if held is None:
                    log = take_log(key) if take_log is not None else None
                    leader = reg.leader
                    if log is None and (leader != me or COMPACT_LEADERS):  # pristine
                        if leader == me:
                            new: Held = new_compact_leader(reg, me, now)
                            changed[key] = None
                        else:  # a compact follower has nothing to observe
                            new = reg
                        here[pid] = new
                    else:
                        new = replica = self._new_replica(key, name, log)
                        replica.become(reg, now)
                        changed[key] = None
                    for follower, parts, pending in sessions:  # as _touch
                        if pid in parts:
                            self._wake(follower, key)
                            pending[key] = None
                    # as _follow from no leader (a new replica's epoch is always new);
                    # its leader is the registration's
                    if self.in_controlled_shutdown and self._stops_fetching(reg):
                        self._stopped.add(key)
                    elif leader >= 0 and leader != me:
                        to = handlers.get(leader)
                        if to is None:
                            to = handlers[leader] = self._handler(leader)
                        to.mark(key)
                        followed[leader] = followed.get(leader, 0) + 1
                        fetch_due.setdefault(leader, now)
                    continue
                was = self._fetching_from(key, held)
                epoch = held.leader_epoch
                new = self._become(key, held, reg, name)
                if type(new) is not PartitionRegistration:  # a compact follower has nothing
                    changed[key] = None                     # to observe
                for follower, parts, pending in sessions:  # as _touch
                    if pid in parts:
                        self._wake(follower, key)
                        pending[key] = None
                leader = new.leader
                now_from = leader if leader >= 0 and leader != me else None
                if self.in_controlled_shutdown and (
                        every or self._changed_by_delta(previous, key, reg)):
                    now_from = self._fetching_after_shutdown(key, reg, epoch, now_from)
                if now_from != was or new.leader_epoch != epoch:
                    self._follow(key, was, now_from)
                if now_from is not None:
                    fetch_due.setdefault(now_from, now)
            if not here:  # none of its partitions had a registration
                del by_topic[topic_id]
        if previous is not None and image.configs is not previous.configs:
            self._refresh_min_isr()
        self._answer_held(lambda held: True)  # leaderships may have moved: answer now
        self._complete_produces()

    def _refresh_min_isr(self) -> None:
        """The configs changed: each replica's min.insync.replicas again (a leader's high
        watermark may move when it went down)."""
        for key, held in self._replicas.items():
            if type(held) is Replica:
                held.min_isr = self.min_insync(held.topic)
                if held.is_leader and held.maybe_advance_high_watermark(self.now):
                    self._changed[key] = None
                    self._touch(key)

    @staticmethod
    def _changed_by_delta(previous: MetadataImage | None, key: tuple[str, int],
                          reg: PartitionRegistration) -> bool:
        """True when ``reg`` differs from ``key``'s registration in ``previous`` (Kafka's
        local changes of a delta name no other partition; a loaded snapshot's name every
        one, see :meth:`_apply`)."""
        topic = previous.topics_by_id.get(key[0]) if previous is not None else None
        old = topic.partitions.get(key[1]) if topic is not None else None
        return old is not reg and old != reg

    def _fetching_after_shutdown(self, key: tuple[str, int], reg: PartitionRegistration,
                                 old_epoch: int, leader: int | None) -> int | None:
        """The leader ``key`` fetches from after ``reg`` (``leader`` without a controlled
        shutdown): none once it stops fetching; a stopped one fetches again only from a
        new leader epoch that does not stop it (Kafka restarts a follower's fetcher on a
        new leader epoch only), or stops being a follower."""
        if self._stops_fetching(reg):
            self._stopped.add(key)
            return None
        if key in self._stopped:
            if leader is not None and reg.leader_epoch == old_epoch:
                return None
            self._stopped.discard(key)
        return leader

    def _add_topic(self, topic_id: str, here: dict[int, Held], pids: tuple[int, ...],
                   partitions: Mapping[int, PartitionRegistration]) -> None:
        """The replicas of a topic the previous image assigned none of here, with no logs
        left on disk and no session fetching it: all of them compact (as the general loop
        in :meth:`_apply` would make them, in fewer steps)."""
        me, now, changed = self.broker_id, self.now, self._changed
        following: dict[int, list[int]] = {}  # leader -> the partitions fetched there
        for pid, reg in zip(pids, map(partitions.get, pids), strict=True):
            if reg is None:
                continue
            leader = reg.leader
            if leader == me:
                here[pid] = CompactLeader(reg, now, unfetched(len(reg.replicas) - 1)) \
                    if me in reg.replicas else new_compact_leader(reg, me, now)
                changed[(topic_id, pid)] = None
                continue
            here[pid] = reg  # a compact follower has nothing to observe
            if leader >= 0:
                found = following.get(leader)
                if found is None:
                    following[leader] = [pid]
                else:
                    found.append(pid)
        fetch_due, followed = self._fetch_due, self._followed
        for leader, fetched in following.items():  # as _follow from no leader
            self._handler(leader).mark_all(topic_id, fetched)
            followed[leader] = followed.get(leader, 0) + len(fetched)
            fetch_due.setdefault(leader, now)

    def _become(self, key: tuple[str, int], held: Held, reg: PartitionRegistration,
                name: str) -> Held:
        """``held`` after the image's new registration ``reg``: the same object, or its
        successor in ``_replicas``."""
        me, now = self.broker_id, self.now
        if isinstance(held, Replica):
            held.become(reg, now)
            return held
        new_epoch = reg.leader_epoch != held.leader_epoch
        if reg.leader == me and new_epoch and COMPACT_LEADERS:  # a new epoch, the log empty
            new: Held = new_compact_leader(reg, me, now)
        elif reg.leader != me:  # it follows, its log empty
            new = reg
        elif type(held) is CompactLeader and reg.replicas == held.reg.replicas:
            held.reg = reg  # the same followers in the same epoch: an ISR or epoch change
            return held
        else:  # a reassignment in the same epoch (or no epoch bump): a replica of its own
            if isinstance(held, CompactLeader):
                replica = self._replica(key)
            else:
                replica = self._new_replica(key, name, None)
                replica.become(held, now)
            replica.become(reg, now)
            return replica
        self._replicas[key] = new
        return new

    def replica_keys(self) -> Iterable[tuple[str, int]]:
        """Every replica here (for the log dir)."""
        return self._replicas.keys()

    def full_replicas(self) -> list[tuple[tuple[str, int], Replica]]:
        """(key, replica) of every replica with state of its own, topic by topic; a compact
        one (an empty log) is left out and stays compact (``replicas`` would make it)."""
        return [((topic_id, pid), held) for topic_id, topic in self._replicas.by_topic.items()
                for pid, held in topic.items() if type(held) is Replica]

    def held_logs(self) -> Iterator[tuple[tuple[str, int], PartitionLog]]:
        """The logs the replicas hold (a compact one has none yet)."""
        for key, replica in self.full_replicas():
            yield key, replica.log

    def all_logs(self) -> Iterator[tuple[tuple[str, int], PartitionLog]]:
        """Every replica's log (a compact one gets its replica now)."""
        for key in list(self._replicas):
            yield key, self._replica(key).log

    def high_watermarks(self) -> list[tuple[str, int, int]]:
        """(topic, partition, high watermark) of every replica here, by topic name and
        partition: what Kafka's ``ReplicaManager.checkpointHighWatermarks`` writes to the log
        directory's ``replication-offset-checkpoint``. A compact replica (its log empty) has
        high watermark 0 and stays compact."""
        found: list[tuple[str, int, int]] = []
        for key in list(self._replicas):
            held = self._replicas[key]
            if type(held) is Replica:
                found.append((held.topic, held.partition_id, held.log.high_watermark))
            elif self.image is not None and key[0] in self.image.topics_by_id:
                found.append((self.image.topics_by_id[key[0]].name, key[1], 0))
        return sorted(found)

    def _new_replica(self, key: tuple[str, int], topic: str,
                     log: PartitionLog | None) -> Replica:
        """A replica of its own for ``key`` (with the log its disk holds, or a new one)."""
        replica = Replica(self.broker_id, key[0], topic, key[1],
                          log if log is not None else self._new_log())
        replica.hw_ignores_isr = BrokerMutation.HW_IGNORES_ISR in self.mutations
        replica.isr_rules = self._isr_rules
        replica.min_isr = self.min_insync(topic)
        self._replicas[key] = replica
        return replica

    def _replica(self, key: tuple[str, int]) -> Replica:
        """The replica of ``key``, made for a compact one (KeyError: not a replica here)."""
        held = self._replicas[key]
        if isinstance(held, Replica):
            return held
        assert self.image is not None
        replica = self._new_replica(key, self.image.topics_by_id[key[0]].name,
                                    self.log_dir.take(key))
        if isinstance(held, CompactLeader):
            materialize(held, replica)
            # the compact form keeps no broker epoch: a follower that fetched it did so in
            # its fetch session, whose last fetch carried the epoch (Kafka stores it at each
            # fetch for every partition of the session)
            sessions = self._sessions.by_follower
            for state in replica.followers:
                session = sessions.get(state.broker_id)
                if session is not None and state.has_fetched() and session.holds(key):
                    state.broker_epoch = session.clock.broker_epoch
        else:
            replica.become(held, self.now)
        return replica

    def peek(self, key: tuple[str, int]) -> Replica | None:
        """The replica of ``key`` if it has state of its own; None for a compact one (a
        follower with an empty log, as its registration in the image says) or none."""
        held = self._replicas.get(key)
        return held if type(held) is Replica else None

    def held(self, key: tuple[str, int]) -> Held | None:
        """What this broker holds for ``key`` as it holds it (no Replica is made): a
        Replica, a compact leader, a compact follower's registration, or None."""
        return self._replicas.get(key)

    def compact_leader_epoch(self, key: tuple[str, int]) -> int | None:
        """The leader epoch of ``key`` when this broker leads it in compact form (its log
        empty; see the module docs), else None."""
        held = self._replicas.get(key)
        return held.leader_epoch if type(held) is CompactLeader else None

    def _fetching_from(self, key: tuple[str, int], replica: Held) -> int | None:
        """The leader this broker fetches ``replica`` from, None as leader, leaderless, or
        stopped by the controlled shutdown."""
        leader = replica.leader
        return leader if leader >= 0 and leader != self.broker_id and \
            key not in self._stopped else None

    def _stops_fetching(self, reg: PartitionRegistration) -> bool:
        """Kafka's applyLocalFollowersDelta during a controlled shutdown: a follower whose new
        registration has no leader, or leaves this broker out of the ISR, stops fetching."""
        me = self.broker_id
        return self.in_controlled_shutdown and reg.leader != me and \
            (reg.leader < 0 or me not in reg.isr)

    def _follow(self, key: tuple[str, int], was: int | None, now: int | None) -> None:
        """``key``'s fetch position or leader changed: tell the sessions concerned."""
        if was is not None:
            self._handler(was).mark(key)  # its new position, or forgotten
            if was != now:
                self._followed[was] -= 1
        if now is not None:
            self._handler(now).mark(key)
            if was != now:
                self._followed[now] = self._followed.get(now, 0) + 1

    def _handler(self, leader: int) -> FetchSessionHandler:
        handler = self._handlers.get(leader)
        if handler is None:
            handler = self._handlers[leader] = FetchSessionHandler()
        return handler

    def _touch(self, key: tuple[str, int], skip: int = -1) -> None:
        """``key`` has something new for its followers: their sessions read it next fetch."""
        for follower, session in self._sessions.by_follower.items():
            if follower != skip and session.holds(key):
                self._wake(follower, key)
                session.pending[key] = None

    def _wake(self, follower: int, key: tuple[str, int]) -> None:
        here = self._replicas.by_topic.get(key[0])
        replica = here.get(key[1]) if here is not None else None
        if type(replica) is Replica:
            state = replica.follower(follower)
            if state is not None:
                state.wake()
        elif type(replica) is CompactLeader:
            replica.wake(follower, self.broker_id, self._clocks)

    def _new_log(self) -> PartitionLog:
        return PartitionLog(
            check_sequences=BrokerMutation.SEQUENCE_CHECK_OFF not in self.mutations)

    def min_insync(self, topic: str) -> int:
        """min.insync.replicas of ``topic``: topic config, cluster default, broker config."""
        found = self._config_value(MIN_INSYNC_REPLICAS, ((TOPIC_RESOURCE, topic),
                                                         (BROKER_RESOURCE, "")))
        return self.config.min_insync_replicas if found is None else int(found)

    def _config_value(self, name: str, resources: tuple[ConfigKey, ...]) -> str | None:
        """Config ``name`` of the first of ``resources`` that sets it in the image."""
        image = self.image
        if image is not None:
            for key in resources:
                configs = image.configs.get(key)
                if configs is not None and name in configs:
                    return configs[name]
        return None

    def describe_producers(self, topic: str, partition: int) -> list[ActiveProducer] | str:
        """DescribeProducers for one partition: the active producers of this broker's
        replica, leader or follower (Kafka's ReplicaManager.activeProducerState answers
        from any replica it hosts; the admin client asks the leader unless told a broker),
        or the Kafka error (:meth:`local_replica`)."""
        found = self.local_replica(topic, partition, require_leader=False)
        return found if isinstance(found, str) else found.log.active_producers()

    def producer_id_expiration_ms(self, static: int) -> int:
        """producer.id.expiration.ms as this broker applies it: its own dynamic config, the
        cluster default (Kafka's DynamicProducerStateManagerConfig), else ``static``."""
        found = self._config_value(PRODUCER_ID_EXPIRATION_MS, (
            (BROKER_RESOURCE, str(self.broker_id)), (BROKER_RESOURCE, "")))
        return static if found is None else int(found)

    def remove_expired_producers(self, now: int, static_expiration_ms: int) -> int:
        """Kafka's periodic producer expiration check over every log this broker holds
        (:meth:`~broker.partition_log.PartitionLog.remove_expired_producers`), with
        :meth:`producer_id_expiration_ms`; returns how many producer ids it forgot."""
        expiration_ms = self.producer_id_expiration_ms(static_expiration_ms)
        return sum(len(log.remove_expired_producers(now, expiration_ms))
                   for _, log in self.held_logs())

    # ------------------------------------------------------------------ app
    def drain_outbox(self) -> list[NodeMessage]:
        """Fetches, fetch answers and AlterPartitions to send."""
        out, self.outbox = self.outbox, []
        return out

    def next_deadline(self) -> int | None:
        """The next fetch, ISR check, AlterPartition retry or timeout, or produce deadline."""
        deadline = self._next_isr_check  # (asked after every event of this broker: no lists)
        in_flight = self._in_flight
        for leader, due in self._fetch_due.items():
            if due < deadline and leader not in in_flight:
                deadline = due
        if in_flight:
            timeout = self.config.request_timeout_ms // 10
            for _, sent in in_flight.values():
                if sent + timeout < deadline:
                    deadline = sent + timeout
        for pending in self.pending:
            if pending.deadline < deadline:
                deadline = pending.deadline
        for held in self._held.values():
            if held.deadline < deadline:
                deadline = held.deadline
        for at in (self.alter_partitions.next_deadline(),
                   self.producer_ids.channel.next_deadline()):
            if at is not None and at < deadline:
                deadline = at
        return deadline

    def poll(self, now: int) -> None:
        """Send due fetches, check ISRs, time produces out."""
        self.now = now
        self._maybe_start()
        for leader, (_, sent) in list(self._in_flight.items()):
            if now >= sent + self.config.request_timeout_ms // 10:
                del self._in_flight[leader]  # lost: fetch again, in a new session
                self._handlers[leader] = FetchSessionHandler()
                self._fetch_due[leader] = now
        for leader, due in sorted(self._fetch_due.items()):
            if due <= now and leader not in self._in_flight:
                self._send_fetch(leader, now)
        self.alter_partitions.poll(now)
        if self.producer_ids.channel.busy:
            self.producer_ids.channel.poll(now)
        if now >= self._next_isr_check:
            self._next_isr_check = now + self.config.replica_lag_time_max_ms // 2
            self._check_isrs(now)
        self._answer_held(lambda held: now >= held.deadline)
        self._complete_produces()

    def begin_controlled_shutdown(self, now: int) -> bool:
        """The broker begins its controlled shutdown (Kafka's BrokerServer tells its replica
        manager first): from now on, a follower partition that a new image leaves without
        a leader, or with this broker out of its ISR, stops fetching (see :meth:`_apply`;
        after a loaded snapshot every such partition, changed or not, as in Kafka).
        False: nothing to wait for here (the lifecycle manager waits for the controller)."""
        self.in_controlled_shutdown = True
        return False

    def close(self, now: int) -> None:
        """The process stops: waiting produces (and verifications) fail as a lost
        connection."""
        if self.txn_verifier is not None:
            self.txn_verifier.close()
        pending, self.pending = self.pending, []
        self.producer_ids.channel.close()
        for p in pending:
            p.callback(ProduceResult("NETWORK_EXCEPTION"))

    def _broker_epoch(self) -> int:
        return self.lifecycle.broker_epoch if self.lifecycle is not None else -1

    def _controller_id(self) -> int | None:
        return self.loader.leader.leader_id

    def _controller_epoch(self) -> int:
        return self.loader.leader.epoch

    def _next_correlation(self) -> int:
        self._correlation += 1
        return self._correlation

    def outbox_append(self, message: NodeMessage) -> None:
        """Queue ``message`` to send (the producer-id channel's requests go here too)."""
        self.outbox.append(message)

    # ------------------------------------------------------------------ replication
    def _send_fetch(self, leader: int, now: int) -> None:
        if not self._followed.get(leader, 0):
            del self._fetch_due[leader]
            return
        handler = self._handler(leader)
        forgotten: list[tuple[str, int]] = []
        if handler.session_id == 0:  # a full fetch: every partition fetched from there
            me = self.broker_id
            stopped = self._stopped
            parts = [_position(k[0], k[1], r)
                     for k, r in sorted(self._replicas.items(), key=_by_key)
                     if r.leader == leader and leader != me and k not in stopped]
            epoch = 0
        else:  # incremental: the positions that changed, the partitions left
            parts = []
            by_topic, changed = self._replicas.by_topic, handler.changed
            for topic_id in sorted(changed):
                here = by_topic.get(topic_id, _NONE_HERE)
                for pid in sorted(changed[topic_id]):
                    replica = here.get(pid)
                    if replica is not None and replica.leader == leader \
                            and (topic_id, pid) not in self._stopped:  # (not this broker)
                        parts.append(_position(topic_id, pid, replica))
                    else:
                        forgotten.append((topic_id, pid))
            epoch = handler.epoch
            handler.epoch += 1
        handler.changed = {}
        self._correlation += 1
        self._in_flight[leader] = (self._correlation, now)
        self._fetch_due[leader] = now + self.config.replica_fetch_backoff_ms
        image = self.image
        # Fetch v15 (metadata.version 3.5-IV1) on carries the broker epoch, none before
        epoch_sent = self._broker_epoch() if image is not None and \
            image.metadata_version >= FETCH_BROKER_EPOCH else -1
        self.outbox.append(NodeMessage(self.broker_id, leader, ReplicaFetchRequest(
            self._correlation, self.broker_id, epoch_sent, tuple(parts),
            self.config.replica_fetch_wait_max_ms, handler.session_id, epoch,
            tuple(forgotten))))

    def handle_message(self, env: NodeMessage, now: int) -> None:
        """Fetches from followers, answers from leaders and from the controller."""
        self.now = now
        self._maybe_start()
        msg = env.message
        if isinstance(msg, ReplicaFetchRequest):
            follower = msg.replica_id
            if msg.session_epoch == 0 and self.stale_fetch(follower, msg.epoch):
                # a full fetch of an incarnation that registered again since: Kafka opens
                # it a session of its own and leaves the follower's current one alone;
                # kraftsim keeps one per follower, so it is answered without one (and the
                # follower's held fetch stays held)
                self.outbox.append(NodeMessage(self.broker_id, follower, ReplicaFetchResponse(
                    msg.correlation_id, -1,
                    tuple(self._refuse_stale(follower, msg.partitions, now, msg.epoch)))))
                return
            session = self._sessions.open(msg, lambda key: self._wake(follower, key))
            if isinstance(session, str):
                self._held.pop(msg.replica_id, None)
                self.outbox.append(NodeMessage(self.broker_id, msg.replica_id,
                                               ReplicaFetchResponse(msg.correlation_id, -1, (),
                                                                    session)))
                return
            keys, answers = self._serve_session(msg.replica_id, session, now, msg.epoch)
            wait = msg.max_wait_ms
            if wait > 0 and all(a is CAUGHT_UP or (a.error == "NONE" and not a.entries
                                                   and not a.diverging) for a in answers):
                self._held[msg.replica_id] = HeldFetch(msg, now + wait, [
                    key for key, answer in zip(keys, answers, strict=True)
                    if answer is CAUGHT_UP])
            else:
                self._held.pop(msg.replica_id, None)
                self._respond(msg, session, keys, answers)
            self._complete_produces()
        elif isinstance(msg, ReplicaFetchResponse):
            self._on_fetch_response(env.src, msg, now)
        elif isinstance(msg, AlterPartitionResponse):
            self.alter_partitions.handle_message(env, now)
        elif isinstance(msg, AllocateProducerIdsResponse):
            self.producer_ids.channel.handle_message(env, now)

    def _serve_session(self, follower: int, session: FetchSession, now: int,
                       broker_epoch: int = -1
                       ) -> tuple[list[tuple[str, int]], list[FetchedPartition]]:
        """Read the session's partitions that are not idle; the idle ones count as fetched:
        (their keys, the answers in the same order).

        Every pending partition is woken (its follower fetched at the session's
        previous fetch), then read. A compact leader answers plainly at once with
        :data:`~broker.compact_leader.CAUGHT_UP`, which :meth:`_respond` makes into
        the partition's answer when it is sent, and its follower goes idle on the
        session's clock at once (what :meth:`_respond` does for a full replica): a
        fetch held from then on is caught up on it as of the session's fetches, as a
        follower that fetched now would be until the answer goes out (the clock's time
        is the session's last fetch), and the held fetch's answer names it without
        reading it again (:class:`HeldFetch`).

        A follower answered that is not in a partition's ISR may be back in sync: the
        partition is asked for an expansion at once (Kafka's maybeExpandIsr, which runs at
        every follower fetch for every partition of its session), and it stays pending,
        read at each fetch, until the follower is in its ISR; ``broker_epoch`` is the one
        the fetch carried.

        A fetch whose broker epoch is stale (:meth:`stale_fetch`) is refused instead: see
        :meth:`_refuse_stale`.
        """
        if self.stale_fetch(follower, broker_epoch):
            parts = session.partitions
            keys = [(topic_id, pid) for topic_id in sorted(parts)
                    for pid in sorted(parts[topic_id])]
            return keys, self._refuse_stale(follower, [parts[k[0]][k[1]] for k in keys], now,
                                            broker_epoch)
        keys = sorted(session.pending)
        expand: list[tuple[str, int]] = []  # answered followers outside the ISR
        replicas, me, share, parts = self._replicas, self.broker_id, self._clocks, \
            session.partitions
        pending = session.pending
        caught_up = session.clock  # a caught-up follower's clock: idle on the session
        answers: list[FetchedPartition] = []
        later: list[int] = []  # the positions in answers of those read after the wake-ups
        by_topic, topic_id, here = replicas.by_topic, None, _NONE_HERE  # keys come by topic
        positions: dict[int, FetchPartition] = {}
        for key in keys:
            if key[0] != topic_id:
                topic_id = key[0]
                here = by_topic.get(topic_id, _NONE_HERE)
                positions = parts[topic_id]  # (what is pending is in the session)
            held = here.get(key[1])
            if type(held) is CompactLeader and follower in held.reg.isr:
                answer = held.serve(follower, me, positions[key[1]], share, caught_up)
                if answer is CAUGHT_UP:
                    answers.append(answer)
                    del pending[key]
                    continue
            self._wake(follower, key)
            later.append(len(answers))
            answers.append(_UNREAD)
        clock = session.clock
        clock.at, clock.broker_epoch = now, broker_epoch
        max_records = self.config.replica_fetch_max_records
        for i in later:
            key = keys[i]
            part = parts[key[0]][key[1]]
            replica = replicas.get(key)
            if type(replica) is CompactLeader:
                answer = replica.serve(follower, me, part, share, fetched_at(now))
                if answer is not None:
                    answers[i] = answer
                    if answer is CAUGHT_UP and follower not in replica.reg.isr:
                        expand.append(key)
                    continue
                replica = self._replica(key)  # a fetch its compact form cannot answer
            elif type(replica) is not Replica:  # none here, or a follower (compact)
                answers[i] = _refused(part, replica)
                continue
            hw = replica.log.high_watermark
            answer = answers[i] = replica.serve_fetch(follower, part, now, max_records,
                                                      broker_epoch)
            if replica.log.high_watermark != hw:
                self._changed[key] = None
                self._touch(key, skip=follower)
            if follower not in replica.isr and answer.error == "NONE" and \
                    not answer.diverging:
                expand.append(key)
        for key in expand:
            self._propose(key, self._replica(key), now, fetch=(follower, broker_epoch))
        return keys, answers

    def stale_fetch(self, follower: int, broker_epoch: int) -> bool:
        """Is a fetch of ``follower`` that carried ``broker_epoch`` stale? True when this
        broker's image holds the follower registered and unfenced with a larger broker
        epoch: a fetch of an incarnation that registered again since (Kafka's
        Replica.updateFetchStateOrThrow, against the metadata cache's alive broker epoch).
        A fetch with no epoch (-1: before metadata.version 3.5-IV1), a follower fenced or
        unknown in the image, and an epoch the image does not know yet (larger) all pass."""
        if broker_epoch == -1:
            return False
        image = self.image
        alive_epoch = alive_broker_epoch(image, follower) if image is not None else None
        return alive_epoch is not None and alive_epoch > broker_epoch

    def _refuse_stale(self, follower: int, parts: Iterable[FetchPartition], now: int,
                      broker_epoch: int) -> list[FetchedPartition]:
        """The answers to a fetch with a stale broker epoch (:meth:`stale_fetch`) for
        ``parts``: Kafka reads every partition of the fetch (of its session, for an
        incremental one, idle ones too) and, where the read finds no divergence, fails to
        record the follower's position, answering NOT_LEADER_OR_FOLLOWER. So each is
        answered as its replica answers a stale fetch (the leader epoch and replica checks
        and a divergence as for any fetch, NOT_LEADER_OR_FOLLOWER otherwise), and nothing
        is recorded: no follower state, no session clock (the idle partitions do not count
        as fetched), no ISR expansion, and the pending partitions stay pending."""
        answers: list[FetchedPartition] = []
        me, share, max_records = self.broker_id, self._clocks, \
            self.config.replica_fetch_max_records
        for part in parts:
            key = (part.topic_id, part.partition_id)
            held = self._replicas.get(key)
            if type(held) is CompactLeader:
                answer = held.serve(follower, me, part, share, fetched_at(now), stale=True)
                if answer is not None:
                    answers.append(answer)
                    continue
                held = self._replica(key)  # a divergence check needs the Replica
            if type(held) is Replica:
                answers.append(held.serve_fetch(follower, part, now, max_records,
                                                broker_epoch, stale=True))
            else:
                answers.append(_refused(part, held))
        return answers

    def _respond(self, msg: ReplicaFetchRequest, session: FetchSession,
                 keys: list[tuple[str, int]], answers: list[FetchedPartition]) -> None:
        """Answer ``msg`` (``answers`` for ``keys``, as :meth:`_serve_session` made them); the
        partitions its follower is now caught up on, and in the ISR of, become idle."""
        follower, pending = msg.replica_id, session.pending
        for i, answer in enumerate(answers):
            key = keys[i]
            if answer is CAUGHT_UP:  # its follower went idle when it was read
                answers[i] = FetchedPartition(key[0], key[1], "NONE")
                continue
            if answer.error != "NONE" or answer.entries or answer.diverging:
                continue
            if key not in pending:
                continue  # idle already
            replica = self._replicas.get(key)
            if type(replica) is CompactLeader:
                if follower in replica.reg.isr and \
                        replica.idle(follower, self.broker_id, session.clock, self._clocks):
                    del pending[key]
                continue
            if type(replica) is not Replica or follower not in replica.isr:
                continue
            state = replica.follower(follower)
            if state is not None and replica.is_leader and \
                    state.end_offset >= replica.log.end_offset:
                state.idle_clock = session.clock
                del pending[key]
        self.outbox.append(NodeMessage(self.broker_id, follower, ReplicaFetchResponse(
            msg.correlation_id, -1, tuple(answers), "NONE", session.session_id)))

    def _answer_held(self, due: Callable[[HeldFetch], bool]) -> None:
        """Answer the held fetches ``due`` selects, reading their pending partitions again
        (those caught up when the fetch arrived and not woken since are answered as
        they were read then)."""
        for follower in sorted(self._held):
            held = self._held[follower]
            if due(held):
                del self._held[follower]
                session = self._sessions.by_follower[follower]
                keys, answers = self._serve_session(follower, session, self.now,
                                                    held.request.epoch)
                if held.caught_up:
                    keys, answers = _with_caught_up(held.caught_up, keys, answers)
                self._respond(held.request, session, keys, answers)

    def _records_arrived(self, replica: Replica) -> None:
        """The leader appended to ``replica``: answer the held fetches that wait on it."""
        key = (replica.topic_id, replica.partition_id)
        self._changed[key] = None
        self._touch(key)
        sessions = self._sessions.by_follower
        self._answer_held(lambda held: sessions[held.request.replica_id].holds(key))

    def _on_fetch_response(self, leader: int, msg: ReplicaFetchResponse, now: int) -> None:
        flight = self._in_flight.get(leader)
        if flight is None or flight[0] != msg.correlation_id:
            return
        del self._in_flight[leader]
        handler = self._handler(leader)
        if msg.error != "NONE":  # the leader lost our session: start over with a full fetch
            self._handlers[leader] = FetchSessionHandler()
            self._fetch_due[leader] = now
            return
        if handler.session_id != msg.session_id:  # the answer to a full fetch
            handler.session_id, handler.epoch = msg.session_id, 1
        errors = more = False
        by_topic, topic_id, here = self._replicas.by_topic, "", _NONE_HERE
        for part in msg.partitions:
            if part.topic_id != topic_id:  # answers come by topic
                topic_id = part.topic_id
                here = by_topic.get(topic_id, _NONE_HERE)
            found = here.get(part.partition_id)
            if type(found) is not Replica and part.error == "NONE" and not part.entries \
                    and not part.diverging:
                continue  # a plain answer: a compact replica's empty log takes nothing from it
            if found is not None and found.leader == leader and \
                    (topic_id, part.partition_id) not in self._stopped:
                key = (topic_id, part.partition_id)
                if isinstance(found, Replica):
                    replica = found
                elif part.error != "NONE" or not part.entries:
                    # a compact follower's empty log takes nothing from this answer (a
                    # divergence truncates nothing, the high watermark stays 0)
                    more |= part.diverging
                    errors |= part.error != "NONE"
                    continue
                else:  # records arrive: a replica of its own to append them to
                    replica = self._replica(key)
                log = replica.log
                offset, epoch, hw = log.end_offset, log.last_epoch, log.high_watermark
                more |= replica.apply_fetched(part) or part.diverging
                if log.end_offset != offset or log.last_epoch != epoch:
                    handler.mark(key)  # a new position for the leader
                    self._changed[key] = None
                elif log.high_watermark != hw:
                    self._changed[key] = None
            errors |= part.error != "NONE"
        # the leader held an empty fetch as long as it was asked to: ask again at once,
        # unless it erred (or was not asked to wait, so as not to spin)
        held = self.config.replica_fetch_wait_max_ms > 0
        again = more or (held and not errors)
        self._fetch_due[leader] = now if again else now + self.config.replica_fetch_backoff_ms

    def _check_isrs(self, now: int) -> None:
        me, lag_max_ms = self.broker_id, self.config.replica_lag_time_max_ms
        for key, held in sorted(((k, r) for k, r in self._replicas.items()
                                 if r.leader == me and type(r) is not PartitionRegistration),
                                key=_by_key):
            if type(held) is CompactLeader:
                if not held.isr_change_due(me, now, lag_max_ms):
                    continue
                held = self._replica(key)
            assert type(held) is Replica
            self._propose(key, held, now)

    def _propose(self, key: tuple[str, int], replica: Replica, now: int,
                 fetch: tuple[int, int] | None = None) -> None:
        """Submit ``replica``'s ISR change, if any, to the AlterPartitionManager: at a
        follower's ``fetch`` (the follower, the broker epoch its fetch carried) that
        follower's return to the ISR (Kafka's maybeExpandIsr), else a shrink at the
        periodic check (Kafka's maybeShrinkIsr, which never expands). The proposal names
        the broker epoch this leader holds for each member of the new ISR (KIP-903,
        AlterPartition v3: :meth:`~broker.replica.Replica.isr_epochs`), so that the
        controller refuses a member that registered again since (INELIGIBLE_REPLICA).
        A proposal the manager refuses (an earlier one of the partition, replaced since by
        the image, is still waiting or out there) is OPERATION_NOT_ATTEMPTED: the leader
        goes back to the ISR as written and proposes again later (Kafka's Partition)."""
        expand = fetch is not None
        proposal = replica.isr_proposal(now, self.config.replica_lag_time_max_ms,
                                        self.isr_eligible, shrink=not expand, expand=expand,
                                        fetch=fetch)
        own_epoch = self._broker_epoch()
        if proposal is None or own_epoch < 0 or self.loader.leader.leader_id is None:
            return
        replica.pending_isr = proposal
        self._submit_alter(key, AlterPartitionPartitionData(
            replica.partition_id, replica.leader_epoch, replica.partition_epoch, proposal,
            new_isr_epochs=replica.isr_epochs(proposal, own_epoch, fetch)), now)

    def _submit_alter(self, key: tuple[str, int], data: AlterPartitionPartitionData,
                      now: int) -> None:
        """Submit ``key``'s pending proposal to the manager; refused, it is dropped."""
        item = self.alter_partitions.submit(key[0], data, now)
        if item is not None:
            self._alter_sent[key] = item
            return
        self._alter_sent.pop(key, None)
        replica = self.peek(key)
        assert replica is not None
        replica.pending_isr = None

    def isr_eligible(self, broker_id: int, broker_epoch: int) -> bool:
        """May follower ``broker_id``, whose fetch carried ``broker_epoch``, join an ISR?
        (Kafka's isReplicaIsrEligible: registered, unfenced, not in controlled shutdown,
        and the fetch's broker epoch the registered one, or -1.)"""
        image = self.image
        if image is None:
            return False
        alive_epoch = alive_broker_epoch(image, broker_id)
        return alive_epoch is not None and not is_broker_shutting_down(image, broker_id) \
            and broker_epoch in (-1, alive_epoch)

    def _proposing(self, key: tuple[str, int], item: AlterPartitionItem) -> Replica | None:
        """The replica of ``key`` if it leads with a pending ISR change whose item was
        ``item`` (Kafka's check that the partition state is still the proposed one); None
        when that proposal was replaced since (by the image, or by another)."""
        replica = self.peek(key)
        if replica is None or not replica.is_leader or replica.pending_isr is None or \
                self._alter_sent.get(key) is not item:
            return None
        return replica

    def _on_alter_answer(self, item: AlterPartitionItem, answer: AlterPartitionPartitionResponse,
                         now: int) -> None:
        """The controller's answer for one partition of an AlterPartition, as Kafka's
        Partition takes it (``submitAlterPartition``'s callback and
        ``handleAlterPartitionError``; the manager, :attr:`alter_partitions`, and the
        channel beneath it handle the request's own errors, NOT_CONTROLLER and lost
        requests: see :mod:`broker.alter_partition_manager`):

        - an answer to a proposal that is no longer pending (the image replaced it, or
          the leader proposed again since) is ignored;
        - NONE: the change stays pending until the image brings it (Kafka takes the
          answer's ISR and partition epoch at once; kraftsim's replicas take both from
          the image only);
        - INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED: the controller says the request
          was not applied and the partition epoch is current, so the leader goes back to
          the ISR as written (the pending change dropped) and proposes again at a later
          fetch or check;
        - UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH,
          INVALID_UPDATE_VERSION, INVALID_REQUEST, NEW_LEADER_ELECTED: the leader's
          metadata is behind; the change stays pending (no other is proposed) until the
          image moves the partition epoch;
        - any other error of the partition (one Partition does not expect, e.g.
          UNKNOWN_SERVER_ERROR): the same proposal is submitted again at once, and goes
          in the manager's next request.
        """
        key = item.key
        if self._proposing(key, item) is None:
            return  # it answers a proposal since replaced
        error = answer.error
        if error in ALTER_KEEPS_PENDING or error == "NONE":
            del self._alter_sent[key]
        elif error in ALTER_BACK_TO_COMMITTED:
            del self._alter_sent[key]
            replica = self.peek(key)
            assert replica is not None
            replica.pending_isr = None
        else:
            self._submit_alter(key, item.partition, now)

    def _on_controller_change(self, leader: LeaderAndEpoch) -> None:
        """The broker's raft client knows a new controller leader: the channels send their
        requests out to a controller of another epoch again at once, as Kafka's channel
        does once the connection to the old controller is gone and the new one is known
        (a controller that leads again in a new epoch lost, or failed, what it had
        pending)."""
        self.producer_ids.channel.leader_changed(self.now)
        self.alter_partitions.leader_changed(self.now)

    # ------------------------------------------------------------------ clients
    def topic_leaders(self, topic: str) -> list[Replica]:
        """The replicas of ``topic`` this broker leads, in the order they were made (a compact
        one becomes its Replica); no other replica is read."""
        topic_id = self.image.topics_by_name.get(topic) if self.image is not None else None
        here = self._replicas.by_topic.get(topic_id) if topic_id is not None else None
        if topic_id is None or here is None:
            return []
        return [self._replica((topic_id, pid)) for pid, held in list(here.items())
                if type(held) is CompactLeader or (type(held) is Replica and held.is_leader)]

    def leader_replica(self, topic: str, partition: int,
                       current_leader_epoch: int = -1) -> Replica | str:
        """The replica this broker leads, or the Kafka error for the client (see
        :meth:`local_replica`)."""
        return self.local_replica(topic, partition, current_leader_epoch)

    def local_replica(self, topic: str, partition: int, current_leader_epoch: int = -1,
                      require_leader: bool = True) -> Replica | str:
        """This broker's replica of the partition, or the Kafka error for the client.

        As Kafka's ReplicaManager.getPartitionOrError and Partition.getLocalLog: a
        partition the image does not hold is UNKNOWN_TOPIC_OR_PARTITION, one it holds but
        this broker does not host NOT_LEADER_OR_FOLLOWER. Then ``current_leader_epoch``
        (-1: the client names none) is checked before leadership: older than this
        broker's leader epoch is FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH; with
        ``require_leader``, a replica that does not lead is NOT_LEADER_OR_FOLLOWER.
        """
        image = self.image
        topic_image = image.topic(topic) if image is not None else None
        if topic_image is None or partition not in topic_image.partitions:
            return "UNKNOWN_TOPIC_OR_PARTITION"
        key = (topic_image.topic_id, partition)
        held = self._replicas.get(key)
        if held is None:
            return "NOT_LEADER_OR_FOLLOWER"
        if current_leader_epoch != held.leader_epoch and current_leader_epoch != NO_LEADER_EPOCH:
            return "FENCED_LEADER_EPOCH" if current_leader_epoch < held.leader_epoch \
                else "UNKNOWN_LEADER_EPOCH"
        if require_leader and held.leader != self.broker_id:
            return "NOT_LEADER_OR_FOLLOWER"
        return held if type(held) is Replica else self._replica(key)

    def produce(self, topic: str, partition: int, values: list[str], acks: int,
                callback: ProduceCallback, producer_id: int = -1, producer_epoch: int = -1,
                first_sequence: int = -1, transactional: bool = False,
                from_coordinator: bool = False, transactional_id: str | None = None,
                produce_version: int = PRODUCE_TV1_VERSION) -> None:
        """Append a batch as leader; ``callback`` gets the answer (now, or at the HW).

        A transactional batch sent with its ``transactional_id`` (Kafka's Produce
        request carries it) goes through the broker's :attr:`txn_verifier` first
        (KIP-890: the coordinator confirms the partition is in the transaction), then
        :meth:`append_records`; without a verifier, or without a transactional id, it
        is appended at once.
        """
        if self.txn_verifier is not None and transactional_id is not None and transactional \
                and acks in (-1, 0, 1) and not from_coordinator:
            self.txn_verifier.produce(self, topic, partition, ProduceBatch(
                values, producer_id, producer_epoch, first_sequence, transactional), acks,
                callback, transactional_id, produce_version)
            return
        self.append_records(topic, partition, values, acks, callback, producer_id,
                            producer_epoch, first_sequence, transactional, from_coordinator)

    def append_records(self, topic: str, partition: int, values: list[str], acks: int,
                       callback: ProduceCallback, producer_id: int = -1,
                       producer_epoch: int = -1, first_sequence: int = -1,
                       transactional: bool = False, from_coordinator: bool = False,
                       verification_guard: VerificationGuard = SENTINEL) -> None:
        """Append a batch as leader (Kafka's appendRecords); see :meth:`produce`.

        ``acks`` is -1 (all), 0 or 1; anything else is INVALID_REQUIRED_ACKS.
        ``from_coordinator``: a coordinator's own write (Kafka's AppendOrigin.COORDINATOR,
        e.g. a TxnOffsetCommit's records, which carry a producer id but no sequence); a
        client's batch with a producer id must carry a sequence, else INVALID_RECORD
        (Kafka's LogValidator.validateBatch). While the :attr:`txn_verifier` is enabled,
        a client's transactional batch that opens a transaction here must bring the
        ``verification_guard`` its verification got (INVALID_TXN_STATE otherwise).
        """
        if acks not in (-1, 0, 1):
            callback(ProduceResult("INVALID_REQUIRED_ACKS"))
            return
        found = self.leader_replica(topic, partition)
        if isinstance(found, str):
            callback(ProduceResult(found))
            return
        replica = found
        if acks == -1 and replica.under_min_isr():
            callback(ProduceResult("NOT_ENOUGH_REPLICAS"))
            return
        if producer_id >= 0 and first_sequence < 0 and not from_coordinator:
            callback(ProduceResult("INVALID_RECORD"))
            return
        log = replica.log
        duplicate: tuple[int, int] | None = None
        if producer_id >= 0:
            try:
                verifier = self.txn_verifier
                required = transactional and verifier is not None and \
                    not from_coordinator and verifier.enabled(self)
                duplicate = log.check_batch(producer_id, producer_epoch, first_sequence,
                                            len(values), transactional,
                                            verification_guard if required else None)
            except SequenceError as exc:
                callback(ProduceResult(exc.code))
                return
        if duplicate is not None:
            result = ProduceResult("NONE", duplicate[0], duplicate[1], duplicate=True)
        else:
            first, last = log.append_as_leader(values, replica.leader_epoch, producer_id,
                                               producer_epoch, first_sequence, transactional,
                                               timestamp=self.now)
            result = ProduceResult("NONE", first, last)
            replica.maybe_advance_high_watermark(self.now)
            self._records_arrived(replica)
        if acks != -1:
            callback(result)
            return
        self.await_high_watermark(replica, result, callback)

    def await_high_watermark(self, replica: Replica, result: ProduceResult,
                             callback: ProduceCallback) -> None:
        """Answer ``result`` once the HW passes its last offset (acks=all), or fail."""
        self.pending.append(_Pending(replica, result,
                                     self.now + self.config.request_timeout_ms, callback))
        self._complete_produces()

    def write_txn_marker(self, topic: str, partition: int, producer_id: int,
                         producer_epoch: int, commit: bool, coordinator_epoch: int,
                         callback: ProduceCallback) -> None:
        """WriteTxnMarkers for one partition: append the control record, answer at the HW."""
        found = self.leader_replica(topic, partition)
        if isinstance(found, str):
            callback(ProduceResult(found))
            return
        if found.under_min_isr():  # a marker is an acks=all append (Kafka's WriteTxnMarkers)
            callback(ProduceResult("NOT_ENOUGH_REPLICAS"))
            return
        try:
            found.log.check_marker(producer_id, producer_epoch, coordinator_epoch)
        except SequenceError as exc:
            callback(ProduceResult(exc.code))
            return
        offset = found.log.append_marker(found.leader_epoch, producer_id, producer_epoch,
                                         commit, coordinator_epoch, timestamp=self.now)
        found.maybe_advance_high_watermark(self.now)
        self._records_arrived(found)
        self.await_high_watermark(found, ProduceResult("NONE", offset, offset), callback)

    def _complete_produces(self) -> None:
        """Answer the waiting acks=all appends whose time has come. A callback may append
        again (the coordinator's next state write) and so call this again: the list is
        taken out first, so that no append is answered twice, and what the callbacks add
        waits after what was already waiting."""
        if not self.pending:
            return
        waiting, self.pending = self.pending, []
        keep = []
        for p in waiting:
            replica = p.replica
            current = self._replicas.get((replica.topic_id, replica.partition_id))
            if current is not replica or not replica.is_leader:
                # (a new leader epoch of the same leader keeps waiting for the HW, as
                # Kafka's checkEnoughReplicasReachOffset does: its log was not truncated)
                p.callback(ProduceResult("NOT_LEADER_OR_FOLLOWER"))
            elif self._hw_passed(replica, p.result.last_offset):
                if len(replica.maximal_isr()) < replica.effective_min_isr():
                    p.callback(ProduceResult("NOT_ENOUGH_REPLICAS_AFTER_APPEND"))
                else:
                    p.callback(p.result)
            elif self.now >= p.deadline:
                p.callback(ProduceResult("REQUEST_TIMED_OUT"))
            else:
                keep.append(p)
        self.pending = keep + self.pending

    def _hw_passed(self, replica: Replica, offset: int) -> bool:
        return replica.log.high_watermark > offset

    def fetch(self, topic: str, partition: int, offset: int, max_records: int = 500,
              current_leader_epoch: int = -1) -> tuple[str, list[LogEntry], int]:
        """A consumer's fetch from the leader: (error, entries below the HW, HW).

        ``current_leader_epoch`` (-1: none) is checked as :meth:`leader_replica` does
        (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH). An offset past the log end (or below
        0) is OFFSET_OUT_OF_RANGE; between the HW and the log end the answer is empty
        (Kafka's log read at the high watermark).
        """
        found = self.leader_replica(topic, partition, current_leader_epoch)
        if isinstance(found, str):
            return found, [], -1
        log = found.log
        if not 0 <= offset <= log.end_offset:
            return "OFFSET_OUT_OF_RANGE", [], log.high_watermark
        return "NONE", list(log.read(offset, max_records, log.high_watermark)), \
            log.high_watermark

    def last_offset_for_leader_epoch(self, topic: str, partition: int, leader_epoch: int,
                                     current_leader_epoch: int = -1) -> EpochEndOffset:
        """OffsetsForLeaderEpoch for one partition, answered by its leader (Kafka's
        ReplicaManager.lastOffsetForLeaderEpoch, which serves it from the leader only).

        The errors are :meth:`leader_replica`'s (UNKNOWN_TOPIC_OR_PARTITION,
        NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH), with epoch and
        offset -1; else the leader's (largest epoch <= ``leader_epoch``, its end offset),
        see :meth:`~broker.replica.Replica.end_offset_for_epoch`.
        """
        found = self.leader_replica(topic, partition, current_leader_epoch)
        if isinstance(found, str):
            return EpochEndOffset(found)
        epoch, end = found.end_offset_for_epoch(leader_epoch)
        return EpochEndOffset("NONE", epoch, end)

    def list_offsets(self, topic: str, partition: int, timestamp: int,
                     current_leader_epoch: int = -1, isolation: str = READ_UNCOMMITTED,
                     replica_id: int = CONSUMER_REPLICA_ID) -> ListedOffset:
        """ListOffsets for one partition (Kafka's ReplicaManager.fetchOffsetForTimestamp).

        ``timestamp`` is one of Kafka's sentinels: :data:`EARLIEST_TIMESTAMP` (the log
        start offset, 0 here: logs keep every record, and the epoch of the first
        leader-epoch entry), :data:`EARLIEST_LOCAL_TIMESTAMP` (the same: no tiered
        storage) or :data:`LATEST_TIMESTAMP` (the partition's leader epoch, and the high
        watermark for a consumer reading read_uncommitted, the last stable offset
        read_committed, the log end offset for a broker or a debugging client). Records
        carry no timestamp here, so a lookup by time (or MAX_TIMESTAMP) is refused with
        ValueError, as is an isolation level other than the two.

        ``replica_id``: :data:`CONSUMER_REPLICA_ID` for a client, a broker id, or
        :data:`DEBUGGING_REPLICA_ID`, whose request any replica answers; the others
        need the leader. The errors are :meth:`local_replica`'s, and for a consumer's
        LATEST OFFSET_NOT_AVAILABLE while the high watermark of a new leader is below
        the start of its epoch (Kafka's Partition.fetchOffsetForTimestamp).
        """
        if timestamp not in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP, LATEST_TIMESTAMP):
            raise ValueError(f"timestamp {timestamp}: record timestamps are not modelled; "
                             f"only EARLIEST (-2), EARLIEST_LOCAL (-4) and LATEST (-1)")
        if isolation not in (READ_UNCOMMITTED, READ_COMMITTED):
            raise ValueError(f"isolation {isolation!r}: not {READ_UNCOMMITTED!r} or "
                             f"{READ_COMMITTED!r}")
        found = self.local_replica(topic, partition, current_leader_epoch,
                                   require_leader=replica_id != DEBUGGING_REPLICA_ID)
        if isinstance(found, str):
            return ListedOffset(found)
        if timestamp != LATEST_TIMESTAMP:
            return ListedOffset("NONE", 0, found.epoch_at_log_start())
        log = found.log
        if replica_id != CONSUMER_REPLICA_ID:
            return ListedOffset("NONE", log.end_offset, found.leader_epoch)
        hw = log.high_watermark
        if found.is_leader and found.leader_epoch_start > hw:
            return ListedOffset("OFFSET_NOT_AVAILABLE")
        offset = log.txns.last_stable_offset(hw) if isolation == READ_COMMITTED else hw
        return ListedOffset("NONE", offset, found.leader_epoch)

    def init_producer_id(self, now: int | None = None) -> tuple[str, int]:
        """An idempotent producer's id: (NONE, id) or (COORDINATOR_LOAD_IN_PROGRESS, -1).

        ``now``: the caller's time (default: the manager's last poll or message)."""
        at = self.now if now is None else max(now, self.now)
        return self.producer_ids.next_id(self._broker_epoch(), at)


def _by_key(item: tuple[tuple[str, int], object]) -> tuple[str, int]:
    return item[0]


def _position(topic_id: str, partition_id: int, held: Held) -> FetchPartition:
    """What a follower asks its leader for next (a compact one: from offset 0)."""
    if type(held) is Replica:
        return held.fetch_position()
    return FetchPartition(topic_id, partition_id, held.leader_epoch, 0, -1)


_NONE_HERE: dict[int, Held] = {}
"""No replica of a topic here (read only)."""

_UNREAD = FetchedPartition("", -1, "NONE")
"""A place in a fetch's answers kept for a partition read after the wake-ups."""


def _with_caught_up(caught_up: list[tuple[str, int]], keys: list[tuple[str, int]],
                    answers: list[FetchedPartition]
                    ) -> tuple[list[tuple[str, int]], list[FetchedPartition]]:
    """A held fetch's answers: ``keys`` read now with their ``answers``, and the keys
    ``caught_up`` when it arrived (sorted) that were not read again, in key order."""
    if not keys:
        return caught_up, [CAUGHT_UP] * len(caught_up)
    read = dict(zip(keys, answers, strict=True))
    merged = sorted(read.keys() | set(caught_up))
    return merged, [read.get(key, CAUGHT_UP) for key in merged]


def _refused(part: FetchPartition, held: Held | None) -> FetchedPartition:
    """The answer of a broker that does not lead ``part``: ``held`` is its compact
    follower's registration or None. The leader epoch is checked first, as
    Replica.serve_fetch does (Kafka's getLocalLog)."""
    error = "NOT_LEADER_OR_FOLLOWER"
    current = part.current_leader_epoch
    if held is not None and current != held.leader_epoch and current != NO_LEADER_EPOCH:
        error = "FENCED_LEADER_EPOCH" if current < held.leader_epoch else "UNKNOWN_LEADER_EPOCH"
    return FetchedPartition(part.topic_id, part.partition_id, error)
