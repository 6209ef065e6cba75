"""IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on a topic's or a broker's configs
(the configs themselves: :mod:`controller.operations.config_defs`)."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.config_defs import (
    LIST_DEFAULTS,
    check_broker_configs_dynamic,
    is_splittable,
    validate_broker_config,
    validate_topic_config,
)
from controller.operations.elr import MIN_INSYNC_REPLICAS, elr_enabled
from controller.operations.topics import validate_topic_name
from metadata.delta import BROKER_RESOURCE, CONFIG_RESOURCE_TYPES, TOPIC_RESOURCE
from metadata.java_int import parse_java_int
from metadata.schema import ClearElrRecord, ConfigRecord, MetadataRecord

RESOURCE_TYPES: dict[str, int] = {"TOPIC": TOPIC_RESOURCE, "BROKER": BROKER_RESOURCE}
"""Config resource types by Kafka's name (ConfigResource.Type)."""
RESOURCE_NAMES: dict[int, str] = {v: k for k, v in RESOURCE_TYPES.items()}
"""Kafka's name of each supported config resource type id."""


OPERATIONS = ("SET", "DELETE", "APPEND", "SUBTRACT")
"""Kafka's AlterConfigOp types."""


def _check_min_isr_with_elr(resource_name: str, value: str | None) -> None:
    """With eligible leader replicas on, no single broker's min.insync.replicas may change
    and the cluster's may not be removed (Kafka's ConfigurationControlManager, in its
    words): the ELR follows one min ISR per topic. Raises INVALID_CONFIG."""
    if resource_name:
        raise ApiError("INVALID_CONFIG", f"Broker-level {MIN_INSYNC_REPLICAS} cannot be "
                                         f"altered while ELR is enabled.")
    if value is None:
        raise ApiError("INVALID_CONFIG", f"Cluster-level {MIN_INSYNC_REPLICAS} cannot be "
                                         f"removed while ELR is enabled.")


