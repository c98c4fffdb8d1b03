"""A quick trial of a change to time-aware `balanced`: its quality against the saved HiGHS
references and its time, beside today's, in minutes instead of bench/quality.py's quarter hour.

Time-aware `balanced` trades quality for work (docs/strategies.md, "What a time-aware plan
costs"), and a change to its rounds or restarts moves both. This runs each candidate (today's
`balanced`, and ``--candidate``: a source file of the module or a git revision, loaded under
another name, as bench/quality.py's ``--before`` loads one) on:

* bench/quality.py's catch-up suite (``samples.catch_up_suite(60, max_partitions=60)``): the
  slowest member's catch-up time ÷ the best plan HiGHS found for that group, as saved in
  bench/results/quality-catch-up.json by the last ``bench/quality.py --objective catch-up`` run
  (no solver runs here; the references are those of the same suite). Only the groups where a
  plan keeps up count: the worst ratio, and how many are above 0.5% and 1%;
* bench/cost.py's 200 ordinary groups of 24–200 partitions, given rates and capacities
  (``samples.with_rates``);
* the embedded sample fleet's groups with measured rates (src/lagassign/data/fleet), whose
  capacities are estimated as the pipeline estimates them.

With ``--held-out N``, also on N groups per family of the same suite past the references'
(``catch_up_suite(N, first_seed=60, max_partitions=60)``; ``--held-out-from SEED``, at least
60, starts elsewhere: seeds 160-419 were first run on 2026-11-27), which no HiGHS run has
seen: each
candidate's slowest member ÷ the best plan any candidate found for the group, beside a
reference that is today's source with ten times the restarts in its rounds
(``CATCH_UP_RESTARTS``), so a candidate that stops short where more search finds better shows.
A reference of our own runs hides what every run misses alike, so ``--highs`` also asks HiGHS,
for each candidate and held-out group, whether some plan has every member catch up within the
candidate's slowest time ÷ 1.02 (issue 12's 2%; one feasibility problem,
``optimum.catch_up_feasible``, up to ``HIGHS_NODES`` branch-and-bound nodes): found (the
candidate is more than 2% above the optimum), proved not (within 2%), or undecided.

Times are this process's CPU time per assignment (median, p95, total), every candidate on the
same groups one after the other. Today's `balanced` runs as it is imported (compiled where
scripts/compile.py built it) and from its source; a candidate always from its source, so
compare it with ``balanced (source)``.

    .venv/bin/python bench/catch_up_trial.py [--candidate FILE_OR_REV ...] [--held-out N]
        [--held-out-from SEED] [--highs]

Prints a table, and the held-out groups above 2% by name, and writes
bench/results/catch-up-trial.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from cost import ordinary, quantiles, timed
from quality import balanced_at
from rich.console import Console
from rich.table import Table

from lagassign.extensions import source
from lagassign.formats.snapshot import read_snapshot
from lagassign.formats.snapshot_rows import build_group
from lagassign.lag_rules import group_lags
from lagassign.metrics import evaluate
from lagassign.model import Group
from lagassign.optimum import catch_up_feasible
from lagassign.rates import capacities, rates_in
from lagassign.samples import Sample, catch_up_suite, with_rates
from lagassign.spark.groups import _rows
from lagassign.spark.packing import by_group
from lagassign.strategies import create, interpreted, unregistered
from lagassign.strategies.base import Strategy

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
REFERENCES = RESULTS / "quality-catch-up.json"
#: the held-out groups start past the seeds of the references' suite (60 per family)
HELD_OUT_FROM = 60
#: the held-out reference: today's source with this many times each plan's restarts
REFERENCE_RESTARTS = 10
FLEET = ROOT / "src" / "lagassign" / "data" / "fleet" / "generated.parquet"
#: --highs: branch-and-bound nodes (and seconds) per feasibility problem; near capacity a
#: proof took up to 20,000 nodes, 10 s (hot-partitions #149, tests/test_catch_up.py)
HIGHS_NODES = 40_000
HIGHS_SECONDS = 120.0


def candidate(spec: str) -> Strategy:
    """`balanced` from the source file ``spec``, or as it was at git revision ``spec``."""
    if not Path(spec).is_file():
        return balanced_at(spec)
    name = "lagassign.strategies._trial_" + "".join(c if c.isalnum() else "_" for c in spec)
    strategy: Strategy = unregistered(name, Path(spec)).BalancedAssignor()
    return strategy


def reference() -> Strategy:
    """Today's `balanced` from its source, with REFERENCE_RESTARTS times the restarts."""
    # a module of its own (interpreted() keeps one for "balanced (source)"), whose constant a
    # compiled module would not let be changed
    module = unregistered(
        "lagassign.strategies._trial_reference", source("lagassign.strategies.balanced")
    )
    module.CATCH_UP_RESTARTS = REFERENCE_RESTARTS
    strategy: Strategy = module.BalancedAssignor()
    return strategy


