"""The lab: one simulated cluster driven by shell commands.

Operations are submitted once, to the active controller, and their outcome is
reported when it is known (right away for a refusal, later for a commit or a
failover). An operation given ``retries=N`` is resubmitted after a retriable
error (NOT_CONTROLLER, REQUEST_TIMED_OUT) as soon as a controller is active
again, at most N times. Time only moves in :meth:`Lab.run_until` (``tick``,
``run-until``); a run stops at its timeout, never later.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from controller.handle import OperationHandle
from controller.operations import Operation
from controller.registration_manager import is_own_registration
from controller.write_mode import WriteMode
from metadata.image import MetadataImage
from metadata.versions import CONTROLLER_REGISTRATION
from shell.errors import CommandError
from shell.formatting import plural
from shell.txn_lab import TxnLab
from sim.clients import Producer
from sim.cluster import ClusterConfig, KRaftCluster
from sim.invariants.producer_txn import ProducerTxnInvariants
from sim.save import cluster_id as cluster_id_of_seed
from sim.world import NodeStatus


class LabOperation:
    """An operation submitted from the shell, with its retries."""

    def __init__(self, number: int, label: str, operation: Operation, mode: WriteMode | None,
                 retries: int, handle: OperationHandle) -> None:
        self.number = number
        self.label = label
        self.operation = operation
        self.mode = mode
        self.retries_left = retries
        self.handle = handle
        self.attempts = 1
        self.reported = False
        self.waiting_retry = False

    @property
    def name(self) -> str:
        """``op 3 (create-topic big)``."""
        return f"op {self.number} ({self.label})"


def describe_submission(handle: OperationHandle) -> str:
    """Where an accepted operation went: controller, records, batches, offsets."""
    batches = f"{handle.batch_count} batch" + ("es" if handle.batch_count != 1 else "")
    if handle.batch_count > 1:
        how = "as a transaction" if handle.transactional else f"{handle.mode}, no markers"
        batches += f" ({how})"
    if handle.record_count == 0:
        return f"submitted to controller {handle.controller_id}: no records to write"
    return (f"submitted to controller {handle.controller_id}: "
            f"{plural(handle.record_count, 'record')} in {batches}, offsets "
            f"{handle.first_offset}-{handle.last_offset}")


def election_results(response: object) -> str:
    """An ElectLeaders response as ``; foo-0 NONE, foo-1 ELECTION_NOT_NEEDED`` (every
    partition's result; other responses: nothing)."""
    if not isinstance(response, dict) or "electionType" not in response:
        return ""
    parts = [f"{topic['topic']}-{p['partition']} {p['error']}"
             + (f" ({p['message']})" if p["error"].startswith("UNKNOWN") else "")
             for topic in response["results"] for p in topic["partitions"]]
    return "; " + (", ".join(parts) if parts else "no partition needed an election")


def acl_results(response: object) -> str:
    """A DeleteAcls response as ``; 2 ACLs matched`` (each filter's count or error, ``,``
    between filters; other responses: nothing)."""
    if not isinstance(response, dict) or "filterResults" not in response:
        return ""
    parts = [plural(len(result["matchingAcls"]), "ACL") + " matched"
             if result["errorCode"] == "NONE"
             else f"{result['errorCode']}: {result['errorMessage']}"
             for result in response["filterResults"]]
    return "; " + ", ".join(parts)


def reassignment_results(response: object) -> str:
    """An AlterPartitionReassignments response as ``; foo-0 NONE, foo-9
    UNKNOWN_TOPIC_OR_PARTITION (Unable to find partition foo:9.)`` (other responses:
    nothing)."""
    if not isinstance(response, dict) or "responses" not in response:
        return ""
    parts = [f"{topic['name']}-{p['partitionIndex']} {p['errorCode']}"
             + (f" ({p['errorMessage']})" if p["errorMessage"] else "")
             for topic in response["responses"] for p in topic["partitions"]]
    return "; " + (", ".join(parts) if parts else "no partition named")


class LabProducer:
    """A ``produce`` command's producer and what of it was reported."""

    def __init__(self, number: int, producer: Producer) -> None:
        self.number = number
        self.producer = producer
        self.acks_reported = 0
        self.failures_reported = 0

    @property
    def name(self) -> str:
        """``produce 2 (orders/0)``."""
        return f"produce {self.number} ({self.producer.topic}/{self.producer.partition})"


class Lab:
    """A :class:`KRaftCluster` with the shell's bookkeeping; see the module docs."""

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        monitor = ProducerTxnInvariants() if config.brokers_settings.lifecycle else None
        self.cluster = KRaftCluster(config, extra_monitors=[monitor] if monitor else [])
        self.txn = TxnLab(self.cluster, monitor)
        """Producer transactions: coordinators started by the first ``producer ... init``."""
        self.ops: list[LabOperation] = []
        self.producers: list[LabProducer] = []
        self.reports: list[str] = []
        self.view = config.broker_ids[0] if config.brokers else config.controller_ids[0]

    @property
    def now(self) -> int:
        """Simulated time in ms."""
        return self.cluster.sim.now

    @property
    def cluster_id(self) -> str:
        """The cluster id: the cluster's own when it was given one, else the one the lab's
        nodes carry in meta.properties when saved (:func:`sim.save.cluster_id` of the seed)."""
        return self.cluster.cluster_id or cluster_id_of_seed(self.config.seed)

    # ------------------------------------------------------------------ nodes
    def node_name(self, node_id: int) -> str:
        """``controller 3000`` or ``broker 0``."""
        kind = "controller" if node_id in self.config.controller_ids else "broker"
        return f"{kind} {node_id}"

    def resolve(self, token: str) -> int:
        """A node id from ``leader`` or a number; raises CommandError naming the nodes."""
        if token == "leader":
            leader = self.cluster.sim.leader_id()
            if leader is None:
                raise CommandError("there is no leader right now (try: run-until leader)")
            return leader
        nodes = sorted(self.cluster.sim.slots)
        listing = ", ".join(map(str, nodes))
        try:
            node_id = int(token)
        except ValueError:
            raise CommandError(f"{token!r} is not a node: give a node id ({listing}) or "
                               f"'leader'") from None
        if node_id not in self.cluster.sim.slots:
            close = difflib.get_close_matches(token, [str(n) for n in nodes], n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise CommandError(f"no node {node_id}; the nodes are {listing}{hint}")
        return node_id

    def status_of(self, node_id: int) -> NodeStatus:
        """Whether the node's process runs."""
        return self.cluster.sim.slots[node_id].status

    def view_image(self, node_id: int) -> MetadataImage:
        """What ``node_id`` shows: a broker's published image, a controller's LSO view.

        Raises CommandError when the node is down (a stopped process has no image).
        """
        status = self.status_of(node_id)
        if status in (NodeStatus.CRASHED, NodeStatus.STOPPED):
            raise CommandError(f"{self.node_name(node_id)} is {status.value}: it shows no "
                               f"image until restarted (restart {node_id}, or view another "
                               f"node)")
        if node_id in self.config.controller_ids:
            controller = self.cluster.controller(node_id)
            if controller is None:
                raise CommandError(f"{self.node_name(node_id)} runs no controller")
            if controller.fault is not None:
                raise CommandError(f"{self.node_name(node_id)} stopped on a fault: "
                                   f"{controller.fault}")
            return controller.committed_image()
        loader = self.cluster.loader(node_id)
        if loader is None:
            raise CommandError(f"{self.node_name(node_id)} runs no metadata loader")
        return loader.published if loader.published is not None else MetadataImage.EMPTY

    def view_label(self, node_id: int) -> str:
        """What the view of ``node_id`` is, in words."""
        if node_id in self.config.controller_ids:
            return f"controller {node_id}: its committed state at the last stable offset"
        return f"broker {node_id}: the last image it published"

    def time_of(self, offset: int) -> str | None:
        """The simulated time the record at ``offset`` was appended."""
        batch = self.cluster.history.batch_containing(offset)
        return f"{batch.append_time_ms} ms (simulated)" if batch is not None else None

    # ------------------------------------------------------------------ operations
    def submit(self, label: str, operation: Operation, mode: WriteMode | None,
               retries: int) -> LabOperation:
        """Submit once to the active controller; the outcome is reported when known."""
        handle = self.cluster.submit(operation, mode)
        op = LabOperation(len(self.ops) + 1, label, operation, mode, retries, handle)
        self.ops.append(op)
        if handle.error is None:
            self.reports.append(f"{op.name}: {describe_submission(handle)}")
        elif not (handle.error.retriable and retries > 0):
            op.reported = True  # refused at once: the command itself reports it
        self.service()
        return op

    def service(self) -> None:
        """Report finished operations; resubmit those waiting for a retry."""
        active = None
        for op in self.ops:
            handle = op.handle
            if op.waiting_retry:
                active = active or self.cluster.active_controller()
                if active is None:
                    continue
                op.waiting_retry = False
                op.attempts += 1
                op.retries_left -= 1
                op.handle = self.cluster.submit(op.operation, op.mode)
                if op.handle.error is None:
                    self.reports.append(f"{op.name}: retry {op.attempts - 1}: "
                                        f"{describe_submission(op.handle)}")
                handle = op.handle
            if op.reported or not handle.done:
                continue
            if handle.error is None:
                op.reported = True
                done = "validated (nothing written)" \
                    if getattr(op.operation, "validate_only", False) else "committed"
                self.reports.append(f"{op.name}: {done} at {handle.completed_at} ms"
                                    + election_results(handle.response)
                                    + acl_results(handle.response)
                                    + reassignment_results(handle.response))
            elif handle.error.retriable and op.retries_left > 0:
                op.waiting_retry = True
                reason = str(handle.error).removesuffix(".")  # Kafka's texts end in one
                self.reports.append(f"{op.name}: {reason}; will retry "
                                    f"({op.retries_left} left)")
            else:
                op.reported = True
                self.reports.append(f"{op.name}: failed: {handle.error}")

    def produce(self, topic: str, partition: int, count: int, acks: int,
                idempotent: bool) -> int:
        """Hand ``count`` records to a new producer as one batch; returns its number."""
        number = len(self.producers) + 1
        producer = Producer(self.cluster, f"prod{number}", topic, partition, acks=acks,
                            idempotent=idempotent, batch_size=count)
        self.producers.append(LabProducer(number, producer))
        producer.send(count)
        return number

    def _service_producers(self) -> None:
        for lab_producer in self.producers:
            producer = lab_producer.producer
            for ack in producer.acknowledged[lab_producer.acks_reported:]:
                last = ack.first_offset + len(ack.values) - 1
                where = "(not waited for: acks=0)" if ack.first_offset < 0 else \
                    f"at offsets {ack.first_offset}-{last}"
                self.reports.append(f"{lab_producer.name}: {plural(len(ack.values), 'record')}"
                                    f" acknowledged {where} at {ack.at_ms} ms")
            lab_producer.acks_reported = len(producer.acknowledged)
            for values, error in producer.failed[lab_producer.failures_reported:]:
                self.reports.append(f"{lab_producer.name}: failed: {error} "
                                    f"({plural(len(values), 'record')} not written)")
            lab_producer.failures_reported = len(producer.failed)

    def drain_reports(self) -> list[str]:
        """Lines about operations and producers since the last call."""
        self.service()
        self._service_producers()
        out, self.reports = self.reports, []
        return out + self.txn.drain()

    def pending_operations(self) -> int:
        """Operations submitted from the shell that are not finished yet."""
        return sum(1 for op in self.ops if not op.handle.done or op.waiting_retry)

    def pending_produces(self) -> int:
        """``produce`` batches not yet acknowledged or failed."""
        return sum(1 for p in self.producers if not p.producer.idle)

    # ------------------------------------------------------------------ time
    def run_until(self, predicate: Callable[[], bool], timeout_ms: int) -> bool:
        """Run the simulation until ``predicate()`` (retries served on the way).

        Returns whether the predicate holds; stops at ``now + timeout_ms`` or at
        an invariant violation.
        """
        def check() -> bool:
            if any(op.waiting_retry for op in self.ops):
                self.service()
            return predicate()

        return self.cluster.sim.run_until_true(check, timeout_ms)

    def open_transaction(self) -> tuple[int, str | None] | None:
        """(Begin offset, name) of the transaction open in the committed log, if any."""
        reference = self.cluster.txn_invariants.reference
        reference.advance()
        txn = reference.open
        return None if txn is None else (txn.begin_offset, txn.name)

    def idle(self) -> bool:
        """``run-until idle``: the cluster's idle test, no retry waiting, and every controller
        registered (:meth:`unregistered_controller`)."""
        return self.cluster.idle() and not any(op.waiting_retry for op in self.ops) and \
            self.txn.pending() == 0 and self.unregistered_controller() is None

    def unregistered_controller(self) -> tuple[int, str | None] | None:
        """The first controller whose running process has no registration in the active
        controller's committed image (KIP-919; by incarnation id, as its registration
        manager decides), with the incarnation id the image holds for it instead (None:
        no registration at all); None when every one
        has, when that image's metadata.version is below 3.7-IV0 (controllers do not
        register there) or with no active controller. As for the cluster's idle test, only
        controllers the active one can reach both ways count (one cut off cannot register
        until the network heals), and one stopped on a fault does not.

        ``run-until idle`` waits for this, so that a restarted controller's
        re-registration is in the log once it returns (:meth:`KRaftCluster.idle` does not
        wait for it: the experiments' recovery figures are measured by that one)."""
        cluster = self.cluster
        active = cluster.active_controller()
        if active is None:
            return None
        image = active.committed_image()
        if image.metadata_version < CONTROLLER_REGISTRATION:
            return None
        network = cluster.sim.network
        for node_id in self.config.controller_ids:
            manager = cluster.registration_manager(node_id)
            controller = cluster.controller(node_id)
            if manager is None or controller is None or controller.fault is not None:
                continue
            if node_id != active.node_id and not network.connected(active.node_id, node_id):
                continue
            registered = image.controllers.get(node_id)
            if is_own_registration(registered, manager.incarnation_id):
                continue
            return node_id, None if registered is None else registered.incarnation_id
        return None

    def why_not_idle(self) -> str:
        """What keeps the cluster from being idle, in words."""
        cluster = self.cluster
        active = cluster.active_controller()
        if active is None:
            return "no controller is active"
        pending = self.pending_operations()
        if pending or active.purgatory:
            return f"{max(pending, len(active.purgatory))} operation(s) pending"
        busy = [p.label for p in self.txn.producers.values() if not p.producer.idle]
        if busy and self.txn.pending():
            return f"{busy[0]} has requests to finish"
        completing = self.txn.completing()
        if completing:
            return f"transaction markers of {completing[0]} are being written"
        txn = self.open_transaction()
        if txn is not None or active.transaction_open:
            return "a transaction is open"
        target = cluster.txn_invariants.reference.last_meaningful_offset
        for node_id, slot in sorted(cluster.sim.slots.items()):
            if not slot.running or node_id == active.node_id:
                continue
            controller = cluster.controller(node_id)
            loader = cluster.loader(node_id)
            reached = (controller.offsets.last_committed_offset if controller is not None
                       else loader.published_offset if loader is not None else target)
            if reached < target:
                return f"{self.node_name(node_id)} is at offset {reached} of {target}"
        unregistered = self.unregistered_controller()
        if unregistered is not None:
            node_id, held = unregistered
            manager = cluster.registration_manager(node_id)
            incarnation = manager.incarnation_id if manager is not None else "?"
            holds = "no registration of it" if held is None else \
                f"an earlier process's registration (incarnation {held})"
            return (f"{self.node_name(node_id)} has not registered incarnation {incarnation} "
                    f"yet: the active controller's committed image holds {holds} (KIP-919)")
        return "the last committed records have not reached every node yet"
