"""Live offsets and group state from a Kafka cluster, through confluent-kafka's ``AdminClient``.

This is an edge: it reads what the cluster knows about a consumer group (committed offsets, the
log start and log end of every partition, replica racks, the members and what they own) and
hands it to the core as model objects. It computes no lag: :meth:`GroupSnapshot.to_group` gives
a :class:`~lagassign.model.Group` whose partitions carry :class:`~lagassign.model.Offsets`, and
:mod:`lagassign.lag_rules` derives lag from them.

Every read has one deadline (``timeout`` seconds from its start). Requests are batched (one
``describe_topics`` for all topics, one ``list_offsets`` per offset spec for all partitions, one
``list_consumer_group_offsets`` for the group), independent requests are in flight together, and
each wait gets what is left of the deadline. Whatever goes wrong becomes one
:class:`OffsetsError` whose message names the bootstrap servers, the call and the timeout.

Importing this module does not import confluent-kafka; creating an :class:`OffsetsReader` does.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from lagassign.java_ordering import java_order
from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition
from lagassign.rates import measure_rates

if TYPE_CHECKING:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AdminClient

log = logging.getLogger(__name__)
#: librdkafka's own log lines (connection failures, retries), always at DEBUG
client_log = logging.getLogger("lagassign.kafka.librdkafka")

Future = concurrent.futures.Future


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


class ClientLog:
    """librdkafka's ``logger``: forwards to :data:`client_log` at DEBUG (so nothing reaches
    stderr on its own) and keeps the last warning or error for :class:`OffsetsError` messages."""

    def __init__(self) -> None:
        self.last_problem: str | None = None

    def log(self, level: int, fmt: str, *args: Any) -> None:
        message = fmt % args if args else fmt
        client_log.debug(message)
        if level >= logging.WARNING and args:
            text = _THREAD_PREFIX.sub("", str(args[-1])).replace("\n", " ").strip()
            self.last_problem = text or None


@dataclass(frozen=True, slots=True)
class _Described:
    """A topic's partitions, each with its replica racks."""

    partitions: dict[int, frozenset[str]]


