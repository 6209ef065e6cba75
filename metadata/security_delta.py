"""ACLs, SCRAM credentials, client quotas and delegation tokens: what a delta changes.

Kafka keeps one delta per image part (``AclsDelta``, ``ScramDelta``,
``ClientQuotasDelta``, ``DelegationTokenDelta``); kraftsim keeps the four in
one :class:`SecurityDelta`, which a :class:`~metadata.delta.MetadataDelta`
makes only when the first of these records arrives: they are rare, and a delta
of partitions pays nothing for them.

Replay follows Kafka's images: an AccessControlEntryRecord sets the ACL of its
id; removing an ACL that does not exist cannot apply (:class:`ReplayError`);
removing a SCRAM credential or a delegation token that does not exist changes
nothing; a ClientQuotaRecord sets one key of an entity, or with ``remove``
deletes it, and an entity left without keys goes, as does a SCRAM mechanism
left without users.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from metadata.errors import ReplayError
from metadata.image import (
    DelegationTokenData,
    MetadataImage,
    QuotaEntity,
    ScramCredentialData,
    SecurityImage,
    StandardAcl,
    apply_entries,
    apply_nested_entries,
)
from metadata.schema import (
    AccessControlEntryRecord,
    ClientQuotaRecord,
    DelegationTokenRecord,
    EntityData,
    MetadataRecord,
    RemoveAccessControlEntryRecord,
    RemoveDelegationTokenRecord,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
)


def quota_entity(parts: Iterable[EntityData]) -> QuotaEntity:
    """The entity a ClientQuotaRecord names: one name per type (the last wins), by type."""
    names = {part.entity_type: part.entity_name for part in parts}
    return tuple(sorted(names.items(), key=lambda part: part[0]))


def acl_from_record(record: AccessControlEntryRecord) -> tuple[str, StandardAcl]:
    """The id and ACL a record creates (Kafka's StandardAclWithId.fromRecord)."""
    return record.id, StandardAcl(
        resource_type=record.resource_type, resource_name=record.resource_name,
        pattern_type=record.pattern_type, principal=record.principal, host=record.host,
        operation=record.operation, permission_type=record.permission_type)


def acl_to_record(acl_id: str, acl: StandardAcl) -> AccessControlEntryRecord:
    """The record that creates ``acl`` under ``acl_id`` (Kafka's StandardAclWithId.toRecord)."""
    return AccessControlEntryRecord(
        id=acl_id, resource_type=acl.resource_type, resource_name=acl.resource_name,
        pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host,
        operation=acl.operation, permission_type=acl.permission_type)


class SecurityDelta:
    """The changes (``None``: removed) to one image's ACLs, SCRAM credentials, client
    quotas and delegation tokens; see the module."""

    __slots__ = ("acls", "image", "quotas", "scram", "tokens")

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.acls: dict[str, StandardAcl | None] = {}
        self.scram: dict[int, dict[str, ScramCredentialData | None]] = {}
        self.quotas: dict[QuotaEntity, dict[str, float | None]] = {}
        self.tokens: dict[str, DelegationTokenData | None] = {}

    def replay(self, record: MetadataRecord) -> None:
        """Apply one of the :data:`SECURITY_RECORD_TYPES`; raises ReplayError."""
        _REPLAYS[type(record)](self, record)

    def _acl(self, record: AccessControlEntryRecord) -> None:
        acl_id, acl = acl_from_record(record)
        self.acls[acl_id] = acl

    def _remove_acl(self, record: RemoveAccessControlEntryRecord) -> None:
        acls = self.acls
        current = acls[record.id] if record.id in acls else self.image.acls.get(record.id)
        if current is None:
            raise ReplayError(f"RemoveAccessControlEntryRecord for unknown ACL id {record.id}")
        acls[record.id] = None

    def _scram(self, record: UserScramCredentialRecord) -> None:
        self.scram.setdefault(record.mechanism, {})[record.name] = \
            ScramCredentialData.from_record(record)

    def _remove_scram(self, record: RemoveUserScramCredentialRecord) -> None:
        self.scram.setdefault(record.mechanism, {})[record.name] = None

    def _quota(self, record: ClientQuotaRecord) -> None:
        keys = self.quotas.setdefault(quota_entity(record.entity), {})
        keys[record.key] = None if record.remove else record.value

    def _token(self, record: DelegationTokenRecord) -> None:
        self.tokens[record.token_id] = DelegationTokenData.from_record(record)

    def _remove_token(self, record: RemoveDelegationTokenRecord) -> None:
        self.tokens[record.token_id] = None

    def apply(self, digest: int) -> tuple[SecurityImage, int]:
        """The image's client quotas, ACLs, SCRAM credentials and delegation tokens with
        these changes, and ``digest`` moved along with them (unmasked)."""
        image = self.image
        quotas, digest = apply_nested_entries(image.client_quotas, self.quotas, "q", digest)
        acls, digest = apply_entries(image.acls, self.acls, "a", digest)
        scram, digest = apply_nested_entries(image.scram, self.scram, "s", digest)
        tokens, digest = apply_entries(image.delegation_tokens, self.tokens, "d", digest)
        return SecurityImage(client_quotas=quotas, acls=acls, scram=scram,
                             delegation_tokens=tokens), digest


_REPLAYS: dict[type[MetadataRecord], Callable[[SecurityDelta, Any], None]] = {
    AccessControlEntryRecord: SecurityDelta._acl,
    RemoveAccessControlEntryRecord: SecurityDelta._remove_acl,
    UserScramCredentialRecord: SecurityDelta._scram,
    RemoveUserScramCredentialRecord: SecurityDelta._remove_scram,
    ClientQuotaRecord: SecurityDelta._quota,
    DelegationTokenRecord: SecurityDelta._token,
    RemoveDelegationTokenRecord: SecurityDelta._remove_token,
}

SECURITY_RECORD_TYPES: tuple[type[MetadataRecord], ...] = tuple(_REPLAYS)
"""The record types a :class:`SecurityDelta` replays."""
