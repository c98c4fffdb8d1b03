"""The development Kafka broker from Python, and the admin calls its users share.

``scripts/kafka.sh`` runs the broker (docs/kafka.md): one JVM on 127.0.0.1 (or one per node of a
cluster), fresh storage in a run dir. :class:`DevBroker` runs that script for one run dir and
reads the bootstrap address it prints. Two kinds of users share it: the session fixture of
``tests/kafka/conftest.py`` and the real-broker benchmarks (through ``bench/_broker.py``). So
this module needs neither pytest nor lagassign, and failures raise :class:`BrokerError` for each
user to report its own way.

``LAGASSIGN_KAFKA_PARENT_PID`` is set to this process, so the broker's watchdog stops it even
when this process is killed outright.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
KAFKA_SH = ROOT / "scripts" / "kafka.sh"
#: the first start may fetch the jars from Maven Central; the broker's own start-up timeout is
#: inside kafka.sh (LAGASSIGN_KAFKA_START_TIMEOUT, 120 s by default)
START_TIMEOUT_S = 1200.0
STOP_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 60.0
#: offsets per commit request (:func:`commit_from`)
COMMIT_CHUNK = 5_000

TP = tuple[str, int]


class BrokerError(RuntimeError):
    """The development broker, or a request to it, failed."""


class DevBroker:
    """``scripts/kafka.sh`` for the run dir ``run_dir``.

    ``heap_opts`` overrides ``LAGASSIGN_KAFKA_HEAP_OPTS`` (default ``-Xms256m -Xmx768m``, per
    node); ``nodes`` sets ``LAGASSIGN_KAFKA_NODES``: one node (the default), or a cluster whose
    node 1 is the controller and a broker and whose other nodes are brokers. ``bootstrap`` then
    names every broker, comma-separated.
    """

    def __init__(self, run_dir: Path, heap_opts: str | None = None, nodes: int = 1) -> None:
        self.run_dir = run_dir
        self.heap_opts = heap_opts
        self.nodes = nodes
        self.bootstrap = ""
        self.started_seconds = 0.0
        self.stopped_seconds = 0.0

    def sh(self, cmd: str) -> subprocess.CompletedProcess[str]:
        """``scripts/kafka.sh CMD`` (start, stop, status) for this run dir, output captured."""
        env = {
            **os.environ,
            "LAGASSIGN_KAFKA_DIR": str(self.run_dir),
            "LAGASSIGN_KAFKA_PARENT_PID": str(os.getpid()),
            "LAGASSIGN_KAFKA_NODES": str(self.nodes),
        }
        if self.heap_opts:
            env["LAGASSIGN_KAFKA_HEAP_OPTS"] = self.heap_opts
        timeout = START_TIMEOUT_S if cmd == "start" else STOP_TIMEOUT_S
        try:
            return subprocess.run(
                ["bash", str(KAFKA_SH), cmd],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise BrokerError(
                f"scripts/kafka.sh {cmd} did not finish within {timeout:.0f} s\n"
                f"stderr:\n{exc.stderr!s}"
            ) from exc

    def start(self) -> str:
        """Starts the broker; its ``127.0.0.1:PORT``. A failed start is stopped again."""
        began = time.monotonic()
        try:
            done = self.sh("start")
        except BaseException:
            self.sh("stop")
            raise
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines or not lines[-1].startswith("bootstrap="):
            self.sh("stop")
            # kafka.sh prints the log tail itself when the broker fails; not when, say, mvn does
            tail = "" if "----- last " in done.stderr else self.log_tail()
            raise BrokerError(
                f"scripts/kafka.sh start failed (exit {done.returncode})\n"
                f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}\n{tail}"
            )
        self.bootstrap = lines[-1].removeprefix("bootstrap=")
        self.started_seconds = time.monotonic() - began
        return self.bootstrap

    def stop(self) -> None:
        began = time.monotonic()
        done = self.sh("stop")
        self.stopped_seconds = time.monotonic() - began
        if done.returncode != 0:
            raise BrokerError(
                f"scripts/kafka.sh stop failed (exit {done.returncode})\n{done.stderr}"
            )

    def node_dir(self, node: int) -> Path:
        """Node 1's files are at the top of the run dir, node K's in ``node-K``."""
        return self.run_dir if node == 1 else self.run_dir / f"node-{node}"

    def log_tail(self, lines: int = 60) -> str:
        parts = []
        for node in range(1, self.nodes + 1):
            for name in ("logs/server.log", "logs/console.out", "format.log"):
                path = self.node_dir(node) / name
                if path.is_file():
                    tail = path.read_text(errors="replace").splitlines()[-lines:]
                    parts.append(
                        f"----- last {len(tail)} lines of {path} -----\n" + "\n".join(tail)
                    )
        return "\n".join(parts) or f"(no log files in {self.run_dir})"

    def pid(self, node: int = 1) -> int | None:
        try:
            return int((self.node_dir(node) / "kafka.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def rss_mib(self) -> float | None:
        """The broker JVMs' resident memory now, in MiB (every node's together)."""
        total = None
        for status in self._proc("status"):
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total = (total or 0.0) + int(line.split()[1]) / 1024
        return total

    def cpu_seconds(self) -> float | None:
        """The broker JVMs' user + system CPU time so far (every node's together)."""
        total = None
        for stat in self._proc("stat"):
            # the fields after the command name, which may hold spaces, in parentheses
            fields = stat.rsplit(")", 1)[1].split()
            total = (total or 0.0) + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def _proc(self, name: str) -> list[str]:
        """``/proc/PID/NAME`` of every node's JVM that runs."""
        found = []
        for node in range(1, self.nodes + 1):
            pid = self.pid(node)
            if pid is None:
                continue
            try:
                found.append(Path(f"/proc/{pid}/{name}").read_text())
            except OSError:
                continue
        return found


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed: connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- admin calls ----------------------------------------------------------------------------


