"""``/image/acls``, ``/image/scram``, ``/image/clientQuotas`` and ``/image/delegationToken``
over Kafka files that hold such records: Kafka's names and layout, secrets redacted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_format import write_node_log, write_snapshot_file
from kraftsim.cli import main
from metadata import schema as rec
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage
from metadata.snapshot import image_to_records
from raft import Batch, Snapshot, SnapshotId
from shell.file_source import open_files
from shell.security_tree import java_double_text, quota_entity_name
from tests.shell.shell_recorder import Recorder

ACL_1 = "YNY5hm01SZ-bAGeCLAGqWA"
ACL_2 = "h6pDfZcK7RCGV0SBTRYdAA"
SECRET = bytes.fromhex("00ff10")


def acl(acl_id: str, principal: str, operation: int) -> rec.AccessControlEntryRecord:
    return rec.AccessControlEntryRecord(id=acl_id, resource_type=2, resource_name="orders",
                                        pattern_type=4, principal=principal, host="*",
                                        operation=operation, permission_type=3)


def scram(name: str, mechanism: int) -> rec.UserScramCredentialRecord:
    return rec.UserScramCredentialRecord(name=name, mechanism=mechanism, salt=SECRET,
                                         stored_key=b"\x01", server_key=b"\x02",
                                         iterations=4096)


def quota(entity: tuple[rec.EntityData, ...], key: str, value: float,
          remove: bool = False) -> rec.ClientQuotaRecord:
    return rec.ClientQuotaRecord(entity=entity, key=key, value=value, remove=remove)


ALICE = (rec.EntityData("user", "alice"),)
APP_OF_DEFAULT_USER = (rec.EntityData("user", None), rec.EntityData("client-id", "app(1)"))

CREATED = (
    rec.FeatureLevelRecord("metadata.version", 20),
    acl(ACL_1, "User:alice", 3), acl(ACL_2, "User:bob", 4),
    scram("alice", 1), scram("bob", 1), scram("alice", 2),
    quota(ALICE, "producer_byte_rate", 10485760.0), quota(ALICE, "consumer_byte_rate", 2048.0),
    quota(APP_OF_DEFAULT_USER, "request_percentage", 12.5),
    rec.DelegationTokenRecord(owner="User:alice", requester="User:admin",
                              renewers=("User:bob", "User:carol"), issue_timestamp=100,
                              max_timestamp=300, expiration_timestamp=200, token_id="tok-1"),
)
REMOVED = (
    rec.RemoveAccessControlEntryRecord(ACL_2),
    rec.RemoveUserScramCredentialRecord("alice", 2),
    quota(ALICE, "producer_byte_rate", 0.0, remove=True),
    quota(APP_OF_DEFAULT_USER, "request_percentage", 0.0, remove=True),
    rec.RemoveDelegationTokenRecord("tok-1"),
)


def files_shell(tmp_path: Path, *batches: tuple[rec.MetadataRecord, ...],
                show_secrets: bool = False) -> Recorder:
    offset, written = 0, []
    for records in batches:
        written.append(Batch(offset, 1, records, (), 1_000 + offset))
        offset += len(records)
    write_node_log(tmp_path, written, metadata_version=20)
    shell = Recorder()
    shell.session.files = open_files(str(tmp_path), None)
    shell.session.redact = not show_secrets
    assert shell.session.files.warnings == []
    return shell


def test_image_lists_kafkas_children_and_they_are_there_when_empty(tmp_path: Path) -> None:
    shell = files_shell(tmp_path, (rec.FeatureLevelRecord("metadata.version", 20),))
    assert sorted(word for line in shell.run("ls /image") for word in line.split()) == [
        "acls", "clientQuotas", "cluster", "configs", "delegationToken", "features",
        "producerIds", "provenance", "scram", "topics"]
    assert shell.run("ls /image/acls", "ls /image/clientQuotas",
                     "ls /image/delegationToken") == []
    assert shell.run("ls /image/scram") == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert shell.run("ls /image/scram/SCRAM-SHA-512") == []


def test_ls_and_cat_show_each_as_kafkas_shell_does(tmp_path: Path) -> None:
    shell = files_shell(tmp_path, CREATED)
    assert shell.run("ls /image/acls") == [ACL_1, ACL_2]
    assert shell.run(f"cat /image/acls/{ACL_1}") == [
        "StandardAcl(resourceType=TOPIC, resourceName=orders, patternType=PREFIXED, "
        "principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"]
    assert shell.run("ls /image/scram/SCRAM-SHA-256", "ls /image/scram/SCRAM-SHA-512") == [
        "alice", "bob", "alice"]
    assert shell.run("ls /image/clientQuotas") == [
        "clientId(app\\(1\\))_user()", "user(alice)"]
    assert shell.run("ls '/image/clientQuotas/user(alice)'") == [
        "consumer_byte_rate", "producer_byte_rate"]
    assert shell.run("cat '/image/clientQuotas/user(alice)/producer_byte_rate'",
                     "cat '/image/clientQuotas/user(alice)/consumer_byte_rate'",
                     # a backslash in a path escapes the next character: doubled here
                     "cat '/image/clientQuotas/clientId(app\\\\(1\\\\))_user()/request_percentage'",
                     "cat '/image/clientQuotas/clientId(app*)_user()/request_percentage'",
                     ) == ["1.048576E7", "2048.0", "12.5", "12.5"]
    assert shell.run("ls /image/delegationToken") == ["tok-1"]


def test_secrets_are_redacted_unless_asked_for(tmp_path: Path) -> None:
    shell = files_shell(tmp_path, CREATED)
    redacted = "[redacted]"
    assert shell.run("cat /image/scram/SCRAM-SHA-256/alice") == [
        f"ScramCredentialData(salt={redacted}, storedKey={redacted}, serverKey={redacted}, "
        f"iterations={redacted})"]
    token = shell.run("cat /image/delegationToken/tok-1")[0]
    assert token == (
        f"DelegationTokenDatatokenId={redacted}(owner={redacted}(tokenRequester={redacted}"
        f"(renewers={redacted}, issueTimestamp={redacted}, maxTimestamp={redacted}), "
        f"expiryTimestamp={redacted}")
    every = "\n".join(shell.run("tree /image", "find /image"))
    assert "00ff10" not in every and "User:carol" not in every
    shell.session.format = "json"
    shown = json.loads(shell.run("cat /image/scram/SCRAM-SHA-512/alice")[0])
    assert set(shown["/image/scram/SCRAM-SHA-512/alice"].values()) == {redacted}

    shell.session.format = "text"
    shell.session.redact = False
    assert shell.run("cat /image/scram/SCRAM-SHA-256/alice") == [
        "ScramCredentialData(salt=00ff10, storedKey=01, serverKey=02, iterations=4096)"]
    assert shell.run("cat /image/delegationToken/tok-1") == [
        "DelegationTokenDatatokenId=tok-1(owner=User:alice(tokenRequester=User:admin"
        "(renewers=User:bob User:carol, issueTimestamp=100, maxTimestamp=300), "
        "expiryTimestamp=200"]


def test_removals_in_a_later_batch_remove(tmp_path: Path) -> None:
    shell = files_shell(tmp_path, CREATED, REMOVED)
    assert shell.run("ls /image/acls") == [ACL_1]
    assert shell.run("ls /image/scram/SCRAM-SHA-256", "ls /image/scram/SCRAM-SHA-512") == [
        "alice", "bob"]
    assert shell.run("ls /image/clientQuotas", "ls '/image/clientQuotas/user(alice)'") == [
        "user(alice)", "consumer_byte_rate"]
    assert shell.run("ls /image/delegationToken") == []
    (error,) = shell.run("cat '/image/clientQuotas/user(alice)/producer_byte_rate'")
    assert error.startswith("ERR cat: /image/clientQuotas/user(alice)/producer_byte_rate: no "
                            "such file or directory")


def test_a_snapshot_of_them_reads_back_in_the_shell(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    delta = MetadataDelta(MetadataImage.EMPTY)
    delta.replay_all(CREATED)
    image = delta.apply(len(CREATED) - 1, 1)
    path = write_snapshot_file(tmp_path, Snapshot(SnapshotId(len(CREATED), 1),
                                                  tuple(image_to_records(image)), 5_000),
                               metadata_version=20)
    source = open_files(None, str(path))
    assert source.warnings == [] and source.image.same_content(image)
    assert (source.image.acls, source.image.scram, source.image.client_quotas,
            source.image.delegation_tokens) == (image.acls, image.scram, image.client_quotas,
                                                image.delegation_tokens)
    assert main(["shell", "--snapshot", str(path), "--show-secrets", "-c",
                 "cat /image/scram/SCRAM-SHA-512/alice", "-c", "ls /image/acls"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ScramCredentialData(salt=00ff10, storedKey=01, serverKey=02, iterations=4096)",
        ACL_1, ACL_2]
    assert main(["shell", "--snapshot", str(path), "cat",
                 "/image/scram/SCRAM-SHA-512/alice"]) == 0
    assert "[redacted]" in capsys.readouterr().out


@pytest.mark.parametrize(("value", "text"), [
    (1024.0, "1024.0"), (0.5, "0.5"), (12.5, "12.5"), (10485760.0, "1.048576E7"),
    (1e7, "1.0E7"), (9999999.0, "9999999.0"), (0.001, "0.001"), (0.0001, "1.0E-4"),
    (1.5e300, "1.5E300"), (-2e-5, "-2.0E-5"), (0.0, "0.0"), (-0.0, "-0.0"),
    (float("inf"), "Infinity"), (float("nan"), "NaN"),
])
def test_quota_values_print_as_java_prints_a_double(value: float, text: str) -> None:
    assert java_double_text(value) == text


@pytest.mark.parametrize(("entity", "name"), [
    ((("user", "alice"),), "user(alice)"),
    ((("client-id", "reports12345"), ("user", "bob")), "clientId(reports12345)_user(bob)"),
    ((("ip", "127.0.0.1"),), "ip(127.0.0.1)"),
    ((("user", None),), "user()"),
    ((("user", "foo\\bar"),), "user(foo\\\\bar)"),
    ((("client-id", "(this )one)"),), "clientId(\\(this \\)one\\))"),
])
def test_entity_names_are_kafkas(entity: tuple[tuple[str, str | None], ...], name: str) -> None:
    assert quota_entity_name(entity) == name


def test_the_default_user_wins_over_an_empty_named_one_under_the_same_name(
        tmp_path: Path) -> None:
    """The default user and a user named "" are both ``user()``: the default's quotas show."""
    shell = files_shell(tmp_path, (rec.FeatureLevelRecord("metadata.version", 20),
                                   quota((rec.EntityData("user", ""),), "consumer_byte_rate", 1.0),
                                   quota((rec.EntityData("user", None),), "consumer_byte_rate",
                                         2.0)))
    assert shell.run("ls /image/clientQuotas") == ["user()"]
    assert shell.run("cat '/image/clientQuotas/user()/consumer_byte_rate'") == ["2.0"]

