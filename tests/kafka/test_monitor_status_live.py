"""Group status and lag seconds from real behaviour: one ``lagassign monitor`` run on the real
broker and real Spark, beside six groups that each behave one way while it runs, each driven by
counts (records produced, offsets committed) and waiting on what the monitor wrote (its
``lag`` and ``groups`` tables, polled with a generous deadline), never on a sleep that must be
long enough:

* **OK**: a real consumer process (kafka-python, ``tests/kafka/consumer_proc.py``) reads a
  topic of known counts to its end, commits, and stays in the group;
* **STOP**: a real consumer process reads a slow 5 records a batch from a topic of 500,
  commits a few times, and is killed (SIGKILL) with lag left;
* **STALL**: a consumer commits the same offset again and again while records keep coming;
* **WARN**: a consumer commits 5 records further each time, and a burst of 20 comes between
  its commits (the monitor sees each commit before the burst, and the burst before the next
  commit);
* **WARN**, slow: a real consumer process reads the paced producer's topic (below) slower than
  it is written and commits after every small batch, several times per micro-batch (each
  commit's lag is counted at the commit's own time, ``lagassign.lag_rules.end_at``);
* **REWIND**: a group at offset 60 is reset to 20 (``alter_consumer_group_offsets``, as
  ``kafka-consumer-groups --reset-offsets`` does) while it is empty;
* **paced**: a producer writes at a steady rate to a topic whose records carry the broker's
  append time (``LogAppendTime``) for the whole run; its group commits once at an offset the
  producer wrote during the run and stops: its ``lag_seconds`` is checked against the
  producer's own record of when that offset was appended.

Spark runs a micro-batch only when ``__consumer_offsets`` has new records; on a real cluster
some group always commits, here a ticker group outside ``--group`` does every half second, so
micro-batches keep coming after the watched groups stop committing.

Pauses of ``MIN_APART_S`` between two commits of one group are not waits for something to
happen: the broker stamps each commit when it receives it, so two commits sent that far apart
are stamped at least that far apart, and the window keeps them as two commits (commits within
``lagassign.status.MIN_DISTANCE_S`` of each other replace one another)."""

from __future__ import annotations

import itertools
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition

from lagassign.status import MIN_DISTANCE_S, WINDOW
from tests.kafka.broker import (
    REQUEST_TIMEOUT_S,
    admin_client,
    commit_from,
    committed_offsets,
    committer,
    create_topics,
    produce,
)
from tests.kafka.processes import Processes, Reporting, wait_for
from tests.kafka.test_monitor_live import FIRST_BATCH_S, on_cluster
from tests.kafka.test_offsets import unique

ROOT = Path(__file__).resolve().parents[2]
CONSUMER = ROOT / "tests" / "kafka" / "consumer_proc.py"
INTERVAL_S = "2"
#: how long any one thing the test waits for may take (generous: a loaded 2-core machine)
DEADLINE_S = 300.0
MIN_APART_S = MIN_DISTANCE_S + 0.1
POLL_S = 1.0

OK_COUNTS = [40, 25]
STOP_COUNT = 500
STALL = (30, 10)  # records at the start, the offset committed again and again
WARN = (20, 10, 5, 20)  # records at the start, first offset, step per commit, burst per commit
REWIND = (100, 60, 20)  # records, the offset committed, the offset it is reset to
RATE = 20.0  # records a second from the paced producer
#: the slow consumer: records a batch and seconds a batch (at most 4 a second of RATE's 20),
#: committing after each batch, so several times per --interval
SLOW = (2, 0.5)
#: records the paced producer has written before the slow consumer starts: lag from its first
#: commit on (a commit without lag is OK, whatever follows)
SLOW_HEAD = 40
#: rows of the slow group checked once its window is full
SLOW_ROWS = 3
#: what the monitor's sample time may lag its log-end read by (the read's own time), seconds
READ_SLACK_S = 1.0
#: lag_seconds must be within this fraction of the true lag in seconds
TOLERANCE = 0.10


