"""The fleet pipeline on PySpark against the same work as a plain single-process loop.

A generated fleet (lagassign.samples, every family in turn; each group's current assignment
made by ``range``, offsets instead of bare lags) is written as Parquet snapshot files; then, in
one run:

* **spark**: ``python -m lagassign.spark.pipeline --input DIR`` on ``--master`` (default
  ``local[2]``), in a process of its own as a user runs it (the JVM started cold);
  ``--before REV`` runs git revision REV's pipeline the same way beside it (checked out into a
  temporary worktree, its extensions built by its own scripts/compile.py where it has one; a
  run labelled "interpreted" ran without them), for side-by-side ratios on a loaded machine;
* **loop**: the same work in one Python process, no Spark: read and check every file
  (lagassign.formats.snapshot), split its rows by group (lagassign.spark.packing.by_group), build
  each group and plan it with every strategy (lagassign.spark.groups.plan_read, i.e. the core's
  plan_group), write the same Parquet tables (one file each): the function of a planning task
  that reads whole groups, called once.

Neither writes the HTML report. For each Spark run: its steps' seconds (summary.json: start,
read, plan, write), the CPU seconds of its processes (the JVM; the Python driver and workers),
and Spark's own stage times (its event log: tasks, wall seconds, the tasks' summed seconds).

    .venv/bin/python bench/pipeline.py [--groups 10000] [--rows 1000000] [--strategies A,B]
                                       [--master local[2]] [--files 8] [--before REV]

Prints a table and writes bench/results/pipeline.json and pipeline.md (``--append``: adds the
run to those already saved).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from lagassign.formats.snapshot import read_snapshot
from lagassign.formats.snapshot_rows import SNAPSHOT_SCHEMA
from lagassign.lag_rules import group_lags
from lagassign.model import Group
from lagassign.samples import FAMILIES, generate
from lagassign.spark.groups import PLANNED_SCHEMA, TableFiles, plan_read, write_empty_tables
from lagassign.spark.schema import TABLES
from lagassign.strategies import compiled, create, names

RESULTS = Path(__file__).parent / "results"


# ------------------------------------------------------------------------------------------------
# the fleet


def _rows(gid: str, group: Group, rng: random.Random) -> list[dict[str, Any]]:
    lags = group_lags(group)
    owners = create("range").assign(group).owners() if group.members else {}
    every = set(group.topics)
    rows = []
    for p in group.partitions():
        if p.offsets is not None:
            begin, end, committed = p.offsets.begin, p.offsets.end, p.offsets.committed
        else:
            begin = rng.randint(0, 1_000_000)
            committed = begin + rng.randint(0, 10_000_000)
            end = committed + lags[p.tp]
        member = owners.get(p.tp)
        topics = group.member(member).topics if member else every
        rows.append(
            {
                "group": gid,
                "topic": p.topic,
                "partition": p.partition,
                "begin": begin,
                "end": end,
                "committed": committed,
                "member_id": member,
                "client_id": member.rsplit("-", 1)[0] if member else None,
                "host": "/10.0.0.1" if member else None,
                "auto_offset_reset": group.auto_offset_reset,
                "subscribed": sorted(topics) if topics != every else None,
            }
        )
    return rows


def make_fleet(folder: Path, groups: int, rows: int, files: int) -> tuple[int, int]:
    """Writes ``groups`` generated groups, about ``rows`` partitions in all, as ``files``
    Parquet files. Returns (groups, rows) written."""
    # calibrate the families' partition counts to the wanted mean
    per_group = rows / groups
    probe = [generate(FAMILIES[i % len(FAMILIES)], i, 200) for i in range(100)]
    mean = sum(sum(len(t.partitions) for t in g.topics.values()) for g in probe) / len(probe)
    max_partitions = max(4, round(200 * per_group / mean))
    rng = random.Random(2024)
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    batch: list[dict[str, Any]] = []
    part = 0
    per_file = -(-groups // files)
    for i in range(groups):
        family = FAMILIES[i % len(FAMILIES)]
        group = generate(family, i, max_partitions)
        batch += _rows(f"{family}-{i:06d}", group, rng)
        if (i + 1) % per_file == 0 or i + 1 == groups:
            pq.write_table(
                pa.Table.from_pylist(batch, schema=SNAPSHOT_SCHEMA),
                folder / f"part-{part:03d}.parquet",
            )
            written += len(batch)
            batch, part = [], part + 1
        if (i + 1) % 500 == 0:
            print(f"\rgenerating: {i + 1}/{groups} groups", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return groups, written


# ------------------------------------------------------------------------------------------------
# the plain loop


def plain_loop(folder: Path, out: Path, strategies: list[str]) -> dict[str, int]:
    """The pipeline's work in this process: read and check every file, plan every group,
    write the tables (as a planning task does, lagassign.spark.groups.TableFiles)."""
    batches = [b for path in sorted(folder.glob("*.parquet")) for b in read_snapshot(str(path))]
    out.mkdir(parents=True)
    planned = pa.Table.from_batches(
        plan_read(batches, strategies, TableFiles(str(out), 0)), schema=PLANNED_SCHEMA
    )
    write_empty_tables(str(out))
    failed = pa.compute.is_valid(planned.column("error"))
    if pa.compute.any(failed).as_py():
        raise RuntimeError(f"planning failed: {planned.filter(failed).to_pylist()[0]}")
    counts = dict.fromkeys(TABLES, 0)
    for name, (kind, _) in TABLES.items():
        mine = planned.filter(pa.compute.equal(planned.column("kind"), kind)).column("rows")
        counts[name] = pa.compute.sum(mine).as_py() or 0
    return counts


def differing_tables(folder: Path, other: Path) -> list[str]:
    """The tables whose rows (in any order) differ between two outputs."""

    def rows(path: Path) -> pa.Table:
        found = pq.read_table(path)
        return found.sort_by([(c, "ascending") for c in found.column_names])

    return [name for name in TABLES if not rows(folder / name).equals(rows(other / name))]


# ------------------------------------------------------------------------------------------------
# a Spark run, as a user runs it


ROOT = Path(__file__).resolve().parent.parent
_TICK = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, str, float]]:
    """Every process: pid -> (parent pid, name, CPU seconds of its own so far)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), name, (int(fields[11]) + int(fields[12])) / _TICK)
    return found


