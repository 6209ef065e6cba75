"""Kafka's metadata shell tree over a :class:`MetadataImage`.

Layout (as ``kafka-metadata-shell`` shows it)::

    /image/provenance                       offset, epoch (and time) of the image
    /image/features/metadataVersion         e.g. 4.0-IV0
    /image/features/zkMigrationState        NONE, MIGRATION, ...
    /image/features/finalized_<feature>     the level of any other feature
    /image/cluster/brokers/<id>             a broker registration
    /image/cluster/controllers/<id>         a controller registration
    /image/topics/byName/<name>/name        the topic's name
    /image/topics/byName/<name>/id          its id
    /image/topics/byName/<name>/<partition> the partition registration
    /image/topics/byId/<id>/...             the same, by topic id
    /image/configs/<TYPE>:<name>/<key>      a config value (<TYPE> alone: the default;
                                            a sensitive one redacted)
    /image/clientQuotas/<entity>/<key>      a client quota value
    /image/producerIds/nextProducerId       the next producer id to hand out
    /image/acls/<id>                        an ACL
    /image/scram/<mechanism>/<user>         a SCRAM credential (secrets redacted)
    /image/delegationToken/<id>             a delegation token (redacted)

The last four (and ``clientQuotas``) are laid out in :mod:`shell.security_tree`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metadata.delta import CONFIG_RESOURCE_TYPES
from metadata.image import (
    BrokerRegistration,
    ConfigKey,
    ControllerRegistration,
    MetadataImage,
    PartitionRegistration,
    TopicImage,
)
from metadata.java_int import parse_java_int
from metadata.schema import BrokerEndpoint, BrokerFeature
from metadata.uuids import sorted_uuids
from metadata.versions import METADATA_VERSION_FEATURE, range_text, release_name
from shell.redaction import REDACTED, RedactionCriteria
from shell.security_tree import acls_dir, client_quotas_dir, delegation_tokens_dir, scram_dir
from shell.tree import Dir, File, Node, mapped_dir, static_dir, text_file

_CONFIG_TYPE_ORDER = ("GROUP", "CLIENT_METRICS", "BROKER_LOGGER", "BROKER", "TOPIC", "UNKNOWN")
"""Kafka's ConfigResource.Type names in its declaration order (a name's type is the first
of these it starts with)."""
ZK_MIGRATION_STATES: dict[int, str] = {
    0: "NONE", 1: "MIGRATION", 2: "POST_MIGRATION", 3: "PRE_MIGRATION", 4: "ZK",
}
"""Kafka's ZkMigrationState names by value."""

TimeOf = Callable[[int], str | None]
"""The time of the record at an offset, as text, when known."""


def provenance_text(image: MetadataImage, time_of: TimeOf | None = None) -> str:
    """``offset N, epoch E`` plus the time of that record when known."""
    if image.offset < 0:
        return "offset -1, epoch -1 (nothing published yet)"
    text = f"offset {image.offset}, epoch {image.epoch}"
    when = time_of(image.offset) if time_of is not None else None
    return f"{text}, time {when}" if when else text


def partition_json(reg: PartitionRegistration) -> dict[str, Any]:
    """A partition registration with Kafka's field names (``directories`` as the records
    gave them: empty where its text shows Kafka's MIGRATING ids)."""
    return {
        "replicas": list(reg.replicas), "directories": list(reg.directories),
        "isr": list(reg.isr), "removingReplicas": list(reg.removing_replicas),
        "addingReplicas": list(reg.adding_replicas),
        "elr": list(reg.eligible_leader_replicas or ()),
        "lastKnownElr": list(reg.last_known_elr or ()), "leader": reg.leader,
        "leaderRecoveryState": "RECOVERING" if reg.leader_recovery_state else "RECOVERED",
        "leaderEpoch": reg.leader_epoch, "partitionEpoch": reg.partition_epoch,
    }


def _endpoints(endpoints: tuple[BrokerEndpoint, ...]) -> list[dict[str, Any]]:
    return [{"name": e.name, "host": e.host, "port": e.port,
             "securityProtocol": e.security_protocol} for e in endpoints]


def _features(features: tuple[BrokerFeature, ...]) -> dict[str, dict[str, int]]:
    return {f.name: {"minSupportedVersion": f.min_supported_version,
                     "maxSupportedVersion": f.max_supported_version}
            for f in sorted(features, key=lambda f: f.name)}


