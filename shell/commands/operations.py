"""Lab operations: create-topic, delete-topic, alter-config, alter-client-quotas, create-acl,
delete-acls, register-broker, update-features, elect-leaders, reassign-partitions,
cancel-reassignments, and the read list-reassignments.

Each is submitted once to the active controller. A refusal is the command's
error; otherwise the outcome (committed, or an error such as NOT_CONTROLLER
after a failover) is printed when it becomes known, after a later command.
``retries=N`` resubmits after a retriable error, as a client would.

The shell checks only the form of what it is given (a number in its bounds, an
assignment list, a topic id); whatever Kafka's controller checks (a broker that
is not registered, a broker named twice in a partition, partitions of unequal
replica counts, an unknown topic id) is left to the controller, which answers in
Kafka's words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller import WriteMode
from controller.operations import (
    AclFilter,
    AlterClientQuotas,
    AlterPartitionReassignments,
    ConfigChange,
    CreateAcls,
    CreateTopics,
    DeleteAcls,
    DeleteTopics,
    ElectLeaders,
    IncrementalAlterConfigs,
    NewTopic,
    Operation,
    QuotaAlteration,
    ReassignablePartition,
    ReassignableTopic,
    RegisterBroker,
    TopicPartitions,
    UpdateFeatures,
)
from controller.operations.cluster import FeatureUpdate
from controller.operations.configs import RESOURCE_TYPES
from controller.operations.reassignments import list_partition_reassignments
from metadata.acl_codes import (
    ACL_OPERATIONS,
    ACL_PERMISSION_TYPES,
    PATTERN_TYPES,
)
from metadata.acl_codes import (
    RESOURCE_TYPES as ACL_RESOURCE_TYPES,
)
from metadata.image import StandardAcl
from metadata.uuids import uuid_to_bytes, uuid_to_str
from metadata.versions import METADATA_VERSION_FEATURE, parse_metadata_version
from shell.commands.base import Command, Converter, choice, integer, parse_args
from shell.errors import CommandError
from sim.bounds import MAX_NODE_ID, MAX_PARTITIONS, MAX_REPLICATION_FACTOR
from sim.settings import MODES

if TYPE_CHECKING:
    from shell.session import Session

COMMON: dict[str, Converter] = {"mode": choice(*MODES), "retries": integer(0, 100)}
"""Options every operation takes."""
VALIDATE_ONLY = "validate-only"
"""The option of the operations Kafka can validate without writing (validateOnly)."""
VALIDATE: dict[str, Converter] = {VALIDATE_ONLY: choice("true", "false")}
"""The ``validate-only=true|false`` option."""
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


def _validate_only(options: dict[str, Any]) -> bool:
    return bool(options.get(VALIDATE_ONLY) == "true")


def _label(text: str, validate_only: bool) -> str:
    return f"{text}, validate only" if validate_only else text


def parse_assignments(key: str, text: str) -> tuple[tuple[int, ...], ...]:
    """Replicas by hand, as kafka-topics' ``--replica-assignment``: partitions separated by
    ',', the broker ids of each by ':' (``1:2:3,2:3:1``: partition 0 on brokers 1, 2, 3
    led by 1, partition 1 on 2, 3, 1 led by 2). Only the form is checked here (raises
    CommandError); the controller checks the brokers."""
    shape = f"one broker list per partition: partitions separated by ',', broker ids by " \
            f"':', e.g. {key}=1:2,2:3"
    words = text.split(",")
    if len(words) > MAX_PARTITIONS:
        raise CommandError(f"{key} gives {len(words)} partitions; at most {MAX_PARTITIONS}")
    out: list[tuple[int, ...]] = []
    for number, word in enumerate(words):
        if not word:
            raise CommandError(f"{key}: partition {number} has no broker ({shape})")
        ids = word.split(":")
        if len(ids) > MAX_REPLICATION_FACTOR:
            raise CommandError(f"{key}: partition {number} names {len(ids)} brokers; at "
                               f"most {MAX_REPLICATION_FACTOR}")
        replicas = []
        for broker in ids:
            if not broker.isascii() or not broker.isdigit():
                raise CommandError(f"{key}: {broker!r} in partition {number} ({word!r}) is "
                                   f"not a broker id ({shape})")
            replicas.append(integer(0, MAX_BROKER_ID)(f"{key}: broker id", broker))
        out.append(tuple(replicas))
    return tuple(out)


def parse_topic_id(key: str, text: str) -> str:
    """A topic id in Kafka's text form (22 URL-safe base64 characters, as
    ``/image/topics/byId`` lists them); raises CommandError."""
    try:
        if len(text) == 22 and uuid_to_str(uuid_to_bytes(text)) == text:
            return text
    except ValueError:
        pass
    shown = text if len(text) <= 40 else text[:40] + "..."
    raise CommandError(f"{key} must be a topic id (22 URL-safe base64 characters, as "
                       f"/image/topics/byId lists them), got {shown!r}")


def run_create_topic(session: Session, args: list[str]) -> None:
    """``create-topic NAME [partitions=N] [replication-factor=R] [assignments=B:B,B:B]
    [validate-only=true|false]``."""
    values, options = parse_args(CREATE_TOPIC, args, positional=("NAME",), options={
        "partitions": integer(1, MAX_PARTITIONS),
        "replication-factor": integer(1, MAX_REPLICATION_FACTOR),
        "assignments": parse_assignments, **VALIDATE, **COMMON})
    lab = session.require_lab()
    if "assignments" in options:
        given = [key for key in ("partitions", "replication-factor") if key in options]
        if given:
            raise CommandError(f"assignments= gives the partitions and their replicas: not "
                               f"with {given[0]}= ({CREATE_TOPIC.usage()})")
        # Kafka's CreateTopics asks for -1 partitions and replication factor with them
        topic = NewTopic(values[0], -1, -1, assignments=options["assignments"])
    else:
        rf = options.get("replication-factor", max(1, min(3, lab.config.brokers)))
        topic = NewTopic(values[0], options.get("partitions", 1), rf)
    validate_only = _validate_only(options)
    _submit(session, _label(f"create-topic {values[0]}", validate_only),
            CreateTopics((topic,), validate_only=validate_only), options)


def run_delete_topic(session: Session, args: list[str]) -> None:
    """``delete-topic NAME`` or ``delete-topic id=TOPIC_ID``."""
    values, options = parse_args(DELETE_TOPIC, args, optional=("NAME",),
                                 options={"id": parse_topic_id, **COMMON})
    if not values and "id" not in options:
        raise CommandError(f"missing NAME or id=TOPIC_ID ({DELETE_TOPIC.usage()})")
    names = tuple(values)
    ids = (options["id"],) if "id" in options else ()
    label = " ".join((*names, *(f"id={i}" for i in ids)))
    _submit(session, f"delete-topic {label}", DeleteTopics(names, ids), options)


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
                                 options={**VALIDATE, **COMMON}, rest=True, free_pairs=True)
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
    validate_only = _validate_only(options)
    operation = IncrementalAlterConfigs(resource_type, name, tuple(changes),
                                        validate_only=validate_only)
    _submit(session, _label(f"alter-config {values[0]}", validate_only), operation, options)


DEFAULT_ENTITY = "<default>"
"""The name that stands for an entity type's default entity (kafka-configs' ``<default>``)."""


def parse_quota_entity(text: str) -> tuple[tuple[str, str | None], ...]:
    """``user=bob,client-id=app`` as (type, name) pairs; ``<default>`` is the type's default
    entity. The types and names are the controller's to check."""
    entity: list[tuple[str, str | None]] = []
    for part in text.split(","):
        kind, eq, name = part.partition("=")
        if not eq:
            raise CommandError(f"{part!r} is not TYPE=NAME in the entity {text!r} "
                               f"({ALTER_CLIENT_QUOTAS.usage()})")
        entity.append((kind, None if name == DEFAULT_ENTITY else name))
    return tuple(entity)


