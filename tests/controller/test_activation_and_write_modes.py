"""Activation records (Kafka's ActivationRecordsGeneratorTest and the activation cases of
its QuorumControllerTest) and the write modes (QuorumControllerTest's appendRecords cases)."""

from __future__ import annotations

import re

import pytest

from controller.activation import activation_records
from controller.errors import ApiError, ControllerFault
from controller.offset_control import OffsetControlManager
from controller.write_mode import WriteMode, default_mode, plan_batches
from metadata.bootstrap import BootstrapMetadata
from metadata.delta import BROKER_RESOURCE
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    NoOpRecord,
    ZkMigrationStateRecord,
)
from metadata.versions import LEVELS, METADATA_VERSION_FEATURE


def _bootstrap(level: int) -> BootstrapMetadata:
    return BootstrapMetadata.from_version(level, "test")


@pytest.mark.parametrize(("release", "atomic", "types"), [
    ("3.3-IV0", True, [FeatureLevelRecord]),
    ("3.4-IV0", True, [FeatureLevelRecord, ZkMigrationStateRecord]),
    ("3.6-IV1", False, [BeginTransactionRecord, FeatureLevelRecord, ZkMigrationStateRecord,
                        EndTransactionRecord]),
])
def test_activation_on_an_empty_log(release: str, atomic: bool, types: list[type]) -> None:
    result = activation_records(True, -1, LEVELS[release], _bootstrap(LEVELS[release]))
    assert result.atomic is atomic
    assert [type(r) for r in result.records] == types
    if not atomic:
        assert result.records[0] == BeginTransactionRecord("Bootstrap records")
    assert result.records[types.index(FeatureLevelRecord)] == FeatureLevelRecord(
        "metadata.version", LEVELS[release])


def test_activation_with_an_open_transaction_writes_one_atomic_abort() -> None:
    """QuorumControllerTest.testActivationRecordsPartialTransaction: a Begin replayed at
    offset 10 and committed leaves a transaction open; activating at 3.6-IV1 writes one
    atomic AbortTransactionRecord, which, replayed, closes it."""
    offsets = OffsetControlManager()
    offsets.replay_begin(10)
    offsets.handle_commit_batch(20, 1)
    start = offsets.transaction_start_offset
    assert start == 10
    result = activation_records(False, start, LEVELS["3.6-IV1"], _bootstrap(LEVELS["3.6-IV1"]))
    assert result.atomic
    assert result.records == [AbortTransactionRecord("Controller failover")]
    offsets.replay_abort(21)
    assert offsets.transaction_start_offset == -1


def test_activation_with_an_open_transaction_below_3_6_iv1_is_fatal() -> None:
    """QuorumControllerTest.testActivationRecordsPartialTransactionNoSupport: an open
    transaction found at 3.6-IV0, which has no transactions, cannot be aborted."""
    with pytest.raises(ControllerFault, match=re.escape(
            "in-progress transaction at offset 500, but the metadata.version 3.6-IV0 does not "
            "support transactions")):
        activation_records(False, 500, LEVELS["3.6-IV0"], _bootstrap(LEVELS["3.6-IV0"]))


def test_an_open_transaction_is_judged_by_the_logs_metadata_version_not_the_bootstrap() -> None:
    """On a non-empty log the bootstrap is not used: an open transaction in a log at
    3.6-IV0 is fatal even when the configured bootstrap is newer, and one in a log at
    3.6-IV1 is aborted even when the bootstrap is older (Kafka's
    ActivationRecordsGenerator reads the current metadata.version)."""
    with pytest.raises(ControllerFault,
                       match=re.escape("metadata.version 3.6-IV0 does not support")):
        activation_records(False, 500, LEVELS["3.6-IV0"], _bootstrap(LEVELS["3.7-IV0"]))
    result = activation_records(False, 500, LEVELS["3.6-IV1"], _bootstrap(LEVELS["3.3-IV0"]))
    assert result.records == [AbortTransactionRecord("Controller failover")]


def test_activation_on_a_committed_log_writes_nothing() -> None:
    assert activation_records(False, -1, 13, _bootstrap(13)).records == []


def test_non_atomic_splits_without_markers() -> None:
    """QuorumControllerTest.testAppendRecords: five records of a non-atomic result with at
    most two a batch are all written, in batches of 2, 2 and 1."""
    records = [NoOpRecord()] * 5
    batches = plan_batches(records, WriteMode.NON_ATOMIC, 2, 13, "five")
    assert [len(b) for b in batches] == [2, 2, 1]
    assert all(isinstance(r, NoOpRecord) for b in batches for r in b)


def test_atomic_refuses_more_than_one_batch() -> None:
    """QuorumControllerTest.testAppendRecordsAtomically, a kept difference: five records of
    an atomic result with at most two a batch are refused; Kafka's appendRecords throws
    (IllegalStateException, failing the controller over), kraftsim refuses the operation
    with POLICY_VIOLATION and writes nothing."""
    with pytest.raises(ApiError) as e:
        plan_batches([NoOpRecord()] * 5, WriteMode.ATOMIC, 2, 13, "five")
    assert e.value.code == "POLICY_VIOLATION"


def test_transactional_frames_with_markers_and_counts_them() -> None:
    batches = plan_batches([NoOpRecord()] * 5, WriteMode.TRANSACTIONAL, 3, 13, "five")
    flat = [r for b in batches for r in b]
    assert flat[0] == BeginTransactionRecord("five") and flat[-1] == EndTransactionRecord()
    assert [len(b) for b in batches] == [3, 3, 1]
    long_name = plan_batches([NoOpRecord()] * 5, WriteMode.TRANSACTIONAL, 3, 13, "n" * 300)
    assert long_name[0][0] == BeginTransactionRecord("n" * 255)  # the name: 255 at most
    assert plan_batches([NoOpRecord()] * 3, WriteMode.TRANSACTIONAL, 3, 13, "x") == \
        [[NoOpRecord()] * 3]  # one batch: atomic, no markers


def test_transactional_is_unavailable_below_3_6_iv1() -> None:
    with pytest.raises(ApiError, match=re.escape("3.6-IV1 or later; the cluster is at 3.6-IV0")) \
            as e:
        plan_batches([NoOpRecord()] * 5, WriteMode.TRANSACTIONAL, 2, 12, "five")
    assert e.value.code == "UNSUPPORTED_VERSION"
    assert default_mode(12) is WriteMode.ATOMIC
    assert default_mode(13) is WriteMode.TRANSACTIONAL


@pytest.mark.parametrize("level", [0, 1])
def test_bootstrap_with_eligible_leader_replicas_sets_the_cluster_min_isr(level: int) -> None:
    """Kafka 4.1's ActivationRecordsGenerator: a bootstrap that turns
    eligible.leader.replicas.version on (level 1) also writes the cluster-level
    min.insync.replicas (the static default, 1) after its records; one that names the
    feature at level 0 leaves ELR off and writes no config."""
    mv = LEVELS["4.0-IV1"]
    elr = FeatureLevelRecord("eligible.leader.replicas.version", level)
    bootstrap = BootstrapMetadata.from_records(
        (FeatureLevelRecord(METADATA_VERSION_FEATURE, mv), elr), "test")
    records = [r for r in activation_records(True, -1, mv, bootstrap).records
               if isinstance(r, FeatureLevelRecord | ConfigRecord)]
    extra = [ConfigRecord(BROKER_RESOURCE, "", "min.insync.replicas", "1")] if level else []
    assert records == [FeatureLevelRecord(METADATA_VERSION_FEATURE, mv), elr, *extra]
