"""AlterClientQuotas: set and remove client quota values (Kafka's ClientQuotaControlManager).

An entity is one name for each of up to three entity types, ``user``, ``client-id`` and
``ip`` (a None name: the type's default entity). ``user`` and ``client-id`` (alone or
together) take the keys ``producer_byte_rate`` and ``consumer_byte_rate`` (LONG),
``request_percentage`` and ``controller_mutation_rate`` (DOUBLE); ``ip`` alone takes
``connection_creation_rate`` (INT). A value above 0 sets a key; None removes it. Each
entity gets its own result, in Kafka's words; the records of the entities that pass are
written together.

Kafka checks an ``ip`` entity's name with ``InetAddress.getByName``, which resolves host
names through DNS; a deterministic simulation has no DNS, so here a name is valid when it
is an IPv4 or IPv6 literal (an IPv6 one bare or in brackets) or ``localhost``.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from metadata.schema import ClientQuotaRecord, EntityData, MetadataRecord

USER = "user"
"""Kafka's ClientQuotaEntity.USER."""
CLIENT_ID = "client-id"
"""Kafka's ClientQuotaEntity.CLIENT_ID."""
IP = "ip"
"""Kafka's ClientQuotaEntity.IP."""

USER_AND_CLIENT_QUOTA_KEYS: dict[str, str] = {
    "producer_byte_rate": "LONG",
    "consumer_byte_rate": "LONG",
    "request_percentage": "DOUBLE",
    "controller_mutation_rate": "DOUBLE",
}
"""The quota keys of a user or client-id entity, with their types (Kafka's QuotaConfig)."""
IP_QUOTA_KEYS: dict[str, str] = {"connection_creation_rate": "INT"}
"""The quota keys of an ip entity, with their types."""

_LIMITS = {"SHORT": (2**15 - 1, "a SHORT"), "INT": (2**31 - 1, "an INT"),
           "LONG": (2**63 - 1, "a LONG")}


class QuotaAlteration(msgspec.Struct, frozen=True):
    """One entity's changes (Kafka's ClientQuotaAlteration): ``entity`` is its (type, name)
    pairs, ``ops`` its (key, value) pairs, a None value removing the key."""

    entity: tuple[tuple[str, str | None], ...]
    ops: tuple[tuple[str, float | None], ...]


def entity_text(entity: tuple[tuple[str, str | None], ...]) -> str:
    """An entity as Kafka's ClientQuotaEntity.toString prints it (pairs in request order)."""
    inner = ", ".join(f"{kind}={'null' if name is None else name}" for kind, name in entity)
    return f"ClientQuotaEntity(entries={{{inner}}})"


def valid_ip_entity(name: str | None) -> bool:
    """Kafka's isValidIpEntity, without DNS: the default entity, an IP literal or
    ``localhost``. As Java's ``InetAddress.getByName``, a name in brackets must be a whole
    ``[...]`` around an IPv6 literal (``[::1]``; not ``[::1``, ``[]`` or ``[127.0.0.1]``)."""
    if name is None or name == "localhost":
        return True
    try:
        if name.startswith("["):
            if len(name) <= 2 or not name.endswith("]"):
                return False
            ipaddress.IPv6Address(name[1:-1])
        else:
            ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _check_entity(entity: tuple[tuple[str, str | None], ...]) -> dict[str, str | None]:
    """Kafka's validateEntity then configKeysForEntityType's combination checks: the
    entity by type, or ApiError (INVALID_REQUEST)."""
    if not entity:
        raise ApiError("INVALID_REQUEST", "Invalid empty client quota entity")
    checked: dict[str, str | None] = {}
    for kind, name in entity:
        if kind in checked:
            raise ApiError("INVALID_REQUEST",
                           f"Invalid client quota entity, duplicate entity entry {kind}")
        if kind not in (USER, CLIENT_ID, IP):
            raise ApiError("INVALID_REQUEST", f"Unhandled client quota entity type: {kind}")
        checked[kind] = name
        if name is not None and not name:
            raise ApiError("INVALID_REQUEST", f"Empty {kind} not supported")
    return checked


def quota_keys(entity: dict[str, str | None]) -> dict[str, str]:
    """The quota keys (and types) an entity of these types takes (Kafka's
    configKeysForEntityType); raises INVALID_REQUEST for a combination it refuses."""
    if IP in entity:
        if USER in entity or CLIENT_ID in entity:
            # (Kafka's message, missing space included)
            raise ApiError("INVALID_REQUEST", "Invalid quota entity combination, IP entity "
                                              "shouldnot be combined with User or ClientId")
        if not valid_ip_entity(entity[IP]):
            raise ApiError("INVALID_REQUEST",
                           f"{entity[IP]} is not a valid IP or resolvable host.")
        return IP_QUOTA_KEYS
    if USER in entity or CLIENT_ID in entity:
        return USER_AND_CLIENT_QUOTA_KEYS
    raise ApiError("INVALID_REQUEST", "Invalid empty client quota entity")


