"""The simulated network on its own: what each link setting does to a message's arrival
times, and which links a partition, an isolation or a one-way block cuts."""

from __future__ import annotations

import random

import pytest

from raft.config import ConfigError
from sim.network import LinkConfig, Network

NODES = (0, 1, 2, 3, 4)


def _net(**link: int | float) -> Network:
    return Network(random.Random(7), LinkConfig(**link))  # type: ignore[arg-type]


def _delays(net: Network, count: int = 400, src: int = 0, dst: int = 1) -> list[list[int]]:
    return [[at - 100 for at in net.transmit(src, dst, 100)] for _ in range(count)]


def test_a_plain_link_delays_by_latency_plus_at_most_jitter() -> None:
    delays = {d for [d] in _delays(_net(latency_ms=5, jitter_ms=3))}
    assert delays == {5, 6, 7, 8}
    assert {d for [d] in _delays(_net(latency_ms=5, jitter_ms=0))} == {5}


def test_a_reordered_message_takes_one_to_reorder_ms_more() -> None:
    delays = {d for [d] in _delays(_net(latency_ms=5, jitter_ms=0, reorder_rate=1.0,
                                        reorder_ms=3))}
    assert delays == {6, 7, 8}
    with_jitter = {d for [d] in _delays(_net(latency_ms=5, jitter_ms=2, reorder_rate=1.0,
                                             reorder_ms=1))}
    assert with_jitter == {6, 7, 8}


def test_without_reordering_the_reorder_delay_is_never_added() -> None:
    delays = {d for times in _delays(_net(latency_ms=5, jitter_ms=1, duplicate_rate=0.5,
                                          reorder_ms=50)) for d in times}
    assert delays == {5, 6}


def test_drops_and_duplicates() -> None:
    assert all(times == [] for times in _delays(_net(drop_rate=1.0)))
    duplicated = _delays(_net(latency_ms=4, jitter_ms=1, duplicate_rate=1.0))
    assert all(len(times) == 2 and set(times) <= {4, 5} for times in duplicated)
    assert {tuple(times) for times in duplicated} >= {(4, 5), (5, 4)}  # drawn one by one
    half = [len(times) for times in _delays(_net(drop_rate=0.5), count=1000)]
    assert 400 < half.count(0) < 600 and set(half) == {0, 1}


def test_a_link_of_its_own_acts_on_its_direction_only() -> None:
    net = _net(latency_ms=1, jitter_ms=0)
    net.set_link(0, 1, LinkConfig(latency_ms=30, jitter_ms=0))
    assert net.transmit(0, 1, 10) == [40]
    assert net.transmit(1, 0, 10) == [11] and net.transmit(0, 2, 10) == [11]


@pytest.mark.parametrize("field, value", [("latency_ms", -1), ("jitter_ms", -1),
                                          ("reorder_ms", -1), ("drop_rate", 1.5),
                                          ("duplicate_rate", -0.1), ("reorder_rate", 2.0)])
def test_bad_link_settings_are_refused_with_the_field_named(field: str,
                                                            value: int | float) -> None:
    with pytest.raises(ConfigError, match=field):
        LinkConfig(**{field: value}).validate()  # type: ignore[arg-type]
    net = _net()
    with pytest.raises(ConfigError, match=f"link 0->1.{field}"):
        net.set_link(0, 1, LinkConfig(**{field: value}))  # type: ignore[arg-type]


def test_edge_settings_are_valid() -> None:
    LinkConfig(latency_ms=0, jitter_ms=0, reorder_ms=0, drop_rate=1.0, duplicate_rate=0.0,
               reorder_rate=1.0).validate()
    assert _net(latency_ms=0, jitter_ms=0, reorder_rate=1.0, reorder_ms=0).transmit(0, 1, 3) \
        == [4]


def test_a_partition_cuts_both_ways_between_groups_and_leaves_groups_whole() -> None:
    net = _net()
    net.partition([[0, 1], [2]], NODES)  # 3 and 4, in no group, form a third one
    cut = {(a, b) for a in NODES for b in NODES if not net.can_deliver(a, b)}
    groups = ({0, 1}, {2}, {3, 4})
    assert cut == {(a, b) for a in NODES for b in NODES
                   if not any(a in g and b in g for g in groups)}
    net.heal()
    assert not net.blocked and all(net.can_deliver(a, b) for a in NODES for b in NODES)


def test_isolating_a_node_cuts_its_links_only() -> None:
    net = _net()
    net.isolate(2, NODES)
    assert net.blocked == {(2, n) for n in NODES if n != 2} | {(n, 2) for n in NODES if n != 2}
    assert net.can_deliver(0, 1) and net.can_deliver(2, 2)


def test_a_block_cuts_one_direction() -> None:
    net = _net()
    net.block(0, 1)
    assert not net.can_deliver(0, 1) and net.can_deliver(1, 0)
    assert net.blocked == {(0, 1)}
    assert not net.connected(0, 1) and not net.connected(1, 0)  # connected: both ways
    assert net.connected(1, 2) and net.connected(2, 1)


def test_the_default_link_takes_1_to_3_ms_and_a_reordering_adds_up_to_50() -> None:
    assert {d for [d] in _delays(Network(random.Random(3), LinkConfig()))} == {1, 2, 3}
    reordered = {d for [d] in _delays(_net(reorder_rate=1.0), count=4000)}
    assert min(reordered) == 2 and max(reordered) == 53
