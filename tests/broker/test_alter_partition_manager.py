"""The AlterPartitionManager's request, built from the proposals waiting, and the answers
its controller channel takes as NOT_CONTROLLER (the rest of its behaviour is driven
through a broker's replica manager in test_kafka_alter_partition_manager_cases)."""

from __future__ import annotations

from broker.alter_partition_manager import (
    AlterPartitionItem,
    build_request,
    not_controller_anywhere,
)
from metadata.requests import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResponse,
    AlterPartitionResponse,
    AlterPartitionTopicData,
    AlterPartitionTopicResponse,
)


def _item(topic_id: str, pid: int) -> AlterPartitionItem:
    return AlterPartitionItem(topic_id, AlterPartitionPartitionData(pid, 0, 0, (1,)))


def test_the_request_groups_the_proposals_by_topic_in_the_order_submitted() -> None:
    """Kafka groups the items by topic: proposals of topics A and B, interleaved, go as A's
    (in their order) then B's, A first because its first proposal came first; the broker
    id and epoch are the request's."""
    items = (_item("A", 2), _item("B", 0), _item("A", 0), _item("B", 5))
    request = build_request(7, 42, items)
    assert (request.broker_id, request.broker_epoch) == (7, 42)
    assert request.topics == (
        AlterPartitionTopicData("A", (items[0].partition, items[2].partition)),
        AlterPartitionTopicData("B", (items[1].partition, items[3].partition)))


def test_not_controller_is_looked_for_anywhere_in_the_answer() -> None:
    """Kafka's channel counts every error of the response: a partition's NOT_CONTROLLER
    counts as the top level's; other errors, and NOT_CONTROLLER-free answers, do not."""
    def answer(top: str, *errors: str) -> AlterPartitionResponse:
        return AlterPartitionResponse(1, top, (AlterPartitionTopicResponse("A", tuple(
            AlterPartitionPartitionResponse(pid, error) for pid, error in enumerate(errors))),))
    assert not_controller_anywhere(answer("NOT_CONTROLLER"))
    assert not_controller_anywhere(answer("NONE", "NONE", "NOT_CONTROLLER"))
    assert not not_controller_anywhere(answer("NONE", "NONE", "FENCED_LEADER_EPOCH"))
    assert not not_controller_anywhere(answer("STALE_BROKER_EPOCH"))


def test_the_trace_gives_an_answer_the_leader_epoch_of_its_first_success() -> None:
    """The trace's epoch of an AlterPartition answer (``deliver`` lines): the leader epoch
    of the first partition answered NONE, in the answer's order; -1 when no partition
    succeeded (a top-level error, or only partition errors)."""
    answer = AlterPartitionResponse(1, "NONE", (
        AlterPartitionTopicResponse("A", (AlterPartitionPartitionResponse(0, "FENCED_LEADER_EPOCH"),
                                          AlterPartitionPartitionResponse(1, "NONE", 1, 7))),
        AlterPartitionTopicResponse("B", (AlterPartitionPartitionResponse(0, "NONE", 1, 3),))))
    assert answer.epoch == 7
    assert AlterPartitionResponse(1, "NONE", (AlterPartitionTopicResponse("A", (
        AlterPartitionPartitionResponse(0, "INELIGIBLE_REPLICA"),)),)).epoch == -1
    assert AlterPartitionResponse(1, "STALE_BROKER_EPOCH").epoch == -1
