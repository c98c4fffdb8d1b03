"""A development Kafka broker for one benchmark run, and the few admin calls the benchmarks share.

    with Broker() as broker:          # scripts/kafka.sh start in a fresh temp run dir
        admin = broker.admin()
        create_topics(admin, {"orders": 8})
        ...
                                      # scripts/kafka.sh stop, run dir removed

The broker is the one ``scripts/kafka.sh`` runs for the tests (docs/kafka.md): one JVM on
127.0.0.1, fresh storage. ``LAGASSIGN_KAFKA_PARENT_PID`` is set to this process, so the
broker's watchdog stops it even when this process is killed outright. :func:`exit_on_sigterm`
turns SIGTERM and SIGHUP into ``SystemExit``, so ``finally`` blocks (and ``with Broker()``) run
on them as on Ctrl-C.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KAFKA_SH = ROOT / "scripts" / "kafka.sh"
#: the first start may fetch the jars from Maven Central
START_TIMEOUT_S = 1200.0
STOP_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 60.0


def exit_on_sigterm() -> None:
    """SIGTERM and SIGHUP raise ``SystemExit`` in the main thread, so cleanup code runs."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


class BrokerError(RuntimeError):
    pass


class Broker:
    """``scripts/kafka.sh start`` in a temp run dir on enter, ``stop`` (and rm) on exit.

    ``heap_opts`` overrides ``LAGASSIGN_KAFKA_HEAP_OPTS`` (default ``-Xms256m -Xmx768m``).
    """

    def __init__(self, heap_opts: str | None = None, keep_run_dir: bool = False) -> None:
        self.heap_opts = heap_opts
        self.keep_run_dir = keep_run_dir
        self.run_dir = Path(tempfile.mkdtemp(prefix="lagassign-bench-kafka-"))
        self.bootstrap = ""
        self.started_seconds = 0.0
        self.stopped_seconds = 0.0

    def _sh(self, cmd: str, timeout: float) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "LAGASSIGN_KAFKA_DIR": str(self.run_dir),
            "LAGASSIGN_KAFKA_PARENT_PID": str(os.getpid()),
        }
        if self.heap_opts:
            env["LAGASSIGN_KAFKA_HEAP_OPTS"] = self.heap_opts
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

    def start(self) -> str:
        print(f"starting a Kafka broker in {self.run_dir} ...", file=sys.stderr)
        began = time.monotonic()
        try:
            done = self._sh("start", START_TIMEOUT_S)
        except BaseException:
            self.stop()
            raise
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines or not lines[-1].startswith("bootstrap="):
            self.stop()
            raise BrokerError(
                f"scripts/kafka.sh start failed (exit {done.returncode}):\n{done.stderr}"
            )
        self.bootstrap = lines[-1].removeprefix("bootstrap=")
        self.started_seconds = time.monotonic() - began
        print(f"broker at {self.bootstrap} ({self.started_seconds:.1f} s)", file=sys.stderr)
        return self.bootstrap

    def stop(self) -> None:
        began = time.monotonic()
        try:
            done = self._sh("stop", STOP_TIMEOUT_S)
            self.stopped_seconds = time.monotonic() - began
            if done.returncode != 0:
                print(f"scripts/kafka.sh stop failed:\n{done.stderr}", file=sys.stderr)
        finally:
            if not self.keep_run_dir:
                shutil.rmtree(self.run_dir, ignore_errors=True)

    def pid(self) -> int | None:
        try:
            return int((self.run_dir / "kafka.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def rss_mib(self) -> float | None:
        """The broker JVM's resident memory now, in MiB."""
        pid = self.pid()
        if pid is None:
            return None
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def cpu_seconds(self) -> float | None:
        """The broker JVM's user + system CPU time so far."""
        pid = self.pid()
        if pid is None:
            return None
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_tail(self, lines: int = 30) -> str:
        path = self.run_dir / "logs" / "server.log"
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return f"(no {path})"

    def admin(self) -> Any:
        """An AdminClient whose librdkafka log lines are dropped: when a run is interrupted,
        one still alive would otherwise print a line a second once the broker is gone."""
        from confluent_kafka.admin import AdminClient

        quiet = logging.getLogger("bench.librdkafka")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        return AdminClient({"bootstrap.servers": self.bootstrap}, logger=quiet)

    def __enter__(self) -> Broker:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        print("stopping the broker ...", file=sys.stderr)
        self.stop()


def create_topics(admin: Any, partitions: Mapping[str, int]) -> None:
    """Creates the topics (replication factor 1), one request each, and waits for them."""
    from confluent_kafka.admin import NewTopic

    for topic, count in partitions.items():
        futures = admin.create_topics(
            [NewTopic(topic, num_partitions=count, replication_factor=1)],
            request_timeout=REQUEST_TIMEOUT_S,
            operation_timeout=REQUEST_TIMEOUT_S,
        )
        for future in futures.values():
            future.result(timeout=REQUEST_TIMEOUT_S)


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


def committed_offsets(admin: Any, group: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets (partitions without one are left out)."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    futures = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=REQUEST_TIMEOUT_S
    )
    result = futures[group].result(timeout=REQUEST_TIMEOUT_S)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def end_offsets(admin: Any, partitions: Mapping[str, int]) -> dict[tuple[str, int], int]:
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
