"""MetadataDelta: metadata records replayed on top of an image, applied at once.

Replay follows Kafka's semantics (``MetadataDelta.replay`` and the controller's
managers): PartitionChangeRecord merges with "null/-2 means unchanged";
RemoveTopicRecord also drops the topic's configs; a ConfigRecord with a null
value deletes the key; broker changes need the broker to exist with the same
epoch; transaction markers are not metadata and are refused here (the loader
and the controller handle them). ACLs, SCRAM credentials, client quotas and
delegation tokens are replayed by :mod:`metadata.security_delta`.
:meth:`MetadataDelta.apply` builds a new image sharing every unchanged map with
the old one; its cost is in the size of the change, not of the image.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from operator import is_
from typing import Any, ClassVar, TypeVar

import immutables
import msgspec

from metadata.batch_shape import MIN_SHAPED, PartitionRun, clear_shapes, shape_of
from metadata.broker_index import BrokerIndex, clear_shared_appends, shared_update
from metadata.errors import ReplayError as ReplayError  # re-exported: its old home
from metadata.image import (
    DIGEST_MASK,
    LEADER_RECOVERY_STATES,
    NO_LEADER,
    NO_LEADER_CHANGE,
    BrokerRegistration,
    ConfigKey,
    ControllerRegistration,
    MetadataImage,
    PartitionRegistration,
    TopicImage,
    apply_entries,
    apply_nested_entries,
    digest_of,
    partition_change_digest,
    partitions_digest,
)
from metadata.schema import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    MetadataRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnknownRecord,
    UnregisterBrokerRecord,
    ZkMigrationStateRecord,
)
from metadata.security_delta import SECURITY_RECORD_TYPES, SecurityDelta
from metadata.uuids import sorted_uuids
from metadata.versions import METADATA_VERSION_FEATURE

ConfigMap = immutables.Map[ConfigKey, immutables.Map[str, str]]

TOPIC_RESOURCE = 2
"""Kafka's ConfigResource.Type id of a topic."""
BROKER_RESOURCE = 4
"""Kafka's ConfigResource.Type id of a broker."""
CONFIG_RESOURCE_TYPES: dict[int, str] = {
    0: "UNKNOWN", TOPIC_RESOURCE: "TOPIC", BROKER_RESOURCE: "BROKER", 8: "BROKER_LOGGER",
    16: "CLIENT_METRICS", 32: "GROUP",
}
"""Kafka's ConfigResource.Type names by id (an id Kafka does not know is UNKNOWN)."""


class _TopicChange:
    """A topic created or changed in this delta."""

    __slots__ = ("base", "name", "partitions", "terms", "topic_id")

    def __init__(self, name: str, topic_id: str, base: TopicImage | None) -> None:
        self.name = name
        self.topic_id = topic_id
        self.base = base
        self.partitions: dict[int, PartitionRegistration] = {}
        self.terms: int | None = None if base is None else 0
        """What the changes replayed so far add to the topic's digest terms, summed as they
        are merged (the old registration is at hand then); None for a new topic and once a
        PartitionRecord replayed over a base (the apply then sums the terms itself)."""


SHARED_REGISTRATIONS = 1 << 20
"""How many recent records' registrations are remembered for sharing (see below). The
seven replays of a record can lie far apart: the active controller replays what it writes
at once, the others when it commits, and it may write a large backlog before the first
commit (the 1,000,000-partition benchmark's 100 concurrent creations: all 1,000,000
records). A backlog larger than the cache is made twice (once for the active controller,
once for the rest), and then so is every topic and index built from it (see
:data:`_SHARED_TOPICS`). Measured at 1,000,000 partitions: 262,144 records (with 64 topics
and 64 indexes) made 2.2 registrations per record; 1,048,576 (with 4,096 topics and
indexes) one: 21% less CPU for the whole run (13.0 -> 10.3 s, alternately) and a smaller
RSS (1.03 -> 1.00 GiB: what the cache holds, ~110 bytes per record, is less than the second
copies took). Simulation runs empty the caches when they end (:func:`clear_sharing_caches`,
from :func:`sim.gc_policy.simulation_gc`): what one run made, no other run replays."""

SHARED_MERGES = 1 << 18
"""How many recent merges of a registration with a PartitionChangeRecord are remembered
for sharing (see :func:`merged_partition`)."""

