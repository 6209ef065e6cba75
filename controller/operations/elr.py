"""Eligible leader replicas (KIP-966 part 1): when they are on, and the min ISR they track.

ELR is on while the finalized feature ``eligible.leader.replicas.version`` is at least 1
(Kafka 4.1's ``FeatureControlManager.isElrFeatureEnabled``; the level needs
metadata.version 4.0-IV1, whose PartitionRecord and PartitionChangeRecord v2 carry the
fields). With it on, every partition change the controller builds keeps them
(:func:`controller.operations.partition_change.build_change`): a replica that leaves an
ISR smaller than min.insync.replicas joins the ELR, the ELR empties once the ISR is back
to min.insync.replicas, the ISR may become empty, and a partition with an empty ISR
elects from its ELR (cleanly: an ELR member holds every committed record).

The min ISR of a topic is Kafka's ``getTopicEffectiveMinIsr``: the topic's
min.insync.replicas, else the cluster default (a broker resource named ""), else 1
(Kafka's static default), at most the replication factor of the topic's partition 0.
With ELR on no single broker may set min.insync.replicas (Kafka refuses it and removes
such settings when ELR is turned on), so a controller's own setting never applies.
"""

from __future__ import annotations

from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.image import MetadataImage
from metadata.versions import ELR

ELR_FEATURE = "eligible.leader.replicas.version"
"""Kafka's EligibleLeaderReplicasVersion feature name."""
MIN_INSYNC_REPLICAS = "min.insync.replicas"
"""The config whose value the ELR tracks."""
STATIC_MIN_INSYNC_REPLICAS = 1
"""Kafka's default min.insync.replicas (a controller's static config, unset)."""


def elr_enabled(image: MetadataImage) -> bool:
    """True when the image's finalized eligible.leader.replicas.version is 1 or more (and
    its metadata.version can record the ELR, which that level requires)."""
    return image.features.get(ELR_FEATURE, 0) >= 1 and image.metadata_version >= ELR


def _configured(image: MetadataImage, resource: tuple[int, str]) -> int | None:
    values = image.configs.get(resource)
    if values is None:
        return None
    text = values.get(MIN_INSYNC_REPLICAS)
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def cluster_min_isr(image: MetadataImage) -> int:
    """The cluster default min.insync.replicas, else Kafka's static default (1)."""
    configured = _configured(image, (BROKER_RESOURCE, ""))
    return STATIC_MIN_INSYNC_REPLICAS if configured is None else configured


def effective_min_isr(image: MetadataImage, topic_id: str) -> int:
    """The topic's min.insync.replicas (its own, else the cluster's, else 1), at most the
    replication factor of its partition 0 (Kafka's getTopicEffectiveMinIsr)."""
    topic = image.topics_by_id[topic_id]
    configured = _configured(image, (TOPIC_RESOURCE, topic.name))
    value = cluster_min_isr(image) if configured is None else configured
    first = topic.partitions.get(0)
    if first is None:
        return value
    return min(value, len(first.replicas))
