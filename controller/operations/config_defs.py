"""The configs kraftsim knows and how Kafka checks their values.

Each config has Kafka's type and validator (its ``ConfigDef``): a value is
trimmed, parsed by its type (INT and LONG as Java integers of 32 and 64 bits,
DOUBLE, BOOLEAN in any case, STRING, LIST split at commas), then checked by the
validator. A refusal is INVALID_CONFIG with Kafka's ``ConfigException`` text,
``Invalid value V for configuration K: REASON``. A topic's whole config is then
checked as Kafka's ``LogConfig`` does: ``min.compaction.lag.ms`` may not exceed
``max.compaction.lag.ms``, ``remote.storage.enable`` may not be true (tiered
storage is off in the cluster, Kafka's default), and a topic whose remote storage was
on (a record replayed from a cluster that had it) may turn it off only with
``remote.log.delete.on.disable``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from controller.errors import ApiError
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.kafka_config_types import (
    BROKER_CONFIG_TYPES,
    DYNAMIC_BROKER_CONFIGS,
    LISTENER_SECURITY_CONFIGS,
)

Validator = Callable[[str, Any], None]
"""Checks a config's parsed value (name, value): raises INVALID_CONFIG if it is refused."""


class ConfigKey(NamedTuple):
    """One config's type (Kafka's ConfigDef.Type) and validator."""

    type: str
    validator: Validator | None = None


_JAVA_TRIMMED = "".join(map(chr, range(33)))  # Java's String.trim: every char <= ' '
_INTEGER = re.compile(r"[+-]?\d+")
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_BITS = {"INT": 32, "LONG": 64}
LONG_MAX = 2**63 - 1


def java_double(value: float) -> str:
    """``value`` as Java's Double.toString prints it (1.01, 2.0, 1.0E10, NaN)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    shown = "".join(map(str, digits))
    power = int(exponent) + len(shown) - 1
    shown = shown.rstrip("0") or "0"
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{power}"


def _shown(value: Any) -> str:
    """A parsed value as Kafka's message prints it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, list):
        return f"[{', '.join(value)}]"
    return str(value)


def _refused(key: str, value: Any, reason: str) -> ApiError:
    return ApiError("INVALID_CONFIG", f"Invalid value {_shown(value)} for configuration {key}: "
                                      f"{reason}")


def at_least(minimum: int) -> Validator:
    """Kafka's Range.atLeast."""
    def check(key: str, value: Any) -> None:
        if value < minimum:
            raise _refused(key, value, f"Value must be at least {minimum}")
    return check


def between(low: int, high: int) -> Validator:
    """Kafka's Range.between (a NaN passes, as in Java)."""
    def check(key: str, value: Any) -> None:
        if value < low:
            raise _refused(key, value, f"Value must be at least {low}")
        if value > high:
            raise _refused(key, value, f"Value must be no more than {high}")
    return check


def one_of(*options: str) -> Validator:
    """Kafka's ValidString.in."""
    def check(key: str, value: Any) -> None:
        if value not in options:
            raise _refused(key, value, f"String must be one of: {', '.join(options)}")
    return check


def each(validator: Validator) -> Validator:
    """Kafka's ValidList: ``validator`` on every item of a list."""
    def check(key: str, value: list[str]) -> None:
        for item in value:
            validator(key, item)
    return check


def _gzip_level(key: str, value: int) -> None:
    if value > 9 or (value < 1 and value != -1):
        raise _refused(key, value, "Value must be between 1 and 9 or equal to -1")


_REPLICA = re.compile(r"([0-9]+:[0-9]+)?")


def _throttled_replicas(key: str, value: list[str]) -> None:
    """Kafka's ThrottledReplicaListValidator: ``*`` or PARTITION:BROKER pairs."""
    items = [item.strip(_JAVA_TRIMMED) for item in value]
    if not all(_REPLICA.fullmatch(item) for item in items) and "".join(items) != "*":
        raise _refused(key, value, f"{key} must be the literal '*' or a list of replicas in "
                                   f"the following format: [partitionId]:[brokerId],"
                                   f"[partitionId]:[brokerId],...")


_COMPRESSION = one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
_CLEANUP_POLICIES = each(one_of("compact", "delete"))
_LEADER_THROTTLED = "leader.replication.throttled.replicas"
_FOLLOWER_THROTTLED = "follower.replication.throttled.replicas"

