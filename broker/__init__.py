"""Brokers: MetadataDelta buffering and atomic MetadataImage publication.

``MetadataImage`` and ``MetadataDelta`` are the shared metadata model of
:mod:`controller.records` (one replay implementation for controllers and
brokers); this package adds the transaction-aware loading around them.
"""

from broker.batch_loader import (
    LoaderFault,
    Manifest,
    MetadataBatchLoader,
    TransactionState,
)
from broker.loader import MetadataLoader, Publisher
from broker.mutations import BrokerMutation
from controller.records.delta import MetadataDelta
from controller.records.image import MetadataImage

__all__ = [
    "BrokerMutation",
    "LoaderFault",
    "Manifest",
    "MetadataBatchLoader",
    "MetadataDelta",
    "MetadataImage",
    "MetadataLoader",
    "Publisher",
    "TransactionState",
]
