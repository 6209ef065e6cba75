"""Kafka's ``AclControlManagerTest``.

Kafka's AclControlManager is kraftsim's :class:`~controller.operations.CreateAcls` and
:class:`~controller.operations.DeleteAcls` (``controller/operations/acls.py``) over the ACLs
of the image (``metadata/security_delta.py`` replays the records). The manager's state is an
image made by replaying records; ``createAcls`` and ``deleteAcls`` are the operations run
against it, their records replayed to reach the next state; the static validateNewAcl and
validateFilter are :func:`~controller.operations.acls.check_new_acl` and
:func:`~controller.operations.acls.check_filter`. An ACL is a
:class:`~metadata.image.StandardAcl` (Kafka's AclBinding), a filter an
:class:`~controller.operations.AclFilter` (Kafka's AclBindingFilter). Kafka draws new ids
from ``Uuid.randomUuid``; kraftsim from the controller's seeded generator.

kraftsim's operations fail as a whole when every entry of the request failed (as its other
operations do, to show a refusal); Kafka answers each entry's error and succeeds. The cases
below always have an entry that passes, so they read the same in both.

Not ported:
- the authorizer half of ``testLoadSnapshot`` (loading the ACLs into a
  ClusterMetadataAuthorizer): no authorizer is modelled.
"""

from __future__ import annotations

import random

import pytest

from controller.errors import ApiError
from controller.operations import AclFilter, CreateAcls, DeleteAcls, OperationContext
from controller.operations.acls import check_filter, check_new_acl
from metadata.acl_codes import (
    ACL_PERMISSION_TYPES,
    ALLOW,
    ANY,
    DENY,
    LITERAL,
    MATCH,
    PATTERN_TYPES,
    PREFIXED,
    UNKNOWN,
    enum_name,
)
from metadata.image import MetadataImage, StandardAcl
from metadata.schema import AccessControlEntryRecord, RemoveAccessControlEntryRecord
from metadata.security_delta import acl_from_record
from metadata.snapshot import image_to_records
from tests.controller.kafka_cases import generate, run
from tests.metadata.kafka_image_cases import image_of
from tests.metadata.test_kafka_acls_image_cases import TEST_ACLS

TOPIC, ALL, ALTER = 2, 2, 7
BINDINGS = [acl_from_record(record)[1] for record in TEST_ACLS]


def _acl(resource_type: int = TOPIC, name: str = "*", pattern: int = LITERAL,
         operation: int = ALTER, permission: int = ALLOW) -> StandardAcl:
    return StandardAcl(resource_type, name, pattern, "User:*", "*", operation, permission)


def _refused(acl: StandardAcl) -> str:
    with pytest.raises(ApiError) as refused:
        check_new_acl(acl)
    assert refused.value.code == "INVALID_REQUEST"
    return refused.value.message


def test_validate_new_acl() -> None:
    """AclControlManagerTest.testValidateNewAcl, with the other refusals of validateNewAcl
    (ANY types, MATCH and ANY patterns, a code Kafka does not know, an empty name)."""
    check_new_acl(_acl())
    assert _refused(_acl(pattern=UNKNOWN)) == "Invalid patternType UNKNOWN"
    assert _refused(_acl(resource_type=UNKNOWN)) == "Invalid resourceType UNKNOWN"
    assert _refused(_acl(operation=UNKNOWN)) == "Invalid operation UNKNOWN"
    assert _refused(_acl(permission=UNKNOWN)) == "Invalid permissionType UNKNOWN"
    assert _refused(_acl(resource_type=ANY)) == "Invalid resourceType ANY"
    assert _refused(_acl(pattern=MATCH)) == "Invalid patternType MATCH"
    assert _refused(_acl(pattern=ANY)) == "Invalid patternType ANY"
    assert _refused(_acl(operation=ANY)) == "Invalid operation ANY"
    assert _refused(_acl(permission=ANY)) == "Invalid permissionType ANY"
    assert _refused(_acl(resource_type=99)) == "Invalid resourceType UNKNOWN"
    assert _refused(_acl(name="")) == "Resource name should not be empty"
    # the checks go in Kafka's order: the resource type first
    assert _refused(_acl(resource_type=UNKNOWN, pattern=UNKNOWN, name="")) == \
        "Invalid resourceType UNKNOWN"


