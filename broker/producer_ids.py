"""ProducerIdManager: a broker's block of producer ids, asked of the controller.

Kafka's ``RPCProducerIdManager``: the broker hands out ids from the block the
controller allocated to it (AllocateProducerIds -> ProducerIdsRecord, blocks
of 1,000) and asks for the next block as it hands out the current one's first id
plus 90% of its size. While no id is available, InitProducerId answers
COORDINATOR_LOAD_IN_PROGRESS (the client retries). One request at a time, through the
broker's "forwarding" channel to the controller
(:class:`~metadata.controller_channel.ControllerChannel`, retry timeout
:data:`REQUEST_RETRY_TIMEOUT_MS`, request timeout ``request.timeout.ms``, Kafka's
controller.socket.timeout.ms, 30 s):

- the channel does the controller's part: a request made while no controller is known
  waits for one (looked for every 100 ms); NOT_CONTROLLER, or no answer within the
  request timeout, sends it again (to the same node after the 50 ms reconnect
  back-off). The manager sees neither;
- an error answer, or a block that is invalid (negative start or length, an
  end past Long.MAX_VALUE) or starts below the current block's last id,
  grants nothing, and no request is sent for ``RETRY_BACKOFF_MS`` (Kafka's
  RetryBackoffMs);
- a request the channel gives up (still unsent, or sent again, at its retry timeout:
  Kafka's ``onTimeout``) is forgotten, so the next InitProducerId asks again.
"""

from __future__ import annotations

from typing import Any

from metadata.controller_channel import ControllerChannel
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

    def __init__(self, broker_id: int, channel: ControllerChannel) -> None:
        """``channel``: the broker's channel to the controller, retry timeout
        :data:`REQUEST_RETRY_TIMEOUT_MS`."""
        self.broker_id = broker_id
        self.channel = channel
        self.blocks: list[tuple[int, int, int]] = []  # (next id, end, first id): current, next
        self.in_flight = False
        """A request is queued or out in the channel (Kafka's requestInFlight)."""
        self._backoff_until = -1
        self._last_id = -1  # the last id of the latest block taken

    def next_id(self, broker_epoch: int, now: int = 0) -> tuple[str, int]:
        """(NONE, id), or (COORDINATOR_LOAD_IN_PROGRESS, -1) while a block is on its way."""
        self.channel.poll(now)  # (a request may have timed out meanwhile)
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
        if self.in_flight or broker_epoch < 0 or now < self._backoff_until:
            return
        self.in_flight = True
        self.channel.send(AllocateProducerIdsRequest(0, self.broker_id, broker_epoch), now,
                          self._on_answer, self._on_timeout)

    def _on_timeout(self, now: int) -> None:
        self.in_flight = False

    def _on_answer(self, msg: Any, now: int) -> None:
        """Take the controller's block (or back off after a failure)."""
        assert isinstance(msg, AllocateProducerIdsResponse)
        self.in_flight = False
        start, length = msg.producer_id_start, msg.producer_id_len
        if msg.error == "NONE" and start >= self._last_id and start >= 0 and length >= 0 \
                and start <= LONG_MAX - length:
            self.blocks.append((start, start + length, start))
            self._last_id = start + length - 1
        else:
            self._backoff_until = now + RETRY_BACKOFF_MS