class OffsetsReader:
    """Reads offsets and group state from a cluster.

    ``config`` holds librdkafka client properties: ``bootstrap.servers``, ``security.protocol``,
    ``sasl.*``, ``ssl.*`` (see :mod:`lagassign.kafka.config` for Java properties files).
    ``timeout`` bounds each read (:meth:`offsets`, :meth:`snapshot`) as a whole.
    """

    def __init__(self, config: Mapping[str, str], timeout: float = 10.0) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.timeout = float(timeout)
        self.servers = str(config.get("bootstrap.servers", "")).strip() or "(no bootstrap.servers)"
        self._client_log = ClientLog()
        try:
            from confluent_kafka import KafkaException
            from confluent_kafka.admin import AdminClient
        except ImportError as e:  # pragma: no cover - confluent-kafka is a dev dependency
            raise OffsetsError(
                f"reading from Kafka needs confluent-kafka (pip install confluent-kafka): {e}"
            ) from None
        conf: dict[str, str | int | float | bool] = {"client.id": "lagassign"}
        conf.update(config)
        try:
            self._admin: AdminClient | None = AdminClient(conf, logger=self._client_log)
        except KafkaException as e:
            raise ClientConfigError(
                f"Kafka client for {self.servers}: {_kafka_error(e).str()}"
            ) from None

    # -- public ----------------------------------------------------------------------------------

    def offsets(self, group: str, topics: Iterable[str]) -> dict[TopicPartition, Offsets]:
        """Log start, log end and ``group``'s committed offset of every partition of ``topics``.

        Topics that do not exist are left out (and logged).
        """
        deadline = self._start()
        wanted = sorted(set(topics), key=java_order)
        if not wanted:
            return {}
        states = self._partition_states(group, wanted, None, deadline)
        return {s.tp: s.offsets for s in states}

    def snapshot(self, group: str) -> GroupSnapshot:
        """The group's state and members, and the offsets of every partition of every topic it
        has committed offsets for or is assigned."""
        from confluent_kafka import ConsumerGroupTopicPartitions

        deadline = self._start()
        admin = self._client()
        remaining = self._remaining(deadline)
        described = self._send(
            "describe_consumer_groups",
            lambda: admin.describe_consumer_groups([group], request_timeout=remaining),
        )
        listed = self._send(
            "list_consumer_group_offsets",
            lambda: admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group)], request_timeout=remaining
            ),
        )
        results = self._gather(
            {"describe_consumer_groups": described, "list_consumer_group_offsets": listed},
            deadline,
        )
        description = results["describe_consumer_groups"][group]
        committed = self._committed(group, results["list_consumer_group_offsets"][group])

        members = tuple(
            sorted((_live_member(m) for m in description.members), key=lambda m: m.member_id)
        )
        state_enum = getattr(description, "state", None)
        state = _STATE_NAMES.get(state_enum.name, state_enum.name) if state_enum else "Unknown"
        topics = {tp.topic for tp in committed} | {t for m in members for t in m.topics}
        states = self._partition_states(group, sorted(topics, key=java_order), committed, deadline)

        owners = {tp: m for m in members for tp in m.assigned}
        partitions = []
        for s in states:
            owner = owners.get(s.tp)
            partitions.append(
                PartitionState(
                    s.topic,
                    s.partition,
                    s.begin,
                    s.end,
                    s.committed,
                    owner.member_id if owner else None,
                    owner.client_id if owner else None,
                    owner.host if owner else None,
                    s.racks,
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
        """Releases the client (librdkafka's admin client has no close of its own)."""
        self._admin = None

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

    def _partition_states(
        self,
        group: str,
        topics: list[str],
        committed: Mapping[TopicPartition, int] | None,
        deadline: float,
    ) -> list[PartitionState]:
        """Offsets and racks of every partition of ``topics``; ``committed`` when already read,
        else read here with the rest."""
        if not topics:
            return []
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicCollection
        from confluent_kafka import TopicPartition as KafkaTopicPartition
        from confluent_kafka.admin import OffsetSpec  # type: ignore[attr-defined]

        admin = self._client()
        remaining = self._remaining(deadline)
        futures = self._send(
            "describe_topics",
            lambda: admin.describe_topics(TopicCollection(topics), request_timeout=remaining),
        )
        described = self._described(self._gather({"describe_topics": futures}, deadline))
        tps = [
            TopicPartition(topic, p)
            for topic in topics
            if topic in described
            for p in sorted(described[topic].partitions)
        ]
        if not tps:
            return []

        kafka_tps = [KafkaTopicPartition(tp.topic, tp.partition) for tp in tps]
        earliest: OffsetSpec = OffsetSpec.earliest()  # type: ignore[no-untyped-call]
        latest: OffsetSpec = OffsetSpec.latest()  # type: ignore[no-untyped-call]
        remaining = self._remaining(deadline)
        calls: dict[str, Mapping[Any, Future[Any]]] = {
            "list_offsets(earliest)": self._send(
                "list_offsets(earliest)",
                lambda: admin.list_offsets(
                    dict.fromkeys(kafka_tps, earliest), request_timeout=remaining
                ),
            ),
            "list_offsets(latest)": self._send(
                "list_offsets(latest)",
                lambda: admin.list_offsets(
                    dict.fromkeys(kafka_tps, latest), request_timeout=remaining
                ),
            ),
        }
        if committed is None:
            request = ConsumerGroupTopicPartitions(
                group, [KafkaTopicPartition(tp.topic, tp.partition) for tp in tps]
            )
            calls["list_consumer_group_offsets"] = self._send(
                "list_consumer_group_offsets",
                lambda: admin.list_consumer_group_offsets([request], request_timeout=remaining),
            )
        results = self._gather(calls, deadline)
        begin = _offsets_by_tp(results["list_offsets(earliest)"])
        end = _offsets_by_tp(results["list_offsets(latest)"])
        if committed is None:
            committed = self._committed(group, results["list_consumer_group_offsets"][group])

        states = []
        for tp in tps:
            b, e = begin[tp], end[tp]
            if b < 0 or e < b:
                raise OffsetsError(
                    f"Kafka at {self.servers}: list_offsets gave log start {b} and log end {e} "
                    f"for {tp}"
                )
            states.append(
                PartitionState(
                    tp.topic,
                    tp.partition,
                    b,
                    e,
                    committed.get(tp),
                    racks=described[tp.topic].partitions[tp.partition],
                )
            )
        return states

    def _described(self, results: Mapping[str, Mapping[str, Any]]) -> dict[str, _Described]:
        described: dict[str, _Described] = {}
        for topic, description in results["describe_topics"].items():
            if description is None:
                continue
            described[topic] = _Described(
                {
                    p.id: frozenset(n.rack for n in p.replicas if n.rack)
                    for p in description.partitions
                }
            )
        return described

    def _committed(self, group: str, listed: Any) -> dict[TopicPartition, int]:
        committed: dict[TopicPartition, int] = {}
        for ktp in listed.topic_partitions or ():
            tp = TopicPartition(ktp.topic, ktp.partition)
            if ktp.error is not None:
                log.warning("group %s: no committed offset for %s: %s", group, tp, ktp.error.str())
                continue
            if ktp.offset >= 0:
                committed[tp] = ktp.offset
        return committed

    # -- waiting ---------------------------------------------------------------------------------

    def _client(self) -> AdminClient:
        if self._admin is None:
            raise OffsetsError(f"Kafka at {self.servers}: the reader is closed")
        return self._admin

    def _start(self) -> float:
        """The deadline of a read starting now; forgets the client's problems of earlier reads."""
        if self._admin is not None:
            self._admin.poll(0)
        self._client_log.last_problem = None
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

    def _remaining(self, deadline: float) -> float:
        # librdkafka needs a positive request timeout; a spent deadline fails in _gather
        return max(deadline - time.monotonic(), 0.001)

    def _gather(
        self, calls: Mapping[str, Mapping[Any, Future[Any]]], deadline: float
    ) -> dict[str, dict[Any, Any]]:
        """Waits for every future of every call until ``deadline``; returns the results per
        call and key. A topic that does not exist gives None (and a warning); any other
        failure raises :class:`OffsetsError`."""
        from confluent_kafka import KafkaError, KafkaException

        everything = [f for futures in calls.values() for f in futures.values()]
        _, pending = concurrent.futures.wait(everything, timeout=deadline - time.monotonic())
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
                    if call == "describe_topics" and err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        log.warning("topic %s does not exist; left out", key)
                        results[call][key] = None
                        continue
                    if err.code() in (KafkaError._TIMED_OUT, KafkaError._TIMED_OUT_QUEUE):
                        raise self._timed_out(call) from None
                    what = f"{call} failed" + (f" for {_key_name(key)}" if key else "")
                    raise self._failed(what, err) from None
        return results

    def _hint(self) -> str:
        assert self._admin is not None
        self._admin.poll(0)  # hands librdkafka's queued log lines to ClientLog
        problem = self._client_log.last_problem
        return f" (last client error: {problem})" if problem else ""

    def _timed_out(self, call: str) -> OffsetsError:
        return OffsetsError(
            f"Kafka at {self.servers}: no answer to {call} within the {self.timeout:g} s timeout"
            + self._hint()
        )

    def _failed(self, what: str, err: KafkaError) -> OffsetsError:
        return OffsetsError(f"Kafka at {self.servers}: {what}: {err.str()}" + self._hint())


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


def _offsets_by_tp(results: Mapping[Any, Any]) -> dict[TopicPartition, int]:
    return {TopicPartition(k.topic, k.partition): int(v.offset) for k, v in results.items()}


def _live_member(m: Any) -> LiveMember:
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