def check_quota_value(keys: dict[str, str], key: str, value: float) -> None:
    """Kafka's validateQuotaKeyValue: a key the entity takes, a value above 0 that fits its
    type, whole for an integral type (within 1e-6); raises INVALID_REQUEST."""
    kind = keys.get(key)
    if kind is None:
        raise ApiError("INVALID_REQUEST", f"Invalid configuration key {key}")
    if value <= 0.0:
        raise ApiError("INVALID_REQUEST", f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return
    limit, name = _LIMITS[kind]
    if value > float(limit):  # Java compares in double: Long.MAX_VALUE reads as 2**63
        raise ApiError("INVALID_REQUEST", f"Proposed value for {key} is too large for {name}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        raise ApiError("INVALID_REQUEST", f"{key} cannot be a fractional value.")


class AlterClientQuotas(msgspec.Struct, frozen=True):
    """Alter the quotas of client entities; ``validate_only`` checks and answers without
    writing (Kafka's validateOnly)."""

    alterations: tuple[QuotaAlteration, ...]
    validate_only: bool = False

    def describe(self) -> str:
        """E.g. ``AlterClientQuotas(user=bob consumer_byte_rate=100.0)``."""
        parts = []
        for alteration in self.alterations:
            who = ",".join(f"{k}={'<default>' if n is None else n}"
                           for k, n in alteration.entity)
            what = " ".join(f"-{k}" if v is None else f"{k}={v}" for k, v in alteration.ops)
            parts.append(f"{who} {what}".strip())
        return f"AlterClientQuotas({'; '.join(parts)})"

    def early_result(self) -> Generated | None:
        """No alterations: the answer at once, without a write."""
        return Generated([], {"entries": []}) if not self.alterations else None

    def generate(self, ctx: OperationContext) -> Generated:
        """A ClientQuotaRecord per key whose value changes (a removal only of a key set),
        for each entity that passes Kafka's checks, in its order: a key given twice for an
        entity, or an entity given twice, is INVALID_REQUEST (the entity's result then
        says it was ignored as a duplicate, as Kafka's does); then the entity's types and
        names, the combination of types, and each value set (a removal is not checked).
        The response has each entity's result; when none passes (and nothing is written)
        the operation fails with the first one's error. An entity given again after it
        passed keeps its records and answers the duplicate error, as Kafka's does."""
        records = ctx.records()
        # by the entity (its pairs in type order: the same map whatever the order given)
        results: dict[tuple[tuple[str, str | None], ...],
                      tuple[tuple[tuple[str, str | None], ...], ApiError | None]] = {}
        for alteration in self.alterations:
            entity = alteration.entity
            same = tuple(sorted(entity, key=lambda part: part[0]))
            ops: dict[str, float | None] = {}
            for key, value in alteration.ops:
                if key in ops:
                    results[same] = (entity, ApiError(
                        "INVALID_REQUEST", f"Duplicate quota key {key} not updating quota for "
                                           f"this entity {entity_text(entity)}"))
                else:
                    ops[key] = value
            if same in results:
                results[same] = (results[same][0], ApiError(
                    "INVALID_REQUEST", f"Ignoring duplicate entity {entity_text(entity)}"))
                continue
            start = len(records)
            try:
                self._alter(ctx, entity, ops, records)
            except ApiError as error:
                del records[start:]
                results[same] = (entity, error)
                continue
            results[same] = (entity, None)
        answers = [{"entity": dict(entity)} if error is None else
                   {"entity": dict(entity), "errorCode": error.code,
                    "errorMessage": error.message} for entity, error in results.values()]
        failures = [error for _, error in results.values() if error is not None]
        if failures and len(failures) == len(results) and not records:
            raise failures[0]
        return Generated([] if self.validate_only else records, {"entries": answers})

    @staticmethod
    def _alter(ctx: OperationContext, entity: tuple[tuple[str, str | None], ...],
               ops: dict[str, float | None], records: list[MetadataRecord]) -> None:
        """Check one entity's changes and append its records (ApiError: none)."""
        checked = _check_entity(entity)
        keys = quota_keys(checked)
        parts = tuple(EntityData(kind, name) for kind, name in checked.items())
        current: Mapping[str, float] = ctx.image.client_quotas.get(
            tuple(sorted(checked.items(), key=lambda part: part[0]))) or {}
        for key, value in ops.items():
            if value is None:
                if key in current:
                    records.append(ClientQuotaRecord(parts, key, 0.0, remove=True))
                continue
            check_quota_value(keys, key, value)
            if current.get(key) != value:
                records.append(ClientQuotaRecord(parts, key, float(value)))
