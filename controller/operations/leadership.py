"""Partition leadership when brokers leave or return (Kafka's PartitionChangeBuilder rules),
the fast path taken with eligible leader replicas off (with them on, see
:mod:`controller.operations.elr_changes`).

- A broker that is fenced, shuts down in a controlled way, or re-registers
  with a new incarnation leaves the ISR of every partition it is in (KIP-841:
  the ISR holds only active brokers), unless it is the last member (the
  partition then keeps it and has no leader: clean election only).
- A new leader is the first replica, in replica order, that is in the new ISR
  and active (registered, unfenced, not in controlled shutdown). When there is
  none and the topic's ``unclean.leader.election.enable`` is true, the first
  active replica leads and the ISR becomes just it (it may lack acknowledged
  records: that is what unclean means); from metadata.version 3.2-IV0 the
  partition is marked RECOVERING (KIP-704) until its leader's next
  AlterPartition says RECOVERED.
- Unfencing a broker runs an election for every leaderless partition, with it
  counted as active: a clean one where an ISR member can lead, else, where
  unclean election is enabled, the first active replica (ISR just it). A
  partition the unfenced broker has no replica of can get a leader this way.
- Below metadata.version 3.6-IV0 an ISR shrink that keeps the leader still bumps
  the leader epoch (the record names the leader again), as Kafka did then.

Setting a leader bumps the leader epoch and every change bumps the partition
epoch (:meth:`metadata.image.PartitionRegistration.merge`). Only the leaving
broker's partitions are visited, through the image's broker index (on an
unfence, the leaderless ones, through the image's index of them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from metadata.broker_index import partitions_of
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import (
    NO_LEADER,
    RECOVERING,
    MetadataImage,
    PartitionRegistration,
)
from metadata.schema import PartitionChangeRecord
from metadata.versions import LEADER_RECOVERY, NO_EPOCH_BUMP_ON_ISR_SHRINK

UNCLEAN_LEADER_ELECTION = "unclean.leader.election.enable"
"""Kafka's topic config; false by default."""


def unclean_allowed(image: MetadataImage, topic_name: str, node_id: int | None = None
                    ) -> bool:
    """The topic's unclean.leader.election.enable, else the one of the controller
    ``node_id`` (a broker resource named by its id), else the cluster default, else false:
    Kafka's order (topic, current controller, cluster, static). With no ``node_id``, true
    also when any node's own setting is (whichever controller is active may elect)."""
    configured = _configured(image.configs.get((TOPIC_RESOURCE, topic_name)))
    return _cluster_unclean(image, node_id) if configured is None else configured


def _cluster_unclean(image: MetadataImage, node_id: int | None = None) -> bool:
    """unclean.leader.election.enable where a topic says nothing: the setting of the
    controller ``node_id``, else the cluster default (false when neither is set). With no
    ``node_id``: the cluster default, or any node's setting that is true."""
    configs = image.configs
    if node_id is not None:
        own = _configured(configs.get((BROKER_RESOURCE, str(node_id))))
        if own is not None:
            return own
        return _configured(configs.get((BROKER_RESOURCE, ""))) or False
    if _configured(configs.get((BROKER_RESOURCE, ""))):
        return True
    return any(_configured(values) for (resource, _), values in configs.items()
               if resource == BROKER_RESOURCE)


def _unclean_of(image: MetadataImage, topic_name: str, default: bool) -> bool:
    """The topic's unclean.leader.election.enable, else ``default``."""
    configured = _configured(image.configs.get((TOPIC_RESOURCE, topic_name)))
    return default if configured is None else configured


def _unclean_overrides(image: MetadataImage, most: int) -> dict[str, bool] | None:
    """The topics whose own configs set unclean.leader.election.enable, by name, read in
    one pass over the image's configs; None when they hold more than ``most`` resources
    (a look-up per topic costs less then)."""
    configs = image.configs
    if len(configs) > most:
        return None
    overrides: dict[str, bool] = {}
    for (resource, name), values in configs.items():
        if resource == TOPIC_RESOURCE:
            configured = _configured(values)
            if configured is not None:
                overrides[name] = configured
    return overrides


def _configured(configs: Mapping[str, str] | None) -> bool | None:
    """unclean.leader.election.enable in one resource's configs; None when unset."""
    if configs is None or UNCLEAN_LEADER_ELECTION not in configs:
        return None
    return configs[UNCLEAN_LEADER_ELECTION].strip().lower() == "true"


