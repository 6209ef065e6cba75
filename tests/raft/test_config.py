"""RaftConfig.validate: the settings a quorum cannot run with are refused by name."""

from __future__ import annotations

import pytest

from raft import ConfigError, RaftConfig


def test_a_long_poll_as_long_as_the_fetch_timeout_is_refused() -> None:
    """A fetch the leader holds for the whole fetch timeout would let the follower time
    out on a healthy leader: the wait must be strictly below the timeout."""
    with pytest.raises(ConfigError, match="must be below fetch_timeout_ms") as refused:
        RaftConfig(fetch_timeout_ms=2000, fetch_max_wait_ms=2000).validate()
    assert refused.value.field == "fetch_max_wait_ms"
    ok = RaftConfig(fetch_timeout_ms=2000, fetch_max_wait_ms=1999)
    assert ok.validate() is ok


@pytest.mark.parametrize("name", ["election_timeout_ms", "fetch_timeout_ms", "fetch_max_wait_ms",
                                  "request_timeout_ms", "fetch_max_records"])
def test_a_timeout_or_fetch_size_of_zero_is_refused(name: str) -> None:
    """Timeouts and the fetch size must be positive: 0 is refused as well as negatives."""
    with pytest.raises(ConfigError, match="must be positive, got 0") as refused:
        RaftConfig(**{name: 0}).validate()
    assert refused.value.field == name
