"""OperationHandle: what became of a submitted operation."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from controller.errors import ApiError


class OperationStatus(StrEnum):
    """Where an operation stands."""

    PENDING = "pending"
    COMMITTED = "committed"
    FAILED = "failed"


class OperationHandle:
    """A submitted operation: pending until its last record is below the LSO, or failed."""

    def __init__(self, op_id: int, description: str, controller_id: int, submitted_at: int,
                 mode: str) -> None:
        self.op_id = op_id
        self.description = description
        self.controller_id = controller_id
        self.submitted_at = submitted_at
        self.mode = mode
        self.status = OperationStatus.PENDING
        self.error: ApiError | None = None
        self.response: Any = None
        self.first_offset = -1
        self.last_offset = -1
        self.record_count = 0
        self.batch_count = 0
        self.transactional = False
        self.completed_at: int | None = None
        self._callbacks: list[Callable[[OperationHandle], None]] = []

    def on_done(self, callback: Callable[[OperationHandle], None]) -> None:
        """Call ``callback(handle)`` once the operation is done (now, if it already is)."""
        if self.done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def _finished(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    @property
    def done(self) -> bool:
        """True once committed or failed."""
        return self.status is not OperationStatus.PENDING

    def commit(self, now: int) -> None:
        """The operation's records are committed and visible (below the LSO)."""
        self.status = OperationStatus.COMMITTED
        self.completed_at = now
        self._finished()

    def fail(self, error: ApiError, now: int) -> None:
        """The operation is refused or lost (e.g. NOT_CONTROLLER after a failover)."""
        self.status = OperationStatus.FAILED
        self.error = error
        self.completed_at = now
        self._finished()

    def outcome(self) -> str:
        """``committed`` or the error name, or ``pending``."""
        if self.error is not None:
            return self.error.code
        return self.status.value

    def __repr__(self) -> str:
        return f"<{self.description}: {self.outcome()}>"
