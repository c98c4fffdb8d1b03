"""Live offsets and group state from a Kafka cluster, through confluent-kafka (librdkafka).

This is an edge: it reads what the cluster knows about a consumer group (committed offsets, the
log start and log end of every partition, replica racks, the members and what they own) and
hands it to the core as model objects. It computes no lag: :meth:`GroupSnapshot.to_group` gives
a :class:`~lagassign.model.Group` whose partitions carry :class:`~lagassign.model.Offsets`, and
:mod:`lagassign.lag_rules` derives lag from them.

Every read has one deadline (``timeout`` seconds from its start). How it is read is chosen for
speed at thousands of partitions (docs/kafka.md, "How the offsets are read"). First through
Kafka's protocol (:mod:`lagassign.kafka.protocol`): a Metadata request, per partition leader one
ListOffsets request for the log start and one for the log end, one OffsetFetch of the group's
committed offsets, all in flight together on connections the reader keeps. When that path
cannot answer (a topic that does not exist, a leader moving, any error, settings it cannot
mean exactly), through librdkafka: partitions from one metadata request; log start and log end
through ``Consumer.offsets_for_times`` with Kafka's
``ListOffsets`` timestamps -2 (earliest) and -1 (latest), in chunks of :data:`CHUNK` partitions on
a few threads (librdkafka looks up each partition of a list linearly, so one list of 10,000
costs 100x a chunk); committed offsets through ``list_consumer_group_offsets``, chunked alike;
no Python future per partition. Independent requests are in flight together and each wait gets
what is left of the deadline. A cluster that cannot be reached at all (connection refused,
unknown host) or refuses the client's credentials fails at once, not at the deadline, with
librdkafka's words for the cause. Whatever goes wrong becomes one :class:`OffsetsError` whose
message names the bootstrap servers and the call or the cause.

Importing this module does not import confluent-kafka; creating an :class:`OffsetsReader` does.
"""

from __future__ import annotations

import concurrent.futures
import logging
import operator
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from lagassign.collector import collector_paused
from lagassign.java_ordering import java_order
from lagassign.kafka.protocol import (
    Read,
    WireClient,
    WireUnavailable,
    wire_settings,
)
from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition
from lagassign.rates import measure_rates

if TYPE_CHECKING:
    from confluent_kafka import Consumer, KafkaError
    from confluent_kafka.admin import AdminClient

log = logging.getLogger(__name__)
#: librdkafka's own log lines (connection failures, retries), always at DEBUG
client_log = logging.getLogger("lagassign.kafka.librdkafka")

Future = concurrent.futures.Future
_T = TypeVar("_T")
_C = TypeVar("_C")


class OffsetsError(Exception):
    """Reading from the cluster failed. ``str()`` is one line: servers, call, what went wrong."""


class ClientConfigError(OffsetsError):
    """librdkafka refused the client configuration (an unknown property, a missing password)."""


