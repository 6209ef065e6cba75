"""Brokers: MetadataDelta buffering and atomic MetadataImage publication."""
