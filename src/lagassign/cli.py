"""The ``lagassign`` command: parse arguments, call the core, print. Nothing else lives here."""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console

from lagassign import __version__
from lagassign.arguments import (
    DEFAULT_RATE_WINDOW_S,
    DEFAULT_TIMEOUT_S,
    MAX_TIMEOUT_S,
    auto_offset_reset,
    bootstrap_servers,
    member_count,
    seconds_or_zero,
    strategy_list,
    strategy_name,
    timeout_seconds,
)
from lagassign.formats.describe import load_describe
from lagassign.formats.errors import InputError
from lagassign.formats.inputs import input_help, load_groups
from lagassign.formats.limits import one_line
from lagassign.kafka.offsets import ClientConfigError, GroupSnapshot, OffsetsError
from lagassign.lag_rules import group_lags
from lagassign.metrics import AssignmentMetrics, MemberLoad, member_loads
from lagassign.model import Assignment, Group, ModelError, TopicPartition
from lagassign.plan import GroupPlans, Plan, plan_group, with_members
from lagassign.spark.monitor.options import add_arguments as add_monitor_arguments
from lagassign.spark.options import add_arguments as add_pipeline_arguments
from lagassign.strategies import UnknownStrategy, names

EXIT_BAD_INPUT = 2
#: the cluster could not be read (unreachable, timed out, refused): not the input's fault
EXIT_RUNTIME = 1


class CliError(Exception):
    """A user error worth one line and exit status 2."""


def sample_describe_file() -> Path:
    """The embedded sample: seed 002's two ``kafka-consumer-groups --describe`` tables."""
    return Path(str(resources.files("lagassign") / "data" / "seed002-describe.txt"))


#: what ``--auto-offset-reset`` means, wherever lag comes from offsets
_RESET_HELP = (
    "the group's auto.offset.reset, for partitions without a committed offset: latest (lag 0; "
    "the default) or earliest (the whole log)"
)


def _add_live(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """--command-config and --timeout, for commands that read a live cluster (``optional``: for
    commands that read one when --bootstrap-server says so)."""
    with_server = "with --bootstrap-server: " if optional else ""
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help=f"{with_server}Kafka client properties (as for Kafka's tools): security.protocol, "
        "sasl.*, ssl.*",
    )
    parser.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"{with_server}seconds for reading the cluster, all requests together "
        f"(default {DEFAULT_TIMEOUT_S:g}, at most {MAX_TIMEOUT_S:g})",
    )


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="tables for reading (default) or one JSON document on stdout",
    )


def _add_input(parser: argparse.ArgumentParser, *, live: bool = False) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--input",
        metavar="FILE",
        help=input_help(),
    )
    source.add_argument(
        "--describe-file", metavar="FILE", help="output of kafka-consumer-groups.sh --describe"
    )
    source.add_argument(
        "--sample", action="store_true", help="the embedded sample (seed 002's describe tables)"
    )
    if live:
        source.add_argument(
            "--bootstrap-server",
            type=bootstrap_servers,
            metavar="HOST:PORT",
            help="read the group live from this cluster (needs --group)",
        )
    parser.add_argument(
        "--group",
        metavar="G",
        help="only this group of an input of several (a describe file, a snapshot file)"
        + ("; with --bootstrap-server, the group to read" if live else ""),
    )
    parser.add_argument(
        "--auto-offset-reset",
        type=auto_offset_reset,
        metavar="POLICY",
        default=None,
        help=("for describe files and live groups: " if live else "for describe files: ")
        + _RESET_HELP,
    )
    if live:
        _add_live(parser, optional=True)
        parser.add_argument(
            "--rate-window",
            type=seconds_or_zero,
            default=None,
            metavar="S",
            help="with --bootstrap-server: read the group twice S seconds apart and plan with "
            "the measured produce and consume rates (0: one read, no rates; default "
            f"{DEFAULT_RATE_WINDOW_S:g})",
        )


