"""A registration's listeners, following Kafka's ``ListenerInfoTest``
(metadata/src/test/java/org/apache/kafka/metadata/).

kraftsim has no ``ListenerInfo``: a registration's listeners are the ``BrokerEndpoint``
tuple of its RegisterBrokerRecord or RegisterControllerRecord (name, host, port, security
protocol id), which the image keeps by name (Kafka's ``BrokerRegistration`` map) and the
shell prints as Kafka's ``Endpoint``. A simulated broker registers one PLAINTEXT listener
from the host and port of its ``RegisterBroker``.

Ported: testRoundTripToBrokerRegistrationRecord and
testRoundTripToControllerRegistrationRecord (the four listeners written and read back, and
replayed into the image); testToString (each listener printed as Kafka's ``Endpoint``, in
the shell's registration text); testToBrokerRegistrationRequestFailsOnNullHost and
testToBrokerRegistrationRequestFailsOnZeroPort (a ``RegisterBroker`` with an empty host or
port 0 is refused with Kafka's words).

testRoundTripToControllerRegistrationRequest (the four listeners in a
ControllerRegistration request, served by the active controller's registration manager,
come back in its record and the image); testToControllerRegistrationRequestFailsOnNullHost
and testToControllerRegistrationRequestFailsOnZeroPort (a ``RegisterController`` with a
blank host or port 0 is refused in Kafka's words).

Fixed while porting (failed on the old code): ``RegisterBroker`` registered any host and
port, an empty host and port 0 (or one outside 0-65535) included; Kafka's broker cannot
serialize such a listener (``ListenerInfo.checkHostIsSerializable`` and
``checkPortIsSerializable``) and never sends the request. kraftsim refuses the operation
with INVALID_REQUEST and Kafka's message (the error code is kraftsim's: Kafka fails on the
broker, before any request). ``RegisterController`` registered such listeners too; it is
refused the same way now.

Not ported (not modelled: kraftsim has no broker-side listener configuration, no wildcard
host resolution and no ephemeral ports): testNullHostname, testNullHostnameGetsResolved,
testEmptyHostname, testEmptyHostnameGetsResolved, testCreatePreservesOrdering,
testCreateWithExplicitFirstListener (a registration's listeners are a map by name, and a
simulated broker has one), testRoundTripToBrokerRegistrationRequest (a broker's request
carries only one host and port), testToControllerRegistrationRecordFailsOnNullHost,
testToControllerRegistrationRecordFailsOnZeroPort,
testToBrokerRegistrationRecordFailsOnNullHost and
testToBrokerRegistrationRecordFailsOnZeroPort (Kafka's null host does not exist in a
Python ``str`` field, and the records are written from an already checked request;
hand-made records are kept as given, as Kafka's replay keeps them).
"""

from __future__ import annotations

import pytest

from controller.operations import RegisterBroker
from controller.operations.controllers import RegisterController
from controller.registration_manager import ControllerRegistrationManager
from kafka_format.metadata_serde import decode_metadata_record, encode_metadata_record
from metadata.image import BrokerRegistration
from metadata.requests import (
    ControllerRegistrationRequest,
    NodeMessage,
)
from metadata.schema import BrokerEndpoint, RegisterBrokerRecord, RegisterControllerRecord
from shell.image_tree import broker_text
from tests.controller.conftest import cluster
from tests.controller.kafka_cases import brokers, image_of, refusal, run

PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL = 0, 1, 2, 3
INTERNAL = BrokerEndpoint("INTERNAL", "localhost", 9094, PLAINTEXT)
EXTERNAL = BrokerEndpoint("EXTERNAL", "example.com", 9092, SASL_SSL)
SSL_ENDPOINT = BrokerEndpoint("SSL", "localhost", 9093, SSL)
SASL = BrokerEndpoint("SASL_PLAINTEXT", "example2.com", 9094, SASL_PLAINTEXT)
ALL = (INTERNAL, EXTERNAL, SSL_ENDPOINT, SASL)
"""Kafka's four endpoints, with the hosts and ports they have once resolved and corrected."""


def test_round_trip_to_broker_registration_record() -> None:
    """ListenerInfoTest.testRoundTripToBrokerRegistrationRecord: the listeners come back
    from the record's bytes as written, and the image keeps them all, by name."""
    record = RegisterBrokerRecord(1, "Yw3SnqsRQFGK1uVuL3BLkA", broker_epoch=10,
                                  end_points=ALL)
    assert decode_metadata_record(encode_metadata_record(record, 3)).record == record
    image = image_of([*brokers(level=22), record])
    assert image.brokers[1].endpoints == tuple(sorted(ALL, key=lambda e: e.name))


