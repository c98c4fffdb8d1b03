"""Snapshot files as ``--input`` of ``assign`` and ``plan``: every group of a snapshot file of
any format (:mod:`lagassign.formats.snapshot_formats`), as the fleet pipeline reads it. (A
``.json`` name is a group file: :mod:`lagassign.formats.inputs` tries the group file first.)"""

from __future__ import annotations

from itertools import groupby

from lagassign.formats import snapshot_formats
from lagassign.formats.inputs import input_format
from lagassign.model import Group


@input_format(
    "snapshot",
    tuple(snapshot_formats.file_suffixes()),
    "a snapshot file of many groups "
    f"({snapshot_formats.shown_suffixes()}; --group picks one)",
)
def read_snapshot_groups(path: str) -> list[Group]:
    """Every group of a snapshot file, in the order of their ids."""
    # (pyarrow: only when reading)
    import pyarrow as pa

    from lagassign.formats.snapshot import read_snapshot
    from lagassign.formats.snapshot_rows import ROW_SCHEMA, build_group

    table = pa.Table.from_batches(list(read_snapshot(path)), schema=ROW_SCHEMA)
    rows = sorted(table.to_pylist(), key=lambda r: str(r["group"]))
    return [build_group(list(group)) for _, group in groupby(rows, key=lambda r: r["group"])]
