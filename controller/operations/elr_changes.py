"""Partition changes when brokers leave or return, with eligible leader replicas on
(Kafka's ReplicationControlManager.generateLeaderAndIsrUpdates through its
PartitionChangeBuilder, KIP-966).

With ELR off, :mod:`controller.operations.leadership` writes these changes on its own fast
path (it never empties an ISR). With ELR on, each change is
:func:`controller.operations.partition_change.build_change`'s, so that the ELR follows:

- a broker that is fenced, shuts down in a controlled way, re-registers after a clean
  shutdown or is unregistered leaves the ISR of each partition it is in and may no
  longer lead; the ISR may become empty, and a member that leaves an ISR below
  min.insync.replicas joins the ELR;
- a broker that re-registers after an unclean shutdown (its registration does not name
  the broker epoch it held, Kafka's ``previousBrokerEpoch``) also leaves every ELR, as
  it may have lost records it acknowledged;
- an unfenced broker may lead every leaderless partition: an ISR member, else, when the
  ISR is empty, an ELR member (cleanly, the ISR becomes just it), else the last known
  leader, else where the topic allows it an unclean choice.

The leaving broker's partitions come from the image's broker index (by replica: a
superset of the ISR and the ELR, which a replica joins only from the ISR); on an
unfence, from the image's index of leaderless partitions; each in topic id and
partition order.
"""

from __future__ import annotations

from collections.abc import Iterator

from controller.operations.leadership import active, unclean_allowed
from controller.operations.partition_change import build_change
from metadata.image import MetadataImage
from metadata.schema import PartitionChangeRecord


def elr_leaving_changes(image: MetadataImage, broker_id: int, node_id: int | None = None,
                        *, unclean_shutdown: bool = False, elr_members: bool = False
                        ) -> Iterator[PartitionChangeRecord]:
    """The changes when ``broker_id`` leaves, for each partition whose ISR holds it (and,
    with ``unclean_shutdown`` or ``elr_members``, whose ELR holds it): out of the ISR, no
    longer a leader, and with ``unclean_shutdown`` out of the ELR too."""
    by_topic = image.partitions_by_broker.get(broker_id)
    if by_topic is None:
        return

    def acceptable(replica: int) -> bool:
        return replica != broker_id and active(image, replica)

    shutdown = (broker_id,) if unclean_shutdown else ()
    in_elr = unclean_shutdown or elr_members
    for topic_id in sorted(by_topic):
        topic = image.topics_by_id.get(topic_id)
        if topic is None:
            continue
        unclean: bool | None = None
        for pid in by_topic[topic_id]:
            reg = topic.partitions.get(pid)
            if reg is None:
                continue
            if broker_id not in reg.isr and not (
                    in_elr and broker_id in (reg.eligible_leader_replicas or ())):
                continue
            if unclean is None:
                unclean = unclean_allowed(image, topic.name, node_id)
            change = build_change(image, topic_id, pid, reg,
                                  isr=tuple(r for r in reg.isr if r != broker_id),
                                  unclean=unclean, acceptable=acceptable,
                                  unclean_shutdown=shutdown)
            if change is not None:
                yield change


def elr_returning_changes(image: MetadataImage, broker_id: int, node_id: int | None = None
                          ) -> Iterator[PartitionChangeRecord]:
    """The elections when ``broker_id`` is unfenced (``image`` still shows it fenced), for
    every leaderless partition, with it counted as active."""
    found = image.leaderless_partitions
    if not found:
        return

    def acceptable(replica: int) -> bool:
        return replica == broker_id or active(image, replica)

    for topic_id in sorted(found):
        topic = image.topics_by_id[topic_id]
        unclean = unclean_allowed(image, topic.name, node_id)
        for pid in found[topic_id]:
            change = build_change(image, topic_id, pid, topic.partitions[pid],
                                  unclean=unclean, acceptable=acceptable)
            if change is not None:
                yield change
