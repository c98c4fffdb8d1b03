"""Snapshot files and describe dumps, listed on the driver and read on the executors: one task
per file or few files (``mapInArrow`` over the list of paths), by
:mod:`lagassign.formats.snapshot`. What the file sources (snapshots, describe, sample) share."""

from __future__ import annotations

import io
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
from lagassign.formats.snapshot_formats import Opener, format_of, open_local, shown_suffixes
from lagassign.formats.snapshot_rows import error_batch
from lagassign.spark.packing import PACKED_SCHEMA, packed
from lagassign.spark.schema import ddl
from lagassign.spark.storage import HadoopFiles, StorageError, hidden, is_url

log = logging.getLogger(__name__)

BatchFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def list_files(
    paths: Sequence[str],
    *,
    snapshots: bool,
    input_format: str | None = None,
    files: HadoopFiles | None = None,
) -> list[str]:
    """Every file of ``paths`` (folders are walked, hidden files and Spark's ``_SUCCESS`` and
    ``.crc`` files skipped), sorted. In folders, snapshot files are those whose name says a
    format (unless ``input_format`` is given); files named on their own are always read.
    URLs (:func:`lagassign.spark.storage.is_url`) are listed through ``files``."""
    found: list[str] = []
    for given in paths:
        kind, walk = _look(given, files)
        if kind == "file":
            if snapshots and input_format is None and format_of(given) is None:
                raise InputError(
                    given,
                    f"unknown snapshot format (name it {shown_suffixes(' or ')}, or --format)",
                )
            found.append(files.qualified(given) if files and is_url(given) else given)
            continue
        if kind is None:
            raise InputError(given, "no such file or folder")
        inside = []
        for file in walk():
            if snapshots and input_format is None and format_of(file) is None:
                log.info("%s: not a snapshot file name; skipped", file)
                continue
            inside.append(file)
        if not inside:
            raise InputError(given, "no input files in this folder")
        found.extend(inside)
    return sorted(dict.fromkeys(found))


def _look(given: str, files: HadoopFiles | None) -> tuple[str | None, Callable[[], list[str]]]:
    """What ``given`` is (``"file"``, ``"folder"``, None: nothing) and how to walk it."""
    if is_url(given):
        if files is None:
            raise InputError(given, "a URL needs Spark's file systems")
        try:
            return files.kind(given), lambda: files.files(given)
        except StorageError as e:
            raise InputError(e.place, e.message) from None
    path = Path(given)
    kind = "file" if path.is_file() else "folder" if path.is_dir() else None
    return kind, lambda: _walk(path)


def _walk(folder: Path) -> list[str]:
    """The files in ``folder`` and below, but hidden ones and those in hidden folders."""
    inside = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not hidden(d))
        inside += [os.path.join(root, name) for name in sorted(names) if not hidden(name)]
    return inside


def _opener(content: bytes | None) -> Opener:
    """Opens a file: a local one, or one whose ``content`` Spark read."""
    if content is None:
        return open_local
    return lambda _path: io.BytesIO(content)


def _file_reader(
    describe: bool,
    input_format: str | None,
    groups: re.Pattern[str] | None,
    auto_offset_reset: str,
) -> BatchFunction:
    """Reads the files of batches of ``path`` (local files) or ``path`` and ``content`` (files
    at URLs, as Spark's ``binaryFile`` source reads them)."""

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            paths = batch.column("path").to_pylist()
            contents: list[bytes | None] = (
                batch.column("content").to_pylist()
                if "content" in batch.schema.names
                else [None] * len(paths)
            )
            for path, content in zip(paths, contents, strict=True):
                opener = _opener(content)
                try:
                    if describe:
                        yield from read_describe(path, auto_offset_reset, groups, opener)
                    else:
                        yield from read_snapshot_file(path, input_format, opener, groups)
                except InputError as e:
                    yield error_batch(e)
                except Exception as e:  # a file no check foresaw: still named, in one line
                    gist = " ".join(f"{type(e).__name__}: {e}".split())
                    yield error_batch(f"cannot read: {gist[:300]}", path)

    return read


#: characters Hadoop's paths glob (a DataFrameReader's paths are patterns); a backslash escapes
_GLOB = re.compile(r"([\\*?\[\]{}])")


def _url_frame(spark: SparkSession, urls: Sequence[str]) -> DataFrame:
    """The files at ``urls``, each read whole by Spark's ``binaryFile`` source on the
    executors (through Hadoop's file systems): ``path`` and ``content``."""
    literal = [_GLOB.sub(r"\\\1", url) for url in urls]
    return spark.read.format("binaryFile").load(literal).select("path", "content")


def _paths_frame(spark: SparkSession, files: Sequence[str]) -> DataFrame:
    """The files, a ``path`` per row, spread over the tasks as ``spark.range`` makes them:
    no shuffle, nothing for a Python worker to do before the reading."""
    from pyspark.sql import functions as F

    tasks = max(1, min(len(files), 2 * spark.sparkContext.defaultParallelism))
    listed = F.array(*[F.lit(f) for f in files])
    index = (F.col("id") + 1).cast("int")
    return spark.range(0, len(files), 1, tasks).select(F.element_at(listed, index).alias("path"))


def read_files(
    spark: SparkSession,
    paths: Sequence[str],
    *,
    describe: bool = False,
    input_format: str | None = None,
    groups: str | None = None,
    auto_offset_reset: str | None = None,
) -> DataFrame:
    """Snapshot files (or describe dumps), read on the executors; their rows packed by group
    (:mod:`lagassign.spark.packing`)."""
    hadoop = HadoopFiles(spark) if any(is_url(p) for p in paths) else None
    files = list_files(paths, snapshots=not describe, input_format=input_format, files=hadoop)
    log.info("reading %d %s file(s)", len(files), "describe" if describe else "snapshot")
    pattern = re.compile(groups) if groups is not None else None
    reader = _file_reader(describe, input_format, pattern, auto_offset_reset or "latest")
    local = [f for f in files if not is_url(f)]
    urls = [f for f in files if is_url(f)]
    frames = [_paths_frame(spark, local)] if local or not urls else []
    frames += [_url_frame(spark, urls)] if urls else []
    read = [frame.mapInArrow(packed(reader), ddl(PACKED_SCHEMA)) for frame in frames]
    return read[0] if len(read) == 1 else read[0].unionByName(read[1])