def _read_live(args: argparse.Namespace, window: float = 0.0) -> tuple[GroupSnapshot, Group]:
    """The group ``args.group`` as the cluster at ``args.bootstrap_server`` sees it now, as a
    snapshot and as a model group; with ``window``, its rates measured over that long."""
    from lagassign.kafka.config import client_config
    from lagassign.kafka.offsets import OffsetsReader

    if not args.group:
        raise CliError("--group: required with --bootstrap-server")
    _warnings_to_stderr()
    config = client_config(args.bootstrap_server, args.command_config)
    with OffsetsReader(config, timeout=args.timeout) as reader:
        ((snapshot, group),) = reader.sampled(
            [args.group], window, args.auto_offset_reset or "latest"
        )
    if not snapshot.exists:
        raise CliError(
            f"--group: no consumer group {args.group!r} at {config['bootstrap.servers']}"
        )
    return snapshot, group


def _warnings_to_stderr() -> None:
    """What the live edges log as degraded (a missing topic, say) as ``lagassign: warning:``."""
    logger = logging.getLogger("lagassign")
    if not any(getattr(h, "lagassign_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("lagassign: warning: %(message)s"))
        handler.lagassign_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def _load_groups(args: argparse.Namespace) -> list[Group]:
    reset = args.auto_offset_reset or "latest"
    if getattr(args, "bootstrap_server", None):
        window = DEFAULT_RATE_WINDOW_S if args.rate_window is None else args.rate_window
        return [_read_live(args, window)[1]]
    if getattr(args, "command_config", None):
        raise CliError("--command-config: only with --bootstrap-server")
    if getattr(args, "rate_window", None) is not None:
        raise CliError("--rate-window: only with --bootstrap-server")
    if args.input:
        if args.auto_offset_reset:
            raise CliError(
                "--auto-offset-reset: the input file sets auto_offset_reset itself (a group "
                "file's key, a snapshot file's column)"
            )
        groups = load_groups(args.input)
    else:
        groups = load_describe(args.describe_file or sample_describe_file(), reset)
    if args.group is not None:
        groups = [g for g in groups if g.id == args.group]
        if not groups:
            raise CliError(f"--group: no group {args.group!r} in the input")
    if not groups:
        source = args.input or args.describe_file or "the sample"
        raise CliError(f"{source}: the input holds no group")
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
    _add_format(assign)
    assign.set_defaults(run=_run_assign)

    plan = commands.add_parser("plan", help="every strategy side by side, with metrics")
    _add_input(plan, live=True)
    plan.add_argument(
        "--strategies",
        type=str,
        default=None,
        metavar="A,B,...",
        help="strategies to compare (default: all)",
    )
    plan.add_argument(
        "--members",
        type=member_count,
        metavar="N",
        help="plan for N members (member-1 … member-N) reading every topic of the group instead "
        "of the members it has: for a group whose consumers are all stopped, which has none",
    )
    plan.add_argument(
        "--plot", metavar="PNG", help="also write a bar chart of each member's lag to this file"
    )
    _add_format(plan)
    plan.set_defaults(run=_run_plan)

    describe = commands.add_parser(
        "describe",
        help="a live group's offsets, lag and owners (as kafka-consumer-groups --describe)",
    )
    describe.add_argument(
        "--bootstrap-server",
        required=True,
        type=bootstrap_servers,
        metavar="HOST:PORT",
        help="the cluster to read (as for kafka-consumer-groups)",
    )
    describe.add_argument("--group", required=True, metavar="G", help="the consumer group")
    describe.add_argument(
        "--auto-offset-reset",
        type=auto_offset_reset,
        metavar="POLICY",
        default="latest",
        help=_RESET_HELP,
    )
    _add_live(describe)
    _add_format(describe)
    describe.set_defaults(run=_run_describe)

    simulate = commands.add_parser(
        "simulate",
        help="simulate each strategy draining a backlog while producers produce",
    )
    simulate.add_argument(
        "--scenario",
        metavar="FILE",
        help="scenario file (JSON, docs/simulate.md); default: the built-in scenario",
    )
    simulate.add_argument(
        "--strategies",
        type=str,
        default=None,
        metavar="A,B,...",
        help="strategies to compare (default: all)",
    )
    simulate.add_argument(
        "--plot-dir", metavar="DIR", help="write drain-total.png and drain-members.png here"
    )
    _add_format(simulate)
    simulate.set_defaults(run=_run_simulate)

    pipeline = commands.add_parser(
        "pipeline",
        help="lag and every strategy's plan for a whole fleet of groups, on PySpark",
    )
    add_pipeline_arguments(pipeline)
    pipeline.set_defaults(run=_run_pipeline)

    # -- monitor (issue 14): continuous lag from __consumer_offsets on Spark Structured Streaming
    monitor = commands.add_parser(
        "monitor", help="continuous lag from __consumer_offsets, on Spark Structured Streaming"
    )
    add_monitor_arguments(monitor)
    monitor.set_defaults(run=_run_monitor)

    listing = commands.add_parser("strategies", help="list the registered strategies")
    listing.set_defaults(run=_run_strategies)
    return parser


def _run_strategies(args: argparse.Namespace, console: Console) -> None:
    for name in names():
        print(name)


def _run_pipeline(args: argparse.Namespace, console: Console) -> None:
    """The PySpark pipeline (lagassign.spark; imported here: PySpark loads only for it)."""
    try:
        from lagassign.spark.pipeline import run_from_args
    except ImportError as e:
        raise CliError(f"pipeline: needs PySpark, pyarrow and pandas ({e})") from None
    run_from_args(args)


def _run_monitor(args: argparse.Namespace, console: Console) -> None:
    """The monitor's streaming query (lagassign.spark.monitor; PySpark loads only for it)."""
    from lagassign.spark.kafka_jars import KafkaJarsMissing
    from lagassign.spark.monitor.options import from_args
    from lagassign.spark.monitor.query import run_monitor

    options = from_args(args)
    try:
        status = run_monitor(options)
    except KafkaJarsMissing as e:
        raise CliError(f"monitor: {e}") from None
    if status:
        raise SystemExit(status)


def _assign_json(gp: GroupPlans) -> dict[str, Any]:
    plan = gp.plans[0]
    return {
        "strategy": plan.strategy,
        "assignment": {
            mid: [[tp.topic, tp.partition] for tp in tps]
            for mid, tps in plan.assignment.partitions.items()
        },
        "member_lag": {m.member_id: m.lag for m in plan.metrics.members},
        **_member_catch_up_json(plan.metrics),
    }


def _member_catch_up_json(m: AssignmentMetrics) -> dict[str, Any]:
    """``member_catch_up`` (seconds, null when never) and ``falls_behind`` when rates are
    known."""
    if m.member_catch_up is None:
        return {}
    return {
        "member_catch_up": {
            member: None if math.isinf(t) else t for member, t in m.member_catch_up.items()
        },
        "falls_behind": list(m.falls_behind),
    }


def _warn_falling_behind(gp: GroupPlans) -> None:
    """Say so when ``balanced`` plans a member into never catching up: then no plan it found
    keeps every member ahead of its inflow, and it has minimised the largest inflow ÷
    capacity instead (:func:`lagassign.strategies.balanced.catch_up_plan`)."""
    for plan in gp.plans:
        behind = plan.metrics.falls_behind
        if plan.strategy == "balanced" and behind and gp.time_aware:
            shown = ", ".join(behind[:5]) + (
                f" and {len(behind) - 5} more" if len(behind) > 5 else ""
            )
            print(
                f"lagassign: warning: group {gp.group.id}: no plan balanced found keeps every "
                f"member ahead of its inflow; it leaves the fewest behind it can by the largest "
                f"inflow ÷ capacity ({shown} never catch up)",
                file=sys.stderr,
            )


def _run_assign(args: argparse.Namespace, console: Console) -> None:
    strategy_name(args.strategy)
    groups = _load_groups(args)
    if len(groups) > 1:
        raise CliError(f"the input holds {len(groups)} groups; choose one with --group")
    gp = plan_group(groups[0], [args.strategy])
    _warn_falling_behind(gp)
    if args.format == "json":
        if not gp.group.members:
            print(f"lagassign: warning: {_no_members(args, gp.group)}", file=sys.stderr)
        print(json.dumps(_assign_json(gp)))
        return
    from lagassign.report.tables import assignment_table, detached, plan_summary_table

    if not gp.group.members:
        console.print(detached(plan_summary_table(gp, notes=[_no_members(args, gp.group)])))
        return
    console.print(detached(assignment_table(gp.plans[0], gp.capacities)))
    console.print(detached(plan_summary_table(gp)))


def _plan_json(gp: GroupPlans, members_from: str) -> dict[str, Any]:
    rows = ([gp.current] if gp.current else []) + list(gp.plans) if gp.group.members else []
    settled = gp.settled
    return {
        "group": gp.group.id,
        "total_lag": sum(gp.lags.values()),
        "members": len(gp.group.members),
        "members_from": members_from,
        "time_aware": gp.time_aware,
        "plans": [
            {
                "strategy": p.strategy,
                **_plan_entry(p),
                **(
                    {
                        "settled": {
                            **_plan_entry(settled[p.strategy]),
                            "settles": p.strategy not in gp.unsettled,
                        }
                    }
                    if p.strategy in settled
                    else {}
                ),
            }
            for p in rows
        ],
    }


def _plan_entry(p: Plan) -> dict[str, Any]:
    """One plan in ``plan --format json``: its assignment and metrics."""
    return {
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
        "unassigned": p.metrics.unassigned,
        **_catch_up_json(p.metrics),
        **_member_catch_up_json(p.metrics),
    }


def _catch_up_json(m: AssignmentMetrics) -> dict[str, float | None]:
    """``catch_up_seconds`` when consume rates are known: seconds, null when never."""
    if m.catch_up_seconds is None:
        return {}
    return {"catch_up_seconds": None if math.isinf(m.catch_up_seconds) else m.catch_up_seconds}


def _planned_members(args: argparse.Namespace, group: Group) -> tuple[Group, str, str]:
    """The group to plan, which members it is planned for (``members_from`` in JSON: ``group``
    or ``--members``) and what the summary table's title says of them."""
    if args.members is None:
        return group, "group", ""
    had = len(group.members)
    return with_members(group, args.members), "--members", f"--members; it has {had} now"


def _no_members(args: argparse.Namespace, group: Group) -> str:
    """Why there is nothing to plan for ``group``, and what to do about it."""
    why = (
        "its consumers are all stopped, and Kafka keeps no record of the members a group had"
        if getattr(args, "bootstrap_server", None)
        else "the input lists none"
    )
    planning = args.command == "plan"
    verb, flag = ("plan", "--members N") if planning else ("assign", "plan --members N")
    return (
        f"group {group.id} has no members ({why}): nothing to {verb}; {flag} plans for N "
        "members reading its topics"
    )


def _run_plan(args: argparse.Namespace, console: Console) -> None:
    strategies = strategy_list(args.strategies) if args.strategies is not None else None
    planned = [_planned_members(args, g) for g in _load_groups(args)]
    groups = [plan_group(g, strategies) for g, _, _ in planned]
    for gp in groups:
        _warn_falling_behind(gp)
    if args.format == "json":
        for gp in groups:
            if not gp.group.members:
                print(f"lagassign: warning: {_no_members(args, gp.group)}", file=sys.stderr)
        print(json.dumps([_plan_json(gp, p[1]) for gp, p in zip(groups, planned, strict=True)]))
    else:
        from lagassign.report.tables import detached, plan_members_table, plan_summary_table

        for gp, (_, _, said) in zip(groups, planned, strict=True):
            if not gp.group.members:
                empty = plan_summary_table(gp, notes=[_no_members(args, gp.group)])
                console.print(detached(empty))
                continue
            console.print(detached(plan_summary_table(gp, members_from=said)))
            console.print(detached(plan_members_table(gp)))
    if args.plot:
        from lagassign.report.charts import plot_plans

        try:
            written = plot_plans(groups, args.plot)
        except OSError as e:
            raise CliError(f"--plot: cannot write {args.plot}: {e.strerror or e}") from None
        print(f"chart written to {written}", file=sys.stderr)


def _run_simulate(args: argparse.Namespace, console: Console) -> None:
    from lagassign.formats.scenario import load_scenario
    from lagassign.simulate.engine import simulate
    from lagassign.simulate.generators import default_scenario

    strategies = strategy_list(args.strategies) if args.strategies is not None else None
    scenario = load_scenario(args.scenario) if args.scenario else default_scenario()
    result = simulate(scenario, strategies)
    from lagassign.report.simulation import rebalances_table, simulation_json, summary_table

    if args.format == "json":
        print(json.dumps(simulation_json(result)))
    else:
        from lagassign.report.tables import detached

        console.print(detached(summary_table(result)))
        console.print(detached(rebalances_table(result)))
    if args.plot_dir:
        from lagassign.report.simulation import plot_simulation

        try:
            written = plot_simulation(result, args.plot_dir)
        except OSError as e:
            raise CliError(f"--plot-dir: cannot write {args.plot_dir}: {e.strerror or e}") from None
        print(f"charts written to {', '.join(str(p) for p in written)}", file=sys.stderr)


def _owned_loads(group: Group, lags: dict[TopicPartition, int]) -> tuple[MemberLoad, ...]:
    """Partitions and lag each member owns now (every member, owning something or not)."""
    owned = Assignment.build(group.members, {m.id: m.owned for m in group.members})
    return member_loads(owned, lags)


def _describe_json(
    snapshot: GroupSnapshot, lags: dict[TopicPartition, int], loads: tuple[MemberLoad, ...]
) -> dict[str, Any]:
    return {
        "group": snapshot.group,
        "partitions": [
            {
                "topic": p.topic,
                "partition": p.partition,
                "current_offset": p.committed,
                "log_end_offset": p.end,
                "lag": lags[p.tp],
                "member_id": p.member_id,
            }
            for p in snapshot.partitions
        ],
        "members": {
            load.member_id: {"partitions": load.partitions, "lag": load.lag} for load in loads
        },
    }


def _run_describe(args: argparse.Namespace, console: Console) -> None:
    snapshot, group = _read_live(args)
    lags = group_lags(group)
    loads = _owned_loads(group, lags)
    if args.format == "json":
        print(json.dumps(_describe_json(snapshot, lags, loads)))
        return
    from lagassign.report.tables import describe_members_table, describe_table

    # whole lines, as kafka-consumer-groups prints them (PlainTable)
    console.print(describe_table(group, lags, snapshot.state), crop=False)
    console.print()
    console.print(describe_members_table(group, loads), crop=False)


#: how wide tables may grow when stdout is not a terminal: a file or a pipe has no width to
#: keep to, and a table squeezed into one wraps or cuts member ids and strategy names
UNBOUNDED_WIDTH = 1000


def _console() -> Console:
    """A terminal's width (at least 120 columns), or no limit short of
    :data:`UNBOUNDED_WIDTH` for a file or a pipe."""
    terminal = Console()
    width = max(terminal.width, 120) if terminal.is_terminal else UNBOUNDED_WIDTH
    # ids, topics and hosts are shown as they are: "[red]" or ":fire:" in an id is no markup
    return Console(width=width, markup=False, emoji=False)


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    console = _console()
    try:
        args.run(args, console)
    # (one_line: a group id read from a cluster may hold a newline; files' text is checked)
    except (CliError, InputError, ModelError, UnknownStrategy, ClientConfigError) as e:
        print(f"lagassign: error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OffsetsError as e:
        print(f"lagassign: error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_RUNTIME
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
