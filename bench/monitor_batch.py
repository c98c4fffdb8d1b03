"""One ``lagassign monitor`` micro-batch on the driver at bench/monitor.py's shape, without
Spark or a broker: CPU seconds per micro-batch and per step, now and (``--before REV``) at an
earlier revision, side by side in one run.

:class:`lagassign.spark.monitor.batch.MonitorBatches` runs ``--batches`` micro-batches (12: the
commit windows fill at 10) of ``--groups`` groups × ``--partitions`` partitions (1,000 × 100 in
10 topics), every partition of every group committed once per micro-batch (what the query's
reduction by key hands the driver at 100,000 commits a second), 5 s apart in commit time and
clock. The log offsets are a fixed answer (bench/monitor.py's topics get no records during its
run) and every group is described without members (its groups have none), so what is
measured is the driver's own Python: decoding and applying the records, lag rows, windows,
samples, statuses, plans, the state and tables written, the live report. Not measured: Spark's
reduction of the records on the executors, the log-end read and the groups' description
(a broker's; at 1,000 groups 0.5-0.9 s of wall time and ~0.1 s of CPU on the development
broker).

    .venv/bin/python bench/monitor_batch.py [--groups 1000] [--partitions 100] [--before REV]

Steps nest where one calls another (the sample copies the kept state), so they add up to more
than the whole. The last row is the time Python's cycle collector took over the same
micro-batches, in them or between them (where the monitor's own Spark work runs), so a
collection moved out of the micro-batch is still counted.

Prints a table (CPU seconds, mean of the last 3 micro-batches) and writes
bench/results/monitor-batch.json and .md. ``--before`` runs the same in a copy of REV's
``src`` and ``tests`` (``git archive``) in a process of its own.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
MEASURED = 3
T0 = datetime(2026, 11, 25, 1, 0, 0, tzinfo=UTC)
#: (module, attribute, step): the steps timed, where the revision has them
STEPS = [
    ("lagassign.spark.monitor.batch.MonitorBatches", "sample", "log ends read (sample)"),
    ("lagassign.spark.monitor.batch._Kept", "copy", "kept state copied"),
    ("lagassign.spark.monitor.commits.CommitState", "apply", "records decoded and applied"),
    ("lagassign.spark.monitor.windows.CommitWindows", "add", "commit windows"),
    ("lagassign.spark.monitor.batch", "lag_rows", "lag rows"),
    ("lagassign.spark.monitor.plans.MonitorPlans", "update", "plans"),
    ("lagassign.spark.monitor.commits.CommitState", "save", "state saved"),
    ("lagassign.spark.monitor.samples.EndSamples", "save", "samples saved"),
    ("lagassign.spark.monitor.windows.CommitWindows", "save", "windows saved"),
    ("lagassign.spark.monitor.plans.MonitorPlans", "save", "plans saved"),
    ("lagassign.spark.monitor.batch", "group_rows", "groups rows"),
    ("lagassign.spark.monitor.batch", "write_batch", "tables written"),
    ("lagassign.spark.monitor.history.GroupsHistory", "add", "report history"),
    ("lagassign.spark.monitor.batch", "write_live_report", "live report"),
]
TOTAL = "micro-batch (all of it)"
COLLECTOR = "cycle collections, in or between micro-batches"


def measure(groups: int, partitions: int, topics: int, batches: int) -> dict[str, float]:
    """CPU seconds per step and in all, the mean of the last :data:`MEASURED` micro-batches."""
    import importlib

    from lagassign.model import Offsets, TopicPartition
    from lagassign.spark.monitor.batch import MonitorBatches
    from tests.test_consumer_offsets import key, value

    spent: dict[str, float] = defaultdict(float)

    def timed(step: str, f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.process_time()
            try:
                return f(*args, **kwargs)
            finally:
                spent[step] += time.process_time() - began

        return wrapper

    for where, name, step in STEPS:
        module, _, owner = where.rpartition(".")
        try:
            target = getattr(importlib.import_module(module), owner)
        except (ImportError, AttributeError):  # a module, not a class
            target = importlib.import_module(where)
        if hasattr(target, name):
            setattr(target, name, timed(step, getattr(target, name)))

    collecting = [0.0]

    def collector(phase: str, _info: dict[str, int]) -> None:
        """Wall seconds of Python's cycle collections, in or between micro-batches (wall:
        a collection is all CPU of this one thread)."""
        if phase == "start":
            collecting[0] = time.perf_counter()
        else:
            spent[COLLECTOR] += time.perf_counter() - collecting[0]

    gc.callbacks.append(collector)
    per = partitions // topics
    tps = [(f"bench-monitor-t{t}", p) for t in range(topics) for p in range(per)]
    ends = {TopicPartition(t, p): Offsets(0, 2000) for t, p in tps}
    keys = [key(f"bench-monitor-{g:04d}", t, p) for g in range(groups) for t, p in tps]
    now = [T0]
    work = Path(tempfile.mkdtemp(prefix="lagassign-bench-monitor-batch-"))
    monitor = MonitorBatches(
        work / "out",
        work / "state",
        lambda wanted: {tp: o for tp, o in ends.items() if tp.topic in wanted},
        None,
        clock=lambda: now[0],
        read_members=lambda wanted: {g: () for g in wanted},
        plan_budget_s=2.5,
    )
    for b in range(batches):
        ms = int((T0 + timedelta(seconds=5 * b)).timestamp() * 1000)
        records = [(k, value(3, 5 * b + 5, commit_ms=ms)) for k in keys]
        now[0] = T0 + timedelta(seconds=5 * b + 1)
        if b == batches - MEASURED:
            spent.clear()
        began = time.process_time()
        if hasattr(monitor, "sample"):
            monitor.sample(b)
        monitor.run(b, records, read=len(records) * 5)
        spent[TOTAL] += time.process_time() - began
        print(f"micro-batch {b}: {time.process_time() - began:.2f} s CPU", file=sys.stderr)
    return {step: round(s / MEASURED, 3) for step, s in spent.items()}


def measure_at(rev: str, args: argparse.Namespace) -> dict[str, float]:
    """:func:`measure` in a copy of ``rev``'s src and tests, in a process of its own."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src", "tests"], capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryDirectory(prefix="lagassign-bench-before-") as copy:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(copy, filter="data")
        done = subprocess.run(
            [sys.executable, __file__, *shape_args(args), "--child", copy],
            stdout=subprocess.PIPE,
            check=True,
            text=True,
            env={**os.environ, "PYTHONPATH": f"{copy}/src{os.pathsep}{copy}"},
        )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def shape_args(args: argparse.Namespace) -> list[str]:
    return [
        *("--groups", str(args.groups), "--partitions", str(args.partitions)),
        *("--topics", str(args.topics), "--batches", str(args.batches)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--before", metavar="REV", help="also measure this revision")
    parser.add_argument("--name", default="monitor-batch")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (args.groups > 0 and 0 < args.topics <= args.partitions and args.batches > MEASURED):
        parser.error("--groups, --topics ≤ --partitions and --batches > 3 must be positive")
    if args.child:
        sys.path[:0] = [f"{args.child}/src", args.child]
        print(json.dumps(measure(args.groups, args.partitions, args.topics, args.batches)))
        return
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    load_before = [round(x, 2) for x in os.getloadavg()]
    before = measure_at(args.before, args) if args.before else None
    now = measure(args.groups, args.partitions, args.topics, args.batches)
    load_after = [round(x, 2) for x in os.getloadavg()]
    head = git("rev-parse", "--short", "HEAD")
    result = {
        "groups": args.groups,
        "partitions": args.partitions,
        "topics": args.topics,
        "batches": args.batches,
        "revision": head,
        "before": args.before,
        "before_revision": git("rev-parse", "--short", args.before) if args.before else None,
        "cpu_s": now,
        "cpu_s_before": before,
        "load_before": load_before,
        "load_after": load_after,
        "cpus": os.cpu_count(),
    }
    md = render(result)
    print(md)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1))
    (RESULTS / f"{args.name}.md").write_text(md)


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def render(result: dict[str, Any]) -> str:
    now, before = result["cpu_s"], result["cpu_s_before"]
    steps = [s for _, _, s in STEPS if s in now or (before and s in before)] + [TOTAL, COLLECTOR]

    def cell(values: dict[str, float] | None, step: str) -> str:
        return "—" if values is None or step not in values else f"{values[step]:.3f}"

    header = f"| step | {result['before_revision']} | {result['revision']} |"
    lines = [
        f"One `lagassign monitor` micro-batch on the driver (bench/monitor_batch.py): "
        f"{result['groups']:,} groups × {result['partitions']} partitions in "
        f"{result['topics']} topics, every partition committed once per micro-batch, "
        f"{result['batches']} micro-batches; CPU seconds per micro-batch, the mean of the last "
        f"{MEASURED}. No Spark, no broker (the log ends a fixed answer, groups without members). "
        f"Load average {result['load_before']} before, {result['load_after']} after, on "
        f"{result['cpus']} cores shared with other work.",
        "",
        header if before is not None else f"| step | {result['revision']} |",
        "|---|---:|---:|" if before is not None else "|---|---:|",
    ]
    for step in steps:
        row = f"| {step} | {cell(before, step)} | {cell(now, step)} |"
        lines.append(row if before is not None else f"| {step} | {cell(now, step)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