_from_record: dict[int, int] = {}
"""id(record) -> its position in ``_records_held`` and ``_registrations``."""
_records_held: list[PartitionRecord] = []
"""The records of ``_from_record``'s entries, kept alive so that an id there names its
record (an id is reused only once its object is gone)."""
_registrations: list[PartitionRegistration] = []
"""The registration made from each record of ``_records_held``."""
_cursor = [-1]
"""The position of the record asked for last: a replay asks for a batch's records in
order, so the next one is most often at the next position."""
_merged: dict[int, tuple[PartitionRegistration, PartitionChangeRecord,
                         PartitionRegistration]] = {}
"""Merged registrations by the change record's id: every node replays the same record
over the same shared registration (a node that merges it over another one replaces the
entry)."""


def partition_from_record(record: PartitionRecord) -> PartitionRegistration:
    """A PartitionRegistration as a PartitionRecord defines it.

    Every node of a simulation replays the same record objects (3 controllers,
    the brokers, the checkers' reference: seven images of one partition at
    3+3 nodes); the registration made from a record is immutable, so the one
    made from the same record object shortly before is handed out again
    rather than a copy per node. The cache holds its records (their ids
    cannot be reused while cached) and is emptied when full; it changes no
    value, only how many equal objects exist. A replay asks for a batch's
    records in order, so a hit is most often the record after the one asked
    for last: two list reads, where a look-up by id in a table of up to 1,048,576
    records waits on memory (at 1,000,000 partitions ~8% of the run).
    """
    at = _cursor[0] + 1
    if at < len(_records_held) and _records_held[at] is record:  # the next of a batch
        _cursor[0] = at
        return _registrations[at]
    found = _from_record.get(id(record))
    if found is not None:
        _cursor[0] = found
        return _registrations[found]
    reg = _new_registration(record)
    if len(_records_held) >= SHARED_REGISTRATIONS:
        _clear_registrations()
    _cursor[0] = _from_record[id(record)] = len(_records_held)
    _records_held.append(record)
    _registrations.append(reg)
    return reg


def registrations_of(records: Sequence[PartitionRecord]) -> list[PartitionRegistration]:
    """:func:`partition_from_record` of each of ``records``, in order, at once.

    A run of records another node replayed before lies in the cache in a row:
    its registrations are read as one slice. A run nobody replayed yet is made
    and added to the cache in one step (the first record decides which). Any
    other run is asked for record by record.
    """
    count = len(records)
    if not count:
        return []
    start = _from_record.get(id(records[0]))
    if start is None:
        made = list(map(_new_registration, records))
        if len(_records_held) + count > SHARED_REGISTRATIONS:
            _clear_registrations()
        start = len(_records_held)
        _records_held.extend(records)
        _registrations.extend(made)
        _from_record.update(zip(map(id, records), range(start, start + count), strict=True))
        _cursor[0] = start + count - 1
        return made
    end = start + count
    if end <= len(_records_held) and all(map(is_, _records_held[start:end], records)):
        _cursor[0] = end - 1
        return _registrations[start:end]
    return [partition_from_record(record) for record in records]


def _clear_registrations() -> None:
    _from_record.clear()
    _records_held.clear()
    _registrations.clear()
    _cursor[0] = -1


def merged_partition(current: PartitionRegistration,
                     change: PartitionChangeRecord) -> PartitionRegistration:
    """``current.merge(change)``, shared as :func:`partition_from_record` shares."""
    key = id(change)
    hit = _merged.get(key)
    if hit is not None and hit[0] is current and hit[1] is change:
        return hit[2]
    reg = current.merge(change)
    if len(_merged) >= SHARED_MERGES:
        _merged.clear()
    _merged[key] = (current, change, reg)
    return reg


def invalid_recovery_state(topic: str, record: PartitionChangeRecord) -> ReplayError:
    """The error of a PartitionChangeRecord whose leader recovery state is none of -1 (no
    change), 0 (RECOVERED) and 1 (RECOVERING): Kafka's ``LeaderRecoveryState.changeTo``
    refuses it."""
    return ReplayError(f"PartitionChangeRecord for {topic}-{record.partition_id}: value "
                       f"{record.leader_recovery_state} is not a valid leader recovery state")


def directories_mismatch(topic: str,
                         record: PartitionRecord | PartitionChangeRecord) -> ReplayError | None:
    """The error of a record naming directories that do not pair up with its replicas, one
    per replica (Kafka's ``PartitionRegistration.checkDirectories``, which throws
    InvalidReplicaDirectoriesException); None when it names none, or no replicas (a
    change), or as many of each."""
    directories, replicas = record.directories, record.replicas
    if not directories or replicas is None or len(directories) == len(replicas):
        return None
    return ReplayError(f"{type(record).__name__} for {topic}-{record.partition_id}: The "
                       f"lengths for replicas and directories do not match")


