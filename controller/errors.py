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


def not_controller(node_id: int, leader: int | None) -> ApiError:
    """NOT_CONTROLLER, naming the active controller when known."""
    where = f"; the active controller is {leader}" if leader is not None else ""
    return ApiError("NOT_CONTROLLER", f"node {node_id} is not the active controller{where}")


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
