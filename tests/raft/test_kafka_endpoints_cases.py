"""A voter's endpoints, following Kafka's ``EndpointsTest``
(raft/src/test/java/org/apache/kafka/raft/).

kraftsim's raft has no ``Endpoints`` class: the simulated network addresses nodes by id, so
its RPCs (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot) carry no leader or
node endpoints. Endpoints exist only in a VotersRecord (KIP-853), as each ``Voter``'s
``VoterEndpoint`` tuple (name, host, port), which :mod:`kafka_format.control_records`
writes and reads.

Ported: testVotersRecordEndpointsWithEndpoint, testVotersRecordEndpointsWithEmptyEndpoint,
testFromVotersRecordEndpointsWithEndpoint, testFromVotersRecordEndpointsWithEmptyEndpoint
(a voter's endpoints written to a VotersRecord's bytes and read back).

Not ported: testEqualsAndHashCodeWithSameEndpoint,
testEqualsAndHashCodeWithDifferentEndpoints, testSize, testIsEmptyWithEndpoint,
testAddressWithValidEndpoint, testAddressWithEmptyEndpoint,
testFromInetSocketAddressesWithEndpoint (the Java API of ``Endpoints``, a class kraftsim
does not have: a voter's endpoints are a tuple of frozen Structs, equal by value, and no
part of kraftsim looks an address up by listener);
testToBeginQuorumEpochRequestWithEndpoint, testToBeginQuorumEpochRequestWithEmptyEndpoint,
testFromBeginQuorumEpochRequestWithEndpoint, testFromBeginQuorumEpochRequestWithEmptyEndpoint,
testFromBeginQuorumEpochResponseWithEndpoint,
testFromBeginQuorumEpochResponseWithEmptyEndpoint, testFromEndQuorumEpochRequestWithEndpoint,
testFromEndQuorumEpochRequestWithEmptyEndpoint, testFromEndQuorumEpochResponseWithEndpoint,
testFromEndQuorumEpochResponseWithEmptyEndpoint, testFromVoteResponseWithEndpoint,
testFromVoteResponseWithEmptyEndpoint, testFromFetchResponseWithEndpoint,
testFromFetchResponseWithEmptyEndpoint, testFromFetchSnapshotResponseWithEndpoint,
testFromFetchSnapshotResponseWithEmptyEndpoint (not modelled: kraftsim's raft messages
carry no endpoints).
"""

from __future__ import annotations

import pytest

from kafka_format.control_records import (
    decode_control_record,
    encode_control_key,
    encode_control_value,
)
from raft.batch import Voter, VoterEndpoint, VotersRecord

LISTENER = VoterEndpoint(name="listener", host="localhost", port=9092)
DIRECTORY = "y2MUp2ibRQ-5obKvPS4aTg"


def _read_back(record: VotersRecord) -> VotersRecord:
    key, value = encode_control_key(record), encode_control_value(record)
    buf = key + value
    decoded = decode_control_record(buf, 0, len(key), len(key), len(buf)).record
    assert isinstance(decoded, VotersRecord)
    return decoded


@pytest.mark.parametrize("endpoints", [(LISTENER,), ()])
def test_voters_record_endpoints(endpoints: tuple[VoterEndpoint, ...]) -> None:
    """EndpointsTest.testVotersRecordEndpointsWithEndpoint, ...WithEmptyEndpoint,
    testFromVotersRecordEndpointsWithEndpoint and ...WithEmptyEndpoint: a voter's
    endpoints, one or none, are written to the record and read back as they were."""
    record = VotersRecord(voters=(Voter(1, DIRECTORY, endpoints, 0, 1),))
    [voter] = _read_back(record).voters
    assert voter.endpoints == endpoints
    if endpoints:
        [endpoint] = voter.endpoints
        assert (endpoint.name, endpoint.host, endpoint.port) == ("listener", "localhost", 9092)