def invalid_partition_recovery_state(topic: str, record: PartitionRecord) -> ReplayError:
    """The error of a PartitionRecord whose leader recovery state is neither 0 (RECOVERED)
    nor 1 (RECOVERING): Kafka's ``LeaderRecoveryState.of`` refuses it."""
    return ReplayError(f"PartitionRecord for {topic}-{record.partition_id}: value "
                       f"{record.leader_recovery_state} is not a valid leader recovery state")


_Named = TypeVar("_Named", BrokerEndpoint, BrokerFeature)


def _last_by_name(items: tuple[_Named, ...]) -> tuple[_Named, ...]:
    """A registration's listeners or features by name, as Kafka's registration keeps them
    (a map: a name given twice keeps its last entry), sorted by name. A tuple already
    strictly in name order is that already, and is kept (shared, not copied)."""
    if len(items) < 2 or all(a.name < b.name for a, b in pairwise(items)):
        return items
    return tuple(sorted({item.name: item for item in items}.values(), key=lambda i: i.name))


def clear_sharing_caches() -> None:
    """Empty every identity cache of shared objects (registrations, topics, index tuples).

    What only a cache still holds (e.g. the state an Abort discarded) is freed now, not
    when the cache next fills; benchmarks call it to count that freeing.
    """
    _clear_registrations()
    _merged.clear()
    _topics_made.clear()
    clear_shared_appends()
    clear_shapes()


_NO_RUNS: dict[int, PartitionRun] = {}
"""The runs of a stretch too short to look for any (read only)."""


def _new_registration(record: PartitionRecord) -> PartitionRegistration:
    return PartitionRegistration(
        replicas=record.replicas, isr=record.isr, leader=record.leader,
        leader_epoch=record.leader_epoch, partition_epoch=record.partition_epoch,
        removing_replicas=record.removing_replicas, adding_replicas=record.adding_replicas,
        leader_recovery_state=record.leader_recovery_state, directories=record.directories,
        eligible_leader_replicas=record.eligible_leader_replicas,
        last_known_elr=record.last_known_elr)


