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
from lagassign.spark.sources import WholeGroups
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
    tasks: int | None = None,
) -> DataFrame | WholeGroups:
    """Snapshot files (or describe dumps), read on the executors; their rows packed by group
    (:mod:`lagassign.spark.packing`), or, when the files can be spread over the tasks so
    that each holds whole groups (:func:`whole_group_tasks`), :class:`WholeGroups` of up to
    ``tasks`` tasks (default: 4 per core)."""
    hadoop = HadoopFiles(spark) if any(is_url(p) for p in paths) else None
    files = list_files(paths, snapshots=not describe, input_format=input_format, files=hadoop)
    log.info("reading %d %s file(s)", len(files), "describe" if describe else "snapshot")
    pattern = re.compile(groups) if groups is not None else None
    reader = _file_reader(describe, input_format, pattern, auto_offset_reset or "latest")
    local = [f for f in files if not is_url(f)]
    urls = [f for f in files if is_url(f)]
    cores = spark.sparkContext.defaultParallelism
    whole = (
        None
        if describe or urls
        else whole_group_tasks(local, input_format, tasks or 4 * cores, cores)
    )
    if whole is not None:
        log.info("%d file(s) in %d task(s) of whole groups: no shuffle", len(files), len(whole))
        return WholeGroups("path", whole, reader)
    frames = [_paths_frame(spark, local)] if local or not urls else []
    frames += [_url_frame(spark, urls)] if urls else []
    read = [frame.mapInArrow(packed(reader), ddl(PACKED_SCHEMA)) for frame in frames]
    return read[0] if len(read) == 1 else read[0].unionByName(read[1])


#: how much longer than an even share of the rows the busiest core may get when the files are
#: spread over the tasks whole (else the rows are shuffled by group, which spreads them evenly)
SPREAD_SLACK = 1.25


def whole_group_tasks(
    files: Sequence[str], input_format: str | None, tasks: int, cores: int
) -> list[list[str]] | None:
    """The local Parquet ``files`` spread over at most ``tasks`` tasks so that every group's
    rows are in one task (files that share a group go together), the largest first; None when
    that cannot be known or would leave the cores uneven (one large file, or a group in every
    file): then the rows are shuffled by group.

    Only Parquet files are looked into here, on the driver, and only their ``group`` column
    (a file's names as the reader takes them, cheaply); a file that cannot be read so, or has
    a null group, is left to the reader and its errors, through the shuffle."""
    if not files or any((input_format or format_of(f)) != "parquet" for f in files):
        return None
    found = []
    for path in files:
        names = _parquet_groups(path)
        if names is None:
            return None
        found.append(names)
    spread = spread_files(found, tasks, cores)
    return None if spread is None else [[files[i] for i in task] for task in spread]


def _parquet_groups(path: str) -> tuple[int, list[str]] | None:
    """The rows of a Parquet file and its distinct groups; None when they cannot be read."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        column = pq.read_table(path, columns=["group"]).column("group")
        if column.null_count or not (
            pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
        ):
            return None
        return len(column), pc.unique(column).to_pylist()
    except Exception:  # the reader says what is wrong with the file, naming it
        return None


def spread_files(
    files: Sequence[tuple[int, Sequence[str]]], tasks: int, cores: int
) -> list[list[int]] | None:
    """Files (each: its rows and its groups) spread over at most ``tasks`` tasks: lists of
    file indexes, in order, the tasks with the most rows first. Files that share a group are
    in one task. None when the busiest of ``cores`` cores running them would get more than
    :data:`SPREAD_SLACK` times an even share of the rows."""
    parent = list(range(len(files)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, (_, names) in enumerate(files):
        for name in names:
            j = first.setdefault(name, i)
            if j != i:
                parent[root(i)] = root(j)
    together: dict[int, list[int]] = {}
    for i in range(len(files)):
        together.setdefault(root(i), []).append(i)
    units = sorted(
        ((sum(files[i][0] for i in members), members) for members in together.values()),
        key=lambda unit: -unit[0],
    )
    total = sum(rows for rows, _ in units)
    if _largest_first(units, max(1, cores))[0][0] > SPREAD_SLACK * total / max(1, cores):
        return None
    return [sorted(members) for _, members in _largest_first(units, max(1, min(tasks, len(units))))]


def _largest_first(
    units: Sequence[tuple[int, list[int]]], bins: int
) -> list[tuple[int, list[int]]]:
    """``units`` (rows, files; largest first) put each into the bin with the fewest rows so
    far; the bins that got any, the most rows first."""
    filled: list[tuple[int, list[int]]] = [(0, []) for _ in range(bins)]
    for rows, members in units:
        least = min(range(bins), key=lambda b: filled[b][0])
        filled[least] = (filled[least][0] + rows, filled[least][1] + members)
    return sorted((b for b in filled if b[1]), key=lambda b: -b[0])
