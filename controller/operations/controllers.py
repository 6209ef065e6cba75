"""RegisterController: the active controller's side of a controller's registration (KIP-919).

Kafka's ``ClusterControlManager.registerController``: from metadata.version 3.7-IV0 a
controller process registers its incarnation id, listeners and supported features; the
active controller writes one RegisterControllerRecord (version 0, the only one) as an
atomic write. Below 3.7-IV0 the request is refused with UNSUPPORTED_VERSION. Kafka's
active controller checks nothing else: a registration replaces the controller's previous
one whatever it held. (A listener with a blank host or a port outside 1-65535 never leaves
a Kafka controller, whose ListenerInfo refuses to serialize it; kraftsim refuses such a
RegisterController with INVALID_REQUEST, as it refuses such a RegisterBroker.)
"""

from __future__ import annotations

import msgspec

from controller.errors import ApiError
from controller.operations.base import Generated, OperationContext
from controller.operations.brokers import BROKER_FEATURES, check_listener
from metadata.schema import BrokerEndpoint, BrokerFeature, RegisterControllerRecord
from metadata.versions import CONTROLLER_REGISTRATION

CONTROLLER_LISTENER = BrokerEndpoint("CONTROLLER", "localhost", 9093, 0)
"""The listener every simulated controller registers: Kafka's usual ``CONTROLLER``
listener name and port, PLAINTEXT (security protocol 0)."""

CONTROLLER_FEATURES: tuple[BrokerFeature, ...] = BROKER_FEATURES
"""What a kraftsim controller registers as supported: the same ranges as its brokers
(every feature kraftsim knows, by name)."""


class RegisterController(msgspec.Struct, frozen=True):
    """Register (or re-register) controller ``controller_id``; see the module docs."""

    controller_id: int
    incarnation_id: str
    listeners: tuple[BrokerEndpoint, ...] = (CONTROLLER_LISTENER,)
    features: tuple[BrokerFeature, ...] = CONTROLLER_FEATURES
    zk_migration_ready: bool = False
    """Kafka's request carries it; its controller records False whatever it says."""

    def describe(self) -> str:
        """E.g. ``RegisterController(3000)``."""
        return f"RegisterController({self.controller_id})"

    def generate(self, ctx: OperationContext) -> Generated:
        """One RegisterControllerRecord; UNSUPPORTED_VERSION below metadata.version 3.7-IV0.
        Each listener is first checked as Kafka's controller checks it before it sends the
        request (a blank host or a port outside 1-65535 is INVALID_REQUEST, as for a
        broker's registration)."""
        for listener in self.listeners:
            check_listener(listener.host, listener.port)
        if ctx.image.metadata_version < CONTROLLER_REGISTRATION:
            raise ApiError("UNSUPPORTED_VERSION", "The current MetadataVersion is too old to "
                                                  "support controller registrations.")
        return Generated([RegisterControllerRecord(
            controller_id=self.controller_id, incarnation_id=self.incarnation_id,
            zk_migration_ready=False, end_points=self.listeners, features=self.features)])
