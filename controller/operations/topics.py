"""CreateTopics, DeleteTopics and CreatePartitions."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Set

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.bounded import EXCESSIVELY_LARGE
from controller.operations.config_defs import validate_topic_config
from controller.operations.leadership import active
from controller.operations.placement import in_sync, place_replicas
from metadata.delta import TOPIC_RESOURCE
from metadata.image import MetadataImage
from metadata.schema import (
    ConfigRecord,
    MetadataRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from metadata.uuids import random_uuid

_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
MAX_NAME_LENGTH = 249
"""Kafka's longest topic name."""
DEFAULT_NUM_PARTITIONS = 1
"""num.partitions: the partitions of a topic created with -1 (Kafka's default)."""
DEFAULT_REPLICATION_FACTOR = 1
"""default.replication.factor: the replication factor of a topic created with -1."""
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
"""Kafka's Topic.CLUSTER_METADATA_TOPIC_NAME: the metadata log, never a topic to create."""


def validate_topic_name(name: str) -> None:
    """Kafka's topic name rules (its Topic.validate, in its order and words); raises
    INVALID_TOPIC_EXCEPTION."""
    reason = None
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_NAME_LENGTH:
        reason = f"the length of '{name}' is longer than the max allowed length " \
                 f"{MAX_NAME_LENGTH}"
    elif not _LEGAL_NAME.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII " \
                 f"alphanumerics, '.', '_' and '-'"
    if reason is not None:
        raise ApiError("INVALID_TOPIC_EXCEPTION", f"Topic name is invalid: {reason}")


_SWAPPABLE = 12
"""Up to this many '.' and '_' in a name, its colliding names are looked up one by one
(2**12 look-ups at most); past it the topic names are scanned."""


def colliding_topic(name: str, existing: Mapping[str, str] | Set[str]) -> str | None:
    """The first, in name order, of the topics in ``existing`` other than ``name`` whose
    name equals it once every '.' is read as '_' (Kafka refuses such a pair: the two share
    metric names; it names the first of its sorted set of colliding names), else None."""
    spots = [i for i, c in enumerate(name) if c in "._"]
    if not spots:
        return None
    normal = name.replace(".", "_")
    if len(spots) > _SWAPPABLE:
        return next((other for other in sorted(existing)
                     if other != name and other.replace(".", "_") == normal), None)
    chars = list(normal)
    found: str | None = None
    for mask in range(1 << len(spots)):
        for bit, at in enumerate(spots):
            chars[at] = "." if mask >> bit & 1 else "_"
        other = "".join(chars)
        if other != name and other in existing and (found is None or other < found):
            found = other
    return found


def validate_manual_assignment(image: MetadataImage, replicas: tuple[int, ...],
                               replication_factor: int | None) -> None:
    """Kafka's checks of one partition's replicas given by hand (INVALID_REPLICA_ASSIGNMENT):
    not empty, every broker registered and named once (checked in broker id order, as
    Kafka's validateManualPartitionAssignment), and as many replicas as the partitions
    before it (``replication_factor``, None for the first)."""
    if not replicas:
        raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                       "The manual partition assignment includes an empty replica list.")
    previous: int | None = None
    for broker in sorted(replicas):
        if broker not in image.brokers:
            raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                           f"The manual partition assignment includes broker {broker}, but no "
                           f"such broker is registered.")
        if broker == previous:
            raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                           f"The manual partition assignment includes the broker {broker} "
                           f"more than once.")
        previous = broker
    if replication_factor is not None and len(replicas) != replication_factor:
        raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                       f"The manual partition assignment includes a partition with "
                       f"{len(replicas)} replica(s), but this is not consistent with previous "
                       f"partitions, which have {replication_factor} replica(s).")


def _isr_of(replicas: tuple[int, ...], active: frozenset[int]) -> tuple[int, ...]:
    """A placed partition's ISR: its replicas that are active (Kafka's ``isActive``), in
    order; the replicas' own tuple when all are."""
    for broker in replicas:
        if broker not in active:
            return tuple(b for b in replicas if b in active)
    return replicas


