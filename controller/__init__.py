"""The controller: metadata records, state with revert points, operations, transactions."""

from controller.config import ControllerConfig
from controller.errors import ApiError, ControllerFault
from controller.handle import OperationHandle, OperationStatus
from controller.mutations import ControllerMutation
from controller.offset_control import OffsetControlManager, RevertPoint
from controller.quorum_controller import QuorumController
from controller.write_mode import WriteMode

__all__ = [
    "ApiError",
    "ControllerConfig",
    "ControllerFault",
    "ControllerMutation",
    "OffsetControlManager",
    "OperationHandle",
    "OperationStatus",
    "QuorumController",
    "RevertPoint",
    "WriteMode",
]