class Tables:
    """The monitor's ``lag`` and ``groups`` rows as written so far, each with its micro-batch
    id (``batch``); files read once each (a micro-batch's file is written whole, by rename)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._read: dict[Path, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def rows(self, table: str, group: str) -> list[dict[str, Any]]:
        """``group``'s rows of ``table`` in batch order."""
        with self._lock:
            for path in sorted((self.out / table).glob("date=*/batch-*.parquet")):
                if path not in self._read:
                    batch = int(path.stem.split("-")[1])
                    self._read[path] = [
                        {**r, "batch": batch} for r in pq.read_table(path).to_pylist()
                    ]
            found = [
                r
                for path, rows in self._read.items()
                if path.parent.parent.name == table
                for r in rows
                if r["group"] == group
            ]
        return sorted(found, key=lambda r: r["batch"])


@dataclass
class Run:
    """What the drivers need: the broker, the monitor's tables and process, the children."""

    bootstrap: str
    tables: Tables
    procs: Processes
    monitor: Reporting
    prefix: str
    stop: threading.Event = field(default_factory=threading.Event)

    def wait(self, check: Callable[[], Any], what: str) -> Any:
        return wait_for(check, DEADLINE_S, what, [self.monitor], poll=POLL_S)

    def group(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def first(
        self, table: str, group: str, pred: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any] | None:
        return next((r for r in self.tables.rows(table, group) if pred(r)), None)


def make_topic(bootstrap: str, name: str, counts: list[int], **config: str) -> str:
    topic = unique(name)
    create_topics(admin_client(bootstrap), {topic: len(counts)}, config)
    if any(counts):
        produce(bootstrap, {(topic, p): n for p, n in enumerate(counts) if n})
    return topic


def commit_one(consumer: Any, topic: str, offset: int) -> None:
    commit_from(consumer, {(topic, 0): offset})


def consumer_proc(run: Run, name: str, topic: str, *args: str) -> Reporting:
    return run.procs.start(
        name,
        [
            sys.executable,
            str(CONSUMER),
            "--client",
            "kafka-python",
            "--name",
            name,
            "--bootstrap",
            run.bootstrap,
            "--group",
            run.group(name),
            "--topics",
            topic,
            "--consume",
            "--commit",
            "--max-seconds",
            str(4 * DEADLINE_S),
            *args,
        ],
    )


# -- one driver per group: each returns what the assertions need ------------------------------


def healthy(run: Run) -> dict[str, Any]:
    """Reads everything and commits it; stays in the group to the end."""
    topic = make_topic(run.bootstrap, "st-ok", OK_COUNTS)
    member = consumer_proc(run, "ok", topic)
    group = run.group("ok")
    run.wait(
        lambda: run.first("groups", group, lambda r: r["total_lag"] == 0 and r["members"] == 1),
        "the healthy group caught up, seen with its member",
    )
    run.stop.wait()
    assert member.alive(), member.tail()
    return {"group": group}


def stopped(run: Run) -> dict[str, Any]:
    """Commits a few slow batches with lag left, then is killed."""
    topic = make_topic(run.bootstrap, "st-stop", [STOP_COUNT])
    member = consumer_proc(run, "stop", topic, "--max-records", "5", "--delay", "0.3")
    run.wait(lambda: len(member.of("committed")) >= 3 or None, "three commits of the consumer")
    run.procs.kill(member)
    group = run.group("stop")
    committed = committed_offsets(admin_client(run.bootstrap), group)[(topic, 0)]
    row = run.wait(
        lambda: run.first(
            "groups",
            group,
            lambda r: (
                r["status"] == "STOP"
                and r["members"] == 0
                and r["total_lag"] == STOP_COUNT - committed
            ),
        ),
        "the killed consumer's group STOP with no member",
    )
    return {"group": group, "committed": committed, "row": row}


def stalled(run: Run) -> dict[str, Any]:
    """Commits the same offset while records keep coming, until the monitor says STALL."""
    count, offset = STALL
    topic = make_topic(run.bootstrap, "st-stall", [count])
    group = run.group("stall")
    consumer = committer(run.bootstrap, group)
    producer = Producer({"bootstrap.servers": run.bootstrap})
    try:

        def stall() -> dict[str, Any] | None:
            found = run.first("groups", group, lambda r: r["status"] == "STALL")
            if found is None:
                commit_one(consumer, topic, offset)
                for _ in range(5):
                    producer.produce(topic, b"more", partition=0)
                producer.flush(REQUEST_TIMEOUT_S)
                time.sleep(MIN_APART_S)
            return found

        row = run.wait(stall, "STALL of the group committing one offset")
    finally:
        consumer.close()
    return {"group": group, "row": row}


def warned(run: Run) -> dict[str, Any]:
    """Commits ``step`` further each time; a burst of ``burst`` records comes between two
    commits, after the monitor saw the first of them in two micro-batches, and the next commit
    once the monitor read the log end after the burst (a commit's lag is the log end at its
    time, interpolated between the monitor's reads: a burst it has not read yet would be spread
    over the time since its last read)."""
    count, offset, step, burst = WARN
    topic = make_topic(run.bootstrap, "st-warn", [count])
    group = run.group("warn")
    consumer = committer(run.bootstrap, group)
    commits: list[int] = []
    bursts: list[int] = []  # the log end after each burst
    try:

        def warn() -> dict[str, Any] | None:
            found = run.first("groups", group, lambda r: r["status"] == "WARN")
            if found is None:
                if commits:
                    rows = run.tables.rows("lag", group)
                    if sum(r["committed"] == commits[-1] for r in rows) < 2:
                        return None
                    if len(bursts) < len(commits):
                        produce(run.bootstrap, {(topic, 0): burst})
                        bursts.append(count + burst * len(commits))
                    if not any(r["end"] >= bursts[-1] for r in rows):
                        return None
                commits.append(offset + step * len(commits))
                commit_one(consumer, topic, commits[-1])
            return found

        row = run.wait(warn, "WARN of the group falling behind the bursts")
    finally:
        consumer.close()
    return {"group": group, "row": row, "commits": commits}


def slow(run: Run, producer: Paced) -> dict[str, Any]:
    """A real consumer process reads the paced topic ``SLOW[0]`` records a batch, ``SLOW[1]`` s
    a batch, slower than ``RATE`` come, and commits after every batch; stays in the group.
    Returns the group's first ``SLOW_ROWS`` rows from the micro-batch on where its lag rows
    have shown ``WINDOW`` committed offsets (its commit window full)."""
    group = run.group("slow")
    run.wait(lambda: producer.delivered() >= SLOW_HEAD or None, "records for the slow consumer")
    # Its commits must come after the monitor's first log-end sample of the topic (the paced
    # group's commit of 0 has it sampled): a commit before the oldest sample reads that sample's
    # end (lag_rules.end_at), so the lags of such commits shrink from one to the next, and a
    # window holding them is OK. Most likely why a fresh-clone CI run at load 1-3 judged the
    # first window OK and the next ones WARN.
    run.wait(lambda: run.tables.rows("lag", run.group("paced")) or None, "the paced topic sampled")
    records, delay = SLOW
    member = consumer_proc(
        run, "slow", producer.topic, "--max-records", str(records), "--delay", str(delay)
    )

    def judged() -> list[dict[str, Any]] | None:
        offsets: set[int] = set()
        for r in run.tables.rows("lag", group):
            offsets.add(r["committed"])
            if len(offsets) == WINDOW:
                rows = [g for g in run.tables.rows("groups", group) if g["batch"] >= r["batch"]]
                return rows[:SLOW_ROWS] if len(rows) >= SLOW_ROWS else None
        return None

    rows = run.wait(judged, "the slow consumer's window full and judged")
    assert member.alive(), member.tail()
    return {"group": group, "rows": rows, "lag": run.tables.rows("lag", group)}


def rewound(run: Run) -> dict[str, Any]:
    """Commits ``REWIND[1]``, seen by the monitor, and is reset to ``REWIND[2]`` while empty."""
    count, first, earlier = REWIND
    topic = make_topic(run.bootstrap, "st-rewind", [count])
    group = run.group("rewind")
    consumer = committer(run.bootstrap, group)
    try:
        commit_one(consumer, topic, first)
        committed_at = time.monotonic()
    finally:
        consumer.close()
    run.wait(
        lambda: run.first("lag", group, lambda r: r["committed"] == first),
        "the first commit in the lag table",
    )
    time.sleep(max(0.0, committed_at + MIN_APART_S - time.monotonic()))
    admin = admin_client(run.bootstrap)
    futures = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [KafkaTopicPartition(topic, 0, earlier)])],
        request_timeout=REQUEST_TIMEOUT_S,
    )
    futures[group].result(timeout=REQUEST_TIMEOUT_S)
    row = run.wait(
        lambda: run.first("groups", group, lambda r: r["status"] == "REWIND"),
        "REWIND of the reset group",
    )
    return {
        "group": group,
        "row": row,
        "lag": run.first("lag", group, lambda r: r["batch"] == row["batch"]),
    }


