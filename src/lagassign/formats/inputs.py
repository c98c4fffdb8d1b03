"""What ``--input FILE`` reads, chosen by the file's name: every format a command can read a
group from, in one registry.

=====================================  ==============================================
``.jsonl`` ``.ndjson`` ``.csv``         snapshot files of many groups
``.parquet`` ``.pq`` (``.gz`` for the   (:mod:`lagassign.formats.snapshot`), as the
text ones)                             fleet pipeline reads them
any other name (``.json``)             a group file (:mod:`lagassign.formats.group_file`)
=====================================  ==============================================

Adding a format is one reader function and one :func:`reader` line here.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby

import pyarrow as pa

from lagassign.formats.group_file import load_group
from lagassign.formats.snapshot import read_snapshot
from lagassign.formats.snapshot_rows import ROW_SCHEMA, build_group, format_of
from lagassign.model import Group

#: reads every group of a file
Reader = Callable[[str], list[Group]]

_READERS: list[tuple[Callable[[str], bool], Reader]] = []


def reader(matches: Callable[[str], bool]) -> Callable[[Reader], Reader]:
    """Registers a reader for the file names ``matches`` (lower case) says are its."""

    def register(read: Reader) -> Reader:
        _READERS.append((matches, read))
        return read

    return register


@reader(lambda name: format_of(name) is not None and not name.endswith(".json"))
def snapshot_file(path: str) -> list[Group]:
    """Every group of a snapshot file, in the order of their ids."""
    table = pa.Table.from_batches(list(read_snapshot(path)), schema=ROW_SCHEMA)
    rows = sorted(table.to_pylist(), key=lambda r: str(r["group"]))
    return [build_group(list(group)) for _, group in groupby(rows, key=lambda r: r["group"])]


def load_groups(path: str) -> list[Group]:
    """Every group of the file at ``path``, read by the format its name says; a group file
    when it says none."""
    name = path.lower()
    for matches, read in _READERS:
        if matches(name):
            return read(path)
    return [load_group(path)]
