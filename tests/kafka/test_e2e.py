"""End to end: consumer processes with lagassign's assignors in a group on the real broker.

Each test starts real consumer processes (``tests/kafka/consumer_proc.py``, kafka-python or
aiokafka) on topics and a group of its own, reads what they report on stdout and compares it
with the core: the assignment the ``lag`` strategy computes from the same offsets and member
ids. Every process is killed at teardown; the processes also stop by themselves when the test
session is gone.

Timing for a shared 2-core machine: session timeout 6 s, heartbeats every second, every wait
bounded and generous (a group settles in a few seconds, the waits allow 90).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, Message, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition
from lagassign.strategies import create

ROOT = Path(__file__).resolve().parents[2]
CONSUMER_PROC = Path(__file__).resolve().parent / "consumer_proc.py"
CLIENTS = ["kafka-python", "aiokafka"]

REQUEST_TIMEOUT_S = 30.0
#: a group of fresh processes settles in a few seconds; this much is allowed
SETTLE_TIMEOUT_S = 90.0
#: a settled assignment must stay unchanged this long to count
STABLE_S = 2.0
#: the leader's deadline for offsets in the e2e tests (the defaults are for production)
LAG_TIMEOUT_S = 10.0

T = TypeVar("T")
Assigned = dict[str, list[tuple[str, int]]]


# -- consumer processes ---------------------------------------------------------------------


@dataclass
class Proc:
    """One consumer process and the events it reported."""

    name: str
    popen: subprocess.Popen[str]
    stderr_path: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, event: str) -> list[dict[str, Any]]:
        with self.lock:
            return [e for e in self.events if e.get("event") == event]

    def latest(self, event: str) -> dict[str, Any] | None:
        found = self.of(event)
        return found[-1] if found else None

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def consumed(self) -> dict[tuple[str, int], set[int]]:
        offsets: dict[tuple[str, int], set[int]] = {}
        for e in self.of("consumed"):
            for topic, partition, first, last in e["records"]:
                offsets.setdefault((topic, partition), set()).update(range(first, last + 1))
        return offsets

    def summary(self) -> str:
        lines = [f"--- {self.name} (pid {self.popen.pid}, exit {self.popen.poll()}) ---"]
        for e in self.of("assigned") + self.of("leader") + self.of("error"):
            shown = {k: v for k, v in e.items() if k not in ("name", "time")}
            lines.append("  " + json.dumps(shown)[:600])
        lines.append(f"  consumed events: {len(self.of('consumed'))}")
        tail = self.stderr().splitlines()[-15:]
        lines.extend("  stderr: " + line for line in tail)
        return "\n".join(lines)


class Procs:
    """Starts consumer processes; kills every one of them at :meth:`close`."""

    def __init__(self, bootstrap: str, log_dir: Path) -> None:
        self.bootstrap = bootstrap
        self.log_dir = log_dir
        self.procs: list[Proc] = []
        self._readers: list[threading.Thread] = []

    def start(self, client: str, name: str, group: str, topics: Sequence[str], *extra: str) -> Proc:
        stderr_path = self.log_dir / f"{name}.stderr"
        cmd = [
            sys.executable,
            str(CONSUMER_PROC),
            "--client", client,
            "--name", name,
            "--bootstrap", self.bootstrap,
            "--group", group,
            "--topics", ",".join(topics),
            "--max-seconds", "240",
            "--debug", "lagassign.kafka.group",
            *extra,
        ]  # fmt: skip
        with stderr_path.open("w") as stderr:
            popen = subprocess.Popen(
                cmd,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        proc = Proc(name, popen, stderr_path)
        reader = threading.Thread(target=self._read, args=(proc,), daemon=True)
        reader.start()
        self.procs.append(proc)
        self._readers.append(reader)
        return proc

    @staticmethod
    def _read(proc: Proc) -> None:
        assert proc.popen.stdout is not None
        for line in proc.popen.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = {"event": "raw", "line": line.rstrip("\n")}
            with proc.lock:
                proc.events.append(event)

    def kill(self, proc: Proc) -> None:
        if proc.alive():
            proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(timeout=30)

    def close(self) -> None:
        for proc in self.procs:
            if proc.alive():
                proc.popen.kill()
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL does not fail
                proc.popen.wait(timeout=30)
        for reader in self._readers:
            reader.join(timeout=5)

    def summary(self) -> str:
        return "\n".join(p.summary() for p in self.procs)


@pytest.fixture
def procs(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Procs]:
    started = Procs(kafka_bootstrap, tmp_path)
    try:
        yield started
    finally:
        started.close()


def wait_for(check: Callable[[], T | None], timeout: float, what: str, procs: Procs) -> T:
    """Polls ``check`` until it returns something other than None; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{procs.summary()}")
        dead = [p for p in procs.procs if p.popen.poll() not in (None, -signal.SIGKILL)]
        if dead:
            pytest.fail(f"a consumer process exited while waiting for {what}\n{procs.summary()}")
        time.sleep(0.25)


