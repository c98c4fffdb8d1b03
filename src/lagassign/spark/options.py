"""The pipeline's options and their command-line flags.

Shared by ``lagassign pipeline`` and ``python -m lagassign.spark.pipeline`` (spark-submit), so
both take the same flags. Importing this module does not import PySpark: ``lagassign --help``
stays fast.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from lagassign.arguments import auto_offset_reset, positive_int, strategy_list
from lagassign.formats.errors import InputError
from lagassign.spark import sources
from lagassign.spark.storage import is_url
from lagassign.strategies import names


@dataclass(frozen=True, init=False)
class PipelineOptions:
    """What to read, what to compute, where to write, and where Spark runs.

    The sources' options (``inputs``, ``bootstrap_server``, ``timeout`` ...) are those their
    flags declare (:mod:`lagassign.spark.sources`): given as keywords, read as attributes
    (``options.bootstrap_server``), kept in :attr:`source_options`.
    """

    #: a local path, or a URL Spark takes (lagassign.spark.storage)
    out: Path | str
    #: only groups whose whole id matches this regular expression
    groups: str | None = None
    #: for sources that take it (describe dumps, live groups): the groups' auto.offset.reset
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
    #: every source's options by name, those not given at their defaults
    source_options: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, out: Path | str, **given: Any) -> None:
        own = {f.name: f for f in fields(self) if f.name not in ("out", "source_options")}
        defaults = sources.option_defaults()
        unknown = [k for k in given if k not in own and k not in defaults]
        if unknown:
            raise TypeError(f"PipelineOptions: unknown option {unknown[0]!r}")
        object.__setattr__(self, "out", out)
        for name, f in own.items():
            object.__setattr__(self, name, given.get(name, f.default))
        chosen = {k: v for k, v in given.items() if k in defaults}
        object.__setattr__(self, "source_options", {**defaults, **chosen})

    def __getattr__(self, name: str) -> Any:
        """A source's option (called only for names that are not attributes)."""
        options = self.__dict__.get("source_options", {})
        if name not in options:
            raise AttributeError(f"PipelineOptions has no option {name!r}")
        return options[name]

    def strategy_names(self) -> list[str]:
        return list(self.strategies) if self.strategies is not None else names()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The pipeline's flags, on ``parser``: each source's (spark/sources/), then the rest."""
    inputs = parser.add_argument_group("input (one of)").add_mutually_exclusive_group(required=True)
    listed = sources.listed()
    for s in listed:
        inputs.add_argument(s.flags[0].flag, **s.flags[0].arguments)
    for s in listed:
        for f in s.flags[1:]:
            parser.add_argument(f.flag, **f.arguments)
    parser.add_argument(
        "--groups",
        metavar="PATTERN",
        help="only groups whose whole id matches this regular expression",
    )
    parser.add_argument(
        "--auto-offset-reset",
        type=auto_offset_reset,
        metavar="POLICY",
        help=f"for {' and '.join(_taking_reset())}: the groups' auto.offset.reset "
        "(default latest); snapshot files say it in a column",
    )
    parser.add_argument(
        "--strategies",
        metavar="A,B,...",
        help="strategies to plan with (default: all)",
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder: a path, or a URL Spark takes (s3a://, hdfs://, abfss://, file://)",
    )
    add_spark_arguments(parser)
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


def add_spark_arguments(parser: argparse.ArgumentParser) -> None:
    """``--master`` and ``--conf``, for every command that starts Spark."""
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


def spark_conf(items: list[str]) -> tuple[tuple[str, str], ...]:
    """``--conf KEY=VALUE`` flags as (key, value) pairs."""
    conf = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError("--conf", f"expected KEY=VALUE, got {item!r}")
        conf.append((key.strip(), value.strip()))
    return tuple(conf)


def from_args(args: argparse.Namespace) -> PipelineOptions:
    """Checked options from parsed flags; bad combinations raise :class:`InputError` naming
    the flag."""
    given = _source_options(args)
    if args.auto_offset_reset is not None and not any(
        s.takes_reset and s.given(given) for s in sources.listed()
    ):
        raise InputError(
            "--auto-offset-reset",
            f"only with {' or '.join(_taking_reset())} (snapshot files have a column for it)",
        )
    if args.groups is not None:
        try:
            re.compile(args.groups)
        except re.error as e:
            raise InputError("--groups", f"not a regular expression: {e}") from None
    strategies = None if args.strategies is None else tuple(strategy_list(args.strategies))
    return PipelineOptions(
        out=args.out if is_url(args.out) else Path(args.out),
        groups=args.groups,
        auto_offset_reset=args.auto_offset_reset,
        strategies=strategies,
        master=args.master,
        conf=spark_conf(args.conf),
        partitions=args.partitions,
        report=not args.no_report,
        quiet=bool(args.quiet),
        **given,
    )


def _source_options(args: argparse.Namespace) -> dict[str, Any]:
    """Every source option from parsed flags; a flag given without its source's first flag
    raises :class:`InputError` naming it."""
    listed = sources.listed()
    options = {f.option: f.value(getattr(args, f.option)) for s in listed for f in s.flags}
    for s in listed:
        for f in s.flags[1:]:
            if getattr(args, f.option) is not None and not s.given(options):
                raise InputError(f.flag, f"only with {s.flags[0].flag}")
    return options


def _taking_reset() -> list[str]:
    """The input flags of the sources --auto-offset-reset applies to."""
    return [s.flags[0].flag for s in sources.listed() if s.takes_reset]
