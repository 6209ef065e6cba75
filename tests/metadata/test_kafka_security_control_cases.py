"""The replay halves of Kafka's ``ClientQuotaControlManagerTest`` and
``AclControlManagerTest``.

kraftsim models client quotas and ACLs as replayed state only (``metadata/security_delta.py``):
no controller operation alters client quotas or creates or deletes ACLs, and no broker
enforces them. So the cases ported are those about the state the records leave: the
quotas of an entity as its records set and remove keys (``testAlterAndRemove``), and
ACLs loaded from records, written back as the same records, and added then removed
(``testLoadSnapshot``, ``testAddAndDelete``).

Not ported (the AlterClientQuotas, CreateAcls and DeleteAcls operations and the
authorizer are not modelled):
- ``ClientQuotaControlManagerTest``: ``testInvalidEntityTypes``, ``testInvalidQuotaKeys``,
  ``testEntityTypes`` (the validation and describe of alterations), the three
  ``testIsValidIpEntity*`` cases, the eight ``testConfigKeysFor*`` cases and the eight
  ``testValidateQuotaKeyValue*`` cases (quota key and value validation).
- ``AclControlManagerTest``: ``testValidateNewAcl``, ``testValidateFilter``,
  ``testCreateAclDeleteAcl``, ``testDeleteDedupe`` (ACL validation, creation, filters and
  deletion); the authorizer half of ``testLoadSnapshot``.
"""

from __future__ import annotations

from metadata.image import MetadataImage
from metadata.schema import (
    AccessControlEntryRecord,
    ClientQuotaRecord,
    EntityData,
    MetadataRecord,
    RemoveAccessControlEntryRecord,
)
from metadata.security_delta import quota_entity
from metadata.snapshot import image_to_records
from tests.metadata.kafka_image_cases import image_of
from tests.metadata.test_kafka_acls_image_cases import TEST_ACLS

USER = (EntityData("user", "user-1"),)
ENTITY = quota_entity(USER)
PRODUCE, CONSUME = "producer_byte_rate", "consumer_byte_rate"
REQUEST, MUTATION = "request_percentage", "controller_mutation_rate"


def _set(key: str, value: float) -> ClientQuotaRecord:
    return ClientQuotaRecord(USER, key, value)


def _remove(key: str) -> ClientQuotaRecord:
    return ClientQuotaRecord(USER, key, 0.0, remove=True)


def _quotas(image: MetadataImage) -> dict[str, float] | None:
    found = image.client_quotas.get(ENTITY)
    return None if found is None else dict(found)


def test_quotas_set_replaced_and_removed() -> None:
    """ClientQuotaControlManagerTest.testAlterAndRemove, as the records its alterations
    write: a key set, replaced beside a new one, removed (the other stays), a key the
    entity lacks removed (no change), the last key removed (the entity goes), removed
    again (still none), then a mixed update."""
    steps: list[tuple[list[MetadataRecord], dict[str, float] | None]] = [
        ([_set(PRODUCE, 10000.0)], {PRODUCE: 10000.0}),
        ([_set(PRODUCE, 10001.0), _set(CONSUME, 20000.0)],
         {PRODUCE: 10001.0, CONSUME: 20000.0}),
        ([_remove(PRODUCE)], {CONSUME: 20000.0}),
        ([_remove(REQUEST)], {CONSUME: 20000.0}),
        ([_remove(CONSUME)], None),
        ([_remove(CONSUME)], None),
        ([_set(REQUEST, 99.0), _remove(MUTATION), _set(PRODUCE, 10002.0),
          _set(CONSUME, 20001.0)], {REQUEST: 99.0, PRODUCE: 10002.0, CONSUME: 20001.0}),
    ]
    image = MetadataImage.EMPTY
    for records, expected in steps:
        image = image_of(records, image)
        assert _quotas(image) == expected
        assert (ENTITY in image.client_quotas) == (expected is not None)


def test_acls_load_from_records_and_write_the_same_records() -> None:
    """AclControlManagerTest.testLoadSnapshot: the ACLs replayed are held by id and write
    back as the records they came from; the image before them (the revert point) still
    holds none."""
    image = image_of(TEST_ACLS)
    assert set(image.acls) == {r.id for r in TEST_ACLS}
    written = [r for r in image_to_records(image) if isinstance(r, AccessControlEntryRecord)]
    assert sorted(written, key=lambda r: r.id) == sorted(TEST_ACLS, key=lambda r: r.id)
    assert not MetadataImage.EMPTY.acls


def test_an_acl_added_then_removed_leaves_none() -> None:
    """AclControlManagerTest.testAddAndDelete."""
    image = image_of([TEST_ACLS[0], RemoveAccessControlEntryRecord(TEST_ACLS[0].id)])
    assert not image.acls
    image = image_of([RemoveAccessControlEntryRecord(TEST_ACLS[0].id)],
                     image_of([TEST_ACLS[0]]))
    assert not image.acls
