"""Snapshot files, or folders of them (``--input``): JSON lines, CSV, Parquet
(:mod:`lagassign.formats.snapshot_formats`), one row per group × partition."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lagassign.formats import snapshot_formats
from lagassign.spark.sources import WholeGroups, flag, source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from lagassign.spark.options import PipelineOptions


@source(
    "snapshots",
    flags=(
        flag(
            "--input",
            dest="inputs",
            nargs="+",
            metavar="PATH",
            default=(),
            help=f"snapshot files or folders of them: {snapshot_formats.shown_suffixes()} (one row "
            "per group × partition; see docs/pipeline.md); paths or URLs Spark takes (s3a://, "
            "hdfs://, abfss://, file://)",
        ),
        flag(
            "--format",
            dest="input_format",
            choices=snapshot_formats.names(),
            help="with --input: the format of files whose name does not say it",
        ),
    ),
    described=lambda o: {"snapshots": list(o.inputs), "groups": o.groups},
    precedence=20,
)
def read_snapshots(spark: SparkSession, o: PipelineOptions) -> DataFrame | WholeGroups:
    from lagassign.spark.sources.files import read_files

    return read_files(
        spark, o.inputs, input_format=o.input_format, groups=o.groups, tasks=o.partitions
    )