def active(image: MetadataImage, broker_id: int, leaving: int = NO_LEADER) -> bool:
    """Registered, unfenced, not in controlled shutdown, and not ``leaving``."""
    broker = image.brokers.get(broker_id)
    return (broker is not None and broker_id != leaving and not broker.fenced
            and not broker.in_controlled_shutdown)


def leaving_change(image: MetadataImage, topic_id: str, partition_id: int,
                   reg: PartitionRegistration, broker_id: int,
                   unclean: bool) -> PartitionChangeRecord | None:
    """The change when ``broker_id`` leaves: out of the ISR, a new leader if it led."""
    return _leaving_change(image, topic_id, partition_id, reg, broker_id, unclean, {})


def _leaving_change(image: MetadataImage, topic_id: str, partition_id: int,
                    reg: PartitionRegistration, broker_id: int, unclean: bool,
                    actives: dict[int, bool]) -> PartitionChangeRecord | None:
    """:func:`leaving_change`, with whether each broker is active memoized in ``actives``
    (a fence asks it of a few hundred brokers for thousands of partitions)."""
    old_isr = reg.isr
    old_leader = reg.leader
    if broker_id not in old_isr and old_leader != broker_id:
        return None
    isr = tuple([r for r in old_isr if r != broker_id]) or old_isr  # (a list: no generator)
    leader = old_leader
    if leader in (broker_id, NO_LEADER):
        leader = NO_LEADER
        for replica in reg.replicas:
            if replica in isr:
                up = actives.get(replica)
                if up is None:
                    up = actives[replica] = active(image, replica, broker_id)
                if up:
                    leader = replica
                    break
        if leader == NO_LEADER and unclean:
            for replica in reg.replicas:
                if active(image, replica, broker_id):
                    return unclean_change(image, topic_id, partition_id, reg, replica)
    same_isr = isr == old_isr
    if same_isr and leader == old_leader:
        return None
    if leader == old_leader and not same_isr and \
            image.metadata_version < NO_EPOCH_BUMP_ON_ISR_SHRINK:
        return PartitionChangeRecord(  # an older version bumps the leader epoch on a shrink
            partition_id=partition_id, topic_id=topic_id, isr=isr, leader=leader)
    return PartitionChangeRecord(
        partition_id=partition_id, topic_id=topic_id, isr=None if same_isr else isr,
        leader=leader if leader != old_leader else -2)


def unclean_change(image: MetadataImage, topic_id: str, partition_id: int,
                    reg: PartitionRegistration, leader: int) -> PartitionChangeRecord:
    """``leader`` elected uncleanly: the ISR becomes just it and, where metadata.version
    has KIP-704, the partition is RECOVERING (Kafka's PartitionChangeBuilder.tryElection)."""
    recovering = reg.leader_recovery_state != RECOVERING and \
        image.metadata_version >= LEADER_RECOVERY
    return PartitionChangeRecord(
        partition_id=partition_id, topic_id=topic_id, isr=(leader,), leader=leader,
        leader_recovery_state=RECOVERING if recovering else -1)


def leaving_changes(image: MetadataImage, broker_id: int, node_id: int | None = None
                    ) -> Iterator[PartitionChangeRecord]:
    """Changes for every partition of ``broker_id``, in (topic id, partition) order, as
    the controller ``node_id`` writes them (its own unclean-election setting applies where
    a topic has none).

    Walked topic by topic (one topic lookup per topic, not per partition; the topics'
    unclean-election settings read once, or one look-up per topic when the configs are
    many); the records are those of :func:`leaving_change` for each.
    """
    by_topic = image.partitions_by_broker.get(broker_id)
    if by_topic is None:
        return
    topics_by_id = image.topics_by_id
    actives: dict[int, bool] = {}
    default = _cluster_unclean(image, node_id)
    overrides = _unclean_overrides(image, len(by_topic))
    for topic_id in sorted(by_topic):
        topic = topics_by_id.get(topic_id)
        if topic is None:
            continue
        partitions = topic.partitions
        if overrides is None:
            unclean = _unclean_of(image, topic.name, default)
        else:  # (no topic sets it, the usual case: not even the topic's name is read)
            unclean = overrides.get(topic.name, default) if overrides else default
        for pid in by_topic[topic_id]:
            reg = partitions.get(pid)
            if reg is None:
                continue
            if reg.eligible_leader_replicas:  # left from a time ELR was on
                change = _stale_elr_change(image, topic_id, pid, reg, broker_id, unclean)
            else:
                change = _leaving_change(image, topic_id, pid, reg, broker_id, unclean,
                                         actives)
            if change is not None:
                yield change