def test_validate_filter() -> None:
    """AclControlManagerTest.testValidateFilter."""
    check_filter(AclFilter(ANY, "*", LITERAL, "User:*", "*", ANY, ANY))
    for bad, message in [
        (AclFilter(ANY, "*", UNKNOWN, "User:*", "*", ANY, ANY), "Unknown patternFilter."),
        (AclFilter(UNKNOWN, "*", LITERAL), "Unknown patternFilter."),
        (AclFilter(ANY, "*", MATCH, "User:*", "*", ANY, UNKNOWN), "Unknown entryFilter."),
        (AclFilter(operation=UNKNOWN), "Unknown entryFilter."),
    ]:
        with pytest.raises(ApiError) as refused:
            check_filter(bad)
        assert (refused.value.code, refused.value.message) == ("INVALID_REQUEST", message)


def test_load_snapshot() -> None:
    """AclControlManagerTest.testLoadSnapshot (its manager half): the ACLs replayed are held
    by id and write back as the records they came from; the image before them (the revert
    point) still holds none."""
    image = image_of(TEST_ACLS)
    assert set(image.acls) == {r.id for r in TEST_ACLS}
    written = [r for r in image_to_records(image) if isinstance(r, AccessControlEntryRecord)]
    assert sorted(written, key=lambda r: r.id) == sorted(TEST_ACLS, key=lambda r: r.id)
    assert set(image.acls.values()) == set(BINDINGS)
    assert not MetadataImage.EMPTY.acls


def test_add_and_delete() -> None:
    """AclControlManagerTest.testAddAndDelete."""
    image = image_of([TEST_ACLS[0], RemoveAccessControlEntryRecord(TEST_ACLS[0].id)])
    assert not image.acls
    image = image_of([RemoveAccessControlEntryRecord(TEST_ACLS[0].id)],
                     image_of([TEST_ACLS[0]]))
    assert not image.acls


def test_create_acl_delete_acl() -> None:
    """AclControlManagerTest.testCreateAclDeleteAcl: three ACLs created beside one refused;
    then a filter of every LITERAL ACL deletes two of them and a filter of an UNKNOWN
    resource type is refused; the PREFIXED ACL is left."""
    image = MetadataImage.EMPTY
    bad = _acl(pattern=UNKNOWN)
    image, records, response = run(CreateAcls((*BINDINGS[:3], bad)), image)
    assert response == {"results": [
        {"errorCode": "NONE"}, {"errorCode": "NONE"}, {"errorCode": "NONE"},
        {"errorCode": "INVALID_REQUEST", "errorMessage": "Invalid patternType UNKNOWN"}]}
    assert [type(r) for r in records] == [AccessControlEntryRecord] * 3
    assert sorted(image.acls.values(), key=BINDINGS.index) == BINDINGS[:3]

    image, records, response = run(DeleteAcls((
        AclFilter(ANY, None, LITERAL), AclFilter(UNKNOWN, None, LITERAL))), image)
    first, second = response["filterResults"]  # type: ignore[index]
    assert first["errorCode"] == "NONE"
    deleted = {StandardAcl(*acl.values()) for acl in first["matchingAcls"]}
    assert deleted == {BINDINGS[0], BINDINGS[2]}
    assert second == {"errorCode": "INVALID_REQUEST", "errorMessage": "Unknown patternFilter."}
    assert all(isinstance(r, RemoveAccessControlEntryRecord) for r in records)
    assert list(image.acls.values()) == [BINDINGS[1]]


def test_delete_dedupe() -> None:
    """AclControlManagerTest.testDeleteDedupe: an ACL matched by a filter of everything, by
    its own filter, and by both in one request is removed by one record each time."""
    binding = StandardAcl(TOPIC, "topic-1", LITERAL, "User:user", "10.0.0.1", ALL, ALLOW)
    records, _ = generate(CreateAcls((binding,)), MetadataImage.EMPTY)
    assert len(records) == 1
    created = records[0]
    assert isinstance(created, AccessControlEntryRecord)
    image = image_of(records)
    for filters in [(AclFilter(),), (AclFilter.exactly(binding),),
                    (AclFilter(), AclFilter.exactly(binding))]:
        removals, response = generate(DeleteAcls(filters), image)
        assert removals == [RemoveAccessControlEntryRecord(created.id)]
        assert len(response["filterResults"]) == len(filters)  # type: ignore[index]


def test_create_of_an_acl_already_held_writes_nothing() -> None:
    """createAcls' existingAcls: an ACL the image holds, or given twice in one request,
    succeeds and writes no record (or one)."""
    image = image_of(TEST_ACLS[:1])
    records, response = generate(CreateAcls((BINDINGS[0],)), image)
    assert records == [] and response == {"results": [{"errorCode": "NONE"}]}
    records, response = generate(CreateAcls((BINDINGS[1], BINDINGS[1])), image)
    assert len(records) == 1 and acl_from_record(records[0])[1] == BINDINGS[1]  # type: ignore[arg-type]
    assert response == {"results": [{"errorCode": "NONE"}] * 2}


