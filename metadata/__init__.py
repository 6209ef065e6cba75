"""Kafka's metadata records, metadata.version, and their replay semantics."""
