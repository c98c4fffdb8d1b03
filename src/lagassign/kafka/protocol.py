"""The offsets reader's fast path: Kafka's protocol requests themselves, one per broker.

:class:`~lagassign.kafka.offsets.OffsetsReader` reads through librdkafka, which gives its
errors and its connection settings their meaning, but at 10,000 partitions librdkafka's calls
cost more CPU in this process than the broker spends answering (docs/kafka.md, "How the
offsets are read"). So the reader first asks here: kafka-python's connection manager
(``kafka.net``: connections, API versions, TLS and SASL) and its protocol classes carry one
``Metadata`` request for the topics, then for each partition leader one ``ListOffsets``
request with timestamp -2 (log start) and one with -1 (log end), and one ``OffsetFetch`` to the
group's coordinator, all in flight together on connections the reader keeps.

This path answers only when everything answers cleanly. Anything else (a topic that does not
exist, a leader moving, an error code, a broker that does not answer in time, settings
kafka-python cannot mean exactly as librdkafka does) raises :class:`WireUnavailable`, and the
reader reads again through librdkafka, which retries, reports and words its errors as it
always did. :func:`wire_settings` maps the librdkafka properties that kafka-python has exact
names for; any other property keeps the reader on librdkafka.

Importing this module imports neither kafka-python nor confluent-kafka.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

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
#: the last versions before the flexible ones (KIP-482), whose tagged fields per partition
#: cost kafka-python a third more to encode and decode; they carry all that is read here
_LIST_OFFSETS_VERSION, _METADATA_VERSION = 5, 8
#: OffsetFetch with a list of groups (v8, Kafka 3.0); FindCoordinator of several keys (v4)
_OFFSET_FETCH_VERSION, _FIND_COORDINATOR_VERSION = 8, 4

#: seconds between fault checks while a read waits
_CHECK_S = 0.02
#: ListOffsets requests a client keeps for its next reads
_KEPT_REQUESTS = 64

#: (topic, partition) -> (log start, log end, committed offset or None, replica broker ids)
Rows = dict[tuple[str, int], tuple[int, int, int | None, list[int]]]


class WireUnavailable(Exception):
    """The fast path cannot answer this read; the reader asks librdkafka instead."""


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
        else:
            return None
    if "bootstrap_servers" not in settings:
        return None
    if settings.get("security_protocol", "PLAINTEXT").startswith("SASL"):
        settings.setdefault("sasl_mechanism", "GSSAPI")  # librdkafka's default
        if settings["sasl_mechanism"] not in _MECHANISMS:
            return None
    return settings


@dataclass(frozen=True, slots=True)
class Topics:
    """What the Metadata request says of the topics: partitions' leaders and replicas, and
    the racks of the brokers that have one."""

    leaders: dict[tuple[str, int], int]
    replicas: dict[tuple[str, int], list[int]]
    racks: dict[int, str]


def _topics(response: Any) -> Topics:
    """Leaders and replicas of every partition in a Metadata answer, racks of its brokers."""
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
    return Topics(leaders, replicas, {b.node_id: b.rack for b in response.brokers if b.rack})


def _answers(topics: Any, request: str) -> Iterator[tuple[tuple[str, int], Any]]:
    """Every partition's answer in ``topics`` of a response, by (topic, partition); an error
    code is :class:`WireUnavailable`."""
    for t in topics:
        name = t.name
        for part in t.partitions:
            if part.error_code:
                raise WireUnavailable(
                    f"{request}: error {part.error_code} for {name}-{part.partition_index}"
                )
            yield (name, part.partition_index), part


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
        config = {"client_id": client_id, **settings, "allow_auto_create_topics": False}
        #: two sets of connections: a broker answers the requests of one connection one at a
        #: time, so the log start and the log end requests go on a connection each
        self._managers = [KafkaConnectionManager(self._net, **config) for _ in (EARLIEST, LATEST)]
        self._manager = self._managers[0]
        self._lock = threading.Lock()
        # closed at the latest when collected or at exit (a kept reader is rarely closed):
        # kafka-python's metadata loop logs an error when its manager goes first
        self._finalizer = weakref.finalize(self, _shut, self._managers, self._net)
        self._coordinators: dict[str, int] = {}
        self._requests: dict[tuple[Any, ...], Any] = {}
        self._closed = False

    # -- public ----------------------------------------------------------------------------

    def read(
        self,
        group: str,
        topics: Sequence[str],
        committed: bool,
        deadline: float,
        check: Callable[[], None],
    ) -> tuple[Rows, dict[int, str]]:
        """Log start, log end, committed offset (when ``committed``, else None) and replicas
        of every partition of ``topics``; the racks of the brokers.

        Each request is a task of its own on the selector; requests are built and answers read
        here, between the steps that send and receive."""
        with self._driving():
            metadata = self._net.call_soon_with_future(self._metadata, list(topics))
            # every committed offset of the group, asked beside the metadata (OffsetFetch names
            # partitions, which the metadata has yet to list); those of other topics are left
            fetch = self.start_committed(group) if committed else None
            meta = _topics(self._wait(metadata, deadline, check))
            by_leader: dict[int, dict[str, list[int]]] = {}
            for (topic, p), leader in meta.leaders.items():
                by_leader.setdefault(leader, {}).setdefault(topic, []).append(p)
            sent = []
            for leader, asked in by_leader.items():
                for spec in (EARLIEST, LATEST):
                    request = self._list_offsets(leader, spec, asked)
                    sent.append(
                        (spec, self._net.call_soon_with_future(self._send, spec, request, leader))
                    )
            logs: dict[int, dict[tuple[str, int], int]] = {EARLIEST: {}, LATEST: {}}
            for spec, future in sent:
                response = self._wait(future, deadline, check)
                got = logs[spec]
                for tp, part in _answers(response.topics, "ListOffsets"):
                    got[tp] = part.offset
            offsets = self._committed(fetch, deadline, check) if fetch is not None else {}
            rows: Rows = {}
            begins, ends = logs[EARLIEST], logs[LATEST]
            for tp, replicas in meta.replicas.items():
                begin, end = begins.get(tp), ends.get(tp)
                if begin is None or end is None:
                    raise WireUnavailable(f"ListOffsets: no answer for {tp[0]}-{tp[1]}")
                rows[tp] = (begin, end, offsets.get(tp), replicas)
            return rows, meta.racks

    def _list_offsets(self, leader: int, spec: int, asked: Mapping[str, list[int]]) -> Any:
        """The ListOffsets request of ``asked`` partitions with timestamp ``spec``, built once
        for a reader kept from read to read (a leader's next rebalance asks the same)."""
        from kafka.protocol.consumer import ListOffsetsRequest  # type: ignore[import-untyped]

        key = (leader, spec, tuple((t, tuple(ps)) for t, ps in asked.items()))
        request = self._requests.get(key)
        if request is None:
            topic_class = ListOffsetsRequest.ListOffsetsTopic
            partition_class = topic_class.ListOffsetsPartition
            request = ListOffsetsRequest(
                replica_id=-1,
                isolation_level=0,  # read_uncommitted: the log end is the high watermark
                topics=[
                    topic_class(
                        name=t,
                        partitions=[
                            partition_class(
                                partition_index=p, timestamp=spec, current_leader_epoch=-1
                            )
                            for p in ps
                        ],
                    )
                    for t, ps in asked.items()
                ],
                min_version=1,
                max_version=_LIST_OFFSETS_VERSION,
            )
            if len(self._requests) >= _KEPT_REQUESTS:
                self._requests.clear()
            self._requests[key] = request
        return request

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
        for tp, part in _answers(answer.topics, "OffsetFetch"):
            if part.committed_offset >= 0:
                committed[tp] = part.committed_offset
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
                include_cluster_authorized_operations=False,
                include_topic_authorized_operations=False,
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
            if isinstance(future.exception, WireUnavailable):
                raise future.exception
            raise WireUnavailable(f"{type(future.exception).__name__}: {future.exception}")
        return future.value