def run_alter_client_quotas(session: Session, args: list[str]) -> None:
    """``alter-client-quotas TYPE=NAME[,TYPE=NAME] KEY=VALUE... [-KEY...]``."""
    values, options = parse_args(ALTER_CLIENT_QUOTAS, args, positional=("ENTITY", "KEY=VALUE"),
                                 options={**VALIDATE, **COMMON}, rest=True, free_pairs=True)
    entity = parse_quota_entity(values[0])
    ops: list[tuple[str, float | None]] = []
    for word in values[1:]:
        key, eq, text = word.partition("=")
        if eq and key:
            try:
                ops.append((key, float(text)))
            except ValueError:
                raise CommandError(f"{text!r} is not a number (the value of {key})") from None
        elif word.startswith("-") and len(word) > 1 and not eq:
            ops.append((word[1:], None))
        else:
            raise CommandError(f"{word!r} is not KEY=VALUE (set) or -KEY (remove) "
                               f"({ALTER_CLIENT_QUOTAS.usage()})")
    validate_only = _validate_only(options)
    operation = AlterClientQuotas((QuotaAlteration(entity, tuple(ops)),),
                                  validate_only=validate_only)
    _submit(session, _label(f"alter-client-quotas {values[0]}", validate_only), operation,
            options)


def acl_code(names: tuple[str, ...]) -> Converter:
    """A Kafka ACL enum name (any case) as its code; UNKNOWN and ANY are accepted, for the
    controller to refuse where Kafka's does."""
    def convert(key: str, text: str) -> int:
        upper = text.upper()
        if upper not in names:
            raise CommandError(f"{key} must be one of {', '.join(n.lower() for n in names)}, "
                               f"got {text!r}")
        return names.index(upper)
    return convert


