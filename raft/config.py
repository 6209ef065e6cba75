"""Timing and size settings of a raft node, with Kafka's defaults.

Every duration is in simulated milliseconds. Names follow Kafka's
``controller.quorum.*`` settings where one exists.
"""

from __future__ import annotations

import msgspec


class ConfigError(ValueError):
    """A setting is invalid; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class RaftConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Settings shared by every node of a quorum."""

    election_timeout_ms: int = 1000
    """controller.quorum.election.timeout.ms: how long a voter waits before an election."""
    election_jitter_ms: int = 1000
    """Random extra wait in [0, jitter) added to each election timeout (Kafka: the timeout)."""
    election_backoff_max_ms: int = 1000
    """controller.quorum.election.backoff.max.ms: cap of the backoff after a lost election."""
    fetch_timeout_ms: int = 2000
    """controller.quorum.fetch.timeout.ms: a follower without a good fetch this long starts
    an election; a leader not fetched from by a majority for 1.5x this long resigns, and
    announces itself to every voter (BeginQuorumEpoch) every half of it."""
    fetch_max_wait_ms: int = 500
    """How long the leader holds a fetch that has nothing new (long poll)."""
    request_timeout_ms: int = 2000
    """controller.quorum.request.timeout.ms: an unanswered request is sent again after this."""
    retry_backoff_ms: int = 20
    """controller.quorum.retry.backoff.ms: pause before retrying a failed request."""
    append_linger_ms: int = 25
    """controller.quorum.append.linger.ms: how long the leader's appends wait to be flushed.
    Until then they are lost in a crash, and followers cannot fetch them."""
    fetch_max_records: int = 1000
    """Records a fetch response carries at most (at least one batch). Stands in for
    Kafka's 8 MiB fetch size, scaled down so that a large transaction takes several
    fetch rounds to commit, as it would in Kafka at a large enough size."""
    pre_vote: bool = True
    """KIP-996: ask for pre-votes before bumping the epoch, so a rejoining node
    cannot disrupt a healthy leader."""

    def validate(self) -> RaftConfig:
        """Return self, or raise ConfigError naming the first bad setting."""
        for name in ("election_timeout_ms", "fetch_timeout_ms", "fetch_max_wait_ms",
                     "request_timeout_ms", "fetch_max_records"):
            if getattr(self, name) <= 0:
                raise ConfigError(name, f"must be positive, got {getattr(self, name)}")
        for name in ("election_jitter_ms", "election_backoff_max_ms", "retry_backoff_ms",
                     "append_linger_ms"):
            if getattr(self, name) < 0:
                raise ConfigError(name, f"must not be negative, got {getattr(self, name)}")
        if self.fetch_max_wait_ms >= self.fetch_timeout_ms:
            raise ConfigError("fetch_max_wait_ms", "must be below fetch_timeout_ms")
        return self
