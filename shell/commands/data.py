"""Lab data commands: produce and consume records, and a partition replica's log.

They need brokers with their own lifecycle (``cluster heartbeats=on``): only
then do brokers host partition replicas. ``produce`` hands a batch to a
simulated Kafka producer (:class:`sim.clients.Producer`) and returns at once;
like an operation's outcome, the acknowledgement (or the error after retries)
is reported when it is known, after a later command that lets time pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.replica import Replica
from broker.txn.coordinator import TRANSACTION_STATE_TOPIC
from broker.txn.fetch import READ_COMMITTED, READ_UNCOMMITTED, consume_fetch, fetch_log
from broker.txn.state import TransactionState, decode_record
from shell.commands.base import Command, choice, integer, parse_args
from shell.errors import CommandError
from shell.formatting import plural, table
from shell.lab import Lab
from sim.bounds import MAX_PARTITIONS
from sim.world import NodeStatus

if TYPE_CHECKING:
    from shell.session import Session

MAX_PRODUCE_COUNT = 10_000
"""Records one ``produce`` writes at most."""
ACKS = {"0": 0, "1": 1, "all": -1, "-1": -1}
"""``acks=`` words -> Kafka's acks values."""


def require_replicas(lab: Lab) -> None:
    """CommandError unless the brokers host partition replicas (heartbeats=on)."""
    if not lab.config.brokers_settings.lifecycle:
        raise CommandError("brokers host no partition replicas in this cluster: start one "
                           "with 'cluster heartbeats=on'")
    if not lab.config.brokers:
        raise CommandError("the cluster has no brokers")


def parse_partition(text: str) -> tuple[str, int]:
    """``TOPIC/PARTITION`` -> (topic, partition); raises CommandError."""
    topic, slash, number = text.rpartition("/")
    if not slash or not topic:
        raise CommandError(f"{text!r} is not TOPIC/PARTITION (e.g. orders/0)")
    return topic, integer(0, MAX_PARTITIONS - 1)("PARTITION", number)


def check_partition(lab: Lab, topic: str, partition: int) -> None:
    """CommandError unless the brokers' published image has ``topic``/``partition``."""
    broker = lab.cluster.any_running_broker()
    loader = lab.cluster.loader(broker) if broker is not None else None
    image = loader.published if loader is not None else None
    found = image.topic(topic) if image is not None else None
    if found is None:
        raise CommandError(f"no topic {topic!r} in the brokers' published image")
    if partition not in found.partitions:
        raise CommandError(f"{topic} has {plural(len(found.partitions), 'partition')} "
                           f"(0-{len(found.partitions) - 1}); no partition {partition}")


def run_produce(session: Session, args: list[str]) -> None:
    """``produce TOPIC/PARTITION COUNT [acks=0|1|all] [idempotent=true|false]``."""
    values, options = parse_args(PRODUCE, args, positional=("TOPIC/PARTITION", "COUNT"),
                                 options={"acks": choice("0", "1", "all"),
                                          "idempotent": choice("true", "false")})
    topic, partition = parse_partition(values[0])
    count = integer(1, MAX_PRODUCE_COUNT)("COUNT", values[1])
    lab = session.require_lab()
    require_replicas(lab)
    check_partition(lab, topic, partition)
    acks = ACKS[options.get("acks", "all")]
    idempotent = options.get("idempotent", "true") == "true"
    number = lab.produce(topic, partition, count, acks, idempotent)
    leader = lab.cluster.partition_leader(topic, partition)
    where = f"leader broker {leader}" if leader is not None else "no leader right now"
    session.out(f"produce {number} ({topic}/{partition}): {plural(count, 'record')} handed to "
                f"a producer (acks={options.get('acks', 'all')}, idempotent="
                f"{'true' if idempotent else 'false'}; {where}); the outcome is reported "
                f"when known")


