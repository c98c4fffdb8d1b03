"""``kafka-consumer-groups --describe`` dumps, or folders of them (``--describe``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lagassign.spark.sources import WholeGroups, flag, source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from lagassign.spark.options import PipelineOptions


@source(
    "describe",
    flags=(
        flag(
            "--describe",
            nargs="+",
            metavar="PATH",
            default=(),
            help="kafka-consumer-groups --describe dumps, or folders of them (paths or URLs)",
        ),
    ),
    described=lambda o: {"describe": list(o.describe), "groups": o.groups},
    precedence=30,
    takes_reset=True,
)
def read_describe(spark: SparkSession, o: PipelineOptions) -> DataFrame | WholeGroups:
    from lagassign.spark.sources.files import read_files

    return read_files(
        spark, o.describe, describe=True, groups=o.groups, auto_offset_reset=o.auto_offset_reset
    )
