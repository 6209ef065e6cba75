"""Lab producer transactions: ``producer NAME init|begin|send|commit|abort|prepare|complete``.

Each verb queues one call of a :class:`sim.txn_clients.TransactionalProducer`
and returns at once; what the call did is reported when known, after a later
``tick`` or ``run-until`` (see :mod:`shell.txn_lab`). ``producer`` alone
lists the producers.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from broker.txn.coordinator import TRANSACTION_STATE_TOPIC, TransactionCoordinator
from shell.commands.base import Command, choice, integer, parse_args
from shell.commands.data import (
    MAX_PRODUCE_COUNT,
    check_partition,
    parse_partition,
    require_replicas,
)
from shell.errors import CommandError
from shell.formatting import plural, table, to_json
from shell.lab import Lab
from shell.txn_lab import DEFAULT_TXN_TIMEOUT_MS

if TYPE_CHECKING:
    from shell.session import Session

VERBS = ("init", "begin", "send", "commit", "abort", "prepare", "complete")
"""What ``producer NAME`` does."""
MAX_TXN_TIMEOUT_MS = 2**31 - 1
"""The largest transaction.timeout.ms a producer takes (a Java int); the coordinator
refuses one above its transaction.max.timeout.ms (900000) with INVALID_TRANSACTION_TIMEOUT."""
TWO_PC = "transaction.two.phase.commit.enable"
"""KIP-939's producer config."""
KEEP_PREPARED = "keepPreparedTxn"
"""KIP-939's initTransactions(keepPreparedTxn) argument."""


def _list(session: Session) -> None:
    lab = session.require_lab()
    producers = lab.txn.producers
    if not producers:
        session.out("no transactional producers yet (start one with: producer NAME init)")
        return
    if session.format == "json":
        session.out(to_json([
            {"name": name, "transactionalId": p.producer.transactional_id,
             "state": p.producer.state.value, "producerId": p.producer.producer_id,
             "producerEpoch": p.producer.producer_epoch,
             "committed": len(p.producer.committed), "aborted": len(p.producer.aborted),
             "error": p.producer.fatal} for name, p in producers.items()]))
        return
    rows = []
    for name, p in producers.items():
        producer = p.producer
        rows.append((name, producer.transactional_id, producer.state.value,
                     producer.producer_id, producer.producer_epoch, len(producer.committed),
                     len(producer.aborted), producer.fatal or "-"))
    for line in table(("name", "transactional.id", "state", "producerId", "producerEpoch",
                       "committed", "aborted", "error"), rows):
        session.out(line)


