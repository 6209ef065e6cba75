"""Write a simulated cluster's disks in Kafka's layout, so Kafka's tools can read a run.

Each node gets ``<DIR>/<controller|broker>-<id>/`` with ``meta.properties`` and
``__cluster_metadata-0/`` holding its log segments, its latest snapshot as a
``.checkpoint`` file and its ``quorum-state``. What is written is the node's
disk: what survives a crash (unflushed appends are left out). A running broker
with partition replicas (``heartbeats=on``) also gets a ``<topic>-<partition>/``
directory per replica, ``__transaction_state`` included, with its segment and
abort index (:mod:`sim.save_partitions`). The directory is written under a
temporary name and renamed when complete.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kafka_format.files import write_node_log
from kafka_format.node_state import MetaProperties, QuorumState
from metadata.schema import FeatureLevelRecord
from metadata.uuids import uuid_to_str
from metadata.versions import METADATA_VERSION_FEATURE, MINIMUM_KRAFT
from raft import Snapshot
from sim.save_partitions import write_partitions
from sim.world import NodeSlot, Simulation


def cluster_id(seed: int) -> str:
    """A stable Kafka cluster id for a seed (any int: taken modulo 2**64)."""
    return uuid_to_str((seed % 2**64).to_bytes(8, "big") * 2)


def _metadata_version_of(snapshot: Snapshot | None) -> int:
    if snapshot is not None:
        for record in snapshot.records:
            if isinstance(record, FeatureLevelRecord) and record.name == METADATA_VERSION_FEATURE:
                return record.feature_level
    return MINIMUM_KRAFT


def node_directory_name(slot: NodeSlot) -> str:
    """``controller-3000`` or ``broker-0``."""
    return f"{'controller' if slot.is_voter else 'broker'}-{slot.node_id}"


def save_simulation(sim: Simulation, directory: str | Path) -> list[Path]:
    """Write every node's disk under ``directory``; returns the node directories.

    Raises FileExistsError when ``directory`` holds something, OSError when it
    cannot be written, and :class:`kafka_format.errors.EncodeError` when a
    record does not fit Kafka's format (e.g. a broker id beyond int32); in
    every case nothing is left behind.
    """
    target = Path(directory)
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} exists and is not empty")
    staging = target.with_name(f".{target.name}.partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        _write_nodes(sim, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        target.rmdir()
    staging.rename(target)
    return [target / node_directory_name(sim.slots[n]) for n in sorted(sim.slots)]


def _write_nodes(sim: Simulation, staging: Path) -> None:
    cid = cluster_id(sim.config.seed)
    for node_id in sorted(sim.slots):
        slot = sim.slots[node_id]
        log = slot.storage.log
        flushed = [b for b in log.batches if b.end_offset <= log.flushed_end]
        election = slot.storage.election
        # kraft.version 0 (static voters, no KRaftVersionRecord): Kafka writes the
        # quorum-state at version 0 with the voters (KRaftVersion.quorumStateVersion).
        state = QuorumState(
            leader_id=-1 if election.leader_id is None else election.leader_id,
            leader_epoch=election.epoch,
            voted_id=-1 if election.voted_id is None else election.voted_id,
            data_version=0, current_voters=tuple(sorted(sim.voter_ids)))
        write_node_log(staging / node_directory_name(slot), flushed,
                       [log.snapshot] if log.snapshot is not None else [],
                       metadata_version=_metadata_version_of(log.snapshot), quorum_state=state,
                       meta=MetaProperties(cluster_id=cid, node_id=node_id))
        write_partitions(slot, staging / node_directory_name(slot))