def slowest_times(strategy: Strategy, groups: list[Sample]) -> list[float]:
    """The slowest member's catch-up time under the strategy's plan, per group (inf: never)."""
    times = []
    for sample in groups:
        g = sample.group
        slowest = evaluate(g, strategy.assign(g), group_lags(g)).catch_up_seconds
        times.append(math.inf if slowest is None else slowest)
    return times


def sooner_plans(
    times: dict[str, list[float]], groups: list[Sample]
) -> dict[str, list[bool | None]]:
    """Per candidate and group: whether HiGHS finds a plan under which every member catches up
    within the candidate's slowest time ÷ 1.02 (None: undecided, or nothing to judge: the
    candidate leaves a member behind, nothing lags, or capacities are only shares, under which
    catch-up is judged otherwise). Candidates with the same time share one answer."""
    verdicts: dict[str, list[bool | None]] = {name: [] for name in times}
    for i, sample in enumerate(groups):
        g = sample.group
        lags = group_lags(g)
        found = capacities(g, lags)
        exact = {tp: float(v) for tp, v in lags.items()}
        rates = rates_in(g)
        answers: dict[float, bool | None] = {}
        for name, column in times.items():
            slowest = column[i]
            if found is None or found.shared or not 0 < slowest < math.inf:
                verdicts[name].append(None)
                continue
            if slowest not in answers:
                answers[slowest] = catch_up_feasible(
                    g,
                    exact,
                    rates,
                    found.by_member,
                    slowest / 1.02,
                    time_limit=HIGHS_SECONDS,
                    node_limit=HIGHS_NODES,
                )
            verdicts[name].append(answers[slowest])
    return verdicts


