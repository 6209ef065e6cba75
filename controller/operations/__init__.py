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
from controller.operations.reassignments import (
    AlterPartitionReassignments,
    ListPartitionReassignments,
    ReassignablePartition,
    ReassignableTopic,
)
from controller.operations.topics import CreatePartitions, CreateTopics, DeleteTopics, NewTopic

__all__ = [
    "AclFilter",
    "AllocateProducerIds",
    "AlterClientQuotas",
    "AlterPartition",
    "AlterPartitionReassignments",
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
    "ListPartitionReassignments",
    "NewTopic",
    "NoOp",
    "Operation",
    "OperationContext",
    "QuotaAlteration",
    "ReassignablePartition",
    "ReassignableTopic",
    "RegisterBroker",
    "TopicPartitions",
    "UnfenceBroker",
    "UnregisterBroker",
    "UpdateFeatures",
]
