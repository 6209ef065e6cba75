"""The lab's transactional producer verbs: completion, refusals with clear errors, the
/transactions tree in JSON, and read_committed against the consumer filter."""

from __future__ import annotations

import json

import pytest

from broker.txn.fetch import READ_COMMITTED, fetch_log, filter_committed
from shell.completion import candidates
from tests.shell.shell_recorder import Recorder

START = ("cluster controllers=3 brokers=3 seed=4 heartbeats=on",
         "create-topic t partitions=2 replication-factor=3", "run-until idle")


@pytest.fixture(scope="module")
def lab() -> Recorder:
    shell = Recorder()
    shell.run(*START, "producer p1 init transactional.id=app", "producer p1 begin",
              "producer p1 send t/0 2", "producer p1 send t/1 1", "producer p1 abort",
              "producer p1 begin", "producer p1 send t/0 1", "producer p1 commit",
              "run-until idle")
    return shell


def test_completion_offers_verbs_names_and_options(lab: Recorder) -> None:
    session = lab.session
    assert "producer" in candidates(session, "prod")
    assert candidates(session, "producer p") == ["p1"]
    assert candidates(session, "producer p1 c") == ["commit", "complete"]
    assert candidates(session, "producer p2 init trans") == [
        "transactional.id=", "transaction.timeout.ms=", "transaction.two.phase.commit.enable="]
    assert candidates(session, "consume t/0 iso") == ["isolation="]


def test_read_committed_matches_kafkas_consumer_filter(lab: Recorder) -> None:
    lines = lab.run("consume t/0 isolation=read_committed")
    assert lines[0].endswith("1 aborted transaction filtered")
    session_lab = lab.session.lab
    assert session_lab is not None
    cluster = session_lab.cluster
    manager = cluster.replica_manager(cluster.partition_leader("t", 0))
    assert manager is not None
    replica = manager.leader_replica("t", 0)
    assert not isinstance(replica, str)
    fetched = fetch_log(replica.log, 0, 1000, READ_COMMITTED)
    expected = [f"  {e.offset}: {e.value}"
                for e in filter_committed(fetched.entries, fetched.aborted_transactions)]
    assert lines[1:] == expected == ["  3: app/p1/2/2"]
    uncommitted = lab.run("consume t/0 isolation=read_uncommitted")
    assert len(uncommitted) == 4  # the aborted records too, never the markers


def test_transactions_tree_in_json() -> None:
    shell = Recorder(output_format="json")
    shell.run(*START, "producer p1 init", "run-until idle")
    (line,) = shell.run("cat /transactions/p1/record /transactions/p1/state")
    files = json.loads(line)
    record = files["/transactions/p1/record"]
    assert record["topic"] == "__transaction_state" and record["value"]["ProducerEpoch"] == 0
    assert files["/transactions/p1/state"] == "Empty"
    (line,) = shell.run("producer")
    assert json.loads(line) == [{"name": "p1", "transactionalId": "p1", "state": "READY",
                                 "producerId": record["value"]["ProducerId"],
                                 "producerEpoch": 0, "committed": 0, "aborted": 0,
                                 "error": None}]


def test_refusals_are_one_clear_line(lab: Recorder) -> None:
    errors = {
        "producer p1": None,  # needs a verb
        "producer p1 sned": "did you mean send?",
        "producer p1 send t/0 0": "COUNT",
        "producer p1 send t/9 1": "no partition 9",
        "producer p1 send nowhere/0 1": "no topic 'nowhere'",
        "producer p1 commit": "invalid transition from READY to COMMITTING_TRANSACTION",
        "producer p1 init": "producer p1 exists",
        "producer p3 begin": "start one with: producer p3 init",
        "producer p4 init transactional.id=": "must not be empty",
        "producer p4 init transaction.timeout.ms=2147483648": "transaction.timeout.ms",
        "producer p4 init transaction.timeout.ms=0": "transaction.timeout.ms",
        "producer p4 init bogus=1": "unknown option 'bogus'",
        "producer p1 prepare": "invalid transition from READY to PREPARED_TRANSACTION",
        "producer p1 complete": "has no prepared transaction",
        "producer p1 complete 7": "is not a prepared state",
        "producer p4 init keepPreparedTxn=true": "needs transaction.two.phase.commit.enable",
        "consume t/0 isolation=committed": "isolation must be one of",
    }
    for command, words in errors.items():
        lines = lab.run(command)
        assert len(lines) == 1, (command, lines)
        assert lines[0].startswith(("ERR producer: ", "ERR consume: ")), (command, lines)
        if words is not None:
            assert words in lines[0], (command, lines)