def _stale_elr_change(image: MetadataImage, topic_id: str, partition_id: int,
                      reg: PartitionRegistration, broker_id: int, unclean: bool
                      ) -> PartitionChangeRecord | None:
    """The leaving change of a partition that kept an ELR from a time eligible leader
    replicas were on: Kafka's builder, which with ELR off empties it (only a partition
    whose ISR holds ``broker_id`` changes, as Kafka visits those)."""
    from controller.operations.partition_change import build_change  # (imports this module)

    if broker_id not in reg.isr:
        return None
    return build_change(image, topic_id, partition_id, reg,
                        isr=tuple(r for r in reg.isr if r != broker_id), unclean=unclean,
                        acceptable=lambda r: r != broker_id and active(image, r))


def returning_changes(image: MetadataImage, broker_id: int, node_id: int | None = None
                      ) -> Iterator[PartitionChangeRecord]:
    """The elections when ``broker_id`` is unfenced (``image`` still shows it fenced): every
    leaderless partition gets its topic's election with one more broker active (Kafka's
    handleBrokerUnfenced runs them over all leaderless partitions, not only the unfenced
    broker's), in topic id and partition order.

    A leader is the first replica, in replica order, that is in the ISR and is
    ``broker_id`` or active (a clean election, the ISR kept); where the topic allows
    unclean elections (as the controller ``node_id`` reads it) and no ISR member can
    lead, the first such replica leads with the ISR just it (:func:`unclean_change`). So
    a partition of other brokers can get a leader here: its ISR member fenced, an active
    replica elected uncleanly once a topic allows it.

    The image's leaderless-partition index names them: an unfence with none costs
    nothing more.
    """
    found = image.leaderless_partitions
    if not found:
        return
    topics_by_id = image.topics_by_id
    actives: dict[int, bool] = {broker_id: True}
    default: bool | None = None
    for topic_id in sorted(found):
        topic = topics_by_id[topic_id]
        unclean: bool | None = None
        for pid in found[topic_id]:
            reg = topic.partitions[pid]
            if reg.eligible_leader_replicas:  # left from a time ELR was on: Kafka's builder
                from controller.operations.partition_change import build_change

                if unclean is None:
                    if default is None:
                        default = _cluster_unclean(image, node_id)
                    unclean = _unclean_of(image, topic.name, default)
                stale = build_change(image, topic_id, pid, reg, unclean=unclean,
                                     acceptable=lambda r: _active_memo(image, r, actives))
                if stale is not None:
                    yield stale
                continue
            leader = NO_LEADER
            for replica in reg.replicas:
                if replica in reg.isr and _active_memo(image, replica, actives):
                    leader = replica
                    break
            if leader != NO_LEADER:
                yield PartitionChangeRecord(partition_id=pid, topic_id=topic_id, leader=leader)
                continue
            if unclean is None:
                if default is None:
                    default = _cluster_unclean(image, node_id)
                unclean = _unclean_of(image, topic.name, default)
            if unclean:
                leader = next((r for r in reg.replicas if _active_memo(image, r, actives)),
                              NO_LEADER)
                if leader != NO_LEADER:
                    yield unclean_change(image, topic_id, pid, reg, leader)


def _active_memo(image: MetadataImage, broker_id: int, actives: dict[int, bool]) -> bool:
    """:func:`active`, memoized in ``actives`` (which may say so of a broker the image
    still shows fenced)."""
    up = actives.get(broker_id)
    if up is None:
        up = actives[broker_id] = active(image, broker_id)
    return up


def leads_any(image: MetadataImage, broker_id: int) -> bool:
    """True while ``broker_id`` leads at least one partition."""
    for topic_id, pid in partitions_of(image.partitions_by_broker, broker_id):
        topic = image.topics_by_id.get(topic_id)
        reg = topic.partitions.get(pid) if topic is not None else None
        if reg is not None and reg.leader == broker_id:
            return True
    return False
