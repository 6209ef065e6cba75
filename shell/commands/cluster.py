"""Lab commands about the cluster as a whole: cluster, seed, status, view, log, invariants."""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.write_mode import default_mode
from metadata.versions import LATEST_PRODUCTION, release_name
from raft.config import ConfigError
from shell.commands.base import Command, integer, parse_args, unknown_option
from shell.commands.data import partition_log_lines
from shell.errors import CommandError
from shell.formatting import plural, table, to_json
from shell.lab import Lab
from shell.raw_log import log_lines
from shell.status import status_json, status_text
from sim.bounds import INT64_MAX
from sim.cluster import ClusterConfig
from sim.invariants import RAFT_INVARIANTS
from sim.invariants.brokers import BROKER_INVARIANTS
from sim.invariants.partitions import PARTITION_INVARIANTS
from sim.invariants.producer_txn import PRODUCER_TXN_INVARIANTS
from sim.invariants.transactions import TRANSACTION_INVARIANTS
from sim.settings import BY_NAME, SettingError, parse_settings
from sim.startup import start_cluster as start
from sim.world import NodeStatus

if TYPE_CHECKING:
    from shell.session import Session

SHELL_SETTINGS = ("controllers", "brokers", "seed", "max-records-per-batch", "mode",
                  "fetch-max-records", "broker-fetch-lag", "heartbeats", "metadata-version")
"""The settings (sim/settings.py) ``cluster`` offers, in the order its help lists them."""
CLUSTER_OPTIONS = {name: BY_NAME[name] for name in SHELL_SETTINGS}
"""The options of ``cluster`` (their words and bounds come from the settings table)."""


def _id_range(ids: tuple[int, ...]) -> str:
    return "none" if not ids else str(ids[0]) if len(ids) == 1 else f"{ids[0]}-{ids[-1]}"


