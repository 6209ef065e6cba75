"""ACL, SCRAM, client quota and delegation token records: Kafka's bytes in, the same bytes out.

The expected bytes are built here, field by field, from Kafka's schemas
(``metadata/src/main/resources/common/metadata/*.json``: every one of these
records has version 0 only, flexible), with none of kraftsim's encoder.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from kafka_format import decode_metadata_record, encode_metadata_record, write_node_log
from kafka_format.metadata_serde import decode_generic_value, supported_versions
from kraftsim.dump_log import main as dump_log
from metadata import schema as rec
from metadata.uuids import uuid_to_bytes
from raft import Batch

ACL_ID = "YNY5hm01SZ-bAGeCLAGqWA"
TOKEN_ID = "4Ex5-QJdTv6QZ7Tm9e0YhQ"


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def compact(data: bytes | None) -> bytes:
    return b"\x00" if data is None else uvarint(len(data) + 1) + data


def text(value: str | None) -> bytes:
    return compact(None if value is None else value.encode())


def frame(api_key: int, *fields: bytes) -> bytes:
    """Frame version 1, apiKey, version 0, the fields, an empty tagged-field section."""
    return bytes([1, api_key, 0]) + b"".join(fields) + b"\x00"


def i8(value: int) -> bytes:
    return struct.pack(">b", value)


def i32(value: int) -> bytes:
    return struct.pack(">i", value)


def i64(value: int) -> bytes:
    return struct.pack(">q", value)


SALT = bytes(range(16))
STORED_KEY = bytes(range(100, 132))
SERVER_KEY = b"\xff" * 200  # a length that takes a two-byte varint

KAFKA_BYTES: list[tuple[bytes, rec.MetadataRecord]] = [
    (frame(10, text("User:alice"), text("User:admin"),
           uvarint(3) + text("User:bob") + text("User:\u00e9va"),
           i64(1_700_000_000_000), i64(1_700_604_800_000), i64(1_700_086_400_000),
           text(TOKEN_ID)),
     rec.DelegationTokenRecord(
         owner="User:alice", requester="User:admin", renewers=("User:bob", "User:\u00e9va"),
         issue_timestamp=1_700_000_000_000, max_timestamp=1_700_604_800_000,
         expiration_timestamp=1_700_086_400_000, token_id=TOKEN_ID)),
    (frame(11, text("alice"), i8(1), compact(SALT), compact(STORED_KEY), compact(SERVER_KEY),
           i32(4096)),
     rec.UserScramCredentialRecord(name="alice", mechanism=1, salt=SALT,
                                   stored_key=STORED_KEY, server_key=SERVER_KEY,
                                   iterations=4096)),
    (frame(14, uvarint(3) + text("user") + text("alice") + b"\x00"
           + text("client-id") + text(None) + b"\x00",
           text("producer_byte_rate"), struct.pack(">d", 1048576.0), b"\x00"),
     rec.ClientQuotaRecord(entity=(rec.EntityData("user", "alice"),
                                   rec.EntityData("client-id", None)),
                           key="producer_byte_rate", value=1048576.0)),
    (frame(14, uvarint(2) + text("ip") + text("10.0.0.1") + b"\x00",
           text("connection_creation_rate"), struct.pack(">d", 0.0), b"\x01"),
     rec.ClientQuotaRecord(entity=(rec.EntityData("ip", "10.0.0.1"),),
                           key="connection_creation_rate", value=0.0, remove=True)),
    (frame(18, uuid_to_bytes(ACL_ID), i8(2), text("orders-"), i8(4), text("User:alice"),
           text("*"), i8(3), i8(3)),
     rec.AccessControlEntryRecord(id=ACL_ID, resource_type=2, resource_name="orders-",
                                  pattern_type=4, principal="User:alice", host="*",
                                  operation=3, permission_type=3)),
    (frame(19, uuid_to_bytes(ACL_ID)), rec.RemoveAccessControlEntryRecord(id=ACL_ID)),
    (frame(22, text("alice"), i8(2)),
     rec.RemoveUserScramCredentialRecord(name="alice", mechanism=2)),
    (frame(26, text(TOKEN_ID)), rec.RemoveDelegationTokenRecord(token_id=TOKEN_ID)),
]  # fmt: skip


@pytest.mark.parametrize(("data", "record"), KAFKA_BYTES,
                         ids=[type(r).__name__ for _, r in KAFKA_BYTES])
def test_kafka_bytes_decode_to_the_fields_and_encode_back(data: bytes,
                                                          record: rec.MetadataRecord) -> None:
    decoded = decode_metadata_record(data)
    assert decoded.record == record and type(decoded.record) is type(record)
    assert (decoded.version, decoded.unknown_tagged_fields) == (0, ())
    assert decode_generic_value(data, 0, len(data)) == decoded  # fast path and reference agree
    assert encode_metadata_record(decoded.record, 0) == data


@pytest.mark.parametrize("api_key", [10, 11, 14, 18, 19, 22, 26])
def test_every_record_has_kafkas_only_version(api_key: int) -> None:
    assert supported_versions(api_key) == range(1)
    assert api_key == rec.RECORD_TYPES[api_key].API_KEY


def test_an_unknown_tagged_field_survives() -> None:
    data = frame(26, text(TOKEN_ID))[:-1] + bytes([1, 7, 2, 0xAB, 0xCD])
    decoded = decode_metadata_record(data)
    assert decoded.record == rec.RemoveDelegationTokenRecord(token_id=TOKEN_ID)
    assert decoded.unknown_tagged_fields == ((7, b"\xab\xcd"),)
    assert encode_metadata_record(decoded.record, 0, decoded.unknown_tagged_fields) == data


def test_dump_log_prints_them_with_kafkas_json(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    records = tuple(record for _, record in KAFKA_BYTES)
    write_node_log(tmp_path, [Batch(0, 1, records, (), 1_000)], metadata_version=20)
    segment = tmp_path / "__cluster_metadata-0" / "00000000000000000000.log"
    assert dump_log(["--cluster-metadata-decoder", "--files", str(segment)]) == 0
    out = capsys.readouterr().out
    assert "UNKNOWN" not in out
    payloads = [json.loads(line.split("payload: ", 1)[1]) for line in out.splitlines()
                if "payload: " in line]
    assert [p["type"] for p in payloads] == [
        "DELEGATION_TOKEN_RECORD", "USER_SCRAM_CREDENTIAL_RECORD", "CLIENT_QUOTA_RECORD",
        "CLIENT_QUOTA_RECORD", "ACCESS_CONTROL_ENTRY_RECORD",
        "REMOVE_ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
        "REMOVE_DELEGATION_TOKEN_RECORD"]
    assert all(p["version"] == 0 for p in payloads)
    assert payloads[0]["data"] == {
        "owner": "User:alice", "requester": "User:admin", "renewers": ["User:bob", "User:éva"],
        "issueTimestamp": 1_700_000_000_000, "maxTimestamp": 1_700_604_800_000,
        "expirationTimestamp": 1_700_086_400_000, "tokenId": TOKEN_ID}
    scram = payloads[1]["data"]
    assert list(scram) == ["name", "mechanism", "salt", "storedKey", "serverKey", "iterations"]
    assert base64.b64decode(scram["salt"]) == SALT  # bytes as Kafka's JSON: base64
    assert base64.b64decode(scram["serverKey"]) == SERVER_KEY
    assert payloads[2]["data"] == {
        "entity": [{"entityType": "user", "entityName": "alice"},
                   {"entityType": "client-id", "entityName": None}],
        "key": "producer_byte_rate", "value": 1048576.0, "remove": False}
    assert payloads[4]["data"] == {
        "id": ACL_ID, "resourceType": 2, "resourceName": "orders-", "patternType": 4,
        "principal": "User:alice", "host": "*", "operation": 3, "permissionType": 3}
    assert payloads[6]["data"] == {"name": "alice", "mechanism": 2}


def test_dump_log_json_format_names_them(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    record = KAFKA_BYTES[4][1]
    write_node_log(tmp_path, [Batch(0, 1, (record,), (), 1_000)], metadata_version=20)
    segment = tmp_path / "__cluster_metadata-0" / "00000000000000000000.log"
    assert dump_log([str(segment), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (shown,) = [r for batch in document["batches"] for r in batch["records"]]
    assert shown["type"] == "ACCESS_CONTROL_ENTRY_RECORD" and shown["version"] == 0
    assert shown["data"]["principal"] == "User:alice"


def test_dump_log_prints_a_quota_as_java_prints_a_double(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Kafka's JSON converters write a double with Java's Double.toString: 1.048576E7, not
    10485760.0 (a value from 1e-3 up to 1e7 prints alike in both)."""
    quota = rec.ClientQuotaRecord(
        entity=(rec.EntityData("user", "alice"),), key="producer_byte_rate", value=10_485_760.0)
    write_node_log(tmp_path, [Batch(0, 1, (quota,), (), 1_000)], metadata_version=20)
    segment = tmp_path / "__cluster_metadata-0" / "00000000000000000000.log"
    assert dump_log([str(segment)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "payload: " in line)
    assert '"key":"producer_byte_rate","value":1.048576E7,"remove":false' in line
    assert json.loads(line.split("payload: ", 1)[1])["data"]["value"] == 10_485_760.0
