"""CreateAcls and DeleteAcls: add and remove ACLs (Kafka's AclControlManager).

An ACL is a :class:`~metadata.image.StandardAcl` (Kafka's AclBinding: a resource pattern and
an access control entry, as Kafka's enum codes, see :mod:`metadata.acl_codes`); the image
keeps each under a Uuid, its id.

CreateAcls checks each ACL as Kafka's validateNewAcl does (:func:`check_new_acl`): a
resource type other than UNKNOWN and ANY, a LITERAL or PREFIXED pattern, an operation other
than UNKNOWN and ANY, DENY or ALLOW, a resource name that is not empty; a refused ACL gets
INVALID_REQUEST in its result and the others go on. An ACL the image already holds (or the
request gave before) succeeds and writes nothing; a new one is an AccessControlEntryRecord
under a fresh id drawn from the controller's seeded generator.

DeleteAcls takes filters (:class:`AclFilter`, Kafka's AclBindingFilter), each checked as
Kafka's validateFilter does (:func:`check_filter`); a valid filter's result lists the ACLs
it matches, in id order, and each matched ACL is removed by one
RemoveAccessControlEntryRecord, however many filters match it.

Both answer each entry in the request's order. As kraftsim's other operations do, a request
in which every entry failed (and nothing is written) fails with the first entry's error.
"""

from __future__ import annotations

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from metadata.acl_codes import (
    ACL_OPERATIONS,
    ACL_PERMISSION_TYPES,
    ANY,
    LITERAL,
    MATCH,
    PATTERN_TYPES,
    PREFIXED,
    RESOURCE_TYPES,
    UNKNOWN,
    WILDCARD_RESOURCE,
    enum_name,
)
from metadata.image import StandardAcl
from metadata.schema import MetadataRecord, RemoveAccessControlEntryRecord
from metadata.security_delta import acl_to_record
from metadata.uuids import random_uuid

UNKNOWN_SERVER_MESSAGE = ("The server experienced an unexpected error when processing the "
                          "request.")
"""Kafka's message for UNKNOWN_SERVER_ERROR (an exception that is not an ApiException)."""


def _code(names: tuple[str, ...], code: int) -> int:
    """The code as Kafka reads it (``fromCode``): a code it does not know is UNKNOWN."""
    return code if 0 <= code < len(names) else UNKNOWN


class AclFilter(msgspec.Struct, frozen=True):
    """Which ACLs to delete (Kafka's AclBindingFilter): ANY matches every code, a None name,
    principal or host every value. The pattern type MATCH matches, for a name, the LITERAL
    ACL of that name, the LITERAL wildcard ``*`` and every PREFIXED ACL whose prefix starts
    the name; ANY or a given pattern type matches that name exactly."""

    resource_type: int = ANY
    resource_name: str | None = None
    pattern_type: int = ANY
    principal: str | None = None
    host: str | None = None
    operation: int = ANY
    permission_type: int = ANY

    @classmethod
    def exactly(cls, acl: StandardAcl) -> AclFilter:
        """The filter that matches this ACL alone (Kafka's AclBinding.toFilter)."""
        return cls(acl.resource_type, acl.resource_name, acl.pattern_type, acl.principal,
                   acl.host, acl.operation, acl.permission_type)

    def matches(self, acl: StandardAcl) -> bool:
        """Whether the filter covers ``acl`` (Kafka's AclBindingFilter.matches); raises
        ValueError for a named MATCH filter against an ACL neither LITERAL nor PREFIXED,
        as Kafka does."""
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: StandardAcl) -> bool:
        kind = _code(RESOURCE_TYPES, self.resource_type)
        if kind != ANY and kind != _code(RESOURCE_TYPES, acl.resource_type):
            return False
        pattern = _code(PATTERN_TYPES, self.pattern_type)
        acl_pattern = _code(PATTERN_TYPES, acl.pattern_type)
        if pattern not in (ANY, MATCH) and pattern != acl_pattern:
            return False
        name = self.resource_name
        if name is None:
            return True
        if pattern in (ANY, acl_pattern):
            return name == acl.resource_name
        if acl_pattern == LITERAL:
            return name == acl.resource_name or acl.resource_name == WILDCARD_RESOURCE
        if acl_pattern == PREFIXED:
            return name.startswith(acl.resource_name)
        raise ValueError(f"Unsupported PatternType: {enum_name(PATTERN_TYPES, acl_pattern)}")

    def _matches_entry(self, acl: StandardAcl) -> bool:
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        operation = _code(ACL_OPERATIONS, self.operation)
        if operation != ANY and operation != _code(ACL_OPERATIONS, acl.operation):
            return False
        permission = _code(ACL_PERMISSION_TYPES, self.permission_type)
        return permission == ANY or permission == _code(ACL_PERMISSION_TYPES,
                                                        acl.permission_type)