def admin_client(bootstrap: str) -> Any:
    """An AdminClient whose librdkafka log lines are dropped: when a run is interrupted, one
    still alive would otherwise print a line a second once the broker is gone."""
    from confluent_kafka.admin import AdminClient

    quiet = logging.getLogger("tests.kafka.broker.librdkafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    return AdminClient({"bootstrap.servers": bootstrap}, logger=quiet)


def create_topics(
    admin: Any,
    partitions: Mapping[str, int],
    config: Mapping[str, str] | None = None,
    *,
    led: bool = True,
) -> None:
    """Creates the topics (replication factor 1, topic ``config``), one request each, and with
    ``led`` waits until every partition has a leader (:func:`wait_leaders`; benchmarks that time
    the two apart wait themselves). Created is not yet led: a producer that asks before the
    broker's metadata has a new partition's leader gets UNKNOWN_TOPIC_OR_PART for its records
    (fresh-clone CI runs at load 4-5, test_monitor_batch_live and test_monitor_status_live)."""
    from confluent_kafka.admin import NewTopic

    for topic, count in partitions.items():
        futures = admin.create_topics(
            [NewTopic(topic, num_partitions=count, replication_factor=1, config=dict(config or {}))],
            request_timeout=REQUEST_TIMEOUT_S,
            operation_timeout=REQUEST_TIMEOUT_S,
        )
        for future in futures.values():
            future.result(timeout=REQUEST_TIMEOUT_S)
    if led:
        wait_leaders(admin, partitions)


def wait_leaders(admin: Any, partitions: Mapping[str, int], timeout: float = 300.0) -> float:
    """Waits until every partition of the topics has a leader; returns the seconds waited."""
    from confluent_kafka import TopicCollection

    began = time.monotonic()
    while True:
        futures = admin.describe_topics(
            TopicCollection(list(partitions)), request_timeout=REQUEST_TIMEOUT_S
        )
        ready = 0
        for topic, future in futures.items():
            try:
                described = future.result(timeout=REQUEST_TIMEOUT_S)
            except Exception:
                continue
            if len(described.partitions) == partitions[topic] and all(
                p.leader is not None and p.leader.id >= 0 for p in described.partitions
            ):
                ready += 1
        if ready == len(partitions):
            return time.monotonic() - began
        if time.monotonic() - began > timeout:
            raise BrokerError(f"partitions without a leader after {timeout:.0f} s")
        time.sleep(0.5)


def wait_every_broker_knows(
    bootstrap: str, partitions: Mapping[str, int], timeout: float = 300.0
) -> float:
    """Waits until every broker of the cluster answers a Metadata request for the topics with
    every partition led; returns the seconds waited. In a cluster of several brokers each learns
    a new topic from the controller in its own time, and a client asks whichever broker it
    likes: :func:`wait_leaders` hears from one of them (the two-node test of fresh-clone CI got
    UNKNOWN_TOPIC_OR_PART from the other right after it). So this asks each broker by its id,
    through kafka-python's connection manager, as lagassign's own reader asks."""
    from kafka.net.manager import KafkaConnectionManager  # type: ignore[import-untyped]
    from kafka.net.selector import NetworkSelector  # type: ignore[import-untyped]
    from kafka.protocol.metadata import MetadataRequest  # type: ignore[import-untyped]

    net = NetworkSelector(client_id="lagassign-test", slow_task_threshold_secs=None)
    manager = KafkaConnectionManager(
        net, bootstrap_servers=bootstrap, client_id="lagassign-test", allow_auto_create_topics=False
    )
    request = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in partitions],
        allow_auto_topic_creation=False,
        min_version=4,
        max_version=4,
    )

    async def ask(node: int) -> Any:
        return await manager.send(request, node_id=node)

    def led(response: Any) -> bool:
        return all(
            not t.error_code
            and len(t.partitions) == partitions[t.name]
            and all(not p.error_code and p.leader_id >= 0 for p in t.partitions)
            for t in response.topics
        )

    began = time.monotonic()
    try:
        manager.bootstrap(timeout_ms=REQUEST_TIMEOUT_S * 1000)
        waiting = {b.node_id for b in manager.cluster.brokers()}
        if not waiting:
            raise BrokerError(f"{bootstrap} named no brokers")
        while True:
            waiting = {n for n in waiting if not led(net.run(ask, n))}
            if not waiting:
                return time.monotonic() - began
            if time.monotonic() - began > timeout:
                raise BrokerError(
                    f"brokers {sorted(waiting)} do not know every partition after {timeout:.0f} s"
                )
            time.sleep(0.5)
    finally:
        manager.close()
        net.close()


