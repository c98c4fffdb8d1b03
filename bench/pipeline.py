"""The fleet pipeline on PySpark against the same work as a plain single-process loop.

A generated fleet (lagassign.samples, every family in turn; each group's current assignment
made by ``range``, offsets instead of bare lags) is written as Parquet snapshot files; then, in
one run:

* **spark**: ``lagassign pipeline --input DIR`` on ``--master`` (default ``local[2]``);
* **loop**: the same work in one Python process, no Spark: read and check every file
  (lagassign.formats.snapshot), build each group and plan it with every strategy
  (lagassign.spark.groups, i.e. the core's plan_group), write the same four Parquet tables.

Neither writes the HTML report. The Spark time is shown with and without starting Spark.

    .venv/bin/python bench/pipeline.py [--groups 10000] [--rows 1000000] [--strategies A,B]
                                       [--master local[2]] [--files 8]

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
import sys
import tempfile
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
from lagassign.spark.groups import plan_batches
from lagassign.spark.options import PipelineOptions
from lagassign.spark.pipeline import run
from lagassign.spark.schema import RESULT_SCHEMA, TABLES
from lagassign.strategies import create, names

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
    """The pipeline's work in this process: read, check, plan every group, write the tables."""
    batches = [b for path in sorted(folder.glob("*.parquet")) for b in read_snapshot(str(path))]
    table = pa.Table.from_batches(plan_batches(batches, strategies), schema=RESULT_SCHEMA)
    failed = pa.compute.is_valid(table.column("error"))
    if pa.compute.any(failed).as_py():
        raise RuntimeError(f"planning failed: {table.filter(failed).to_pylist()[0]}")
    out.mkdir(parents=True)
    counts = {}
    for name, (kind, columns) in TABLES.items():
        rows_of = table.filter(pa.compute.equal(table.column("kind"), kind)).select(list(columns))
        pq.write_table(rows_of, out / f"{name}.parquet")
        counts[name] = rows_of.num_rows
    return counts


# ------------------------------------------------------------------------------------------------
# the run


def bench(groups: int, rows: int, strategies: list[str], master: str, files: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="lagassign-bench-pipeline-"))
    load_before = os.getloadavg()
    try:
        start = time.perf_counter()
        n_groups, n_rows = make_fleet(work / "fleet", groups, rows, files)
        print(
            f"fleet: {n_groups} groups, {n_rows} rows in {time.perf_counter() - start:.0f} s",
            file=sys.stderr,
        )

        print(f"spark ({master}) ...", file=sys.stderr)
        start = time.perf_counter()
        result = run(
            PipelineOptions(
                out=work / "spark-out",
                inputs=(str(work / "fleet"),),
                strategies=tuple(strategies),
                master=master,
                conf=(("spark.ui.enabled", "false"),),
                report=False,
                quiet=True,
            )
        )
        spark_wall = time.perf_counter() - start
        spark_job = spark_wall - result.seconds.get("start", 0.0)

        print("plain loop ...", file=sys.stderr)
        start = time.perf_counter()
        counts = plain_loop(work / "fleet", work / "loop-out", strategies)
        loop_wall = time.perf_counter() - start
        if counts != result.tables:
            raise RuntimeError(f"the loop and Spark disagree: {counts} != {result.tables}")
    finally:
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
        "tables": result.tables,
        #: the machine's load average (1, 5, 15 minutes) when the run began and ended
        "load": [list(load_before), list(os.getloadavg())],
        "runs": [
            {"engine": f"spark {master}", "seconds": spark_wall, "steps": result.seconds},
            {"engine": f"spark {master} (without starting Spark)", "seconds": spark_job},
            {"engine": "plain loop (1 process)", "seconds": loop_wall},
        ],
    }


def table(report: dict[str, Any]) -> tuple[Table, str]:
    loop = report["runs"][-1]["seconds"]
    t = Table(
        title=f"pipeline: {report['groups']:,} groups, {report['rows']:,} partition rows, "
        f"{len(report['strategies'])} strategies"
    )
    header = ["engine", "wall s", "rows/s", "groups/s", "vs loop"]
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
        ]
        t.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    steps = report["runs"][0].get("steps", {})
    lines += ["", "Spark steps (s): " + ", ".join(f"{k} {v:.1f}" for k, v in steps.items())]
    return t, "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000, help="partition rows, about")
    parser.add_argument("--strategies", default=None, help="A,B,... (default: all)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--files", type=int, default=8, help="Parquet files of the fleet")
    parser.add_argument(
        "--append", action="store_true", help="add this run to the saved results, not replace"
    )
    args = parser.parse_args()
    strategies = args.strategies.split(",") if args.strategies else names()
    report = bench(args.groups, args.rows, strategies, args.master, args.files)
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
