"""The pipeline's inputs as one Spark DataFrame of snapshot rows (:data:`ROW_SCHEMA`).

Files are listed on the driver and read on the executors, one task per file or few files
(``mapInArrow`` over the list of paths), by :mod:`lagassign.formats.snapshot`; a live cluster's
groups are listed on the driver and read on the executors, a share of the groups per task,
each task with its own :class:`~lagassign.kafka.offsets.OffsetsReader`. A source that fails
gives an ``error`` row instead of raising on the executor, so that the driver can say what
went wrong in one line (:func:`first_error`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lagassign.formats.errors import InputError
from lagassign.formats.snapshot import read_describe
from lagassign.formats.snapshot import read_snapshot as read_snapshot_file
from lagassign.formats.snapshot_rows import (
    ROW_SCHEMA,
    error_batch,
    format_of,
    group_rows,
    rows_batch,
)
from lagassign.kafka.config import client_config
from lagassign.kafka.groups import list_groups
from lagassign.kafka.offsets import OffsetsError
from lagassign.spark.options import PipelineOptions
from lagassign.spark.schema import ddl

log = logging.getLogger(__name__)

#: the error rows of a live source whose cluster could not be read have this source
CLUSTER = "<cluster>"

BatchFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def sample_fleet() -> Path:
    """The embedded sample fleet: a folder of snapshot files."""
    return Path(str(resources.files("lagassign") / "data" / "fleet"))


# ------------------------------------------------------------------------------------------------
# files


def list_files(
    paths: Sequence[str], *, snapshots: bool, input_format: str | None = None
) -> list[str]:
    """Every file of ``paths`` (folders are walked, hidden files and Spark's ``_SUCCESS`` and
    ``.crc`` files skipped), sorted. In folders, snapshot files are those whose name says a
    format (unless ``input_format`` is given); files named on their own are always read."""
    found: list[str] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            if snapshots and input_format is None and format_of(str(path)) is None:
                raise InputError(
                    given, "unknown snapshot format (name it .jsonl, .csv or .parquet, or --format)"
                )
            found.append(str(path))
            continue
        if not path.is_dir():
            raise InputError(given, "no such file or folder")
        inside = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            for name in sorted(files):
                if name.startswith((".", "_")) or name.endswith(".crc"):
                    continue
                file = os.path.join(root, name)
                if snapshots and input_format is None and format_of(file) is None:
                    log.info("%s: not a snapshot file name; skipped", file)
                    continue
                inside.append(file)
        if not inside:
            raise InputError(given, "no input files in this folder")
        found.extend(inside)
    return sorted(dict.fromkeys(found))


def _file_reader(
    describe: bool,
    input_format: str | None,
    groups: re.Pattern[str] | None,
    auto_offset_reset: str,
) -> BatchFunction:
    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for path in batch.column("path").to_pylist():
                try:
                    if describe:
                        yield from read_describe(path, auto_offset_reset, groups)
                    else:
                        yield from read_snapshot_file(path, input_format, groups=groups)
                except InputError as e:
                    yield error_batch(e)
                except Exception as e:  # a file no check foresaw: still named, in one line
                    gist = " ".join(f"{type(e).__name__}: {e}".split())
                    yield error_batch(f"cannot read: {gist[:300]}", path)

    return read


def _paths_frame(spark: SparkSession, files: Sequence[str]) -> DataFrame:
    tasks = max(1, min(len(files), 2 * spark.sparkContext.defaultParallelism))
    frame = spark.createDataFrame([(i, f) for i, f in enumerate(files)], "i int, path string")
    return frame.repartition(tasks)


def read_files(
    spark: SparkSession,
    paths: Sequence[str],
    *,
    describe: bool = False,
    input_format: str | None = None,
    groups: str | None = None,
    auto_offset_reset: str | None = None,
) -> DataFrame:
    """Snapshot files (or describe dumps), read on the executors."""
    files = list_files(paths, snapshots=not describe, input_format=input_format)
    log.info("reading %d %s file(s)", len(files), "describe" if describe else "snapshot")
    pattern = re.compile(groups) if groups is not None else None
    reader = _file_reader(describe, input_format, pattern, auto_offset_reset or "latest")
    return _paths_frame(spark, files).mapInArrow(reader, ddl(ROW_SCHEMA))


# ------------------------------------------------------------------------------------------------
# a live cluster


def _group_collector(
    config: Mapping[str, str], timeout: float, auto_offset_reset: str, rate_window: float
) -> BatchFunction:
    def collect(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from lagassign.kafka.offsets import OffsetsReader

        reader: OffsetsReader | None = None
        try:
            ids = [g for batch in batches for g in batch.column("group").to_pylist()]
            if not ids:
                return
            reader = OffsetsReader(config, timeout=timeout)
            for snapshot, model in reader.sampled(ids, rate_window, auto_offset_reset):
                if not snapshot.exists:
                    continue  # gone since it was listed
                clients = {m.member_id: (m.client_id, m.host) for m in snapshot.members}
                source = f"{reader.servers} group {snapshot.group}"
                yield rows_batch(group_rows(model, source, clients))
        except OffsetsError as e:
            yield error_batch(str(e), CLUSTER)
        finally:
            if reader is not None:
                reader.close()

    return collect


def read_live(
    spark: SparkSession,
    bootstrap_server: str,
    *,
    command_config: str | None = None,
    timeout: float = 10.0,
    rate_window: float = 0.0,
    groups: str | None = None,
    auto_offset_reset: str | None = None,
) -> DataFrame:
    """Every consumer group of the cluster (or those ``groups`` matches), read on the
    executors: membership, committed, earliest and latest offsets; with ``rate_window``, read
    twice that many seconds apart, and the produce and consume rates measured between
    (:func:`lagassign.rates.measure_rates`)."""
    config = client_config(bootstrap_server, command_config)
    ids = list_groups(config, timeout, groups)
    if not ids:
        what = f"matching {groups!r} " if groups is not None else ""
        raise InputError(
            "--groups" if groups else "--bootstrap-server",
            f"no consumer group {what}at {config['bootstrap.servers']}",
        )
    log.info("reading %d consumer group(s) from %s", len(ids), config["bootstrap.servers"])
    tasks = max(1, min(len(ids), 2 * spark.sparkContext.defaultParallelism))
    frame = spark.createDataFrame([(g,) for g in ids], "group string").repartition(tasks)
    collector = _group_collector(config, timeout, auto_offset_reset or "latest", rate_window)
    return frame.mapInArrow(collector, ddl(ROW_SCHEMA))


# ------------------------------------------------------------------------------------------------
# the sources by name: the options choose one


@dataclass(frozen=True)
class Source:
    """One kind of pipeline input: when the options choose it, how it is read, and how
    ``summary.json`` describes it."""

    name: str
    chosen: Callable[[PipelineOptions], bool]
    read: Callable[[SparkSession, PipelineOptions], DataFrame]
    described: Callable[[PipelineOptions], dict[str, Any]]


#: in order of precedence; the first whose options choose it reads (the sample: always)
SOURCES: list[Source] = []


def source(
    name: str,
    chosen: Callable[[PipelineOptions], bool],
    described: Callable[[PipelineOptions], dict[str, Any]],
) -> Callable[[Callable[[SparkSession, PipelineOptions], DataFrame]], Source]:
    """Registers a source: adding one is a reading function and this line above it."""

    def register(read: Callable[[SparkSession, PipelineOptions], DataFrame]) -> Source:
        made = Source(name, chosen, read, described)
        SOURCES.append(made)
        return made

    return register


def chosen(options: PipelineOptions) -> Source:
    return next(s for s in SOURCES if s.chosen(options))


@source(
    "live",
    lambda o: o.bootstrap_server is not None,
    lambda o: {
        "bootstrap_server": o.bootstrap_server,
        "groups": o.groups,
        "rate_window": o.rate_window,
    },
)
def _live(spark: SparkSession, o: PipelineOptions) -> DataFrame:
    assert o.bootstrap_server is not None
    return read_live(
        spark,
        o.bootstrap_server,
        command_config=o.command_config,
        timeout=o.timeout,
        rate_window=o.rate_window,
        groups=o.groups,
        auto_offset_reset=o.auto_offset_reset,
    )


@source(
    "describe",
    lambda o: bool(o.describe),
    lambda o: {"describe": list(o.describe), "groups": o.groups},
)
def _describe(spark: SparkSession, o: PipelineOptions) -> DataFrame:
    return read_files(
        spark, o.describe, describe=True, groups=o.groups, auto_offset_reset=o.auto_offset_reset
    )


@source(
    "snapshots",
    lambda o: bool(o.inputs),
    lambda o: {"snapshots": list(o.inputs), "groups": o.groups},
)
def _snapshots(spark: SparkSession, o: PipelineOptions) -> DataFrame:
    return read_files(spark, o.inputs, input_format=o.input_format, groups=o.groups)


@source(
    "sample",
    lambda o: True,
    lambda o: {"sample": str(sample_fleet()), "groups": o.groups},
)
def _sample(spark: SparkSession, o: PipelineOptions) -> DataFrame:
    return read_files(spark, [str(sample_fleet())], groups=o.groups)


# ------------------------------------------------------------------------------------------------
# errors


def first_error(rows: DataFrame) -> None:
    """Raises the first source error of ``rows`` (by file and row): :class:`InputError` for bad
    input, :class:`OffsetsError` when the cluster could not be read."""
    bad = (
        rows.filter(F.col("error").isNotNull())
        .select("source", "row", "error")
        .orderBy("source", "row")
        .limit(1)
        .collect()
    )
    if not bad:
        return
    source, _, message = bad[0]
    if source == CLUSTER:
        raise OffsetsError(message)
    raise InputError(source, message)