def run_consume(session: Session, args: list[str]) -> None:
    """``consume TOPIC/PARTITION [isolation=read_uncommitted|read_committed]``."""
    values, options = parse_args(CONSUME, args, positional=("TOPIC/PARTITION",),
                                 options={"isolation": choice(READ_UNCOMMITTED,
                                                              READ_COMMITTED)})
    topic, partition = parse_partition(values[0])
    lab = session.require_lab()
    require_replicas(lab)
    check_partition(lab, topic, partition)
    leader = lab.cluster.partition_leader(topic, partition)
    manager = lab.cluster.replica_manager(leader)
    replica = manager.leader_replica(topic, partition) if manager is not None else None
    if replica is None or isinstance(replica, str):
        raise CommandError(f"{topic}/{partition} has no running leader right now (leader in "
                           f"the brokers' image: {leader if leader is not None else 'none'})")
    isolation = options.get("isolation")
    fetched = fetch_log(replica.log, 0, replica.log.end_offset + 1,
                        isolation or READ_UNCOMMITTED)
    records = consume_fetch(fetched, 0, isolation or READ_UNCOMMITTED).records
    if isolation == READ_COMMITTED:
        aborted = len(fetched.aborted_transactions)
        session.out(f"{topic}/{partition}: {plural(len(records), 'record')} below the last "
                    f"stable offset {fetched.last_stable_offset} (high watermark "
                    f"{fetched.high_watermark}), read_committed from leader broker {leader}; "
                    f"{plural(aborted, 'aborted transaction')} filtered")
    else:
        how = "read_uncommitted from" if isolation else "read from"
        session.out(f"{topic}/{partition}: {plural(len(records), 'record')} below the high "
                    f"watermark, {how} leader broker {leader}")
    for entry in records:
        session.out(f"  {entry.offset}: {entry.value}")


def replica_lines(replica: Replica) -> list[str]:
    """A replica's state and every record of its log (``log BROKER TOPIC/PARTITION``).

    A log holding transactional records gets two more columns (isTransactional, and the
    control record: COMMIT or ABORT marker with its coordinatorEpoch), the last stable
    offset, and its abort index (Kafka's ``.txnindex`` entries).
    """
    log = replica.log
    role = "leader" if replica.is_leader else f"follower of {replica.leader}"
    transactional = replica.topic == TRANSACTION_STATE_TOPIC or \
        any(entry.transactional for entry in log.entries)
    lso = f", last stable offset {log.txns.last_stable_offset(log.high_watermark)}" \
        if transactional else ""
    lines = [f"broker {replica.broker_id} {replica.topic}/{replica.partition_id}: {role}, "
             f"leader epoch {replica.leader_epoch}, partition epoch "
             f"{replica.partition_epoch}, ISR {list(replica.isr)}, log end offset "
             f"{log.end_offset}, high watermark {log.high_watermark}{lso}"]
    rows: list[tuple[object, ...]] = []
    for entry in log.entries:
        seq = "-" if entry.sequence < 0 else entry.sequence
        producer = "-" if entry.producer_id < 0 else \
            f"{entry.producer_id}/{entry.producer_epoch}/{seq}"
        mark = "" if entry.offset < log.high_watermark else "above HW"
        if not transactional:
            rows.append((entry.offset, entry.leader_epoch, entry.value, producer, mark))
            continue
        control = "-" if entry.control < 0 else \
            f"{'COMMIT' if entry.control == 1 else 'ABORT'} coordinatorEpoch " \
            f"{entry.coordinator_epoch}"
        value = "(marker)" if entry.control >= 0 else entry.value
        if replica.topic == TRANSACTION_STATE_TOPIC:
            value = transaction_log_summary(entry.value)
        rows.append((entry.offset, entry.leader_epoch, value, producer,
                     "true" if entry.transactional else "false", control, mark))
    header: tuple[str, ...] = ("offset", "epoch", "value", "producer/epoch/seq", "")
    if transactional:
        header = ("offset", "epoch", "value", "producer/epoch/seq", "isTransactional",
                  "control", "")
    lines.extend(table(header, rows) if rows else ["(empty log)"])
    if transactional:
        aborted = log.txns.aborted
        lines.append(f"aborted transactions (.txnindex): {len(aborted) or 'none'}")
        lines.extend(f"  producerId {a.producer_id} firstOffset {a.first_offset} lastOffset "
                     f"{a.last_offset} lastStableOffset {a.last_stable_offset}"
                     for a in aborted)
    return lines


