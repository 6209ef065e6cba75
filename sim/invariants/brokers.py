"""Broker invariants, checked online after every event (only the brokers an event touched).

- SingleLeaderPerEpoch: at most one broker acts as leader of a partition in a
  given leader epoch (Kafka's leader epochs, KIP-101; Raft §5.2 applied to
  partition leadership).
- FencedNotLeader: no published image names a fenced broker as leader of a
  partition (Kafka ReplicationControlManager.handleBrokerFenced; KIP-841).
- ReplicasAgree: every replica holds the same record at every offset below its
  high watermark (Kafka's replication protocol, KIP-101/KIP-279).
- AckedWriteDurable: an acks=all batch acknowledged with the ISR at or above
  min.insync.replicas is, at its offsets, what every replica holds below its
  high watermark (Kafka's acks=all guarantee; not with unclean election).
- NoDuplicates: with idempotence, one (producer id, sequence) is at one offset
  of a partition only (KIP-98 idempotent producer).
- ActsOnPublishedImage: a started broker's replicas follow its loader's published image
  and nothing else (Kafka's MetadataPublisher contract).

Topics with ``unclean.leader.election.enable`` are exempt from the agreement
and durability checks: losing acknowledged records is what unclean means. A
topic stays exempt for the rest of the run once an image showed it allowed: an
unclean election made then may have lost records, and disabling it again does
not bring them back.
"""

from __future__ import annotations

from collections.abc import Sequence

from broker.compact_leader import CompactLeader
from broker.partition_log import LogEntry
from broker.replica import Replica
from broker.replica_manager import ReplicaManager
from controller.operations.leadership import unclean_allowed
from metadata.broker_index import partitions_of
from metadata.image import MetadataImage
from sim.clients import Acknowledged
from sim.world import InvariantViolation, Monitor, NodeSlot, Simulation

BROKER_INVARIANTS: dict[str, str] = {
    "SingleLeaderPerEpoch": "at most one leader per partition and leader epoch (KIP-101)",
    "FencedNotLeader": "no committed image makes a fenced broker a partition leader "
                       "(Kafka handleBrokerFenced; KIP-841)",
    "ReplicasAgree": "replicas agree on every offset below the high watermark (KIP-101/279)",
    "AckedWriteDurable": "an acks=all write acknowledged with min ISR met is never lost "
                         "(Kafka acks=all; clean election only)",
    "NoDuplicates": "with idempotence no (producer, sequence) twice in a partition (KIP-98)",
    "ActsOnPublishedImage": "a broker's replicas follow its published image only "
                            "(Kafka MetadataPublisher)",
}
"""Every broker invariant with its source."""


_HOLDERS = 1 << 20
"""Broker ids below this are packed with their leader epoch (``epoch * _HOLDERS + id``)."""


def _pack(epoch: int, broker: int) -> int | tuple[int, int]:
    """(leader epoch, broker) as one int (a small one, shared, for epoch 0), or a pair."""
    return epoch * _HOLDERS + broker if epoch >= 0 and 0 <= broker < _HOLDERS \
        else (epoch, broker)


def _unpack(packed: int | tuple[int, int]) -> tuple[int, int]:
    return packed if isinstance(packed, tuple) else divmod(packed, _HOLDERS)