_ACL_ENTRY: dict[str, Converter] = {
    "host": lambda _key, text: text,
    "permission": acl_code(ACL_PERMISSION_TYPES),
}


def run_create_acl(session: Session, args: list[str]) -> None:
    """``create-acl TYPE:NAME PRINCIPAL OPERATION [pattern=P] [host=H] [permission=P]``."""
    values, options = parse_args(CREATE_ACL, args,
                                 positional=("TYPE:NAME", "PRINCIPAL", "OPERATION"),
                                 options={"pattern": acl_code(PATTERN_TYPES), **_ACL_ENTRY,
                                          **COMMON})
    kind, colon, name = values[0].partition(":")
    if not colon:
        raise CommandError(f"{values[0]!r} is not TYPE:NAME ({CREATE_ACL.usage()})")
    acl = StandardAcl(
        resource_type=acl_code(ACL_RESOURCE_TYPES)("TYPE", kind), resource_name=name,
        pattern_type=options.get("pattern", PATTERN_TYPES.index("LITERAL")),
        principal=values[1], host=options.get("host", "*"),
        operation=acl_code(ACL_OPERATIONS)("OPERATION", values[2]),
        permission_type=options.get("permission", ACL_PERMISSION_TYPES.index("ALLOW")))
    _submit(session, f"create-acl {values[0]}", CreateAcls((acl,)), options)


def run_delete_acls(session: Session, args: list[str]) -> None:
    """``delete-acls [resource-type=T] [name=N] [pattern=P] [principal=P] [host=H]
    [operation=O] [permission=P]``."""
    _, options = parse_args(DELETE_ACLS, args, options={
        "resource-type": acl_code(ACL_RESOURCE_TYPES), "name": lambda _key, text: text,
        "pattern": acl_code(PATTERN_TYPES), "principal": lambda _key, text: text,
        "operation": acl_code(ACL_OPERATIONS), **_ACL_ENTRY, **COMMON})
    any_code = ACL_RESOURCE_TYPES.index("ANY")
    acl_filter = AclFilter(
        resource_type=options.get("resource-type", any_code),
        resource_name=options.get("name"), pattern_type=options.get("pattern", any_code),
        principal=options.get("principal"), host=options.get("host"),
        operation=options.get("operation", any_code),
        permission_type=options.get("permission", any_code))
    _submit(session, "delete-acls", DeleteAcls((acl_filter,)), options)


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