TOPIC_CONFIGS: dict[str, ConfigKey] = {
    "segment.bytes": ConfigKey("INT", at_least(14)),
    "segment.ms": ConfigKey("LONG", at_least(1)),
    "segment.jitter.ms": ConfigKey("LONG", at_least(0)),
    "segment.index.bytes": ConfigKey("INT", at_least(4)),
    "flush.messages": ConfigKey("LONG", at_least(1)),
    "flush.ms": ConfigKey("LONG", at_least(0)),
    "retention.bytes": ConfigKey("LONG"),
    "retention.ms": ConfigKey("LONG", at_least(-1)),
    "max.message.bytes": ConfigKey("INT", at_least(0)),
    "index.interval.bytes": ConfigKey("INT", at_least(0)),
    "delete.retention.ms": ConfigKey("LONG", at_least(0)),
    "min.compaction.lag.ms": ConfigKey("LONG", at_least(0)),
    "max.compaction.lag.ms": ConfigKey("LONG", at_least(1)),
    "file.delete.delay.ms": ConfigKey("LONG", at_least(0)),
    "min.cleanable.dirty.ratio": ConfigKey("DOUBLE", between(0, 1)),
    "cleanup.policy": ConfigKey("LIST", _CLEANUP_POLICIES),
    "unclean.leader.election.enable": ConfigKey("BOOLEAN"),
    "min.insync.replicas": ConfigKey("INT", at_least(1)),
    "compression.type": ConfigKey("STRING", _COMPRESSION),
    "compression.gzip.level": ConfigKey("INT", _gzip_level),
    "compression.lz4.level": ConfigKey("INT", between(1, 17)),
    "compression.zstd.level": ConfigKey("INT", between(-131072, 22)),
    "preallocate": ConfigKey("BOOLEAN"),
    "message.timestamp.type": ConfigKey("STRING", one_of("CreateTime", "LogAppendTime")),
    "message.timestamp.difference.max.ms": ConfigKey("LONG", at_least(0)),
    "message.timestamp.before.max.ms": ConfigKey("LONG", at_least(0)),
    "message.timestamp.after.max.ms": ConfigKey("LONG", at_least(0)),
    _LEADER_THROTTLED: ConfigKey("LIST", _throttled_replicas),
    _FOLLOWER_THROTTLED: ConfigKey("LIST", _throttled_replicas),
    "message.downconversion.enable": ConfigKey("BOOLEAN"),
    "remote.storage.enable": ConfigKey("BOOLEAN"),
    "local.retention.ms": ConfigKey("LONG", at_least(-2)),
    "local.retention.bytes": ConfigKey("LONG", at_least(-2)),
    "remote.log.copy.disable": ConfigKey("BOOLEAN"),
    "remote.log.delete.on.disable": ConfigKey("BOOLEAN"),
}
"""Kafka's topic configs (LogConfig), in Kafka's order (the order values are checked in),
less the deprecated ``message.format.version``."""

BROKER_CONFIGS: dict[str, ConfigKey] = {
    "background.threads": ConfigKey("INT", at_least(1)),
    "compression.type": TOPIC_CONFIGS["compression.type"],
    "compression.gzip.level": TOPIC_CONFIGS["compression.gzip.level"],
    "compression.lz4.level": TOPIC_CONFIGS["compression.lz4.level"],
    "compression.zstd.level": TOPIC_CONFIGS["compression.zstd.level"],
    "log.cleaner.threads": ConfigKey("INT", at_least(0)),
    "log.retention.bytes": ConfigKey("LONG"),
    "log.retention.ms": ConfigKey("LONG"),
    "log.roll.ms": ConfigKey("LONG"),
    "log.segment.bytes": ConfigKey("INT", at_least(14)),
    "max.connections": ConfigKey("INT", at_least(0)),
    "max.connections.per.ip": ConfigKey("INT", at_least(0)),
    "message.max.bytes": ConfigKey("INT", at_least(0)),
    "min.insync.replicas": ConfigKey("INT", at_least(1)),
    "num.io.threads": ConfigKey("INT", at_least(1)),
    "num.network.threads": ConfigKey("INT", at_least(1)),
    "num.replica.fetchers": ConfigKey("INT"),
    "producer.id.expiration.ms": ConfigKey("INT", at_least(1)),
    "transaction.partition.verification.enable": ConfigKey("BOOLEAN"),
    "unclean.leader.election.enable": ConfigKey("BOOLEAN"),
}
"""Dynamic broker configs kraftsim knows, with KafkaConfig's types and validators."""