class MetadataDelta:
    """Changes on top of ``image``; replay records, then :meth:`apply`."""

    _handlers: ClassVar[Mapping[type[MetadataRecord], Callable[[Any, Any], None]]]
    """How each record type is replayed (a subclass may check instead)."""
    _security: SecurityDelta | None = None
    """The changes to ACLs, SCRAM credentials, client quotas and delegation tokens, made
    with the first such record (a class default until then: most deltas have none)."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.records = 0
        self._topics: dict[str, _TopicChange] = {}
        self._reassigned: set[str] = set()  # topic ids whose replica lists may have changed
        # topic ids where a record took a partition's leader away or gave one to a
        # partition without: the topics whose leaderless partitions may have changed
        self._leaderless_moved: set[str] = set()
        self._removed: dict[str, TopicImage | None] = {}  # id -> image it had (None: new)
        self._names: dict[str, str | None] = {}
        self._brokers: dict[int, BrokerRegistration | None] = {}
        self._controllers: dict[int, ControllerRegistration | None] = {}
        self._configs: dict[ConfigKey, dict[str, str | None]] = {}
        self._dropped_configs: set[ConfigKey] = set()
        self._features: dict[str, int | None] = {}
        self._next_producer_id: int | None = None
        self._zk_migration_state: int | None = None

    # ------------------------------------------------------------------ reads
    def topic_id(self, name: str) -> str | None:
        """The id of the live topic called ``name``, as of this delta."""
        if name in self._names:
            return self._names[name]
        return self.image.topics_by_name.get(name)

    def _topic(self, topic_id: str) -> _TopicChange | TopicImage | None:
        change = self._topics.get(topic_id)
        if change is not None:
            return change
        if topic_id in self._removed:
            return None
        return self.image.topics_by_id.get(topic_id)

    def _broker(self, broker_id: int) -> BrokerRegistration | None:
        if broker_id in self._brokers:
            return self._brokers[broker_id]
        return self.image.brokers.get(broker_id)

    @property
    def metadata_version(self) -> int:
        """metadata.version as of this delta."""
        level = self._features.get(METADATA_VERSION_FEATURE)
        return level if level is not None else self.image.metadata_version

    # ------------------------------------------------------------------ replay
    def replay_all(self, records: Iterable[MetadataRecord]) -> None:
        """Replay several records in order."""
        for record in records:
            self.replay(record)

    def replay_many(self, records: Sequence[MetadataRecord], start: int = 0,
                    stop: int | None = None) -> tuple[int, ReplayError | None]:
        """Replay ``records[start:stop]`` in order, as :meth:`replay` would one by one.

        Stops at the first record that cannot apply: returns its index and the error
        (the records before it are replayed), else ``(stop, None)``. A run of
        PartitionRecords of one topic (:mod:`metadata.batch_shape`) is replayed at once,
        with the registrations the first node to replay it made.
        """
        end = len(records) if stop is None else stop
        replay = self.replay
        runs = shape_of(records).runs if end - start >= MIN_SHAPED else _NO_RUNS
        index = start
        while index < end:
            run = runs.get(index)
            if run is not None and run.end <= end and self._replay_run(run):
                index = run.end
                continue
            try:
                replay(records[index])
            except ReplayError as exc:
                return index, exc
            index += 1
        return end, None

    def replay_past_errors(self, records: Sequence[MetadataRecord], start: int, stop: int,
                           refused: Callable[[int, ReplayError], None]) -> None:
        """:meth:`replay_many` over ``records[start:stop]``, going on after a record that
        cannot apply: ``refused(index, error)`` hears of each such record, which is skipped
        (as a broker's loader and the checkers' reference skip them)."""
        index = start
        while index < stop:
            index, error = self.replay_many(records, index, stop)
            if error is None:
                return
            refused(index, error)
            index += 1

    def _replay_run(self, run: PartitionRun) -> bool:
        """Replay a run of PartitionRecords at once; False (nothing replayed) when its topic
        is unknown, so that the caller replays it record by record for the errors."""
        change = self._topics.get(run.topic_id) or self._change_for(run.topic_id)
        if change is None:
            return False
        registrations = run.registrations
        if registrations is None:
            registrations = run.registrations = dict(zip(
                run.partition_ids(), registrations_of(run.partition_records()), strict=True))
        change.partitions.update(registrations)
        change.terms = None
        self._reassigned.add(run.topic_id)
        if run.topic_id in self.image.leaderless_partitions or \
                any(reg.leader == NO_LEADER for reg in registrations.values()):
            self._leaderless_moved.add(run.topic_id)
        self.records += run.end - run.start
        return True

    def replay(self, record: MetadataRecord) -> None:
        """Apply one record to the delta; raises ReplayError when it cannot apply."""
        handler = self._handlers.get(type(record))
        if handler is None:
            if isinstance(record, UnknownRecord):
                raise ReplayError(f"unknown metadata record type: apiKey {record.api_key} "
                                  f"version {record.version} cannot be applied to an image")
            raise ReplayError(f"unknown metadata record type {record.TYPE_NAME}"
                              f" (apiKey {record.API_KEY}) cannot be applied to an image")
        handler(self, record)
        self.records += 1

    def _replay_topic(self, record: TopicRecord) -> None:
        if self._topic(record.topic_id) is not None:
            raise ReplayError(f"topic id {record.topic_id} already exists")
        self._topics[record.topic_id] = _TopicChange(record.name, record.topic_id, None)
        self._names[record.name] = record.topic_id

    def _change_for(self, topic_id: str) -> _TopicChange | None:
        """The change of topic ``topic_id`` in this delta, begun from the image's topic
        when this delta has not changed it yet; None when there is no such topic."""
        change = self._topics.get(topic_id)
        if change is not None:
            return change
        if topic_id in self._removed:
            return None
        topic = self.image.topics_by_id.get(topic_id)
        if topic is None:
            return None
        change = self._topics[topic_id] = _TopicChange(topic.name, topic_id, topic)
        return change

    def _replay_partition(self, record: PartitionRecord) -> None:
        change = self._topics.get(record.topic_id) or self._change_for(record.topic_id)
        if change is None:
            raise ReplayError(f"PartitionRecord {record.partition_id} for unknown topic id "
                              f"{record.topic_id}")
        if record.leader_recovery_state not in LEADER_RECOVERY_STATES:
            raise invalid_partition_recovery_state(change.name, record)
        if record.directories:
            mismatch = directories_mismatch(change.name, record)
            if mismatch is not None:
                raise mismatch
        change.partitions[record.partition_id] = partition_from_record(record)
        change.terms = None
        self._reassigned.add(record.topic_id)
        if record.leader == NO_LEADER or record.topic_id in self._leaderless_moved or \
                record.topic_id in self.image.leaderless_partitions:
            self._leaderless_moved.add(record.topic_id)

    def _replay_partition_change(self, record: PartitionChangeRecord) -> None:
        topic_id = record.topic_id
        change = self._topics.get(topic_id) or self._change_for(topic_id)
        if change is None:
            raise ReplayError(f"PartitionChangeRecord {record.partition_id} for unknown topic "
                              f"id {topic_id}")
        partition_id = record.partition_id
        partitions = change.partitions
        current = partitions.get(partition_id)
        if current is None and change.base is not None:
            current = change.base.partitions.get(partition_id)
        if current is None:
            raise ReplayError(f"PartitionChangeRecord for unknown partition "
                              f"{change.name}-{partition_id}")
        if not -1 <= record.leader_recovery_state <= 1:
            raise invalid_recovery_state(change.name, record)
        if record.directories:
            mismatch = directories_mismatch(change.name, record)
            if mismatch is not None:
                raise mismatch
        merged = partitions[partition_id] = merged_partition(current, record)
        if change.terms is not None:
            change.terms += partition_change_digest(topic_id, partition_id, current, merged)
        if record.replicas is not None:
            self._reassigned.add(topic_id)
        if (record.leader == NO_LEADER) != (current.leader == NO_LEADER) and \
                record.leader != NO_LEADER_CHANGE:
            self._leaderless_moved.add(topic_id)

    def _replay_clear_elr(self, record: ClearElrRecord) -> None:
        """Kafka's TopicsDelta: every partition of the topic (of every topic for an empty
        name) with eligible leader replicas gets a change that empties both ELR lists."""
        if record.topic_name:
            topic_id = self.topic_id(record.topic_name)
            if topic_id is None:
                raise ReplayError(f"Unable to clear elr for topic with name "
                                  f"{record.topic_name}: no such topic found.")
            topic_ids = [topic_id]
        else:
            topic_ids = [t for t in sorted(self.image.topics_by_id) if t not in self._removed]
            topic_ids += [t for t, change in self._topics.items() if change.base is None]
        for topic_id in topic_ids:
            topic = self._topic(topic_id)
            if topic is None:
                continue
            changed = topic.partitions if isinstance(topic, _TopicChange) else {}
            base = topic.base if isinstance(topic, _TopicChange) else topic
            unchanged = base.partitions if base is not None else {}
            for pid in sorted({*unchanged, *changed}):
                reg = changed.get(pid) or unchanged[pid]
                if reg.eligible_leader_replicas or reg.last_known_elr:
                    self._replay_partition_change(PartitionChangeRecord(
                        partition_id=pid, topic_id=topic_id, eligible_leader_replicas=(),
                        last_known_elr=()))

    def _replay_remove_topic(self, record: RemoveTopicRecord) -> None:
        topic = self._topic(record.topic_id)
        if topic is None:
            raise ReplayError(f"RemoveTopicRecord for unknown topic id {record.topic_id}")
        change = self._topics.pop(record.topic_id, None)
        gone = change.base if change is not None else \
            topic if isinstance(topic, TopicImage) else None
        if gone is None:  # made in this delta, maybe again after the image's topic of the
            gone = self._removed.get(record.topic_id)  # same id was removed: that one goes
        self._removed[record.topic_id] = gone
        if self.topic_id(topic.name) == record.topic_id:
            self._names[topic.name] = None
        key = (TOPIC_RESOURCE, topic.name)
        self._configs.pop(key, None)
        self._dropped_configs.add(key)

    def _replay_config(self, record: ConfigRecord) -> None:
        key = (record.resource_type, record.resource_name)
        self._configs.setdefault(key, {})[record.name] = record.value

    def _replay_register_broker(self, record: RegisterBrokerRecord) -> None:
        # Kafka keeps listeners and features in maps and directories sorted: their order in
        # a record is not content
        self._brokers[record.broker_id] = BrokerRegistration(
            broker_id=record.broker_id, epoch=record.broker_epoch,
            incarnation_id=record.incarnation_id,
            endpoints=_last_by_name(record.end_points),
            features=_last_by_name(record.features), rack=record.rack,
            fenced=record.fenced,
            in_controlled_shutdown=record.in_controlled_shutdown,
            is_migrating_zk_broker=record.is_migrating_zk_broker,
            directories=sorted_uuids(record.log_dirs))

    def _broker_with_epoch(self, broker_id: int, epoch: int, what: str) -> BrokerRegistration:
        broker = self._broker(broker_id)
        if broker is None:
            raise ReplayError(f"{what}: broker {broker_id} is not registered")
        if broker.epoch != epoch:
            raise ReplayError(f"{what}: broker {broker_id} has epoch {broker.epoch}, "
                              f"not {epoch}")
        return broker

    def _replay_unregister_broker(self, record: UnregisterBrokerRecord) -> None:
        self._broker_with_epoch(record.broker_id, record.broker_epoch, "UnregisterBrokerRecord")
        self._brokers[record.broker_id] = None

    def _replay_fence(self, record: FenceBrokerRecord | UnfenceBrokerRecord) -> None:
        broker = self._broker_with_epoch(record.id, record.epoch, record.TYPE_NAME)
        fenced = isinstance(record, FenceBrokerRecord)
        self._brokers[record.id] = _replace_broker(broker, fenced=fenced)

    def _replay_registration_change(self, record: BrokerRegistrationChangeRecord) -> None:
        broker = self._broker_with_epoch(record.broker_id, record.broker_epoch,
                                         "BrokerRegistrationChangeRecord")
        # Kafka's BrokerRegistrationFencingChange (1 fence, 0 none, -1 unfence) and
        # InControlledShutdownChange (0 none, 1 shutting down) know no other value
        if record.fenced not in (-1, 0, 1):
            raise ReplayError(f"BrokerRegistrationChangeRecord for broker {record.broker_id}: "
                              f"unknown value for fenced field: {record.fenced}")
        if record.in_controlled_shutdown not in (0, 1):
            raise ReplayError(f"BrokerRegistrationChangeRecord for broker {record.broker_id}: "
                              f"unknown value for inControlledShutdown field: "
                              f"{record.in_controlled_shutdown}")
        fenced = broker.fenced if record.fenced == 0 else record.fenced == 1
        shutdown = True if record.in_controlled_shutdown == 1 else broker.in_controlled_shutdown
        # an empty list is the field's default: no change, as for an absent one
        dirs = sorted_uuids(record.log_dirs) if record.log_dirs else broker.directories
        self._brokers[record.broker_id] = _replace_broker(
            broker, fenced=fenced, in_controlled_shutdown=shutdown, directories=dirs)

    def _replay_register_controller(self, record: RegisterControllerRecord) -> None:
        self._controllers[record.controller_id] = ControllerRegistration(
            controller_id=record.controller_id, incarnation_id=record.incarnation_id,
            zk_migration_ready=record.zk_migration_ready,
            endpoints=_last_by_name(record.end_points),
            features=_last_by_name(record.features))

    def _replay_feature(self, record: FeatureLevelRecord) -> None:
        removed = record.feature_level == 0 and record.name != METADATA_VERSION_FEATURE
        self._features[record.name] = None if removed else record.feature_level

    def _replay_producer_ids(self, record: ProducerIdsRecord) -> None:
        current = self._next_producer_id
        if current is None:
            current = self.image.next_producer_id
        if record.next_producer_id <= current:
            raise ReplayError(f"ProducerIdsRecord next producer id {record.next_producer_id} "
                              f"is not above the current {current}")
        self._next_producer_id = record.next_producer_id

    def _replay_zk_migration(self, record: ZkMigrationStateRecord) -> None:
        self._zk_migration_state = record.zk_migration_state

    def _replay_noop(self, record: NoOpRecord) -> None:
        pass

    def _replay_security(self, record: MetadataRecord) -> None:
        changes = self._security
        if changes is None:
            changes = self._security = SecurityDelta(self.image)
        changes.replay(record)

    # ------------------------------------------------------------------ apply
    def apply(self, offset: int, epoch: int) -> MetadataImage:
        """The image with every replayed change, at ``offset`` / ``epoch``."""
        image = self.image
        if self.records == 0:
            return image.with_provenance(offset, epoch)
        digest = image.digest
        if not self._removed and not self._topics:  # no topic changed (e.g. a broker's)
            return self._apply_rest(image, offset, epoch, image.topics_by_id,
                                    image.partitions_by_broker, digest,
                                    image.leaderless_partitions)
        topics = image.topics_by_id.mutate()
        removed: list[TopicImage] = []
        for topic_id, gone in self._removed.items():
            if gone is not None:
                removed.append(gone)
                if topic_id in topics:
                    digest -= _topic_digest(gone)
                    del topics[topic_id]
        changed: list[tuple[str, TopicImage | None, dict[int, PartitionRegistration]]] = []
        made: list[TopicImage] = []
        # A delta of many topics (a broker fenced at 100,000 topics touches 3,300)
        # makes them directly: the cache's work per topic costs more than sharing
        # saves there. Topics whose replica lists no record touched leave the broker
        # index as it is: not passed to it.
        make = _apply_topic if len(self._topics) <= _CACHED_TOPICS_PER_DELTA else _make_topic
        reassigned = self._reassigned
        for topic_id, change in self._topics.items():
            digest, topic = make(change, digest)
            topics[topic_id] = topic
            if change.base is None or topic_id in reassigned:
                changed.append((topic_id, change.base, change.partitions))
                made.append(topic)
        index = shared_update(image.partitions_by_broker, removed, changed, made) \
            if removed or changed else image.partitions_by_broker
        return self._apply_rest(image, offset, epoch, topics.finish(), index, digest,
                                self._leaderless())

    def _leaderless(self) -> immutables.Map[str, tuple[int, ...]]:
        """The image's leaderless-partition index after this delta: removed topics
        dropped, and the changed partitions of each topic where a record took a leader
        away or gave one to a leaderless partition looked at (a fence at 1,000,000
        partitions sets 3,300 leaders and usually none of these)."""
        index = self.image.leaderless_partitions
        dropped = [t for t in self._removed if t in index]
        moved = self._leaderless_moved
        if not dropped and not moved:
            return index
        out = index.mutate()
        for topic_id in dropped:
            del out[topic_id]
        for topic_id, change in self._topics.items():  # (in the order of the records)
            if topic_id not in moved:
                continue
            old = out.get(topic_id) if change.base is not None else None
            partitions = change.partitions
            lost = [pid for pid, reg in partitions.items() if reg.leader == NO_LEADER]
            if old is None:
                if lost:  # (a topic with no leaderless partition, the usual case, stops here)
                    out[topic_id] = tuple(sorted(lost))
                elif topic_id in out:  # made again in this delta under the same id
                    del out[topic_id]
                continue
            pids = {pid for pid in old if pid not in partitions}
            pids.update(lost)
            if pids:
                out[topic_id] = tuple(sorted(pids))
            else:
                del out[topic_id]
        return out.finish()

    def _apply_rest(self, image: MetadataImage, offset: int, epoch: int,
                    topics_by_id: immutables.Map[str, TopicImage], index: BrokerIndex,
                    digest: int, leaderless: immutables.Map[str, tuple[int, ...]]
                    ) -> MetadataImage:
        """:meth:`apply` once the topics are made: names, brokers, controllers, features,
        configs, producer ids, the ZK migration state, then ACLs, SCRAM credentials, client
        quotas and delegation tokens."""
        names = image.topics_by_name
        if self._names:
            by_name = names.mutate()
            for name, named_id in self._names.items():
                if named_id is None:
                    by_name.pop(name, None)
                else:
                    by_name[name] = named_id
            names = by_name.finish()
        brokers, digest = apply_entries(image.brokers, self._brokers, "b", digest)
        controllers, digest = apply_entries(image.controllers, self._controllers, "k", digest)
        features, digest = apply_entries(image.features, self._features, "f", digest)
        configs, digest = self._apply_configs(digest)
        next_pid = image.next_producer_id
        if self._next_producer_id is not None:
            digest += digest_of("p", self._next_producer_id) - digest_of("p", next_pid)
            next_pid = self._next_producer_id
        zk = image.zk_migration_state
        if self._zk_migration_state is not None:
            digest += digest_of("z", self._zk_migration_state) - digest_of("z", zk)
            zk = self._zk_migration_state
        security = image.security
        if self._security is not None:
            security, digest = self._security.apply(digest)
        return MetadataImage(
            offset=offset, epoch=epoch, topics_by_id=topics_by_id, topics_by_name=names,
            brokers=brokers, controllers=controllers, configs=configs, features=features,
            next_producer_id=next_pid, zk_migration_state=zk, security=security,
            digest=digest & DIGEST_MASK, partitions_by_broker=index,
            leaderless_partitions=leaderless)

    def _apply_configs(self, digest: int) -> tuple[ConfigMap, int]:
        configs = self.image.configs
        if self._dropped_configs:
            out = configs.mutate()
            for key in self._dropped_configs:
                old = out.get(key)
                if old is not None:
                    for name, value in old.items():
                        digest -= digest_of("c", key, name, value)
                    del out[key]
            configs = out.finish()
        return apply_nested_entries(configs, self._configs, "c", digest)


def _replace_broker(broker: BrokerRegistration, **changes: Any) -> BrokerRegistration:
    return msgspec.structs.replace(broker, **changes)


def _topic_digest(topic: TopicImage) -> int:
    parts = topic.partitions
    return digest_of("t", topic.topic_id, topic.name) + \
        partitions_digest(topic.topic_id, parts.keys(), parts.values())


_SHARED_TOPICS = 4096
"""How many recently made topics are remembered for sharing (see :func:`_apply_topic`):
enough to span the active controller's backlog of per-batch topics until the others
apply the same batches (see :data:`SHARED_REGISTRATIONS`)."""
_CACHED_TOPICS_PER_DELTA = 64
"""The most topics a delta may change and still look its topics up in the cache: beyond, a
miss costs ~6 us per topic (at a fence of 3,300 topics the broker's publish took 84 ms
through the cache, 64 ms without)."""
_topics_made: dict[tuple[int, str, str, int, int, int],
                   tuple[TopicImage | None, tuple[int, ...],
                         tuple[PartitionRegistration, ...], int, TopicImage]] = {}


def _apply_topic(change: _TopicChange, digest: int) -> tuple[int, TopicImage]:
    """The topic after ``change`` and the digest with it.

    Shared like the registrations (see :func:`partition_from_record`): a node
    applying the same registrations (by identity, under the same partition ids
    in the same order) to the same base topic gets the topic another node made
    a moment before (its own partitions map is otherwise one more copy of every
    node of the map).
    """
    changed = change.partitions
    if not changed:
        return _make_topic(change, digest)
    first, last = next(iter(changed.values())), next(reversed(changed.values()))
    key = (id(change.base), change.topic_id, change.name, len(changed), id(first), id(last))
    hit = _topics_made.get(key)
    if hit is not None and hit[0] is change.base and hit[1] == tuple(changed) and \
            all(map(is_, hit[2], changed.values())):
        return digest + hit[3], hit[4]
    out, topic = _make_topic(change, digest)
    if len(_topics_made) >= _SHARED_TOPICS:
        _topics_made.clear()
    _topics_made[key] = (change.base, tuple(changed), tuple(changed.values()), out - digest,
                         topic)
    return out, topic


def _make_topic(change: _TopicChange, digest: int) -> tuple[int, TopicImage]:
    base, topic_id, changed = change.base, change.topic_id, change.partitions
    if base is None:
        digest += digest_of("t", topic_id, change.name) + \
            partitions_digest(topic_id, changed.keys(), changed.values())
        return digest, TopicImage(change.name, topic_id, immutables.Map(changed))
    partitions = base.partitions
    if len(changed) == 1:  # (most topics of a fence at 100,000 topics: set costs less)
        [(partition_id, registration)] = changed.items()
        updated = partitions.set(partition_id, registration)
    else:
        updated = partitions.update(changed)
    if change.terms is not None:  # only PartitionChangeRecords: terms summed as they merged
        return digest + change.terms, TopicImage(base.name, topic_id, updated)
    digest += partitions_digest(topic_id, changed.keys(), changed.values())
    if len(updated) != len(partitions) + len(changed):  # some existed: their old terms go
        olds = list(map(partitions.get, changed))
        pairs = [(pid, old) for pid, old in zip(changed, olds, strict=True) if old is not None]
        digest -= partitions_digest(topic_id, (pid for pid, _ in pairs),
                                     (old for _, old in pairs))
    return digest, TopicImage(base.name, topic_id, updated)


REPLAY_HANDLERS: dict[type[MetadataRecord], Callable[[MetadataDelta, Any], None]] = {
    TopicRecord: MetadataDelta._replay_topic,
    PartitionRecord: MetadataDelta._replay_partition,
    PartitionChangeRecord: MetadataDelta._replay_partition_change,
    RemoveTopicRecord: MetadataDelta._replay_remove_topic,
    ClearElrRecord: MetadataDelta._replay_clear_elr,
    ConfigRecord: MetadataDelta._replay_config,
    RegisterBrokerRecord: MetadataDelta._replay_register_broker,
    UnregisterBrokerRecord: MetadataDelta._replay_unregister_broker,
    FenceBrokerRecord: MetadataDelta._replay_fence,
    UnfenceBrokerRecord: MetadataDelta._replay_fence,
    BrokerRegistrationChangeRecord: MetadataDelta._replay_registration_change,
    RegisterControllerRecord: MetadataDelta._replay_register_controller,
    FeatureLevelRecord: MetadataDelta._replay_feature,
    ProducerIdsRecord: MetadataDelta._replay_producer_ids,
    ZkMigrationStateRecord: MetadataDelta._replay_zk_migration,
    NoOpRecord: MetadataDelta._replay_noop,
    **dict.fromkeys(SECURITY_RECORD_TYPES, MetadataDelta._replay_security),
}
"""The replay of each record type (a checking subclass, ReplayCheck, overrides some)."""
MetadataDelta._handlers = REPLAY_HANDLERS
