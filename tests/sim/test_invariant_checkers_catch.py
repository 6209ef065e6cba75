"""The transaction checkers catch each violation they name: a hand-made committed log with
a committed and an aborted metadata transaction, then published images and controller
states that a broken node would show (an image inside a transaction, an aborted record
visible, a committed one missing, a controller state other than the log's, an LSO
inside a transaction). The untampered ones pass.

The tampering stands for a bug a checker must catch whatever code made it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from broker import Manifest
from controller.offset_control import RevertPoint
from metadata.image import MetadataImage
from metadata.schema import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
    TopicRecord,
)
from raft import Batch
from sim.invariants.history import CommittedLog
from sim.invariants.transactions import Publication, TransactionInvariants
from sim.world import InvariantViolation
from tests.sim.test_reference_replay import BAR, BAZ, FOO, partition


def _log() -> TransactionInvariants:
    """0-1 foo; 2-4 Begin t, bar; 5-6 bar-1, End (t committed, closed at 6);
    7-8 Begin u, baz; 9-10 Abort (u aborted at 9), foo-1; 11 foo-2 (epoch 2)."""
    history = CommittedLog()
    base = 0
    for epoch, records in (
            (1, (TopicRecord("foo", FOO), partition(FOO, 0))),
            (1, (BeginTransactionRecord("t"), TopicRecord("bar", BAR), partition(BAR, 0))),
            (1, (partition(BAR, 1), EndTransactionRecord())),
            (1, (BeginTransactionRecord("u"), TopicRecord("baz", BAZ))),
            (1, (AbortTransactionRecord(), partition(FOO, 1))),
            (2, (partition(FOO, 2),))):
        batch = Batch(base, epoch, records)
        assert history.observe(batch) is None
        base = batch.end_offset
    invariants = TransactionInvariants(history)
    invariants.check(_sim(), [])
    return invariants


def _sim() -> Any:
    return SimpleNamespace(now=0)


def _image(invariants: TransactionInvariants, content_at: int,
           offset: int | None = None) -> MetadataImage:
    """The committed state after ``content_at``, claiming to be at ``offset``."""
    image = invariants.reference.image_at(content_at)
    assert image is not None
    return image if offset is None else image.with_provenance(offset, 1)


def _publish(invariants: TransactionInvariants, image: MetadataImage) -> None:
    invariants._pending.append(Publication(4, image, Manifest(image.offset, 1, True, 1), 0))
    invariants.check(_sim(), [])


def _caught(invariants: TransactionInvariants, image: MetadataImage) -> InvariantViolation:
    with pytest.raises(InvariantViolation) as caught:
        _publish(invariants, image)
    return caught.value


def test_images_of_the_committed_log_outside_transactions_pass() -> None:
    invariants = _log()
    for offset in (1, 6, 9, 10, 11):
        _publish(invariants, _image(invariants, offset, offset))
    assert invariants.publications == 5 and invariants.partial_observations == 0
    assert [pub.image.offset for pub in invariants.on_publish] == [1, 6, 9, 10, 11]
    bar = _image(invariants, 6).topics_by_id
    assert BAR in bar and BAZ not in _image(invariants, 10).topics_by_id


@pytest.mark.parametrize("offset", [2, 3, 4, 5, 7, 8])
def test_an_image_inside_a_transaction_is_caught(offset: int) -> None:
    """From the Begin's offset up to the offset before its End or Abort."""
    invariants = _log()
    violation = _caught(invariants, _image(invariants, offset, offset))
    assert violation.invariant == "TxnAtomicVisibility"
    begin, name = (2, "t") if offset < 7 else (7, "u")
    assert f"node 4 published an image at offset {offset}, inside the transaction begun " \
           f"at {begin} ({name})" in violation.message


def test_an_image_showing_an_aborted_transaction_is_caught() -> None:
    invariants = _log()
    violation = _caught(invariants, _image(invariants, 8, 10))  # baz still there at 10
    assert violation.invariant == "AbortedTxnInvisible"
    assert "node 4's image at offset 10 differs from the committed log's state there" in \
        violation.message