class TreeCpu:
    """CPU seconds of a process and its descendants (the JVM, the Python workers), sampled from
    /proc while it runs: each process's own time as last seen (a process that ends loses at
    most one sampling interval)."""

    def __init__(self, pid: int, every: float = 0.2) -> None:
        self.pid, self.every = pid, every
        self.seen: dict[int, tuple[str, float]] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while True:
            every = _processes()
            tree = {self.pid}
            grew = True
            while grew:
                inside = {p for p, (parent, _, _) in every.items() if parent in tree} - tree
                grew = bool(inside)
                tree |= inside
            for p in tree & every.keys():
                self.seen[p] = (every[p][1], every[p][2])
            if self.done.wait(self.every):
                return

    def stop(self) -> dict[str, float]:
        """CPU seconds: ``jvm`` (java), ``python`` (the driver and its workers)."""
        self.done.set()
        self.thread.join()
        cpu = {"jvm": 0.0, "python": 0.0}
        for name, seconds in self.seen.values():
            cpu["jvm" if name == "java" else "python"] += seconds
        return {k: round(v, 2) for k, v in cpu.items()}


def _stages(event_log: Path) -> list[dict[str, Any]]:
    """Spark's own stage times from its event log: per stage, its job's description, tasks,
    wall seconds and the tasks' summed run seconds."""
    described: dict[int, str] = {}
    stages: dict[int, dict[str, Any]] = {}
    task_seconds: dict[int, float] = {}
    for line in event_log.read_text().splitlines():
        event = json.loads(line)
        kind = event["Event"]
        if kind == "SparkListenerJobStart":
            what = (event.get("Properties") or {}).get("spark.job.description") or ""
            described.update(dict.fromkeys(event["Stage IDs"], what))
        elif kind == "SparkListenerTaskEnd":
            info = event["Task Info"]
            sid = event["Stage ID"]
            seconds = (info["Finish Time"] - info["Launch Time"]) / 1000
            task_seconds[sid] = task_seconds.get(sid, 0.0) + seconds
        elif kind == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            stages[info["Stage ID"]] = {
                "stage": info["Stage ID"],
                "tasks": info["Number of Tasks"],
                "seconds": (info["Completion Time"] - info["Submission Time"]) / 1000,
            }
    for sid, stage in stages.items():
        stage["job"] = described.get(sid, "")
        stage["task_seconds"] = round(task_seconds.get(sid, 0.0), 2)
    return [stages[sid] for sid in sorted(stages)]


