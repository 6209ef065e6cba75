"""The lab's topic options: replicas placed by hand (``assignments=``), validate-only
CreateTopics and IncrementalAlterConfigs, DeleteTopics by topic id. The transcript
``transcripts/topic_options.txt`` shows them as users meet them; these tests check
what the commands submit, their parsing and completion."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from controller.operations import CreateTopics, DeleteTopics, IncrementalAlterConfigs
from shell.commands.operations import parse_assignments, parse_topic_id
from shell.completion import candidates
from shell.errors import CommandError
from tests.shell.shell_recorder import Recorder

Shell = Callable[..., Recorder]
SMALL = "cluster controllers=1 brokers=3 seed=1"


def _submitted(rec: Recorder) -> object:
    lab = rec.session.lab
    assert lab is not None
    return lab.ops[-1].operation


def test_assignments_are_sent_as_kafka_asks_for_them(shell: Shell) -> None:
    """One replica list per partition, the partition count and replication factor -1; the
    first broker of each list leads."""
    rec = shell()
    rec.run(SMALL, "create-topic t assignments=2:0,0:1,1:2", "run-until idle")
    operation = _submitted(rec)
    assert isinstance(operation, CreateTopics) and not operation.validate_only
    (topic,) = operation.topics
    assert (topic.partitions, topic.replication_factor, topic.assignments) == \
        (-1, -1, ((2, 0), (0, 1), (1, 2)))
    lab = rec.session.lab
    assert lab is not None
    image = lab.view_image(0)
    partitions = image.topics_by_id[image.topics_by_name["t"]].partitions
    assert [(p.replicas, p.leader) for _, p in sorted(partitions.items())] == [
        ((2, 0), 2), ((0, 1), 0), ((1, 2), 1)]


@pytest.mark.parametrize(("text", "error"), [
    ("1:2,,3", "assignments: partition 1 has no broker"),
    ("", "assignments: partition 0 has no broker"),
    ("1:", "assignments: '' in partition 0 ('1:') is not a broker id"),
    ("1:-2", "assignments: '-2' in partition 0 ('1:-2') is not a broker id"),
    ("1: 2", "assignments: ' 2' in partition 0 ('1: 2') is not a broker id"),
    ("\uff11", "assignments: '\uff11' in partition 0 ('\uff11') is not a broker id"),
    ("2147483648", "assignments: broker id must be at most 2147483647, got 2147483648"),
])
def test_a_malformed_assignment_is_refused_by_the_shell(text: str, error: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse_assignments("assignments", text)
    assert str(caught.value).startswith(error)


def test_assignments_go_with_neither_partitions_nor_a_replication_factor(
        shell: Shell) -> None:
    rec = shell()
    rec.run(SMALL)
    out = rec.run("create-topic t assignments=0:1 replication-factor=2")
    assert out[0].startswith("ERR create-topic: assignments= gives the partitions and their "
                             "replicas: not with replication-factor= (usage: create-topic")
    lab = rec.session.lab
    assert lab is not None and lab.ops == []


def test_validate_only_checks_and_writes_nothing(shell: Shell) -> None:
    rec = shell()
    rec.run(SMALL, "create-topic t", "run-until idle")
    out = rec.run("create-topic u partitions=3 validate-only=true",
                  "alter-config TOPIC:t retention.ms=1000 validate-only=true",
                  "run-until idle", "ls /image/topics/byName", "ls /image/configs")
    assert out[1] == "op 2 (create-topic u, validate only): validated (nothing written) at " \
        f"{out[1].rsplit(' at ', 1)[1]}"
    operation = _submitted(rec)
    assert isinstance(operation, IncrementalAlterConfigs) and operation.validate_only
    lab = rec.session.lab
    assert lab is not None
    image = lab.view_image(0)
    assert set(image.topics_by_name) == {"t"} and not image.configs
    # validate-only=false is the usual write
    rec.run("alter-config TOPIC:t retention.ms=1000 validate-only=false", "run-until idle")
    assert lab.view_image(0).configs


def test_delete_topic_by_id_and_by_both(shell: Shell) -> None:
    rec = shell()
    rec.run(SMALL, "create-topic a", "create-topic b", "run-until idle")
    lab = rec.session.lab
    assert lab is not None
    ids = lab.view_image(0).topics_by_name
    rec.run(f"delete-topic a id={ids['a']}", f"delete-topic id={ids['b']}", "run-until idle")
    assert [op.operation for op in lab.ops[-2:]] == [
        DeleteTopics(("a",), (ids["a"],)), DeleteTopics((), (ids["b"],))]
    assert all(op.handle.error is None for op in lab.ops)
    assert not lab.view_image(0).topics_by_name


@pytest.mark.parametrize("text", ["", "x", "AAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA",
                                  "AAAAAAAAAAAAAAAAAAAA+A", "AAAAAAAAAAAAAAAAAAAAAB"])
def test_a_malformed_topic_id_is_refused_by_the_shell(text: str) -> None:
    """Not 22 URL-safe base64 characters, or not Kafka's text form of its 16 bytes (the
    last character carries 2 bits only)."""
    with pytest.raises(CommandError, match="id must be a topic id"):
        parse_topic_id("id", text)
    assert parse_topic_id("id", "AAAAAAAAAAAAAAAAAAAAAQ") == "AAAAAAAAAAAAAAAAAAAAAQ"


def test_completion_offers_the_new_options(shell: Shell) -> None:
    rec = shell()
    session = rec.session
    assert candidates(session, "create-topic x as") == ["assignments="]
    assert candidates(session, "create-topic x val") == ["validate-only="]
    assert candidates(session, "alter-config TOPIC:x a=1 val") == ["validate-only="]
    assert candidates(session, "delete-topic i") == ["id="]
