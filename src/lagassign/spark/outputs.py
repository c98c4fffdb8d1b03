"""The output folder: written whole or not at all.

Everything is written into a hidden staging folder beside ``--out``; only when the run has
succeeded does the staging folder take ``--out``'s name, so a failed run never leaves a
half-written output, and a previous output stays as it was. ``--out`` is only replaced when it
is empty or a previous pipeline output (it has ``summary.json``), never a folder of something
else.

``--out`` is a local path or a URL (:mod:`lagassign.spark.storage`):

* **a local path**: the staging folder is made before Spark starts and renamed to ``--out``
  (one rename on one file system: atomic; a previous output is renamed away first and removed
  after);
* **a URL** (``s3a://``, ``hdfs://``, ``abfss://``, ``file://``): Spark writes the tables into
  the staging folder at the URL; the report's files and ``summary.json`` are written into a
  local folder first. The commit puts the report's files into the staging folder, removes a
  previous output (its ``summary.json`` first), renames the staging folder to ``--out``, and
  writes ``summary.json`` **last**. On HDFS, a local ``file://`` or ABFS with a hierarchical
  namespace the rename is atomic; on S3 a rename is a copy of every object, then a delete, and
  a process killed during it leaves part of the output. ``summary.json`` is therefore the
  commit mark: an ``--out`` without it is not a complete output, whatever else is there, and
  readers check for it (as Spark's own ``_SUCCESS`` per table). A run that fails (bad input,
  Spark failing, a signal) removes its staging folder and never touches ``--out``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lagassign.formats.errors import InputError
from lagassign.spark.storage import HadoopFiles, StorageError, is_url, parent_and_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SUMMARY = "summary.json"
TOOL = "lagassign pipeline"


@dataclass(frozen=True)
class Output:
    """Where a run writes: ``tables``, the staging folder (a path or a URL) that Spark's
    writers write the tables into; ``local``, a local folder for the files Python writes
    (report.html, its PNGs, summary.json); for a local ``--out`` both are the staging folder."""

    tables: str
    local: Path

    def table(self, name: str) -> str:
        return f"{self.tables.rstrip('/')}/{name}"


def _is_summary(text: str) -> bool:
    try:
        summary = json.loads(text)
    except ValueError:
        return False
    return isinstance(summary, dict) and summary.get("tool") == TOOL


def is_pipeline_output(path: Path) -> bool:
    if not path.is_dir():
        return False
    if not any(path.iterdir()):
        return True
    try:
        return _is_summary((path / SUMMARY).read_text(encoding="utf-8"))
    except OSError:
        return False


def _not_ours(out: str | Path) -> InputError:
    return InputError(
        "--out",
        f"{out} exists and is not a lagassign pipeline output; remove it or choose another",
    )


def check_out(out: Path) -> Path:
    """``out`` as an absolute path, if the pipeline may write there."""
    out = out.expanduser().absolute()
    if out.exists() and not is_pipeline_output(out):
        raise _not_ours(out)
    return out


def check_url_out(out: str, files: HadoopFiles) -> None:
    """Whether the pipeline may write at the URL ``out`` (nothing there, an empty folder, or a
    previous output)."""
    parent_and_name(out)
    try:
        kind = files.kind(out)
        if kind is None:
            return
        names = files.names(out) if kind == "folder" else None
        if names == []:
            return
        if names is None or SUMMARY not in names:
            raise _not_ours(out)
        if not _is_summary(files.read_text(f"{out}/{SUMMARY}")):
            raise _not_ours(out)
    except StorageError as e:
        raise InputError("--out", str(e)) from None


@contextmanager
def staging(out: str | Path, spark: SparkSession | None = None) -> Iterator[Output]:
    """A fresh :class:`Output` to write into; it becomes ``out`` when the block succeeds and
    is removed when it fails. A URL needs the session (Hadoop's file systems are in its JVM)."""
    if is_url(out):
        assert spark is not None, "a URL --out needs the Spark session"
        with _url_staging(str(out).rstrip("/"), HadoopFiles(spark)) as output:
            yield output
        return
    with _local_staging(Path(out)) as folder:
        yield Output(str(folder), folder)


@contextmanager
def _local_staging(out: Path) -> Iterator[Path]:
    out = check_out(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError("--out", f"cannot create {out.parent}: {e.strerror or e}") from None
    tag = uuid.uuid4().hex[:8]
    tmp = out.parent / f".{out.name}.tmp-{tag}"
    try:
        tmp.mkdir()
    except OSError as e:  # a folder this user may not write in, a read-only file system
        raise InputError("--out", f"cannot write in {out.parent}: {e.strerror or e}") from None
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        old = out.parent / f".{out.name}.old-{tag}"
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)


@contextmanager
def _url_staging(out: str, files: HadoopFiles) -> Iterator[Output]:
    check_url_out(out, files)
    parent, name = parent_and_name(out)
    tmp = f"{parent}/.{name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        files.mkdirs(tmp)
    except StorageError as e:
        raise InputError("--out", f"cannot write in {parent}: {e.message}") from None
    local = Path(tempfile.mkdtemp(prefix="lagassign-out-"))
    try:
        yield Output(tmp, local)
        _commit(files, local, tmp, out)
    except BaseException:
        with contextlib.suppress(Exception):  # the session may be gone already
            files.delete(tmp)
        raise
    finally:
        shutil.rmtree(local, ignore_errors=True)


def _commit(files: HadoopFiles, local: Path, tmp: str, out: str) -> None:
    """The staging folder ``tmp`` with ``local``'s files becomes ``out``; ``summary.json``
    last (see the module's note)."""
    for file in sorted(local.rglob("*")):
        if file.is_file() and file != local / SUMMARY:
            files.put(file, f"{tmp}/{file.relative_to(local).as_posix()}")
    if files.kind(out) is not None:
        files.delete(f"{out}/{SUMMARY}")  # first: from here on it is not a complete output
        files.delete(out)
    files.rename(tmp, out)
    try:
        files.put(local / SUMMARY, f"{out}/{SUMMARY}")
    except BaseException:
        with contextlib.suppress(Exception):
            files.delete(out)
        raise


def write_summary(folder: Path, summary: dict[str, Any]) -> None:
    text = json.dumps({"tool": TOOL, **summary}, indent=2, default=str)
    (folder / SUMMARY).write_text(text + "\n", encoding="utf-8")