def test_new_acl_ids_come_from_the_seeded_generator() -> None:
    """newAclId: a fresh Uuid no ACL has; the same seed gives the same ids."""
    op = CreateAcls(tuple(BINDINGS))
    first, _ = generate(op, MetadataImage.EMPTY, seed=7)
    again, _ = generate(op, MetadataImage.EMPTY, seed=7)
    other, _ = generate(op, MetadataImage.EMPTY, seed=8)
    ids = [r.id for r in first]  # type: ignore[attr-defined]
    assert first == again and first != other
    assert len(set(ids)) == len(BINDINGS)
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)


def test_a_request_in_which_every_entry_fails_is_refused() -> None:
    """kraftsim's convention (see the module): nothing passes, the first error is the
    operation's."""
    with pytest.raises(ApiError, match="Invalid operation ANY"):
        generate(CreateAcls((_acl(operation=ANY), _acl(name=""))), MetadataImage.EMPTY)
    with pytest.raises(ApiError, match=r"Unknown entryFilter\."):
        generate(DeleteAcls((AclFilter(permission_type=UNKNOWN),)), MetadataImage.EMPTY)
    # a valid filter that matches nothing succeeds
    records, response = generate(DeleteAcls((AclFilter(),)), MetadataImage.EMPTY)
    assert records == [] and response == {"filterResults": [
        {"errorCode": "NONE", "matchingAcls": []}]}


@pytest.mark.parametrize(("acl_filter", "expected"), [
    (AclFilter(), [0, 1, 2, 3, 4]),
    (AclFilter(resource_type=3), [2, 3, 4]),
    (AclFilter(pattern_type=LITERAL), [0, 2]),
    (AclFilter(3, "mygroup", ANY), [2, 3]),
    (AclFilter(3, "mygroup", LITERAL), [2]),
    (AclFilter(3, "mygroup", MATCH), [2, 3]),
    (AclFilter(3, "foobar", MATCH), [4]),
    (AclFilter(2, "foo_bar", MATCH), [1]),
    (AclFilter(principal="User:foo"), [2, 3, 4]),
    (AclFilter(permission_type=ALLOW), [0, 1]),
    (AclFilter(operation=ALTER), [0]),
    (AclFilter(host="10.0.0.1"), []),
])
def test_filters_match_as_kafka_s(acl_filter: AclFilter, expected: list[int]) -> None:
    """AclBindingFilter.matches, as deleteAcls uses it, over the five test ACLs."""
    image = image_of(TEST_ACLS)
    records, response = generate(DeleteAcls((acl_filter,)), image)
    by_id = {r.id: i for i, r in enumerate(TEST_ACLS)}
    assert sorted(by_id[r.id] for r in records) == expected  # type: ignore[attr-defined]
    matching = response["filterResults"][0]["matchingAcls"]  # type: ignore[index]
    assert sorted(BINDINGS.index(StandardAcl(*m.values())) for m in matching) == expected


def test_a_literal_wildcard_acl_matches_every_name() -> None:
    """A MATCH filter for a name covers the LITERAL ``*`` ACL of its resource type."""
    image = image_of([AccessControlEntryRecord("QZDDv-R7SyaPgetDPGd0Mw", TOPIC, "*", LITERAL,
                                               "User:*", "*", ALTER, ALLOW)])
    records, _ = generate(DeleteAcls((AclFilter(TOPIC, "orders", MATCH),)), image)
    assert len(records) == 1
    records, _ = generate(DeleteAcls((AclFilter(TOPIC, "orders", LITERAL),)), image)
    assert records == []


def test_deleting_past_the_bound_is_an_unknown_server_error() -> None:
    """deleteAclsForFilter's bound: a filter whose removals pass the operation's record
    bound fails (UNKNOWN_SERVER_ERROR) and removes nothing."""
    image = image_of(TEST_ACLS)
    ctx = OperationContext(image, random.Random(1), 100, 0, max_records=4)
    generated = DeleteAcls((AclFilter(resource_type=3), AclFilter())).generate(ctx)
    assert len(generated.records) == 3
    assert generated.response["filterResults"][1]["errorCode"] == "UNKNOWN_SERVER_ERROR"


