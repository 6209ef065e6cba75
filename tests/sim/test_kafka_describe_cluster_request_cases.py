"""DescribeCluster answered by a broker, following Kafka's DescribeClusterRequestTest
(core/src/test/scala/unit/kafka/server/).

Kafka's test starts three brokers, each with ``broker.rack`` ``rack/<id>``, waits until
every broker's metadata is consistent, and sends DescribeCluster at each version of the
API: in KRaft the answer lists every broker (id, host, port and rack of the listener the
request came in on) and names a random alive broker as the controller (KIP-590). Here each
broker of a :class:`~sim.cluster.KRaftCluster` (three controllers, three brokers whose
registrations are amended with Kafka's racks) answers from its published image with
:func:`broker.metadata_cache.describe_cluster`; every simulated broker registers the one
listener PLAINTEXT at localhost:9092. The broker's side of Kafka's AuthHelperTest
(testComputeDescribeClusterResponseSuccess, ...WhereControllerIsNotFound: a controller id
is kept only when the answer lists it) follows on images with brokers on two listeners.

Not ported (parts of both methods, which differ only in includeClusterAuthorizedOperations):

- the cluster id and clusterAuthorizedOperations: a broker's image carries no cluster id
  (Kafka's comes from meta.properties) and kraftsim models no authorizer.
- the ZooKeeper quorum's runs and request versions: not modelled.
"""

from __future__ import annotations

import random

import pytest

from broker.metadata_cache import DescribedBroker, describe_cluster
from metadata.image import MetadataImage
from metadata.schema import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    RegisterBrokerRecord,
)
from metadata.versions import METADATA_VERSION_FEATURE
from sim.cluster import KRaftCluster
from tests.controller.kafka_cases import image_of
from tests.sim.harness import racked_cluster

BROKER_COUNT = 3


def _cluster() -> KRaftCluster:
    """Three controllers and three brokers in their racks, every broker caught up."""
    return racked_cluster(11, BROKER_COUNT)


@pytest.mark.parametrize("include_cluster_authorized_operations", [True, False])
def test_describe_cluster_request(include_cluster_authorized_operations: bool) -> None:
    """testDescribeClusterRequestIncludingClusterAuthorizedOperations and
    testDescribeClusterRequestExcludingClusterAuthorizedOperations (KRaft): every broker
    answers with the three brokers, each at localhost:9092 in its rack, and a controller id
    that is one of them."""
    cluster = _cluster()
    expected = {DescribedBroker(b, "localhost", 9092, f"rack/{b}")
                for b in cluster.config.broker_ids}
    for broker in cluster.config.broker_ids:
        loader = cluster.loader(broker)
        assert loader is not None and loader.published is not None
        for seed in range(5):
            answer = describe_cluster(loader.published, random.Random(seed))
            assert set(answer.brokers) == expected
            assert answer.controller_id in range(BROKER_COUNT + 1)  # Kafka: 0 to brokerCount
            assert answer.controller_id in cluster.config.broker_ids


def test_a_fenced_broker_is_left_out_and_never_named_controller() -> None:
    """KRaftMetadataCache's alive brokers: a fenced broker is not described, nor drawn as
    the controller; with none alive the controller id is -1."""
    cluster = _cluster()
    loader = cluster.loader(0)
    assert loader is not None and loader.published is not None
    image = loader.published
    fenced = image_of([BrokerRegistrationChangeRecord(1, image.brokers[1].epoch, fenced=1)],
                      image, image.offset + 1)
    for seed in range(10):
        answer = describe_cluster(fenced, random.Random(seed))
        assert [b.broker_id for b in answer.brokers] == [0, 2]
        assert answer.controller_id in (0, 2)
    nobody = image_of([BrokerRegistrationChangeRecord(b, image.brokers[b].epoch, fenced=1)
                       for b in (0, 2)], fenced, fenced.offset + 1)
    assert describe_cluster(nobody, random.Random(0)) == describe_cluster(
        nobody, random.Random(1))
    assert describe_cluster(nobody, random.Random(0)).controller_id == -1
    assert describe_cluster(nobody, random.Random(0)).brokers == ()
    assert describe_cluster(image, random.Random(0), "SSL").brokers == ()


def test_a_controller_id_without_the_listener_is_not_named() -> None:
    """Kafka's AuthHelper.computeDescribeClusterResponse answers -1 rather than name a
    node that is not in the answer: asked on a listener no broker has, the alive broker
    drawn is not named."""
    cluster = _cluster()
    loader = cluster.loader(0)
    assert loader is not None and loader.published is not None
    for seed in range(5):
        assert describe_cluster(loader.published, random.Random(seed), "SSL").controller_id == -1
        assert describe_cluster(loader.published, random.Random(seed)).controller_id != -1


def _two_brokers_one_with_ssl() -> MetadataImage:
    """Brokers 0 and 1 alive, both on PLAINTEXT, only broker 0 also on SSL."""
    plaintext = BrokerEndpoint("PLAINTEXT", "localhost", 9092)
    ssl = BrokerEndpoint("SSL", "localhost", 9093, 1)
    return image_of([FeatureLevelRecord(METADATA_VERSION_FEATURE, 22),
                     RegisterBrokerRecord(0, "inc-0", 100, (plaintext, ssl), fenced=False),
                     RegisterBrokerRecord(1, "inc-1", 100, (plaintext,), fenced=False)])


def test_a_controller_id_found_among_the_listed_brokers_is_kept() -> None:
    """AuthHelperTest.testComputeDescribeClusterResponseSuccess and
    ...WhereControllerIsNotFound, on a broker: the alive broker drawn is named when it is
    listed (a single listed broker too), and -1 when it has no endpoint on the listener the
    request came in on."""
    image = _two_brokers_one_with_ssl()
    drawn = {describe_cluster(image, random.Random(seed)).controller_id for seed in range(20)}
    assert drawn == {0, 1}
    on_ssl = {describe_cluster(image, random.Random(seed), "SSL") for seed in range(20)}
    assert {answer.brokers for answer in on_ssl} == {(DescribedBroker(0, "localhost", 9093),)}
    assert {answer.controller_id for answer in on_ssl} == {0, -1}
    alone = image_of([BrokerRegistrationChangeRecord(1, 100, fenced=1)], image, 100)
    assert {describe_cluster(alone, random.Random(seed)).controller_id
            for seed in range(5)} == {0}