def clear_elr_records(records: list[MetadataRecord]) -> list[MetadataRecord]:
    """The ClearElrRecords that follow ``records`` with eligible leader replicas on (Kafka
    4.1's createClearElrRecordsAsNeeded): one per ConfigRecord of min.insync.replicas, for
    its topic, or for every topic (an empty name) when it is a broker resource's. A min
    ISR that changes makes the ELRs built against the old one meaningless."""
    out: list[MetadataRecord] = []
    for record in records:
        if isinstance(record, ConfigRecord) and record.name == MIN_INSYNC_REPLICAS:
            out.append(ClearElrRecord(record.resource_name
                                      if record.resource_type == TOPIC_RESOURCE else ""))
    return out


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
    validate_only: bool = False
    """Check and answer as usual but write nothing (Kafka's validateOnly)."""

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

        In Kafka's order: the resource's type and name (its
        ControllerConfigurationValidator: a topic's name by the topic name rules, not
        "", a broker's a Java int, not negative), the changes and values, then that the
        resource exists (its ConfigResourceExistenceChecker): a topic, or for a broker
        resource the cluster default (""), a registered broker or a controller of the
        quorum. A topic key left as it was (a SET of its value, a
        DELETE of a key not set, an APPEND of items already there) writes nothing; a
        broker resource gets a record even then (KAFKA-14136: the brokers reload their
        config on it). A broker's changed values are checked one by one; a topic's
        config is checked whole as it would be after the change
        (:func:`~controller.operations.config_defs.validate_topic_config`). A change
        that is not a DELETE and has no value is refused first (INVALID_REQUEST, as Kafka's
        ConfigAdminManager); on a broker resource, a change to a config Kafka holds
        read-only is refused before any value is checked; a refused broker value is
        INVALID_REQUEST too (:func:`~controller.operations.config_defs.validate_broker_config`).
        With eligible leader replicas on, a broker's own min.insync.replicas is refused and
        the cluster's may not be deleted (INVALID_CONFIG), and each min.insync.replicas
        record is followed by a ClearElrRecord (:func:`clear_elr_records`).
        """
        if not self.changes:
            raise ApiError("INVALID_REQUEST", "no config change given")
        if len({change.key for change in self.changes}) < len(self.changes):
            raise ApiError("INVALID_REQUEST", "Error due to duplicate config keys")
        nulls = [c.key for c in self.changes if c.op != "DELETE" and c.value is None]
        if nulls:  # Kafka's ConfigAdminManager.preprocess, before the resource's type
            raise ApiError("INVALID_REQUEST", f"Null value not supported for : {', '.join(nulls)}")
        node = self._check_resource()
        if self.resource_type == BROKER_RESOURCE:
            check_broker_configs_dynamic([c.key for c in self.changes if c.op != "DELETE"])
        current: Mapping[str, str] = ctx.image.configs.get(
            (self.resource_type, self.resource_name)) or {}
        topic = self.resource_type == TOPIC_RESOURCE
        after = dict(current)  # the config as it will be
        elr_on = elr_enabled(ctx.image)
        records = ctx.records()
        for change in self.changes:
            old = current.get(change.key)
            value = self._new_value(change, old)
            if value == old and topic:
                continue
            if not topic:
                validate_broker_config(change.key, value)
            if change.key == MIN_INSYNC_REPLICAS and not topic and elr_on:
                _check_min_isr_with_elr(self.resource_name, value)
            if value is None:
                after.pop(change.key, None)
            else:
                after[change.key] = value
            records.append(ConfigRecord(self.resource_type, self.resource_name, change.key,
                                        value))
        if topic:  # checked whole, as Kafka's LogConfig.validate does
            validate_topic_config(after, current)
        # then, as Kafka's ConfigResourceExistenceChecker, that the resource exists
        if topic and self.resource_name not in ctx.image.topics_by_name:
            raise ApiError("UNKNOWN_TOPIC_OR_PARTITION",
                           f"The topic '{self.resource_name}' does not exist.")
        if node is not None and node not in ctx.image.brokers \
                and node not in ctx.controller_ids:
            raise ApiError("BROKER_ID_NOT_REGISTERED", f"No node with id {node} found.")
        if elr_on:
            records.extend(clear_elr_records(records))
        return Generated([] if self.validate_only else records,
                         {"resource": f"{RESOURCE_NAMES.get(self.resource_type)}:"
                                      f"{self.resource_name}"})

    def _check_resource(self) -> int | None:
        """Kafka's ControllerConfigurationValidator on the resource: its type, then its
        name (a topic's name by Kafka's rules, a broker's as a Java int, not negative);
        the broker's node id (None: the topic or the cluster default)."""
        if self.resource_type == TOPIC_RESOURCE:
            if not self.resource_name:
                raise ApiError("INVALID_REQUEST", "Default topic resources are not allowed.")
            validate_topic_name(self.resource_name)
            return None
        if self.resource_type != BROKER_RESOURCE:
            kind = CONFIG_RESOURCE_TYPES.get(self.resource_type, "UNKNOWN")
            raise ApiError("INVALID_REQUEST", f"Unknown resource type {kind}")
        if not self.resource_name:
            return None
        node = parse_java_int(self.resource_name)
        if node is None:
            raise ApiError("INVALID_REQUEST", "Unable to parse broker name as a base 10 number.")
        if node < 0:
            raise ApiError("INVALID_REQUEST", "Invalid negative broker ID.")
        return node

    def _new_value(self, change: ConfigChange, old: str | None) -> str | None:
        """The key's value after ``change`` (None: not set), from its value ``old``."""
        if change.op not in OPERATIONS:
            raise ApiError("INVALID_REQUEST", f"unsupported config operation {change.op}")
        if change.op == "DELETE":
            return None
        if change.value is None:  # refused by generate before
            raise ApiError("INVALID_REQUEST", f"Null value not supported for : {change.key}")
        if change.op == "SET":
            return change.value
        if not is_splittable(self.resource_type, change.key):
            raise ApiError("INVALID_CONFIG", f"Can't {change.op} to key {change.key} because "
                                             f"its type is not LIST.")
        default = LIST_DEFAULTS.get(self.resource_type, {}).get(change.key, "")
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
