"""ProducerIdManager: a broker's block of producer ids, asked of the controller.

Kafka's ``RPCProducerIdManager``: the broker hands out ids from the block the
controller allocated to it (AllocateProducerIds -> ProducerIdsRecord, blocks
of 1,000) and asks for the next block as it hands out the current one's first id
plus 900 (90% of it). While
no id is available, InitProducerId answers COORDINATOR_LOAD_IN_PROGRESS (the
client retries).
"""

from __future__ import annotations

from collections.abc import Callable

from metadata.requests import AllocateProducerIdsRequest, AllocateProducerIdsResponse

PREFETCH_RATIO = 0.9
"""Ask for the next block once this share of the current one is used."""


class ProducerIdManager:
    """Producer ids of one broker; see the module docs."""

    def __init__(self, broker_id: int, send: Callable[[object], bool]) -> None:
        self.broker_id = broker_id
        self.send = send
        self.blocks: list[tuple[int, int]] = []  # (next id, end) of the current and next block
        self._outstanding: int | None = None
        self._correlation = 0

    def next_id(self, broker_epoch: int) -> tuple[str, int]:
        """(NONE, id), or (COORDINATOR_LOAD_IN_PROGRESS, -1) while a block is on its way."""
        while self.blocks and self.blocks[0][0] >= self.blocks[0][1]:
            self.blocks.pop(0)
        if not self.blocks:
            self._request(broker_epoch)
            return "COORDINATOR_LOAD_IN_PROGRESS", -1
        start, end = self.blocks[0]
        self.blocks[0] = (start + 1, end)
        if len(self.blocks) == 1 and start - (end - 1000) == int(PREFETCH_RATIO * 1000):
            self._request(broker_epoch)  # handing out first + 900 (Kafka's prefetch target)
        return "NONE", start

    def _request(self, broker_epoch: int) -> None:
        if self._outstanding is not None or broker_epoch < 0:
            return
        self._correlation += 1
        if self.send(AllocateProducerIdsRequest(self._correlation, self.broker_id,
                                                broker_epoch)):
            self._outstanding = self._correlation

    def handle_message(self, msg: object) -> None:
        """Take the controller's block."""
        if not isinstance(msg, AllocateProducerIdsResponse) or \
                msg.correlation_id != self._outstanding:
            return
        self._outstanding = None
        if msg.error == "NONE":
            self.blocks.append((msg.producer_id_start,
                                msg.producer_id_start + msg.producer_id_len))
