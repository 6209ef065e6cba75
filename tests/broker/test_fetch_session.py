"""Incremental fetch sessions (KIP-227) between replica managers: the leader's session cache
(Kafka's FetchSessionTest) and the follower's handler (Kafka's FetchSessionHandlerTest)."""

from __future__ import annotations

from broker.fetch_messages import FetchPartition, ReplicaFetchRequest
from broker.fetch_session import FetchSession, FetchSessionCache, FetchSessionHandler

FOO, BAR = "foo-topic-id", "bar-topic-id"


def part(topic_id: str, partition_id: int, offset: int = 0) -> FetchPartition:
    return FetchPartition(topic_id, partition_id, current_leader_epoch=1, fetch_offset=offset,
                          last_fetched_epoch=1)


def fetch(*parts: FetchPartition, session_id: int = 0, epoch: int = 0,
          forgotten: tuple[tuple[str, int], ...] = (), follower: int = 2) -> ReplicaFetchRequest:
    return ReplicaFetchRequest(correlation_id=1, replica_id=follower, epoch=1, partitions=parts,
                               session_id=session_id, session_epoch=epoch, forgotten=forgotten)


def _ignore(key: tuple[str, int]) -> None:
    """A forget callback for fetches that forget nothing."""


def held(session: FetchSession) -> dict[str, dict[int, int]]:
    return {topic: {pid: p.fetch_offset for pid, p in parts.items()}
            for topic, parts in session.partitions.items()}


def opened(cache: FetchSessionCache, msg: ReplicaFetchRequest,
           forgotten: list[tuple[str, int]] | None = None) -> FetchSession:
    session = cache.open(msg, (forgotten if forgotten is not None else []).append)
    assert isinstance(session, FetchSession), session
    return session


def test_a_full_fetch_opens_a_session_whose_next_epoch_is_1() -> None:
    cache = FetchSessionCache()
    session = opened(cache, fetch(part(FOO, 0), part(FOO, 1), part(BAR, 0)))
    assert session.session_id > 0 and session.epoch == 1
    assert held(session) == {FOO: {0: 0, 1: 0}, BAR: {0: 0}}
    assert list(session.pending) == [(FOO, 0), (FOO, 1), (BAR, 0)]  # all read at once
    assert session.holds((FOO, 1)) and not session.holds((FOO, 2))
    assert not session.holds(("other", 0))


def test_another_full_fetch_replaces_the_session_with_a_new_id() -> None:
    cache = FetchSessionCache()
    first = opened(cache, fetch(part(FOO, 0)))
    second = opened(cache, fetch(part(BAR, 0)))
    assert second.session_id != first.session_id and held(second) == {BAR: {0: 0}}
    assert cache.open(fetch(session_id=first.session_id, epoch=1), _ignore) == \
        "FETCH_SESSION_ID_NOT_FOUND"


def test_an_incremental_fetch_needs_the_session_and_its_next_epoch() -> None:
    cache = FetchSessionCache()
    assert cache.open(fetch(session_id=1, epoch=1), _ignore) == "FETCH_SESSION_ID_NOT_FOUND"
    session = opened(cache, fetch(part(FOO, 0)))
    sid = session.session_id
    assert cache.open(fetch(session_id=sid + 1, epoch=1), _ignore) == \
        "FETCH_SESSION_ID_NOT_FOUND"
    assert cache.open(fetch(session_id=sid, epoch=2), _ignore) == \
        "INVALID_FETCH_SESSION_EPOCH"
    assert opened(cache, fetch(session_id=sid, epoch=1)) is session and session.epoch == 2
    assert cache.open(fetch(session_id=sid, epoch=1), _ignore) == \
        "INVALID_FETCH_SESSION_EPOCH"  # an epoch is used once
    assert opened(cache, fetch(session_id=sid, epoch=2)).epoch == 3
    # another follower's session is its own
    assert cache.open(fetch(session_id=sid, epoch=3, follower=3), _ignore) == \
        "FETCH_SESSION_ID_NOT_FOUND"


def test_an_incremental_fetch_updates_positions_by_topic_and_adds_partitions() -> None:
    cache = FetchSessionCache()
    session = opened(cache, fetch(part(FOO, 0), part(BAR, 0)))
    session.pending.clear()  # read by the first fetch
    opened(cache, fetch(part(FOO, 0, 7), part(BAR, 1, 3), part(FOO, 2, 5),
                        session_id=session.session_id, epoch=1))
    assert held(session) == {FOO: {0: 7, 2: 5}, BAR: {0: 0, 1: 3}}
    assert list(session.pending) == [(FOO, 0), (BAR, 1), (FOO, 2)]


def test_forgotten_partitions_leave_the_session_and_only_held_ones_are_forgotten() -> None:
    cache = FetchSessionCache()
    session = opened(cache, fetch(part(FOO, 0), part(FOO, 1), part(BAR, 0)))
    forgotten: list[tuple[str, int]] = []
    opened(cache, fetch(session_id=session.session_id, epoch=1,
                        forgotten=((FOO, 1), (BAR, 0), (BAR, 7), ("other", 0))), forgotten)
    assert forgotten == [(FOO, 1), (BAR, 0)]
    assert held(session) == {FOO: {0: 0}}  # a topic with no partition left is gone
    assert list(session.pending) == [(FOO, 0)]
    assert not session.holds((FOO, 1)) and not session.holds((BAR, 0))


def test_a_partition_named_and_forgotten_in_one_fetch_is_gone() -> None:
    """Kafka's FetchSession.update: the named positions first, then the forgotten ones."""
    cache = FetchSessionCache()
    session = opened(cache, fetch(part(FOO, 0), part(FOO, 1)))
    forgotten: list[tuple[str, int]] = []
    opened(cache, fetch(part(FOO, 0, 9), part(BAR, 0), session_id=session.session_id,
                        epoch=1, forgotten=((FOO, 0), (BAR, 0))), forgotten)
    assert forgotten == [(FOO, 0), (BAR, 0)] and held(session) == {FOO: {1: 0}}
    assert list(session.pending) == [(FOO, 1)]


def test_the_handler_names_changed_partitions_once_each_by_topic_in_order() -> None:
    handler = FetchSessionHandler()
    assert (handler.session_id, handler.epoch, handler.changed) == (0, 0, {})
    handler.mark((FOO, 3))
    handler.mark((BAR, 1))
    handler.mark((FOO, 1))
    handler.mark((FOO, 3))
    handler.mark_all(BAR, [0, 1, 2])
    handler.mark_all("new", [4])
    assert {topic: list(pids) for topic, pids in handler.changed.items()} == \
        {FOO: [3, 1], BAR: [1, 0, 2], "new": [4]}
