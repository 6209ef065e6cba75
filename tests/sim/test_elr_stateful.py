"""The cluster state machine with eligible leader replicas on (KIP-966).

:class:`sim.testing.ClusterMachine` on a cluster formatted at metadata.version 4.1-IV0,
which starts with eligible.leader.replicas.version 1 as Kafka's does, three brokers and
topics of replication factor 3; rules of its own change a topic's min.insync.replicas
(each change is followed by a ClearElrRecord), turn ELR off and on again, shut a broker
down gracefully (it restarts with the broker epoch of its clean shutdown) and elect
leaders uncleanly. Every online invariant is checked after each step, the partition ones
(ELR and ISR disjoint, no leader outside an empty ISR) among them; a final check looks at
every partition of the committed image: no eligible replica is in the ISR, and a partition
whose ISR is empty has no leader.
"""

from __future__ import annotations

from typing import ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from controller import ControllerConfig
from controller.operations import (
    ConfigChange,
    CreateTopics,
    ElectLeaders,
    IncrementalAlterConfigs,
    NewTopic,
    UpdateFeatures,
)
from controller.operations.cluster import FeatureUpdate
from controller.operations.elr import ELR_FEATURE, elr_enabled
from metadata.delta import TOPIC_RESOURCE
from metadata.image import NO_LEADER
from metadata.versions import LEVELS
from raft import RaftConfig
from sim.cluster import ClusterConfig, KRaftCluster
from sim.testing import ClusterMachine


class ElrMachine(ClusterMachine):
    """ClusterMachine with ELR on and its own rules."""

    brokers: ClassVar[int] = 3

    def cluster_config(self, seed: int) -> ClusterConfig:
        """Three controllers and three brokers, formatted at 4.1-IV0."""
        return ClusterConfig(seed=seed, controllers=self.controllers, brokers=self.brokers,
                             controller=ControllerConfig(
                                 max_records_per_batch=self.max_records_per_batch,
                                 bootstrap_metadata_version=LEVELS["4.1-IV0"]),
                             raft=RaftConfig(fetch_max_records=self.fetch_max_records))

    @rule(partitions=st.integers(min_value=1, max_value=3))
    def create_replicated_topic(self, partitions: int) -> None:
        """A topic over all three brokers."""
        self.topics += 1
        self.submit(CreateTopics((NewTopic(f"t{self.topics}", partitions, 3),)))

    @rule(which=st.integers(min_value=1, max_value=4), min_isr=st.integers(1, 3))
    def set_min_isr(self, which: int, min_isr: int) -> None:
        """Set ``t{which}``'s min.insync.replicas (it may not exist)."""
        self.submit(IncrementalAlterConfigs(TOPIC_RESOURCE, f"t{which}", (
            ConfigChange("min.insync.replicas", str(min_isr)),)))

    @rule(on=st.booleans())
    def toggle_elr(self, on: bool) -> None:
        """Turn eligible leader replicas on or off."""
        self.submit(UpdateFeatures((FeatureUpdate(ELR_FEATURE, 1 if on else 0,
                                                  allow_downgrade=not on),)))

    @rule(broker=st.integers(min_value=0, max_value=2))
    def shut_down(self, broker: int) -> None:
        """Shut a broker down gracefully (its next start is a clean restart)."""
        self.steps += 1
        self.sim.shutdown(broker)

    @rule()
    def elect_unclean(self) -> None:
        """An unclean election for every leaderless partition."""
        self.submit(ElectLeaders("UNCLEAN"))

    @precondition(lambda self: self.started)
    @invariant()
    def committed_partitions_are_consistent(self) -> None:
        """Every committed partition: no eligible replica in the ISR, no leader with an
        empty ISR."""
        active = self.cluster.active_controller()
        if active is None:
            return
        image = active.committed_image()
        for topic in image.topics_by_id.values():
            for pid, reg in topic.partitions.items():
                elr = set(reg.eligible_leader_replicas or ())
                if elr & set(reg.isr):
                    self.fail("ElrDisjointIsr", f"{topic.name}-{pid}: {reg.describe()}")
                if not reg.isr and reg.leader != NO_LEADER:
                    self.fail("NoLeaderOutsideEmptyIsr", f"{topic.name}-{pid}: {reg.describe()}")


TestElrMachine = ElrMachine.TestCase
TestElrMachine.settings = settings(max_examples=25, stateful_step_count=25, deadline=None,
                                   suppress_health_check=list(HealthCheck))


def test_a_cluster_formatted_at_4_1_has_elr_on_and_elects_from_it() -> None:
    """A scripted run of the machine's cluster: ELR is on from the bootstrap; with
    min.insync.replicas 2, a crash of the leader leaves its follower leading alone and the
    crashed leader eligible; the follower then shuts down cleanly: the ISR empties, both
    are eligible, nobody leads and lastKnownElr names the follower. The crashed broker
    restarts uncleanly and leaves the ELR; the follower restarts cleanly (its registration
    names the epoch it held) and, unfenced, is elected from the ELR, cleanly."""
    machine = ElrMachine()
    machine.start(seed=5)
    c: KRaftCluster = machine.cluster
    active = c.run_until_active()
    assert active is not None and elr_enabled(active.image)
    machine.create_replicated_topic(1)
    machine.set_min_isr(1, 2)
    assert c.run_until(c.idle, 10_000)
    topic = active.image.topic("t1")
    assert topic is not None

    def partition() -> tuple[tuple[int, ...], int, tuple[int, ...], tuple[int, ...], int]:
        reg = active.committed_image().topics_by_id[topic.topic_id].partitions[0]
        return (reg.isr, reg.leader, reg.eligible_leader_replicas or (),
                reg.last_known_elr or (), reg.leader_recovery_state)

    reg = topic.partitions[0]
    leader, follower = reg.leader, next(r for r in reg.replicas if r != reg.leader)
    third = next(r for r in reg.replicas if r not in (leader, follower))
    c.sim.crash(third)
    c.sim.run_for(15_000)
    c.sim.crash(leader)
    c.sim.run_for(15_000)
    assert partition()[:3] == ((follower,), follower, (leader,))
    c.sim.shutdown(follower)
    c.sim.run_for(15_000)
    assert partition() == ((), NO_LEADER, tuple(sorted((leader, follower))), (follower,), 0)
    c.sim.restart(leader)
    c.sim.run_for(15_000)
    assert partition() == ((), NO_LEADER, (follower,), (follower,), 0)
    c.sim.restart(follower)
    c.sim.run_for(15_000)
    isr, *rest = partition()
    assert rest == [follower, (), (), 0]  # clean: RECOVERED, no unclean election
    assert isr[0] == follower  # (the other restarted broker caught up and joined since)
    machine.teardown()