def run_update_features(session: Session, args: list[str]) -> None:
    """``update-features NAME=LEVEL... [downgrade=safe|unsafe]``."""
    values, options = parse_args(UPDATE_FEATURES, args, positional=(),
                                 options={"downgrade": choice("safe", "unsafe"), **COMMON},
                                 rest=True, free_pairs=True)
    if not values:
        raise CommandError(f"give at least one NAME=LEVEL ({UPDATE_FEATURES.usage()})")
    updates = []
    for word in values:
        name, equals, text = word.partition("=")
        if not equals or not name:
            raise CommandError(f"{word!r} is not NAME=LEVEL ({UPDATE_FEATURES.usage()})")
        if name == METADATA_VERSION_FEATURE:
            try:
                level = parse_metadata_version(text)
            except ValueError as error:
                raise CommandError(str(error)) from None
        else:
            level = integer(0, 32767)(name, text)
        updates.append(FeatureUpdate(name, level,
                                     allow_downgrade=options.get("downgrade") == "safe",
                                     unsafe=options.get("downgrade") == "unsafe"))
    label = "update-features " + " ".join(values)
    _submit(session, label, UpdateFeatures(tuple(updates)), options)


def parse_topic_partition(command: Command, word: str) -> tuple[str, int]:
    """``TOPIC:PARTITION`` as (topic, partition); raises CommandError."""
    topic, colon, number = word.rpartition(":")
    if not colon or not topic:
        raise CommandError(f"{word!r} is not TOPIC:PARTITION ({command.usage()})")
    return topic, integer(0, MAX_PARTITIONS - 1)("PARTITION", number)


def _by_topic(pairs: list[tuple[str, int, tuple[int, ...] | None]]
              ) -> tuple[ReassignableTopic, ...]:
    """The partitions' targets grouped by topic, topics and partitions in the order given."""
    grouped: dict[str, list[ReassignablePartition]] = {}
    for topic, partition, replicas in pairs:
        grouped.setdefault(topic, []).append(ReassignablePartition(partition, replicas))
    return tuple(ReassignableTopic(t, tuple(p)) for t, p in grouped.items())


def _replica_list(where: str, text: str) -> tuple[int, ...]:
    """``B:B:B`` as broker ids (the form only: the controller checks the brokers)."""
    ids = text.split(":")
    if len(ids) > MAX_REPLICATION_FACTOR:
        raise CommandError(f"{where}: {len(ids)} brokers; at most {MAX_REPLICATION_FACTOR}")
    for broker in ids:
        if not broker.isascii() or not broker.isdigit():
            raise CommandError(f"{where}: {broker!r} is not a broker id (the new replicas "
                               f"are broker ids separated by ':', e.g. {where}=1:2:3)")
    return tuple(integer(0, MAX_BROKER_ID)(f"{where}: broker id", b) for b in ids)


def run_reassign_partitions(session: Session, args: list[str]) -> None:
    """``reassign-partitions TOPIC:PARTITION=B:B... [TOPIC:PARTITION=B:B...]``."""
    values, options = parse_args(REASSIGN_PARTITIONS, args, positional=("TOPIC:PARTITION=B:B",),
                                 options=COMMON, rest=True, free_pairs=True)
    pairs: list[tuple[str, int, tuple[int, ...] | None]] = []
    for word in values:
        where, eq, brokers = word.partition("=")
        if not eq or not brokers:
            raise CommandError(f"{word!r} is not TOPIC:PARTITION=B:B (the partition's new "
                               f"replicas, broker ids separated by ':') "
                               f"({REASSIGN_PARTITIONS.usage()})")
        topic, partition = parse_topic_partition(REASSIGN_PARTITIONS, where)
        pairs.append((topic, partition, _replica_list(where, brokers)))
    label = " ".join(f"{t}:{p}" for t, p, _ in pairs)
    _submit(session, f"reassign-partitions {label}",
            AlterPartitionReassignments(_by_topic(pairs)), options)


