"""Whole groups through Spark's shuffle: a group's snapshot rows as one value.

The planning tasks need whole groups, and a group's rows may come from several files, so the
rows are shuffled by group. Moved one by one, each row went from Arrow into the JVM's rows,
through the shuffle and back into Arrow for Python: the JVM spent more CPU on that than
Python spent planning ``lag`` and ``range`` (issue 15). Here a source's reading task packs
every batch it reads by group (:func:`packed`): one row per group and batch, holding the
group's rows as one Arrow record batch (its IPC message, :data:`ROW_SCHEMA` implied), so the
JVM moves a few bytes strings per group; the planning task unpacks them (:func:`unpacked`).
Source errors (rows with ``error``, no group) travel the same way under a null group.

Pure pyarrow: the plain loop of bench/pipeline.py packs and plans the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from lagassign.formats.snapshot_rows import ROW_SCHEMA

#: what the sources give the pipeline: per group and batch read, the group's rows
PACKED_SCHEMA = pa.schema(
    [
        pa.field("group", pa.string()),
        pa.field("rows", pa.int64()),
        pa.field("arrow", pa.binary()),
    ]
)

BatchFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def split(batch: pa.RecordBatch) -> list[tuple[str | None, pa.RecordBatch]]:
    """``batch`` of snapshot rows (:data:`ROW_SCHEMA`) split by group: each group's rows (a
    null group last: source errors), as slices of one sorted copy."""
    if batch.schema != ROW_SCHEMA:
        batch = batch.select(ROW_SCHEMA.names).cast(ROW_SCHEMA)
    if batch.num_rows == 0:
        return []
    groups = batch.column("group")
    if groups.null_count == 0 and pc.all(pc.equal(groups, groups[0])).as_py():
        return [(groups[0].as_py(), batch)]
    ordered = batch.take(pc.sort_indices(groups))
    runs = pc.run_end_encode(ordered.column("group"))
    found = []
    start = 0
    for name, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist(), strict=True):
        found.append((name, ordered.slice(start, end - start)))
        start = end
    return found


def pack(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` of snapshot rows (:data:`ROW_SCHEMA`) packed by group: a row per group."""
    parts = split(batch)
    return _packed(
        [name for name, _ in parts],
        [part.num_rows for _, part in parts],
        [_compact(part).serialize().to_pybytes() for _, part in parts],
    )


def _compact(rows: pa.RecordBatch) -> pa.RecordBatch:
    """``rows`` with their list columns copied: Arrow's IPC writer writes the whole child array
    of a sliced list column, not the slice's share of it, so every group packed from a batch
    carried the batch's ``subscribed`` topics (the packed rows were ~3x the rows' size)."""
    if not any(pa.types.is_list(f.type) for f in rows.schema):
        return rows
    columns = [pa.concat_arrays([c]) if pa.types.is_list(c.type) else c for c in rows.columns]
    return pa.RecordBatch.from_arrays(columns, schema=rows.schema)


def _packed(names: list[str | None], counts: list[int], data: list[bytes]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(names, pa.string()), pa.array(counts, pa.int64()), pa.array(data, pa.binary())],
        schema=PACKED_SCHEMA,
    )


def packed(read: BatchFunction) -> BatchFunction:
    """A source's reading function (batches of snapshot rows) made to yield packed rows."""

    def packing(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in read(batches):
            if batch.num_rows:
                yield pack(batch)

    return packing


def by_group(batches: Iterable[pa.RecordBatch]) -> dict[str | None, list[pa.RecordBatch]]:
    """Batches of snapshot rows (not packed) -> each group's batches, in the order they came
    (a null group: source errors): what a task that holds whole groups plans, without
    packing."""
    groups: dict[str | None, list[pa.RecordBatch]] = {}
    for batch in batches:
        for name, rows in split(batch):
            groups.setdefault(name, []).append(rows)
    return groups


def unpacked(batches: Iterable[pa.RecordBatch]) -> dict[str | None, list[pa.RecordBatch]]:
    """Packed rows -> each group's batches of snapshot rows (in the order they came; a null
    group: source errors)."""
    groups: dict[str | None, list[pa.RecordBatch]] = {}
    for batch in batches:
        names = batch.column("group").to_pylist()
        data = batch.column("arrow")
        for i, name in enumerate(names):
            rows = pa.ipc.read_record_batch(data[i].as_buffer(), ROW_SCHEMA)
            groups.setdefault(name, []).append(rows)
    return groups
