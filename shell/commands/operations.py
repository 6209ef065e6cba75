"""Lab operations: create-topic, delete-topic, alter-config, register-broker, elect-leaders.

Each is submitted once to the active controller. A refusal is the command's
error; otherwise the outcome (committed, or an error such as NOT_CONTROLLER
after a failover) is printed when it becomes known, after a later command.
``retries=N`` resubmits after a retriable error, as a client would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller import WriteMode
from controller.operations import (
    ConfigChange,
    CreateTopics,
    DeleteTopics,
    ElectLeaders,
    IncrementalAlterConfigs,
    NewTopic,
    Operation,
    RegisterBroker,
    TopicPartitions,
)
from controller.operations.configs import RESOURCE_TYPES
from shell.commands.base import Command, Converter, choice, integer, parse_args
from shell.errors import CommandError
from sim.bounds import MAX_NODE_ID, MAX_PARTITIONS, MAX_REPLICATION_FACTOR
from sim.settings import MODES

if TYPE_CHECKING:
    from shell.session import Session

COMMON: dict[str, Converter] = {"mode": choice(*MODES), "retries": integer(0, 100)}
"""Options every operation takes."""
MAX_BROKER_ID = MAX_NODE_ID
"""Kafka's broker ids are int32s: a larger one could not be written to a Kafka log."""


def _submit(session: Session, label: str, operation: Operation, options: dict[str, Any]) -> None:
    lab = session.require_lab()
    mode = WriteMode(options["mode"]) if "mode" in options else None
    op = lab.submit(label, operation, mode, options.get("retries", 0))
    for line in lab.drain_reports():
        session.out(line)
    if op.attempts == 1 and op.reported and op.handle.error is not None:
        raise CommandError(f"{op.name} refused: {op.handle.error}")


def run_create_topic(session: Session, args: list[str]) -> None:
    """``create-topic NAME [partitions=N] [replication-factor=R]``."""
    values, options = parse_args(CREATE_TOPIC, args, positional=("NAME",), options={
        "partitions": integer(1, MAX_PARTITIONS),
        "replication-factor": integer(1, MAX_REPLICATION_FACTOR),
        **COMMON})
    lab = session.require_lab()
    rf = options.get("replication-factor", max(1, min(3, lab.config.brokers)))
    topic = NewTopic(values[0], options.get("partitions", 1), rf)
    _submit(session, f"create-topic {values[0]}", CreateTopics((topic,)), options)


def run_delete_topic(session: Session, args: list[str]) -> None:
    """``delete-topic NAME``."""
    values, options = parse_args(DELETE_TOPIC, args, positional=("NAME",), options=COMMON)
    _submit(session, f"delete-topic {values[0]}", DeleteTopics((values[0],)), options)


def parse_resource(text: str) -> tuple[int, str]:
    """``TOPIC:foo`` / ``BROKER:1`` / ``BROKER:`` (the default) as (type id, name)."""
    kind, colon, name = text.partition(":")
    resource_type = RESOURCE_TYPES.get(kind.upper())
    if not colon or resource_type is None:
        raise CommandError(f"{text!r} is not a config resource: give TOPIC:NAME, BROKER:ID or "
                           f"BROKER: (the cluster-wide default)")
    return resource_type, name


def run_alter_config(session: Session, args: list[str]) -> None:
    """``alter-config TYPE:NAME KEY=VALUE... [KEY+=ITEMS...] [KEY-=ITEMS...] [-KEY...]``."""
    values, options = parse_args(ALTER_CONFIG, args, positional=("TYPE:NAME", "KEY=VALUE"),
                                 options=COMMON, rest=True, free_pairs=True)
    resource_type, name = parse_resource(values[0])
    changes = []
    for word in values[1:]:
        key, eq, value = word.partition("=")
        op = {"+": "APPEND", "-": "SUBTRACT"}.get(key[-1:], "SET") if eq else "DELETE"
        key = key[:-1] if op in ("APPEND", "SUBTRACT") else key
        if eq and key:
            changes.append(ConfigChange(key, value, op))
        elif word.startswith("-") and len(word) > 1 and not eq:
            changes.append(ConfigChange(word[1:], None, "DELETE"))
        else:
            raise CommandError(f"{word!r} is not KEY=VALUE (set), KEY+=ITEMS or KEY-=ITEMS "
                               f"(add to or remove from a list) or -KEY (delete) "
                               f"({ALTER_CONFIG.usage()})")
    operation = IncrementalAlterConfigs(resource_type, name, tuple(changes))
    _submit(session, f"alter-config {values[0]}", operation, options)


def run_register_broker(session: Session, args: list[str]) -> None:
    """``register-broker ID [rack=R]``."""
    values, options = parse_args(REGISTER_BROKER, args, positional=("ID",),
                                 options={"rack": lambda _key, text: text, **COMMON})
    broker_id = integer(0, MAX_BROKER_ID)("ID", values[0])
    operation = RegisterBroker(broker_id, rack=options.get("rack"))
    _submit(session, f"register-broker {broker_id}", operation, options)