def test_a_timeout_above_the_brokers_maximum_is_refused_by_the_coordinator() -> None:
    """A producer's transaction.timeout.ms above the coordinator's transaction.max.timeout.ms
    (900000) is sent: InitProducerId answers INVALID_TRANSACTION_TIMEOUT, fatal for the
    producer (Kafka's InvalidTxnTimeoutException); 900000 itself is accepted."""
    shell = Recorder()
    shell.run(*START, "producer p4 init transaction.timeout.ms=900001",
              "producer p5 init transaction.timeout.ms=900000", "run-until idle")
    table = shell.run("producer")
    assert any(row.split()[0] == "p4" and row.split()[-1] == "INVALID_TRANSACTION_TIMEOUT"
               for row in table)
    assert shell.session.lab is not None
    producers = shell.session.lab.txn.producers
    assert producers["p4"].producer.fatal == "INVALID_TRANSACTION_TIMEOUT"
    assert producers["p5"].producer.fatal is None
    assert producers["p5"].producer.producer_epoch == 0


def test_prepare_needs_two_phase_commit_and_a_flush() -> None:
    shell = Recorder()
    shell.run(*START, "producer p1 init", "producer p1 begin", "producer p1 send t/0 1",
              "producer p2 init transactional.id=db transaction.two.phase.commit.enable=true",
              "producer p2 begin", "producer p2 send t/0 1")
    (line,) = shell.run("producer p2 prepare")
    assert "has calls to finish" in line and line.startswith("ERR ")
    shell.run("run-until idle")
    (line,) = shell.run("producer p1 prepare")
    assert "not initialized with transaction.two.phase.commit.enable=true" in line
    (line,) = shell.run("producer p2 prepare")
    assert shell.session.lab is not None
    p2 = shell.session.lab.txn.producers["p2"].producer
    assert line.startswith(f"producer p2: prepareTransaction() = PreparedTxnState "
                           f"{p2.producer_id}:{p2.producer_epoch} ")
    (line,) = shell.run("producer p2 begin")
    assert "invalid transition from PREPARED_TRANSACTION to IN_TRANSACTION" in line
    shell.run("producer p3 init transactional.id=db transaction.two.phase.commit.enable=true "
              "keepPreparedTxn=true", "run-until idle")
    (line,) = shell.run("producer p3 begin")  # it kept p2's prepared transaction
    assert "invalid transition from PREPARED_TRANSACTION to IN_TRANSACTION); complete first" \
        in line
    (line,) = shell.run("producer p3 complete")
    assert line == f"producer p3: completeTransaction({p2.producer_id}:{p2.producer_epoch}) " \
        f"queued"


def test_needs_broker_replicas() -> None:
    shell = Recorder()
    shell.run("cluster controllers=1 brokers=1")
    (line,) = shell.run("producer p1 init")
    assert line.startswith("ERR producer: brokers host no partition replicas")
    (line,) = Recorder().run("producer p1 init")
    assert line.startswith("ERR producer: there is no simulation yet")


def test_listing(lab: Recorder) -> None:
    lines = lab.run("producer")
    assert lines[0].split() == ["name", "transactional.id", "state", "producerId",
                                "producerEpoch", "committed", "aborted", "error"]
    assert lines[1].split() == ["p1", "app", "READY", "0", "0", "1", "1", "-"]


@pytest.mark.parametrize(("brokers", "said"), [
    (1, "replication factor 1, min.insync.replicas 1"),
    (2, "replication factor 2, min.insync.replicas 2"),
])
def test_the_coordinators_start_line_gives_the_small_clusters_replication(brokers: int,
                                                                         said: str) -> None:
    """``__transaction_state`` on fewer than three brokers: one replica per broker."""
    shell = Recorder()
    lines = shell.run(f"cluster controllers=1 brokers={brokers} seed=4 heartbeats=on",
                      "run-until idle", "producer p1 init")
    (started,) = [line for line in lines if line.startswith("transaction coordinators")]
    assert started.endswith(f"__transaction_state has 3 partitions, {said}")


def test_a_transaction_held_open_past_the_lso_bound_is_a_violation() -> None:
    """The shell checks producer transactions too: a transaction timeout longer than the
    LSO bound lets an open transaction hold the LSO until the check stops the run (from the
    first record's append, after the leader's KIP-890 verification round trip)."""
    shell = Recorder()
    lines = shell.run("cluster controllers=1 brokers=1 seed=4 heartbeats=on",
                      "create-topic t partitions=1 replication-factor=1", "run-until idle",
                      "producer p1 init transaction.timeout.ms=900000", "run-until idle",
                      "producer p1 begin", "producer p1 send t/0 1", "run-until idle",
                      "tick 120000")
    assert lines[-1] == ("ERR INVARIANT VIOLATED at 45446 ms: LsoBounded: t-0: LSO held at 0 "
                         "(HW 1) for 45090 ms (bound 45000 ms)")