def run_cancel_reassignments(session: Session, args: list[str]) -> None:
    """``cancel-reassignments TOPIC:PARTITION...``."""
    values, options = parse_args(CANCEL_REASSIGNMENTS, args, positional=("TOPIC:PARTITION",),
                                 options=COMMON, rest=True)
    pairs: list[tuple[str, int, tuple[int, ...] | None]] = [
        (*parse_topic_partition(CANCEL_REASSIGNMENTS, word), None) for word in values]
    label = " ".join(values)
    _submit(session, f"cancel-reassignments {label}",
            AlterPartitionReassignments(_by_topic(pairs)), options)


def run_list_reassignments(session: Session, args: list[str]) -> None:
    """``list-reassignments [TOPIC:PARTITION...]``."""
    values, _ = parse_args(LIST_REASSIGNMENTS, args, rest=True)
    named: dict[str, list[int]] = {}
    for word in values:
        topic, partition = parse_topic_partition(LIST_REASSIGNMENTS, word)
        named.setdefault(topic, []).append(partition)
    lab = session.require_lab()
    active = lab.cluster.active_controller()
    if active is None or active.fault is not None:
        raise CommandError("no active controller to ask (run-until leader, then try again)")
    topics = tuple((t, tuple(p)) for t, p in named.items()) if named else None
    answer = list_partition_reassignments(active.committed_image(), topics)
    if not answer["topics"]:
        session.out("no partition reassignment in progress")
        return
    for topic in answer["topics"]:
        for p in topic["partitions"]:
            session.out(f"{topic['name']}-{p['partitionIndex']}: replicas {p['replicas']}, "
                        f"adding {p['addingReplicas']}, removing {p['removingReplicas']}")


_OPTIONS_TEXT = (
    "\n\nmode=M      write mode for this operation: transactional, atomic or non-atomic "
    "(default: the cluster's)\nretries=N   resubmit up to N times after a retriable error "
    "(NOT_CONTROLLER, REQUEST_TIMED_OUT), once a controller is active (default 0)\n\n"
    "The operation is submitted once; a refusal is an error at once, otherwise its outcome "
    "is printed when known (after tick or run-until, or at a crash).")

_VALIDATE_TEXT = (
    "\nvalidate-only=true      check and answer as usual, write nothing (Kafka's "
    "validateOnly; default false)")

CREATE_TOPIC = Command(
    "create-topic", "create-topic NAME [partitions=N] [replication-factor=R] "
    "[assignments=B:B,B:B] [validate-only=true|false] [mode=M] [retries=N]", "create a topic",
    "Submits CreateTopics: a TopicRecord and one PartitionRecord per partition. When the "
    "records exceed one batch, transactional mode writes them as one metadata transaction "
    "(Begin, batches, End), atomic mode refuses them (POLICY_VIOLATION) and non-atomic mode "
    "splits them with no markers.\n\npartitions=N            default 1\n"
    "replication-factor=R    default min(3, brokers)\n"
    "assignments=B:B,B:B     the replicas by hand, as kafka-topics --replica-assignment: "
    "one broker list per partition, partitions separated by ',', broker ids by ':', the "
    "first broker of each the leader (not with partitions= or replication-factor=; the "
    "request then asks for -1 of both, as Kafka's does). The controller refuses a broker "
    "that is not registered, a broker named twice in a partition and partitions of "
    "unequal replica counts (INVALID_REPLICA_ASSIGNMENT)" + _VALIDATE_TEXT + _OPTIONS_TEXT
    + "\n\nExamples: create-topic big partitions=2000\n"
    "          create-topic placed assignments=0:1:2,1:2:0\n"
    "          create-topic huge partitions=100000 validate-only=true", run_create_topic,
    options=("partitions", "replication-factor", "assignments", VALIDATE_ONLY, "mode",
             "retries"))
