"""The shell's ``/image/acls``, ``/image/scram``, ``/image/clientQuotas`` and
``/image/delegationToken``, laid out and printed as Kafka's metadata shell does::

    /image/acls/<id>                               one ACL (StandardAcl(...))
    /image/scram/SCRAM-SHA-256/<user>              a SCRAM credential
    /image/scram/SCRAM-SHA-512/<user>
    /image/clientQuotas/<entity>/<key>             a quota value, as Java prints a double
    /image/delegationToken/<token id>              a delegation token

Each directory is there even when empty, and ``scram`` always lists both
mechanisms, as in Kafka. An entity is named ``clientId(NAME)``, ``ip(NAME)``
and ``user(NAME)`` joined by ``_``, in that order, with ``\\``, ``(`` and ``)``
escaped by a backslash; a default entity (no name) has empty parentheses, the
form Kafka's own tests give it (Kafka's shell drops its part of the name
altogether, which leaves a lone default entity with an empty name). Entity
types Kafka does not know follow as ``TYPE(NAME)``.

SCRAM salts, keys and iteration counts and every field of a delegation token
print as ``[redacted]`` unless the session shows secrets (``kraftsim shell
--show-secrets``): the redaction Kafka's ``MetadataNodeRedactionCriteria``
applies when it prints an image (Kafka's interactive shell itself prints them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from metadata.acl_codes import (
    ACL_OPERATIONS,
    ACL_PERMISSION_TYPES,
    PATTERN_TYPES,
    RESOURCE_TYPES,
    enum_name,
)
from metadata.image import (
    DelegationTokenData,
    MetadataImage,
    QuotaEntity,
    ScramCredentialData,
    StandardAcl,
)
from shell.redaction import REDACTED
from shell.tree import Dir, File, Node, mapped_dir

SCRAM_MECHANISMS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
"""Kafka's SCRAM mechanisms: name -> the type records carry."""
QUOTA_ENTITY_TYPES = {"client-id": "clientId", "ip": "ip", "user": "user"}
"""The entity types Kafka's shell names, in the order it names them."""


def java_double_text(value: float) -> str:
    """``value`` as Java's ``Double.toString`` writes it (``1024.0``, ``1.048576E7``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(float(value))  # shortest digits, fixed notation, ".0" when whole
    sign, digits, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    power = len(text) - 1 + exponent
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


# ---------------------------------------------------------------------------------- ACLs


def acl_json(acl: StandardAcl) -> dict[str, Any]:
    """An ACL with Kafka's field names and enum names."""
    return {
        "resourceType": enum_name(RESOURCE_TYPES, acl.resource_type),
        "resourceName": acl.resource_name,
        "patternType": enum_name(PATTERN_TYPES, acl.pattern_type),
        "principal": acl.principal,
        "host": acl.host,
        "operation": enum_name(ACL_OPERATIONS, acl.operation),
        "permissionType": enum_name(ACL_PERMISSION_TYPES, acl.permission_type),
    }


def acl_text(acl: StandardAcl) -> str:
    """Kafka's StandardAcl text."""
    fields = ", ".join(f"{name}={value}" for name, value in acl_json(acl).items())
    return f"StandardAcl({fields})"


def acls_dir(image: MetadataImage) -> Dir:
    """``/image/acls``: one file per ACL, named by its id."""
    def child(acl_id: str) -> Node | None:
        acl = image.acls.get(acl_id)
        if acl is None:
            return None
        return File(lambda: acl_text(acl), lambda: {"id": acl_id, **acl_json(acl)})

    return mapped_dir(lambda: image.acls.keys(), child)


# ---------------------------------------------------------------------------------- SCRAM


def scram_json(data: ScramCredentialData, redact: bool) -> dict[str, Any]:
    """A SCRAM credential: salt and keys in hex, or every field redacted."""
    if redact:
        return dict.fromkeys(("salt", "storedKey", "serverKey", "iterations"), REDACTED)
    return {"salt": data.salt.hex(), "storedKey": data.stored_key.hex(),
            "serverKey": data.server_key.hex(), "iterations": data.iterations}


def scram_text(data: ScramCredentialData, redact: bool) -> str:
    """Kafka's ScramCredentialData text."""
    fields = ", ".join(f"{name}={value}" for name, value in scram_json(data, redact).items())
    return f"ScramCredentialData({fields})"