# ------------------------------------------------------------------------------------------------
# what the cluster says


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition as the cluster sees it for a group: offsets, owner, replica racks."""

    topic: str
    partition: int
    #: log start offset (``OffsetSpec.earliest()``)
    begin: int
    #: log end offset (``OffsetSpec.latest()``, the high watermark)
    end: int
    #: the group's committed offset, None when it has none
    committed: int | None
    member_id: str | None = None
    client_id: str | None = None
    host: str | None = None
    #: racks of the partition's replicas, from topic metadata (empty when brokers set no rack)
    racks: frozenset[str] = frozenset()

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def offsets(self) -> Offsets:
        return Offsets(self.begin, self.end, self.committed)


@dataclass(frozen=True, slots=True)
class LiveMember:
    """A member of the group as ``describe_consumer_groups`` reports it."""

    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    #: topics the member is known to consume: those of its assignment (and, for KIP-848
    #: groups, of its target assignment); the admin API does not expose subscriptions
    topics: frozenset[str]
    assigned: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class GroupSnapshot:
    """A consumer group at one moment: its state, members and the partitions it reads."""

    group: str
    #: Kafka's name for the state: Stable, Empty, PreparingRebalance, CompletingRebalance,
    #: Dead (also what the coordinator says of a group it does not know), Unknown
    state: str
    members: tuple[LiveMember, ...]
    #: every partition of every topic the group has committed offsets for or is assigned,
    #: topics in name order, partitions in number order
    partitions: tuple[PartitionState, ...]

    @property
    def exists(self) -> bool:
        """False when the coordinator knows nothing of the group (state Dead, no offsets)."""
        return self.state != "Dead" or bool(self.members) or bool(self.partitions)

    def to_group(self, auto_offset_reset: str = "latest") -> Group:
        """The model group: partitions with their offsets and racks, members owning what they
        are assigned.

        A member subscribes the topics it is assigned (or known to subscribe). A member that is
        assigned nothing (more members than partitions) is taken to subscribe every topic the
        other members consume, as in the usual group where all members subscribe alike.
        Assigned partitions of topics that no longer exist are left out.
        """
        by_topic: dict[str, list[Partition]] = {}
        for p in self.partitions:
            by_topic.setdefault(p.topic, []).append(
                Partition(p.topic, p.partition, offsets=p.offsets, racks=p.racks)
            )
        known = frozenset(by_topic)
        consumed = frozenset(
            t for m in self.members for t in (m.topics | {tp.topic for tp in m.assigned})
        )
        fallback = (consumed & known) or known
        members = []
        for m in self.members:
            topics = (m.topics | {tp.topic for tp in m.assigned}) & known
            if not topics:
                log.info(
                    "group %s: member %s is assigned nothing; taken to subscribe %s",
                    self.group,
                    m.member_id,
                    ", ".join(sorted(fallback)) or "nothing",
                )
                topics = fallback
            owned = tuple(tp for tp in m.assigned if tp.topic in known)
            members.append(
                Member(
                    m.member_id,
                    topics,
                    instance_id=m.instance_id,
                    owned=owned,
                    client_id=m.client_id,
                    host=m.host,
                )
            )
        return Group(
            self.group,
            {name: Topic(name, tuple(ps)) for name, ps in by_topic.items()},
            tuple(members),
            auto_offset_reset,
        )


# ------------------------------------------------------------------------------------------------
# the reader

_STATE_NAMES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
}

_THREAD_PREFIX = re.compile(r"^\[thrd:[^\]]*\]:\s*")
_NO_RACKS: frozenset[str] = frozenset()

#: partitions per ``offsets_for_times`` call: librdkafka finds each partition of a list by a
#: linear search, so a call costs the square of its size; 250 keeps that below the round trip
CHUNK = 250
#: partitions per ``list_consumer_group_offsets`` call (the same search in the answer)
COMMITTED_CHUNK = 500
#: up to this many topics, metadata is asked for topic by topic; beyond, for all at once
ALONE_TOPICS = 32
#: threads sending the ``offsets_for_times`` chunks (each call waits for its own answers)
THREADS = 4
#: seconds before asking again for partitions that answered a retriable error (leader moving),
#: doubling up to MAX_RETRY_BACKOFF_S: Kafka's retry.backoff.ms and retry.backoff.max.ms
RETRY_BACKOFF_S, MAX_RETRY_BACKOFF_S = 0.1, 1.0
#: Kafka's ListOffsets timestamps for the log start and the log end (high watermark)
EARLIEST, LATEST = -2, -1
#: seconds between looks at the clients' errors while waiting
_POLL_S = 0.02
#: polls that wait for the cause of "every broker is down" (see _check_faults)
_CAUSE_POLLS = 10
#: the reader's consumer never joins a group or commits; its group id is needed to create it
_CONSUMER_GROUP = "lagassign-offsets-reader"
#: share of a read's time left that the protocol path (lagassign.kafka.protocol) may take
#: before the read goes through librdkafka instead
WIRE_SHARE = 0.5


class ClientLog:
    """librdkafka's ``logger`` and ``error_cb``.

    Log lines go to :data:`client_log` at DEBUG (so nothing reaches stderr on its own); the last
    warning or error is kept for :class:`OffsetsError` messages. ``fault`` is set when waiting
    any longer is pointless: every broker is down (connections refused, host names that do not
    resolve), the credentials were refused (SASL) or TLS failed.
    """

    def __init__(self) -> None:
        self.last_problem: str | None = None
        self._fault: str | None = None
        self.all_down = False

    @property
    def fault(self) -> str | None:
        if self._fault is None and self.all_down:
            # librdkafka's own text is "1/1 brokers are down": the cause is the broker's error
            return f"cannot connect: {self.last_problem or 'every broker is down'}"
        return self._fault

    def log(self, level: int, fmt: str, *args: Any) -> None:
        message = fmt % args if args else fmt
        client_log.debug(message)
        if level >= logging.WARNING and args:
            text = _THREAD_PREFIX.sub("", str(args[-1])).replace("\n", " ").strip()
            self.last_problem = text or None

    def error(self, err: KafkaError) -> None:
        from confluent_kafka import KafkaError

        text = " ".join(err.str().split())
        client_log.debug("error: %s", text)
        code = err.code()
        if code == KafkaError._ALL_BROKERS_DOWN:
            self.all_down = True
        elif code == KafkaError._AUTHENTICATION:
            self._fault = f"authentication failed: {text}"
        elif code == KafkaError._SSL:
            self._fault = f"TLS failed: {text}"
        elif err.fatal():
            self._fault = text
        else:
            self.last_problem = text


class OffsetsReader:
    """Reads offsets and group state from a cluster.

    ``config`` holds librdkafka client properties: ``bootstrap.servers``, ``security.protocol``,
    ``sasl.*``, ``ssl.*`` (see :mod:`lagassign.kafka.config` for Java properties files).
    ``timeout`` bounds each read (:meth:`offsets`, :meth:`snapshot`) as a whole. The reader holds
    an ``AdminClient`` and, from the first offsets read, a ``Consumer`` that never joins a group
    (for ``offsets_for_times`` and metadata); keep one reader for many reads.

    With ``protocol`` (the default) the partitions' offsets are asked first through Kafka's
    protocol (:mod:`lagassign.kafka.protocol`: one request per broker and kind, on connections
    the reader keeps), within :data:`WIRE_SHARE` of the time left; when that path cannot
    answer, the read goes through librdkafka as above, which words its errors. The clients'
    faults end either path at once.
    """

    _admin: AdminClient | None
    _client_log: ClientLog

    def __init__(
        self, config: Mapping[str, str], timeout: float = 10.0, *, protocol: bool = True
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.timeout = float(timeout)
        self.servers = str(config.get("bootstrap.servers", "")).strip() or "(no bootstrap.servers)"
        try:
            import confluent_kafka  # noqa: F401
        except ImportError as e:  # pragma: no cover - confluent-kafka is a core dependency
            raise OffsetsError(
                f"reading from Kafka needs confluent-kafka (pip install confluent-kafka): {e}"
            ) from None
        self._properties: dict[str, Any] = {"client.id": "lagassign", **config}
        #: kafka-python settings of the protocol path, None where it cannot mean the same
        self._wire_settings = wire_settings(self._properties) if protocol else None
        self._wire: WireClient | None = None
        self._consumer: Consumer | None = None
        #: daemon threads still inside a consumer call (the consumer is closed only without)
        self._busy = 0
        self._lock = threading.Lock()
        self._connect()

    # -- public ----------------------------------------------------------------------------------

    def offsets(self, group: str, topics: Iterable[str]) -> dict[TopicPartition, Offsets]:
        """Log start, log end and ``group``'s committed offset of every partition of ``topics``.

        Topics that do not exist are left out (and logged).
        """
        deadline = self._start()
        wanted = sorted(set(topics), key=java_order)
        if not wanted:
            return {}
        rows = self._partition_rows(group, wanted, None, deadline)
        with collector_paused():
            return {tp: Offsets(b, e, c) for tp, b, e, c, _ in rows}

    def snapshot(self, group: str) -> GroupSnapshot:
        """The group's state and members, and the offsets of every partition of every topic it
        has committed offsets for or is assigned."""
        from confluent_kafka import ConsumerGroupTopicPartitions

        deadline = self._start()
        admin = self._client()
        remaining = self._remaining(deadline)
        wire = self._wire_client()
        # every committed offset in one OffsetFetch, beside the description; librdkafka's
        # list_consumer_group_offsets of a whole group searches its answer per partition
        pending = wire.start_committed(group) if wire is not None else None
        calls = {
            "describe_consumer_groups": self._send(
                "describe_consumer_groups",
                lambda: admin.describe_consumer_groups([group], request_timeout=remaining),
            ),
        }
        results = self._gather(calls, deadline)
        description = results["describe_consumer_groups"][group]
        committed = None
        if wire is not None and pending is not None:
            try:
                answer = wire.wait_committed(
                    pending, self._wire_deadline(deadline), self._check_faults
                )
                committed = {TopicPartition(t, p): o for (t, p), o in answer.items()}
            except WireUnavailable as unavailable:
                self._wire_failed(unavailable)
        if committed is None:
            call = "list_consumer_group_offsets"
            listed = self._send(
                call,
                lambda: admin.list_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group)],
                    request_timeout=self._remaining(deadline),
                ),
            )
            gathered = self._gather({call: listed}, deadline)[call]
            committed = self._committed(group, gathered.values())

        members = tuple(
            sorted((live_member(m) for m in description.members), key=lambda m: m.member_id)
        )
        state_enum = getattr(description, "state", None)
        state = _STATE_NAMES.get(state_enum.name, state_enum.name) if state_enum else "Unknown"
        topics = {tp.topic for tp in committed} | {t for m in members for t in m.topics}
        rows = self._partition_rows(group, sorted(topics, key=java_order), committed, deadline)

        owners = {tp: m for m in members for tp in m.assigned}
        partitions = []
        for tp, b, e, c, racks in rows:
            owner = owners.get(tp)
            partitions.append(
                PartitionState(
                    tp.topic,
                    tp.partition,
                    b,
                    e,
                    c,
                    owner.member_id if owner else None,
                    owner.client_id if owner else None,
                    owner.host if owner else None,
                    racks,
                )
            )
        log.debug(
            "group %s: %s, %d members, %d partitions of %d topics",
            group,
            state,
            len(members),
            len(partitions),
            len(topics),
        )
        return GroupSnapshot(group, state, members, tuple(partitions))

    def group_ids(self) -> list[str]:
        """Ids of the cluster's consumer groups (``list_consumer_groups``), sorted. Brokers
        that fail to answer while others answer are logged, not fatal."""
        from confluent_kafka import KafkaError

        deadline = self._start()
        admin = self._client()
        remaining = self._remaining(deadline)
        call = "list_consumer_groups"
        listed = self._gather(
            {
                call: self._send(
                    call, lambda: {"": admin.list_consumer_groups(request_timeout=remaining)}
                )
            },
            deadline,
        )[call][""]
        problems = list(listed.errors or ())
        if problems and not listed.valid:
            first = problems[0]
            if isinstance(first, KafkaError) and first.code() == KafkaError._TIMED_OUT:
                raise self._timed_out(call)
            what = first.str() if isinstance(first, KafkaError) else str(first)
            raise OffsetsError(f"Kafka at {self.servers}: {call} failed: {what}" + self._hint())
        for problem in problems:
            what = problem.str() if isinstance(problem, KafkaError) else str(problem)
            log.warning("listing consumer groups at %s: %s", self.servers, what)
        return sorted({g.group_id for g in listed.valid or () if g.group_id})

    def sampled(
        self,
        groups: Sequence[str],
        window: float,
        auto_offset_reset: str = "latest",
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> Iterator[tuple[GroupSnapshot, Group]]:
        """Each of ``groups`` now, as its snapshot and as a model group whose partitions carry
        produce and consume rates measured over ``window`` seconds
        (:func:`lagassign.rates.measure_rates`): every group read once, then each again once
        the window has passed since its first read (so many groups wait one window, not one
        each); the rates from the difference, the offsets and members from the second read.
        ``window`` 0: one read, no rates. A group gone by its second read is yielded as gone
        (``GroupSnapshot.exists`` false)."""
        first = [(clock(), self.snapshot(group)) for group in groups]
        for started, before in first:
            if window <= 0 or not before.exists:
                yield before, before.to_group(auto_offset_reset)
                continue
            sleep(max(window - (clock() - started), 0.0))
            # start to start: each read takes its offsets as long after it starts as the other
            apart = clock() - started
            after = self.snapshot(before.group)
            if not after.exists:
                yield after, after.to_group(auto_offset_reset)
                continue
            yield (
                after,
                measure_rates(
                    before.to_group(auto_offset_reset), after.to_group(auto_offset_reset), apart
                ),
            )

    def close(self) -> None:
        """Releases the clients (librdkafka's admin client has no close of its own; the
        consumer is closed unless a call that outlived its read still runs in it)."""
        self._admin = None
        self._drop_consumer()
        self._drop_wire()

    def __enter__(self) -> OffsetsReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the reads -------------------------------------------------------------------------------

    def _partition_rows(
        self,
        group: str,
        topics: list[str],
        committed: Mapping[TopicPartition, int] | None,
        deadline: float,
    ) -> list[tuple[TopicPartition, int, int, int | None, frozenset[str]]]:
        """(partition, log start, log end, committed offset, racks of its replicas) of every
        partition of ``topics``; ``committed`` when already read, else read here with the
        rest."""
        if not topics:
            return []
        fast = self._wire_rows(group, topics, committed, deadline)
        if fast is not None:
            return fast
        replicas, racks = self._metadata(topics, deadline)
        tps = [(topic, p) for topic in topics if topic in replicas for p in sorted(replicas[topic])]
        if not tps:
            return []
        calls: dict[str, Mapping[Any, Future[Any]]] = {}
        if committed is None:
            calls["list_consumer_group_offsets"] = self._committed_calls(group, tps, deadline)
        calls["list_offsets"] = self._list_offsets_calls(tps, deadline)
        results = self._gather(calls, deadline)
        if committed is None:
            committed = self._committed(group, results["list_consumer_group_offsets"].values())
        logs: dict[int, list[int]] = {EARLIEST: [0] * len(tps), LATEST: [0] * len(tps)}
        for share in results["list_offsets"].values():
            for spec, start, offsets, failed in share:
                if failed is not None:
                    raise self._failed(f"list_offsets failed for {failed[0]}", failed[1])
                logs[spec][start : start + len(offsets)] = offsets

        begin, end = logs[EARLIEST], logs[LATEST]
        rows = []
        for (topic, p), b, e in zip(tps, begin, end, strict=True):
            tp = TopicPartition(topic, p)
            rows.append(self._row(tp, b, e, committed.get(tp), replicas[topic][p], racks))
        return rows

    def _row(
        self,
        tp: TopicPartition,
        begin: int,
        end: int,
        committed: int | None,
        replicas: Iterable[int],
        racks: Mapping[int, str],
    ) -> tuple[TopicPartition, int, int, int | None, frozenset[str]]:
        if begin < 0 or end < begin:
            raise OffsetsError(
                f"Kafka at {self.servers}: list_offsets gave log start {begin} and log end "
                f"{end} for {tp}"
            )
        on = frozenset(racks[r] for r in replicas if r in racks) if racks else _NO_RACKS
        return (tp, begin, end, committed, on)

    def _wire_rows(
        self,
        group: str,
        topics: list[str],
        committed: Mapping[TopicPartition, int] | None,
        deadline: float,
    ) -> list[tuple[TopicPartition, int, int, int | None, frozenset[str]]] | None:
        """:meth:`_partition_rows` through Kafka's protocol (:mod:`lagassign.kafka.protocol`),
        within :data:`WIRE_SHARE` of the time left; None when that path cannot answer (the
        read then goes through librdkafka)."""
        wire = self._wire_client()
        if wire is None:
            return None
        try:
            read = wire.read(
                group, topics, committed is None, self._wire_deadline(deadline), self._check_faults
            )
        except WireUnavailable as unavailable:
            self._wire_failed(unavailable)
            return None
        with collector_paused():
            return self._wire_read_rows(read, committed)

    def _wire_read_rows(
        self, read: Read, committed: Mapping[TopicPartition, int] | None
    ) -> list[tuple[TopicPartition, int, int, int | None, frozenset[str]]]:
        layout, racks = read.layout, read.racks
        # keyed by TopicPartition or by (topic, partition), alike to a lookup
        known: Mapping[Any, int] = (read.committed or {}) if committed is None else committed
        tps, begins, ends = layout.tps, read.begins, read.ends
        if racks or min(begins, default=0) < 0 or any(map(operator.lt, ends, begins)):
            # what is left of the work per partition (the rest of this method runs at C speed)
            replicas, row = layout.replicas, self._row
            return [
                row(tp, b, e, known.get(tp), replicas[tp], racks)
                for tp, b, e in zip(tps, begins, ends, strict=True)
            ]
        # topics in the order asked, partitions in number order (the layout's); no racks
        return list(zip(tps, begins, ends, map(known.get, tps), repeat(_NO_RACKS), strict=False))

    def _metadata(
        self, topics: list[str], deadline: float
    ) -> tuple[dict[str, dict[int, list[int]]], dict[int, str]]:
        """Replica broker ids of every partition of ``topics`` that exist, and the rack of
        every broker that has one.

        A metadata request per topic for up to :data:`ALONE_TOPICS` topics (on :data:`THREADS`
        threads), else one of all the cluster's topics and then one of each topic missing from
        it, to tell a topic that does not exist from one the client may not see.
        ``describe_cluster`` (the racks) goes through the admin client at the same time, which
        also tells a cluster that cannot be reached or refuses the credentials at once
        (:meth:`_check_faults`)."""
        from confluent_kafka import KafkaError, KafkaException

        consumer = self._consumer_client()
        call = "metadata"

        def listing(topic: str | None) -> Any:
            try:
                return consumer.list_topics(topic, timeout=self._remaining(deadline))
            except KafkaException as e:
                if _kafka_error(e).code() != KafkaError._TRANSPORT:
                    raise
                # librdkafka's metadata call says "transport failure" when no broker could be
                # asked within its timeout: a timeout (a refused connection is a fault first)
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT)) from None

        def alone(some: Sequence[str]) -> dict[str, Any]:
            return {t: listing(t).topics.get(t) for t in some}

        admin = self._client()
        remaining = self._remaining(deadline)
        few = len(topics) <= ALONE_TOPICS
        threads = min(THREADS, len(topics))
        listed = self._gather(
            {
                call: {i: self._in_thread(alone, topics[i::threads]) for i in range(threads)}
                if few
                else {"": self._in_thread(listing, None)},
                "describe_cluster": self._send(
                    "describe_cluster",
                    lambda: {"": admin.describe_cluster(request_timeout=remaining)},
                ),
            },
            deadline,
        )
        racks = {n.id: n.rack for n in listed["describe_cluster"][""].nodes if n.rack}
        if few:
            found = {t: meta for share in listed[call].values() for t, meta in share.items()}
        else:
            found = dict(listed[call][""].topics)
            missing = [t for t in topics if t not in found]
            if missing:
                found |= self._gather({call: {"": self._in_thread(alone, missing)}}, deadline)[
                    call
                ][""]
        replicas: dict[str, dict[int, list[int]]] = {}
        for topic in topics:
            meta = found.get(topic)
            error = getattr(meta, "error", None)
            unknown = (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC)
            if meta is None or (error is not None and error.code() in unknown):
                log.warning("topic %s does not exist; left out", topic)
                continue
            if error is not None and not meta.partitions:
                raise self._failed(f"metadata failed for {topic}", error)
            replicas[topic] = {p.id: p.replicas for p in meta.partitions.values()}
        return replicas, racks

    def _list_offsets_calls(
        self, tps: Sequence[tuple[str, int]], deadline: float
    ) -> dict[int, Future[Any]]:
        """Log start and log end of ``tps``: ``offsets_for_times`` of :data:`CHUNK` partitions
        at a time with the timestamps :data:`EARLIEST` and :data:`LATEST`, shared out among
        :data:`THREADS` threads. Each thread's answer: for each of its chunks, (timestamp,
        where the chunk starts in ``tps``, its offsets in order, None or the first failed
        partition and its error); librdkafka answers in the order asked."""
        from confluent_kafka import KafkaException
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        consumer = self._consumer_client()
        jobs = [(spec, i) for i in range(0, len(tps), CHUNK) for spec in (EARLIEST, LATEST)]

        def ask(chunk: Sequence[tuple[str, int]], spec: int) -> tuple[list[int], Any]:
            request = [KafkaTopicPartition(t, p, spec) for t, p in chunk]
            try:
                listed = consumer.offsets_for_times(request, self._remaining(deadline))
            except KafkaException as e:
                # librdkafka fails the whole call with the first partition's error, leaders
                # moving included: the same error as a partition's, asked again the same way
                error = _kafka_error(e)
                if not _retriable(error):
                    raise
                return [], (f"{chunk[0][0]}-{chunk[0][1]} or another of its call", error)
            failed = next(
                (
                    (f"{t}-{p}", k.error)
                    for (t, p), k in zip(chunk, listed, strict=True)
                    if k.error is not None
                ),
                None,
            )
            return [k.offset for k in listed], failed

        def work(share: list[tuple[int, int]]) -> list[tuple[int, int, list[int], Any]]:
            out = []
            for spec, start in share:
                chunk = tps[start : start + CHUNK]
                offsets, failed = ask(chunk, spec)
                backoff = RETRY_BACKOFF_S
                # a partition whose leader is moving or not yet elected (a topic just created,
                # a broker restarting) answers a retriable error: ask again while time is left,
                # as Kafka's own clients do, rather than fail the whole read
                while failed is not None and _retriable(failed[1]):
                    if self._remaining(deadline) <= backoff:
                        break
                    time.sleep(backoff)
                    backoff = min(2 * backoff, MAX_RETRY_BACKOFF_S)
                    offsets, failed = ask(chunk, spec)
                out.append((spec, start, offsets, failed))
            return out

        threads = min(THREADS, len(jobs))
        return {i: self._in_thread(work, jobs[i::threads]) for i in range(threads)}

    def _committed_calls(
        self, group: str, tps: Sequence[tuple[str, int]], deadline: float
    ) -> dict[int, Future[Any]]:
        from confluent_kafka import ConsumerGroupTopicPartitions
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        admin = self._client()
        remaining = self._remaining(deadline)

        def send(start: int) -> Callable[[], Mapping[str, Future[Any]]]:
            chunk = tps[start : start + COMMITTED_CHUNK]
            request = ConsumerGroupTopicPartitions(
                group, [KafkaTopicPartition(t, p) for t, p in chunk]
            )
            return lambda: admin.list_consumer_group_offsets([request], request_timeout=remaining)

        return {
            i: self._send("list_consumer_group_offsets", send(i))[group]
            for i in range(0, len(tps), COMMITTED_CHUNK)
        }

    def _committed(self, group: str, listed: Iterable[Any]) -> dict[TopicPartition, int]:
        committed: dict[TopicPartition, int] = {}
        for answer in listed:
            for ktp in answer.topic_partitions or ():
                tp = TopicPartition(ktp.topic, ktp.partition)
                if ktp.error is not None:
                    log.warning(
                        "group %s: no committed offset for %s: %s", group, tp, ktp.error.str()
                    )
                    continue
                if ktp.offset >= 0:
                    committed[tp] = ktp.offset
        return committed

    # -- clients and waiting ---------------------------------------------------------------------

    def _create(self, kind: Callable[[dict[str, Any]], _C], config: dict[str, Any]) -> _C:
        from confluent_kafka import KafkaException

        try:
            return kind(config)
        except (KafkaException, ValueError) as e:
            raise ClientConfigError(
                f"Kafka client for {self.servers}: {_kafka_error(e).str()}"
            ) from None

    def _client(self) -> AdminClient:
        if self._admin is None:
            raise OffsetsError(f"Kafka at {self.servers}: the reader is closed")
        return self._admin

    def _wire_client(self) -> WireClient | None:
        """The protocol path's client, created on first use; None where it cannot be used."""
        self._client()  # a closed reader says so
        with self._lock:
            if self._wire is None and self._wire_settings is not None:
                try:
                    self._wire = WireClient(self._wire_settings)
                except (ImportError, AttributeError, TypeError, ValueError) as e:
                    log.debug("the protocol path is not available: %s", e)
                    self._wire_settings = None
            return self._wire

    def _wire_deadline(self, deadline: float) -> float:
        now = time.monotonic()
        return now + WIRE_SHARE * max(deadline - now, 0.0)

    def _wire_failed(self, e: WireUnavailable) -> None:
        log.debug("Kafka at %s: through librdkafka: %s", self.servers, e)

    def _drop_wire(self) -> None:
        with self._lock:
            wire, self._wire = self._wire, None
        if wire is not None:
            wire.close()

    def _consumer_client(self) -> Consumer:
        """The reader's consumer, created on first use: it never subscribes, joins or
        commits; it reads metadata and offsets, and sees the log end as ``kafka-consumer-groups``
        does (``read_uncommitted``: the high watermark)."""
        from confluent_kafka import Consumer

        self._client()  # a closed reader says so
        with self._lock:
            if self._consumer is None:
                self._consumer = self._create(
                    Consumer,
                    {
                        **self._properties,
                        "logger": self._client_log,
                        "error_cb": self._client_log.error,
                        "group.id": _CONSUMER_GROUP,
                        "enable.auto.commit": False,
                        "isolation.level": "read_uncommitted",
                    },
                )
            return self._consumer

    def _poll(self) -> None:
        """Hands librdkafka's queued log lines and errors to :class:`ClientLog`: the admin
        client's, and the consumer's while none of its calls runs (polling it waits for them;
        the admin client, in flight beside them, sees the same faults)."""
        if self._admin is not None:
            self._admin.poll(0)
        consumer = self._consumer
        if consumer is not None and not self._busy:
            consumer.poll(0)

    def _connect(self) -> None:
        """New clients (the admin client now, the consumer on first use) and their log."""
        from confluent_kafka.admin import AdminClient

        self._client_log = ClientLog()
        self._admin = self._create(
            AdminClient,
            {
                **self._properties,
                "logger": self._client_log,
                "error_cb": self._client_log.error,
            },
        )
        self._drop_consumer()
        self._drop_wire()
        #: no read has used these clients yet
        self._fresh = True

    def _drop_consumer(self) -> None:
        with self._lock:
            consumer, self._consumer = self._consumer, None
            busy = self._busy
        if consumer is not None and not busy:
            consumer.close()

    def _start(self) -> float:
        """The deadline of a read starting now.

        A fault the clients reported (every broker down, credentials refused) stays with
        them: librdkafka reports it once, when it happens, maybe before the first read (the
        admin client connects when it is created). So a read after a fault starts on new
        clients, which report it again if it lasts."""
        self._client()
        self._poll()
        if not self._fresh:
            if self._client_log.fault is not None:
                self._connect()
            else:
                self._client_log.last_problem = None  # of an earlier read
        self._fresh = False
        return time.monotonic() + self.timeout

    def _send(
        self, call: str, send: Callable[[], Mapping[Any, Future[Any]]]
    ) -> Mapping[Any, Future[Any]]:
        """Sends a request; librdkafka refusing it on the spot is an :class:`OffsetsError` too."""
        from confluent_kafka import KafkaException

        try:
            return send()
        except KafkaException as e:
            raise self._failed(f"{call} failed", _kafka_error(e)) from None

    def _in_thread(self, call: Callable[..., _T], *args: Any) -> Future[_T]:
        """``call(*args)`` in a daemon thread: a consumer call blocks (the GIL released) and a read
        that fails fast must not wait for it, nor must the interpreter at exit."""
        future: Future[_T] = Future()

        def run() -> None:
            try:
                future.set_result(call(*args))
            except BaseException as exc:  # handed to the waiting read
                future.set_exception(exc)
            finally:
                with self._lock:
                    self._busy -= 1

        with self._lock:
            self._busy += 1
        threading.Thread(target=run, name="lagassign-offsets", daemon=True).start()
        return future

    def _remaining(self, deadline: float) -> float:
        # librdkafka needs a positive request timeout; a spent deadline fails in _gather
        return max(deadline - time.monotonic(), 0.001)

    def _gather(
        self, calls: Mapping[str, Mapping[Any, Future[Any]]], deadline: float
    ) -> dict[str, dict[Any, Any]]:
        """Waits for every future of every call until ``deadline``, failing at once when the
        clients report a fault (:class:`ClientLog`); returns the results per call and key. A
        topic that does not exist gives None (and a warning); any other failure raises
        :class:`OffsetsError`."""
        from confluent_kafka import KafkaError, KafkaException

        pending = {f for futures in calls.values() for f in futures.values()}
        while True:
            self._check_faults()
            left = deadline - time.monotonic()
            if not pending or left <= 0:
                break
            _, pending = concurrent.futures.wait(pending, timeout=min(left, _POLL_S))
        if pending:
            late = [call for call, fs in calls.items() if any(f in pending for f in fs.values())]
            raise self._timed_out(late[0])
        results: dict[str, dict[Any, Any]] = {}
        for call, futures in calls.items():
            results[call] = {}
            for key, future in futures.items():
                try:
                    results[call][key] = future.result(timeout=0)
                except KafkaException as e:
                    err = _kafka_error(e)
                    if err.code() in (KafkaError._TIMED_OUT, KafkaError._TIMED_OUT_QUEUE):
                        raise self._timed_out(call) from None
                    what = f"{call} failed" + (f" for {_key_name(key)}" if key else "")
                    raise self._failed(what, err) from None
        return results

    def _check_faults(self) -> None:
        """Raises the fault the clients reported, if any. Every broker down: the broker's own
        error (a refused connection, a name that does not resolve) may be queued just behind,
        so it is waited for a moment."""
        self._poll()
        client_log = self._client_log
        if client_log.all_down and client_log.last_problem is None:
            for _ in range(_CAUSE_POLLS):
                self._poll()
                if client_log.last_problem is not None:
                    break
                time.sleep(_POLL_S)
        fault = client_log.fault
        if fault is not None:
            raise OffsetsError(f"Kafka at {self.servers}: {fault}")

    def _hint(self) -> str:
        self._poll()
        problem = self._client_log.last_problem
        return f" (last client error: {problem})" if problem else ""

    def _timed_out(self, call: str) -> OffsetsError:
        return OffsetsError(
            f"Kafka at {self.servers}: no answer to {call} within the {self.timeout:g} s timeout"
            + self._hint()
        )

    def _failed(self, what: str, err: KafkaError) -> OffsetsError:
        return OffsetsError(f"Kafka at {self.servers}: {what}: {err.str()}" + self._hint())