LIST_DEFAULTS: dict[int, dict[str, str]] = {
    TOPIC_RESOURCE: {"cleanup.policy": "delete", _FOLLOWER_THROTTLED: "",
                     _LEADER_THROTTLED: ""},
    BROKER_RESOURCE: {},
}
"""The configs of type LIST (the ones APPEND and SUBTRACT change), by resource type, with
their defaults (what an APPEND to a key not set starts from)."""


def is_splittable(resource_type: int, key: str) -> bool:
    """Kafka's ``KafkaConfigSchema.isSplittable``: ``key`` is of type LIST in the resource
    type's schema, so that APPEND and SUBTRACT may change it. For a broker that is
    Kafka's whole broker schema (:mod:`metadata.kafka_config_types`), though kraftsim
    models none of the dynamic LIST broker configs (``log.cleanup.policy``,
    ``sasl.enabled.mechanisms``, ...): a change to one is refused as an unknown
    broker config, not as a config of another type."""
    if resource_type == BROKER_RESOURCE:
        return BROKER_CONFIG_TYPES.get(key) == "LIST"
    return key in LIST_DEFAULTS.get(resource_type, {})

_KNOWN = {TOPIC_RESOURCE: TOPIC_CONFIGS, BROKER_RESOURCE: BROKER_CONFIGS}
_KIND = {TOPIC_RESOURCE: "topic", BROKER_RESOURCE: "broker"}


def parse_value(key: str, config: ConfigKey, value: str) -> Any:
    """``value`` parsed by the config's type, as Kafka's ConfigDef.parseType does."""
    trimmed = value.strip(_JAVA_TRIMMED)
    kind = config.type
    if kind == "BOOLEAN":
        if trimmed.lower() not in ("true", "false"):
            raise _refused(key, value, "Expected value to be either true or false")
        return trimmed.lower() == "true"
    if kind in _BITS:
        bound = 2 ** (_BITS[kind] - 1)
        if not _INTEGER.fullmatch(trimmed) or not -bound <= int(trimmed) < bound:
            raise _refused(key, value, f"Not a number of type {kind}")
        return int(trimmed)
    if kind == "DOUBLE":
        if not _DOUBLE.fullmatch(trimmed):
            raise _refused(key, value, "Not a number of type DOUBLE")
        return float(trimmed.rstrip("fFdD").replace("Infinity", "inf"))
    if kind == "LIST":
        return _LIST_SEPARATOR.split(trimmed) if trimmed else []
    return trimmed


def check_value(key: str, config: ConfigKey, value: str) -> None:
    """Parse ``value`` by the config's type and run its validator on it."""
    parsed = parse_value(key, config, value)
    if config.validator is not None:
        config.validator(key, parsed)


def validate_config(resource_type: int, key: str, value: str | None) -> None:
    """Raise INVALID_CONFIG for an unknown name or a bad value (None: a deletion)."""
    known = _KNOWN.get(resource_type)
    if known is None:
        raise ApiError("INVALID_REQUEST", f"unsupported config resource type {resource_type}")
    config = known.get(key)
    if config is None:
        raise ApiError("INVALID_CONFIG", f"Unknown {_KIND[resource_type]} config name: {key}")
    if value is not None:
        check_value(key, config, value)


def check_broker_configs_dynamic(keys: list[str]) -> None:
    """Refuse (INVALID_REQUEST) a change to any of ``keys`` that Kafka's broker config
    schema holds as read-only (not in
    :data:`~metadata.kafka_config_types.DYNAMIC_BROKER_CONFIGS`), naming them all in the
    order given, then any SSL store config given without a listener prefix
    (:data:`~metadata.kafka_config_types.LISTENER_SECURITY_CONFIGS`), as Kafka's
    DynamicBrokerConfig does before it checks any value."""
    read_only = [key for key in keys
                 if key in BROKER_CONFIG_TYPES and key not in DYNAMIC_BROKER_CONFIGS]
    if read_only:
        raise ApiError("INVALID_REQUEST", f"Cannot update these configs dynamically: "
                                          f"Set({', '.join(read_only)})")
    unprefixed = [key for key in keys if key in LISTENER_SECURITY_CONFIGS]
    if unprefixed:
        raise ApiError("INVALID_REQUEST", f"These security configs can be dynamically updated "
                                          f"only per-listener using the listener prefix: "
                                          f"Set({', '.join(unprefixed)})")