def test_an_image_missing_a_committed_transaction_is_caught() -> None:
    invariants = _log()
    violation = _caught(invariants, _image(invariants, 1, 6))  # bar missing at the End
    assert violation.invariant == "CommittedTxnDurable"


def test_an_image_other_than_the_log_before_any_transaction_is_caught() -> None:
    invariants = _log()
    violation = _caught(invariants, MetadataImage.EMPTY.with_provenance(1, 1))
    assert violation.invariant == "ImagesAgree"


def test_an_image_inside_a_tracked_multi_batch_operation_is_partial() -> None:
    """A tracked operation of two or more batches: an image strictly inside it is counted;
    inside a transactional one it is a TxnAtomicVisibility violation."""
    for transactional in (False, True):
        invariants = _log()
        invariants.track(SimpleNamespace(batch_count=2, first_offset=9, last_offset=11,
                                         transactional=transactional,
                                         description="op"), 1)  # type: ignore[arg-type]
        invariants.track(SimpleNamespace(batch_count=1, first_offset=0, last_offset=1,
                                         transactional=True,
                                         description="one"), 1)  # type: ignore[arg-type]
        assert len(invariants.spans) == 1
        image = _image(invariants, 10, 10)
        if transactional:
            violation = _caught(invariants, image)
            assert violation.invariant == "TxnAtomicVisibility"
            assert "inside the transaction of op (9-11)" in violation.message
        else:
            _publish(invariants, image)
        assert invariants.partial_observations == 1
        assert invariants.partial_examples == [
            "node 4 published offset 10 inside op (offsets 9-11) at 0 ms"]


def test_what_the_reference_replay_finds_wrong_is_reported_unless_disabled() -> None:
    history = CommittedLog()
    assert history.observe(Batch(0, 1, (BeginTransactionRecord("a"),
                                        BeginTransactionRecord("b")))) is None
    with pytest.raises(InvariantViolation) as caught:
        TransactionInvariants(history).check(_sim(), [])
    assert caught.value.invariant == "TxnWellFormed"
    TransactionInvariants(history, disabled=frozenset({"TxnWellFormed"})).check(_sim(), [])


def _controller(invariants: TransactionInvariants, committed: int, image: MetadataImage,
                stable: int | None = None, fault: object = None,
                built: bool = True) -> Any:
    state = RevertPoint(image, -1)
    if not built:
        state = SimpleNamespace(built=False, image=image)  # type: ignore[assignment]
    return SimpleNamespace(
        fault=fault, committed_state=lambda: state,
        offsets=SimpleNamespace(last_committed_offset=committed,
                                last_stable_offset=committed if stable is None else stable))


def _check_controller(invariants: TransactionInvariants, controller: Any) -> None:
    invariants._check_controller(1, controller)


def test_a_controller_state_other_than_the_committed_log_is_caught() -> None:
    invariants = _log()
    _check_controller(invariants, _controller(invariants, 11, _image(invariants, 11)))
    with pytest.raises(InvariantViolation) as caught:
        _check_controller(invariants, _controller(invariants, 11, _image(invariants, 6)))
    assert caught.value.invariant == "ControllerMatchesLog"
    assert "controller 1's state at committed offset 11 differs from the committed log's" in \
        caught.value.message


def test_a_controller_state_seen_before_at_the_same_offsets_is_checked_if_it_changed() -> None:
    invariants = _log()
    _check_controller(invariants, _controller(invariants, 11, _image(invariants, 11)))
    with pytest.raises(InvariantViolation, match="ControllerMatchesLog"):
        _check_controller(invariants, _controller(invariants, 11, _image(invariants, 6)))


def test_a_stopped_controller_is_not_checked() -> None:
    invariants = _log()
    _check_controller(invariants, _controller(invariants, 11, _image(invariants, 6),
                                              fault=RuntimeError("stopped")))


