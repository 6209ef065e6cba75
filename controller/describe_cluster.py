"""DescribeCluster answered by a controller (KIP-919's endpoint type CONTROLLER).

From metadata.version 3.7-IV0 an admin client may bootstrap from the controllers and ask
one of them to describe the cluster; the answer lists the registered controllers (their
endpoint on the listener the request came in on, no rack) and names the raft leader as
the controller id, as Kafka's ``ControllerApis.handleDescribeCluster`` does from its
ControllerRegistrationsPublisher: -1 when no leader is known, and -1 too when the leader
is not among the controllers listed (Kafka's
``AuthHelper.computeDescribeClusterResponse`` will not name a node the client cannot
find in the answer). Below 3.7-IV0 the request is refused with UNSUPPORTED_VERSION:
controllers register only from there.
"""

from __future__ import annotations

import msgspec

from controller.errors import ApiError
from controller.operations.controllers import CONTROLLER_LISTENER
from metadata.image import MetadataImage
from metadata.versions import CONTROLLER_REGISTRATION


class DescribedController(msgspec.Struct, frozen=True):
    """One controller of the answer (Kafka's DescribeClusterBroker, rack always None)."""

    controller_id: int
    host: str
    port: int


class ControllerClusterDescription(msgspec.Struct, frozen=True):
    """A controller's DescribeCluster answer: the registered controllers, in id order, and
    the active controller's id as its raft node knows it."""

    controllers: tuple[DescribedController, ...]
    controller_id: int


def describe_cluster_controllers(image: MetadataImage, leader_id: int | None,
                                 listener: str = CONTROLLER_LISTENER.name
                                 ) -> ControllerClusterDescription:
    """What a controller whose published image is ``image`` and whose raft node knows
    ``leader_id`` as leader answers a DescribeCluster request that came in on ``listener``;
    a controller with no endpoint on that listener is left out. Raises ApiError
    UNSUPPORTED_VERSION below metadata.version 3.7-IV0."""
    if image.metadata_version < CONTROLLER_REGISTRATION:
        raise ApiError("UNSUPPORTED_VERSION", "Direct-to-controller communication is not "
                                              "supported with the current MetadataVersion.")
    described = []
    for controller_id in sorted(image.controllers):
        for endpoint in image.controllers[controller_id].endpoints:
            if endpoint.name == listener:
                described.append(DescribedController(controller_id, endpoint.host,
                                                     endpoint.port))
                break
    listed = {c.controller_id for c in described}
    return ControllerClusterDescription(tuple(described),
                                        leader_id if leader_id in listed else -1)
