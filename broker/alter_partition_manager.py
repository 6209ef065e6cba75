"""AlterPartitionManager: a broker's ISR proposals, batched to the active controller
(Kafka's ``DefaultAlterPartitionManager``).

The partitions a broker leads submit their ISR changes here (Kafka's Partition calls
``submit``); the manager keeps ONE AlterPartition request in flight:

- a proposal waits in :attr:`AlterPartitionManager.unsent`, keyed by partition and in
  the order submitted (deterministic); a partition already waiting, or in the request
  out, is refused at once (:meth:`~AlterPartitionManager.submit` returns None: Kafka's
  OPERATION_NOT_ATTEMPTED), so a partition has at most one proposal here;
- with no request in flight, the next one carries every proposal waiting, grouped by
  topic (topics and partitions in the order submitted), and the broker's epoch read as
  it is built; the proposals stay in the map until answered;
- an answer with no top-level error answers each partition it names (its own error, or
  its new state: the owner's ``on_answer``, the partition removed from the map first so
  that the callback may submit again); a partition sent but missing from the answer
  stays in the map and goes in the next request, which is sent at once;
- after a top-level error (STALE_BROKER_EPOCH, UNKNOWN_SERVER_ERROR, anything but
  NOT_CONTROLLER) nothing is answered, every proposal stays, and the next request goes
  :data:`ALTER_RETRY_MS` later (or at the next submit, whichever comes first, as in
  Kafka, whose scheduled send finds the request of that submit in flight).

Beneath it the broker's "alter-partition"
:class:`~metadata.controller_channel.ControllerChannel` carries the request (never
given up, one in flight): to the controller the broker's raft client knows, again with a
new correlation id after a NOT_CONTROLLER answer (at the top level or a partition's:
Kafka's channel looks for it anywhere in the answer), after ``request.timeout.ms``
without one, or when a new controller is known; a late answer to an earlier send is
ignored. The request it sends again is the one built, broker epoch included, as
Kafka's channel resends its request.

One difference: a broker not registered (no broker epoch yet, -1) builds no request;
the manager looks again :data:`ALTER_RETRY_MS` later (Kafka would send -1 and be
refused STALE_BROKER_EPOCH, then wait as long).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from metadata.controller_channel import ControllerChannel
from metadata.requests import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicData,
    NodeMessage,
)

ALTER_RETRY_MS = 50
"""How long the manager waits to send the proposals again after a top-level error
(Kafka's DefaultAlterPartitionManager schedules its next send 50 ms on)."""

ALTER_RETRY_TIMEOUT_MS = 1 << 62
"""The AlterPartition channel's retry timeout: never (Kafka's Long.MAX_VALUE)."""


@dataclass(slots=True, eq=False)
class AlterPartitionItem:
    """One partition's proposal in the manager (Kafka's AlterPartitionItem): its owner
    compares the item an answer comes for with the one it holds (identity)."""

    topic_id: str
    partition: AlterPartitionPartitionData

    @property
    def key(self) -> tuple[str, int]:
        """(topic id, partition)."""
        return self.topic_id, self.partition.partition_index


AnswerCallback = Callable[[AlterPartitionItem, AlterPartitionPartitionResponse, int], None]
"""Called with the item, its partition's answer (error NONE with the new state, or an
error) and the time."""


def not_controller_anywhere(answer: Any) -> bool:
    """Whether an AlterPartition answer says NOT_CONTROLLER, at the top level or for any
    partition (Kafka's channel counts the errors of the whole response)."""
    if getattr(answer, "error", None) == "NOT_CONTROLLER":
        return True
    return isinstance(answer, AlterPartitionResponse) and any(
        part.error == "NOT_CONTROLLER" for _, part in answer.partitions())


def build_request(broker_id: int, broker_epoch: int,
                  items: tuple[AlterPartitionItem, ...]) -> AlterPartitionRequest:
    """The request carrying ``items``, grouped by topic in the order of their first item."""
    by_topic: dict[str, list[AlterPartitionPartitionData]] = {}
    for item in items:
        by_topic.setdefault(item.topic_id, []).append(item.partition)
    return AlterPartitionRequest(0, broker_id, broker_epoch, tuple(
        AlterPartitionTopicData(topic_id, tuple(parts)) for topic_id, parts in by_topic.items()))


def _never_given_up(now: int) -> None:
    """The AlterPartition channel's retry timeout never ends (Kafka: Long.MAX_VALUE)."""


class AlterPartitionManager:
    """One broker's AlterPartition batching; see the module docs."""

    def __init__(self, broker_id: int, broker_epoch: Callable[[], int],
                 controller: Callable[[], int | None], *, request_timeout_ms: int,
                 on_answer: AnswerCallback, emit: Callable[[NodeMessage], None],
                 controller_epoch: Callable[[], int],
                 next_correlation: Callable[[], int]) -> None:
        """``broker_epoch``: the broker's epoch now (-1: not registered); ``controller``
        and ``controller_epoch``: the controller the raft client knows and its epoch;
        ``on_answer``: where partition answers go; ``emit`` and ``next_correlation``: the
        owner's outbox and correlation ids."""
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        self.on_answer = on_answer
        self.unsent: dict[tuple[str, int], AlterPartitionItem] = {}
        """The proposals not yet answered, by partition, in the order submitted (those
        of the request in flight included; Kafka's unsentIsrUpdates)."""
        self.in_flight: tuple[AlterPartitionItem, ...] | None = None
        """The items of the request out (or queued in the channel), None when none is."""
        self.retry_at: int | None = None
        """When the next request goes after a top-level error (or a broker epoch of -1)."""
        self.channel = ControllerChannel(
            broker_id, controller, retry_timeout_ms=ALTER_RETRY_TIMEOUT_MS,
            request_timeout_ms=request_timeout_ms, emit=emit, refused=not_controller_anywhere,
            leader_epoch=controller_epoch, next_correlation=next_correlation)
        """The "alter-partition" channel to the controller (Kafka's, beneath its
        AlterPartitionManager)."""

    def submit(self, topic_id: str, partition: AlterPartitionPartitionData,
               now: int) -> AlterPartitionItem | None:
        """Queue one partition's proposal; None when that partition already has one here
        (Kafka's OPERATION_NOT_ATTEMPTED, which its Partition takes at once)."""
        key = (topic_id, partition.partition_index)
        if key in self.unsent:
            return None
        item = self.unsent[key] = AlterPartitionItem(topic_id, partition)
        self._maybe_send(now)
        return item

    def poll(self, now: int) -> None:
        """Time the channel's request out or send it again; the send after a top-level
        error when it is due."""
        if self.channel.busy:
            self.channel.poll(now)
        if self.retry_at is not None and now >= self.retry_at:
            self.retry_at = None
            self._maybe_send(now)

    def next_deadline(self) -> int | None:
        """The channel's next deadline or the send after an error, whichever is first."""
        at, retry = self.channel.deadline, self.retry_at
        if at is None or (retry is not None and retry < at):
            return retry
        return at

    def handle_message(self, env: NodeMessage, now: int) -> bool:
        """Take an AlterPartition answer; False when it answers no request out."""
        return self.channel.handle_message(env, now)

    def leader_changed(self, now: int) -> None:
        """The raft client knows a new controller: a request out to another goes again."""
        self.channel.leader_changed(now)

    # ------------------------------------------------------------------ internals
    def _maybe_send(self, now: int) -> None:
        """With no request in flight, send every proposal waiting in one request."""
        if not self.unsent or self.in_flight is not None:
            return
        epoch = self.broker_epoch()
        if epoch < 0:  # not registered: look again later (see the module docs)
            if self.retry_at is None:
                self.retry_at = now + ALTER_RETRY_MS
            return
        items = tuple(self.unsent.values())
        self.in_flight = items

        def answered(answer: Any, at: int) -> None:
            self._on_response(items, answer, at)

        self.channel.send(build_request(self.broker_id, epoch, items), now, answered,
                          _never_given_up)

    def _on_response(self, items: tuple[AlterPartitionItem, ...],
                     answer: AlterPartitionResponse, now: int) -> None:
        """Answer the partitions the response names (see the module docs); the next
        request goes at once, or ALTER_RETRY_MS after a top-level error."""
        if answer.error != "NONE":
            self.in_flight = None
            self.retry_at = now + ALTER_RETRY_MS
            return
        answers = {(topic_id, part.partition_index): part
                   for topic_id, part in answer.partitions()}
        for item in items:  # (the items sent: one missing from the answer goes again)
            part = answers.get(item.key)
            if part is None:
                continue
            del self.unsent[item.key]
            self.on_answer(item, part, now)  # (it may submit again: queued, not sent)
        self.in_flight = None
        self._maybe_send(now)
