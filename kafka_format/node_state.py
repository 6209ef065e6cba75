"""A KRaft node's small text files: ``quorum-state`` and ``meta.properties``.

``quorum-state`` (in ``__cluster_metadata-0/``) is the JSON form of Kafka's
QuorumStateData plus a ``data_version`` key: version 0 has clusterId,
leaderId, leaderEpoch, votedId, appliedOffset, currentVoters
(``[{"voterId": n}]``); version 1 has leaderId, leaderEpoch, votedId,
votedDirectoryId. Kafka writes it compact, keys in that order, and reads
only a file that holds every field of its version.

``meta.properties`` (in the log directory) is a Java properties file with
``version``, ``cluster.id``, the node id (``broker.id`` at version 0, the
ZooKeeper era; ``node.id`` at version 1) and optionally ``directory.id``.
This module parses and formats both as text; :mod:`kafka_format.files`
reads and writes them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from kafka_format.checkpoints import java_lines
from kafka_format.errors import DecodeError
from metadata.java_int import INT_MAX, INT_MIN, parse_java_int
from metadata.uuids import ZERO_UUID, uuid_to_bytes


class QuorumState(msgspec.Struct, frozen=True, gc=False):
    """A node's persisted election state (``quorum-state``).

    Fields that a ``data_version`` does not have keep their defaults:
    ``cluster_id``, ``applied_offset`` and ``current_voters`` are version 0
    only, ``voted_directory_id`` is version 1 only.
    """

    leader_id: int = -1
    leader_epoch: int = -1
    voted_id: int = -1
    data_version: int = 1
    voted_directory_id: str = ZERO_UUID
    cluster_id: str = ""
    applied_offset: int = 0
    current_voters: tuple[int, ...] | None = None


def _int(data: dict[str, Any], key: str, default: int, bits: int = 32) -> int:
    """A field as Kafka's ``MessageUtil.jsonNodeToInt`` (``bits`` 64: ``jsonNodeToLong``)
    reads it: a JSON integer within the Java type's range."""
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise DecodeError(f"quorum-state field {key!r} is not an integer: {value!r}", 0)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise DecodeError(f"quorum-state field {key!r} does not fit in {bits} bits: {value}", 0)
    return value