def broker_json(reg: BrokerRegistration) -> dict[str, Any]:
    """A broker registration with Kafka's field names."""
    return {
        "id": reg.broker_id, "epoch": reg.epoch, "incarnationId": reg.incarnation_id,
        "listeners": _endpoints(reg.endpoints), "supportedFeatures": _features(reg.features),
        "rack": reg.rack, "fenced": reg.fenced,
        "inControlledShutdown": reg.in_controlled_shutdown,
        "isMigratingZkBroker": reg.is_migrating_zk_broker,
        "directories": sorted_directories(reg.directories),
    }


def controller_json(reg: ControllerRegistration) -> dict[str, Any]:
    """A controller registration with Kafka's field names."""
    return {
        "id": reg.controller_id, "incarnationId": reg.incarnation_id,
        "zkMigrationReady": reg.zk_migration_ready, "listeners": _endpoints(reg.endpoints),
        "supportedFeatures": _features(reg.features),
    }


SECURITY_PROTOCOLS: dict[int, str] = {
    0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL",
}
"""Kafka's SecurityProtocol names by id."""


def sorted_directories(directories: tuple[str, ...]) -> list[str]:
    """A broker's log directories in Kafka's order (its registration sorts them; a
    replayed registration holds them sorted already)."""
    return list(sorted_uuids(directories))


def _endpoints_text(endpoints: tuple[BrokerEndpoint, ...]) -> str:
    """Kafka's listeners, sorted by name, each as its Endpoint prints."""
    return "[" + ", ".join(
        f"Endpoint(listenerName='{e.name}', securityProtocol="
        f"{SECURITY_PROTOCOLS.get(e.security_protocol, e.security_protocol)}, "
        f"host='{e.host}', port={e.port})"
        for e in sorted(endpoints, key=lambda e: e.name)) + "]"


def _features_text(features: tuple[BrokerFeature, ...]) -> str:
    return "{" + ", ".join(
        f"{f.name}: {range_text(f.min_supported_version, f.max_supported_version)}"
        for f in sorted(features, key=lambda f: f.name)) + "}"


def broker_text(reg: BrokerRegistration) -> str:
    """Kafka's BrokerRegistration text, as its metadata shell prints a broker."""
    rack = "Optional.empty" if reg.rack is None else f"Optional[{reg.rack}]"
    return (f"BrokerRegistration(id={reg.broker_id}, epoch={reg.epoch}, "
            f"incarnationId={reg.incarnation_id}, listeners={_endpoints_text(reg.endpoints)}, "
            f"supportedFeatures={_features_text(reg.features)}, rack={rack}, "
            f"fenced={str(reg.fenced).lower()}, "
            f"inControlledShutdown={str(reg.in_controlled_shutdown).lower()}, "
            f"isMigratingZkBroker={str(reg.is_migrating_zk_broker).lower()}, "
            f"directories=[{', '.join(sorted_directories(reg.directories))}])")


def controller_text(reg: ControllerRegistration) -> str:
    """Kafka's ControllerRegistration text, as its metadata shell prints a controller."""
    return (f"ControllerRegistration(id={reg.controller_id}, "
            f"incarnationId={reg.incarnation_id}, "
            f"zkMigrationReady={str(reg.zk_migration_ready).lower()}, "
            f"listeners={_endpoints_text(reg.endpoints)}, "
            f"supportedFeatures={_features_text(reg.features)})")


def _topic_dir(topic: TopicImage) -> Dir:
    def child(name: str) -> Node | None:
        if name == "name":
            return text_file(topic.name)
        if name == "id":
            return text_file(topic.topic_id)
        pid = parse_java_int(name)
        reg = topic.partitions.get(pid) if pid is not None else None
        if reg is None:
            return None
        return File(reg.describe, lambda: partition_json(reg))

    return Dir(lambda: ["name", "id", *(str(p) for p in topic.partitions)], child)


def _topics_dir(image: MetadataImage) -> Dir:
    def by_name(name: str) -> Node | None:
        topic = image.topic(name)
        return _topic_dir(topic) if topic is not None else None

    def by_id(topic_id: str) -> Node | None:
        topic = image.topics_by_id.get(topic_id)
        return _topic_dir(topic) if topic is not None else None

    return static_dir({
        "byName": lambda: mapped_dir(lambda: image.topics_by_name.keys(), by_name),
        "byId": lambda: mapped_dir(lambda: image.topics_by_id.keys(), by_id),
    })


def config_type_name(resource_type: int) -> str:
    """Kafka's name of a config resource type id (UNKNOWN for an id it does not know)."""
    return CONFIG_RESOURCE_TYPES.get(resource_type, "UNKNOWN")


