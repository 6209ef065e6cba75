"""ACLs in the image and the delta, following the cases of Kafka's ``AclsImageTest`` and
``AclsDeltaTest``.

Ported: an image of four ACLs, one removed and one added; the round trips of
both images and the delta through every split (AclsImageTest); an ACL added
and removed in one delta leaves no change, an ACL of the image removed is a
change, and removing an ACL id the image and the delta do not hold is refused,
whether the image is empty or holds other ACLs (AclsDeltaTest).

Kafka's names for the image checks: testEmptyImageRoundTrip
(test_an_image_round_trips_through_its_snapshot_records); testImage1RoundTrip,
testImage2RoundTrip (test_an_image_round_trips_through_its_snapshot_records);
testApplyDelta1 (test_delta1_gives_image2).
"""

from __future__ import annotations

import pytest

from metadata.delta import MetadataDelta, ReplayError
from metadata.image import MetadataImage, StandardAcl
from metadata.schema import AccessControlEntryRecord, MetadataRecord, RemoveAccessControlEntryRecord
from metadata.snapshot import image_to_records
from tests.metadata.kafka_image_cases import (
    assert_every_split_reaches,
    assert_round_trip,
    image_of,
)

# Kafka's enum codes
TOPIC, GROUP, CLUSTER = 2, 3, 4
LITERAL, PREFIXED = 3, 4
READ, ALTER = 3, 7
DENY, ALLOW = 2, 3


def acl(acl_id: str, resource_type: int, name: str, pattern: int, principal: str,
        operation: int, permission: int) -> AccessControlEntryRecord:
    return AccessControlEntryRecord(id=acl_id, resource_type=resource_type, resource_name=name,
                                    pattern_type=pattern, principal=principal, host="*",
                                    operation=operation, permission_type=permission)


TEST_ACLS = [
    acl("QZDDv-R7SyaPgetDPGd0Mw", CLUSTER, "kafka-cluster", LITERAL, "User:*", ALTER, ALLOW),
    acl("SdDjEdlbRmy2__WFKe3RMg", TOPIC, "foo_", PREFIXED, "User:*", READ, ALLOW),
    acl("wQzt5gkSTwuQNXZF5gIw7A", GROUP, "mygroup", LITERAL, "User:foo", READ, DENY),
    acl("ab_5xjJXSbS1o5jGfhgQXg", GROUP, "mygroup", PREFIXED, "User:foo", READ, DENY),
    acl("wP_cCK0LTEGSX9oDRInJHQ", GROUP, "foo", PREFIXED, "User:foo", READ, DENY),
]
IMAGE1 = image_of(TEST_ACLS[:4])
DELTA1_RECORDS: list[MetadataRecord] = [
    RemoveAccessControlEntryRecord("QZDDv-R7SyaPgetDPGd0Mw"),
    TEST_ACLS[4],
]
IMAGE2 = image_of(TEST_ACLS[1:])

ACL_ID = "iOZpss6VQUmD6blnqzl50g"
THE_ACL = acl(ACL_ID, 1, "foo", 1, "User:user", 1, 1)


@pytest.mark.parametrize("image", [MetadataImage.EMPTY, IMAGE1, IMAGE2],
                         ids=["empty", "image1", "image2"])
def test_an_image_round_trips_through_its_snapshot_records(image: MetadataImage) -> None:
    assert_round_trip(image)


def test_delta1_gives_image2() -> None:
    assert image_of(DELTA1_RECORDS, IMAGE1) == IMAGE2
    assert sorted(IMAGE2.acls) == sorted(record.id for record in TEST_ACLS[1:])
    assert IMAGE2.acls["wP_cCK0LTEGSX9oDRInJHQ"] == StandardAcl(
        resource_type=GROUP, resource_name="foo", pattern_type=PREFIXED, principal="User:foo",
        host="*", operation=READ, permission_type=DENY)
    assert_every_split_reaches(IMAGE2, [*image_to_records(IMAGE1), *DELTA1_RECORDS])


def test_an_acl_added_and_removed_in_one_delta_changes_nothing() -> None:
    """testRemovesDeleteIfNotInImage."""
    empty = image_of([])
    delta = MetadataDelta(empty)
    delta.replay(THE_ACL)
    delta.replay(RemoveAccessControlEntryRecord(ACL_ID))
    image = delta.apply(empty.offset, empty.epoch)
    assert not image.acls and image == empty


def test_removing_an_acl_of_the_image_removes_it() -> None:
    """testKeepsDeleteIfInImage."""
    image = image_of([THE_ACL])
    assert ACL_ID in image.acls
    after = image_of([RemoveAccessControlEntryRecord(ACL_ID)], image)
    assert not after.acls and after.same_content(MetadataImage.EMPTY)


@pytest.mark.parametrize("held", [[], [acl("nGiNMQHwRgmgsIlfu73aJQ", 1, "foo", 1, "User:user",
                                           1, 1)]], ids=["empty image", "other acls"])
def test_removing_an_acl_nobody_holds_is_refused(held: list[MetadataRecord]) -> None:
    """testThrowsExceptionOnInvalidStateWhenImageIsEmpty / ...WhenImageHasOtherAcls."""
    delta = MetadataDelta(image_of(held))
    with pytest.raises(ReplayError, match=ACL_ID):
        delta.replay(RemoveAccessControlEntryRecord(ACL_ID))


def test_an_acl_added_and_removed_cannot_be_removed_again() -> None:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay(THE_ACL)
    delta.replay(RemoveAccessControlEntryRecord(ACL_ID))
    with pytest.raises(ReplayError, match=ACL_ID):
        delta.replay(RemoveAccessControlEntryRecord(ACL_ID))
