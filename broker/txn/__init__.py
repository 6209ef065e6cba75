"""Producer transactions (KIP-98, KIP-360): data-partition state, fetches, the coordinator.

Modules are imported by their own names (``broker.txn.fetch``,
``broker.txn.coordinator``, ...): ``broker.partition_log`` imports
``broker.txn.log_state``, so this package re-exports nothing that would
import the partition log back.
"""