def start_cluster(session: Session, config: ClusterConfig) -> Lab:
    """Build, start and install a cluster (``cluster``, also ``--demo``)."""
    try:
        lab = Lab(config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    start(lab.cluster)
    session.lab, session.files = lab, None
    active = lab.cluster.active_controller()
    level = config.controller.bootstrap_metadata_version
    version = "" if level == LATEST_PRODUCTION else f", metadata.version {release_name(level)}"
    session.out(f"cluster of {plural(config.controllers, 'controller')} "
                f"({_id_range(config.controller_ids)}) and {plural(config.brokers, 'broker')} "
                f"({_id_range(config.broker_ids)}), seed "
                f"{config.seed}, at most {config.controller.max_records_per_batch} records per "
                f"batch, {config.raft.fetch_max_records} per fetch, mode "
                f"{config.controller.write_mode or default_mode(level)}{version}")
    if active is None:
        raise CommandError("no controller became active within 60000 ms")
    brokers = ""
    if config.brokers:
        which = "broker" if config.brokers == 1 else "brokers"
        brokers = f"{which} {_id_range(config.broker_ids)} registered and unfenced; "
    session.out(f"at {lab.now} ms: controller {active.node_id} leads epoch "
                f"{active.claimed_epoch}; {brokers}viewing {lab.view_label(lab.view)}")
    return lab


def run_cluster(session: Session, args: list[str]) -> None:
    """``cluster [key=value...]``."""
    plain = [word for word in args if "=" not in word]
    if plain:
        raise CommandError(f"unexpected argument {plain[0]!r} ({CLUSTER.usage()})")
    try:
        config = parse_settings(args, allowed=SHELL_SETTINGS)
    except SettingError as exc:
        if exc.kind == "unknown":
            raise CommandError(unknown_option(CLUSTER, exc.key, CLUSTER_OPTIONS)) from None
        if exc.kind == "twice":
            raise CommandError(f"{exc.key} given twice ({CLUSTER.usage()})") from None
        raise CommandError(exc.line()) from None
    start_cluster(session, config)


def run_seed(session: Session, args: list[str]) -> None:
    """``seed``."""
    parse_args(SEED, args)
    lab = session.require_lab()
    config = lab.config
    mode = config.controller.write_mode
    line = (f"cluster controllers={config.controllers} brokers={config.brokers} "
            f"seed={config.seed} max-records-per-batch={config.controller.max_records_per_batch}"
            f" fetch-max-records={config.raft.fetch_max_records}")
    if mode is not None:
        line += f" mode={mode.value}"
    if config.broker_fetch_lag_ms:
        line += f" broker-fetch-lag={config.broker_fetch_lag_ms}"
    if config.brokers_settings.lifecycle:
        line += " heartbeats=on"
    level = config.controller.bootstrap_metadata_version
    if level != LATEST_PRODUCTION:
        line += f" metadata-version={release_name(level)}"
    session.out(f"seed {config.seed}; the same commands after this line replay this run "
                f"exactly:")
    session.out(f"  {line}")


def run_status(session: Session, args: list[str]) -> None:
    """``status``."""
    parse_args(STATUS, args)
    if session.lab is None and session.files is not None:
        files = session.files
        if session.format == "json":
            session.out(to_json({"source": files.path, "imageOffset": files.image.offset,
                                 "openTransaction": files.open_transaction,
                                 "warnings": files.warnings}))
        else:
            session.out(files.describe())
            for warning in files.warnings:
                session.out(f"warning: {warning}")
        return
    lab = session.require_lab()
    if session.format == "json":
        session.out(to_json(status_json(lab)))
        return
    for line in status_text(lab):
        session.out(line)


def run_view(session: Session, args: list[str]) -> None:
    """``view NODE``."""
    values, _ = parse_args(VIEW, args, positional=("NODE",))
    lab = session.require_lab()
    node_id = lab.resolve(values[0])
    lab.view = node_id
    status = lab.status_of(node_id)
    if status in (NodeStatus.CRASHED, NodeStatus.STOPPED):
        session.out(f"viewing {lab.node_name(node_id)}, which is {status.value}: /image is "
                    f"unavailable until it restarts")
        return
    image = lab.view_image(node_id)
    session.out(f"viewing {lab.view_label(node_id)}, at offset {image.offset}")


def run_log(session: Session, args: list[str]) -> None:
    """``log NODE [FROM [TO]]`` or ``log BROKER TOPIC/PARTITION``."""
    values, _ = parse_args(LOG, args, positional=("NODE",), optional=("FROM", "TO"))
    if session.lab is None and session.files is not None:
        raise CommandError("there is no simulation: for the raw records of Kafka files use "
                           "'kraftsim dump-log FILE'")
    lab = session.require_lab()
    node_id = lab.resolve(values[0])
    if len(values) == 2 and "/" in values[1]:
        for line in partition_log_lines(lab, node_id, values[1]):
            session.out(line)
        return
    first = integer(0, INT64_MAX)("FROM", values[1]) if len(values) > 1 else None
    last = integer(0, INT64_MAX)("TO", values[2]) if len(values) > 2 else None
    if first is not None and last is not None and last < first:
        raise CommandError(f"TO ({last}) is before FROM ({first})")
    slot = lab.cluster.sim.slots[node_id]
    if slot.raft is not None and slot.status not in (NodeStatus.CRASHED, NodeStatus.STOPPED):
        log, hw = slot.raft.log, slot.raft.high_watermark
    else:
        log, hw = slot.storage.log, None
    for line in log_lines(lab.node_name(node_id), log, hw, first, last):
        session.out(line)


def run_invariants(session: Session, args: list[str]) -> None:
    """``invariants``."""
    parse_args(INVARIANTS, args)
    lab = session.require_lab()
    cluster = lab.cluster
    violation = cluster.sim.violation
    rows = []
    groups: list[tuple[str, dict[str, str]]] = [("raft", RAFT_INVARIANTS),
                                                ("transactions", TRANSACTION_INVARIANTS),
                                                ("partitions", PARTITION_INVARIANTS)]
    if lab.config.brokers_settings.lifecycle:
        groups.append(("brokers", BROKER_INVARIANTS))
    if lab.txn.txns is not None:
        groups.append(("producer txns", PRODUCER_TXN_INVARIANTS))
    for group, catalogue in groups:
        for name in catalogue:
            verdict = "held"
            if violation is not None and violation.invariant == name:
                verdict = "VIOLATED"
            elif violation is not None:
                verdict = "held (until the violation)"
            rows.append((group, name, verdict))
    session.out(f"checked after each of {cluster.sim.events} events (up to {lab.now} ms):")
    for line in table(("layer", "invariant", "verdict"), rows):
        session.out(line)
    txn = cluster.txn_invariants
    session.out(f"images published: {txn.publications}; partial-visibility observations: "
                f"{txn.partial_observations}")
    for example in txn.partial_examples[:5]:
        session.out(f"  e.g. {example}")
    if violation is not None:
        raise CommandError(f"{violation.invariant} violated: {violation.message}")


CLUSTER = Command(
    "cluster",
    "cluster [controllers=N] [brokers=N] [seed=S] [max-records-per-batch=N] "
    "[mode=transactional|atomic|non-atomic] [fetch-max-records=N] [broker-fetch-lag=MS] "
    "[heartbeats=on|off] [metadata-version=V]",
    "start a new simulated cluster",
    "Starts a new simulated cluster (replacing the current one) and runs it until a "
    "controller is active and every broker is registered and unfenced.\n\n"
    "controllers=N   controllers, node ids 3000.. (1-9, default 3)\n"
    "brokers=N       brokers, node ids 0.. (0-50, default 3); with none, operations that "
    "place replicas are refused\n"
    "seed=S          the seed: the same seed and commands give the same run (an integer of "
    "up to 40 digits, default 0)\n"
    "max-records-per-batch=N  records per raft batch, markers included (3-1000000, default "
    "10000; also batch-records=N)\n"
    "mode=M          how an operation larger than one batch is written: transactional "
    "(Begin ... End, KIP-868), atomic (refused), non-atomic (split with no markers); "
    "default transactional\n"
    "fetch-max-records=N  records a fetch response carries (1-1000000, default 1000): a "
    "transaction of many batches commits over several fetch rounds; also fetch-records=N\n"
    "broker-fetch-lag=MS  extra delay on every link into a broker (lagging brokers), 0-1997: "
    "a fetch answered 2000 ms (the raft request timeout) or more after it was sent has timed "
    "out, so a larger lag would starve the brokers\n"
    "heartbeats=on|off  on: brokers register, heartbeat every 2000 ms and are fenced by the "
    "controller when their session expires (9000 ms); they host partition replicas, so "
    "produce, consume and log BROKER TOPIC/PARTITION work. off (default): brokers are "
    "registered at start and never fenced\n"
    "metadata-version=V  the metadata.version the cluster is bootstrapped at: a release name "
    "(3.3-IV0..4.5-IV0) or its feature level (default 4.0-IV0). From 4.1-IV0 eligible leader "
    "replicas are on from the start (eligible.leader.replicas.version 1, as Kafka formats a "
    "cluster); below 3.6-IV1 no metadata transaction can be written, so the mode is atomic "
    "unless given\n\n"
    "The view switches to the first broker (see view).\n\n"
    "Example: cluster controllers=3 brokers=2 seed=7 max-records-per-batch=50",
    run_cluster, options=tuple(CLUSTER_OPTIONS))
SEED = Command("seed", "seed", "print the seed and the command that reproduces the cluster",
               "Prints the current cluster's seed and the cluster command that starts the "
               "same cluster: with the same commands after it, the run is the same.", run_seed)
STATUS = Command(
    "status", "status", "leader, open transaction, every node's offsets",
    "Prints the time, the leader and its epoch, the transaction open in the committed log "
    "(its Begin is committed and its End/Abort is not), pending operations, and per node: "
    "status, raft role, epoch, log end offset, high watermark (HW), the offset of the image "
    "it shows (a broker's last published image, a controller's LSO view) and a "
    "controller's last stable offset (LSO). With --format json: Kafka's field names "
    "(leaderId, leaderEpoch, logEndOffset, highWatermark, lastStableOffset), and the "
    "leader's DescribeQuorum answer under quorum (currentVoters and observers with the "
    "logEndOffset, lastFetchTimestamp and lastCaughtUpTimestamp the leader knows).", run_status)
VIEW = Command(
    "view", "view NODE", "choose whose image /image shows",
    "Makes /image show what NODE shows: for a broker, the last image its metadata loader "
    "published; for a controller, its committed state at the last stable offset (LSO "
    "view). Either way a partial transaction is never shown. NODE may be 'leader'. A "
    "crashed node shows nothing until it restarts.\n\nExample: view 3001", run_view,
    completes="node")
LOG = Command(
    "log", "log NODE [FROM [TO]]  or  log BROKER TOPIC/PARTITION",
    "print a node's raw metadata log, or a broker's replica of a partition",
    "Prints the batches and records NODE's replicated log holds, between offsets FROM and "
    "TO: transaction markers, records of open or aborted transactions and records not "
    "committed yet included. This is the raw log, not what any node publishes. At most "
    "500 records per command.\n\n"
    "With TOPIC/PARTITION (cluster heartbeats=on): the replica of that partition on BROKER: "
    "its role (leader, or follower of whom), leader and partition epochs and ISR as its "
    "published image gives them, log end offset and high watermark, and every record with "
    "the leader epoch that wrote it and its producer id, epoch and sequence (idempotent "
    "producers); records at or above the high watermark are marked.\n\n"
    "Examples: log leader 0 20; log 1 orders/0", run_log, completes="node")
INVARIANTS = Command(
    "invariants", "invariants", "the invariants checked after every event",
    "Lists every raft and transaction invariant with its verdict, the number of images "
    "published and of partial-visibility observations (an image inside a multi-batch "
    "operation: a violation in transactional mode, a reported fact in non-atomic mode). "
    "Fails once an invariant has been violated.", run_invariants)

CLUSTER_COMMANDS = (CLUSTER, SEED, STATUS, VIEW, LOG, INVARIANTS)
"""Lab commands about the whole cluster."""
