"""``lagassign monitor`` at scale: freshness, records decoded per second and state size, beside
the same groups polled the kafka-lag-exporter way.

A fresh development broker (scripts/kafka.sh) gets ``--topics`` topics whose partitions add up
to ``--partitions`` (10 × 10 by default), a few thousand records in each. A generator process
commits every partition of each of ``--groups`` groups (1,000 by default) once a second, as
``AdminClient.alter_consumer_group_offsets`` for groups without members (an OffsetCommit per
group, like a member's commit of its whole assignment): round r commits offset r everywhere,
and the generator logs when the broker acknowledged each group's commit of each round. No
consumer processes: the monitor reads only ``__consumer_offsets``, where these commits land
exactly as a member's would.

1. **monitor**: ``lagassign monitor --interval 5 --master local[2]`` for ``--minutes`` (10)
   from the generator's start. Freshness of a commit: the ``time`` of the first ``lag`` row
   of its group (topic 0, partition 0: a group's partitions are committed in one request, so
   they show up in the same micro-batch) whose committed offset reaches its round, minus
   the time the broker acknowledged the commit; beside it the same to the moment that row's
   file was written (visible to a reader). Commits made before the first micro-batch ended
   (Spark's start) are left out. Records read per second: the sum of the progress lines'
   records (what Spark read; the driver decodes the last per key) over the sum of their batch
   seconds (the batches' own speed), and after the first micro-batch over the time from its
   end to the last one's. The monitor's state (``_checkpoint``: the commit state, samples,
   windows kept per micro-batch, and Spark's own offsets log) and its processes' memory
   every minute.
2. **baseline** (kafka-lag-exporter's way: the admin API every interval): for
   ``--baseline-s`` more seconds, with the generator still committing, every ``--interval``
   one ``list_consumer_group_offsets`` per group (all in flight at once) and one
   ``list_offsets`` of every partition's log end. Freshness: the time a poll's answer for
   the group arrived whose committed offset reaches the round, minus the commit's time.

    .venv/bin/python bench/monitor.py [--groups 1000] [--partitions 100] [--minutes 10]

Prints a table and writes bench/results/monitor.json and monitor.md (``--name`` for another
name). CPU is each side's processes (the monitor: its Python driver and Spark's JVM; the
baseline: its own process) over the wall time.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import math
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _broker import (
    Broker,
    admin_client,
    create_topics,
    measure_and_save,
    produce,
)
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
RECORDS_PER_PARTITION = 2000
REQUEST_TIMEOUT_S = 60.0
GROUP_PREFIX = "bench-monitor-"
#: __consumer_offsets segments: the development broker's 1 MiB would mean thousands of files
OFFSETS_SEGMENT_BYTES = str(256 * 1024 * 1024)
CLK_TCK = os.sysconf("SC_CLK_TCK")


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def topics_of(partitions: int, topics: int) -> dict[str, int]:
    per, extra = divmod(partitions, topics)
    return {f"bench-monitor-t{i}": per + (1 if i < extra else 0) for i in range(topics)}


# -- the generator (a process of its own) ----------------------------------------------------


def generate(args: argparse.Namespace) -> None:
    """Commits round r to every partition of every group, a round a second (late rounds start
    at once), until SIGTERM; one JSON line per round on stdout: its number, when it began and,
    per group, when the broker acknowledged the commit (null: failed)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    admin = admin_client(args.bootstrap)
    partitions = [
        (t, p) for t, n in topics_of(args.partitions, args.topics).items() for p in range(n)
    ]
    groups = [f"{GROUP_PREFIX}{g:04d}" for g in range(args.groups)]
    began = time.monotonic()
    r = 0
    while not stop.is_set():
        r += 1
        wait = began + (r - 1) * args.every - time.monotonic()
        if wait > 0 and stop.wait(wait):
            break
        started = time.time()
        futures, done = [], Acks(len(groups))
        for i, group in enumerate(groups):
            request = ConsumerGroupTopicPartitions(
                group, [TopicPartition(t, p, r) for t, p in partitions]
            )
            future = admin.alter_consumer_group_offsets(
                [request], request_timeout=REQUEST_TIMEOUT_S
            )[group]
            future.add_done_callback(done.callback(i))
            futures.append(future)
        for f in futures:
            with contextlib.suppress(Exception):  # a failed commit is logged as null
                f.result(timeout=REQUEST_TIMEOUT_S)
        print(json.dumps({"round": r, "began": started, "done": done.times}), flush=True)


