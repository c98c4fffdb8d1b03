"""The offsets reader's fast path: Kafka's protocol requests themselves, one per broker.

:class:`~lagassign.kafka.offsets.OffsetsReader` reads through librdkafka, which gives its
errors and its connection settings their meaning, but at 10,000 partitions librdkafka's calls
cost more CPU in this process than the broker spends answering (docs/kafka.md, "How the
offsets are read"). So the reader first asks here: kafka-python's connection manager
(``kafka.net``: connections, API versions, TLS and SASL) and its protocol classes carry one
``Metadata`` request for the topics, then for each partition leader one ``ListOffsets``
request with timestamp -2 (log start) and one with -1 (log end), and one ``OffsetFetch`` to the
group's coordinator, all in flight together on connections the reader keeps. A kept reader
sends the ListOffsets requests of its last read of the same topics beside the Metadata request
and uses their answers only if the new metadata names the same partitions, leaders and replicas
(:class:`Layout`), so the brokers answer while the metadata is decoded.

This path answers only when everything answers cleanly. Anything else (a topic that does not
exist, a leader moving, an error code, a broker that does not answer in time, settings
kafka-python cannot mean exactly as librdkafka does) raises :class:`WireUnavailable`, and the
reader reads again through librdkafka, which retries, reports and words its errors as it
always did. :func:`wire_settings` maps the librdkafka properties that kafka-python has exact
names for; any other property keeps the reader on librdkafka.

Importing this module imports neither kafka-python nor confluent-kafka.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lagassign.collector import collector_paused
from lagassign.model import TopicPartition

log = logging.getLogger(__name__)

#: librdkafka property -> kafka-python connection setting, for values that mean the same
_SAME = {
    "bootstrap.servers": "bootstrap_servers",
    "client.id": "client_id",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.crl.location": "ssl_crlfile",
    "ssl.cipher.suites": "ssl_ciphers",
}
#: SASL mechanisms kafka-python speaks without further objects (GSSAPI needs the gssapi
#: package, OAUTHBEARER a token provider): others stay on librdkafka
_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: Kafka's ListOffsets timestamps for the log start and the log end (high watermark)
EARLIEST, LATEST = -2, -1
#: the lowest versions that carry all that is read here: kafka-python encodes and decodes
#: every field of every partition in Python, so each field a version adds per partition costs
#: CPU at 10,000 partitions (the flexible versions of KIP-482, with their tagged fields, a third
#: more). ListOffsets v2-3: the isolation level, no leader epochs (v4+); Metadata v4: the first
#: that can refuse to create topics (and the lowest Kafka 4 answers), no leader epoch (v7+)
#: nor offline replicas (v5+)
_LIST_OFFSETS_MIN_VERSION, _LIST_OFFSETS_VERSION = 2, 3
_METADATA_VERSION = 4
#: OffsetFetch with a list of groups (v8, Kafka 3.0); FindCoordinator of several keys (v4)
_OFFSET_FETCH_VERSION, _FIND_COORDINATOR_VERSION = 8, 4

#: the largest answer a connection takes, in bytes: librdkafka's default
#: (``receive.message.max.bytes``), which the librdkafka path reads with. kafka-python's own
#: default, 1,000,000, is below the Metadata answer of 50,000 partitions (1,302,570 bytes on 6
#: brokers): every read of that size failed over to librdkafka ("Invalid frame length")
RECEIVE_MESSAGE_MAX_BYTES = 100_000_000

#: seconds between fault checks while a read waits
_CHECK_S = 0.02
#: layouts a client keeps for its next reads (one per set of topics read)
_KEPT_LAYOUTS = 64


class WireUnavailable(Exception):
    """The fast path cannot answer this read; the reader asks librdkafka instead."""


class ConnectionLost(WireUnavailable):
    """A connection closed or broken under a request (a broker closes one idle for its
    ``connections.max.idle.ms``, 10 minutes by default; the reader notices at its next read)."""


def wire_settings(config: Mapping[str, str]) -> dict[str, Any] | None:
    """kafka-python connection settings meaning exactly what the librdkafka ``config`` means,
    or None when some property has no exact kafka-python meaning (the reader then stays on
    librdkafka)."""
    settings: dict[str, Any] = {}
    for key, value in config.items():
        if key in _SAME:
            settings[_SAME[key]] = value
        elif key == "security.protocol":
            if value.upper() not in _PROTOCOLS:
                return None
            settings["security_protocol"] = value.upper()
        elif key in ("sasl.mechanism", "sasl.mechanisms"):
            if value.upper() not in _MECHANISMS:
                return None
            settings["sasl_mechanism"] = value.upper()
        elif key == "ssl.endpoint.identification.algorithm":
            if value.lower() not in ("https", "none"):
                return None
            settings["ssl_check_hostname"] = value.lower() == "https"
        elif key == "receive.message.max.bytes":
            try:
                settings["receive_message_max_bytes"] = int(value)
            except ValueError:
                return None  # librdkafka words the error
        else:
            return None
    if "bootstrap_servers" not in settings:
        return None
    if settings.get("security_protocol", "PLAINTEXT").startswith("SASL"):
        settings.setdefault("sasl_mechanism", "GSSAPI")  # librdkafka's default
        if settings["sasl_mechanism"] not in _MECHANISMS:
            return None
    return settings


def _topics(
    response: Any,
) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], list[int]], dict[int, str]]:
    """Leader and replicas of every partition in a Metadata answer, racks of its brokers."""
    leaders: dict[tuple[str, int], int] = {}
    replicas: dict[tuple[str, int], list[int]] = {}
    for t in response.topics:
        if t.error_code:
            # a topic that does not exist is left out with a warning by librdkafka's path
            raise WireUnavailable(f"Metadata: error {t.error_code} for {t.name}")
        name = t.name
        for part in t.partitions:
            if part.error_code or part.leader_id < 0:
                raise WireUnavailable(f"Metadata: no leader for {name}-{part.partition_index}")
            leaders[(name, part.partition_index)] = part.leader_id
            replicas[(name, part.partition_index)] = part.replica_nodes
    return leaders, replicas, {b.node_id: b.rack for b in response.brokers if b.rack}


@dataclass(frozen=True, slots=True)
class Layout:
    """The partitions of some topics, their leaders and replicas, as one Metadata answer gave
    them, with the ListOffsets requests for them; a client keeps it for its next read of the
    same topics.

    The rule that keeps a read exact: every read asks for the metadata again. Its ListOffsets
    requests leave at once, to the leaders of the kept layout, and the metadata is decoded
    while the brokers answer them; their answers count only if the new metadata names exactly
    the kept partitions, leaders and replicas (equal dictionaries). Otherwise (a topic grew,
    a leader moved, a replica was reassigned, a topic was deleted and made again with other
    partitions) the layout is made again from the new metadata and its requests are sent,
    the first answers left unread. A leader that moves between the metadata and the
    ListOffsets answer (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION or any other error
    code) makes the read :class:`WireUnavailable`, and the reader reads again through
    librdkafka, as when nothing was kept."""

    leaders: dict[tuple[str, int], int]
    replicas: dict[tuple[str, int], list[int]]
    #: every partition, topics in the order asked, partitions in number order
    tps: list[TopicPartition]
    #: (topic, partition) -> its place in ``tps``
    index: dict[tuple[str, int], int]
    #: (leader, timestamp, ListOffsets request) for each leader and each of the two timestamps
    requests: list[tuple[int, int, Any]]

    @classmethod
    def of(
        cls,
        topics: Sequence[str],
        leaders: dict[tuple[str, int], int],
        replicas: dict[tuple[str, int], list[int]],
    ) -> Layout:
        from kafka.protocol.consumer import ListOffsetsRequest  # type: ignore[import-untyped]

        numbers: dict[str, list[int]] = {t: [] for t in topics}
        for t, p in leaders:
            numbers[t].append(p)
        tps = [TopicPartition(t, p) for t in topics for p in sorted(numbers[t])]
        by_leader: dict[int, dict[str, list[int]]] = {}
        for tp in tps:
            by_leader.setdefault(leaders[tp], {}).setdefault(tp.topic, []).append(tp.partition)
        topic_class = ListOffsetsRequest.ListOffsetsTopic
        partition_class = topic_class.ListOffsetsPartition
        requests = [
            (
                leader,
                spec,
                ListOffsetsRequest(
                    replica_id=-1,
                    isolation_level=0,  # read_uncommitted: the log end is the high watermark
                    topics=[
                        topic_class(
                            name=t,
                            partitions=[
                                partition_class(partition_index=p, timestamp=spec) for p in ps
                            ],
                        )
                        for t, ps in asked.items()
                    ],
                    min_version=_LIST_OFFSETS_MIN_VERSION,
                    max_version=_LIST_OFFSETS_VERSION,
                ),
            )
            for leader, asked in by_leader.items()
            for spec in (EARLIEST, LATEST)
        ]
        return cls(leaders, replicas, tps, {tp: i for i, tp in enumerate(tps)}, requests)


@dataclass(frozen=True, slots=True)
class Read:
    """One read's answers, in the order of its layout's ``tps``."""

    layout: Layout
    begins: list[int]
    ends: list[int]
    #: the group's committed offsets (of any topic), when asked
    committed: dict[tuple[str, int], int] | None
    #: rack of each broker that has one
    racks: dict[int, str]


def _shut(managers: Sequence[Any], net: Any) -> None:
    for manager in managers:
        manager.close()
    net.close()


class WireClient:
    """kafka-python's connection manager and network selector, kept for many reads.

    The thread that reads drives the selector itself (a second thread would cost a hand-over
    of the GIL at every answer, which a loaded machine makes slow), one read at a time: a read
    that finds another still running (one that outlived its deadline) is
    :class:`WireUnavailable`. While it waits, it calls ``check`` every few milliseconds (the
    reader's fault check, which raises the cause librdkafka reported). The selector is this
    client's own, so its warning about a step longer than 0.1 s (meant for consumers that share
    their loop) is off: a slow step delays only this read."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        from kafka.net.manager import KafkaConnectionManager  # type: ignore[import-untyped]
        from kafka.net.selector import NetworkSelector  # type: ignore[import-untyped]

        client_id = settings.get("client_id", "lagassign")
        self._net = NetworkSelector(client_id=client_id, slow_task_threshold_secs=None)
        config = {
            "client_id": client_id,
            "receive_message_max_bytes": RECEIVE_MESSAGE_MAX_BYTES,
            **settings,
            "allow_auto_create_topics": False,
        }
        #: two sets of connections: a broker answers the requests of one connection one at a
        #: time, so the log start and the log end requests go on a connection each
        self._managers = [KafkaConnectionManager(self._net, **config) for _ in (EARLIEST, LATEST)]
        self._manager = self._managers[0]
        self._lock = threading.Lock()
        # closed at the latest when collected or at exit (a kept reader is rarely closed):
        # kafka-python's metadata loop logs an error when its manager goes first
        self._finalizer = weakref.finalize(self, _shut, self._managers, self._net)
        self._coordinators: dict[str, int] = {}
        self._layouts: dict[tuple[str, ...], Layout] = {}
        self._closed = False
        #: answers read so far (a read that lost a connection after one is not read again)
        self._answered = 0

    # -- public ----------------------------------------------------------------------------

    def read(
        self,
        group: str,
        topics: Sequence[str],
        committed: bool,
        deadline: float,
        check: Callable[[], None],
    ) -> Read:
        """Log start, log end, committed offset (when ``committed``, else None) and replicas
        of every partition of ``topics``; the racks of the brokers.

        Each request is a task of its own on the selector; requests are built and answers read
        here, between the steps that send and receive. Every read asks for the metadata; the
        ListOffsets requests go at once to the leaders of the last read of the same topics (its
        :class:`Layout`), and their answers count only if this read's metadata names exactly
        those partitions, leaders and replicas; else they are asked again of the leaders it
        names (see :class:`Layout`).

        A read whose connections turn out closed or broken before anything was answered
        (:class:`ConnectionLost`: the broker closes connections idle for its
        ``connections.max.idle.ms``, which this client notices only when it reads again) is
        made once more, on the new connections kafka-python opens for it."""
        with self._driving(), collector_paused():
            key, asked = tuple(topics), group if committed else None
            answered = self._answered
            try:
                return self._read(key, asked, deadline, check)
            except ConnectionLost as lost:
                if self._answered != answered:
                    raise  # broken in the middle of the read: not the idle close of a kept one
                # nothing answered on the kept connections: the broker closed them while idle;
                # kafka-python opens new ones for the requests sent again
                log.debug("kept connection lost before any answer (%s): reading again", lost)
                return self._read(key, asked, deadline, check)

    def _read(
        self, key: tuple[str, ...], group: str | None, deadline: float, check: Callable[[], None]
    ) -> Read:
        """One attempt of :meth:`read` of the topics ``key``; the committed offsets of
        ``group`` unless None."""
        metadata = self._net.call_soon_with_future(self._metadata, list(key))
        # every committed offset of the group, asked beside the metadata (OffsetFetch names
        # partitions, which the metadata has yet to list); those of other topics are left
        fetch = self.start_committed(group) if group is not None else None
        kept = self._layouts.get(key)
        sent = self._send_layout(kept) if kept is not None else None
        fresh = self._wait(metadata, deadline, check)
        leaders, replicas, racks = _topics(fresh)
        if kept is None or kept.leaders != leaders or kept.replicas != replicas:
            # first read of these topics, or partitions, leaders or replicas changed
            kept = Layout.of(key, leaders, replicas)
            if len(self._layouts) >= _KEPT_LAYOUTS:
                self._layouts.clear()
            self._layouts[key] = kept
            sent = self._send_layout(kept)
        assert sent is not None
        index = kept.index
        logs = ([-1] * len(index), [-1] * len(index))
        for spec, future in sent:
            got = logs[spec == LATEST]
            for t in self._wait(future, deadline, check).topics:
                name = t.name
                for part in t.partitions:
                    at = index.get((name, part.partition_index))
                    if part.error_code or at is None:
                        raise WireUnavailable(
                            f"ListOffsets: error {part.error_code} for "
                            f"{name}-{part.partition_index}"
                        )
                    got[at] = part.offset
        for got in logs:
            if -1 in got:  # an offset is never negative
                tp = kept.tps[got.index(-1)]
                raise WireUnavailable(f"ListOffsets: no answer for {tp.topic}-{tp.partition}")
        offsets = self._committed(fetch, deadline, check) if fetch is not None else None
        return Read(kept, logs[0], logs[1], offsets, racks)

    def _send_layout(self, layout: Layout) -> list[tuple[int, Any]]:
        """The ListOffsets requests of ``layout``, sent: (timestamp, future) for each."""
        return [
            (spec, self._net.call_soon_with_future(self._send, spec, request, leader))
            for leader, spec, request in layout.requests
        ]

    def start_committed(self, group: str) -> Any:
        """Every committed offset of ``group``, asked now (one OffsetFetch of all its
        partitions); :meth:`wait_committed` for them."""
        return self._net.call_soon_with_future(self._offset_fetch, group)

    def wait_committed(
        self, future: Any, deadline: float, check: Callable[[], None]
    ) -> dict[tuple[str, int], int]:
        """The committed offsets :meth:`start_committed` asked for."""
        with self._driving():
            return self._committed(future, deadline, check)

    def _committed(
        self, future: Any, deadline: float, check: Callable[[], None]
    ) -> dict[tuple[str, int], int]:
        answer = self._wait(future, deadline, check).groups[0]
        if answer.error_code:
            self._coordinators.pop(answer.group_id, None)  # moved or loading: asked again
            raise WireUnavailable(f"OffsetFetch: error {answer.error_code}")
        committed: dict[tuple[str, int], int] = {}
        for t in answer.topics:
            name = t.name
            for part in t.partitions:
                if part.error_code:
                    raise WireUnavailable(
                        f"OffsetFetch: error {part.error_code} for {name}-{part.partition_index}"
                    )
                if part.committed_offset >= 0:
                    committed[(name, part.partition_index)] = part.committed_offset
        return committed

    def close(self) -> None:
        """Closes the connections, now or when the read still running ends."""
        self._closed = True
        if self._lock.acquire(blocking=False):
            try:
                self._shut()
            finally:
                self._lock.release()

    def _shut(self) -> None:
        self._finalizer()

    @contextmanager
    def _driving(self) -> Iterator[None]:
        if not self._lock.acquire(blocking=False):
            raise WireUnavailable("another read is still running")
        try:
            if self._closed:
                raise WireUnavailable("closed")
            yield
        finally:
            if self._closed:
                self._shut()
            self._lock.release()

    # -- on the IO thread ------------------------------------------------------------------

    async def _bootstrapped(self, manager: Any = None) -> None:
        manager = manager or self._manager
        if not manager.bootstrapped:
            await manager.bootstrap_async()

    async def _send(self, spec: int, request: Any, node: int) -> Any:
        manager = self._managers[spec == LATEST]
        await self._bootstrapped(manager)
        return await manager.send(request, node_id=node)

    async def _metadata(self, topics: list[str]) -> Any:
        from kafka.protocol.metadata import MetadataRequest  # type: ignore[import-untyped]

        await self._bootstrapped()
        return await self._manager.send(
            MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
                allow_auto_topic_creation=False,
                min_version=_METADATA_VERSION,
                max_version=_METADATA_VERSION,
            )
        )

    async def _coordinator(self, group: str) -> int:
        from kafka.protocol.metadata import FindCoordinatorRequest

        known = self._coordinators.get(group)
        if known is not None:
            return known
        response = await self._manager.send(
            FindCoordinatorRequest(
                key_type=0, coordinator_keys=[group], min_version=_FIND_COORDINATOR_VERSION
            )
        )
        found = response.coordinators[0]
        if found.error_code:
            raise WireUnavailable(f"FindCoordinator: error {found.error_code}")
        self._coordinators[group] = found.node_id
        return int(found.node_id)

    async def _offset_fetch(self, group: str) -> Any:
        from kafka.protocol.consumer import OffsetFetchRequest

        await self._bootstrapped()
        coordinator = await self._coordinator(group)
        group_class = OffsetFetchRequest.OffsetFetchRequestGroup
        request = OffsetFetchRequest(
            groups=[group_class(group_id=group, topics=None)],
            # v8 names topics; v10 (Kafka 4) would name them by id
            min_version=_OFFSET_FETCH_VERSION,
            max_version=_OFFSET_FETCH_VERSION,
        )
        try:
            return await self._manager.send(request, node_id=coordinator)
        except Exception:
            self._coordinators.pop(group, None)  # gone or moved: found again next time
            raise

    # -- waiting ---------------------------------------------------------------------------

    def _wait(self, future: Any, deadline: float, check: Callable[[], None]) -> Any:
        """The value of ``future`` (of the selector), which this thread drives until
        ``deadline``."""
        while not future.is_done:
            check()
            left = deadline - time.monotonic()
            if left <= 0:
                raise WireUnavailable("no answer in time")
            self._net.poll(timeout_ms=1000 * min(left, _CHECK_S), future=future)
        if future.exception is not None:
            from kafka.errors import KafkaConnectionError  # type: ignore[import-untyped]

            failure = future.exception
            if isinstance(failure, WireUnavailable):
                raise failure
            lost = isinstance(failure, KafkaConnectionError)
            raise (ConnectionLost if lost else WireUnavailable)(
                f"{type(failure).__name__}: {failure}"
            )
        self._answered += 1
        return future.value
