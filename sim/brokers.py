"""Brokers that live and die: the apps of broker and controller nodes, and their settings.

With ``BrokerSettings.lifecycle`` on (the default), every broker registers and
heartbeats by itself (:class:`broker.lifecycle.BrokerLifecycleManager`) and
every controller answers them (:class:`controller.broker_service.ControllerBrokerService`):
the active controller fences a broker whose session expires and unfences it
once caught up. Off, brokers are registered and unfenced by operations when
the cluster starts and never fenced by the controller (the behaviour before
broker lifecycles, kept for transcripts and tests that script membership by
hand).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import msgspec

from broker.config import BrokerConfig
from broker.lifecycle import BrokerLifecycleManager
from broker.loader import MetadataLoader
from broker.log_dir import LogDir
from broker.mutations import BrokerMutation
from broker.replica_manager import ReplicaManager
from controller import ControllerMutation, QuorumController
from controller.broker_service import BrokerServiceConfig, ControllerBrokerService
from metadata.requests import BROKER_SESSION_TIMEOUT_MS
from raft.config import ConfigError
from sim.world import App


class BrokerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How brokers join and leave the cluster, and the broker configs."""

    lifecycle: bool = True
    """Brokers register and heartbeat by themselves; False: registered by operations at start."""
    session_timeout_ms: int = BROKER_SESSION_TIMEOUT_MS
    """broker.session.timeout.ms (a controller setting in Kafka; the brokers cap their resend
    back-off at it and give a request half of it to be answered)."""
    config: BrokerConfig = BrokerConfig()
    """The brokers' own settings (heartbeat interval, replica lag, min ISR, ...)."""

    def validate(self) -> BrokerSettings:
        """Return self, or raise ConfigError naming the bad setting."""
        if self.session_timeout_ms < 1:
            raise ConfigError("broker.session_timeout_ms", "must be at least 1")
        self.config.validate()
        return self


def broker_apps(settings: BrokerSettings, node_id: int, loader: MetadataLoader,
                rng: random.Random, now: int,
                mutations: frozenset[BrokerMutation] = frozenset(),
                log_dir: LogDir | None = None) -> list[App]:
    """The apps of a broker node besides its loader: lifecycle and replicas.

    ``log_dir``: the node's partition logs, kept by the caller across restarts
    (the broker's disk); a fresh one when None.
    """
    if not settings.lifecycle:
        return []
    lifecycle = BrokerLifecycleManager(node_id, loader, rng, now, settings.config,
                                       session_timeout_ms=settings.session_timeout_ms,
                                       log_dir=log_dir)
    return [lifecycle, ReplicaManager(node_id, loader, lifecycle, now, settings.config,
                                      mutations, log_dir)]


def controller_apps(settings: BrokerSettings, controller: QuorumController,
                    clock: Callable[[], int]) -> list[App]:
    """The apps of a controller node besides its QuorumController."""
    if not settings.lifecycle:
        return []
    return [ControllerBrokerService(controller, clock, BrokerServiceConfig(
        session_timeout_ms=settings.session_timeout_ms),
        keep_leaders=ControllerMutation.FENCE_KEEPS_LEADER in controller.mutations)]
