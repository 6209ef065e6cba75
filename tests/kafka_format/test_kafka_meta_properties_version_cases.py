"""The cases of Kafka's ``MetaPropertiesVersionTest``: the ``version`` of a
``meta.properties`` file and what each version promises.

Kafka's ``MetaPropertiesVersion`` is an enum (V0: the ZooKeeper era, V1: KRaft) with its
number, its text form, the parsing of both, and three promises: V0 names the node
``broker.id``, V1 always has a node id and a cluster id. kraftsim keeps the version as
the ``version`` int of :class:`~kafka_format.node_state.MetaProperties`; its number and
text are what :func:`~kafka_format.node_state.format_meta_properties` writes, its parsing
is :func:`~kafka_format.node_state.parse_meta_properties` (through Kafka's
``fromNumberString``: the text trimmed as Java trims, then ``Integer.parseInt``), and
the promises are checked on the files written and read.

Not ported: none; every method of the class is here.
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

CLUSTER_ID = "zd2vLVrZQlCLJj8-k7A10w"


def _written(version: int) -> dict[str, str]:
    meta = MetaProperties(version=version, cluster_id=CLUSTER_ID, node_id=1, comments=())
    return parse_properties(format_meta_properties(meta))[0]


@pytest.mark.parametrize("version", [0, 1], ids=["V0", "V1"])
def test_to_number_and_to_number_string(version: int) -> None:
    """testV0ToNumber, testV0ToNumberString, testV1ToNumber, testV1ToNumberString: the
    number written is the version's, in decimal."""
    assert _written(version)["version"] == str(version)


@pytest.mark.parametrize("version", [0, 1], ids=["V0", "V1"])
def test_from_number_and_from_number_string(version: int) -> None:
    """testV0FromNumber, testV0FromNumberString, testV1FromNumber, testV1FromNumberString."""
    text = f"version={version}\ncluster.id={CLUSTER_ID}\nnode.id=1\nbroker.id=1\n"
    assert parse_meta_properties(text).version == version


def test_from_invalid_number() -> None:
    """testFromInvalidNumber: Kafka's words."""
    with pytest.raises(DecodeError, match=r"^Unknown meta\.properties version number 2$"):
        parse_meta_properties("version=2\n")


def test_from_invalid_string() -> None:
    """testFromInvalidString: Kafka's words."""
    with pytest.raises(DecodeError,
                       match=r"^Invalid meta\.properties version string 'orange'$"):
        parse_meta_properties("version=orange\n")


def test_has_broker_id() -> None:
    """testHasBrokerId: V0 names the node ``broker.id``, V1 does not."""
    assert "broker.id" in _written(0) and "node.id" not in _written(0)
    assert "broker.id" not in _written(1) and "node.id" in _written(1)


def test_always_has_node_id() -> None:
    """testAlwaysHasNodeId: a V0 file may lack the node id, a V1 file may not."""
    assert parse_meta_properties(f"version=0\ncluster.id={CLUSTER_ID}\n").node_id is None
    with pytest.raises(DecodeError, match=r"^Failed to find node\.id$"):
        parse_meta_properties(f"version=1\ncluster.id={CLUSTER_ID}\n")


def test_always_has_cluster_id() -> None:
    """testAlwaysHasClusterId: a V0 file may lack the cluster id, a V1 file may not."""
    assert parse_meta_properties("version=0\nbroker.id=1\n").cluster_id is None
    with pytest.raises(DecodeError, match=r"^cluster\.id was not found\.$") as missing:
        parse_meta_properties("version=1\nnode.id=1\n")
    assert missing.value.position == 0  # the file as a whole


@pytest.mark.parametrize(("value", "version"), [
    ("1 ", 1), ("1\\t", 1), ("+1", 1), ("\u0661", 1), ("0\\u0000", 0), ("\\ 1", 1),
], ids=["trailing-space", "trailing-tab", "plus", "arabic-indic-one", "trailing-nul",
        "escaped-leading-space"])
def test_a_version_string_kafka_reads(value: str, version: int) -> None:
    """Beyond Kafka's cases: ``fromNumberString`` trims characters up to U+0020 off both
    ends, then ``Integer.parseInt`` reads a sign and digits of any script."""
    text = f"version={value}\ncluster.id={CLUSTER_ID}\nnode.id=1\n"
    assert parse_meta_properties(text).version == version


@pytest.mark.parametrize("value", ["1_0", "0x1", "1.0", "\u00a01", "", "2147483648"],
                         ids=["underscore", "hex", "fraction", "no-break-space", "empty",
                              "beyond-int32"])
def test_a_version_string_kafka_refuses(value: str) -> None:
    """Beyond Kafka's cases: what ``Integer.parseInt`` refuses (a no-break space is not
    trimmed by Java's trim) is an invalid version string."""
    with pytest.raises(DecodeError, match=r"^Invalid meta\.properties version string") as bad:
        parse_meta_properties(f"version={value}\n")
    assert bad.value.position == 0  # the file as a whole


@pytest.mark.parametrize(("text", "message"), [
    ("version=0\nbroker.id=one\n", r"^Unable to read broker\.id as a base-10 number\.$"),
    ("version=1\ncluster.id=c\nnode.id= 1 \n",
     r"^Unable to read node\.id as a base-10 number\.$"),
    ("version=1\ncluster.id=c\nnode.id=2147483648\n",
     r"^Unable to read node\.id as a base-10 number\.$"),
    ("version=1\n", r"^Failed to find node\.id$"),
], ids=["v0-broker-id", "v1-node-id-trailing-space", "v1-node-id-beyond-int32",
        "v1-no-ids"])
def test_a_node_id_kafka_refuses(text: str, message: str) -> None:
    """Beyond Kafka's cases: the node id is read by ``Integer.parseInt`` untrimmed (Java's
    properties reader drops only the spaces before a value), with Kafka's words."""
    with pytest.raises(DecodeError, match=message) as refused:
        parse_meta_properties(text)
    assert refused.value.position == 0  # the file as a whole
