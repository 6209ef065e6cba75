"""A node's small files in both of Kafka's versions: ``quorum-state`` (QuorumStateData as
JSON, version 0 as Kafka 3.0-3.6 wrote it and version 1 from 3.7) and
``meta.properties`` (a Java properties file), with every malformed input refused."""

from __future__ import annotations

import pytest

from kafka_format.errors import DecodeError
from kafka_format.node_state import (
    MetaProperties,
    QuorumState,
    format_meta_properties,
    format_quorum_state,
    parse_meta_properties,
    parse_properties,
    parse_quorum_state,
)

VERSION_0 = ('{"clusterId":"","leaderId":1,"leaderEpoch":7,"votedId":-1,"appliedOffset":0,'
             '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')
VERSION_1 = ('{"leaderId":-1,"leaderEpoch":5,"votedId":2,'
             '"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')


def test_quorum_state_version_0_keeps_its_voters_and_round_trips() -> None:
    state = parse_quorum_state(VERSION_0)
    assert state == QuorumState(leader_id=1, leader_epoch=7, voted_id=-1, data_version=0,
                                cluster_id="", applied_offset=0, current_voters=(1, 2, 3))
    assert format_quorum_state(state) == VERSION_0
    unknown_voters = VERSION_0.replace('[{"voterId":1},{"voterId":2},{"voterId":3}]', "null")
    assert parse_quorum_state(unknown_voters).current_voters is None
    assert format_quorum_state(parse_quorum_state(unknown_voters)) == unknown_voters


def test_quorum_state_version_1_has_the_voted_directory_and_round_trips() -> None:
    state = parse_quorum_state(VERSION_1)
    assert state == QuorumState(leader_id=-1, leader_epoch=5, voted_id=2, data_version=1,
                                voted_directory_id="AAAAAAAAAAAAAAAAAAAAAA")
    assert format_quorum_state(state) == VERSION_1


@pytest.mark.parametrize(("text", "field"), [
    ('{"data_version":0}', "clusterId"),
    (VERSION_0.replace('"appliedOffset":0,', ""), "appliedOffset"),
    (VERSION_0.replace('"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],', ""),
     "currentVoters"),
    (VERSION_1.replace('"leaderEpoch":5,', ""), "leaderEpoch"),
    (VERSION_1.replace(',"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"', ""), "votedDirectoryId"),
])
def test_a_missing_quorum_state_field_is_refused_as_kafka_refuses_it(text: str,
                                                                     field: str) -> None:
    """Kafka's QuorumStateData JSON reader needs every field of the file's version (the
    voters may be null, not missing); kraftsim once read a missing one as its default."""
    with pytest.raises(DecodeError, match=f"unable to locate field '{field}', which is "
                                          f"mandatory in version"):
        parse_quorum_state(text)


@pytest.mark.parametrize(("text", "message"), [
    ("{", "is not JSON"),
    ("[]", "is not a JSON object"),
    ('{"leaderId":1}', "has no data_version field"),
    ('{"data_version":2}', r"data_version \(2\) is not within the min \(0\) and max \(1\)"),
    # Jackson's shortValue of a string is 0: a version-0 file lacking its fields
    ('{"data_version":"1"}', "unable to locate field 'clusterId'"),
    (VERSION_1.replace('"leaderEpoch":5', '"leaderEpoch":true'),
     "'leaderEpoch' is not an integer: True"),
    (VERSION_0.replace('[{"voterId":1},{"voterId":2},{"voterId":3}]', '{"voterId":1}'),
     "currentVoters is not a list"),
    (VERSION_0.replace('[{"voterId":1},{"voterId":2},{"voterId":3}]', "[1]"),
     "currentVoters holds a non-object"),
    (VERSION_0.replace('[{"voterId":1},{"voterId":2},{"voterId":3}]', '[{"voterId":1.5}]'),
     "'voterId' is not an integer"),
    (VERSION_0.replace('[{"voterId":1},{"voterId":2},{"voterId":3}]', "[{}]"),
     "unable to locate field 'voterId'"),
    (VERSION_0.replace('"clusterId":""', '"clusterId":7'), "'clusterId' is not a string"),
    (VERSION_1.replace('"AAAAAAAAAAAAAAAAAAAAAA"', '"no"'), "not a Kafka Uuid"),
])
def test_a_malformed_quorum_state_is_refused_with_its_reason(text: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message) as refused:
        parse_quorum_state(text)
    assert refused.value.position == 0


