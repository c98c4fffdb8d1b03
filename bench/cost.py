"""Cost: what one assignment takes, per strategy, on ordinary consumer groups.

Groups as most teams run them (``ordinary``): 1–5 topics, 3–20 members, heavy-tailed lags of
a different scale per topic; one group in four with mixed subscriptions, and half of them
with owned partitions (a random earlier owner per partition, as after the lags have moved).
Two tables, every strategy timed on the same groups one after the other, in one process:

- ``ordinary``: groups of 24–200 partitions (the issue's target: `balanced` ≤ 10 ms median
  and ≤ 50 ms p95 per assignment);
- ``by size``: groups of exactly 24, 100 and 1,000 partitions.

    .venv/bin/python bench/cost.py [--groups 200] [--before REV]

``--before REV`` times `balanced` as it was at git revision REV too, as ``balanced@REV``
(bench/quality.py's ``balanced_at``), on the same groups in the same run. Where `balanced` runs
compiled (scripts/compile.py), its source is timed beside it as ``balanced (interpreted)``, as
is ``balanced@REV``: that row is against the interpreted one. ``balanced time-aware`` is
`balanced` on the same groups given produce rates and member capacities
(``samples.with_rates``), where it plans for catch-up time (issue 12: within the lag search's
work budget, so the same targets).

Prints the tables and writes bench/results/cost.json and cost.md, with the machine's load
(``os.getloadavg``) before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path

from _compiled import build
from quality import balanced_at
from rich.console import Console
from rich.table import Table

from lagassign.model import Group, Member, Partition, Topic, TopicPartition
from lagassign.samples import with_rates
from lagassign.strategies import compiled, create, interpreted, names
from lagassign.strategies.base import Strategy

RESULTS = Path(__file__).parent / "results"
SIZES = (24, 100, 1_000)
#: `balanced` on the groups with produce rates and member capacities (samples.with_rates)
TIME_AWARE = "balanced time-aware"


def _skewed(rng: random.Random, scale: float) -> int:
    # most partitions near zero, a few very large (samples' suites draw lags the same way)
    return int(rng.paretovariate(1.2) * scale) if rng.random() < 0.7 else rng.randint(0, int(scale))


def ordinary(seed: int, partitions: tuple[int, int]) -> Group:
    """One ordinary group of ``partitions`` (low, high) partitions; the same seed, the same
    group."""
    rng = random.Random(f"ordinary:{seed}:{partitions}")
    total = rng.randint(*partitions)
    count = rng.randint(1, 5)
    cuts = sorted(rng.sample(range(1, total), count - 1))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
    topics = []
    for t, n in enumerate(sizes):
        name, scale = f"topic-{t}", 10 ** rng.randint(1, 4)
        lags = [_skewed(rng, scale) for _ in range(n)]
        topics.append(Topic(name, tuple(Partition(name, p, lag=lag) for p, lag in enumerate(lags))))
    topic_names = [t.name for t in topics]
    ids = [f"consumer-{i}-{rng.getrandbits(24):06x}" for i in range(rng.randint(3, 20))]
    mixed = rng.random() < 0.25
    subscribed = {
        m: frozenset(rng.sample(topic_names, rng.randint(1, count)) if mixed else topic_names)
        for m in ids
    }
    owned: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    if rng.random() < 0.5:
        for topic in topics:
            readers = [m for m in ids if topic.name in subscribed[m]]
            for p in topic.partitions:
                if readers:
                    owned[rng.choice(readers)].append(p.tp)
    members = [Member(m, subscribed[m], owned=tuple(owned[m]), generation=1) for m in ids]
    return Group.of(topics, members, id=f"ordinary-{seed}")


def timed(
    groups: list[Group], strategies: dict[str, Strategy]
) -> dict[str, tuple[list[float], list[float]]]:
    """Seconds per assignment, per strategy, over ``groups``: wall clock, and the process's
    CPU time (what a loaded machine inflates least)."""
    seconds: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in strategies}
    for i, group in enumerate(groups, 1):
        for name, strategy in strategies.items():
            wall, cpu = time.perf_counter(), time.process_time()
            strategy.assign(group)
            seconds[name][0].append(time.perf_counter() - wall)
            seconds[name][1].append(time.process_time() - cpu)
        print(f"\r{i}/{len(groups)} groups", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return seconds


def quantiles(wall: list[float], cpu: list[float]) -> dict[str, float]:
    """Median, 95th percentile (nearest rank) and largest, in milliseconds, of the wall clock
    and of CPU time."""
    stats = {}
    for kind, values in (("", wall), ("cpu_", cpu)):
        ordered = sorted(values)
        stats[f"{kind}median_ms"] = statistics.median(ordered) * 1e3
        stats[f"{kind}p95_ms"] = ordered[math.ceil(0.95 * len(ordered)) - 1] * 1e3
        stats[f"{kind}max_ms"] = ordered[-1] * 1e3
    return stats


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=200, help="ordinary groups (24–200)")
    parser.add_argument("--per-size", type=int, default=50, help="groups per size at 24 and 100")
    parser.add_argument("--large", type=int, default=20, help="groups of 1,000 partitions")
    parser.add_argument("--before", metavar="REV", help="time balanced as it was at git REV too")
    args = parser.parse_args()
    strategies = {name: create(name) for name in names()}
    if compiled("balanced"):
        strategies["balanced (interpreted)"] = interpreted("balanced").BalancedAssignor()
    if args.before:
        strategies[f"balanced@{args.before}"] = balanced_at(args.before)
    before = load()
    started = time.perf_counter()
    results: dict[str, dict[str, dict[str, float]]] = {}
    runs = [("24–200", args.groups, (24, 200))]
    runs += [(f"{n:,}", args.per_size if n < 1_000 else args.large, (n, n)) for n in SIZES]
    for label, count, size in runs:
        print(f"{label} partitions, {count} groups", file=sys.stderr)
        groups = [ordinary(seed, size) for seed in range(count)]
        seconds = timed(groups, strategies)
        # the same groups with produce rates and member capacities: `balanced` plans for
        # catch-up time (built before the clock starts, as every group is)
        rated = [with_rates(group, seed) for seed, group in enumerate(groups)]
        seconds |= timed(rated, {TIME_AWARE: strategies["balanced"]})
        results[label] = {name: quantiles(*values) for name, values in seconds.items()}
    after = load()
    counts = {label: count for label, count, _ in runs}

    lines = [
        "Milliseconds per assignment (median, p95, max) on ordinary groups (`bench/cost.py`: "
        "1–5 topics, 3–20 members, heavy-tailed lags, one group in four with mixed "
        "subscriptions, half with owned partitions); every strategy on the same groups in one "
        f"process. Load average (1, 5, 15 min) {before} before, {after} after, on "
        f"{os.cpu_count()} cores; {time.perf_counter() - started:.0f} s in all. Wall clock, and "
        "the process's CPU time, which a loaded machine inflates less (on an idle one they "
        f"agree). `balanced`: {build()}"
        + (", its source beside it as interpreted." if compiled("balanced") else ".")
        + f" `{TIME_AWARE}`: `balanced` on the same groups with produce rates and member "
        "capacities up to sixfold apart (`samples.with_rates`, as in bench/speed.py), so it "
        "plans for catch-up time.",
        "",
        "| partitions | groups | strategy | median ms | p95 ms | max ms "
        "| CPU median ms | CPU p95 ms | CPU max ms |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    table = Table(title=f"ms per assignment (load {before} → {after})")
    columns = ("partitions", "groups", "strategy", "median", "p95", "max")
    for column in (*columns, "CPU median", "CPU p95", "CPU max"):
        table.add_column(column, justify="left" if column == "strategy" else "right")
    for label, by_strategy in results.items():
        for name, q in by_strategy.items():
            cells = [
                label,
                str(counts[label]),
                name,
                f"{q['median_ms']:.2f}",
                f"{q['p95_ms']:.2f}",
                f"{q['max_ms']:.2f}",
                f"{q['cpu_median_ms']:.2f}",
                f"{q['cpu_p95_ms']:.2f}",
                f"{q['cpu_max_ms']:.2f}",
            ]
            table.add_row(*cells)
            lines.append("| " + " | ".join(cells) + " |")
    Console().print(table)
    RESULTS.mkdir(exist_ok=True)
    record = {"load_before": before, "load_after": after, "groups": counts, "results": results}
    (RESULTS / "cost.json").write_text(json.dumps(record, indent=1))
    (RESULTS / "cost.md").write_text("\n".join(lines) + "\n")
    print(f"written {RESULTS / 'cost.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