def scram_dir(image: MetadataImage, redact: bool) -> Dir:
    """``/image/scram``: both mechanisms, then the users that have a credential."""
    def mechanism(name: str) -> Node | None:
        kind = SCRAM_MECHANISMS.get(name)
        if kind is None:
            return None
        users: Mapping[str, ScramCredentialData] = image.scram.get(kind, {})

        def user(user_name: str) -> Node | None:
            data = users.get(user_name)
            if data is None:
                return None
            return File(lambda: scram_text(data, redact), lambda: scram_json(data, redact))

        return mapped_dir(lambda: users.keys(), user)

    return mapped_dir(lambda: SCRAM_MECHANISMS.keys(), mechanism)


# ---------------------------------------------------------------------------------- quotas


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def quota_entity_name(entity: QuotaEntity) -> str:
    """The directory name of a client quota entity (see the module)."""
    names = dict(entity)
    parts = [f"{label}({_escape(names[kind] or '')})"
             for kind, label in QUOTA_ENTITY_TYPES.items() if kind in names]
    parts += [f"{kind}({_escape(name or '')})" for kind, name in entity
              if kind not in QUOTA_ENTITY_TYPES]
    return "_".join(parts)


def decode_quota_entity_name(name: str) -> dict[str, str] | None:
    """The entity (type -> name) a ``/image/clientQuotas`` child name spells, read as
    Kafka's ClientQuotasImageNode reads one: ``clientId(...)``, ``ip(...)`` and
    ``user(...)`` parts in any order joined by ``_``, a backslash taking the next
    character as it is; None for anything else."""
    labels = {label: kind for kind, label in QUOTA_ENTITY_TYPES.items()}
    entity: dict[str, str] = {}
    index = 0
    while True:
        label = next((label for label in labels if name.startswith(label + "(", index)), None)
        if label is None:
            return None
        index += len(label) + 1
        value: list[str] = []
        while True:
            if index >= len(name):
                return None
            char = name[index]
            index += 1
            if char == "\\":
                if index >= len(name):
                    return None
                value.append(name[index])
                index += 1
            elif char == ")":
                break
            else:
                value.append(char)
        entity[labels[label]] = "".join(value)
        if index >= len(name):
            return entity
        if name[index] != "_":
            return None
        index += 1


def client_quotas_dir(image: MetadataImage) -> Dir:
    """``/image/clientQuotas``: one directory per entity, one file per quota key."""
    entities: dict[str, QuotaEntity] = {}
    for entity in sorted(image.client_quotas,
                         key=lambda e: tuple((k, n is not None, n or "") for k, n in e)):
        entities.setdefault(quota_entity_name(entity), entity)

    def child(name: str) -> Node | None:
        entity = entities.get(name)
        if entity is None:
            decoded = decode_quota_entity_name(name)
            if decoded is None:
                return None
            entity = entities.get(quota_entity_name(tuple(sorted(decoded.items()))))
        if entity is None:
            return None
        values = image.client_quotas[entity]

        def value(key: str) -> Node | None:
            number = values.get(key)
            if number is None:
                return None
            return File(lambda: java_double_text(number), lambda: number)

        return mapped_dir(lambda: values.keys(), value)

    return mapped_dir(lambda: entities.keys(), child)


# ---------------------------------------------------------------------------------- tokens


def token_json(token: DelegationTokenData, redact: bool) -> dict[str, Any]:
    """A delegation token with the names Kafka's shell prints, or every field redacted."""
    fields: dict[str, Any] = {
        "tokenId": token.token_id, "owner": token.owner, "tokenRequester": token.requester,
        "renewers": list(token.renewers), "issueTimestamp": token.issue_timestamp,
        "maxTimestamp": token.max_timestamp, "expiryTimestamp": token.expiration_timestamp,
    }
    return dict.fromkeys(fields, REDACTED) if redact else fields


def token_text(token: DelegationTokenData, redact: bool) -> str:
    """Kafka's DelegationTokenData text, its odd parentheses included."""
    f = token_json(token, redact)
    renewers = f["renewers"] if redact else " ".join(f["renewers"])
    return (f"DelegationTokenDatatokenId={f['tokenId']}(owner={f['owner']}"
            f"(tokenRequester={f['tokenRequester']}(renewers={renewers}, "
            f"issueTimestamp={f['issueTimestamp']}, maxTimestamp={f['maxTimestamp']}), "
            f"expiryTimestamp={f['expiryTimestamp']}")


def delegation_tokens_dir(image: MetadataImage, redact: bool) -> Dir:
    """``/image/delegationToken``: one file per token, named by its id."""
    def child(token_id: str) -> Node | None:
        token = image.delegation_tokens.get(token_id)
        if token is None:
            return None
        return File(lambda: token_text(token, redact), lambda: token_json(token, redact))

    return mapped_dir(lambda: image.delegation_tokens.keys(), child)

