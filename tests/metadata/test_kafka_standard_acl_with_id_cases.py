"""Kafka's ``StandardAclWithIdTest``.

Kafka's StandardAclWithId (an ACL and its Uuid) is, in kraftsim, an id and a
:class:`~metadata.image.StandardAcl`: an image's ``acls`` maps one to the other.
:func:`~metadata.security_delta.acl_to_record` and
:func:`~metadata.security_delta.acl_from_record` are Kafka's toRecord and fromRecord;
replaying the record (``metadata/security_delta.py``) gives the image the same pair.

Not ported: none.
"""

from __future__ import annotations

from metadata.security_delta import acl_from_record, acl_to_record
from tests.metadata.kafka_image_cases import image_of
from tests.metadata.test_kafka_acls_image_cases import TEST_ACLS


def test_to_record_round_trips() -> None:
    """StandardAclWithIdTest.testToRecordRoundTrips, and the replayed record holds the same
    ACL under the same id."""
    for record in TEST_ACLS:
        acl_id, acl = acl_from_record(record)
        assert acl_to_record(acl_id, acl) == record
        assert acl_from_record(acl_to_record(acl_id, acl)) == (acl_id, acl)
        assert dict(image_of([record]).acls) == {acl_id: acl}


def test_equals() -> None:
    """StandardAclWithIdTest.testEquals: each (id, ACL) equals itself and none of the
    others."""
    pairs = [acl_from_record(record) for record in TEST_ACLS]
    for i, pair in enumerate(pairs):
        for j, other in enumerate(pairs):
            assert (pair == other) == (i == j)
