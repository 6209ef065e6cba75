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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rewrite", action="store_true", default=False,
        help="golden transcripts (tests/raft/transcripts): store the actual output "
             "instead of comparing with it",
    )
