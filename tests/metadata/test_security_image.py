"""ACLs, SCRAM credentials, client quotas and delegation tokens in the image.

Replayed as Kafka's images replay them, removed by their Remove records (and
a ClientQuotaRecord with ``remove``), written into a snapshot and read back
equal, whatever the delta boundaries.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metadata.delta import MetadataDelta, ReplayError
from metadata.image import DelegationTokenData, MetadataImage, ScramCredentialData, StandardAcl
from metadata.replay_check import ReplayCheck
from metadata.schema import (
    AccessControlEntryRecord,
    ClientQuotaRecord,
    DelegationTokenRecord,
    EntityData,
    FeatureLevelRecord,
    MetadataRecord,
    RemoveAccessControlEntryRecord,
    RemoveDelegationTokenRecord,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
)
from metadata.snapshot import image_from_records, image_to_records

ACL_1 = "YNY5hm01SZ-bAGeCLAGqWA"
ACL_2 = "h6pDfZcK7RCGV0SBTRYdAA"
ALICE = (EntityData("user", "alice"),)
DEFAULT_CLIENT_OF_ALICE = (EntityData("client-id", None), EntityData("user", "alice"))


def image_of(*records: MetadataRecord, base: MetadataImage = MetadataImage.EMPTY) -> MetadataImage:
    delta = MetadataDelta(base)
    delta.replay_all(records)
    return delta.apply(base.offset + len(records), 1)


def acl(acl_id: str, principal: str = "User:alice") -> AccessControlEntryRecord:
    return AccessControlEntryRecord(id=acl_id, resource_type=2, resource_name="orders",
                                    pattern_type=3, principal=principal, host="*",
                                    operation=3, permission_type=3)


def scram(name: str, mechanism: int = 1, iterations: int = 4096) -> UserScramCredentialRecord:
    return UserScramCredentialRecord(name=name, mechanism=mechanism, salt=b"s", stored_key=b"k",
                                     server_key=b"v", iterations=iterations)


def token(token_id: str, expiration: int = 3) -> DelegationTokenRecord:
    return DelegationTokenRecord(owner="User:alice", requester="User:alice",
                                 renewers=("User:bob",), issue_timestamp=1, max_timestamp=9,
                                 expiration_timestamp=expiration, token_id=token_id)


FULL = (
    FeatureLevelRecord("metadata.version", 20),
    acl(ACL_1), acl(ACL_2, "User:bob"),
    scram("alice"), scram("alice", mechanism=2), scram("bob"),
    ClientQuotaRecord(ALICE, "producer_byte_rate", 1024.0),
    ClientQuotaRecord(ALICE, "consumer_byte_rate", 2048.0),
    ClientQuotaRecord(DEFAULT_CLIENT_OF_ALICE, "request_percentage", 50.0),
    token("tok-1"), token("tok-2"),
)


def test_the_image_keeps_each_by_its_key() -> None:
    image = image_of(*FULL)
    assert image.acls[ACL_2] == StandardAcl(resource_type=2, resource_name="orders",
                                            pattern_type=3, principal="User:bob", host="*",
                                            operation=3, permission_type=3)
    assert sorted(image.scram) == [1, 2]
    assert sorted(image.scram[1]) == ["alice", "bob"]
    assert image.scram[2]["alice"] == ScramCredentialData(salt=b"s", stored_key=b"k",
                                                          server_key=b"v", iterations=4096)
    assert dict(image.client_quotas[(("user", "alice"),)]) == {
        "producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}
    # the entity is a map: the order of its parts in the record is not content
    assert dict(image.client_quotas[(("client-id", None), ("user", "alice"))]) == {
        "request_percentage": 50.0}
    assert image.delegation_tokens["tok-2"] == DelegationTokenData(
        token_id="tok-2", owner="User:alice", requester="User:alice", renewers=("User:bob",),
        issue_timestamp=1, max_timestamp=9, expiration_timestamp=3)


def test_a_later_record_replaces_an_entry() -> None:
    image = image_of(*FULL, acl(ACL_1, "User:carol"), scram("bob", iterations=8192),
                     ClientQuotaRecord(ALICE, "producer_byte_rate", 1.5), token("tok-1", 99))
    assert image.acls[ACL_1].principal == "User:carol"
    assert image.scram[1]["bob"].iterations == 8192
    assert image.client_quotas[(("user", "alice"),)]["producer_byte_rate"] == 1.5
    assert image.delegation_tokens["tok-1"].expiration_timestamp == 99


def test_removals_remove_and_empty_groups_go() -> None:
    base = image_of(*FULL)
    image = image_of(
        RemoveAccessControlEntryRecord(ACL_1),
        RemoveUserScramCredentialRecord("alice", 2),
        ClientQuotaRecord(DEFAULT_CLIENT_OF_ALICE[::-1], "request_percentage", 0.0, remove=True),
        ClientQuotaRecord(ALICE, "producer_byte_rate", 7.0, remove=True),
        RemoveDelegationTokenRecord("tok-1"),
        base=base)
    assert list(image.acls) == [ACL_2]
    assert list(image.scram) == [1]  # the mechanism left without users goes
    assert list(image.client_quotas) == [(("user", "alice"),)]  # so does the entity
    assert dict(image.client_quotas[(("user", "alice"),)]) == {"consumer_byte_rate": 2048.0}
    assert list(image.delegation_tokens) == ["tok-2"]
    assert image.topics_by_id is base.topics_by_id  # nothing else is touched


def test_an_unknown_acl_cannot_be_removed_but_other_removals_may_miss() -> None:
    with pytest.raises(ReplayError, match=f"unknown ACL id {ACL_1}"):
        image_of(RemoveAccessControlEntryRecord(ACL_1))
    with pytest.raises(ReplayError):
        image_of(acl(ACL_1), RemoveAccessControlEntryRecord(ACL_1),
                 RemoveAccessControlEntryRecord(ACL_1))
    check = ReplayCheck(MetadataImage.EMPTY)
    with pytest.raises(ReplayError):
        check.replay(RemoveAccessControlEntryRecord(ACL_2))
    image = image_of(RemoveUserScramCredentialRecord("nobody", 1),
                     RemoveDelegationTokenRecord("none"),
                     ClientQuotaRecord(ALICE, "producer_byte_rate", 0.0, remove=True))
    assert image.same_content(MetadataImage.EMPTY)
    assert (len(image.scram), len(image.delegation_tokens), len(image.client_quotas)) == (0, 0, 0)


def test_added_and_removed_in_one_delta_leaves_nothing() -> None:
    image = image_of(acl(ACL_1), RemoveAccessControlEntryRecord(ACL_1), scram("x"),
                     RemoveUserScramCredentialRecord("x", 1), token("t"),
                     RemoveDelegationTokenRecord("t"))
    assert image.same_content(MetadataImage.EMPTY)
    assert image.acls == image.scram == image.delegation_tokens == MetadataImage.EMPTY.acls


def test_a_snapshot_keeps_them_in_kafkas_order() -> None:
    image = image_of(*FULL)
    records = image_to_records(image)
    assert image_from_records(records, image.offset, image.epoch) == image
    kinds = [type(r).__name__ for r in records]
    assert kinds == ["FeatureLevelRecord", *["ClientQuotaRecord"] * 3,
                     *["AccessControlEntryRecord"] * 2, *["UserScramCredentialRecord"] * 3,
                     *["DelegationTokenRecord"] * 2]
    assert image_to_records(image_of(*reversed(FULL[1:]), FULL[0])) == records  # sorted


def test_the_digest_follows_the_content() -> None:
    image = image_of(*FULL)
    assert not image.same_content(image_of(*FULL[:-1]))
    changed = image_of(ClientQuotaRecord(ALICE, "producer_byte_rate", 1.0), base=image)
    assert not changed.same_content(image)
    back = image_of(ClientQuotaRecord(ALICE, "producer_byte_rate", 1024.0), base=changed)
    assert back.same_content(image)


OPS = st.lists(st.tuples(st.sampled_from(["acl", "-acl", "scram", "-scram", "quota", "-quota",
                                          "token", "-token"]),
                         st.sampled_from(["a", "b", "c"]), st.integers(1, 2),
                         st.integers(0, 3)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(OPS, st.lists(st.integers(1, 6), min_size=1, max_size=8))
def test_any_mix_over_any_delta_boundaries_equals_a_plain_model(
        ops: list[tuple[str, str, int, int]], cuts: list[int]) -> None:
    acl_ids = {"a": ACL_1, "b": ACL_2, "c": "AAAAAAAAAAAAAAAAAAAAAg"}
    model: dict[str, dict[object, object]] = {"acl": {}, "scram": {}, "quota": {}, "token": {}}
    records: list[MetadataRecord] = []
    for op, key, mechanism, value in ops:
        if op == "acl":
            records.append(acl(acl_ids[key], f"User:{value}"))
            model["acl"][acl_ids[key]] = f"User:{value}"
        elif op == "-acl":
            if acl_ids[key] not in model["acl"]:
                continue  # cannot apply: left out
            records.append(RemoveAccessControlEntryRecord(acl_ids[key]))
            del model["acl"][acl_ids[key]]
        elif op == "scram":
            records.append(scram(key, mechanism, value + 4096))
            model["scram"][mechanism, key] = value + 4096
        elif op == "-scram":
            records.append(RemoveUserScramCredentialRecord(key, mechanism))
            model["scram"].pop((mechanism, key), None)
        elif op in ("quota", "-quota"):
            remove = op == "-quota"
            entity = (EntityData("user", key),) if mechanism == 1 else \
                (EntityData("user", key), EntityData("client-id", None))
            records.append(ClientQuotaRecord(entity, f"k{value}", float(value), remove=remove))
            if remove:
                model["quota"].pop((key, mechanism, value), None)
            else:
                model["quota"][key, mechanism, value] = float(value)
        elif op == "token":
            records.append(token(key, value))
            model["token"][key] = value
        else:
            records.append(RemoveDelegationTokenRecord(key))
            model["token"].pop(key, None)
    image, start, cut = MetadataImage.EMPTY, 0, 0
    while start < len(records):
        stop = start + cuts[cut % len(cuts)]
        image = image_of(*records[start:stop], base=image)
        start, cut = stop, cut + 1
    assert {i: a.principal for i, a in image.acls.items()} == model["acl"]
    assert {(m, u): d.iterations for m, users in image.scram.items()
            for u, d in users.items()} == model["scram"]
    assert {(dict(e)["user"], len(e), int(k[1:])): v for e, keys in image.client_quotas.items()
            for k, v in keys.items()} == model["quota"]
    assert {t: d.expiration_timestamp for t, d in image.delegation_tokens.items()} == \
        model["token"]
    rebuilt = image_from_records(image_to_records(image), image.offset, image.epoch)
    assert rebuilt == image and rebuilt.same_content(image_of(*records))