def config_dir_name(resource_type: int, resource_name: str) -> str:
    """``TOPIC:foo``, ``BROKER:1``, or the bare type for the default resource."""
    kind = config_type_name(resource_type)
    return f"{kind}:{resource_name}" if resource_name else kind


def config_resource_from_name(name: str) -> tuple[str, str] | None:
    """The (type name, resource name) a ``/image/configs`` child name stands for, read as
    Kafka's ConfigurationsImageNode reads it: the first type name (in Kafka's order) the
    name starts with, then nothing (the default resource) or ``:`` and the resource name
    (``BROKER:`` is the default resource too); None for any other name."""
    for kind in _CONFIG_TYPE_ORDER:
        if name.startswith(kind):
            rest = name[len(kind):]
            if not rest:
                return kind, ""
            return (kind, rest[1:]) if rest.startswith(":") else None
    return None


def _configs_dir(image: MetadataImage, criteria: RedactionCriteria) -> Dir:
    resources: dict[tuple[str, str], list[ConfigKey]] = {}
    for key in sorted(image.configs):
        resources.setdefault((config_type_name(key[0]), key[1]), []).append(key)

    def child(name: str) -> Node | None:
        parsed = config_resource_from_name(name)
        keys = resources.get(parsed) if parsed is not None else None
        if not keys:
            return None
        # Kafka keys a resource by type name: ids it does not know share UNKNOWN.
        values: dict[str, tuple[int, str]] = {}
        for resource_type, resource_name in keys:
            for config, setting in image.configs[(resource_type, resource_name)].items():
                values[config] = (resource_type, setting)

        def value(config: str) -> Node | None:
            found = values.get(config)
            if found is None:
                return None
            if criteria.redacts_config(found[0], config):
                return text_file(REDACTED)
            return text_file(found[1])

        return mapped_dir(lambda: values.keys(), value)

    return mapped_dir(lambda: (config_dir_name(*keys[0]) for keys in resources.values()),
                      child)


def _features_dir(image: MetadataImage) -> Dir:
    children: dict[str, Node | Callable[[], Node]] = {
        "metadataVersion": File(lambda: release_name(image.metadata_version),
                                lambda: {"name": release_name(image.metadata_version),
                                         "featureLevel": image.metadata_version}),
        "zkMigrationState": File(
            lambda: ZK_MIGRATION_STATES.get(image.zk_migration_state,
                                            str(image.zk_migration_state))),
    }
    for name, level in image.features.items():
        if name != METADATA_VERSION_FEATURE:
            children[f"finalized_{name}"] = text_file(level)
    return static_dir(children)


def _cluster_dir(image: MetadataImage) -> Dir:
    def broker(name: str) -> Node | None:
        key = parse_java_int(name)
        reg = image.brokers.get(key) if key is not None else None
        if reg is None:
            return None
        return File(lambda: broker_text(reg), lambda: broker_json(reg))

    def controller(name: str) -> Node | None:
        key = parse_java_int(name)
        reg = image.controllers.get(key) if key is not None else None
        if reg is None:
            return None
        return File(lambda: controller_text(reg), lambda: controller_json(reg))

    return static_dir({
        "brokers": lambda: mapped_dir(lambda: map(str, image.brokers.keys()), broker),
        "controllers": lambda: mapped_dir(lambda: map(str, image.controllers.keys()),
                                          controller),
    })


def image_dir(image: MetadataImage, time_of: TimeOf | None = None, *,
              redact: bool | RedactionCriteria = True) -> Dir:
    """``/image`` for one published image (with Kafka's children, empty ones included);
    ``redact``: which secrets print as ``[redacted]`` (True: Kafka's NORMAL criteria, SCRAM
    credentials, delegation tokens and sensitive configs; False: none; see
    :mod:`shell.redaction`)."""
    criteria = RedactionCriteria.of(redact)
    return static_dir({
        "provenance": File(lambda: provenance_text(image, time_of),
                           lambda: {"offset": image.offset, "epoch": image.epoch,
                                    "time": time_of(image.offset) if time_of else None}),
        "features": lambda: _features_dir(image),
        "cluster": lambda: _cluster_dir(image),
        "topics": lambda: _topics_dir(image),
        "configs": lambda: _configs_dir(image, criteria),
        "clientQuotas": lambda: client_quotas_dir(image),
        "producerIds": static_dir({"nextProducerId": text_file(image.next_producer_id)}),
        "acls": lambda: acls_dir(image),
        "scram": lambda: scram_dir(image, criteria.redacts_scram),
        "delegationToken": lambda: delegation_tokens_dir(image,
                                                         criteria.redacts_delegation_tokens),
    })