def numbered(_topic: str, _partition: int, i: int) -> bytes:
    """The default record value: its number in the partition, 16 bytes."""
    return f"{i:016d}".encode()


def produce(
    bootstrap: str,
    counts: Mapping[TP, int],
    *,
    value: Callable[[str, int, int], bytes] = numbered,
    config: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> None:
    """``counts[(topic, partition)]`` records into each partition, each ``value(topic,
    partition, i)``; waits until all are delivered. ``config``: producer properties on top of
    ``acks=all``, ``linger.ms=20``."""
    from confluent_kafka import Producer

    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20, **(config or {})}
    )
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for (topic, partition), n in counts.items():
        by_topic.setdefault(topic, []).append((partition, n))
    # a topic at a time: a request for every partition of thousands at once overwhelms the one
    # broker; a full local queue waits for deliveries
    for topic, partitions in by_topic.items():
        for partition, n in partitions:
            for i in range(n):
                while True:
                    try:
                        producer.produce(
                            topic,
                            value(topic, partition, i),
                            partition=partition,
                            on_delivery=on_delivery,
                        )
                        break
                    except BufferError:
                        producer.poll(0.1)
            producer.poll(0)
        if producer.flush(timeout) != 0:
            raise BrokerError(f"produce to {topic}: not delivered within {timeout:.0f} s")
    if errors:
        raise BrokerError(f"produce failed: {errors[:3]}")


def commit(bootstrap: str, group: str, offsets: Mapping[TP, int]) -> None:
    """Commits ``offsets`` for ``group`` from a consumer that never joins the group."""
    consumer = committer(bootstrap, group)
    try:
        commit_from(consumer, offsets)
    finally:
        consumer.close()


def committer(bootstrap: str, group: str) -> Any:
    """A consumer of ``group`` for :func:`commit_from`: it commits without joining, so the
    group stays empty."""
    from confluent_kafka import Consumer

    return Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    )


def commit_from(consumer: Any, offsets: Mapping[TP, int]) -> None:
    """Commits ``offsets`` from ``consumer``, waiting out a coordinator still being found or
    loaded (a busy broker, a ``__consumer_offsets`` just created).

    At most :data:`COMMIT_CHUNK` offsets go in one request: the coordinator writes a request's
    offsets to ``__consumer_offsets`` as one record batch, which must fit the broker's
    ``message.max.bytes`` (1 MiB); 25,000 offsets at once fail with ``Unknown broker error``.
    """
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    finding = {
        KafkaError._WAIT_COORD,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.NOT_COORDINATOR,
    }
    items = list(offsets.items())
    for start in range(0, len(items), COMMIT_CHUNK):
        chunk = items[start : start + COMMIT_CHUNK]
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        while True:
            try:
                result = consumer.commit(
                    offsets=[KafkaTopicPartition(t, p, o) for (t, p), o in chunk],
                    asynchronous=False,
                )
                break
            except KafkaException as exc:
                if exc.args[0].code() not in finding or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        failed = [tp for tp in result or () if tp.error is not None]
        if result is None or failed:
            raise BrokerError(f"commit failed for {len(failed)} partitions: {failed[:3]}")


def committed_offsets(admin: Any, group: str) -> dict[TP, int]:
    """The group's committed offsets (partitions without one are left out)."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    futures = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=REQUEST_TIMEOUT_S
    )
    result = futures[group].result(timeout=REQUEST_TIMEOUT_S)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def end_offsets(admin: Any, partitions: Mapping[str, int]) -> dict[TP, int]:
    """The log end offset (high watermark) of every partition of the topics."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    request = {
        TopicPartition(t, p): OffsetSpec.latest() for t, n in partitions.items() for p in range(n)
    }
    futures = admin.list_offsets(request, request_timeout=REQUEST_TIMEOUT_S)
    return {
        (tp.topic, tp.partition): future.result(timeout=REQUEST_TIMEOUT_S).offset
        for tp, future in futures.items()
    }