@dataclass
class Paced:
    """A producer of ``RATE`` records a second on a thread, each record's broker append time
    (LogAppendTime) in ``appended[offset]``."""

    bootstrap: str
    topic: str
    appended: dict[int, float] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)
    error: list[str] = field(default_factory=list)

    def run(self) -> None:
        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0})

        def delivered(err: Any, msg: Any) -> None:
            if err is not None:
                self.error.append(str(err))
            else:
                self.appended[msg.offset()] = msg.timestamp()[1] / 1000

        began = time.monotonic()
        sent = 0
        while not self.done.is_set():
            # the n-th record at began + n / RATE: a late one does not shift the rest
            time.sleep(max(0.0, began + sent / RATE - time.monotonic()))
            producer.produce(self.topic, b"paced", partition=0, on_delivery=delivered)
            sent += 1
            producer.poll(0)
        producer.flush(REQUEST_TIMEOUT_S)

    def delivered(self) -> int:
        """Offsets 0 .. n − 1 delivered: n."""
        n = 0
        while n in self.appended:
            n += 1
        return n


def paced(run: Run, producer: Paced) -> dict[str, Any]:
    """Commits 0 (so the monitor samples the topic's log end from then on), then, once three
    micro-batches sampled it, the offset the producer has reached, and stops committing. Waits
    until a row's true lag in seconds is ten times the error the samples allow: the time the
    log end passed the committed offset lies between the two samples around it, so
    interpolation is off by at most their distance (plus the read's own time)."""
    group = run.group("paced")
    consumer = committer(run.bootstrap, group)
    try:
        commit_one(consumer, producer.topic, 0)
        run.wait(lambda: len(run.tables.rows("lag", group)) >= 3 or None, "three samples")
        committed = producer.delivered()
        commit_one(consumer, producer.topic, committed)
    finally:
        consumer.close()

    def settled() -> dict[str, Any] | None:
        rows = run.tables.rows("lag", group)
        samples = [(r["time"].timestamp(), r["end"]) for r in rows]
        after = [k for k, (_, end) in enumerate(samples) if end > committed]
        if not after or after[0] == 0:
            return None
        gap = samples[after[0]][0] - samples[after[0] - 1][0]
        appended = producer.appended.get(committed)
        for r in rows:
            if appended is not None and r["committed"] == committed and r["lag"] > 0:
                true = r["time"].timestamp() - appended
                if true >= (gap + READ_SLACK_S) / TOLERANCE:
                    return {"row": r, "true": true, "gap": gap}
        return None

    found = run.wait(settled, "a lag in seconds ten times the samples' spacing")
    return {"group": group, "committed": committed, **found}


