"""The embedded sample fleet (``--sample``, and the fallback when no input is given): a folder
of snapshot files, a few hundred generated groups and seed 002's tables."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from lagassign.spark.sources import WholeGroups, flag, source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from lagassign.spark.options import PipelineOptions


def sample_fleet() -> Path:
    """The embedded sample fleet: a folder of snapshot files."""
    return Path(str(resources.files("lagassign") / "data" / "fleet"))


@source(
    "sample",
    flags=(
        flag(
            "--sample",
            action="store_true",
            default=False,
            help="the embedded sample fleet (a few hundred generated groups and seed 002's tables)",
        ),
    ),
    described=lambda o: {"sample": str(sample_fleet()), "groups": o.groups},
    precedence=0,
    fallback=True,
)
def read_sample(spark: SparkSession, o: PipelineOptions) -> DataFrame | WholeGroups:
    from lagassign.spark.sources.files import read_files

    return read_files(spark, [str(sample_fleet())], groups=o.groups, tasks=o.partitions)
