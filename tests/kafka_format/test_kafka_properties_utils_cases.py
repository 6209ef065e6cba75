"""Kafka's PropertiesUtilsTest, against kraftsim's Java properties reader and its
``meta.properties`` writer (:mod:`kafka_format.node_state`).

Kafka class followed: ``PropertiesUtilsTest``
(``metadata/src/test/java/org/apache/kafka/metadata/properties``). kraftsim writes only
``meta.properties`` files, so the write case round-trips one of those; the required-int
cases go through a ``meta.properties`` ``node.id``, the one required int kraftsim reads.

Ported: testReadPropertiesFile, testWritePropertiesFile (its fsync flag aside: kraftsim's
writer returns the text), loadRequiredIntProp, loadMissingRequiredIntProp,
loadNonIntegerRequiredIntProp.

Not ported: none.
"""

from __future__ import annotations

import pytest

from kafka_format.errors import DecodeError
from kafka_format.node_state import (
    MetaProperties,
    format_meta_properties,
    parse_meta_properties,
    parse_properties,
)

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"


def test_read_properties_file() -> None:
    entries, _ = parse_properties("a=1\nb=2\n#a comment\n\nc=3\nd=")
    assert entries == {"a": "1", "b": "2", "c": "3", "d": ""}


def test_write_properties_file() -> None:
    meta = MetaProperties(version=1, cluster_id=CLUSTER_ID, node_id=123,
                          directory_id="Dg9hXmUAQsaa-UlQTzVsNw")
    text = format_meta_properties(meta)
    assert parse_meta_properties(text) == meta
    assert parse_properties(text)[0] == {"node.id": "123", "directory.id": meta.directory_id,
                                         "version": "1", "cluster.id": CLUSTER_ID}


def test_load_required_int_prop() -> None:
    meta = parse_meta_properties(f"version=1\ncluster.id={CLUSTER_ID}\nnode.id=123\n")
    assert meta.node_id == 123


@pytest.mark.parametrize(("line", "message"), [
    ("", "Failed to find node.id"),
    ("node.id=b\n", "Unable to read node.id as a base-10 number."),
])
def test_missing_or_non_integer_required_int_prop(line: str, message: str) -> None:
    with pytest.raises(DecodeError) as refused:
        parse_meta_properties(f"version=1\ncluster.id={CLUSTER_ID}\n{line}")
    assert str(refused.value).startswith(message), str(refused.value)