DELETE_TOPIC = Command(
    "delete-topic", "delete-topic NAME|id=TOPIC_ID [mode=M] [retries=N]", "delete a topic",
    "Submits DeleteTopics: one RemoveTopicRecord (its partitions and configs go with it). "
    "The topic is named by its name or by its topic id (id=, Kafka's text form, as "
    "/image/topics/byId lists them); an unknown name is UNKNOWN_TOPIC_OR_PARTITION, an "
    "unknown id UNKNOWN_TOPIC_ID. Both may be given (one removal when they name the same "
    "topic)." + _OPTIONS_TEXT + "\n\nExamples: delete-topic big\n"
    "          delete-topic id=q2nMdY1tSmy0V4Pl3kLrWg", run_delete_topic,
    options=("id", "mode", "retries"))
ALTER_CONFIG = Command(
    "alter-config",
    "alter-config TYPE:NAME KEY=VALUE... [KEY+=ITEMS...] [KEY-=ITEMS...] [-KEY...] "
    "[validate-only=true|false] [mode=M] [retries=N]",
    "set or delete config keys",
    "Submits IncrementalAlterConfigs for one resource: TOPIC:NAME, BROKER:ID, or BROKER: "
    "(the cluster-wide broker default). KEY=VALUE sets a key (SET), -KEY deletes it "
    "(DELETE); KEY+=ITEMS and KEY-=ITEMS add to or remove from a list key the "
    "comma-separated ITEMS (APPEND and SUBTRACT; cleanup.policy and the replication "
    "throttles are lists). Names and values are checked as Kafka checks them "
    "(INVALID_CONFIG); a topic key left as it was writes no record.\n"
    + _VALIDATE_TEXT + _OPTIONS_TEXT
    + "\n\nExamples: alter-config TOPIC:big retention.ms=60000 cleanup.policy+=compact\n"
    "          alter-config TOPIC:big retention.ms=-5 validate-only=true",
    run_alter_config, options=(VALIDATE_ONLY, "mode", "retries"))
ALTER_CLIENT_QUOTAS = Command(
    "alter-client-quotas",
    "alter-client-quotas TYPE=NAME[,TYPE=NAME] KEY=VALUE... [-KEY...] "
    "[validate-only=true|false] [mode=M] [retries=N]",
    "set or remove client quotas",
    "Submits AlterClientQuotas for one entity (Kafka's kafka-configs --entity-type users, "
    "clients or ips): user=NAME, client-id=NAME (either or both) or ip=ADDRESS; NAME "
    "<default> is the type's default entity. KEY=VALUE sets a quota, -KEY removes it. A "
    "user or client-id entity takes producer_byte_rate and consumer_byte_rate (whole "
    "numbers), request_percentage and controller_mutation_rate; an ip entity takes "
    "connection_creation_rate (a whole number). The controller checks them as Kafka does "
    "(INVALID_REQUEST); a value left as it was writes no record. The quotas are under "
    "/image/clientQuotas." + _VALIDATE_TEXT + _OPTIONS_TEXT
    + "\n\nExamples: alter-client-quotas user=bob consumer_byte_rate=1024\n"
    "          alter-client-quotas user=<default>,client-id=app -request_percentage",
    run_alter_client_quotas, options=(VALIDATE_ONLY, "mode", "retries"))
CREATE_ACL = Command(
    "create-acl", "create-acl TYPE:NAME PRINCIPAL OPERATION [pattern=literal|prefixed] "
    "[host=H] [permission=allow|deny] [mode=M] [retries=N]", "create an ACL",
    "Submits CreateAcls for one ACL (Kafka's kafka-acls --add): TYPE is a resource type "
    "(topic, group, cluster, transactional_id, delegation_token, user), NAME the resource "
    "(or prefix), PRINCIPAL e.g. User:bob, OPERATION e.g. read, write, all. pattern= "
    "defaults to literal, host= to *, permission= to allow. The controller checks the ACL "
    "as Kafka does (INVALID_REQUEST: e.g. an ANY or UNKNOWN type or operation, a match "
    "pattern, an empty name); an ACL already held is accepted and writes nothing, a new "
    "one is an AccessControlEntryRecord under a fresh id, listed under /image/acls."
    + _OPTIONS_TEXT + "\n\nExamples: create-acl topic:orders User:bob read\n"
    "          create-acl group:app- User:* read pattern=prefixed permission=deny",
    run_create_acl, options=("pattern", "host", "permission", "mode", "retries"))
