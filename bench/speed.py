"""Speed: `lag` and `balanced` beside Kafka's Java CooperativeStickyAssignor, on one input.

The input is issue 5's: 500 topics × 2,000 partitions (1M) onto 2,000 members with identical
subscriptions and skewed lag, then 100 topics × 1,000 partitions (100k) onto 200 members to show
how each grows (``--scale`` shrinks topics and partitions of both for a quick look);
``balanced time-aware`` is `balanced` on the same group with produce rates and member
capacities up to sixfold apart (``samples.with_rates``), planning for catch-up time.
Each measurement runs in its own process, so its peak memory (max RSS, which includes building
the group) is its own. Each assigns twice there: the first call (Python loading what it uses,
NumPy among it; Java in a cold JVM) and a warm one (Python on a group built afresh, so nothing
the first call made is reused; Java the same group again in the same JVM). Both are shown,
each against Java's warm run.

    .venv/bin/python bench/speed.py [--scale 1.0]

Prints a table per shape and writes bench/results/speed.json and speed.md, with the machine's
load (``os.getloadavg``) before and after: the times are wall clock, which a loaded machine
stretches (Java's warm run most), so the ratios move with the load.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

from _compiled import build
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PYTHON_STRATEGIES = ("lag", "balanced", "cooperative-sticky")
#: `balanced` on the same group with produce rates and unequal member capacities
#: (samples.with_rates): it plans for catch-up time
TIME_AWARE = "balanced time-aware"
JAVA = "java cooperative-sticky"


def build_group(topics: int, partitions: int, members: int):  # type: ignore[no-untyped-def]
    from lagassign.model import Group, Member, Partition, Topic

    rng = random.Random(5)
    built = [
        Topic(f"topic-{t}", tuple(
            Partition(f"topic-{t}", p, lag=int(rng.paretovariate(1.2) * 100))
            for p in range(partitions)
        ))
        for t in range(topics)
    ]
    names = frozenset(t.name for t in built)
    return Group.of(built, [Member(f"member-{i:05d}", names) for i in range(members)])


def child(what: str, topics: int, partitions: int, members: int) -> dict[str, float]:
    """One measurement, in this process."""
    group = build_group(topics, partitions, members)
    if what == JAVA:
        sys.path.insert(0, str(ROOT))
        from tests.javaref import timed_run

        cold, warm = timed_run("cooperative-sticky", [group, group])
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return {"seconds": warm, "cold_seconds": cold, "peak_mib": peak / 1024}
    from lagassign.strategies import create

    def timed(group):  # type: ignore[no-untyped-def]
        if what == TIME_AWARE:
            from lagassign.samples import with_rates

            group, strategy = with_rates(group, seed=0), create("balanced")
        else:
            strategy = create(what)
        started = time.perf_counter()
        strategy.assign(group)
        return time.perf_counter() - started

    cold = timed(group)
    # Warm as Java's: the same work again in this process (its modules, NumPy among them,
    # loaded), on a group built afresh so that nothing the first call made is reused.
    del group
    gc.collect()
    warm = timed(build_group(topics, partitions, members))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": cold, "warm_seconds": warm, "peak_mib": peak / 1024}


def measure(what: str, topics: int, partitions: int, members: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", what, "--shape", f"{topics},{partitions},{members}"],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


#: the second shape, to show how each grows: 100 topics × 1,000 partitions (100k) onto 200
#: members, scaled as the first
SMALLER = (100, 1000, 200)


def run_shape(
    topics: int, partitions: int, members: int
) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Every assignor on one shape: its results and its markdown table (also printed)."""
    results: dict[str, dict[str, float]] = {}
    for what in (*PYTHON_STRATEGIES, TIME_AWARE, JAVA):
        print(f"measuring {what} at {topics}×{partitions}/{members} ...", file=sys.stderr)
        results[what] = measure(what, topics, partitions, members)
    java = results[JAVA]["seconds"]
    table = Table(title=f"{topics} topics × {partitions} partitions onto {members} members")
    columns = ("assignor", "first call s", "÷ Java", "warm s", "warm ÷ Java", "peak MiB",
               "peak ÷ Java")
    for column in columns:
        table.add_column(column, justify="left" if column == "assignor" else "right")
    lines = [
        f"{topics} topics × {partitions} partitions ({topics * partitions:,}) onto {members:,} "
        "members, identical subscriptions; each assignor in its own process. *First call*: the "
        "process's first assignment (Python's includes loading NumPy where it is used, Java's "
        "a cold JVM); *warm*: the same work again in that process on a group built afresh "
        "(Java: the second run in one JVM). ÷ Java is against Java's warm run in both columns.",
        "",
        "| " + " | ".join(columns) + " |",
        "|---|" + "---:|" * (len(columns) - 1),
    ]
    java_peak = results[JAVA]["peak_mib"]
    for what, r in results.items():
        first = r.get("cold_seconds", r["seconds"]) if what == JAVA else r["seconds"]
        warm = r["seconds"] if what == JAVA else r["warm_seconds"]
        row = [
            what, f"{first:.2f}", f"{first / java:.2f}", f"{warm:.2f}", f"{warm / java:.2f}",
            f"{r['peak_mib']:.0f}", f"{r['peak_mib'] / java_peak:.2f}",
        ]
        table.add_row(*row)
        lines.append("| " + " | ".join(row) + " |")
    Console().print(table)
    return results, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of topics and of partitions per topic (members stay 2,000 "
                        "and 200)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--shape", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        topics, partitions, members = map(int, args.shape.split(","))
        print(json.dumps(child(args.child, topics, partitions, members)))
        return

    shapes = [
        (max(1, int(t * args.scale)), max(1, int(p * args.scale)), m)
        for t, p, m in ((500, 2000, 2000), SMALLER)
    ]
    measured = []
    lines: list[str] = []
    before = os.getloadavg()
    for topics, partitions, members in shapes:
        results, table = run_shape(topics, partitions, members)
        shape = {"topics": topics, "partitions_per_topic": partitions, "members": members}
        measured.append({**shape, "results": results})
        lines += [*table, ""]
    after = os.getloadavg()
    load = {"before": list(before), "after": list(after)}
    lines.append(
        "Load average (1, 5, 15 min) "
        + ", ".join(f"{x:.2f}" for x in before)
        + " before, "
        + ", ".join(f"{x:.2f}" for x in after)
        + " after, on "
        + f"{os.cpu_count()} cores; wall clock, which load stretches. `balanced`: {build()}."
    )
    RESULTS.mkdir(exist_ok=True)
    # the first shape's keys at the top, as before; the others under "also"
    (RESULTS / "speed.json").write_text(
        json.dumps({**measured[0], "also": measured[1:], "load": load}, indent=1)
    )
    (RESULTS / "speed.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
