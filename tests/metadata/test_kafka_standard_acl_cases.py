"""Kafka's ``StandardAclTest``.

Kafka's StandardAcl is kraftsim's :class:`~metadata.image.StandardAcl`, with the enums as
Kafka's codes (:mod:`metadata.acl_codes`). Kafka converts it to and from an AclBinding (the
admin API's form); kraftsim's operations take the StandardAcl itself as the binding, and
answer an ACL in Kafka's DeleteAcls fields (:func:`~controller.operations.acls.acl_result`)
or match it with the filter of exactly it (:meth:`~controller.operations.AclFilter.exactly`,
Kafka's AclBinding.toFilter): those are the round trips here.

Not ported:
- ``testCompareTo``: the order only serves the authorizer's lookup of the ACLs that may
  cover a resource; no authorizer is modelled, and kraftsim keeps ACLs by id.
"""

from __future__ import annotations

import msgspec

from controller.operations import AclFilter
from controller.operations.acls import acl_result
from metadata.image import StandardAcl
from metadata.security_delta import acl_from_record
from tests.metadata.test_kafka_acls_image_cases import TEST_ACLS

ACLS = [acl_from_record(record)[1] for record in TEST_ACLS]
"""Kafka's StandardAclTest.TEST_ACLS (the ACLs of StandardAclWithIdTest's, without ids)."""
FIELDS = {"resourceType": "resource_type", "resourceName": "resource_name",
          "patternType": "pattern_type", "principal": "principal", "host": "host",
          "operation": "operation", "permissionType": "permission_type"}


def _from_result(fields: dict[str, object]) -> StandardAcl:
    """The ACL a DeleteAcls result names (Kafka's StandardAcl.fromAclBinding)."""
    return msgspec.convert({FIELDS[key]: value for key, value in fields.items()}, StandardAcl)


def test_to_binding_round_trips() -> None:
    """StandardAclTest.testToBindingRoundTrips: each ACL through its answered form comes back
    equal, and the filter of exactly it matches it and no other test ACL."""
    for acl in ACLS:
        assert _from_result(acl_result(acl)) == acl
        exact = AclFilter.exactly(acl)
        assert [other for other in ACLS if exact.matches(other)] == [acl]


def test_equals() -> None:
    """StandardAclTest.testEquals: each ACL equals itself and none of the others (and equal
    ACLs hash alike: CreateAcls finds an ACL already held by it)."""
    for i, acl in enumerate(ACLS):
        for j, other in enumerate(ACLS):
            assert (acl == other) == (i == j)
        assert hash(acl) == hash(_from_result(acl_result(acl)))