def current_assignment(members: Sequence[Proc]) -> tuple[int, Assigned] | None:
    """(generation, member -> partitions) if every process's last report is of one generation."""
    latest = [p.latest("assigned") for p in members]
    if any(e is None for e in latest):
        return None
    reports = [e for e in latest if e is not None]
    generations = {e["generation"] for e in reports}
    if len(generations) != 1:
        return None
    assigned = {e["member_id"]: sorted((t, p) for t, p in e["partitions"]) for e in reports}
    if len(assigned) != len(members):
        return None
    return generations.pop(), assigned


def wait_settled(
    members: Sequence[Proc], partitions: set[tuple[str, int]], procs: Procs, after: int = 0
) -> tuple[int, Assigned]:
    """The group's assignment once ``members`` agree on a generation after ``after``, every
    partition has exactly one owner, and nothing changes for :data:`STABLE_S`."""

    def settled() -> tuple[int, Assigned] | None:
        now = current_assignment(members)
        if now is None or now[0] <= after:
            return None
        owned = [tp for tps in now[1].values() for tp in tps]
        if sorted(owned) != sorted(partitions):
            return None
        time.sleep(STABLE_S)
        return now if current_assignment(members) == now else None

    names = ", ".join(p.name for p in members)
    return wait_for(settled, SETTLE_TIMEOUT_S, f"{names} to settle", procs)


def leader_event(members: Sequence[Proc], generation: int) -> dict[str, Any]:
    found = [e for p in members for e in p.of("leader") if e["generation"] == generation]
    assert len(found) == 1, f"leader reports for generation {generation}: {found}"
    return found[0]


# -- the cluster ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def admin(kafka_bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka_bootstrap})


def unique(prefix: str) -> str:
    return f"lagassign-e2e-{prefix}-{uuid.uuid4().hex[:10]}"


def create_topics(admin: AdminClient, counts: Mapping[str, Sequence[int]]) -> None:
    futures = admin.create_topics(
        [NewTopic(t, num_partitions=len(ns), replication_factor=1) for t, ns in counts.items()],
        request_timeout=REQUEST_TIMEOUT_S,
        operation_timeout=REQUEST_TIMEOUT_S,
    )
    for future in futures.values():
        future.result(timeout=REQUEST_TIMEOUT_S)


def produce(bootstrap: str, counts: Mapping[str, Sequence[int]], tag: str = "m") -> None:
    """``counts[topic][p]`` records into partition p of each topic."""
    errors: list[str] = []

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(str(err))

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for topic, numbers in counts.items():
        for partition, count in enumerate(numbers):
            for i in range(count):
                producer.produce(
                    topic, value=f"{tag}{i}".encode(), partition=partition, on_delivery=on_delivery
                )
    assert producer.flush(REQUEST_TIMEOUT_S) == 0
    assert errors == []


def commit(bootstrap: str, group: str, offsets: Mapping[TopicPartition, int]) -> None:
    """Commits ``offsets`` for ``group`` from a consumer that never joins the group."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        result = consumer.commit(
            offsets=[KafkaTopicPartition(tp.topic, tp.partition, o) for tp, o in offsets.items()],
            asynchronous=False,
        )
        assert result is not None and all(tp.error is None for tp in result)
    finally:
        consumer.close()


def committed_offsets(admin: AdminClient, group: str) -> dict[tuple[str, int], int]:
    futures = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)], request_timeout=REQUEST_TIMEOUT_S
    )
    result = futures[group].result(timeout=REQUEST_TIMEOUT_S)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def all_partitions(counts: Mapping[str, Sequence[int]]) -> set[tuple[str, int]]:
    return {(t, p) for t, ns in counts.items() for p in range(len(ns))}


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed: connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# -- the core's answer ----------------------------------------------------------------------


def core_lag_assignment(
    counts: Mapping[str, Sequence[int]],
    committed: Mapping[TopicPartition, int] | None,
    member_ids: Sequence[str],
    auto_offset_reset: str = "earliest",
) -> Assigned:
    """What ``lagassign.strategies.create("lag")`` assigns members subscribing every topic.

    ``committed`` None: every lag is 0 (what the leader assigns when it cannot read offsets).
    """
    topics = []
    for name, numbers in counts.items():
        if committed is None:
            parts = tuple(Partition(name, p, lag=0) for p in range(len(numbers)))
        else:
            parts = tuple(
                Partition(name, p, offsets=Offsets(0, n, committed.get(TopicPartition(name, p))))
                for p, n in enumerate(numbers)
            )
        topics.append(Topic(name, parts))
    members = [Member(mid, frozenset(counts)) for mid in member_ids]
    group = Group.of(topics, members, auto_offset_reset=auto_offset_reset)
    assignment = create("lag").assign(group)
    return {mid: sorted((tp.topic, tp.partition) for tp in assignment[mid]) for mid in member_ids}


# -- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_lag_assignment_is_the_cores(
    client: str, procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """Three members with the lag strategy get exactly what the core computes from the
    group's offsets: a skewed backlog on 8 + 3 partitions, some committed, some not."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [300, 10, 120, 0, 60, 5, 200, 40], small: [50, 0, 25]}
    create_topics(admin, counts)
    produce(kafka_bootstrap, counts)
    # big-3, big-5, big-7, small-1, small-2 have no committed offset: earliest counts the log
    committed = {
        TopicPartition(big, 0): 100,
        TopicPartition(big, 1): 10,
        TopicPartition(big, 2): 20,
        TopicPartition(big, 4): 60,
        TopicPartition(big, 6): 50,
        TopicPartition(small, 0): 10,
    }
    commit(kafka_bootstrap, group, committed)

    members = [
        procs.start(client, f"{client}-{i}", group, [big, small], "--lag-timeout", f"{LAG_TIMEOUT_S}")
        for i in range(3)
    ]
    generation, assigned = wait_settled(members, all_partitions(counts), procs)

    assert assigned == core_lag_assignment(counts, committed, sorted(assigned))
    leader = leader_event(members, generation)
    assert leader["lag"] == "offsets", leader
    assert {m: sorted((t, p) for t, p in tps) for m, tps in leader["assignment"].items()} == assigned
    # nobody committed anything: the offsets the leader read are still the test's
    assert committed_offsets(admin, group) == {(tp.topic, tp.partition): o for tp, o in committed.items()}
    for p in members:
        assert "Traceback" not in p.stderr(), p.stderr()