def test_round_trip_to_controller_registration_record() -> None:
    """ListenerInfoTest.testRoundTripToControllerRegistrationRecord."""
    record = RegisterControllerRecord(3000, "Yw3SnqsRQFGK1uVuL3BLkA", end_points=ALL)
    assert decode_metadata_record(encode_metadata_record(record, 0)).record == record
    image = image_of([*brokers(level=22), record])
    assert image.controllers[3000].endpoints == tuple(sorted(ALL, key=lambda e: e.name))


def test_to_string() -> None:
    """ListenerInfoTest.testToString: each listener as Kafka's ``Endpoint`` prints it."""
    broker = BrokerRegistration(broker_id=1, epoch=0, incarnation_id="x",
                                endpoints=(EXTERNAL, SASL))
    assert "listeners=[Endpoint(listenerName='EXTERNAL', securityProtocol=SASL_SSL, " \
           "host='example.com', port=9092), Endpoint(listenerName='SASL_PLAINTEXT', " \
           "securityProtocol=SASL_PLAINTEXT, host='example2.com', port=9094)]" \
           in broker_text(broker)


@pytest.mark.parametrize(("host", "port", "message"), [
    ("", 9092, "Cannot serialize empty host in ListenerInfo."),
    ("  ", 9092, "Cannot serialize empty host in ListenerInfo."),
    ("localhost", 0, "Cannot serialize ephemeral port 0 in ListenerInfo."),
    ("localhost", -1, "Cannot serialize negative port number -1 in ListenerInfo."),
    ("localhost", 65536, "Cannot serialize invalid port number 65536 in ListenerInfo."),
])
def test_to_broker_registration_request_fails_on_null_host_or_zero_port(
        host: str, port: int, message: str) -> None:
    """ListenerInfoTest.testToBrokerRegistrationRequestFailsOnNullHost and
    testToBrokerRegistrationRequestFailsOnZeroPort: a listener without a host, or with an
    ephemeral or invalid port, cannot be registered."""
    error = refusal(RegisterBroker(1, host=host, port=port), image_of(brokers(level=22)))
    assert (error.code, error.message) == ("INVALID_REQUEST", message)


@pytest.mark.parametrize("port", [1, 65535])
def test_ports_1_to_65535_can_be_registered(port: int) -> None:
    """The bounds of checkPortIsSerializable: 1 and 65535 are serializable ports."""
    _, [record], _ = run(RegisterBroker(1, port=port), image_of(brokers(level=22)))
    assert isinstance(record, RegisterBrokerRecord) and record.end_points[0].port == port


def test_round_trip_to_controller_registration_request() -> None:
    """ListenerInfoTest.testRoundTripToControllerRegistrationRequest: a controller's
    registration request naming the four listeners, served by the active controller,
    writes them all and the image keeps them, by name."""
    c = cluster()
    active = c.active_controller()
    assert active is not None
    [manager] = [app for app in c.sim.slots[active.node_id].apps
                 if isinstance(app, ControllerRegistrationManager)]
    other = next(n for n in sorted(c.config.controller_ids) if n != active.node_id)
    request = ControllerRegistrationRequest(41, other, "Yw3SnqsRQFGK1uVuL3BLkA", ALL,
                                            active.image.controllers[other].features)
    manager.handle_message(NodeMessage(other, active.node_id, request), c.sim.now)
    c.sim.schedule(c.sim.now, lambda: None, "asked")  # the write is flushed when due
    assert c.run_until(lambda: active.image.controllers[other].incarnation_id
                       == "Yw3SnqsRQFGK1uVuL3BLkA", 5_000)
    assert active.image.controllers[other].endpoints == tuple(sorted(ALL, key=lambda e: e.name))


@pytest.mark.parametrize(("host", "port", "message"), [
    ("", 9093, "Cannot serialize empty host in ListenerInfo."),
    ("localhost", 0, "Cannot serialize ephemeral port 0 in ListenerInfo."),
])
def test_to_controller_registration_request_fails_on_null_host_or_zero_port(
        host: str, port: int, message: str) -> None:
    """ListenerInfoTest.testToControllerRegistrationRequestFailsOnNullHost and
    testToControllerRegistrationRequestFailsOnZeroPort: a controller listener without a
    host, or with an ephemeral port, cannot be registered (before the metadata.version
    check, as Kafka's controller fails before it sends the request)."""
    listeners = (INTERNAL, BrokerEndpoint("CONTROLLER", host, port, PLAINTEXT))
    for level in (22, 1):
        error = refusal(RegisterController(3000, "Yw3SnqsRQFGK1uVuL3BLkA", listeners),
                        image_of(brokers(level=level)))
        assert (error.code, error.message) == ("INVALID_REQUEST", message)
