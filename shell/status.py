"""``status``: the leader, the open transaction and every node's offsets.

JSON uses Kafka's names where Kafka has them (DescribeQuorum's ``leaderId``,
``leaderEpoch``, ``highWatermark``, ``logEndOffset``; ``lastStableOffset``).
A node's ``imageOffset`` is the offset of what it shows: a broker's last
published image, a controller's committed state at its LSO. ``quorum`` is the raft
leader's DescribeQuorum answer: each voter's and observer's end offset as the leader
knows it, with its last fetch and last caught-up times.
"""

from __future__ import annotations

from typing import Any

from raft import ReplicaDescription
from shell.formatting import table
from shell.lab import Lab
from sim.world import NodeStatus


def _node(lab: Lab, node_id: int) -> dict[str, Any]:
    cluster = lab.cluster
    slot = cluster.sim.slots[node_id]
    is_controller = node_id in lab.config.controller_ids
    row: dict[str, Any] = {
        "nodeId": node_id, "kind": "controller" if is_controller else "broker",
        "status": slot.status.value, "role": None, "epoch": None,
        "logEndOffset": slot.storage.log.end_offset, "highWatermark": None,
        "imageOffset": None, "lastStableOffset": None,
    }
    raft = slot.raft
    if raft is None or slot.status in (NodeStatus.CRASHED, NodeStatus.STOPPED):
        return row
    row.update(role=raft.role.value, epoch=raft.epoch, logEndOffset=raft.log.end_offset,
               highWatermark=raft.high_watermark)
    controller = cluster.controller(node_id)
    if controller is not None:
        row["lastStableOffset"] = controller.offsets.last_stable_offset
        if controller.fault is None:  # a stopped controller's state may be half-loaded
            row["imageOffset"] = controller.committed_image().offset
        row["active"] = controller.active
    loader = cluster.loader(node_id)
    if loader is not None:
        row["imageOffset"] = loader.published_offset
        row["loaderState"] = loader.batch_loader.state.value
    return row


def brokers_json(lab: Lab) -> list[dict[str, Any]] | None:
    """The brokers' registrations (Kafka's BrokerRegistration fields) as the active
    controller's committed state holds them; None without broker lifecycles."""
    if not lab.config.brokers_settings.lifecycle:
        return None
    cluster = lab.cluster
    active = cluster.active_controller()
    image = active.committed_image() if active is not None and active.fault is None else None
    if image is None:
        broker = cluster.any_running_broker()
        loader = cluster.loader(broker) if broker is not None else None
        image = loader.published if loader is not None else None
    if image is None:
        return []
    return [{"brokerId": b, "brokerEpoch": reg.epoch, "fenced": reg.fenced,
             "inControlledShutdown": reg.in_controlled_shutdown}
            for b, reg in sorted(image.brokers.items())]


def quorum_json(lab: Lab) -> dict[str, Any] | None:
    """DescribeQuorum's answer from the raft leader (Kafka's field names), as
    ``kafka-metadata-quorum describe`` shows it; None while there is no leader."""
    leader = lab.cluster.sim.leader_slot()
    if leader is None or leader.raft is None:
        return None
    answer = leader.raft.describe_quorum(lab.now)

    def replicas(states: tuple[ReplicaDescription, ...]) -> list[dict[str, int]]:
        return [{"replicaId": r.replica_id, "logEndOffset": r.log_end_offset,
                 "lastFetchTimestamp": r.last_fetch_timestamp,
                 "lastCaughtUpTimestamp": r.last_caught_up_timestamp} for r in states]

    return {"leaderId": answer.leader_id, "leaderEpoch": answer.leader_epoch,
            "highWatermark": answer.high_watermark,
            "currentVoters": replicas(answer.current_voters),
            "observers": replicas(answer.observers)}


def status_json(lab: Lab) -> dict[str, Any]:
    """The status as one JSON object."""
    cluster = lab.cluster
    leader = cluster.sim.leader_slot()
    active = cluster.active_controller()
    txn = lab.open_transaction()
    writing = active is not None and active.transaction_open and txn is None
    return {
        "timeMs": lab.now,
        "leaderId": leader.node_id if leader is not None else None,
        "leaderEpoch": leader.raft.epoch if leader is not None and leader.raft else None,
        "activeController": active.node_id if active is not None else None,
        "openTransaction": None if txn is None else {
            "beginOffset": txn[0], "name": txn[1],
            "committedThrough": cluster.history.end - 1},
        "transactionBeingWritten": (active.offsets.transaction_start_offset
                                    if writing and active is not None else None),
        "pendingOperations": lab.pending_operations(),
        "view": lab.view,
        "violation": str(cluster.sim.violation) if cluster.sim.violation else None,
        "nodes": [_node(lab, n) for n in sorted(cluster.sim.slots)],
        "quorum": quorum_json(lab),
        **({} if (brokers := brokers_json(lab)) is None else {"brokers": brokers}),
    }


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def status_text(lab: Lab) -> list[str]:
    """The status as lines of text."""
    data = status_json(lab)
    head = f"time {data['timeMs']} ms; "
    if data["leaderId"] is None:
        head += "no leader"
    else:
        head += f"leader {data['leaderId']} (epoch {data['leaderEpoch']})"
        if data["activeController"] != data["leaderId"]:
            head += ", not yet active"
    lines = [head]
    txn = data["openTransaction"]
    if txn is not None:
        lines.append(f"open transaction: begun at offset {txn['beginOffset']} ({txn['name']}), "
                     f"committed through offset {txn['committedThrough']}, no End or Abort "
                     f"committed yet")
    elif data["transactionBeingWritten"] is not None:
        lines.append(f"transaction being written by controller {data['activeController']} "
                     f"from offset {data['transactionBeingWritten']} (its Begin is not "
                     f"committed yet)")
    else:
        lines.append("no open transaction")
    lines.append(f"operations pending: {data['pendingOperations']}")
    rows = [(n["nodeId"], n["kind"], n["status"], _cell(n["role"]), _cell(n["epoch"]),
             n["logEndOffset"], _cell(n["highWatermark"]), _cell(n["imageOffset"]),
             _cell(n["lastStableOffset"])) for n in data["nodes"]]
    lines.extend(table(("node", "kind", "status", "role", "epoch", "log-end", "HW", "image",
                        "LSO"), rows))
    brokers = data.get("brokers")
    if brokers is not None:
        def state(b: dict[str, Any]) -> str:
            word = "fenced" if b["fenced"] else "unfenced"
            if b["inControlledShutdown"]:
                word += ", in controlled shutdown"
            return f"{b['brokerId']} {word} (epoch {b['brokerEpoch']})"
        lines.append("brokers (committed registrations): " +
                     ("; ".join(state(b) for b in brokers) or "none registered"))
    lines.append(f"viewing {lab.view_label(lab.view)}")
    if data["violation"]:
        lines.append(f"INVARIANT VIOLATED: {data['violation']}")
    return lines