def held_out_table(
    times: dict[str, list[float]],
    groups: list[Sample],
    first: int = HELD_OUT_FROM,
    sooner: dict[str, list[bool | None]] | None = None,
) -> list[str]:
    """Each candidate's slowest time ÷ the best any found, over the groups where one keeps up
    (``groups`` from seed ``first``), and the groups above 2% by name; with ``sooner``
    (:func:`sooner_plans`), HiGHS's verdicts on the same groups."""
    best = [min(column) for column in zip(*times.values(), strict=True)]
    kept = [i for i, b in enumerate(best) if 0 < b < math.inf]
    lines = [
        "",
        f"Held out: {len(groups)} groups of `catch_up_suite` from seed {first} (up to 60 "
        f"partitions), {len(kept)} of them where some candidate's plan keeps every member "
        "ahead and the slowest has a backlog. The slowest member's catch-up time ÷ the best "
        "any candidate found (not HiGHS: such a ratio says how far more search got, not how far "
        f"from the optimum); *reference*: today's source with {REFERENCE_RESTARTS} times the "
        "restarts in the rounds.",
        "",
    ]
    if sooner is not None:
        lines[-1] += (
            " *HiGHS*: of those groups, how many HiGHS finds a plan for under which every "
            "member catches up within the candidate's slowest time ÷ 1.02 (the candidate is "
            "more than 2% above the optimum), proves there is none (within 2%), or cannot "
            f"tell within {HIGHS_NODES:,} nodes or {HIGHS_SECONDS:.0f} s."
        )
    header = "| candidate | worst | worst group | > 0.5% | > 1% | > 2% |"
    rule = "|---|---:|---|---:|---:|---:|"
    if sooner is not None:
        header += " HiGHS: > 2% | HiGHS: ≤ 2% | HiGHS: undecided |"
        rule += "---:|---:|---:|"
    lines += ["", header, rule]
    def shown(ratio: float) -> str:
        return f"{ratio:.4f}" if math.isfinite(ratio) else "never"

    above = []  # per candidate, its groups above 2%
    for name, column in times.items():
        ratios = [(column[i] / best[i], i) for i in kept]
        worst, at = max(ratios)
        where = f"{groups[at].family} #{groups[at].seed}"
        counts = [sum(r > 1 + x for r, _ in ratios) for x in (0.005, 0.01, 0.02)]
        cells = [name, shown(worst), where, *map(str, counts)]
        listed = [
            f"{groups[i].family} #{groups[i].seed} ({shown(r)})" for r, i in ratios if r > 1.02
        ]
        if sooner is not None:
            said = [sooner[name][i] for i in kept]
            cells += [str(said.count(True)), str(said.count(False)), str(said.count(None))]
            listed += [
                f"{groups[i].family} #{groups[i].seed} (HiGHS)"
                for i in kept
                if sooner[name][i] and column[i] / best[i] <= 1.02
            ]
        lines.append("| " + " | ".join(cells) + " |")
        if listed:
            above.append(f"{name}: " + ", ".join(listed))
    lines += ["", "Above 2%: " + ("; ".join(above) if above else "none") + "."]
    return lines


def rated_fleet() -> list[Group]:
    groups = []
    for parts in by_group(list(read_snapshot(str(FLEET)))).values():
        group = build_group([row for batch in parts for row in _rows(batch)])
        if any(p.rate_in is not None for p in group.partitions()):
            groups.append(group)
    return groups


def cpu(wall: list[float], seconds: list[float]) -> dict[str, float]:
    """bench/cost.py's quantiles of the CPU time per assignment, and its total."""
    q = quantiles(wall, seconds)
    return {"median_ms": q["cpu_median_ms"], "p95_ms": q["cpu_p95_ms"], "total_s": sum(seconds)}