def _retriable(error: KafkaError) -> bool:
    """Whether a partition's ListOffsets error passes by itself (Kafka's clients retry these:
    their exceptions are RetriableException); librdkafka does not mark a partition's error
    retriable, so the codes are named here."""
    from confluent_kafka import KafkaError

    return bool(error.retriable()) or error.code() in (
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError.REQUEST_TIMED_OUT,
    )


def _kafka_error(e: Exception) -> KafkaError:
    from confluent_kafka import KafkaError

    arg = e.args[0] if e.args else None
    if isinstance(arg, KafkaError):
        return arg
    return KafkaError(KafkaError._FAIL, str(e))


def _key_name(key: Any) -> str:
    if isinstance(key, str):
        return key
    topic, partition = getattr(key, "topic", None), getattr(key, "partition", None)
    if topic is not None and partition is not None:
        return f"{topic}-{partition}"
    return str(key)


def live_member(m: Any) -> LiveMember:
    assigned = tuple(
        sorted(
            (TopicPartition(tp.topic, tp.partition) for tp in m.assignment.topic_partitions),
            key=TopicPartition.sort_key,
        )
    )
    target = m.target_assignment.topic_partitions if m.target_assignment else []
    topics = frozenset(tp.topic for tp in assigned) | frozenset(tp.topic for tp in target)
    return LiveMember(
        member_id=m.member_id,
        client_id=m.client_id,
        host=m.host,
        instance_id=m.group_instance_id or None,
        topics=topics,
        assigned=assigned,
    )
