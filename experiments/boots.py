"""A sweep's booted clusters: each configuration booted once, then forked for every run.

Booting a cluster (elections, broker registrations) is a fixed part of every
run: a third of a failover run, over a quarter of a visibility run. An
experiment that starts its runs from :meth:`Boots.world` boots each cluster
configuration with a seed of the configuration's own (:meth:`Boots.seed`),
whatever the run's seed, and the run then reseeds it with its own
(:func:`go_on_as`: every random stream starts over; a ``reseed`` trace line
says so). A run without a trace file forks a cached boot (:mod:`sim.fork`);
one writing its trace boots afresh; both are the same run event for event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from experiments.model import RunSpec
from sim.cluster import ClusterConfig, KRaftCluster
from sim.fork import BootCache
from sim.gc_policy import freeze_setup
from sim.seeds import derive_seed

W = TypeVar("W")

MAX_CONFIGS = 64
"""Parsed configurations kept per experiment (one per distinct set of cluster parameters)."""


class Boots(Generic[W]):
    """One experiment's booted worlds by cluster configuration.

    ``config_of(spec)`` is a run's cluster configuration; it and the world a boot makes
    must depend only on the parameters named ``cell_params`` (and the run's seed, which
    the boot replaces): two runs whose ``cell_params`` agree share a boot.
    """

    def __init__(self, experiment: str, config_of: Callable[[RunSpec], ClusterConfig],
                 cell_params: Sequence[str], size: int = 8) -> None:
        self.experiment = experiment
        self.cache: BootCache[W] = BootCache(size)
        self.reuse = True
        self._config_of = config_of
        self._cell_params = tuple(cell_params)
        self._configs: dict[tuple[Any, ...], tuple[ClusterConfig, bytes]] = {}

    def set_reuse(self, on: bool) -> None:
        """Fork cached boots (the default) or boot every run afresh (the same rows)."""
        self.reuse = on
        self.cache.clear()

    def seed(self, config: ClusterConfig) -> int:
        """The seed a configuration boots with: one per configuration, whatever the run's."""
        return derive_seed(self.experiment, "boot", msgspec.json.encode(
            msgspec.structs.replace(config, seed=0)).decode())

    def config(self, spec: RunSpec) -> tuple[ClusterConfig, bytes]:
        """The booted configuration of ``spec`` and its cache key, parsed once per distinct
        cluster parameters (every run of a cell shares them)."""
        cell = tuple(spec.params.get(name) for name in self._cell_params)
        found = self._configs.get(cell)
        if found is None:
            config = self._config_of(spec)
            config = msgspec.structs.replace(config, seed=self.seed(config))
            if len(self._configs) >= MAX_CONFIGS:
                self._configs.clear()
            found = self._configs[cell] = (config, msgspec.json.encode((config, cell)))
        return found

    def world(self, spec: RunSpec, boot: Callable[[ClusterConfig], W], fresh: bool) -> W:
        """The booted world of ``spec``'s configuration: made by ``boot(config)`` when
        ``fresh`` (a run writing its trace) or reuse is off, else a fork of a cached one.
        The caller goes on with :func:`go_on_as`."""
        config, key = self.config(spec)
        if fresh or not self.reuse:
            return boot(config)
        return self.cache.get(key, lambda: boot(config))


def go_on_as(cluster: KRaftCluster, spec: RunSpec) -> None:
    """A booted cluster becomes ``spec``'s run: reseeded with its seed, and what exists
    now counted as set-up by the gc policy (:func:`sim.gc_policy.freeze_setup`)."""
    cluster.reseed(spec.seed)
    freeze_setup()
