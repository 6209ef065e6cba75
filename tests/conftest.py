"""Shared pytest configuration."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=1000
)
settings.load_profile(os.environ.get("KRAFTSIM_HYPOTHESIS_PROFILE", "default"))


def _draw_no_local_constants() -> None:
    """Hypothesis draws some integers from the literals of the project's modules imported
    so far ("local constants"). Which modules a test process has imported depends on
    the tests that ran before in it (pytest-xdist hands them out as workers free up), so a
    derandomized search drew other examples from one run to the next: the search for
    epoch-not-bumped-on-fence found its bug at the 86th example of 100 in one process
    and not at all in another. With no local constants, a search depends on its seed
    alone, as derandomize intends (Hypothesis' own constants still apply)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # a Hypothesis without the feature
        return
    pool = getattr(providers, "_local_constants", None)
    if pool is not None and hasattr(providers, "_get_local_constants") and not len(pool):
        providers._get_local_constants = lambda: pool  # empty, and never filled


_draw_no_local_constants()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rewrite", action="store_true", default=False,
        help="golden transcripts (tests/raft/transcripts): store the actual output "
             "instead of comparing with it",
    )