# -- the one run ------------------------------------------------------------------------------


def ticker(bootstrap: str, group: str, topic: str, stop: threading.Event) -> None:
    """Commits every half second for a group the monitor does not watch."""
    consumer = committer(bootstrap, group)
    try:
        n = 0
        while not stop.wait(0.5):
            n += 1
            commit_one(consumer, topic, n % 2)
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def statuses(
    kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Runs the monitor and the six drivers; what each driver returned, by its name."""
    tmp = tmp_path_factory.mktemp("monitor-status")
    prefix = unique("st")
    out = tmp / "out"
    procs = Processes(tmp)
    paced_topic = make_topic(
        kafka_bootstrap, "st-paced", [0], **{"message.timestamp.type": "LogAppendTime"}
    )
    producer = Paced(kafka_bootstrap, paced_topic)
    tick_topic = make_topic(kafka_bootstrap, "st-tick", [2])
    stop_ticking = threading.Event()
    monitor = procs.start(
        "monitor",
        on_cluster(kafka_bootstrap, f"{re.escape(prefix)}-.*", out, "--interval", INTERVAL_S),
    )
    run = Run(kafka_bootstrap, Tables(out), procs, monitor, prefix)
    threads = [
        threading.Thread(target=producer.run, daemon=True),
        threading.Thread(
            target=ticker,
            args=(kafka_bootstrap, unique("tick"), tick_topic, stop_ticking),
            daemon=True,
        ),
    ]
    try:
        for t in threads:
            t.start()
        wait_for(
            lambda: monitor.latest("raw"), FIRST_BATCH_S, "the monitor's first batch", [monitor]
        )
        with ThreadPoolExecutor(max_workers=7) as pool:
            futures = {
                "OK": pool.submit(healthy, run),
                "STOP": pool.submit(stopped, run),
                "STALL": pool.submit(stalled, run),
                "WARN": pool.submit(warned, run),
                "slow": pool.submit(slow, run, producer),
                "REWIND": pool.submit(rewound, run),
                "paced": pool.submit(paced, run, producer),
            }
            try:
                results = {name: f.result() for name, f in futures.items() if name != "OK"}
            finally:
                run.stop.set()  # the healthy group's member stays until the others are done
            results["OK"] = futures["OK"].result()
        monitor.popen.send_signal(signal.SIGTERM)
        monitor.popen.wait(timeout=FIRST_BATCH_S)
        assert monitor.popen.returncode == 0, monitor.tail(40)
        assert not producer.error, producer.error[:3]
        results["tables"] = run.tables
        yield results
    finally:
        run.stop.set()
        producer.done.set()
        stop_ticking.set()
        for t in threads:
            t.join(timeout=REQUEST_TIMEOUT_S)
        procs.close()


def test_statuses_from_real_behaviour(statuses: dict[str, Any]) -> None:
    tables: Tables = statuses["tables"]
    # OK: from its first row without lag on, every row of the healthy group is OK, and it
    # kept its one member to the last micro-batch
    ok = tables.rows("groups", statuses["OK"]["group"])
    caught_up = next(k for k, r in enumerate(ok) if r["total_lag"] == 0)
    assert [(r["status"], r["total_lag"]) for r in ok[caught_up:]] == [("OK", 0)] * len(
        ok[caught_up:]
    )
    assert ok[-1]["members"] == 1
    # STOP: the killed consumer's last commit, lag left
    stop = statuses["STOP"]
    assert 0 < stop["committed"] < STOP_COUNT
    assert (stop["row"]["status"], stop["row"]["members"]) == ("STOP", 0)
    # STALL: one offset committed while the lag grew
    stall = statuses["STALL"]
    lags = [r for r in tables.rows("lag", stall["group"]) if r["batch"] <= stall["row"]["batch"]]
    assert {r["committed"] for r in lags} == {STALL[1]}
    # the window's second commit came after 5 more records: the lag grew from the first
    assert stall["row"]["status"] == "STALL"
    assert stall["row"]["total_lag"] == lags[-1]["lag"] >= STALL[0] - STALL[1] + 5
    # WARN: at least two commits, each further on, and the lag at each commit's first row
    # larger than at the one before
    warn = statuses["WARN"]
    rows = tables.rows("lag", warn["group"])
    assert warn["row"]["status"] == "WARN"
    at_warn = next(r["committed"] for r in rows if r["batch"] == warn["row"]["batch"])
    commits = [c for c in warn["commits"] if c <= at_warn]
    assert len(commits) >= 2 and commits == sorted(set(commits))
    lag_at = [next(r["lag"] for r in rows if r["committed"] == c) for c in commits]
    assert lag_at == sorted(set(lag_at)), lag_at
    # WARN, slow: a member reading slower than the producer writes, WARN in every row once its
    # window is full, with its one member; it committed several times between two
    # micro-batches (its offset moved by more than one batch of records)
    slow = statuses["slow"]
    assert [(r["status"], r["members"]) for r in slow["rows"]] == [("WARN", 1)] * SLOW_ROWS
    committed = [r["committed"] for r in slow["lag"]]
    assert any(b - a > SLOW[0] for a, b in itertools.pairwise(committed)), committed
    # REWIND: reset from 60 to 20 of 100
    rewind = statuses["REWIND"]
    count, _, earlier = REWIND
    assert rewind["row"]["status"] == "REWIND"
    assert (rewind["lag"]["committed"], rewind["row"]["total_lag"]) == (earlier, count - earlier)


def test_lag_seconds_against_a_paced_producer(statuses: dict[str, Any]) -> None:
    """The row's lag_seconds is within 10% of how long ago the broker appended the committed
    offset (the producer's LogAppendTime), the samples around it being ten times closer
    together than that lag."""
    found = statuses["paced"]
    row, true = found["row"], found["true"]
    assert row["lag_seconds_estimated"] is False
    assert abs(row["lag_seconds"] - true) <= TOLERANCE * true, (row, true, found["gap"])
