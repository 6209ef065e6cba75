"""The listener interface, shaped after Kafka's ``RaftClient.Listener``.

A state machine registers a listener with its node. The node calls it with
committed batches in offset order, each exactly once (control batches take
offsets but a listener just skips them), with a snapshot when the listener is
new (whatever the snapshot's offset, even a bootstrap snapshot ending at 0)
or behind the log start, and on every change of leader. Kafka hands a listener
the snapshot only once the high watermark is known and past the listener's
next offset; kraftsim hands it at once, as a snapshot on a node's disk holds
committed state only. A new leader's own
listener hears of its leadership only after it has consumed every batch before
the epoch start, so it acts on the whole committed history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec

from raft.batch import Batch
from raft.snapshot import Snapshot


class LeaderAndEpoch(msgspec.Struct, frozen=True, gc=False):
    """Who leads in which epoch (``leader_id`` None: unknown)."""

    leader_id: int | None
    epoch: int


class RaftListener(Protocol):
    """What a state machine on a raft node implements."""

    def handle_commit(self, batches: Sequence[Batch], high_watermark: int) -> None:
        """Batches below the high watermark, in order, each delivered once.

        Also called with no batches when only the high watermark moved past what
        the listener was last told (a node that caught up from a snapshot at the
        log end learns the high watermark this way, with nothing new to read).
        """

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        """Replace the state by a snapshot; later commits continue after its end."""

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        """The leader (or epoch) changed."""


class ListenerContext:
    """Where one listener stands: next offset to deliver, last leader and HW told."""

    def __init__(self, listener: RaftListener) -> None:
        self.listener = listener
        self.next_offset = 0
        self.last_leader: LeaderAndEpoch | None = None
        self.last_high_watermark: int | None = None
        self.loaded_snapshot = False