def test_a_controller_not_rolled_back_after_an_abort_is_caught() -> None:
    """The batch ending at the committed offset holds the Abort: RollbackExact; a batch
    that holds an Abort but ends later is judged as ControllerMatchesLog."""
    history = CommittedLog()
    for batch in (Batch(0, 1, (TopicRecord("foo", FOO),)),
                  Batch(1, 1, (BeginTransactionRecord("u"), TopicRecord("baz", BAZ))),
                  Batch(3, 1, (AbortTransactionRecord(),))):
        assert history.observe(batch) is None
    invariants = TransactionInvariants(history)
    invariants.check(_sim(), [])
    with pytest.raises(InvariantViolation) as caught:
        _check_controller(invariants, _controller(invariants, 3, _image(invariants, 2)))
    assert caught.value.invariant == "RollbackExact"
    mid = _log()  # 9-10 is Abort, foo-1: the controller at 9 is inside that batch
    with pytest.raises(InvariantViolation) as caught:
        _check_controller(mid, _controller(mid, 9, _image(mid, 6)))
    assert caught.value.invariant == "ControllerMatchesLog"


@pytest.mark.parametrize("built", [True, False])
def test_a_controller_exposing_a_stable_offset_inside_a_transaction_is_caught(
        built: bool) -> None:
    """Also for a standby whose open transaction is not applied yet (state not built)."""
    invariants = _log()
    _check_controller(invariants, _controller(invariants, 11, _image(invariants, 11), 6,
                                              built=built))
    with pytest.raises(InvariantViolation) as caught:
        _check_controller(invariants, _controller(invariants, 11, _image(invariants, 11), 7,
                                                  built=built))
    assert caught.value.invariant == "TxnAtomicVisibility"
    assert "controller 1 exposes offset 7 as stable, inside the transaction begun at 7" in \
        caught.value.message


def test_the_same_controller_state_is_checked_again_when_its_stable_offset_moves() -> None:
    invariants = _log()
    controller = _controller(invariants, 11, _image(invariants, 11), 6)
    _check_controller(invariants, controller)
    controller.offsets.last_stable_offset = 7  # the same revert point, another LSO
    with pytest.raises(InvariantViolation, match="exposes offset 7 as stable"):
        _check_controller(invariants, controller)


class _Deferred:
    """A standby's state whose open transaction is checked but not applied yet: reading
    its image would apply it (``controller/deferred.py``)."""

    built = False

    @property
    def image(self) -> MetadataImage:
        raise AssertionError("the check applied a deferred transaction")


def test_a_standbys_deferred_transaction_is_not_applied_by_the_check() -> None:
    """Only its stable offset is checked; its content is compared once it is applied."""
    invariants = _log()
    state = _Deferred()
    controller = SimpleNamespace(fault=None, committed_state=lambda: state,
                                 offsets=SimpleNamespace(last_committed_offset=8,
                                                         last_stable_offset=6))
    _check_controller(invariants, controller)
    _check_controller(invariants, controller)
    controller.offsets.last_stable_offset = 7
    with pytest.raises(InvariantViolation, match="exposes offset 7 as stable"):
        _check_controller(invariants, controller)


def test_an_image_at_the_end_of_a_whole_operation_is_not_partial() -> None:
    """A tracked non-transactional operation of batches 0-1 and 2 (its last batch one
    record): an image inside it (at 1) is partial, one at its last offset shows it whole."""
    history = CommittedLog()
    for batch in (Batch(0, 1, (TopicRecord("foo", FOO), partition(FOO, 0))),
                  Batch(2, 1, (partition(FOO, 1),)),
                  Batch(3, 1, (partition(FOO, 2),))):
        assert history.observe(batch) is None
    invariants = TransactionInvariants(history)
    invariants.check(_sim(), [])
    invariants.track(SimpleNamespace(batch_count=2, first_offset=0, last_offset=2,
                                     transactional=False,
                                     description="op"), 1)  # type: ignore[arg-type]
    _publish(invariants, _image(invariants, 1))
    assert invariants.partial_observations == 1
    _publish(invariants, _image(invariants, 2))
    _publish(invariants, _image(invariants, 3))
    assert invariants.partial_observations == 1
    assert invariants.publications == 3
