"""Snapshot file formats by name: how each is read and which file names say it.

Each format is one module named in :data:`_MODULES`, whose reading function is registered with
:func:`snapshot_format`: the format's name (a choice of the pipeline's ``--format``), the file
name suffixes that say it, whether gzip-compressed files (the suffix, then ``.gz``) are read
too, and whether an error names a row by the file's line (text formats) or by its number from 1
(``file: row N``). Everything else takes formats from here: the snapshot reader
(:func:`lagassign.formats.snapshot.read_snapshot`), where a row is
(:func:`lagassign.formats.snapshot_rows.place`), ``--input`` of ``assign`` and ``plan``
(:mod:`lagassign.formats.snapshot_input`) and the pipeline's ``--input``, ``--format`` and
file listing.

Importing this module or a format's module does not import pyarrow (the command line's help
lists the formats); a format's reading function imports what it needs when it reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from lagassign.module_registry import ModuleRegistry

if TYPE_CHECKING:
    import pyarrow as pa

#: the formats' modules in lagassign.formats, in the order help texts list them
_MODULES = ("snapshot_jsonl", "snapshot_csv", "snapshot_parquet")

#: opens a file for reading as bytes (local files, or a file system's)
Opener = Callable[[str], IO[bytes]]

#: reads one snapshot file: (path, opener, only groups whose id the pattern matches) ->
#: checked rows, in batches (lagassign.formats.snapshot.checked_batch)
SnapshotReader = Callable[[str, Opener, re.Pattern[str] | None], Iterator["pa.RecordBatch"]]


@dataclass(frozen=True)
class SnapshotFormat:
    name: str
    #: file name endings, in lower case; the first is the one help texts show
    suffixes: tuple[str, ...]
    read: SnapshotReader
    #: gzip-compressed files (a suffix, then .gz) are read too
    gzip: bool
    #: an error names a row by the file's line (else by its number, from 1)
    lines: bool


_REGISTRY = ModuleRegistry[SnapshotFormat]("lagassign.formats", _MODULES, "snapshot format")


def snapshot_format(
    name: str, suffixes: tuple[str, ...], *, gzip: bool, lines: bool
) -> Callable[[SnapshotReader], SnapshotReader]:
    """Registers a snapshot format: its reading function and this line above it."""
    return _REGISTRY.registering(
        name, lambda read: SnapshotFormat(name, suffixes, read, gzip, lines)
    )


def formats() -> list[SnapshotFormat]:
    """Every format, in :data:`_MODULES` order."""
    return _REGISTRY.entries()


def names() -> list[str]:
    return [f.name for f in formats()]


def get(name: str) -> SnapshotFormat | None:
    return next((f for f in formats() if f.name == name), None)


def file_format(path: str) -> SnapshotFormat | None:
    """The snapshot format a file name says (``.jsonl``, ``.csv.gz``, ``.parquet`` ...)."""
    low = path.lower()
    name = low.removesuffix(".gz")
    for fmt in formats():
        if name.endswith(fmt.suffixes):
            return fmt if fmt.gzip or name == low else None
    return None


def format_of(path: str) -> str | None:
    """The name of the snapshot format a file name says."""
    fmt = file_format(path)
    return fmt.name if fmt is not None else None


def file_suffixes() -> list[str]:
    """Every file name ending that says a format, ``.gz`` ones included."""
    endings: list[str] = []
    for fmt in formats():
        endings.extend(fmt.suffixes)
        if fmt.gzip:
            endings.extend(suffix + ".gz" for suffix in fmt.suffixes)
    return endings


def shown_suffixes(last: str = ", ") -> str:
    """Each format's first suffix, for help texts and errors: ``.jsonl, .csv, .parquet`` (with
    ``last=" or "``: ``.jsonl, .csv or .parquet``)."""
    shown = [f.suffixes[0] for f in formats()]
    return last.join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else shown[0]


def open_local(path: str) -> IO[bytes]:
    return open(path, "rb")
