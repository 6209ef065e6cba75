"""Kafka's ExponentialBackoffTest, against kraftsim's :class:`metadata.backoff.ExponentialBackoff`
(the back-off of the broker's lifecycle manager and of the controller's registration
manager): pauses that double per failed attempt within the jitter, capped at the maximum,
and exact without jitter. Beside the ported cases, the edges Kafka's constructor defines:
a maximum not above the initial pause (no growth, no jitter), an initial pause of 0 or 1,
and no draw from the seeded stream without jitter.

Not ported: none (every test method of the class is ported).
"""

from __future__ import annotations

import random

import pytest

from metadata.backoff import ExponentialBackoff


def test_exponential_backoff() -> None:
    backoff = ExponentialBackoff(100, 2, 2000, 0.2)
    rng = random.Random(5)
    for _ in range(101):
        for attempts in range(11):
            pause = backoff.backoff(attempts, rng)
            if attempts <= 4:
                nominal = 100 * 2 ** attempts
                assert abs(pause - nominal) <= nominal * 0.2
            else:
                assert pause <= 2000 * 1.2


def test_exponential_backoff_without_jitter() -> None:
    backoff = ExponentialBackoff(100, 2, 400, 0.0)
    rng = random.Random(5)
    assert [backoff.backoff(n, rng) for n in range(4)] == [100, 200, 400, 400]


@pytest.mark.parametrize("maximum", [100, 50])
def test_a_maximum_not_above_the_initial_pause_is_every_pause_without_jitter(
        maximum: int) -> None:
    """Kafka's constructor lowers the initial pause to the maximum, and with nothing to
    grow (its expMax is 0) every pause is that value exactly, the jitter not applied."""
    backoff = ExponentialBackoff(100, 2, maximum, 0.2)
    rng = random.Random(5)
    assert {backoff.backoff(n, rng) for n in range(50) for _ in range(3)} == {maximum}


def test_an_initial_pause_of_zero_never_pauses() -> None:
    """retry.backoff.ms=0 is allowed: every pause is 0 however many attempts failed."""
    backoff = ExponentialBackoff(0, 2, 1000, 0.2)
    rng = random.Random(5)
    assert {backoff.backoff(n, rng) for n in range(30)} == {0}


def test_an_initial_pause_of_one_grows_all_the_way_to_the_maximum() -> None:
    """The exponent is capped where the pause reaches the maximum: from 1 ms, doubling,
    the cap is log2(1000) attempts, and any later pause is the maximum itself."""
    backoff = ExponentialBackoff(1, 2, 1000, 0.0)
    rng = random.Random(5)
    assert [backoff.backoff(n, rng) for n in range(4)] == [1, 2, 4, 8]
    assert backoff.backoff(9, rng) == 512
    assert backoff.backoff(10, rng) == backoff.backoff(40, rng) == 1000


def test_a_backoff_is_immutable() -> None:
    """One back-off is shared by every registration manager (a module constant): it cannot
    be changed in place."""
    backoff = ExponentialBackoff(100, 2, 1000, 0.02)
    with pytest.raises(AttributeError):
        backoff.maximum = 5  # type: ignore[misc]


def test_without_jitter_nothing_is_drawn_from_the_stream() -> None:
    """Kafka draws a random factor only when there is jitter: a back-off without jitter
    leaves the caller's seeded stream (a broker's, shared with its other draws) as it was."""
    rng = random.Random(5)
    before = rng.getstate()
    ExponentialBackoff(100, 2, 400, 0.0).backoff(3, rng)
    assert rng.getstate() == before
