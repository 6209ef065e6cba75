"""The metadata shell and the lab language."""