def _manual_partitions(image: MetadataImage, assignments: tuple[tuple[int, ...], ...],
                       first_partition: int, replication_factor: int | None
                       ) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each assigned partition's replicas and ISR (its active replicas, in replica order),
    checked as Kafka does; a partition with no active replica is INVALID_REPLICA_ASSIGNMENT."""
    parts = []
    for i, replicas in enumerate(assignments):
        replicas = tuple(replicas)
        validate_manual_assignment(image, replicas, replication_factor)
        replication_factor = len(replicas)
        isr = tuple(r for r in replicas if active(image, r))
        if not isr:
            raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                           f"All brokers specified in the manual partition assignment for "
                           f"partition {first_partition + i} are fenced or in controlled "
                           f"shutdown.")
        parts.append((replicas, isr))
    return parts


class NewTopic(msgspec.Struct, frozen=True):
    """One topic to create; ``assignments`` places its partitions by hand (partition i on
    ``assignments[i]``, the partition count and replication factor then -1, as Kafka
    asks)."""

    name: str
    partitions: int = 1
    replication_factor: int = 1
    configs: tuple[tuple[str, str | None], ...] = ()
    """(key, value) pairs; a None value is refused (INVALID_CONFIG), as Kafka does."""
    assignments: tuple[tuple[int, ...], ...] = ()


class CreateTopics(msgspec.Struct, frozen=True):
    """Create topics: a TopicRecord, its PartitionRecords and ConfigRecords for each; with
    ``validate_only``, the same checks and answer, and nothing written (Kafka's
    validateOnly)."""

    topics: tuple[NewTopic, ...]
    validate_only: bool = False

    def describe(self) -> str:
        """E.g. ``CreateTopics(big: 2000 partitions)``."""
        inner = ", ".join(f"{t.name}: {t.partitions} partitions" for t in self.topics)
        return f"CreateTopics({inner})"

    def early_result(self) -> Generated | None:
        """No topics: the answer, given at once without a write (Kafka's early result)."""
        return Generated([], {"topics": []}) if not self.topics else None

    def generate(self, ctx: OperationContext) -> Generated:
        """Each topic gets its own result, as in Kafka's ReplicationControlManager: the
        topics that can be created are, the others answer their error (code and message)
        in the response. A topic is checked in Kafka's order: its name given once in the
        request (INVALID_REQUEST "Duplicate topic name.", Kafka's ControllerApis), not
        ``__cluster_metadata`` (INVALID_REQUEST, ControllerApis' "Creation of internal
        topic __cluster_metadata is prohibited."), legal,
        new, not colliding on '.' against '_' with an existing topic or one created before
        it in the request; then its configs, checked whole; then its replication factor
        and partition count (-1 taking the cluster default) or its assignments; then
        replicas are placed and its records written: the TopicRecord, the ConfigRecords,
        then one PartitionRecord per partition, whose ISR is its active replicas (those
        placed on fenced brokers, when too few are unfenced, join it once they catch up),
        led by the first.

        When no topic can be created the operation fails with the first topic's error
        (a one-topic request answers as Kafka's does); a request past the record bound
        fails whole (Kafka's BoundedList)."""
        records = ctx.records()
        results: list[dict[str, object]] = []
        seen: set[str] = set()
        counts = Counter(topic.name for topic in self.topics)
        first_error: ApiError | None = None
        created = False
        for topic in self.topics:
            start = len(records)
            try:
                if counts[topic.name] > 1:
                    raise ApiError("INVALID_REQUEST", "Duplicate topic name.")
                if topic.name == CLUSTER_METADATA_TOPIC:
                    raise ApiError("INVALID_REQUEST", f"Creation of internal topic "
                                                      f"{CLUSTER_METADATA_TOPIC} is prohibited.")
                result = self._create(ctx, topic, records, seen)
            except ApiError as error:
                if error.code == "POLICY_VIOLATION" and error.message == EXCESSIVELY_LARGE:
                    raise
                del records[start:]
                first_error = first_error or error
                results.append({"name": topic.name, "errorCode": error.code,
                                "errorMessage": error.message})
                continue
            seen.add(topic.name)
            created = True
            results.append(result)
        if not created and first_error is not None:
            raise first_error
        return Generated([] if self.validate_only else records, {"topics": results})

    def _create(self, ctx: OperationContext, topic: NewTopic, records: list[MetadataRecord],
                seen: set[str]) -> dict[str, object]:
        """Check ``topic`` and append its records; its result, or ApiError."""
        image = ctx.image
        validate_topic_name(topic.name)
        if topic.name in image.topics_by_name:
            raise ApiError("TOPIC_ALREADY_EXISTS", f"Topic '{topic.name}' already exists.")
        clash = colliding_topic(topic.name, image.topics_by_name) or \
            colliding_topic(topic.name, seen)
        if clash is not None:
            raise ApiError("INVALID_TOPIC_EXCEPTION",
                           f"Topic '{topic.name}' collides with existing topic: {clash}")
        nulls = [key for key, value in topic.configs if value is None]
        if nulls:
            raise ApiError("INVALID_CONFIG",
                           f"Null value not supported for topic configs: {','.join(nulls)}")
        # a key given twice: the last value (as Kafka)
        configs = {key: value for key, value in topic.configs if value is not None}
        validate_topic_config(configs)
        if topic.assignments:
            if topic.replication_factor != -1:
                raise ApiError("INVALID_REQUEST",
                               "A manual partition assignment was specified, but "
                               "replication factor was not set to -1.")
            if topic.partitions != -1:
                raise ApiError("INVALID_REQUEST",
                               "A manual partition assignment was specified, but "
                               "numPartitions was not set to -1.")
            manual = _manual_partitions(image, topic.assignments, 0, None)
            parts: Iterable[tuple[tuple[int, ...], tuple[int, ...], int]] = \
                [(r, isr, isr[0]) for r, isr in manual]
            partitions, factor = len(manual), len(manual[0][0])
        else:
            if topic.replication_factor < -1 or topic.replication_factor == 0:
                raise ApiError("INVALID_REPLICATION_FACTOR",
                               "Replication factor must be larger than 0, or -1 to use the "
                               "default value.")
            if topic.partitions < -1 or topic.partitions == 0:
                raise ApiError("INVALID_PARTITIONS",
                               "Number of partitions was set to an invalid non-positive "
                               "value.")
            partitions = DEFAULT_NUM_PARTITIONS if topic.partitions == -1 else topic.partitions
            factor = DEFAULT_REPLICATION_FACTOR if topic.replication_factor == -1 \
                else topic.replication_factor
            active = in_sync(image)
            placed = place_replicas(image, ctx.rng, partitions, factor)
            # placed lazily: the topic id is drawn first, then the placement, as always
            parts = ((r, r, r[0]) for r in placed) if len(active) == len(image.brokers) \
                else ((r, _isr_of(r, active), r[0]) for r in placed)
        topic_id = self._new_id(ctx)
        records.append(TopicRecord(topic.name, topic_id))
        # configs before partitions, as Kafka writes them (a broker knows a topic's
        # configs when it creates the topic's partitions)
        records.extend(ConfigRecord(TOPIC_RESOURCE, topic.name, key, value)
                       for key, value in configs.items())
        records.extend(
            PartitionRecord(partition_id=p, topic_id=topic_id, replicas=r, isr=isr,
                            leader=leader, leader_epoch=0, partition_epoch=0)
            for p, (r, isr, leader) in enumerate(parts))
        return {"name": topic.name, "topicId": topic_id,
                "numPartitions": partitions, "replicationFactor": factor}

    @staticmethod
    def _new_id(ctx: OperationContext) -> str:
        """A random topic id no topic has."""
        topic_id = random_uuid(ctx.rng)
        while topic_id in ctx.image.topics_by_id:
            topic_id = random_uuid(ctx.rng)
        return topic_id


class DeleteTopics(msgspec.Struct, frozen=True):
    """Delete topics by name, or by id (one RemoveTopicRecord each)."""

    names: tuple[str, ...]
    topic_ids: tuple[str, ...] = ()

    def describe(self) -> str:
        """E.g. ``DeleteTopics(a, b)``."""
        return f"DeleteTopics({', '.join((*self.names, *self.topic_ids))})"

    def early_result(self) -> Generated | None:
        """No names: the answer, given at once without a write (Kafka's early result)."""
        return Generated([], {"deleted": []}) if not self.names and not self.topic_ids \
            else None

    def generate(self, ctx: OperationContext) -> Generated:
        """Each name and id gets its own result, as in Kafka's ControllerApis: a name or id
        given twice is INVALID_REQUEST ("Duplicate topic name." / "Duplicate topic id."),
        an unknown name UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID; the
        other topics are removed (once each, named both ways or not). The response lists
        the names deleted and, when some failed, their errors; when nothing can be
        deleted the operation fails with the first error."""
        image = ctx.image
        errors: list[dict[str, str]] = []
        first: ApiError | None = None
        targets: dict[str, str] = {}  # topic id -> name, in the request's order

        def refuse(what: dict[str, str], error: ApiError) -> None:
            nonlocal first
            first = first or error
            errors.append({**what, "errorCode": error.code, "errorMessage": error.message})

        names, ids = Counter(self.names), Counter(self.topic_ids)
        for name in names:
            topic_id = image.topics_by_name.get(name)
            if names[name] > 1:
                refuse({"name": name}, ApiError("INVALID_REQUEST", "Duplicate topic name."))
            elif topic_id is None:
                refuse({"name": name}, ApiError(
                    "UNKNOWN_TOPIC_OR_PARTITION",
                    f"This server does not host this topic-partition: {name}"))
            else:
                targets.setdefault(topic_id, name)
        for topic_id in ids:
            topic = image.topics_by_id.get(topic_id)
            if ids[topic_id] > 1:
                refuse({"topicId": topic_id}, ApiError("INVALID_REQUEST", "Duplicate topic id."))
            elif topic is None:
                refuse({"topicId": topic_id}, ApiError(
                    "UNKNOWN_TOPIC_ID", f"This server does not host this topic ID: {topic_id}"))
            else:
                targets.setdefault(topic_id, topic.name)
        if not targets and first is not None:
            raise first
        records = ctx.records()
        records.extend(RemoveTopicRecord(topic_id) for topic_id in targets)
        response: dict[str, object] = {"deleted": list(targets.values())}
        if errors:
            response["errors"] = errors
        return Generated(records, response)


class CreatePartitions(msgspec.Struct, frozen=True):
    """Grow a topic to ``count`` partitions, placed like its others or, with
    ``assignments``, by hand (one replica list per new partition)."""

    name: str
    count: int
    replication_factor: int | None = None
    assignments: tuple[tuple[int, ...], ...] | None = None

    def describe(self) -> str:
        """E.g. ``CreatePartitions(foo -> 12)``."""
        return f"CreatePartitions({self.name} -> {self.count})"

    def generate(self, ctx: OperationContext) -> Generated:
        """New PartitionRecords placed like the topic's existing ones (as many replicas as
        its first partition), or as assigned: Kafka's checks of each assignment (one per
        new partition, as many replicas as the topic's partitions, at least one active)."""
        topic = ctx.image.topic(self.name)
        if topic is None:
            raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                           f"This server does not host this topic-partition: {self.name}")
        current = len(topic.partitions)
        if self.count == current:
            raise ApiError("INVALID_PARTITIONS", f"Topic already has {current} partition(s).")
        if self.count < current:
            raise ApiError("INVALID_PARTITIONS",
                           f"The topic {self.name} currently has {current} partition(s); "
                           f"{self.count} would not be an increase.")
        additional = self.count - current
        if self.assignments is not None and len(self.assignments) != additional:
            raise ApiError("INVALID_REPLICA_ASSIGNMENT",
                           f"Attempted to add {additional} additional partition(s), but only "
                           f"{len(self.assignments)} assignment(s) were specified.")
        rf = self.replication_factor or len(topic.partitions[0].replicas)
        records = ctx.records()
        if self.assignments is not None:
            manual = _manual_partitions(ctx.image, self.assignments, current, rf)
            records.extend(
                PartitionRecord(partition_id=current + i, topic_id=topic.topic_id, replicas=r,
                                isr=isr, leader=isr[0], leader_epoch=0, partition_epoch=0)
                for i, (r, isr) in enumerate(manual))
            return Generated(records, {"name": self.name, "count": self.count})
        replicas = place_replicas(ctx.image, ctx.rng, additional, rf)
        active = in_sync(ctx.image)
        records.extend(
            PartitionRecord(partition_id=current + i, topic_id=topic.topic_id, replicas=r,
                            isr=_isr_of(r, active), leader=r[0],
                            leader_epoch=0, partition_epoch=0)
            for i, r in enumerate(replicas))
        return Generated(records, {"name": self.name, "count": self.count})
