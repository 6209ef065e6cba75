"""What every operation has: a description, and record generation against the latest state."""

from __future__ import annotations

import random
from typing import Any, Protocol

import msgspec

from controller.operations.bounded import MAX_RECORDS_PER_USER_OP, BoundedRecords
from metadata.image import MetadataImage
from metadata.schema import MetadataRecord


class OperationContext(msgspec.Struct, frozen=True):
    """What an operation sees when it generates its records.

    ``image`` is the controller's latest in-memory state, uncommitted records
    included (as in Kafka); ``next_offset`` is where its first record will be;
    ``rng`` is the controller's seeded generator (topic ids, placement);
    ``max_records`` bounds the records one operation may generate (see
    :meth:`records`); ``controller_ids`` are the controllers of the quorum (a
    config may name one as a broker resource, as in Kafka's
    ConfigResourceExistenceChecker); ``cluster_id`` is the controller's cluster id, which a
    broker's registration must name (None: not checked).
    """

    image: MetadataImage
    rng: random.Random
    next_offset: int
    node_id: int
    max_records: int = MAX_RECORDS_PER_USER_OP
    controller_ids: frozenset[int] = frozenset()
    cluster_id: str | None = None

    def records(self) -> BoundedRecords:
        """An empty list for the operation's records that raises POLICY_VIOLATION as soon as
        more than ``max_records`` are added (Kafka's BoundedList)."""
        return BoundedRecords(self.max_records)


class Generated(msgspec.Struct, frozen=True):
    """An operation's records and the response it acknowledges with once committed."""

    records: list[MetadataRecord]
    response: Any = None


class Operation(Protocol):
    """A controller write: it validates, then returns records, or raises ApiError.

    An operation may also have ``early_result() -> Generated | None``: a result
    given at once, before any check or write, for a request with nothing in it
    (Kafka completes those without an event on the controller's queue).
    """

    def describe(self) -> str:
        """A short human description (also the transaction name)."""

    def generate(self, ctx: OperationContext) -> Generated:
        """The records of the operation against ``ctx.image``; raises ApiError to refuse."""
