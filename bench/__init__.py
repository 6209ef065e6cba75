"""Every benchmark behind ``kraftsim bench`` and ``make bench-experiments``.

Benchmarks print figures and goals; they assert nothing about timing (the
machines are shared and noisy).
"""
