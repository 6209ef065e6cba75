"""Faults as typed values: one parser, ``render()`` its inverse, one-line errors."""

from __future__ import annotations

import random
import re

import pytest

from raft.config import ConfigError
from sim.cluster import ClusterConfig
from sim.faults import (
    KINDS,
    Block,
    Crash,
    FaultError,
    FaultSpec,
    Heal,
    Isolate,
    NodeRef,
    Partition,
    Pause,
    Restart,
    Shutdown,
    Wipe,
    fault_nodes,
    fault_record,
    parse_fault,
    parse_fault_target,
    parse_faults,
    random_faults,
)

EVERY_KIND: list[FaultSpec] = [
    Crash(at_ms=5, node=1), Crash(at_ms=0, node="leader"), Shutdown(at_ms=7, node="leader"),
    Restart(at_ms=9, node=2), Wipe(at_ms=11, node=3000), Pause(at_ms=3, node=1, duration_ms=40),
    Pause(at_ms=3, node="leader", duration_ms=0),
    Partition(at_ms=100, groups=((0, 1), (2,))), Partition(at_ms=1, groups=((2,), (1,), (0, 3))),
    Isolate(at_ms=4, node="leader"), Block(at_ms=6, src=0, dst=1), Heal(at_ms=8),
]


@pytest.mark.parametrize("fault", EVERY_KIND, ids=lambda f: f.render())
def test_parse_is_the_inverse_of_render(fault: FaultSpec) -> None:
    assert parse_fault(fault.render()) == fault
    assert parse_fault_target(fault.kind, fault.target(), fault.at_ms,
                              fault.duration_ms if isinstance(fault, Pause) else None) == fault


def test_every_kind_is_covered_and_documented_texts_parse() -> None:
    assert {f.kind for f in EVERY_KIND} == set(KINDS)
    assert parse_fault("crash:leader@3000") == Crash(at_ms=3000, node="leader")
    assert parse_fault("pause:1@2000+500") == Pause(at_ms=2000, node=1, duration_ms=500)
    assert parse_fault("partition:0,1|2@4000").groups == ((0, 1), (2,))
    assert parse_fault(" block:0>1@100 ") == Block(at_ms=100, src=0, dst=1)
    assert parse_faults(["crash:1@9;heal@2", "restart:1@5"]) == (
        Heal(at_ms=2), Restart(at_ms=5, node=1), Crash(at_ms=9, node=1))


def test_the_flat_trace_form_is_the_historic_one() -> None:
    assert fault_record(Pause(at_ms=3, node=1, duration_ms=40)) == \
        {"kind": "pause", "at_ms": 3, "target": "1", "duration_ms": 40}
    assert fault_record(Heal(at_ms=8)) == {"kind": "heal", "at_ms": 8, "target": "",
                                           "duration_ms": 0}
    assert fault_record(Partition(at_ms=1, groups=((0, 1), (2,))))["target"] == "0,1|2"


@pytest.mark.parametrize("text", [
    "crash:1", "explode:1@100", "pause:1@100", "crash:1@100+5", "heal:1@3", "restart:leader@1",
    "partition:0,1@5", "partition:0,,1|2@5", "partition:0|0@5", "partition:leader|1@5",
    "block:0@5", "block:leader>1@5", "crash:x@5", "crash:1@-5", "crash:1@soon", "",
    "crash:1@" + "9" * 5000, "crash:" + "9" * 5000 + "@1", "pause:1@1+" + "9" * 5000,
    "crash:1@2592000001",
])
def test_bad_faults_are_one_line_errors(text: str) -> None:
    with pytest.raises(FaultError) as error:
        parse_fault(text)
    line = str(error.value)
    assert line.startswith("faults: ") and "\n" not in line and len(line) < 200


def test_random_faults_are_typed_and_deterministic() -> None:
    drawn = random_faults(random.Random("kraftsim/3/faults"), 4, [0, 1, 2], [0, 1, 2], 500,
                          7500)
    again = random_faults(random.Random("kraftsim/3/faults"), 4, [0, 1, 2], [0, 1, 2], 500,
                          7500)
    assert drawn == again
    assert [f.render() for f in drawn] == [
        "shutdown:1@918", "crash:2@946", "restart:2@1566", "restart:1@1988",
        "partition:0|1,2@2642", "isolate:2@2946", "heal@3652", "heal@4609"]


