"""Hypothesis strategies for kraftsim: cluster configurations, operations, fault schedules.

Each strategy draws values that :class:`~sim.cluster.ClusterConfig` accepts,
so a drawn configuration always validates. They shrink towards the small
and the quiet: fewer nodes, fewer partitions, no faults.

>>> from hypothesis import given
>>> from sim.testing import cluster_configs
>>> @given(cluster_configs(max_controllers=3))
... def test_starts(config): ...
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from controller import ControllerConfig
from controller.operations import (
    ConfigChange,
    CreateTopics,
    DeleteTopics,
    FenceBroker,
    IncrementalAlterConfigs,
    NewTopic,
    Operation,
    RegisterBroker,
    UnfenceBroker,
)
from metadata.delta import TOPIC_RESOURCE
from raft import RaftConfig
from sim.cluster import ClusterConfig
from sim.faults import (
    LEADER,
    Crash,
    FaultSpec,
    Heal,
    Isolate,
    NodeRef,
    Pause,
    Restart,
    Shutdown,
)

SEEDS = st.integers(min_value=0, max_value=15)
"""The seeds the cluster machine starts from (a few: the rules supply the variety)."""

PARTITIONS = st.integers(min_value=1, max_value=60)
"""Partitions of a new topic: up to 60, several batches of 10 records."""

FAILOVERS = st.sampled_from([None, "crash", "isolate", "shutdown"])
"""How a ``create_topic`` step fails the leader over mid-transaction (None: it does not)."""

TICK_MS = st.integers(min_value=1, max_value=3000)
"""Simulated milliseconds one ``tick`` step runs."""

FAULT_KINDS = ("crash", "shutdown", "restart", "isolate", "pause", "heal")
"""The fault kinds :func:`fault_schedules` draws (see :mod:`sim.faults`)."""


def topic_names(count: int = 8) -> st.SearchStrategy[str]:
    """Topic names ``t1``..``t{count}`` (a few, so that deletes and alters hit real topics)."""
    return st.integers(min_value=1, max_value=count).map(lambda i: f"t{i}")


def cluster_configs(*, max_controllers: int = 5, max_brokers: int = 3,
                    seeds: st.SearchStrategy[int] | None = None,
                    mutations: frozenset[str] = frozenset()) -> st.SearchStrategy[ClusterConfig]:
    """Valid cluster configurations: sizes, batch and fetch sizes, linger, seed.

    ``max_controllers`` and ``max_brokers`` bound the sizes (at least one
    controller, possibly no broker); ``mutations`` switches deliberate bugs on
    (names from :data:`sim.cluster.ALL_MUTATIONS`).
    """
    return st.builds(
        lambda seed, controllers, brokers, batch, fetch, linger: ClusterConfig(
            seed=seed, controllers=controllers, brokers=brokers,
            controller=ControllerConfig(max_records_per_batch=batch),
            raft=RaftConfig(fetch_max_records=fetch, append_linger_ms=linger),
            mutations=mutations),
        seeds if seeds is not None else st.integers(min_value=0, max_value=2**32 - 1),
        st.integers(min_value=1, max_value=max_controllers),
        st.integers(min_value=0, max_value=max_brokers),
        st.integers(min_value=4, max_value=100),
        st.integers(min_value=1, max_value=500),
        st.integers(min_value=0, max_value=50),
    )


def operations(*, topics: int = 8, brokers: int = 3,
               max_partitions: int = 60) -> st.SearchStrategy[Operation]:
    """Client operations: create, delete and alter topics; register, fence, unfence brokers.

    Names come from :func:`topic_names` (``topics`` of them) and broker ids from
    ``0..brokers-1``, so that operations meet each other's topics and brokers.
    """
    names = topic_names(topics)
    broker_ids = st.integers(min_value=0, max_value=max(0, brokers - 1))
    return st.one_of(
        st.builds(lambda name, p: CreateTopics((NewTopic(name, p, 2),)), names,
                  st.integers(min_value=1, max_value=max_partitions)),
        names.map(lambda name: DeleteTopics((name,))),
        st.builds(lambda name, ms: IncrementalAlterConfigs(
            TOPIC_RESOURCE, name, (ConfigChange("retention.ms", str(ms)),)),
            names, st.integers(min_value=1, max_value=9)),
        broker_ids.map(RegisterBroker),
        broker_ids.map(FenceBroker),
        broker_ids.map(UnfenceBroker),
    )


def fault_schedules(nodes: Sequence[int], *, max_faults: int = 4, start_ms: int = 0,
                    horizon_ms: int = 20_000) -> st.SearchStrategy[tuple[FaultSpec, ...]]:
    """Fault schedules over ``nodes``, sorted by time, each fault in [start, horizon).

    A node is a listed id or ``leader`` (resolved when the fault fires). A
    schedule is what ``ClusterConfig(faults=...)`` and ``--faults`` take; it
    shrinks towards no faults at all.
    """
    if not nodes:
        raise ValueError("fault_schedules needs at least one node")
    targets: st.SearchStrategy[NodeRef] = st.sampled_from([*nodes, LEADER])
    numbered = st.sampled_from(list(nodes))
    times = st.integers(min_value=start_ms, max_value=max(start_ms, horizon_ms - 1))
    on_node = st.sampled_from([Crash, Shutdown, Isolate])
    fault: st.SearchStrategy[FaultSpec] = st.one_of(
        st.builds(lambda kind, at, node: kind(at_ms=at, node=node), on_node, times, targets),
        st.builds(lambda at, node: Restart(at_ms=at, node=node), times, numbered),
        st.builds(lambda at, node, d: Pause(at_ms=at, node=node, duration_ms=d), times, targets,
                  st.integers(min_value=1, max_value=5_000)),
        times.map(lambda at: Heal(at_ms=at)),
    )
    return st.lists(fault, max_size=max_faults).map(
        lambda specs: tuple(sorted(specs, key=lambda f: (f.at_ms, f.render()))))