def check_new_acl(acl: StandardAcl) -> None:
    """Kafka's validateNewAcl: raises ApiError(INVALID_REQUEST) for an ACL that cannot be
    created, in Kafka's order and words."""
    kind = enum_name(RESOURCE_TYPES, acl.resource_type)
    if kind in ("UNKNOWN", "ANY"):
        raise ApiError("INVALID_REQUEST", f"Invalid resourceType {kind}")
    pattern = enum_name(PATTERN_TYPES, acl.pattern_type)
    if pattern not in ("LITERAL", "PREFIXED"):
        raise ApiError("INVALID_REQUEST", f"Invalid patternType {pattern}")
    operation = enum_name(ACL_OPERATIONS, acl.operation)
    if operation in ("UNKNOWN", "ANY"):
        raise ApiError("INVALID_REQUEST", f"Invalid operation {operation}")
    permission = enum_name(ACL_PERMISSION_TYPES, acl.permission_type)
    if permission not in ("DENY", "ALLOW"):
        raise ApiError("INVALID_REQUEST", f"Invalid permissionType {permission}")
    if not acl.resource_name:
        raise ApiError("INVALID_REQUEST", "Resource name should not be empty")


def check_filter(acl_filter: AclFilter) -> None:
    """Kafka's validateFilter: raises ApiError(INVALID_REQUEST) for a filter with an UNKNOWN
    resource or pattern type, or an UNKNOWN operation or permission type."""
    if UNKNOWN in (_code(RESOURCE_TYPES, acl_filter.resource_type),
                   _code(PATTERN_TYPES, acl_filter.pattern_type)):
        raise ApiError("INVALID_REQUEST", "Unknown patternFilter.")
    if UNKNOWN in (_code(ACL_OPERATIONS, acl_filter.operation),
                   _code(ACL_PERMISSION_TYPES, acl_filter.permission_type)):
        raise ApiError("INVALID_REQUEST", "Unknown entryFilter.")


def acl_result(acl: StandardAcl) -> dict[str, object]:
    """An ACL as a DeleteAcls result lists it (Kafka's DeleteAclsMatchingAcl fields)."""
    return {"resourceType": acl.resource_type, "resourceName": acl.resource_name,
            "patternType": acl.pattern_type, "principal": acl.principal, "host": acl.host,
            "operation": acl.operation, "permissionType": acl.permission_type}


def _acl_text(acl: StandardAcl) -> str:
    return (f"{enum_name(RESOURCE_TYPES, acl.resource_type)}:{acl.resource_name}"
            f"({enum_name(PATTERN_TYPES, acl.pattern_type)}) {acl.principal}@{acl.host} "
            f"{enum_name(ACL_OPERATIONS, acl.operation)} "
            f"{enum_name(ACL_PERMISSION_TYPES, acl.permission_type)}")


def _failure(error: ApiError) -> dict[str, object]:
    return {"errorCode": error.code, "errorMessage": error.message}


