"""The pipeline's options and their command-line flags.

Shared by ``lagassign pipeline`` and ``python -m lagassign.spark.pipeline`` (spark-submit), so
both take the same flags. Importing this module does not import PySpark: ``lagassign --help``
stays fast.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

from lagassign.arguments import (
    DEFAULT_RATE_WINDOW_S,
    DEFAULT_TIMEOUT_S,
    positive_int,
    positive_seconds,
    seconds_or_zero,
    strategy_list,
)
from lagassign.formats.errors import InputError
from lagassign.strategies import names


@dataclass(frozen=True)
class PipelineOptions:
    """What to read, what to compute, where to write, and where Spark runs."""

    out: Path
    #: snapshot files, or folders of them (JSON lines, CSV, Parquet)
    inputs: tuple[str, ...] = ()
    #: the snapshot format when file names do not say it: jsonl, csv or parquet
    input_format: str | None = None
    #: kafka-consumer-groups --describe dumps, or folders of them
    describe: tuple[str, ...] = ()
    #: the embedded sample fleet
    sample: bool = False
    #: read the groups live from this cluster
    bootstrap_server: str | None = None
    #: Kafka client properties file for the live cluster
    command_config: str | None = None
    #: seconds for reading one group from the cluster
    timeout: float = DEFAULT_TIMEOUT_S
    #: live groups are read twice this many seconds apart, for their rates (0: once)
    rate_window: float = DEFAULT_RATE_WINDOW_S
    #: only groups whose whole id matches this regular expression
    groups: str | None = None
    #: for describe dumps and live groups: the groups' auto.offset.reset
    auto_offset_reset: str | None = None
    #: strategies to plan with; None: every registered one
    strategies: tuple[str, ...] | None = None
    #: Spark master URL; None: local[*], or spark-submit's own
    master: str | None = None
    #: extra Spark configuration
    conf: tuple[tuple[str, str], ...] = ()
    #: tasks for planning (Spark shuffle partitions); None: 4 per core
    partitions: int | None = None
    #: write report.html and its PNGs
    report: bool = True
    #: no progress on stderr
    quiet: bool = False
    #: per-group charts in the report (the worst groups first)
    charts: int = 6

    def strategy_names(self) -> list[str]:
        return list(self.strategies) if self.strategies is not None else names()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The pipeline's flags, on ``parser``."""
    source = parser.add_argument_group("input (one of)").add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--input",
        nargs="+",
        metavar="PATH",
        help="snapshot files or folders of them: .jsonl, .csv, .parquet (one row per group × "
        "partition; see docs/pipeline.md)",
    )
    source.add_argument(
        "--describe",
        nargs="+",
        metavar="PATH",
        help="kafka-consumer-groups --describe dumps, or folders of them",
    )
    source.add_argument(
        "--sample",
        action="store_true",
        help="the embedded sample fleet (a few hundred generated groups and seed 002's tables)",
    )
    source.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help="read every consumer group (or those --groups matches) live from this cluster",
    )
    parser.add_argument(
        "--format",
        dest="input_format",
        choices=("jsonl", "csv", "parquet"),
        help="with --input: the format of files whose name does not say it",
    )
    parser.add_argument(
        "--groups",
        metavar="PATTERN",
        help="only groups whose whole id matches this regular expression",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="with --bootstrap-server: Kafka client properties (security.protocol, sasl.*, ssl.*)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="S",
        help=f"with --bootstrap-server: seconds for reading one group "
        f"(default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--rate-window",
        type=seconds_or_zero,
        default=None,
        metavar="S",
        help="with --bootstrap-server: read every group twice S seconds apart and plan with the "
        "measured produce and consume rates (0: one read, no rates; default "
        f"{DEFAULT_RATE_WINDOW_S:g})",
    )
    parser.add_argument(
        "--auto-offset-reset",
        metavar="POLICY",
        help="for --describe and --bootstrap-server: the groups' auto.offset.reset "
        "(default latest); snapshot files say it in a column",
    )
    parser.add_argument(
        "--strategies",
        metavar="A,B,...",
        help="strategies to plan with (default: all)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument(
        "--master", metavar="URL", help="Spark master (default local[*], or spark-submit's)"
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, as for spark-submit (repeatable)",
    )
    parser.add_argument(
        "--partitions",
        type=positive_int,
        metavar="N",
        help="tasks for planning the groups (default: 4 per core)",
    )
    parser.add_argument(
        "--no-report", action="store_true", help="write the tables only, no report.html"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def from_args(args: argparse.Namespace) -> PipelineOptions:
    """Checked options from parsed flags; bad combinations raise :class:`InputError` naming
    the flag."""
    live = args.bootstrap_server is not None
    if args.input_format and not args.input:
        raise InputError("--format", "only with --input")
    if not live:
        for flag, value in (
            ("--command-config", args.command_config),
            ("--timeout", args.timeout),
            ("--rate-window", args.rate_window),
        ):
            if value is not None:
                raise InputError(flag, "only with --bootstrap-server")
    if args.auto_offset_reset is not None and not (live or args.describe):
        raise InputError(
            "--auto-offset-reset",
            "only with --describe or --bootstrap-server (snapshot files have a column for it)",
        )
    if args.groups is not None:
        try:
            re.compile(args.groups)
        except re.error as e:
            raise InputError("--groups", f"not a regular expression: {e}") from None
    strategies = None if args.strategies is None else tuple(strategy_list(args.strategies))
    conf = []
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError("--conf", f"expected KEY=VALUE, got {item!r}")
        conf.append((key.strip(), value.strip()))
    return PipelineOptions(
        out=Path(args.out),
        inputs=tuple(args.input or ()),
        input_format=args.input_format,
        describe=tuple(args.describe or ()),
        sample=bool(args.sample),
        bootstrap_server=args.bootstrap_server,
        command_config=args.command_config,
        timeout=args.timeout if args.timeout is not None else DEFAULT_TIMEOUT_S,
        rate_window=DEFAULT_RATE_WINDOW_S if args.rate_window is None else args.rate_window,
        groups=args.groups,
        auto_offset_reset=args.auto_offset_reset,
        strategies=strategies,
        master=args.master,
        conf=tuple(conf),
        partitions=args.partitions,
        report=not args.no_report,
        quiet=bool(args.quiet),
    )
