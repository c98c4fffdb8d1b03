"""The ``lagassign`` command: parse arguments, call the core, print. Nothing else lives here."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console

from lagassign import __version__
from lagassign.formats.describe import load_describe
from lagassign.formats.errors import InputError
from lagassign.formats.group_file import load_group
from lagassign.model import Group, ModelError
from lagassign.plan import GroupPlans, plan_group
from lagassign.strategies import UnknownStrategy, names

EXIT_BAD_INPUT = 2


class CliError(Exception):
    """A user error worth one line and exit status 2."""


def sample_describe_file() -> Path:
    """The embedded sample: seed 002's two ``kafka-consumer-groups --describe`` tables."""
    return Path(str(resources.files("lagassign") / "data" / "seed002-describe.txt"))


def _strategy_list(text: str) -> list[str]:
    chosen = [s.strip() for s in text.split(",") if s.strip()]
    known = names()
    for name in chosen:
        if name not in known:
            raise CliError(f"--strategies: {UnknownStrategy(name)}")
    return chosen


def _add_input(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", metavar="FILE", help="group file (JSON)")
    source.add_argument(
        "--describe-file", metavar="FILE", help="output of kafka-consumer-groups.sh --describe"
    )
    source.add_argument(
        "--sample", action="store_true", help="the embedded sample (seed 002's describe tables)"
    )
    parser.add_argument("--group", metavar="G", help="only this group of a describe file")
    parser.add_argument(
        "--auto-offset-reset",
        metavar="POLICY",
        default=None,
        help="for describe files: the group's auto.offset.reset (default latest)",
    )


def _load_groups(args: argparse.Namespace) -> list[Group]:
    reset = args.auto_offset_reset or "latest"
    if args.input:
        if args.auto_offset_reset:
            raise CliError("--auto-offset-reset: the group file sets auto_offset_reset itself")
        groups = [load_group(args.input)]
    else:
        groups = load_describe(args.describe_file or sample_describe_file(), reset)
    if args.group is not None:
        groups = [g for g in groups if g.id == args.group]
        if not groups:
            raise CliError(f"--group: no group {args.group!r} in the input")
    if not groups:
        raise CliError("the input holds no group")
    return groups


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lagassign",
        description="Assign Kafka partitions across a consumer group so that lag is spread evenly.",
    )
    parser.add_argument("--version", action="version", version=f"lagassign {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    assign = commands.add_parser("assign", help="assign one group with one strategy")
    assign.add_argument(
        "--strategy", required=True, metavar="NAME", help=f"one of: {', '.join(names())}"
    )
    _add_input(assign)
    assign.add_argument("--format", choices=("table", "json"), default="table")
    assign.set_defaults(run=_run_assign)

    plan = commands.add_parser("plan", help="every strategy side by side, with metrics")
    _add_input(plan)
    plan.add_argument(
        "--strategies",
        type=str,
        default=None,
        metavar="A,B,...",
        help="strategies to compare (default: all)",
    )
    plan.add_argument("--plot", metavar="PNG", help="write a bar chart of member lag")
    plan.add_argument("--format", choices=("table", "json"), default="table")
    plan.set_defaults(run=_run_plan)

    listing = commands.add_parser("strategies", help="list the registered strategies")
    listing.set_defaults(run=_run_strategies)
    return parser


def _run_strategies(args: argparse.Namespace, console: Console) -> None:
    for name in names():
        print(name)


def _assign_json(gp: GroupPlans) -> dict[str, Any]:
    plan = gp.plans[0]
    return {
        "strategy": plan.strategy,
        "assignment": {
            mid: [[tp.topic, tp.partition] for tp in tps]
            for mid, tps in plan.assignment.partitions.items()
        },
        "member_lag": {m.member_id: m.lag for m in plan.metrics.members},
    }


def _run_assign(args: argparse.Namespace, console: Console) -> None:
    if args.strategy not in names():
        raise CliError(f"--strategy: {UnknownStrategy(args.strategy)}")
    groups = _load_groups(args)
    if len(groups) > 1:
        raise CliError(f"the input holds {len(groups)} groups; choose one with --group")
    gp = plan_group(groups[0], [args.strategy])
    if args.format == "json":
        print(json.dumps(_assign_json(gp)))
        return
    from lagassign.report.tables import assignment_table, plan_summary_table

    console.print(assignment_table(gp.plans[0]))
    console.print(plan_summary_table(gp))


def _plan_json(gp: GroupPlans) -> dict[str, Any]:
    rows = ([gp.current] if gp.current else []) + list(gp.plans)
    return {
        "group": gp.group.id,
        "total_lag": sum(gp.lags.values()),
        "plans": [
            {
                "strategy": p.strategy,
                "assignment": {
                    mid: [[tp.topic, tp.partition] for tp in tps]
                    for mid, tps in p.assignment.partitions.items()
                },
                "member_lag": {m.member_id: m.lag for m in p.metrics.members},
                "max_member_lag": p.metrics.max_member_lag,
                "lower_bound": p.metrics.lower_bound,
                "imbalance": p.metrics.imbalance,
                "count_spread": p.metrics.count_spread,
                "moves": p.metrics.moves,
            }
            for p in rows
        ],
    }


def _run_plan(args: argparse.Namespace, console: Console) -> None:
    strategies = _strategy_list(args.strategies) if args.strategies is not None else None
    groups = [plan_group(g, strategies) for g in _load_groups(args)]
    if args.format == "json":
        print(json.dumps([_plan_json(gp) for gp in groups]))
    else:
        from lagassign.report.tables import plan_members_table, plan_summary_table

        for gp in groups:
            console.print(plan_summary_table(gp))
            console.print(plan_members_table(gp))
    if args.plot:
        from lagassign.report.charts import plot_plans

        try:
            written = plot_plans(groups, args.plot)
        except OSError as e:
            raise CliError(f"--plot: cannot write {args.plot}: {e.strerror or e}") from None
        print(f"chart written to {written}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    console = Console(width=max(Console().width, 120))
    try:
        args.run(args, console)
    except (CliError, InputError, ModelError, UnknownStrategy) as e:
        print(f"lagassign: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
