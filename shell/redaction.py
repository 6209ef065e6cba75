"""Which secrets the shell's ``/image`` tree hides: Kafka's ``MetadataNodeRedactionCriteria``.

Kafka has three criteria. ``STRICT`` hides SCRAM credentials, delegation tokens
and every config value (what Kafka's ``MetadataNode.stringify`` uses). ``NORMAL``
hides SCRAM credentials, delegation tokens and the configs its config schema
calls sensitive: a config of type PASSWORD, and any config the schema does not
know (a config of an unknown resource type included), since an unknown config
might be a secret. ``DISABLED`` hides nothing.

kraftsim's shell prints an image with ``NORMAL`` by default and with
``DISABLED`` under ``--show-secrets`` (Kafka's interactive shell always prints
with ``DISABLED``). Its config schema is Kafka's (``KafkaRaftServer``'s
``KafkaConfigSchema``): for BROKER, every config of Kafka's broker ``ConfigDef``
with its type (:mod:`metadata.kafka_config_types`), so a broker config Kafka knows
prints (``log.flush.interval.ms``) and a PASSWORD one (``ssl.keystore.password``) or
an unknown one (a real file's ``listener.name.NAME.ssl.keystore.password``) is
hidden, as in Kafka. Kafka's broker ``ConfigDef`` does not hold the dynamic-only
broker quota configs (``leader.replication.throttled.rate`` and its kin), so they
are hidden too. For TOPIC the schema is the one kraftsim's controller checks
topic configs against (:mod:`controller.operations.config_defs`); it lacks only
Kafka's deprecated ``message.format.version``, which ``NORMAL`` here hides and
Kafka's would print.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from controller.operations.config_defs import TOPIC_CONFIGS, ConfigKey
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE
from metadata.kafka_config_types import BROKER_CONFIG_TYPES

REDACTED = "[redacted]"
"""What a hidden secret prints as."""

BROKER_SCHEMA: Mapping[str, ConfigKey] = {
    name: ConfigKey(kind) for name, kind in BROKER_CONFIG_TYPES.items()
}
"""Kafka's broker configs with their types (no validators: only the type matters here)."""

CONFIG_SCHEMA: Mapping[int, Mapping[str, ConfigKey]] = {
    BROKER_RESOURCE: BROKER_SCHEMA,
    TOPIC_RESOURCE: TOPIC_CONFIGS,
}
"""The configs the shell knows, by config resource type id (Kafka's KafkaConfigSchema)."""


def is_sensitive_config(resource_type: int, key: str) -> bool:
    """Kafka's ``KafkaConfigSchema.isSensitive``: true for a PASSWORD config and for a
    config (or resource type) the schema does not know."""
    known = CONFIG_SCHEMA.get(resource_type)
    if known is None:
        return True
    config = known.get(key)
    return config is None or config.type == "PASSWORD"


class RedactionCriteria(Enum):
    """Kafka's three redaction criteria (see the module)."""

    STRICT = "strict"
    NORMAL = "normal"
    DISABLED = "disabled"

    @classmethod
    def of(cls, redact: bool | RedactionCriteria) -> RedactionCriteria:
        """The criteria a session's ``redact`` flag stands for (True: NORMAL)."""
        if isinstance(redact, RedactionCriteria):
            return redact
        return cls.NORMAL if redact else cls.DISABLED

    @property
    def redacts_scram(self) -> bool:
        """Whether SCRAM salts, keys and iteration counts are hidden."""
        return self is not RedactionCriteria.DISABLED

    @property
    def redacts_delegation_tokens(self) -> bool:
        """Whether every field of a delegation token is hidden."""
        return self is not RedactionCriteria.DISABLED

    def redacts_config(self, resource_type: int, key: str) -> bool:
        """Whether the value of config ``key`` of a resource of ``resource_type`` is hidden."""
        if self is RedactionCriteria.STRICT:
            return True
        if self is RedactionCriteria.DISABLED:
            return False
        return is_sensitive_config(resource_type, key)