def run_elect_leaders(session: Session, args: list[str]) -> None:
    """``elect-leaders preferred|unclean [TOPIC:PARTITION...]``."""
    values, options = parse_args(ELECT_LEADERS, args, positional=("TYPE",), options=COMMON,
                                 rest=True)
    kind = values[0].upper()
    if kind not in ("PREFERRED", "UNCLEAN"):
        raise CommandError(f"TYPE is preferred or unclean, not {values[0]!r} "
                           f"({ELECT_LEADERS.usage()})")
    by_topic: dict[str, list[int]] = {}
    for word in values[1:]:
        topic, colon, number = word.rpartition(":")
        if not colon or not topic:
            raise CommandError(f"{word!r} is not TOPIC:PARTITION ({ELECT_LEADERS.usage()})")
        by_topic.setdefault(topic, []).append(integer(0, MAX_PARTITIONS - 1)("PARTITION", number))
    partitions = tuple(TopicPartitions(t, tuple(p)) for t, p in by_topic.items()) \
        if by_topic else None
    _submit(session, f"elect-leaders {values[0].lower()}", ElectLeaders(kind, partitions),
            options)


_OPTIONS_TEXT = (
    "\n\nmode=M      write mode for this operation: transactional, atomic or non-atomic "
    "(default: the cluster's)\nretries=N   resubmit up to N times after a retriable error "
    "(NOT_CONTROLLER, REQUEST_TIMED_OUT), once a controller is active (default 0)\n\n"
    "The operation is submitted once; a refusal is an error at once, otherwise its outcome "
    "is printed when known (after tick or run-until, or at a crash).")

CREATE_TOPIC = Command(
    "create-topic", "create-topic NAME [partitions=N] [replication-factor=R] [mode=M] "
    "[retries=N]", "create a topic",
    "Submits CreateTopics: a TopicRecord and one PartitionRecord per partition. When the "
    "records exceed one batch, transactional mode writes them as one metadata transaction "
    "(Begin, batches, End), atomic mode refuses them (POLICY_VIOLATION) and non-atomic mode "
    "splits them with no markers.\n\npartitions=N           default 1\n"
    "replication-factor=R   default min(3, brokers)" + _OPTIONS_TEXT
    + "\n\nExample: create-topic big partitions=2000", run_create_topic,
    options=("partitions", "replication-factor", "mode", "retries"))
DELETE_TOPIC = Command(
    "delete-topic", "delete-topic NAME [mode=M] [retries=N]", "delete a topic",
    "Submits DeleteTopics: one RemoveTopicRecord (its partitions and configs go with it)."
    + _OPTIONS_TEXT + "\n\nExample: delete-topic big", run_delete_topic,
    options=("mode", "retries"))
ALTER_CONFIG = Command(
    "alter-config",
    "alter-config TYPE:NAME KEY=VALUE... [KEY+=ITEMS...] [KEY-=ITEMS...] [-KEY...] [mode=M] "
    "[retries=N]",
    "set or delete config keys",
    "Submits IncrementalAlterConfigs for one resource: TOPIC:NAME, BROKER:ID, or BROKER: "
    "(the cluster-wide broker default). KEY=VALUE sets a key (SET), -KEY deletes it "
    "(DELETE); KEY+=ITEMS and KEY-=ITEMS add to or remove from a list key the "
    "comma-separated ITEMS (APPEND and SUBTRACT; cleanup.policy and the replication "
    "throttles are lists). Names and values are checked as Kafka checks them "
    "(INVALID_CONFIG); a topic key left as it was writes no record." + _OPTIONS_TEXT
    + "\n\nExample: alter-config TOPIC:big retention.ms=60000 cleanup.policy+=compact",
    run_alter_config, options=("mode", "retries"))
REGISTER_BROKER = Command(
    "register-broker", "register-broker ID [rack=R] [retries=N]", "register a broker",
    "Submits a broker registration (RegisterBrokerRecord): the broker appears under "
    "/image/cluster/brokers, fenced, with the record's offset as its epoch. ID is a Kafka "
    "broker id: 0-2147483647 (int32)." + _OPTIONS_TEXT
    + "\n\nExample: register-broker 7 rack=b", run_register_broker,
    options=("rack", "mode", "retries"))

ELECT_LEADERS = Command(
    "elect-leaders", "elect-leaders preferred|unclean [TOPIC:PARTITION...] [mode=M] "
    "[retries=N]", "elect partition leaders (preferred or unclean)",
    "Submits ElectLeaders (Kafka's kafka-leader-election). preferred: the first replica leads "
    "when it is in the ISR and its broker is active (else the leader stays, or the next such "
    "replica leads). unclean: a partition with no leader gets one, from the ISR if it can, "
    "else the first active replica alone (RECOVERING), whatever the topic's "
    "unclean.leader.election.enable. Without TOPIC:PARTITION every partition is tried and "
    "those that need no election are left out of the results. Each partition's result "
    "(NONE, ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, "
    "ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION) is printed when the "
    "operation commits." + _OPTIONS_TEXT
    + "\n\nExample: elect-leaders preferred big:0 big:1", run_elect_leaders,
    options=("mode", "retries"))

OPERATIONS = (CREATE_TOPIC, DELETE_TOPIC, ALTER_CONFIG, REGISTER_BROKER, ELECT_LEADERS)
"""The lab's operations."""
