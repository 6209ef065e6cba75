"""Failover and visibility experiments: pure run functions and the PySpark pipeline."""