def spark_run(
    src: Path, fleet: Path, out: Path, strategies: list[str], master: str
) -> dict[str, Any]:
    """``python -m lagassign.spark.pipeline`` of the source tree ``src`` on the fleet, in a
    process of its own: wall seconds, steps, CPU, stages and the tables' row counts."""
    events = out.parent / f"{out.name}-events"
    events.mkdir()
    command = [
        sys.executable,
        "-m",
        "lagassign.spark.pipeline",
        "--input",
        str(fleet),
        "--out",
        str(out),
        "--strategies",
        ",".join(strategies),
        "--master",
        master,
        "--no-report",
        "--quiet",
        *("--conf", "spark.eventLog.enabled=true"),
        *("--conf", f"spark.eventLog.dir={events.as_uri()}"),
        *("--conf", "spark.eventLog.compress=false"),
    ]
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYSPARK_PYTHON", None)
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=out.parent)
    cpu = TreeCpu(process.pid)
    status = process.wait()
    wall = time.perf_counter() - start
    used = cpu.stop()
    if status:
        raise RuntimeError(f"the pipeline of {src} ended with status {status}")
    summary = json.loads((out / "summary.json").read_text())
    logs = sorted(events.rglob("events_*")) or sorted(p for p in events.rglob("*") if p.is_file())
    return {
        "seconds": wall,
        "steps": summary["seconds"],
        "cpu": used,
        "stages": _stages(logs[0]) if logs else [],
        "tables": summary["tables"],
        #: Spark's classes from an earlier run's archive ("mapped"), or archived as the JVM
        #: exited ("written"); None: no archive (lagassign.spark.class_archive)
        "classes": summary["spark"].get("classes"),
    }


