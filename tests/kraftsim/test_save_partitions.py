"""``--save`` of partition replicas and ``dump-log`` of what it wrote: transactional and
control batches, ``__transaction_state`` records and the abort index, read back equal."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.replica_manager import ReplicaManager
from broker.txn.state import decode_record
from kafka_format.data_log import decode_marker
from kafka_format.files import read_data_segment, read_txn_index
from kafka_format.transaction_log import decode_key, decode_value
from kraftsim.dump_log import main
from shell.session import Session
from sim.save import save_simulation

SCRIPT = """
cluster controllers=3 brokers=3 seed=2 heartbeats=on
create-topic orders partitions=2 replication-factor=3
run-until idle
producer p1 init transactional.id=app
producer p1 begin
producer p1 send orders/0 2
producer p1 send orders/1 1
producer p1 commit
producer p1 begin
producer p1 send orders/0 3
producer p1 abort
producer p2 init transactional.id=other
producer p2 begin
producer p2 send orders/0 1
producer p2 commit
run-until idle
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, Path]:
    session = Session(lambda line, error: None)
    for line in SCRIPT.strip().splitlines():
        assert session.execute(line), line
    assert session.lab is not None
    target = tmp_path_factory.mktemp("save") / "run"
    save_simulation(session.lab.cluster.sim, target)
    return session, target


def test_every_replica_reads_back_as_its_log(saved: tuple[Session, Path]) -> None:
    session, target = saved
    assert session.lab is not None
    sim = session.lab.cluster.sim
    checked = 0
    for broker in session.lab.config.broker_ids:
        manager = next(a for a in sim.slots[broker].apps if isinstance(a, ReplicaManager))
        for replica in manager.replicas.values():
            directory = target / f"broker-{broker}" / f"{replica.topic}-{replica.partition_id}"
            result = read_data_segment(directory / "00000000000000000000.log")
            assert result.error is None
            read = [(b, r, b.base_offset + i) for b in result.batches
                    for i, r in enumerate(b.records)]
            entries = replica.log.entries
            assert [offset for _, _, offset in read] == [e.offset for e in entries]
            for (batch, record, _), entry in zip(read, entries, strict=True):
                assert batch.partition_leader_epoch == entry.leader_epoch
                assert batch.is_transactional == entry.transactional
                assert batch.is_control == (entry.control >= 0)
                assert (batch.producer_id, batch.producer_epoch) == \
                    (entry.producer_id, entry.producer_epoch)
                if entry.control >= 0:
                    marker = decode_marker(record)
                    assert marker is not None
                    assert marker.name == ("COMMIT" if entry.control == 1 else "ABORT")
                    assert marker.coordinator_epoch == entry.coordinator_epoch
                elif replica.topic == "__transaction_state":
                    stored = decode_record(entry.value)
                    assert record.key is not None and record.value is not None
                    assert decode_key(record.key) == stored.TransactionalId
                    value = decode_value(record.value)
                    assert stored.Value is not None
                    want = stored.Value
                    assert (value.ProducerId, value.ProducerEpoch, value.TransactionStatus,
                            value.TransactionTimeoutMs, value.TransactionStartTimestampMs,
                            value.TransactionLastUpdateTimestampMs, value.PreviousProducerId,
                            value.NextProducerId) == \
                        (want.ProducerId, want.ProducerEpoch, want.TransactionStatus,
                         want.TransactionTimeoutMs, want.TransactionStartTimestampMs,
                         want.TransactionLastUpdateTimestampMs, want.PreviousProducerId,
                         want.NextProducerId)
                    parts = sorted((t, p) for t, ids in value.TransactionPartitions or ()
                                   for p in ids)
                    assert parts == sorted((t, p) for t, p in want.TransactionPartitions)
                else:
                    assert record.key is None and record.value == entry.value.encode()
                    assert batch.base_sequence + (entry.offset - batch.base_offset) \
                        == entry.sequence
            index = directory / "00000000000000000000.txnindex"
            aborted = [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset)
                       for a in replica.log.txns.aborted]
            assert index.exists() == bool(aborted)
            if aborted:
                assert [(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
                        for e in read_txn_index(index).entries] == aborted
            checked += 1
    assert checked >= 6 + 9  # orders-0/1 and __transaction_state-0..2 on three brokers


def test_dump_log_shows_markers_flags_and_the_abort_index(
        saved: tuple[Session, Path], capsys: pytest.CaptureFixture[str]) -> None:
    session, target = saved
    assert session.lab is not None
    manager = session.lab.cluster.replica_manager(0)
    assert manager is not None
    replica = next(r for r in manager.replicas.values()
                   if r.topic == "orders" and r.partition_id == 0)
    (aborted,) = replica.log.txns.aborted
    partition = target / "broker-0" / "orders-0"
    assert main([str(partition / "00000000000000000000.log"),
                 str(partition / "00000000000000000000.txnindex")]) == 0
    out = capsys.readouterr().out
    assert "isTransactional: true isControl: false" in out
    assert "isTransactional: true isControl: true" in out
    assert "keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT " \
           "coordinatorEpoch: 0" in out
    assert "endTxnMarker: COMMIT coordinatorEpoch: 0" in out
    assert "payload: app/p1/1/0" in out
    assert (f"version: 0 producerId: {aborted.producer_id} firstOffset: {aborted.first_offset} "
            f"lastOffset: {aborted.last_offset} lastStableOffset: "
            f"{aborted.last_stable_offset}\n") in out
    state = sorted((target / "broker-0").glob("__transaction_state-*/*.log"))
    assert main([str(p) for p in state]) == 0
    out = capsys.readouterr().out
    assert 'key: {"type":"0","data":{"transactionalId":"app"}} payload: {"version":"1",' in out
    assert '"transactionStatus":4' in out  # CompleteCommit


def test_dump_log_reports_a_damaged_index(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "00000000000000000000.txnindex"
    bad.write_bytes(b"\x00" * 40)
    assert main([str(bad)]) == 1
    out, err = capsys.readouterr()
    assert "txnindex" in err and "6 bytes after the last whole 34-byte entry" in err
    assert out.splitlines() == [  # the whole entry before the damage is still printed
        f"Dumping {bad} (transaction index)",
        "version: 0 producerId: 0 firstOffset: 0 lastOffset: 0 lastStableOffset: 0"]
    assert main([str(tmp_path / "00000000000000000034.txnindex")]) == 1  # missing
    out, err = capsys.readouterr()
    assert out == "" and "00000000000000000034.txnindex" in err