class Acks:
    """When each of ``n`` requests was answered without an error (None: not, or failed)."""

    def __init__(self, n: int) -> None:
        self.times: list[float | None] = [None] * n

    def callback(self, i: int) -> Any:
        def answered(future: Any) -> None:
            if future.exception() is None:
                self.times[i] = time.time()

        return answered


def read_rounds(path: Path) -> list[dict[str, Any]]:
    rounds = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # the last line, cut by the stop
            rounds.append(json.loads(line))
    return rounds


# -- measuring processes ---------------------------------------------------------------------


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def usage(pid: int) -> tuple[float, float]:
    """CPU seconds and resident MiB of ``pid``'s process tree now."""
    cpu, rss = 0.0, 0.0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / CLK_TCK
            rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except (OSError, IndexError, ValueError):
            continue
    return cpu, rss


def size_mib(folder: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for f in files:
            try:
                total += (Path(root) / f).stat().st_size
            except OSError:
                continue
    return total / 2**20


# -- the two sides ---------------------------------------------------------------------------


def run_monitor(args: argparse.Namespace, bootstrap: str, work: Path) -> dict[str, Any]:
    out = work / "out"
    cmd = [
        sys.executable,
        "-m",
        "lagassign.cli",
        "monitor",
        "--bootstrap-server",
        bootstrap,
        "--out",
        str(out),
        "--group",
        f"{GROUP_PREFIX}.*",
        "--interval",
        str(args.interval),
        "--duration",
        str(args.minutes * 60),
        "--master",
        "local[2]",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.driver.memory=2g",
    ]
    lines: list[tuple[float, str]] = []
    began = time.time()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=(work / "monitor.stderr").open("w"),
        text=True,
        cwd=ROOT,
        start_new_session=True,  # its JVM in its own process group, ended with it
    )

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.time(), line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    state: list[dict[str, Any]] = []
    cpu = 0.0
    deadline = time.monotonic() + args.minutes * 60 + args.grace_s
    next_sample = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        cpu_now, rss = usage(proc.pid)
        cpu = max(cpu, cpu_now)
        if time.monotonic() >= next_sample:
            next_sample += 60
            state.append(
                {
                    "minute": len(state) + 1,
                    "checkpoint_mib": round(size_mib(out / "_checkpoint"), 2),
                    "kept_state_mib": round(size_mib(out / "_checkpoint" / "commits"), 2),
                    "rss_mib": round(rss),
                    "batches": sum(1 for _, line in lines if line.startswith("batch ")),
                }
            )
            print(f"monitor: {state[-1]}", file=sys.stderr)
        time.sleep(2)
    cut = proc.poll() is None
    if cut:  # still in a micro-batch long after --duration: ended, the measure says so
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    reader.join(timeout=10)
    ended = time.time()
    return {
        "began": began,
        "ended": ended,
        "cut": cut,
        "exit": proc.returncode,
        "cpu_s": round(cpu, 1),
        "lines": lines,
        "state": state,
        "out": out,
    }