def transaction_log_summary(text: str) -> str:
    """A ``__transaction_state`` record in one short phrase: id, state, producer, partitions."""
    try:
        record = decode_record(text)
    except ValueError:
        return text
    value = record.Value
    if value is None:
        return f"{record.TransactionalId}: tombstone"
    parts = ",".join(f"{t}-{p}" for t, p in value.TransactionPartitions)
    state = TransactionState(value.TransactionStatus).kafka_name
    return (f"{record.TransactionalId}: {state} {value.ProducerId}/{value.ProducerEpoch}"
            + (f" [{parts}]" if parts else ""))


def partition_log_lines(lab: Lab, broker_id: int, text: str) -> list[str]:
    """``log BROKER TOPIC/PARTITION``: one broker's replica of a partition."""
    require_replicas(lab)
    if broker_id not in lab.config.broker_ids:
        raise CommandError(f"{lab.node_name(broker_id)} hosts no partition replicas: give a "
                           f"broker id")
    topic, partition = parse_partition(text)
    status = lab.status_of(broker_id)
    if status in (NodeStatus.CRASHED, NodeStatus.STOPPED):
        raise CommandError(f"broker {broker_id} is {status.value}: its replicas are not "
                           f"loaded until it restarts")
    manager = lab.cluster.replica_manager(broker_id)
    replica = None
    if manager is not None:
        replica = next((r for r in manager.replicas.values()
                        if r.topic == topic and r.partition_id == partition), None)
    if replica is None and manager is not None and not manager.started:
        raise CommandError(f"broker {broker_id} has not caught up since it started: its "
                           f"replicas wait for its new registration in its published image")
    if replica is None:
        raise CommandError(f"broker {broker_id} hosts no replica of {topic}/{partition} in "
                           f"its published image")
    return replica_lines(replica)


PRODUCE = Command(
    "produce", "produce TOPIC/PARTITION COUNT [acks=0|1|all] [idempotent=true|false]",
    "write records to a partition (needs heartbeats=on)",
    "Hands COUNT numbered records (prodN-0, prodN-1, ...) to a new producer as one batch for "
    "partition TOPIC/PARTITION. The producer finds the leader in a running broker's "
    "published image and retries retriable errors (NOT_LEADER_OR_FOLLOWER, "
    "NOT_ENOUGH_REPLICAS, ...) every 100 ms for up to 120000 ms (delivery.timeout.ms). "
    "acks=all (default) waits for the high watermark, which needs min.insync.replicas "
    "in-sync replicas; acks=1 for the leader's append; acks=0 for nothing. idempotent=true "
    "(default) gets a producer id so that a retried batch is written once. The outcome is "
    "reported when known, after a later tick or run-until. Needs a cluster started with "
    "heartbeats=on.\n\nExample: produce orders/0 5 acks=all", run_produce,
    options=("acks", "idempotent"))
CONSUME = Command(
    "consume", "consume TOPIC/PARTITION [isolation=read_uncommitted|read_committed]",
    "read a partition up to its high watermark (or last stable offset)",
    "Reads every record of TOPIC/PARTITION below the high watermark from the partition "
    "leader the brokers' image names, as a consumer would: records above the high "
    "watermark (not yet on every in-sync replica) are not shown, and neither are "
    "transaction markers (control records). Needs heartbeats=on.\n\n"
    "isolation=read_uncommitted (Kafka's default) reads to the high watermark, records of "
    "open and aborted transactions included. isolation=read_committed reads below the last "
    "stable offset (the first offset of the earliest open transaction) and drops the "
    "records of aborted transactions as Kafka's consumer does, from the aborted "
    "transactions the fetch returns (the abort index).\n\n"
    "Examples: consume orders/0; consume orders/0 isolation=read_committed", run_consume,
    options=("isolation",))

DATA_COMMANDS = (PRODUCE, CONSUME)
"""Produce and consume."""