def run_producer(session: Session, args: list[str]) -> None:
    """``producer [NAME VERB ...]``."""
    if not args:
        _list(session)
        return
    if len(args) < 2:
        raise CommandError(f"missing VERB: one of {', '.join(VERBS)} ({PRODUCER.usage()})")
    name, verb, rest = args[0], args[1], args[2:]
    if "=" in name or not name.isprintable() or "/" in name:
        raise CommandError(f"{name!r} is not a producer name ({PRODUCER.usage()})")
    if verb not in VERBS:
        close = difflib.get_close_matches(verb, VERBS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise CommandError(f"unknown verb {verb!r}{hint}: give one of {', '.join(VERBS)}")
    lab = session.require_lab()
    require_replicas(lab)
    txn = lab.txn
    if verb == "init":
        _, options = parse_args(PRODUCER, rest, options={
            "transactional.id": _transactional_id,
            "transaction.timeout.ms": integer(1, MAX_TXN_TIMEOUT_MS),
            TWO_PC: choice("true", "false"), KEEP_PREPARED: choice("true", "false")})
        txn_id = options.get("transactional.id", name)
        timeout = options.get("transaction.timeout.ms", DEFAULT_TXN_TIMEOUT_MS)
        two_pc = options.get(TWO_PC, "false") == "true"
        keep = options.get(KEEP_PREPARED, "false") == "true"
        if keep and not two_pc:
            raise CommandError(f"{KEEP_PREPARED}=true needs {TWO_PC}=true (KIP-939)")
        txn.init(name, txn_id, timeout, two_pc, keep)
        what = f"initTransactions({'true' if keep else ''})"
        how = f"{TWO_PC}=true, no transaction timeout" if two_pc else \
            f"transaction.timeout.ms={timeout}"
        session.out(f"producer {name}: {what} for transactional.id {txn_id} ({how}) queued; "
                    f"coordinator: {_coordinator(lab, txn_id)}")
        return
    if verb == "prepare":
        parse_args(PRODUCER, rest)
        state = txn.prepare(name)
        session.out(f"producer {name}: prepareTransaction() = PreparedTxnState {state} "
                    f"(record it: 'producer {name} complete {state}' commits it, any other "
                    f"state aborts it)")
        return
    if verb == "complete":
        values, _ = parse_args(PRODUCER, rest, optional=("STATE",))
        state = txn.complete(name, values[0] if values else None)
        session.out(f"producer {name}: completeTransaction({state}) queued")
        return
    if verb == "send":
        values, _ = parse_args(PRODUCER, rest, positional=("TOPIC/PARTITION", "COUNT"))
        topic, partition = parse_partition(values[0])
        count = integer(1, MAX_PRODUCE_COUNT)("COUNT", values[1])
        check_partition(lab, topic, partition)
        txn.send(name, topic, partition, count)
        session.out(f"producer {name}: send of {plural(count, 'record')} to {topic}/"
                    f"{partition} queued (transactional, acks=all)")
        return
    parse_args(PRODUCER, rest)
    if verb == "begin":
        p = txn.begin(name)
        session.out(f"producer {name}: beginTransaction() (transaction {p.transaction})")
    else:
        commit = verb == "commit"
        p = txn.end(name, commit)
        call = "commitTransaction()" if commit else "abortTransaction()"
        session.out(f"producer {name}: {call} of transaction {p.transaction} queued")


def _transactional_id(key: str, text: str) -> str:
    if not text:
        raise CommandError(f"{key} must not be empty (Kafka answers INVALID_REQUEST)")
    if not text.isprintable() or "/" in text:
        raise CommandError(f"{key} {text!r}: give printable characters without '/'")
    return text


def _coordinator(lab: Lab, transactional_id: str) -> str:
    txns = lab.txn.txns
    if txns is None:
        return "none"
    partition = TransactionCoordinator.partition_of_id(transactional_id, txns.config)
    broker = txns.find_coordinator(transactional_id)
    where = f"broker {broker}" if broker is not None else "no leader right now"
    return f"{where} (leader of {TRANSACTION_STATE_TOPIC}-{partition})"


PRODUCER = Command(
    "producer",
    "producer [NAME init [transactional.id=ID] [transaction.timeout.ms=MS] "
    "[transaction.two.phase.commit.enable=true] [keepPreparedTxn=true] | NAME begin | "
    "NAME send TOPIC/PARTITION COUNT | NAME commit | NAME abort | NAME prepare | "
    "NAME complete [PRODUCERID:EPOCH]]",
    "transactional producers: init, begin, send, commit, abort, prepare, complete",
    "Drives a transactional producer instance called NAME (Kafka's Java client's state "
    "machine: UNINITIALIZED, READY, IN_TRANSACTION, COMMITTING_TRANSACTION, "
    "ABORTING_TRANSACTION, ABORTABLE_ERROR, FATAL_ERROR). Each verb is queued and returns at "
    "once; its outcome is reported when known, after a later tick or run-until.\n\n"
    "init       initTransactions(): FindCoordinator, then InitProducerId. The first init "
    "starts the transaction coordinators (creates __transaction_state). "
    "transactional.id=ID (default NAME): a second instance with the same id fences the first "
    "(its epoch is bumped; the old instance's next request fails PRODUCER_FENCED and it "
    "becomes a zombie that can do nothing more). transaction.timeout.ms=MS (default 60000): "
    "the coordinator aborts a transaction open longer; it refuses a timeout above its "
    "transaction.max.timeout.ms (900000) with INVALID_TRANSACTION_TIMEOUT, fatal for the "
    "producer.\n"
    "begin      beginTransaction() (local)\n"
    "send T/P N  N records to partition T/P in the transaction: AddPartitionsToTxn before the "
    "first record of a partition, then a transactional, idempotent acks=all produce. Values "
    "are ID/NAME/TRANSACTION/N\n"
    "commit     commitTransaction(): EndTxn(COMMIT); the coordinator writes PrepareCommit, "
    "then COMMIT markers to every partition, then CompleteCommit\n"
    "abort      abortTransaction(): the same with ABORT markers\n"
    "prepare    KIP-939 prepareTransaction(), for a producer initialized with "
    "transaction.two.phase.commit.enable=true (no transaction timeout): once its sends are "
    "flushed (run-until idle), prints the PreparedTxnState PRODUCERID:EPOCH an external "
    "transaction manager records; the transaction stays open\n"
    "complete [PRODUCERID:EPOCH]  completeTransaction(state): commits the prepared "
    "transaction if STATE is its state (default: the one this instance prepared), aborts it "
    "otherwise. A restarted instance (init keepPreparedTxn=true) keeps the prepared "
    "transaction and completes it\n\n"
    "'producer' alone lists the producers (with --format json: transactionalId, state, "
    "producerId, producerEpoch, committed, aborted, error). See also: consume T/P "
    "isolation=read_committed, log BROKER T/P (markers), ls /transactions.\n\n"
    "Example: producer p1 init transactional.id=app; producer p1 begin; "
    "producer p1 send orders/0 2; producer p1 commit",
    run_producer, completes="producer", verbs=VERBS,
    options=("transactional.id", "transaction.timeout.ms", TWO_PC, KEEP_PREPARED))

TRANSACTION_COMMANDS = (PRODUCER,)
"""The producer command."""