def test_meta_properties_as_kafka_writes_them_round_trip() -> None:
    text = ("#\n#Sat Nov 28 06:00:00 UTC 2026\nnode.id=1\n"
            "directory.id=J8aAPcfLQt2bqs1JT_rMgQ\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n")
    meta = parse_meta_properties(text)
    assert meta == MetaProperties(version=1, cluster_id="MkU3OEVBNTcwNTJENDM2Qk", node_id=1,
                                  directory_id="J8aAPcfLQt2bqs1JT_rMgQ",
                                  comments=("", "Sat Nov 28 06:00:00 UTC 2026"))
    assert format_meta_properties(meta) == text


def test_meta_properties_version_0_has_no_directory_and_no_node_is_none() -> None:
    meta = parse_meta_properties("version=0\ncluster.id=abc\n")
    assert (meta.version, meta.cluster_id, meta.node_id, meta.directory_id) == \
        (0, "abc", None, None)
    assert format_meta_properties(meta) == "version=0\ncluster.id=abc\n"  # no comments kept
    with pytest.raises(DecodeError, match=r"Unable to read node\.id as a base-10 number\."):
        parse_meta_properties("version=1\nnode.id=one\n")


def test_properties_follow_javas_syntax() -> None:
    """Separators '=', ':' or white space; escapes (\\t, \\uXXXX, an escaped separator);
    comments after the first entry are not the header."""
    entries, comments = parse_properties(
        "! header\n  a = 1\nb:2\nc 3\n# later\nd\\=e=\\u0041x\\tz\n\ne=\\ lead\n")
    assert comments == (" header",)
    assert entries == {"a": "1", "b": "2", "c": "3", "d=e": "Ax\tz", "e": " lead"}
    with pytest.raises(DecodeError, match=r"^Malformed \\uxxxx encoding\.$"):
        parse_properties("k=\\u00zz\n")
    odd = MetaProperties(cluster_id=" a=b:c#d!e\\f\tg", node_id=1, comments=())
    assert parse_meta_properties(format_meta_properties(odd)) == odd
    assert "cluster.id=\\ a\\=b\\:c\\#d\\!e\\\\f\\tg" in format_meta_properties(odd)


@pytest.mark.parametrize(("text", "entries"), [
    ("cluster.id=ab\\\n    cd\nnode.id=1\n", {"cluster.id": "abcd", "node.id": "1"}),
    ("k=a\\\\\nnext=2\n", {"k": "a\\", "next": "2"}),      # an even run: no continuation
    ("k=a\\\n# not a comment\n", {"k": "a# not a comment"}),  # a continued line is content
    ("k=a\\\n\nx=1\n", {"k": "a", "x": "1"}),               # continued by a blank line
    ("k=a\\", {"k": "a"}),                                  # the file ends continued
    ("a=1\rb=2\r\nc=3", {"a": "1", "b": "2", "c": "3"}),   # \r and \r\n end lines
    ("a=1\x0bb=2\n", {"a": "1\x0bb=2"}),                   # \v ends no line
    ("\x0ca=\x0c1\n", {"a": "1"}),                         # form feeds are blanks
    ("a := 1\n", {"a": "= 1"}),                             # one separator only
    ("\u00e9t\u00E9=1\n", {"\u00e9t\u00e9": "1"}),
    ("a=1\na=2\n", {"a": "2"}),
    ("=1\n:2\n", {"": "2"}),                               # a separator first: no key
    ("a==1\nb:=2\n", {"a": "=1", "b": "=2"}),               # after a separator, content
], ids=["continuation", "even-backslashes", "continued-hash", "continued-blank",
        "continued-at-end", "cr-lines", "vertical-tab", "form-feed", "one-separator",
        "unicode-escapes", "repeated-key", "empty-key", "separator-in-value"])
def test_properties_read_as_javas_properties_load(text: str, entries: dict[str, str]) -> None:
    """Java's line reader and key/value split, beyond what Kafka writes."""
    assert parse_properties(text)[0] == entries


@pytest.mark.parametrize("text", ["k=\\u12\n", "k=\\u+123\n", "k=\\u 123\n",
                                  "k=\\u1_23\n"])
def test_a_malformed_unicode_escape_is_refused(text: str) -> None:
    """``\\u`` takes exactly four hex digits (no sign, space or ``_``), with Java's words."""
    with pytest.raises(DecodeError, match=r"^Malformed \\uxxxx encoding\.$") as bad:
        parse_properties(text)
    assert bad.value.position == 0  # the file as a whole