def validate_broker_config(key: str, value: str | None) -> None:
    """:func:`validate_config` on a broker config (None: a deletion), a refused value
    answered INVALID_REQUEST with the same text: Kafka's broker checks a dynamic
    broker config by building its whole config, and turns the ConfigException into an
    InvalidRequestException (KAFKA-13609); then :data:`BROKER_REQUIREMENTS`. An unknown
    name stays INVALID_CONFIG (kraftsim's own refusal: Kafka stores a broker config it
    does not know, and takes dynamic configs kraftsim does not model)."""
    config = BROKER_CONFIGS.get(key)
    if config is None or value is None:
        validate_config(BROKER_RESOURCE, key, value)
        return
    try:
        check_value(key, config, value)
    except ApiError as refused:
        raise ApiError("INVALID_REQUEST", refused.message) from None
    requirement = BROKER_REQUIREMENTS.get(key)
    if requirement is not None and not requirement[0](parse_value(key, config, value)):
        raise ApiError("INVALID_REQUEST", f"requirement failed: {requirement[1]}")


BROKER_REQUIREMENTS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "log.roll.ms": (lambda ms: ms >= 1, "log.roll.ms must be greater than or equal to 1"),
    # Kafka reads any negative retention as -1 (unlimited)
    "log.retention.ms": (lambda ms: ms != 0, "log.retention.ms must be unlimited (-1) or, "
                                             "greater than or equal to 1"),
    # max.connections.per.ip.overrides is not modelled: never set
    "max.connections.per.ip": (lambda n: n != 0, "max.connections.per.ip can be set to zero "
                                                 "only if max.connections.per.ip.overrides "
                                                 "property is set."),
}
"""The checks Kafka's whole broker config makes (KafkaConfig.validateValues) on the
dynamic broker configs kraftsim knows, beyond their validators: a test on the parsed
value and what Kafka says when it fails (after "requirement failed: ")."""


def validate_topic_config(configs: Mapping[str, str], existing: Mapping[str, str] | None = None
                          ) -> None:
    """Check a topic's whole config as Kafka's LogConfig.validate does: every name, then
    every value in Kafka's order, then the checks across values; ``existing`` is the
    config it replaces (a topic's remote storage may be turned off only with
    ``remote.log.delete.on.disable``)."""
    for key in configs:
        validate_config(TOPIC_RESOURCE, key, None)
    for key, config in TOPIC_CONFIGS.items():
        if key in configs:
            check_value(key, config, configs[key])
    least = _long(configs, "min.compaction.lag.ms", 0)
    most = _long(configs, "max.compaction.lag.ms", LONG_MAX)
    if least > most:
        raise ApiError("INVALID_CONFIG", f"conflict topic config setting min.compaction.lag.ms "
                                         f"({least}) > max.compaction.lag.ms ({most})")
    if _boolean(configs, "remote.storage.enable"):
        raise ApiError("INVALID_CONFIG", "Tiered Storage functionality is disabled in the "
                                         "broker. Topic cannot be configured with remote log "
                                         "storage.")
    # Kafka reads the value it replaces with Boolean.parseBoolean: not trimmed
    was_remote = (existing or {}).get("remote.storage.enable", "false").lower() == "true"
    if was_remote and not _boolean(configs, "remote.log.delete.on.disable"):
        raise ApiError("INVALID_CONFIG", "It is invalid to disable remote storage without "
                       "deleting remote data. If you want to keep the remote data and turn to "
                       "read only, please set `remote.storage.enable=true,"
                       "remote.log.copy.disable=true`. If you want to disable remote storage "
                       "and delete all remote data, please set `remote.storage.enable=false,"
                       "remote.log.delete.on.disable=true`.")


def _boolean(configs: Mapping[str, str], key: str) -> bool:
    """A BOOLEAN topic config's value (false when not set)."""
    return key in configs and bool(parse_value(key, TOPIC_CONFIGS[key], configs[key]))


def _long(configs: Mapping[str, str], key: str, default: int) -> int:
    value = configs.get(key)
    return default if value is None else int(parse_value(key, TOPIC_CONFIGS[key], value))