def lag_rows(out: Path) -> list[dict[str, Any]]:
    """Topic 0, partition 0 of every group in every micro-batch, with the file's write time."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    first_topic = next(iter(topics_of(1, 1)))
    rows = []
    for path in sorted((out / "lag").glob("date=*/batch-*.parquet")):
        table = pq.read_table(path, columns=["time", "group", "topic", "partition", "committed"])
        mask = pc.and_(pc.equal(table["topic"], first_topic), pc.equal(table["partition"], 0))
        written = path.stat().st_mtime
        for r in table.filter(mask).to_pylist():
            rows.append({**r, "written": written})
    return rows


def freshness(
    rounds: list[dict[str, Any]],
    seen: dict[str, list[tuple[float, int, float]]],
    since: float,
    until: float,
) -> tuple[list[float], list[float], int]:
    """For every commit acknowledged between ``since`` and ``until``: the first sighting
    (time, committed, written) of its group whose committed offset reaches its round, minus
    its time (freshness by the sighting's time, by its written time, commits never seen)."""
    by_time, by_written, unseen = [], [], 0
    # a group's sightings in time order commit rounds in order: a bisection finds the first
    reached = {g: [c for _, c, _ in s] for g, s in seen.items()}
    for rnd in rounds:
        r = rnd["round"]
        for g, acked in enumerate(rnd["done"]):
            if acked is None or not since <= acked <= until:
                continue
            group = f"{GROUP_PREFIX}{g:04d}"
            k = bisect.bisect_left(reached.get(group, []), r)
            if k == len(reached.get(group, [])):
                unseen += 1
                continue
            hit = seen[group][k]
            by_time.append(max(0.0, hit[0] - acked))
            by_written.append(max(0.0, hit[2] - acked))
    return by_time, by_written, unseen


def baseline(args: argparse.Namespace, bootstrap: str) -> dict[str, Any]:
    """kafka-lag-exporter's way for ``--baseline-s``: every interval, each group's committed
    offsets and every partition's log end through the admin API."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    admin = admin_client(bootstrap)
    partitions = [
        (t, p) for t, n in topics_of(args.partitions, args.topics).items() for p in range(n)
    ]
    groups = [f"{GROUP_PREFIX}{g:04d}" for g in range(args.groups)]
    seen: dict[str, list[tuple[float, int, float]]] = {g: [] for g in groups}
    polls: list[float] = []
    failed = 0
    cpu0, began = time.process_time(), time.monotonic()
    n = 0
    while time.monotonic() - began < args.baseline_s:
        wait = began + n * args.interval - time.monotonic()
        n += 1
        if wait > 0:
            time.sleep(wait)
        start = time.monotonic()
        ends = admin.list_offsets(
            {TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions},
            request_timeout=REQUEST_TIMEOUT_S,
        )
        futures = {
            g: admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(g)], request_timeout=REQUEST_TIMEOUT_S
            )[g]
            for g in groups
        }
        answers = Acks(len(groups))
        for i, f in enumerate(futures.values()):
            f.add_done_callback(answers.callback(i))
        for f in ends.values():
            f.result(timeout=REQUEST_TIMEOUT_S)
        for (g, f), arrived in zip(futures.items(), answers.times, strict=True):
            try:
                result = f.result(timeout=REQUEST_TIMEOUT_S)
            except Exception:
                failed += 1
                continue
            first = [
                tp.offset
                for tp in result.topic_partitions
                if (tp.topic, tp.partition) == partitions[0]
            ]
            t = arrived if arrived is not None else time.time()
            seen[g].append((t, first[0] if first else -1, t))
        polls.append(time.monotonic() - start)
    return {
        "seen": seen,
        "polls": polls,
        "failed": failed,
        "cpu_s": round(time.process_time() - cpu0, 1),
        "wall_s": round(time.monotonic() - began, 1),
    }


def run(args: argparse.Namespace, broker: Broker) -> dict[str, Any]:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = admin_client(broker.bootstrap)
    topics = topics_of(args.partitions, args.topics)
    create_topics(admin, topics)  # and waits for every partition's leader
    produce(
        broker.bootstrap,
        {(t, p): RECORDS_PER_PARTITION for t, n in topics.items() for p in range(n)},
        config={"linger.ms": "50", "acks": "1"},
    )
    # __consumer_offsets exists once a group has committed
    from _broker import commit

    commit(broker.bootstrap, "lagassign-bench-setup", {(next(iter(topics)), 0): 1})
    resource = ConfigResource(
        ResourceType.TOPIC,
        "__consumer_offsets",
        incremental_configs=[
            ConfigEntry(
                "segment.bytes", OFFSETS_SEGMENT_BYTES, incremental_operation=AlterConfigOpType.SET
            )
        ],
    )
    for f in admin.incremental_alter_configs([resource]).values():
        f.result(timeout=REQUEST_TIMEOUT_S)

    work = Path(tempfile.mkdtemp(prefix="lagassign-bench-monitor-"))
    rounds_path = work / "rounds.jsonl"
    load_before = loadavg()
    generator = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--generate",
            "--bootstrap",
            broker.bootstrap,
            "--groups",
            str(args.groups),
            "--partitions",
            str(args.partitions),
            "--topics",
            str(args.topics),
            "--every",
            str(args.every),
        ],
        stdout=rounds_path.open("w"),
        stderr=(work / "generator.stderr").open("w"),
        cwd=ROOT,
    )
    try:
        generator_cpu0 = time.time()
        monitor = run_monitor(args, broker.bootstrap, work)
        load_mid = loadavg()
        print("baseline ...", file=sys.stderr)
        polled = baseline(args, broker.bootstrap)
    finally:
        generator_cpu, _ = usage(generator.pid)
        generator.send_signal(signal.SIGTERM)
        try:
            generator.wait(timeout=REQUEST_TIMEOUT_S * 2)
        except subprocess.TimeoutExpired:
            generator.kill()
            generator.wait()
    load_after = loadavg()
    rounds = read_rounds(rounds_path)

    timed = [(t, line) for t, line in monitor["lines"] if line.startswith("batch ")]
    batches = [line for _, line in timed]
    first_end = timed[0][0] if timed else None
    # records Spark read, and those decoded on the driver: the last per key when the
    # executors reduced the batch
    records = [int(b.split(" records")[0].rsplit(" ", 1)[1]) for b in batches]
    decoded = [
        int(b.split(" last per key")[0].rsplit(", ", 1)[1]) if " last per key" in b else n
        for b, n in zip(batches, records, strict=True)
    ]
    seconds = [float(b.split(") in ")[1].split(" s")[0]) for b in batches]
    sightings: dict[str, list[tuple[float, int, float]]] = {}
    for r in lag_rows(monitor["out"]):
        sightings.setdefault(r["group"], []).append(
            (r["time"].timestamp(), r["committed"], r["written"])
        )
    for s in sightings.values():
        s.sort()
    # commits from the end of the first micro-batch (Spark's start and its backlog) to the
    # last but one micro-batch's sample: the last one started after it, so each was seen by
    # then, or never
    samples = sorted({t for s in sightings.values() for t, _, _ in s})
    until = samples[-2] if len(samples) > 1 else 0.0
    since = first_end if first_end is not None else monitor["ended"]
    m_time, m_written, m_unseen = freshness(rounds, sightings, since, until)
    polled_times = [t for s in polled["seen"].values() for t, _, _ in s]
    b_time, _, b_unseen = freshness(
        rounds, polled["seen"], min(polled_times, default=0.0), max(polled_times, default=0.0)
    )
    # commits the generator made: offered rate over the monitor's run
    acked = [d for rnd in rounds for d in rnd["done"] if d is not None]
    in_run = [d for d in acked if monitor["began"] <= d <= monitor["ended"]]
    run_s = monitor["ended"] - monitor["began"]
    return {
        "groups": args.groups,
        "partitions": args.partitions,
        "topics": args.topics,
        "target_commits_per_s": round(args.groups * args.partitions / args.every),
        "interval_s": args.interval,
        "minutes": args.minutes,
        "grace_s": args.grace_s,
        "offered_commits_per_s": round(len(in_run) * args.partitions / run_s) if run_s else None,
        "rounds": len(rounds),
        "failed_group_commits": sum(1 for rnd in rounds for d in rnd["done"] if d is None),
        "generator_cpu_s": round(generator_cpu, 1),
        "generator_wall_s": round(time.time() - generator_cpu0, 1),
        "monitor": {
            "batches": len(batches),
            "cut_after_duration": monitor["cut"],
            "exit": monitor["exit"],
            "records": sum(records),
            "decoded": sum(decoded),
            "batch_seconds": round(sum(seconds), 1),
            "decoded_per_batch_s": round(sum(records) / sum(seconds)) if sum(seconds) else None,
            # after the first micro-batch: its records over the time from its end to the last's
            "decoded_per_wall_s": (
                round(sum(records[1:]) / (timed[-1][0] - timed[0][0]))
                if len(timed) > 1 and timed[-1][0] > timed[0][0]
                else None
            ),
            "largest_batch_records": max(records, default=0),
            "longest_batch_s": max(seconds, default=0.0),
            "first_batch_after_s": round(first_end - monitor["began"], 1) if first_end else None,
            "freshness_p50_s": percentile(m_time, 0.5),
            "freshness_p95_s": percentile(m_time, 0.95),
            "written_p50_s": percentile(m_written, 0.5),
            "written_p95_s": percentile(m_written, 0.95),
            "commits_measured": len(m_time),
            "commits_unseen": m_unseen,
            "cpu_s": monitor["cpu_s"],
            "wall_s": round(run_s, 1),
            "state": monitor["state"],
            "progress_tail": batches[-3:],
        },
        "baseline": {
            "polls": len(polled["polls"]),
            "poll_p50_s": percentile(polled["polls"], 0.5),
            "poll_p95_s": percentile(polled["polls"], 0.95),
            "failed": polled["failed"],
            "freshness_p50_s": percentile(b_time, 0.5),
            "freshness_p95_s": percentile(b_time, 0.95),
            "commits_measured": len(b_time),
            "commits_unseen": b_unseen,
            "cpu_s": polled["cpu_s"],
            "wall_s": polled["wall_s"],
        },
        "load_before": load_before,
        "load_mid": load_mid,
        "load_after": load_after,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }


def s(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def render(result: dict[str, Any]) -> tuple[Table, str]:
    m, b = result["monitor"], result["baseline"]
    rows = [
        (
            "freshness p50 / p95 (s)",
            f"{s(m['freshness_p50_s'])} / {s(m['freshness_p95_s'])}",
            f"{s(b['freshness_p50_s'])} / {s(b['freshness_p95_s'])}",
        ),
        (
            "… to the row written (s)",
            f"{s(m['written_p50_s'])} / {s(m['written_p95_s'])}",
            "same (answer in hand)",
        ),
        (
            "commits measured / never seen",
            f"{m['commits_measured']:,} / {m['commits_unseen']:,}",
            f"{b['commits_measured']:,} / {b['commits_unseen']:,}",
        ),
        ("records read / s (batch time)", f"{m['decoded_per_batch_s'] or 0:,}", "—"),
        ("records read / s (wall, after batch 0)", f"{m['decoded_per_wall_s'] or 0:,}", "—"),
        ("micro-batches / polls", f"{m['batches']}", f"{b['polls']}"),
        ("poll p50 / p95 (s)", "—", f"{b['poll_p50_s'] or 0:.2f} / {b['poll_p95_s'] or 0:.2f}"),
        ("CPU s / wall s", f"{m['cpu_s']} / {m['wall_s']}", f"{b['cpu_s']} / {b['wall_s']}"),
    ]
    last = m["state"][-1] if m["state"] else {}
    cut = (
        f" (ended by SIGKILL: still in a micro-batch {result['grace_s']:.0f} s after --duration)"
        if m["cut_after_duration"]
        else ""
    )
    table = Table(
        title=f"monitor vs admin-API polling: {result['groups']:,} groups × "
        f"{result['partitions']} partitions"
    )
    for c in ("", "lagassign monitor", "kafka-lag-exporter way"):
        table.add_column(c, justify="right")
    for row in rows:
        table.add_row(*row)
    lines = [
        f"Real Kafka 4.4 broker (scripts/kafka.sh, one node), {result['groups']:,} groups × "
        f"{result['partitions']} partitions ({result['topics']} topics), each group committing "
        f"all its partitions every {1 if result['target_commits_per_s'] else '?'} s: target "
        f"{result['target_commits_per_s']:,} commits/s; the generator (one process, "
        f"alter_consumer_group_offsets per group) reached "
        f"**{result['offered_commits_per_s'] or 0:,} "
        f"commits/s** during the monitor's run ({result['failed_group_commits']} group commits "
        f"failed). Monitor: local[2], interval {result['interval_s']} s, "
        f"{result['minutes']} min{cut}; "
        f"first micro-batch {s(m['first_batch_after_s'])} s after start (Spark's start and the "
        f"backlog of commits made meanwhile; commits before it are not measured). Baseline: the "
        f"same groups polled every {result['interval_s']} s through the admin API "
        f"(list_consumer_group_offsets per group, list_offsets of every partition) while the "
        f"generator kept committing. Load average {result['load_before']} before, "
        f"{result['load_mid']} between, {result['load_after']} after, on "
        f"{result['machine']['cpus']} cores shared with other work.",
        "",
        "| | lagassign monitor | kafka-lag-exporter way |",
        "|---|---:|---:|",
        *(f"| {a} | {x} | {y} |" for a, x, y in rows),
        "",
        f"Largest micro-batch {m['largest_batch_records']:,} records, longest "
        f"{m['longest_batch_s']:.1f} s; {m['records']:,} records read ({m['decoded']:,} decoded "
        f"on the driver, the last per key) in {m['batch_seconds']} s of "
        f"batches over {m['wall_s']} s.",
        "",
        "State after each minute (the checkpoint: kept commit state, samples and windows, and "
        "Spark's offsets log; resident memory of the monitor's driver and JVM):",
        "",
        "| minute | micro-batches | checkpoint MiB | kept state MiB | RSS MiB |",
        "|---:|---:|---:|---:|---:|",
        *(
            f"| {x['minute']} | {x['batches']} | {x['checkpoint_mib']} | "
            f"{x['kept_state_mib']} | {x['rss_mib']:,} |"
            for x in m["state"]
        ),
        "",
        f"After {last.get('minute', '—')} min: checkpoint {last.get('checkpoint_mib', '—')} MiB.",
    ]
    return table, "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument(
        "--every", type=float, default=1.0, help="seconds between a group's commits"
    )
    parser.add_argument("--interval", type=int, default=5)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--grace-s", type=float, default=180.0, help="after --duration")
    parser.add_argument("--baseline-s", type=float, default=120.0)
    parser.add_argument("--name", default="monitor")
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate(args)
        return
    if not (args.groups > 0 and 0 < args.topics <= args.partitions and args.minutes > 0):
        parser.error("--groups, --topics ≤ --partitions and --minutes must be positive")
    measure_and_save(args.name, lambda broker: run(args, broker), render)


if __name__ == "__main__":
    main()