class CreateAcls(msgspec.Struct, frozen=True):
    """Create ACLs (Kafka's CreateAcls); see the module."""

    acls: tuple[StandardAcl, ...]

    def describe(self) -> str:
        """E.g. ``CreateAcls(TOPIC:orders(LITERAL) User:bob@* READ ALLOW)``."""
        return f"CreateAcls({'; '.join(_acl_text(acl) for acl in self.acls)})"

    def generate(self, ctx: OperationContext) -> Generated:
        """An AccessControlEntryRecord for each valid ACL not held yet, in the request's
        order; the response's ``results`` has one entry per ACL (``errorCode`` NONE, or the
        error and its message)."""
        records = ctx.records()
        held = set(ctx.image.acls.values())
        ids: set[str] = set()
        results: list[dict[str, object]] = []
        first_error: ApiError | None = None
        for acl in self.acls:
            try:
                check_new_acl(acl)
            except ApiError as error:
                first_error = first_error or error
                results.append(_failure(error))
                continue
            if acl not in held:
                held.add(acl)
                acl_id = self._new_id(ctx, ids)
                records.append(acl_to_record(acl_id, acl))
            results.append({"errorCode": "NONE"})
        if first_error is not None and len(self.acls) == sum(
                "errorMessage" in result for result in results):
            raise first_error
        return Generated(records, {"results": results})

    @staticmethod
    def _new_id(ctx: OperationContext, taken: set[str]) -> str:
        """A Uuid from the controller's generator that no ACL has (Kafka's newAclId)."""
        acls = ctx.image.acls
        while True:
            acl_id = random_uuid(ctx.rng)
            if acl_id not in acls and acl_id not in taken:
                taken.add(acl_id)
                return acl_id


class DeleteAcls(msgspec.Struct, frozen=True):
    """Delete the ACLs that filters match (Kafka's DeleteAcls); see the module."""

    filters: tuple[AclFilter, ...]

    def describe(self) -> str:
        """E.g. ``DeleteAcls(2 filters)``."""
        count = len(self.filters)
        return f"DeleteAcls({count} filter{'' if count == 1 else 's'})"

    def generate(self, ctx: OperationContext) -> Generated:
        """One RemoveAccessControlEntryRecord for each ACL some valid filter matches (once,
        whatever the filters); the response's ``filterResults`` has one entry per filter:
        ``errorCode`` NONE and its ``matchingAcls`` (:func:`acl_result`, in id order), or
        the error. A filter that would take the records past the operation's bound is
        UNKNOWN_SERVER_ERROR (Kafka's "Cannot remove more than N acls") and removes nothing
        (Kafka keeps the removals it had added before the bound); so is a named MATCH
        filter against a stored ACL neither LITERAL nor PREFIXED."""
        acls = sorted(ctx.image.acls.items())
        removed: dict[str, None] = {}
        results: list[dict[str, object]] = []
        first_error: ApiError | None = None
        for acl_filter in self.filters:
            try:
                check_filter(acl_filter)
                matching = [(acl_id, acl) for acl_id, acl in acls if acl_filter.matches(acl)]
                fresh = [acl_id for acl_id, _ in matching if acl_id not in removed]
                if len(removed) + len(fresh) > ctx.max_records:
                    raise ValueError("too many ACLs")
            except ApiError as error:
                first_error = first_error or error
                results.append(_failure(error))
                continue
            except ValueError:
                unknown = ApiError("UNKNOWN_SERVER_ERROR", UNKNOWN_SERVER_MESSAGE)
                first_error = first_error or unknown
                results.append(_failure(unknown))
                continue
            removed.update(dict.fromkeys(fresh))
            results.append({"errorCode": "NONE",
                            "matchingAcls": [acl_result(acl) for _, acl in matching]})
        if first_error is not None and not removed and len(self.filters) == sum(
                "errorMessage" in result for result in results):
            raise first_error
        records: list[MetadataRecord] = [RemoveAccessControlEntryRecord(acl_id)
                                          for acl_id in removed]
        return Generated(records, {"filterResults": results})
