"""ProducerIdManager: a broker's block of producer ids, asked of the controller.

Kafka's ``RPCProducerIdManager``: the broker hands out ids from the block the
controller allocated to it (AllocateProducerIds -> ProducerIdsRecord, blocks
of 1,000) and asks for the next block as it hands out the current one's first id
plus 90% of its size. While no id is available, InitProducerId answers
COORDINATOR_LOAD_IN_PROGRESS (the client retries). One request at a time:

- an error answer, or a block that is invalid (negative start or length, an
  end past Long.MAX_VALUE) or starts below the current block's last id,
  grants nothing, and no request is sent for ``RETRY_BACKOFF_MS`` (Kafka's
  RetryBackoffMs);
- a request with no answer after ``REQUEST_RETRY_TIMEOUT_MS`` is given up (the
  broker's channel to the controller times it out: Kafka's ``onTimeout``), so
  the next InitProducerId asks again; a late answer to it is ignored.
"""

from __future__ import annotations

from collections.abc import Callable

from metadata.requests import AllocateProducerIdsRequest, AllocateProducerIdsResponse

PREFETCH_RATIO = 0.9
"""Ask for the next block once this share of the current one is used."""
RETRY_BACKOFF_MS = 50
"""Kafka's ProducerIdManager.RetryBackoffMs: the wait after a failed allocation."""
REQUEST_RETRY_TIMEOUT_MS = 60_000
"""The retryTimeoutMs of Kafka's broker-to-controller ("forwarding") channel."""
LONG_MAX = (1 << 63) - 1


class ProducerIdManager:
    """Producer ids of one broker; see the module docs."""

    def __init__(self, broker_id: int, send: Callable[[object], bool]) -> None:
        self.broker_id = broker_id
        self.send = send
        self.blocks: list[tuple[int, int, int]] = []  # (next id, end, first id): current, next
        self._outstanding: int | None = None
        self._sent_at = 0
        self._backoff_until = -1
        self._last_id = -1  # the last id of the latest block taken
        self._correlation = 0

    def next_id(self, broker_epoch: int, now: int = 0) -> tuple[str, int]:
        """(NONE, id), or (COORDINATOR_LOAD_IN_PROGRESS, -1) while a block is on its way."""
        if self._outstanding is not None and now - self._sent_at >= REQUEST_RETRY_TIMEOUT_MS:
            self._outstanding = None  # the channel gave the request up
        while self.blocks and self.blocks[0][0] >= self.blocks[0][1]:
            self.blocks.pop(0)
        if not self.blocks:
            self._request(broker_epoch, now)
            return "COORDINATOR_LOAD_IN_PROGRESS", -1
        start, end, first = self.blocks[0]
        self.blocks[0] = (start + 1, end, first)
        if len(self.blocks) == 1 and start == first + int((end - first) * PREFETCH_RATIO):
            self._request(broker_epoch, now)  # Kafka's prefetch target
        return "NONE", start

    def _request(self, broker_epoch: int, now: int) -> None:
        if self._outstanding is not None or broker_epoch < 0 or now < self._backoff_until:
            return
        self._correlation += 1
        if self.send(AllocateProducerIdsRequest(self._correlation, self.broker_id,
                                                broker_epoch)):
            self._outstanding = self._correlation
            self._sent_at = now

    def handle_message(self, msg: object, now: int = 0) -> None:
        """Take the controller's block (or back off after a failure)."""
        if not isinstance(msg, AllocateProducerIdsResponse) or \
                msg.correlation_id != self._outstanding:
            return
        self._outstanding = None
        start, length = msg.producer_id_start, msg.producer_id_len
        if msg.error == "NONE" and start >= self._last_id and start >= 0 and length >= 0 \
                and start <= LONG_MAX - length:
            self.blocks.append((start, start + length, start))
            self._last_id = start + length - 1
        else:
            self._backoff_until = now + RETRY_BACKOFF_MS