DELETE_ACLS = Command(
    "delete-acls", "delete-acls [resource-type=T] [name=N] [pattern=P] [principal=P] "
    "[host=H] [operation=O] [permission=P] [mode=M] [retries=N]", "delete the ACLs a filter "
    "matches",
    "Submits DeleteAcls with one filter (Kafka's kafka-acls --remove): each option left out "
    "matches anything (resource-type, pattern, operation and permission default to any). "
    "pattern=match with a name matches the literal ACL of that name, the literal * and "
    "every prefixed ACL the name starts with; pattern=any or a given pattern matches the "
    "name exactly. Each matched ACL is removed by one RemoveAccessControlEntryRecord; the "
    "outcome says how many the filter matched. A filter of an unknown type is refused "
    "(INVALID_REQUEST)." + _OPTIONS_TEXT
    + "\n\nExamples: delete-acls principal=User:bob\n"
    "          delete-acls resource-type=topic name=orders pattern=match",
    run_delete_acls, options=("resource-type", "name", "pattern", "principal", "host",
                              "operation", "permission", "mode", "retries"))
REGISTER_BROKER = Command(
    "register-broker", "register-broker ID [rack=R] [retries=N]", "register a broker",
    "Submits a broker registration (RegisterBrokerRecord): the broker appears under "
    "/image/cluster/brokers, fenced, with the record's offset as its epoch. ID is a Kafka "
    "broker id: 0-2147483647 (int32)." + _OPTIONS_TEXT
    + "\n\nExample: register-broker 7 rack=b", run_register_broker,
    options=("rack", "mode", "retries"))

UPDATE_FEATURES = Command(
    "update-features", "update-features NAME=LEVEL... [downgrade=safe|unsafe] [mode=M] "
    "[retries=N]", "finalize feature levels (metadata.version included)",
    "Submits UpdateFeatures (Kafka's kafka-features upgrade / downgrade): one "
    "FeatureLevelRecord per feature, all or nothing. metadata.version takes a release name "
    "(4.0-IV1) or a level; the others a level. A lower level needs downgrade=safe (or "
    "unsafe). The controller checks each level as Kafka does (INVALID_UPDATE_VERSION: a "
    "level a registered broker or controller does not support, a feature's "
    "metadata.version dependency, a downgrade that might lose metadata). "
    "eligible.leader.replicas.version=1 turns eligible leader replicas (KIP-966) on; it "
    "needs metadata.version 4.0-IV1, and first writes the cluster's min.insync.replicas "
    "(1 unless set) and removes every single broker's." + _OPTIONS_TEXT
    + "\n\nExamples: update-features metadata.version=4.0-IV1 "
    "eligible.leader.replicas.version=1\n"
    "          update-features eligible.leader.replicas.version=0 downgrade=safe",
    run_update_features, options=("downgrade", "mode", "retries"))

ELECT_LEADERS = Command(
    "elect-leaders", "elect-leaders preferred|unclean [TOPIC:PARTITION...] [mode=M] "
    "[retries=N]", "elect partition leaders (preferred or unclean)",
    "Submits ElectLeaders (Kafka's kafka-leader-election). preferred: the first replica leads "
    "when it is in the ISR and its broker is active (else the leader stays, or the next such "
    "replica leads). unclean: a partition with no leader gets one, from the ISR if it can, "
    "else the first active replica alone (RECOVERING), whatever the topic's "
    "unclean.leader.election.enable. With eligible leader replicas on (KIP-966), a partition "
    "whose ISR is empty elects an active eligible replica first, cleanly (the ISR becomes "
    "just it). Without TOPIC:PARTITION every partition is tried and "
    "those that need no election are left out of the results. Each partition's result "
    "(NONE, ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, "
    "ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION) is printed when the "
    "operation commits." + _OPTIONS_TEXT
    + "\n\nExample: elect-leaders preferred big:0 big:1", run_elect_leaders,
    options=("mode", "retries"))

