"""Kafka's error names for refused operations, and the controller's fatal faults."""

from __future__ import annotations

RETRIABLE = frozenset({"NOT_CONTROLLER", "REQUEST_TIMED_OUT"})
"""Errors after which resubmitting the same operation may succeed."""


class ApiError(Exception):
    """An operation refused with a Kafka error name (``code``) and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @property
    def retriable(self) -> bool:
        """True when resubmitting may succeed (e.g. NOT_CONTROLLER after a failover)."""
        return self.code in RETRIABLE


def not_controller(leader: int | None) -> ApiError:
    """NOT_CONTROLLER for an operation this controller cannot take because it is not the
    active one, naming the leader its raft knows, if any (Kafka's
    ``ControllerExceptions.newWrongControllerException``, with its text)."""
    if leader is None:
        return ApiError("NOT_CONTROLLER", "No controller appears to be active.")
    return ApiError("NOT_CONTROLLER", f"The active controller appears to be node {leader}.")


def policy_violation_too_large(count: int, limit: int) -> ApiError:
    """Kafka's refusal of an operation over the per-batch record limit (atomic mode)."""
    return ApiError("POLICY_VIOLATION",
                    f"Unable to perform excessively large batch operation. ({count} records, "
                    f"at most {limit} in one atomic batch)")


class ControllerFault(Exception):
    """A fatal fault that stops the controller (Kafka's fatal fault handler); ``offset`` is
    the offset of the record at fault, or -1."""

    def __init__(self, message: str, offset: int = -1) -> None:
        super().__init__(message if offset < 0 else f"{message} (offset {offset})")
        self.message = message
        self.offset = offset