class BrokerInvariants(Monitor):
    """The broker catalogue above, fed by the replica managers and the producers' acks."""

    def __init__(self) -> None:
        # SingleLeaderPerEpoch: each partition's latest leader epoch and its holder, packed
        # in one int (see _pack: one dict entry, no tuple, per partition), by topic id then
        # partition (a look-up in one table of every partition waits on memory at 1M); the
        # holders of its earlier epochs by (topic id, partition, leader epoch) in ``leaders``
        self.latest_leader: dict[str, dict[int, int | tuple[int, int]]] = {}
        self.leaders: dict[tuple[str, int, int], int] = {}
        self.committed: dict[tuple[str, int], dict[int, tuple[int, str]]] = {}
        self.acked: dict[tuple[str, int], dict[int, str]] = {}
        self.sequences: dict[tuple[str, int], dict[tuple[int, int, int], int]] = {}
        self.checked: dict[tuple[int, int, str, int], int] = {}
        self._fence_checked: dict[int, tuple[object, object]] = {}
        self._violation: InvariantViolation | None = None
        self.unclean_topics: set[str] = set()
        """Ids of topics an image has shown with unclean election allowed (exempt from
        then on; a topic made again under the same name is not)."""

    # ------------------------------------------------------------------ inputs
    def acknowledge(self, sim: Simulation, ack: Acknowledged, min_isr_met: bool = True) -> None:
        """A producer was told an acks=all batch is written: remember its offsets."""
        if ack.acks != -1 or not min_isr_met:
            return
        manager = None
        for slot in sim.slots.values():
            manager = next((a for a in slot.apps if isinstance(a, ReplicaManager)), None)
            if manager is not None and manager.image is not None:
                break
        image = manager.image if manager is not None else None
        topic_id = image.topics_by_name.get(ack.topic) if image is not None else None
        if topic_id is None or image is None or self._unclean(image, ack.topic, topic_id):
            return
        expected = self.acked.setdefault((topic_id, ack.partition), {})
        committed = self.committed.get((topic_id, ack.partition), {})
        for i, value in enumerate(ack.values):
            offset = ack.first_offset + i
            expected[offset] = value
            held = committed.get(offset)
            if held is not None and held[1] != value and self._violation is None:
                self._violation = InvariantViolation(
                    "AckedWriteDurable", f"{ack.topic}-{ack.partition} offset {offset}: "
                                         f"acknowledged {value!r}, replicas hold {held[1]!r}")

    # ------------------------------------------------------------------ checks
    def check(self, sim: Simulation, touched: Sequence[NodeSlot]) -> None:
        """Check the touched brokers' replicas and images."""
        if self._violation is not None:
            raise self._violation
        for slot in touched:
            for app in slot.apps:
                if isinstance(app, ReplicaManager):
                    self._check_manager(slot, app)

    def _check_manager(self, slot: NodeSlot, manager: ReplicaManager) -> None:
        loader = manager.loader
        if manager.image is None and not manager.replicas:
            return  # not started: the broker has not caught up since it (re)started
        if manager.image is not loader.published:
            raise InvariantViolation("ActsOnPublishedImage",
                                     f"broker {manager.broker_id} acts on image at "
                                     f"{manager.image.offset if manager.image else -1}, "
                                     f"published {loader.published_offset}")
        image = manager.image
        if image is None:
            return
        self._check_fenced(manager.broker_id, image)
        unclean: dict[str, bool] = {}  # per topic: the image's setting, read once per check
        for key in manager.drain_changed():
            topic_id, pid = key
            replica = manager.held(key)
            if type(replica) is not Replica:  # none, or compact: a follower or an empty leader
                if type(replica) is CompactLeader:
                    self._check_single_leader(key, replica.reg.leader_epoch, manager.broker_id,
                                              image.topics_by_id[topic_id].name)
                continue
            if replica.is_leader:
                self._check_single_leader(key, replica.leader_epoch, manager.broker_id,
                                          replica.topic)
            allowed = unclean.get(replica.topic)
            if allowed is None:
                allowed = unclean[replica.topic] = self._unclean(image, replica.topic, topic_id)
            if allowed:
                continue
            ckey = (slot.node_id, slot.incarnation, topic_id, pid)
            start = self.checked.get(ckey, 0)
            hw = replica.log.high_watermark
            if hw <= start:
                continue
            self._check_entries(replica.topic, topic_id, pid, replica.log.entries, start, hw,
                                manager.broker_id)
            self.checked[ckey] = hw

    def _unclean(self, image: MetadataImage, topic: str, topic_id: str) -> bool:
        """Whether ``topic`` allows unclean election in ``image`` or did in an earlier one."""
        if topic_id in self.unclean_topics:
            return True
        if unclean_allowed(image, topic):
            self.unclean_topics.add(topic_id)
            return True
        return False

    def _check_single_leader(self, key: tuple[str, int], epoch: int, broker: int,
                             topic: str) -> None:
        holder = self._leader_of(key, epoch, broker)
        if holder != broker:
            raise InvariantViolation(
                "SingleLeaderPerEpoch",
                f"{topic}-{key[1]} has leaders {holder} and {broker} in leader epoch {epoch}")

    def _leader_of(self, key: tuple[str, int], epoch: int, broker: int) -> int:
        """The first broker seen leading ``key`` in leader ``epoch`` (``broker`` if none)."""
        topic = self.latest_leader.get(key[0])
        if topic is None:
            topic = self.latest_leader[key[0]] = {}
        packed = topic.get(key[1])
        if packed is None:
            topic[key[1]] = _pack(epoch, broker)
            return broker
        latest, holder = _unpack(packed)
        if epoch == latest:
            return holder
        if epoch > latest:  # a newer epoch: the latest one joins the history
            self.leaders[(*key, latest)] = holder
            topic[key[1]] = _pack(epoch, broker)
            return broker
        return self.leaders.setdefault((*key, epoch), broker)

    def _check_entries(self, topic: str, topic_id: str, pid: int, entries: Sequence[LogEntry],
                       start: int, hw: int, broker: int) -> None:
        committed = self.committed.setdefault((topic_id, pid), {})
        acked = self.acked.get((topic_id, pid), {})
        seqs = self.sequences.setdefault((topic_id, pid), {})
        for offset in range(start, hw):
            entry = entries[offset]
            value, epoch = entry.value, entry.leader_epoch
            expected = acked.get(offset)
            if expected is not None and expected != value:
                raise InvariantViolation("AckedWriteDurable",
                                         f"{topic}-{pid} offset {offset}: acknowledged "
                                         f"{expected!r}, broker {broker} holds {value!r} "
                                         f"below its HW {hw}")
            held = committed.get(offset)
            if held is None:
                committed[offset] = (epoch, value)
                producer = entry.producer_id
                if producer >= 0 and entry.control < 0 and entry.sequence >= 0:
                    # markers and TxnOffsetCommit records carry no sequence
                    seq_key = (producer, entry.producer_epoch, entry.sequence)
                    other = seqs.setdefault(seq_key, offset)
                    if other != offset:
                        raise InvariantViolation(
                            "NoDuplicates", f"{topic}-{pid}: producer {producer} epoch "
                                            f"{seq_key[1]} sequence {seq_key[2]} at offsets "
                                            f"{other} and {offset}")
            elif held != (epoch, value):
                raise InvariantViolation("ReplicasAgree",
                                         f"{topic}-{pid} offset {offset}: broker {broker} "
                                         f"holds {value!r} (epoch {epoch}) below its HW, "
                                         f"another replica {held[1]!r} (epoch {held[0]})")

    def _check_fenced(self, broker_id: int, image: MetadataImage) -> None:
        seen = self._fence_checked.get(broker_id)
        if seen is not None and seen[0] is image.brokers and seen[1] is image.topics_by_id:
            return
        self._fence_checked[broker_id] = (image.brokers, image.topics_by_id)
        for fenced_id, broker in image.brokers.items():
            if not broker.fenced:
                continue
            for topic_id, pid in partitions_of(image.partitions_by_broker, fenced_id):
                reg = image.topics_by_id[topic_id].partitions[pid]
                if reg.leader == fenced_id:
                    raise InvariantViolation(
                        "FencedNotLeader",
                        f"broker {broker_id}'s image at {image.offset}: fenced broker "
                        f"{fenced_id} leads {image.topics_by_id[topic_id].name}-{pid}")
