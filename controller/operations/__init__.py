"""Controller operations: each validates against the latest state and emits records."""

from controller.operations.acls import AclFilter, CreateAcls, DeleteAcls
from controller.operations.base import Generated, Operation, OperationContext
from controller.operations.brokers import (
    ControlledShutdown,
    FenceBroker,
    RegisterBroker,
    UnfenceBroker,
    UnregisterBroker,
)
from controller.operations.cluster import (
    AllocateProducerIds,
    AlterPartition,
    FeatureUpdate,
    NoOp,
    UpdateFeatures,
)
from controller.operations.configs import ConfigChange, IncrementalAlterConfigs
from controller.operations.elections import ElectLeaders, TopicPartitions
from controller.operations.quotas import AlterClientQuotas, QuotaAlteration
from controller.operations.topics import CreatePartitions, CreateTopics, DeleteTopics, NewTopic

__all__ = [
    "AclFilter",
    "AllocateProducerIds",
    "AlterClientQuotas",
    "AlterPartition",
    "ConfigChange",
    "ControlledShutdown",
    "CreateAcls",
    "CreatePartitions",
    "CreateTopics",
    "DeleteAcls",
    "DeleteTopics",
    "ElectLeaders",
    "FeatureUpdate",
    "FenceBroker",
    "Generated",
    "IncrementalAlterConfigs",
    "NewTopic",
    "NoOp",
    "Operation",
    "OperationContext",
    "QuotaAlteration",
    "RegisterBroker",
    "TopicPartitions",
    "UnfenceBroker",
    "UnregisterBroker",
    "UpdateFeatures",
]