REASSIGN_PARTITIONS = Command(
    "reassign-partitions", "reassign-partitions TOPIC:PARTITION=B:B... "
    "[TOPIC:PARTITION=B:B...] [mode=M] [retries=N]", "move partitions to new replica lists",
    "Submits AlterPartitionReassignments (Kafka's kafka-reassign-partitions --execute): each "
    "partition gets the replica list after '=', broker ids separated by ':', the first the "
    "preferred leader. A target the ISR already holds completes at once (a reordering, or "
    "only removals); otherwise the partition's replicas become the target followed by the "
    "replicas it drops, with the new ones listed as adding and the dropped ones as "
    "removing (list-reassignments, or /image/topics/byName/T/P). The new replicas fetch "
    "from the leader; once the leader's AlterPartition takes every one of them into the "
    "ISR, the controller completes the reassignment in that change: the replicas become "
    "the target, the dropped replicas leave the ISR and a dropped leader is replaced by "
    "the first target replica in sync. Each partition's result (NONE, "
    "UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT for an empty list, a broker "
    "that is not registered or a broker named twice) is printed when the operation "
    "commits." + _OPTIONS_TEXT
    + "\n\nExamples: reassign-partitions orders:0=3:1:2\n"
    "          reassign-partitions orders:0=2:1:0 orders:1=0:3", run_reassign_partitions,
    options=("mode", "retries"))
CANCEL_REASSIGNMENTS = Command(
    "cancel-reassignments", "cancel-reassignments TOPIC:PARTITION... [mode=M] [retries=N]",
    "cancel ongoing partition reassignments",
    "Submits AlterPartitionReassignments with no target for each partition (Kafka's "
    "kafka-reassign-partitions --cancel): the adding replicas leave the replicas and the "
    "ISR (the leader epoch moves when there were any) and the removing ones stay, in the "
    "order the reassignment gave them. A partition with no reassignment in progress answers "
    "NO_REASSIGNMENT_IN_PROGRESS; one whose ISR holds only adding replicas can be reverted "
    "only when its topic allows unclean leader election (else "
    "INVALID_REPLICA_ASSIGNMENT)." + _OPTIONS_TEXT
    + "\n\nExample: cancel-reassignments orders:0", run_cancel_reassignments,
    options=("mode", "retries"))
LIST_REASSIGNMENTS = Command(
    "list-reassignments", "list-reassignments [TOPIC:PARTITION...]",
    "list the ongoing partition reassignments",
    "Lists the partitions being reassigned (Kafka's ListPartitionReassignments, as "
    "kafka-reassign-partitions --list shows them): each one's replicas, and the replicas "
    "it is adding and removing. Without TOPIC:PARTITION every ongoing reassignment is "
    "listed; with them, those of the named partitions (an unknown one is left out). Read "
    "at once from the active controller's committed state (its last stable offset, as "
    "Kafka reads it); nothing is written.\n\nExamples: list-reassignments\n"
    "          list-reassignments orders:0 orders:1", run_list_reassignments)

OPERATIONS = (CREATE_TOPIC, DELETE_TOPIC, ALTER_CONFIG, ALTER_CLIENT_QUOTAS, CREATE_ACL,
              DELETE_ACLS, REGISTER_BROKER, UPDATE_FEATURES, ELECT_LEADERS, REASSIGN_PARTITIONS,
              CANCEL_REASSIGNMENTS, LIST_REASSIGNMENTS)
"""The lab's operations."""
