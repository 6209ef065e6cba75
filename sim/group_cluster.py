"""Group coordinators in a simulated cluster: ``__consumer_offsets`` and FindCoordinator(GROUP).

:class:`GroupCluster` creates ``__consumer_offsets`` (``num_partitions``
partitions, RF up to 3, min.insync.replicas 2) and hosts one
:class:`~broker.txn.group.GroupCoordinator` per running broker incarnation (a
crash loses it). Before it answers, a coordinator is synced with what its
broker now leads: it replays each ``__consumer_offsets`` partition it leads
from its local log (a new leader epoch from offset 0) and drops the others.
Clients call it in-process, as the sim's producers call the replica managers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from broker.replica_manager import ReplicaManager
from broker.txn.coordinator import partition_for
from broker.txn.group import CONSUMER_OFFSETS_TOPIC, GroupCoordinator, GroupCoordinatorConfig
from broker.txn.mutations import TxnMutation
from controller.operations import CreateTopics, IncrementalAlterConfigs, NewTopic
from controller.operations.configs import ConfigChange
from metadata.delta import TOPIC_RESOURCE

if TYPE_CHECKING:
    from sim.cluster import KRaftCluster

SMALL_GROUP_CONFIG = GroupCoordinatorConfig(num_partitions=3)
"""Three ``__consumer_offsets`` partitions: enough for tests and experiments."""


class GroupCluster:
    """See the module docs."""

    def __init__(self, cluster: KRaftCluster, config: GroupCoordinatorConfig = SMALL_GROUP_CONFIG,
                 mutations: frozenset[TxnMutation] = frozenset()) -> None:
        self.cluster = cluster
        self.config = config
        self.mutations = mutations
        self.coordinators: dict[int, tuple[int, GroupCoordinator]] = {}

    def start(self) -> bool:
        """Create ``__consumer_offsets``; False if the topic failed."""
        c = self.cluster
        rf = min(3, len(c.config.broker_ids))
        ok = c.wait(c.submit(CreateTopics((NewTopic(CONSUMER_OFFSETS_TOPIC,
                                                    self.config.num_partitions, rf),))))
        return ok and c.wait(c.submit(IncrementalAlterConfigs(
            TOPIC_RESOURCE, CONSUMER_OFFSETS_TOPIC,
            (ConfigChange("min.insync.replicas", str(min(2, rf))),))))

    def partition_of(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of ``group_id``."""
        return partition_for(group_id, self.config.num_partitions)

    def find_coordinator(self, group_id: str) -> int | None:
        """FindCoordinator(GROUP): the leader of the group's ``__consumer_offsets`` partition."""
        return self.cluster.partition_leader(CONSUMER_OFFSETS_TOPIC, self.partition_of(group_id))

    def coordinator_for(self, group_id: str) -> GroupCoordinator | None:
        """FindCoordinator, then that broker's coordinator synced with its leaderships."""
        broker = self.find_coordinator(group_id)
        return self.sync(broker) if broker is not None else None

    def sync(self, broker: int) -> GroupCoordinator | None:
        """The coordinator of running ``broker``, its partitions matched to what it leads."""
        manager = self.cluster.replica_manager(broker)
        if manager is None:
            return None
        slot = self.cluster.sim.slots[broker]
        held = self.coordinators.get(broker)
        if held is None or held[0] != slot.incarnation:
            held = (slot.incarnation, GroupCoordinator(broker, self.config,
                                                       self._appender(manager), self.mutations))
            self.coordinators[broker] = held
        coordinator = held[1]
        led: set[int] = set()
        for replica in manager.topic_leaders(CONSUMER_OFFSETS_TOPIC):
            led.add(replica.partition_id)
            coordinator.sync(replica.partition_id, replica.leader_epoch, replica.log.entries,
                             replica.log.high_watermark)
        for partition in [p for p in coordinator.owned if p not in led]:
            coordinator.resign(partition)
        return coordinator

    @staticmethod
    def _appender(manager: ReplicaManager) -> Callable[
            [int, list[str], int, int, bool, Callable[[str], None]], None]:
        def append(partition: int, values: list[str], producer_id: int, producer_epoch: int,
                   transactional: bool, done: Callable[[str], None]) -> None:
            manager.produce(CONSUMER_OFFSETS_TOPIC, partition, values, -1,
                            lambda result: done(result.error), producer_id, producer_epoch, -1,
                            transactional=transactional, from_coordinator=True)
        return append