def trial(
    strategy: Strategy,
    references: dict[tuple[str, int], Any],
    suite: list[Sample],
    ordinary_groups: list[Group],
    fleet: list[Group],
) -> dict[str, Any]:
    ratios: list[float] = []
    wall: list[float] = []
    seconds: list[float] = []
    for sample in suite:
        g = sample.group
        began, began_cpu = time.perf_counter(), time.process_time()
        plan = strategy.assign(g)
        wall.append(time.perf_counter() - began)
        seconds.append(time.process_time() - began_cpu)
        ref = references[(sample.family, sample.seed)]
        if not ref["keeps_up"] or not ref["optimum"]:
            continue
        slowest = evaluate(g, plan, group_lags(g)).catch_up_seconds
        ok = slowest is not None and math.isfinite(slowest)
        ratios.append(slowest / ref["optimum"] if ok else math.inf)
    # (bench/cost.py's timing: every group assigned once, wall clock and CPU time)
    others = timed(ordinary_groups, {"ordinary": strategy}) | timed(fleet, {"fleet": strategy})
    return {
        "groups": len(ratios),
        "worst": max(ratios),
        "above_half_pct": sum(r > 1.005 for r in ratios),
        "above_1pct": sum(r > 1.01 for r in ratios),
        "suite": cpu(wall, seconds),
        **{name: cpu(*values) for name, values in others.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", action="append", default=[], metavar="FILE_OR_REV")
    parser.add_argument(
        "--held-out", type=int, default=0, metavar="N", help="groups per family past the suite's"
    )
    parser.add_argument(
        "--held-out-from",
        type=int,
        default=HELD_OUT_FROM,
        metavar="SEED",
        help=f"the held-out groups' first seed (at least {HELD_OUT_FROM}, past the references')",
    )
    parser.add_argument(
        "--highs",
        action="store_true",
        help="also judge every held-out plan with HiGHS (within 2%% of the optimum or not)",
    )
    args = parser.parse_args()
    if args.highs and not args.held_out:
        parser.error("--highs judges the held-out groups: give --held-out N too")
    if args.held_out_from < HELD_OUT_FROM:
        parser.error(f"--held-out-from: at least {HELD_OUT_FROM} (the references' suite is below)")
    saved = json.loads(REFERENCES.read_text())
    references = {(g["family"], g["seed"]): g for g in saved["groups"]}
    suite = list(catch_up_suite(60, max_partitions=60))
    ordinary_groups = [with_rates(ordinary(seed, (24, 200)), seed) for seed in range(200)]
    fleet = rated_fleet()
    candidates: dict[str, Strategy] = {
        "balanced": create("balanced"),
        "balanced (source)": interpreted("balanced").BalancedAssignor(),
    }
    candidates |= {spec: candidate(spec) for spec in args.candidate}
    before = os.getloadavg()
    results = {}
    for name, strategy in candidates.items():
        print(f"{name} ...", file=sys.stderr)
        results[name] = trial(strategy, references, suite, ordinary_groups, fleet)
    held_out: list[Sample] = []
    times: dict[str, list[float]] = {}
    sooner: dict[str, list[bool | None]] | None = None
    if args.held_out:
        held_out = list(
            catch_up_suite(args.held_out, first_seed=args.held_out_from, max_partitions=60)
        )
        for name, strategy in [*candidates.items(), ("reference", reference())]:
            print(f"{name}, held out ...", file=sys.stderr)
            times[name] = slowest_times(strategy, held_out)
        if args.highs:
            print("HiGHS, held out ...", file=sys.stderr)
            sooner = sooner_plans(times, held_out)
    after = os.getloadavg()
    columns = ["candidate", "worst ÷ HiGHS's best", "> 0.5%", "> 1%"]
    for part in ("suite", "ordinary", "fleet"):
        columns += [f"{part} median ms", f"{part} p95 ms", f"{part} total s"]
    table = Table(title="time-aware balanced: quality against saved references, CPU time")
    for column in columns:
        table.add_column(column, justify="left" if column == "candidate" else "right")
    groups = next(iter(results.values()))["groups"]
    lines = [
        f"Time-aware `balanced`, each candidate on the same groups in one process "
        f"(bench/catch_up_trial.py). Quality: the slowest member's catch-up time ÷ the best "
        f"plan HiGHS found, on the {groups} groups of the catch-up suite where a plan keeps up "
        f"(references saved by bench/quality.py --objective catch-up). CPU ms per assignment "
        f"on the suite ({len(suite)} groups of up to 60 "
        f"partitions), on {len(ordinary_groups)} ordinary groups of 24–200 partitions with "
        f"rates, and on the sample fleet's {len(fleet)} groups with rates. Load average "
        f"{before[0]:.2f} before, {after[0]:.2f} after, on {os.cpu_count()} cores.",
        "",
        "| " + " | ".join(columns) + " |",
        "|---|" + "---:|" * (len(columns) - 1),
    ]
    for name, r in results.items():
        cells = [name, f"{r['worst']:.4f}", str(r["above_half_pct"]), str(r["above_1pct"])]
        for part in ("suite", "ordinary", "fleet"):
            q = r[part]
            cells += [f"{q['median_ms']:.1f}", f"{q['p95_ms']:.1f}", f"{q['total_s']:.2f}"]
        table.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    Console().print(table)
    if held_out:
        held = held_out_table(times, held_out, args.held_out_from, sooner)
        lines += held
        print("\n".join(held))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "catch-up-trial.md").write_text("\n".join(lines) + "\n")
    print(f"written {RESULTS / 'catch-up-trial.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
