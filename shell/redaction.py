"""Which secrets the shell's ``/image`` tree hides: Kafka's ``MetadataNodeRedactionCriteria``.

Kafka has three criteria. ``STRICT`` hides SCRAM credentials, delegation tokens
and every config value (what Kafka's ``MetadataNode.stringify`` uses). ``NORMAL``
hides SCRAM credentials, delegation tokens and the configs its config schema
calls sensitive: a config of type PASSWORD, and any config the schema does not
know (a config of an unknown resource type included), since an unknown config
might be a secret. ``DISABLED`` hides nothing.

kraftsim's shell prints an image with ``NORMAL`` by default and with
``DISABLED`` under ``--show-secrets`` (Kafka's interactive shell always prints
with ``DISABLED``). Its config schema is the one its controller checks configs
against (:mod:`controller.operations.config_defs`): it holds no PASSWORD
config, so a config is hidden exactly when kraftsim does not know it, e.g. the
``listener.name.NAME.ssl.keystore.password`` of a real Kafka file. Kafka's
broker schema knows more configs than kraftsim's, so ``NORMAL`` here may hide a
config Kafka would print, never the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from controller.operations.config_defs import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigKey
from metadata.delta import BROKER_RESOURCE, TOPIC_RESOURCE

REDACTED = "[redacted]"
"""What a hidden secret prints as."""

CONFIG_SCHEMA: Mapping[int, Mapping[str, ConfigKey]] = {
    BROKER_RESOURCE: BROKER_CONFIGS,
    TOPIC_RESOURCE: TOPIC_CONFIGS,
}
"""The configs kraftsim knows, by config resource type id (Kafka's KafkaConfigSchema)."""


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
