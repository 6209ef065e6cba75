"""Kafka's ACL enums by code: ResourceType, PatternType, AclOperation, AclPermissionType.

Records (:class:`~metadata.schema.AccessControlEntryRecord`) and images
(:class:`~metadata.image.StandardAcl`) carry the codes; these tables name them, as
Kafka's ``fromCode`` does (a code Kafka does not know is ``UNKNOWN``).
"""

from __future__ import annotations

RESOURCE_TYPES = ("UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
                  "DELEGATION_TOKEN", "USER")
"""Kafka's ResourceType names by code."""
PATTERN_TYPES = ("UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED")
"""Kafka's PatternType names by code."""
ACL_OPERATIONS = ("UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
                  "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                  "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS")
"""Kafka's AclOperation names by code."""
ACL_PERMISSION_TYPES = ("UNKNOWN", "ANY", "DENY", "ALLOW")
"""Kafka's AclPermissionType names by code."""

UNKNOWN = 0
"""The UNKNOWN code of each of the four enums."""
ANY = 1
"""The ANY code of each of the four enums."""
MATCH = 2
"""PatternType.MATCH (a filter's pattern type: literal, wildcard and prefixed ACLs that
cover the name)."""
LITERAL = 3
"""PatternType.LITERAL."""
PREFIXED = 4
"""PatternType.PREFIXED."""
DENY = 2
"""AclPermissionType.DENY."""
ALLOW = 3
"""AclPermissionType.ALLOW."""
WILDCARD_RESOURCE = "*"
"""A literal ACL's resource name that covers every resource of its type
(Kafka's ResourcePattern.WILDCARD_RESOURCE)."""


def enum_name(names: tuple[str, ...], code: int) -> str:
    """The name of a Kafka enum code; UNKNOWN for a code Kafka does not know."""
    return names[code] if 0 <= code < len(names) else "UNKNOWN"