@pytest.mark.parametrize("seed", range(40))
def test_random_faults_are_undone_before_the_end_and_partitions_split_everyone(
        seed: int) -> None:
    voters, nodes = [0, 1, 2], [0, 1, 2, 3, 4]
    drawn = random_faults(random.Random(seed), 6, voters, nodes, 1000, 5000)
    assert [f.at_ms for f in drawn] == sorted(f.at_ms for f in drawn)
    assert all(1000 <= f.at_ms < 5000 for f in drawn)
    for index, fault in enumerate(drawn):
        later = drawn[index + 1:]
        if isinstance(fault, Crash | Shutdown):
            victims = voters if fault.node == "leader" else [fault.node]
            assert all(any(isinstance(r, Restart) and r.node == v and r.at_ms > fault.at_ms
                           for r in later) for v in victims)
        elif isinstance(fault, Pause):
            assert fault.duration_ms > 0 and fault.at_ms + fault.duration_ms < 5000
        elif isinstance(fault, Partition):
            left, right = fault.groups
            assert left and right and not set(left) & set(right)
            assert sorted(left + right) == nodes
        if isinstance(fault, Partition | Isolate):
            assert any(isinstance(h, Heal) and h.at_ms > fault.at_ms for h in later)
    assert random_faults(random.Random(seed), 6, voters, nodes, 1000, 1009) == ()
    assert len(random_faults(random.Random(seed), 6, voters, nodes, 1000, 1010)) >= 6


@pytest.mark.parametrize(("text", "message"), [
    ("crash@5", "malformed fault 'crash@5'; expected KIND:TARGET@TIME"),
    ("partition:0,,1|2@5", "empty node in '0,,1|2': write e.g. 0,1|2"),
    ("crash:1@\u0661\u0662", "the time must be a number, got '\u0661\u0662'"),
    ("crash:\u0661@1", "a node id must be a number, got '\u0661'"),
])
def test_bad_faults_say_what_is_wrong(text: str, message: str) -> None:
    """Non-ASCII digits are not numbers (int() would take them)."""
    with pytest.raises(FaultError, match=re.escape(message)):
        parse_fault(text)


def test_a_block_refuses_leader_whatever_resolves_the_node_words() -> None:
    def resolve(word: str) -> NodeRef:
        return "leader" if word == "leader" else int(word)

    assert parse_fault_target("block", "0>1", 5, resolve=resolve) == Block(at_ms=5, src=0,
                                                                          dst=1)
    with pytest.raises(FaultError, match="bad target 'leader>1' for block"):
        parse_fault_target("block", "leader>1", 5, resolve=resolve)


def test_empty_items_between_separators_are_skipped() -> None:
    assert parse_faults(["crash:1@5;", " ; heal@7 ;", ""]) == (Crash(at_ms=5, node=1),
                                                               Heal(at_ms=7))


@pytest.mark.parametrize("seed", range(10))
def test_random_faults_on_one_node_draw_no_one_sided_partition(seed: int) -> None:
    drawn = random_faults(random.Random(seed), 20, [0], [0], 0, 1000)
    assert drawn and not any(isinstance(f, Partition) for f in drawn)


def test_the_largest_time_duration_and_node_id_are_allowed() -> None:
    """The limits are inclusive: 30 days of simulated time, node ids up to int32's max."""
    assert parse_fault("pause:2147483647@2592000000+2592000000") == Pause(
        at_ms=2_592_000_000, node=2_147_483_647, duration_ms=2_592_000_000)
    with pytest.raises(FaultError, match="at most 2147483647"):
        parse_fault("crash:2147483648@1")
    with pytest.raises(FaultError, match="the time must be at most 2592000000, got '2592000001'"):
        parse_fault("pause:1@2592000001+5")
    with pytest.raises(FaultError, match="the duration must be at most 2592000000, got "):
        parse_fault("pause:1@5+2592000001")


def test_each_fault_names_the_nodes_it_acts_on() -> None:
    assert [fault_nodes(f) for f in EVERY_KIND] == [
        [1], [], [], [2], [3000], [1], [], [0, 1, 2], [2, 1, 0, 3], [], [0, 1], []]


def test_a_cluster_refuses_faults_on_nodes_it_does_not_have() -> None:
    """Every fault's nodes are checked, a one-way block's two ends included; a heal and a
    fault on the leader name none."""
    ok = ClusterConfig(brokers=2, faults=parse_faults(
        ["block:0>1@5;heal@6;crash:leader@7;partition:0|1@8"]))
    assert ok.validate() is ok
    for text in ("block:0>7@5", "block:7>0@5", "partition:0|7@5", "isolate:7@5"):
        with pytest.raises(ConfigError, match=f"{text} names node 7"):
            ClusterConfig(brokers=2, faults=parse_faults([text])).validate()
