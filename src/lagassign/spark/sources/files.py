"""Snapshot files and describe dumps, listed on the driver and read on the executors: one task
per file or few files (``mapInArrow`` over the list of paths), by
:mod:`lagassign.formats.snapshot`. What the file sources (snapshots, describe, sample) share."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from lagassign.formats.errors import InputError
from lagassign.formats.snapshot import read_describe
from lagassign.formats.snapshot import read_snapshot as read_snapshot_file
from lagassign.formats.snapshot_formats import format_of, shown_suffixes
from lagassign.formats.snapshot_rows import ROW_SCHEMA, error_batch
from lagassign.spark.schema import ddl

log = logging.getLogger(__name__)

BatchFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


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
                    given,
                    f"unknown snapshot format (name it {shown_suffixes(' or ')}, or --format)",
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
