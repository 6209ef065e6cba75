"""Brokers: MetadataDelta buffering and atomic MetadataImage publication.

``MetadataImage`` and ``MetadataDelta`` are the shared metadata model of
:mod:`metadata` (one replay implementation for controllers and
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
from metadata.delta import MetadataDelta
from metadata.image import MetadataImage

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