def _java_short_value(value: object) -> int:
    """Jackson's ``JsonNode.shortValue()``: a number cast to a Java short (a fraction cut
    off, wrapped to 16 bits), and 0 for anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float):  # Java narrows a double to an int first, saturating
        value = INT_MAX if value >= INT_MAX else INT_MIN if value <= INT_MIN else int(value)
    return (value + 2**15) % 2**16 - 2**15


_MANDATORY_FIELDS = {
    0: ("clusterId", "leaderId", "leaderEpoch", "votedId", "appliedOffset", "currentVoters"),
    1: ("leaderId", "leaderEpoch", "votedId", "votedDirectoryId"),
}
"""The fields each QuorumStateData version must hold (Kafka's JSON reader refuses a file
without one; ``currentVoters`` may be null, never missing)."""


def _text(data: dict[str, Any], key: str, default: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise DecodeError(f"quorum-state field {key!r} is not a string: {value!r}", 0)
    return value


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def parse_quorum_state(text: str) -> QuorumState:
    """The state in a ``quorum-state`` file's text, read as Kafka's ``FileQuorumStateStore``
    reads it: the first line alone is parsed (what follows the JSON object on it is not
    read); ``data_version`` must be there and is read as Jackson's ``shortValue`` reads a
    node (a non-number is 0); it must be 0 or 1; every field of that version must be there,
    integers within their Java type. Raises :class:`DecodeError`."""
    lines = java_lines(text)
    if not lines:
        raise DecodeError("File ended prematurely.", 0, "truncated")
    first = lines[0][1]
    try:
        data, _ = json.JSONDecoder(parse_constant=_refuse_constant).raw_decode(
            first.lstrip(" \t"))
    except ValueError as exc:
        raise DecodeError(f"quorum-state is not JSON: {exc}", 0) from None
    if not isinstance(data, dict):
        raise DecodeError("quorum-state is not a JSON object", 0)
    if "data_version" not in data:
        raise DecodeError("quorum-state has no data_version field", 0)
    version = _java_short_value(data["data_version"])
    if version not in (0, 1):
        raise DecodeError(f"data_version ({version}) is not within the min (0) and max (1) "
                          "supported version", 0, "unsupported")
    for field in _MANDATORY_FIELDS[version]:
        if field not in data:
            raise DecodeError(f"QuorumStateData: unable to locate field '{field}', which is "
                              f"mandatory in version {version}", 0)
    voters: tuple[int, ...] | None = None
    raw_voters = data.get("currentVoters")
    if raw_voters is not None:
        if not isinstance(raw_voters, list):
            raise DecodeError("quorum-state currentVoters is not a list", 0)
        if not all(isinstance(entry, dict) for entry in raw_voters):
            raise DecodeError("quorum-state currentVoters holds a non-object", 0)
        if not all("voterId" in entry for entry in raw_voters):
            raise DecodeError("Voter: unable to locate field 'voterId', which is mandatory "
                              "in version 0", 0)
        voters = tuple(_int(entry, "voterId", -1) for entry in raw_voters)
    directory = _text(data, "votedDirectoryId", ZERO_UUID)
    try:
        uuid_to_bytes(directory)
    except ValueError as exc:
        raise DecodeError(f"quorum-state field 'votedDirectoryId': {exc}", 0) from None
    return QuorumState(
        leader_id=_int(data, "leaderId", -1),
        leader_epoch=_int(data, "leaderEpoch", -1),
        voted_id=_int(data, "votedId", -1),
        data_version=version,
        voted_directory_id=directory,
        cluster_id=_text(data, "clusterId", ""),
        applied_offset=_int(data, "appliedOffset", 0, bits=64),
        current_voters=voters,
    )


def format_quorum_state(state: QuorumState) -> str:
    """The ``quorum-state`` text Kafka writes for ``state`` (compact JSON, Kafka's key order)."""
    data: dict[str, Any] = {}
    if state.data_version == 0:
        data["clusterId"] = state.cluster_id
    data["leaderId"] = state.leader_id
    data["leaderEpoch"] = state.leader_epoch
    data["votedId"] = state.voted_id
    if state.data_version >= 1:
        data["votedDirectoryId"] = state.voted_directory_id
    else:
        data["appliedOffset"] = state.applied_offset
        data["currentVoters"] = (
            None if state.current_voters is None
            else [{"voterId": voter} for voter in state.current_voters]
        )  # fmt: skip
    data["data_version"] = state.data_version
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


class MetaProperties(msgspec.Struct, frozen=True, gc=False):
    """``meta.properties``: the identity of a log directory.

    ``comments`` are the leading ``#`` lines (Kafka writes an empty one and a
    timestamp); keeping them lets a file be written back byte for byte.
    """

    version: int = 1
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None
    comments: tuple[str, ...] = ("",)


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _unescape(text: str) -> str:
    """Java's ``Properties.loadConvert``: ``\\uXXXX`` (exactly four hex digits, else
    "Malformed \\uxxxx encoding."), ``\\t \\n \\r \\f``, and any other escaped
    character as itself."""
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        nxt = next(chars, "")
        if nxt == "u":
            digits = "".join(next(chars, "") for _ in range(4))
            if len(digits) != 4 or not set(digits) <= _HEX_DIGITS:
                raise DecodeError("Malformed \\uxxxx encoding.", 0)
            out.append(chr(int(digits, 16)))
        else:
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(nxt, nxt))
    return "".join(out)


def _escape(text: str, is_key: bool) -> str:
    out = []
    for index, char in enumerate(text):
        if char in "\\=:#!" or (char == " " and (is_key or index == 0)):
            out.append("\\" + char)
        elif char in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[char])
        else:
            out.append(char)
    return "".join(out)


_PROPERTIES_BLANKS = " \t\f"
"""What Java's properties reader skips before a line and around a key's separator."""


def _trailing_backslashes(text: str) -> int:
    return len(text) - len(text.rstrip("\\"))


def _logical_lines(text: str) -> tuple[list[str], list[str]]:
    """The logical lines of a Java properties file and its comment lines before the first
    of them, as Java's ``Properties.LineReader`` reads them: natural lines end at ``\\n``,
    ``\\r`` or ``\\r\\n``; blanks (space, tab, form feed) before a line are skipped;
    blank lines and lines starting ``#`` or ``!`` are skipped; a line ending in an odd
    number of backslashes goes on with the next natural line, its blanks skipped (the
    last backslash dropped)."""
    lines: list[str] = []
    comments: list[str] = []
    current: str | None = None
    for natural in re.split(r"\r\n|\r|\n", text):
        stripped = natural.lstrip(_PROPERTIES_BLANKS)
        if current is None:
            if not stripped:
                continue
            if stripped[0] in "#!":
                if not lines:
                    comments.append(stripped[1:])
                continue
            current = ""
        current += stripped
        if _trailing_backslashes(stripped) % 2:
            current = current[:-1]
            continue
        lines.append(current)
        current = None
    if current is not None:  # the file ends in a continuation
        lines.append(current)
    return lines, comments