def _checkout(revision: str, into: Path) -> tuple[Path, bool]:
    """The source tree (src/) of git ``revision``, checked out into ``into``, and whether its
    extensions were built: as its own set-up builds them (its scripts/compile.py, if it has
    one; with this environment's mypyc, not the one that revision pinned), so that it runs as
    a user of that revision would, not interpreted beside a compiled tree."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), revision],
        check=True,
        capture_output=True,
    )
    compiler = into / "scripts" / "compile.py"
    if compiler.is_file():
        print(f"compiling {revision}'s extensions ...", file=sys.stderr)
        subprocess.run([sys.executable, str(compiler)], check=True, cwd=into)
    return into / "src", compiler.is_file()


# ------------------------------------------------------------------------------------------------
# the run


def bench(
    groups: int,
    rows: int,
    strategies: list[str],
    master: str,
    files: int,
    before: str | None = None,
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="lagassign-bench-pipeline-"))
    load_before = os.getloadavg()
    runs = []
    try:
        start = time.perf_counter()
        n_groups, n_rows = make_fleet(work / "fleet", groups, rows, files)
        print(
            f"fleet: {n_groups} groups, {n_rows} rows in {time.perf_counter() - start:.0f} s",
            file=sys.stderr,
        )
        trees = [("this tree" if compiled("balanced") else "this tree (interpreted)", ROOT / "src")]
        if before:
            src, built = _checkout(before, work / "before")
            trees.insert(0, (before if built else f"{before} (interpreted)", src))
        results: dict[str, dict[str, Any]] = {}
        for label, src in trees:
            print(f"spark ({master}, {label}) ...", file=sys.stderr)
            results[label] = spark_run(
                src, work / "fleet", work / f"spark-out-{len(results)}", strategies, master
            )
            runs.append({"engine": f"spark {master}, {label}", **results[label]})
            runs.append(
                {
                    "engine": f"spark {master}, {label} (without starting Spark)",
                    "seconds": results[label]["seconds"] - results[label]["steps"].get("start", 0),
                }
            )

        print("plain loop ...", file=sys.stderr)
        start = time.perf_counter()
        cpu = time.process_time()
        counts = plain_loop(work / "fleet", work / "loop-out", strategies)
        loop_wall = time.perf_counter() - start
        runs.append(
            {
                "engine": "plain loop (1 process)",
                "seconds": loop_wall,
                "cpu": {"python": round(time.process_time() - cpu, 2)},
            }
        )
        for i, (label, result) in enumerate(results.items()):
            if counts != result["tables"]:
                raise RuntimeError(f"the loop and Spark ({label}) disagree: {counts}")
            differ = differing_tables(work / "loop-out", work / f"spark-out-{i}")
            if differ:
                raise RuntimeError(f"the loop and Spark ({label}) write other rows: {differ}")
        print("the tables of every run are equal, row for row", file=sys.stderr)
    finally:
        if before:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "before")],
                check=False,
                capture_output=True,
            )
        shutil.rmtree(work, ignore_errors=True)
    return {
        "groups": n_groups,
        "rows": n_rows,
        "strategies": strategies,
        "master": master,
        "files": files,
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        ),
        "tables": counts,
        #: the machine's load average (1, 5, 15 minutes) when the run began and ended
        "load": [list(load_before), list(os.getloadavg())],
        "runs": runs,
    }


def _cpu(run: dict[str, Any]) -> str:
    cpu = run.get("cpu")
    if not cpu:
        return ""
    if "jvm" not in cpu:
        return f"{cpu['python']:,.1f}"
    return f"{cpu['jvm'] + cpu['python']:,.1f} ({cpu['jvm']:,.1f} + {cpu['python']:,.1f})"


def table(report: dict[str, Any]) -> tuple[Table, str]:
    loop = report["runs"][-1]["seconds"]
    t = Table(
        title=f"pipeline: {report['groups']:,} groups, {report['rows']:,} partition rows, "
        f"{len(report['strategies'])} strategies"
    )
    header = ["engine", "wall s", "rows/s", "groups/s", "vs loop", "CPU s (JVM + Python)"]
    for h in header:
        t.add_column(h, justify="left" if h == "engine" else "right")
    lines = [
        f"{report['groups']:,} groups, {report['rows']:,} partition rows, strategies: "
        f"{', '.join(report['strategies'])}; {report['machine']}"
        + (
            "; load average {:.1f} / {:.1f} / {:.1f} at the start, {:.1f} / {:.1f} / {:.1f} at "
            "the end.".format(*report["load"][0], *report["load"][1])
            if "load" in report
            else "."
        ),
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    for r in report["runs"]:
        s = r["seconds"]
        cells = [
            r["engine"],
            f"{s:,.1f}",
            f"{report['rows'] / s:,.0f}",
            f"{report['groups'] / s:,.1f}",
            f"{loop / s:.2f}×",
            _cpu(r),
        ]
        t.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    for r in report["runs"]:
        if "steps" not in r:
            continue
        steps = ", ".join(f"{k} {v:.1f}" for k, v in r["steps"].items())
        classes = {
            "mapped": "; Spark's classes mapped from an earlier run's archive",
            "written": "; Spark's classes archived as the JVM exited (the first run)",
        }
        lines += ["", f"{r['engine']}: steps (s) {steps}{classes.get(r.get('classes'), '')}"]
        if r.get("stages"):
            lines.append(
                "Spark's stages (tasks, wall s, tasks' summed s): "
                + "; ".join(
                    f"{st['job'] or 'stage ' + str(st['stage'])} {st['tasks']}, "
                    f"{st['seconds']:.1f}, {st['task_seconds']:.1f}"
                    for st in r["stages"]
                )
            )
    return t, "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000, help="partition rows, about")
    parser.add_argument("--strategies", default=None, help="A,B,... (default: all)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--files", type=int, default=8, help="Parquet files of the fleet")
    parser.add_argument(
        "--before", metavar="REV", help="also run git revision REV's pipeline, beside this one"
    )
    parser.add_argument(
        "--append", action="store_true", help="add this run to the saved results, not replace"
    )
    args = parser.parse_args()
    strategies = args.strategies.split(",") if args.strategies else names()
    report = bench(args.groups, args.rows, strategies, args.master, args.files, args.before)
    t, _ = table(report)
    Console().print(t)
    RESULTS.mkdir(exist_ok=True)
    saved = RESULTS / "pipeline.json"
    reports = []
    if args.append and saved.is_file():
        previous = json.loads(saved.read_text())
        reports = previous if isinstance(previous, list) else [previous]
    reports.append(report)
    saved.write_text(json.dumps(reports, indent=2) + "\n")
    (RESULTS / "pipeline.md").write_text("\n".join(table(r)[1] for r in reports))
    print(f"written to {RESULTS / 'pipeline.json'} and pipeline.md", file=sys.stderr)


if __name__ == "__main__":
    main()