@pytest.mark.parametrize("client", CLIENTS)
def test_killed_member_everything_consumed(
    client: str, procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """SIGKILL the leader while three members work through a backlog: the other two take its
    partitions after the session timeout, every record is consumed at least once, every
    partition keeps an owner and the committed offsets reach the log end."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [600, 40, 300, 0, 150, 20], small: [90, 0, 45]}
    create_topics(admin, counts)
    produce(kafka_bootstrap, counts)
    everything = all_partitions(counts)

    slow = ["--consume", "--commit", "--max-records", "10", "--delay", "0.2"]
    members = [
        procs.start(client, f"{client}-{i}", group, [big, small], "--lag-timeout", f"{LAG_TIMEOUT_S}", *slow)
        for i in range(3)
    ]
    generation, _ = wait_settled(members, everything, procs)
    consumed_before = sum(len(o) for p in members for o in p.consumed().values())
    assert 0 < consumed_before < sum(map(sum, counts.values())), "not mid-stream"

    leader = leader_event(members, generation)
    victim = next(p for p in members if p.name == leader["name"])
    procs.kill(victim)
    survivors = [p for p in members if p is not victim]
    new_generation, assigned = wait_settled(survivors, everything, procs, after=generation)
    assert len(assigned) == 2
    assert leader_event(survivors, new_generation)["lag"] == "offsets"

    # records produced after the failover are consumed too
    more = {big: [25] * 6, small: [25] * 3}
    produce(kafka_bootstrap, more, tag="late")
    ends = {(t, p): n + more[t][p] for t, ns in counts.items() for p, n in enumerate(ns)}

    def all_committed() -> dict[tuple[str, int], int] | None:
        offsets = committed_offsets(admin, group)
        return offsets if all(offsets.get(tp, 0) == end for tp, end in ends.items()) else None

    wait_for(all_committed, 120, "the committed offsets to reach the log ends", procs)

    seen: dict[tuple[str, int], set[int]] = {}
    for p in members:
        for tp, offsets in p.consumed().items():
            seen.setdefault(tp, set()).update(offsets)
    missing = {tp: end - len(seen.get(tp, set()) & set(range(end))) for tp, end in ends.items()}
    assert {tp: n for tp, n in missing.items() if n} == {}
    # after the failover the survivors still own everything, each partition once
    final = current_assignment(survivors)
    assert final is not None
    owned = [tp for tps in final[1].values() for tp in tps]
    assert sorted(owned) == sorted(everything)


@pytest.mark.parametrize("client", CLIENTS)
def test_unreachable_offsets_count_balanced(
    client: str, procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """The leader's offsets reader points at a closed port: the group still gets the lag
    strategy's assignment with every lag 0 (balanced counts) within the deadline, and the
    leader logs one warning for it."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [300, 10, 120, 0, 60, 5, 200], small: [50, 0, 25, 7]}
    create_topics(admin, counts)
    produce(kafka_bootstrap, counts)
    lag_timeout = 2.0
    nowhere = f"127.0.0.1:{closed_port()}"

    unreachable = ["--offsets-bootstrap", nowhere, "--lag-timeout", f"{lag_timeout}"]
    members = [
        procs.start(client, f"{client}-{i}", group, [big, small], *unreachable) for i in range(3)
    ]
    generation, assigned = wait_settled(members, all_partitions(counts), procs)

    assert assigned == core_lag_assignment(counts, None, sorted(assigned))
    for topic in counts:
        per_member = [sum(t == topic for t, _ in tps) for tps in assigned.values()]
        assert max(per_member) - min(per_member) <= 1, (topic, per_member)

    leader = leader_event(members, generation)
    assert leader["lag"] == "unavailable"
    assert nowhere in leader["error"] or "within" in leader["error"], leader["error"]
    assert leader["seconds"] < lag_timeout + 1.0, leader
    # every failed read logged a warning line (exactly one per read: see test_adapters; a
    # leader's assignment that a new rebalance overtook is logged but never reported)
    for p in members:
        warnings = [line for line in p.stderr().splitlines() if "could not read the offsets" in line]
        failures = [e for e in p.of("leader") if e["lag"] == "unavailable"]
        assert len(warnings) >= len(failures), (p.name, warnings, failures)
        assert all(group in line and "as if every lag were 0" in line for line in warnings)
        assert "Traceback" not in p.stderr(), p.stderr()
    leader_proc = next(p for p in members if p.name == leader["name"])
    assert any("WARNING lagassign.kafka.group" in line for line in leader_proc.stderr().splitlines())


def owned_now(proc: Proc) -> tuple[int, list[tuple[str, int]]] | None:
    """(generation, partitions) the process owns after its last assigned/revoked report."""
    with proc.lock:
        changes = [e for e in proc.events if e.get("event") in ("assigned", "revoked")]
    if not changes:
        return None
    last = changes[-1]
    partitions = last["partitions"] if last["event"] == "assigned" else last["assignment"]
    return last["generation"], sorted((t, p) for t, p in partitions)


def wait_owned(
    members: Sequence[Proc], partitions: set[tuple[str, int]], procs: Procs
) -> dict[str, list[tuple[str, int]]]:
    """Each process's partitions once every partition has exactly one owner among ``members``
    and nothing changes for :data:`STABLE_S` (cooperative: members report only changes)."""

    def settled() -> dict[str, list[tuple[str, int]]] | None:
        now = {p.name: owned_now(p) for p in members}
        if any(v is None for v in now.values()):
            return None
        owned = [tp for v in now.values() if v is not None for tp in v[1]]
        if sorted(owned) != sorted(partitions):
            return None
        time.sleep(STABLE_S)
        if {p.name: owned_now(p) for p in members} != now:
            return None
        return {name: v[1] for name, v in now.items() if v is not None}

    names = ", ".join(p.name for p in members)
    return wait_for(settled, SETTLE_TIMEOUT_S, f"{names} to own every partition once", procs)


def test_cooperative_sticky_on_kafka_python(
    procs: Procs, admin: AdminClient, kafka_bootstrap: str
) -> None:
    """kafka-python 3 runs lagassign's cooperative-sticky on the cooperative protocol: when a
    third member joins, the two others keep what they keep (no revoke-everything), revoke only
    what moves, and the newcomer gets those partitions one rebalance later."""
    big, small, group = unique("big"), unique("small"), unique("group")
    counts = {big: [5] * 6, small: [5] * 3}
    create_topics(admin, counts)
    everything = all_partitions(counts)
    coop = ["--strategy", "cooperative-sticky"]

    first = [procs.start("kafka-python", f"coop-{i}", group, [big, small], *coop) for i in range(2)]
    before = wait_owned(first, everything, procs)
    revoked_before = {p.name: len(p.of("revoked")) for p in first}

    newcomer = procs.start("kafka-python", "coop-2", group, [big, small], *coop)
    after = wait_owned([*first, newcomer], everything, procs)

    assert sorted(len(tps) for tps in after.values()) == [3, 3, 3]
    for p in first:
        assert set(after[p.name]) <= set(before[p.name]), "a member got partitions it lacked"
        revocations = p.of("revoked")[revoked_before[p.name] :]
        revoked = {(t, n) for e in revocations for t, n in e["partitions"]}
        assert revoked == set(before[p.name]) - set(after[p.name])
        assert revoked <= set(after[newcomer.name])
    # two phases: the newcomer is given the moved partitions after their owners revoked them
    first_gain = min(e["generation"] for e in newcomer.of("assigned") if e["partitions"])
    revoke_generations = {
        e["generation"] for p in first for e in p.of("revoked")[revoked_before[p.name] :]
    }
    assert revoke_generations and max(revoke_generations) < first_gain
    assert all(e["strategy"] == "cooperative-sticky" for p in procs.procs for e in p.of("leader"))