def test_a_filter_code_past_kafka_s_enums_is_unknown() -> None:
    """fromCode reads a code past the last of an enum as UNKNOWN, so validateFilter
    refuses a filter with such a resource, pattern, operation or permission type."""
    for bad, message in [
        (AclFilter(resource_type=8), "Unknown patternFilter."),
        (AclFilter(pattern_type=5), "Unknown patternFilter."),
        (AclFilter(operation=15), "Unknown entryFilter."),
        (AclFilter(permission_type=4), "Unknown entryFilter."),
    ]:
        with pytest.raises(ApiError) as refused:
            check_filter(bad)
        assert (refused.value.code, refused.value.message) == ("INVALID_REQUEST", message)
    # the last code of each enum is known
    check_filter(AclFilter(resource_type=7, pattern_type=4, operation=14, permission_type=3))


def test_a_new_acl_never_takes_the_id_of_an_acl_held() -> None:
    """newAclId draws again when the id drawn is already an ACL's: the ACL held under it
    stays and the new one is added beside it."""
    first, _ = generate(CreateAcls((BINDINGS[0],)), MetadataImage.EMPTY)
    taken = first[0].id  # type: ignore[attr-defined]
    held = AccessControlEntryRecord(taken, TOPIC, "other", LITERAL, "User:x", "*", ALTER, ALLOW)
    image = image_of([held])
    image, records, _ = run(CreateAcls((BINDINGS[0],)), image)
    assert len(records) == 1 and records[0].id != taken  # type: ignore[attr-defined]
    assert set(image.acls.values()) == {acl_from_record(held)[1], BINDINGS[0]}


def test_deleting_exactly_the_bound_is_allowed() -> None:
    """deleteAclsForFilter fails only past the bound: as many removals as it allows pass."""
    image = image_of(TEST_ACLS)
    ctx = OperationContext(image, random.Random(1), 100, 0, max_records=len(TEST_ACLS))
    generated = DeleteAcls((AclFilter(),)).generate(ctx)
    assert len(generated.records) == len(TEST_ACLS)
    assert generated.response["filterResults"][0]["errorCode"] == "NONE"


def test_a_delete_whose_only_filter_passes_the_bound_is_refused() -> None:
    """kraftsim's convention: nothing removed and every filter failed, so the request fails
    with the first filter's error (UNKNOWN_SERVER_ERROR for the bound, or an earlier
    filter's INVALID_REQUEST)."""
    image = image_of(TEST_ACLS)
    for filters, code in [((AclFilter(),), "UNKNOWN_SERVER_ERROR"),
                          ((AclFilter(operation=UNKNOWN), AclFilter()), "INVALID_REQUEST")]:
        ctx = OperationContext(image, random.Random(1), 100, 0, max_records=4)
        with pytest.raises(ApiError) as refused:
            DeleteAcls(filters).generate(ctx)
        assert refused.value.code == code


def test_describe_names_the_acls_and_counts_the_filters() -> None:
    """The operation's one-line description, as the shell and traces show it."""
    orders = _acl(name="orders", operation=3)  # READ
    assert CreateAcls((_acl(), orders)).describe() == \
        ("CreateAcls(TOPIC:*(LITERAL) User:*@* ALTER ALLOW; "
         "TOPIC:orders(LITERAL) User:*@* READ ALLOW)")
    assert DeleteAcls((AclFilter(),)).describe() == "DeleteAcls(1 filter)"
    assert DeleteAcls((AclFilter(), AclFilter())).describe() == "DeleteAcls(2 filters)"
    assert DeleteAcls(()).describe() == "DeleteAcls(0 filters)"


def test_a_new_acl_code_past_kafka_s_enums_is_unknown() -> None:
    """validateNewAcl names a code one past the last of its enum UNKNOWN, as fromCode does,
    and refuses it."""
    assert _refused(_acl(resource_type=8)) == "Invalid resourceType UNKNOWN"
    assert _refused(_acl(pattern=5)) == "Invalid patternType UNKNOWN"
    assert _refused(_acl(operation=15)) == "Invalid operation UNKNOWN"
    assert _refused(_acl(permission=4)) == "Invalid permissionType UNKNOWN"
    check_new_acl(_acl(resource_type=7, pattern=PREFIXED, operation=14, permission=DENY))
    assert enum_name(PATTERN_TYPES, -1) == "UNKNOWN"


def test_the_named_codes_are_kafka_s() -> None:
    """The codes :mod:`metadata.acl_codes` names are Kafka's: each names itself."""
    assert [PATTERN_TYPES[c] for c in (UNKNOWN, ANY, MATCH, LITERAL, PREFIXED)] == \
        ["UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"]
    assert [enum_name(ACL_PERMISSION_TYPES, c) for c in (DENY, ALLOW)] == ["DENY", "ALLOW"]
