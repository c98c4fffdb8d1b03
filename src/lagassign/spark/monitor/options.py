"""``lagassign monitor``'s flags -> :class:`MonitorOptions` (every error names its flag).
Light to import: the CLI builds its parser from here for every command."""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lagassign.arguments import (
    DEFAULT_TIMEOUT_S,
    bootstrap_servers,
    percent,
    positive_minutes,
    positive_seconds,
)
from lagassign.formats.client_properties import read_properties
from lagassign.formats.errors import InputError
from lagassign.kafka.config import client_config, merge
from lagassign.spark.options import add_spark_arguments, spark_conf

# here, not in plans.py: building the command line must not import pyarrow
#: ``--plan-every``'s default, in minutes
DEFAULT_PLAN_EVERY_MIN = 5.0
#: ``--recommend-threshold``'s default: recommend ``balanced`` when it cuts catch-up time by
#: more than this share
DEFAULT_RECOMMEND_THRESHOLD = 0.2

DEFAULT_INTERVAL_S = 10.0


@dataclass(frozen=True)
class MonitorOptions:
    #: librdkafka properties, for the offsets reads on the driver
    client_config: Mapping[str, str]
    out: Path
    #: the Java client's properties as --command-config wrote them (with bootstrap.servers),
    #: for Spark's Kafka source, which runs the Java client; None: ``client_config``
    source_config: Mapping[str, str] | None = None
    checkpoint: Path | None = None
    group: re.Pattern[str] | None = None
    interval: float = DEFAULT_INTERVAL_S
    duration: float | None = None
    master: str | None = None
    conf: Sequence[tuple[str, str]] = field(default_factory=tuple)
    #: each offsets read on the driver
    timeout: float = DEFAULT_TIMEOUT_S
    #: minutes between a group's plans
    plan_every: float = DEFAULT_PLAN_EVERY_MIN
    #: recommend ``balanced`` when it cuts catch-up time by more than this fraction
    recommend_threshold: float = DEFAULT_RECOMMEND_THRESHOLD

    @property
    def checkpoint_dir(self) -> Path:
        return self.checkpoint or self.out / "_checkpoint"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-server",
        required=True,
        type=bootstrap_servers,
        metavar="HOST:PORT",
        help="the cluster whose __consumer_offsets to follow",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="where the lag table goes")
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="client properties (SASL, SSL), for the Kafka source (as kafka.*) and offset reads",
    )
    parser.add_argument(
        "--group", metavar="REGEX", help="only groups whose whole id matches this expression"
    )
    parser.add_argument(
        "--interval",
        type=positive_seconds,
        default=DEFAULT_INTERVAL_S,
        metavar="SECONDS",
        help=f"one micro-batch every this many seconds (default {DEFAULT_INTERVAL_S:g})",
    )
    parser.add_argument(
        "--duration",
        type=positive_seconds,
        metavar="SECONDS",
        help="stop after this many seconds (default: until Ctrl-C or SIGTERM)",
    )
    parser.add_argument(
        "--checkpoint", metavar="DIR", help="the query's checkpoint (default DIR/_checkpoint)"
    )
    parser.add_argument(
        "--plan-every",
        type=positive_minutes,
        default=DEFAULT_PLAN_EVERY_MIN,
        metavar="MINUTES",
        help="plan each group every this many minutes: catch-up times now and under balanced "
        f"(default {DEFAULT_PLAN_EVERY_MIN:g})",
    )
    parser.add_argument(
        "--recommend-threshold",
        type=percent,
        default=DEFAULT_RECOMMEND_THRESHOLD,
        metavar="PERCENT",
        help="recommend balanced when it cuts catch-up time by more than this "
        f"(default {DEFAULT_RECOMMEND_THRESHOLD * 100:g}%%)",
    )
    add_spark_arguments(parser)


def from_args(args: argparse.Namespace) -> MonitorOptions:
    group = None
    if args.group is not None:
        try:
            group = re.compile(args.group)
        except re.error as e:
            raise InputError("--group", f"not a regular expression: {e}") from None
    java = (
        {p.key: p.value for p in read_properties(args.command_config)}
        if args.command_config
        else {}
    )
    return MonitorOptions(
        client_config=client_config(args.bootstrap_server, args.command_config),
        source_config=merge(java, args.bootstrap_server),
        out=Path(args.out),
        checkpoint=None if args.checkpoint is None else Path(args.checkpoint),
        group=group,
        interval=args.interval,
        duration=args.duration,
        master=args.master,
        conf=spark_conf(args.conf),
        plan_every=args.plan_every,
        recommend_threshold=args.recommend_threshold,
    )
