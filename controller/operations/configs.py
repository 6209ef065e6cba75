"""IncrementalAlterConfigs and the config names kraftsim knows (a subset of Kafka's)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.schema import ConfigRecord

RESOURCE_TYPES: dict[str, int] = {"TOPIC": TOPIC_RESOURCE, "BROKER": BROKER_RESOURCE}
"""Config resource types by Kafka's name (ConfigResource.Type)."""
RESOURCE_NAMES: dict[int, str] = {v: k for k, v in RESOURCE_TYPES.items()}
"""Kafka's name of each supported config resource type id."""


def _long(minimum: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            return int(value) >= minimum
        except ValueError:
            return False
    return check


def _choice(*options: str) -> Callable[[str], bool]:
    return lambda value: value in options


def _list_of(*options: str) -> Callable[[str], bool]:
    return lambda value: bool(value) and all(v.strip() in options for v in value.split(","))


def _ratio(value: str) -> bool:
    try:
        return 0.0 <= float(value) <= 1.0
    except ValueError:
        return False


def _BOOL(value: str) -> bool:
    """Kafka's ConfigDef BOOLEAN: "true" or "false", trimmed, in any case."""
    return value.strip().lower() in ("true", "false")


_ANY: Callable[[str], bool] = lambda value: True  # noqa: E731

TOPIC_CONFIGS: dict[str, Callable[[str], bool]] = {
    "cleanup.policy": _list_of("delete", "compact"),
    "compression.type": _choice("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "delete.retention.ms": _long(0),
    "file.delete.delay.ms": _long(0),
    "flush.messages": _long(1),
    "flush.ms": _long(0),
    "follower.replication.throttled.replicas": _ANY,
    "index.interval.bytes": _long(0),
    "leader.replication.throttled.replicas": _ANY,
    "local.retention.bytes": _long(-2),
    "local.retention.ms": _long(-2),
    "max.compaction.lag.ms": _long(1),
    "max.message.bytes": _long(0),
    "message.timestamp.type": _choice("CreateTime", "LogAppendTime"),
    "min.cleanable.dirty.ratio": _ratio,
    "min.compaction.lag.ms": _long(0),
    "min.insync.replicas": _long(1),
    "preallocate": _BOOL,
    "remote.storage.enable": _BOOL,
    "retention.bytes": _long(-1),
    "retention.ms": _long(-1),
    "segment.bytes": _long(14),
    "segment.index.bytes": _long(4),
    "segment.jitter.ms": _long(0),
    "segment.ms": _long(1),
    "unclean.leader.election.enable": _BOOL,
}
"""Kafka topic configs and a check of their values."""

BROKER_CONFIGS: dict[str, Callable[[str], bool]] = {
    "background.threads": _long(1),
    "compression.type": TOPIC_CONFIGS["compression.type"],
    "log.cleaner.threads": _long(0),
    "log.retention.bytes": _long(-1),
    "log.retention.ms": _long(-1),
    "log.segment.bytes": _long(14),
    "max.connections": _long(0),
    "message.max.bytes": _long(0),
    "min.insync.replicas": _long(1),
    "num.io.threads": _long(1),
    "num.network.threads": _long(1),
    "num.replica.fetchers": _long(1),
    "unclean.leader.election.enable": _BOOL,
}
"""Dynamic broker configs and a check of their values."""

_KNOWN = {TOPIC_RESOURCE: TOPIC_CONFIGS, BROKER_RESOURCE: BROKER_CONFIGS}

LIST_CONFIGS: dict[int, dict[str, str]] = {
    TOPIC_RESOURCE: {"cleanup.policy": "delete", "follower.replication.throttled.replicas": "",
                     "leader.replication.throttled.replicas": ""},
    BROKER_RESOURCE: {},
}
"""The configs of Kafka's type LIST (the ones APPEND and SUBTRACT change), by resource
type, with their defaults (what an APPEND to a key not set starts from)."""

OPERATIONS = ("SET", "DELETE", "APPEND", "SUBTRACT")
"""Kafka's AlterConfigOp types."""


def validate_config(resource_type: int, key: str, value: str | None) -> None:
    """Raise INVALID_CONFIG for an unknown name or a bad value (None: a deletion)."""
    known = _KNOWN.get(resource_type)
    if known is None:
        raise ApiError("INVALID_REQUEST", f"unsupported config resource type {resource_type}")
    check = known.get(key)
    kind = RESOURCE_NAMES[resource_type].lower()
    if check is None:
        raise ApiError("INVALID_CONFIG", f"Unknown {kind} config name: {key}")
    if value is not None and not check(value):
        raise ApiError("INVALID_CONFIG", f"Invalid value {value} for configuration {key}")


class ConfigChange(msgspec.Struct, frozen=True):
    """One change (Kafka's AlterConfigOp): SET a value, DELETE the key, or APPEND to or
    SUBTRACT from a LIST config the comma-separated items of ``value``."""

    key: str
    value: str | None
    op: str = "SET"


class IncrementalAlterConfigs(msgspec.Struct, frozen=True):
    """Set or delete config keys of one resource (a topic or a broker, "" = the default)."""

    resource_type: int
    resource_name: str
    changes: tuple[ConfigChange, ...]

    def describe(self) -> str:
        """E.g. ``IncrementalAlterConfigs(TOPIC:foo retention.ms=100)``."""
        kind = RESOURCE_NAMES.get(self.resource_type, str(self.resource_type))
        signs = {"SET": "=", "APPEND": "+=", "SUBTRACT": "-="}
        what = " ".join(f"-{c.key}" if c.op == "DELETE" else
                        f"{c.key}{signs.get(c.op, f' {c.op} ')}{c.value}" for c in self.changes)
        return f"IncrementalAlterConfigs({kind}:{self.resource_name} {what})"

    def generate(self, ctx: OperationContext) -> Generated:
        """Validate the resource, names and values; emit a ConfigRecord per key whose value
        changes (Kafka's ConfigurationControlManager).

        The resource must exist (Kafka's ConfigResourceExistenceChecker): a topic, or
        for a broker resource the cluster default (""), a registered broker or a
        controller of the quorum. A topic key left as it was (a SET of its value, a
        DELETE of a key not set, an APPEND of items already there) writes nothing and
        is not checked; a broker resource gets a record even then (KAFKA-14136: the
        brokers reload their config on it).
        """
        if self.resource_type == TOPIC_RESOURCE:
            if self.resource_name not in ctx.image.topics_by_name:
                raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                               f"Topic {self.resource_name} does not exist")
        elif self.resource_type == BROKER_RESOURCE and self.resource_name:
            if not self.resource_name.isdigit():
                raise ApiError("INVALID_REQUEST",
                               f"broker id must be a number, not {self.resource_name!r}")
            node = int(self.resource_name)
            if node not in ctx.image.brokers and node not in ctx.controller_ids:
                raise ApiError("BROKER_ID_NOT_REGISTERED", f"No node with id {node} found.")
        if not self.changes:
            raise ApiError("INVALID_REQUEST", "no config change given")
        if len({change.key for change in self.changes}) < len(self.changes):
            raise ApiError("INVALID_REQUEST", "Error due to duplicate config keys")
        current = ctx.image.configs.get((self.resource_type, self.resource_name))
        records = ctx.records()
        for change in self.changes:
            old = current.get(change.key) if current is not None else None
            value = self._new_value(change, old)
            if value == old and self.resource_type != BROKER_RESOURCE:
                continue
            validate_config(self.resource_type, change.key, value)
            records.append(ConfigRecord(self.resource_type, self.resource_name, change.key,
                                        value))
        return Generated(records, {"resource": f"{RESOURCE_NAMES.get(self.resource_type)}:"
                                               f"{self.resource_name}"})

    def _new_value(self, change: ConfigChange, old: str | None) -> str | None:
        """The key's value after ``change`` (None: not set), from its value ``old``."""
        if change.op not in OPERATIONS:
            raise ApiError("INVALID_REQUEST", f"unsupported config operation {change.op}")
        if change.op == "DELETE":
            return None
        if change.value is None:
            raise ApiError("INVALID_CONFIG", f"{change.op} {change.key} needs a value")
        if change.op == "SET":
            return change.value
        default = LIST_CONFIGS.get(self.resource_type, {}).get(change.key)
        if default is None:
            raise ApiError("INVALID_CONFIG", f"Can't {change.op} to key {change.key} because "
                                             f"its type is not LIST.")
        items = [item for item in (default if old is None else old).split(",") if item]
        given = change.value.split(",")
        while given and not given[-1]:  # Java's String.split drops trailing empty strings
            given.pop()
        for item in given:
            if change.op == "APPEND" and item not in items:
                items.append(item)
            elif change.op == "SUBTRACT" and item in items:
                items.remove(item)
        return ",".join(items)