def parse_properties(text: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """A Java properties file's entries and its leading comment lines (without ``#``), read
    as Java's ``Properties.load`` reads them (see :func:`_logical_lines`): a key ends at
    the first unescaped ``=``, ``:`` or blank; blanks, then one ``=`` or ``:`` if none ended
    the key, then blanks, come before the value; a later repeat of a key wins. Raises
    :class:`DecodeError` for a malformed ``\\u`` escape."""
    entries: dict[str, str] = {}
    lines, comments = _logical_lines(text)
    for line in lines:
        key_end, value_start, separated, escaped = len(line), len(line), False, False
        for index, char in enumerate(line):
            if not escaped and char in "=:":
                key_end, value_start, separated = index, index + 1, True
                break
            if not escaped and char in _PROPERTIES_BLANKS:
                key_end, value_start = index, index + 1
                break
            escaped = not escaped if char == "\\" else False
        while value_start < len(line):
            char = line[value_start]
            if char not in _PROPERTIES_BLANKS:
                if separated or char not in "=:":
                    break
                separated = True
            value_start += 1
        entries[_unescape(line[:key_end])] = _unescape(line[value_start:])
    return entries, tuple(comments)


def _java_trim(text: str) -> str:
    """Java's ``String.trim``: every character up to U+0020 off both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _meta_version(text: str) -> int:
    """Kafka's ``MetaPropertiesVersion.fromNumberString``: a Java int once trimmed, 0 or 1."""
    version = parse_java_int(_java_trim(text))
    if version is None:
        raise DecodeError(f"Invalid meta.properties version string '{text}'", 0)
    if version not in (0, 1):
        raise DecodeError(f"Unknown meta.properties version number {version}", 0, "unsupported")
    return version


def _required_int(entries: dict[str, str], key: str) -> int:
    """Kafka's ``PropertiesUtils.loadRequiredIntProp``: the key's value as a Java int."""
    if key not in entries:
        raise DecodeError(f"Failed to find {key}", 0)
    value = parse_java_int(entries[key])
    if value is None:
        raise DecodeError(f"Unable to read {key} as a base-10 number.", 0)
    return value


def parse_meta_properties(text: str) -> MetaProperties:
    """The identity in a ``meta.properties`` file's text, read as Kafka's MetaProperties
    reads it, in its order: the version (none: 0); the node id, ``broker.id`` at version 0
    (ZooKeeper-era brokers, may lack it) and ``node.id`` at version 1 (required), a Java
    int; a ``directory.id`` must be a Kafka Uuid; a version-1 file must have
    ``cluster.id`` (and its node id). Raises :class:`DecodeError` with Kafka's message."""
    entries, comments = parse_properties(text)
    version = _meta_version(entries.get("version", "0"))
    node_id: int | None = None
    if version == 0:
        if "broker.id" in entries:
            node_id = _required_int(entries, "broker.id")
    else:
        node_id = _required_int(entries, "node.id")
    directory_id = entries.get("directory.id")
    if directory_id is not None:
        try:
            uuid_to_bytes(directory_id)
        except ValueError as exc:
            raise DecodeError(f"Unable to read directory.id as a Uuid: {exc}", 0) from None
    cluster_id = entries.get("cluster.id")
    if version == 1 and cluster_id is None:
        raise DecodeError("cluster.id was not found.", 0)
    return MetaProperties(
        version=version,
        cluster_id=cluster_id,
        node_id=node_id,
        directory_id=directory_id,
        comments=comments,
    )


def format_meta_properties(meta: MetaProperties) -> str:
    """``meta.properties`` text; keys in the order Kafka's (hash-ordered) writer emits them
    (the node id is ``broker.id`` at version 0, ``node.id`` from version 1)."""
    node_id = None if meta.node_id is None else str(meta.node_id)
    entries = {
        "node.id": node_id if meta.version != 0 else None,
        "broker.id": node_id if meta.version == 0 else None,
        "directory.id": meta.directory_id,
        "version": str(meta.version),
        "cluster.id": meta.cluster_id,
    }
    lines = [f"#{comment}" for comment in meta.comments]
    lines.extend(
        f"{_escape(key, True)}={_escape(value, False)}"
        for key, value in entries.items()
        if value is not None
    )
    return "\n".join(lines) + "\n"
