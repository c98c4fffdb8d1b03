"""Tables kept per micro-batch: ``FOLDER/<name>-<batch id>.parquet``, written to a temporary
name and renamed, the two newest of each name kept (the one a replayed batch starts from and
the one after it)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

KEEP_FILES = 2


def save(folder: Path, name: str, batch_id: int, table: pa.Table) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{name}-{batch_id}.parquet"
    tmp = folder / f".{name}-{batch_id}.parquet.tmp-{os.getpid()}"
    pq.write_table(table, tmp)
    os.replace(tmp, final)
    for old in sorted(saved_batches(folder, name))[:-KEEP_FILES]:
        (folder / f"{name}-{old}.parquet").unlink(missing_ok=True)


def load(folder: Path, name: str, batch_id: int, schema: pa.Schema) -> pa.Table:
    """The table saved after micro-batch ``batch_id``. A missing file is an error: the state
    and the query's checkpoint would disagree."""
    path = folder / f"{name}-{batch_id}.parquet"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: the {name} after micro-batch {batch_id} is missing "
            "(the checkpoint and the state folder belong to different runs?)"
        )
    return pq.read_table(path, schema=schema)


def columns(folder: Path, name: str, batch_id: int, schema: pa.Schema) -> list[list[Any]]:
    """The columns of :func:`load`'s table as lists, in ``schema``'s order; empty ones when
    ``batch_id`` < 0 (no micro-batch before the first)."""
    if batch_id < 0:
        return [[] for _ in schema.names]
    table = load(folder, name, batch_id, schema)
    return [table.column(n).to_pylist() for n in schema.names]


def saved_batches(folder: Path, name: str) -> list[int]:
    """The micro-batch ids whose ``name`` table is saved in ``folder``."""
    if not folder.is_dir():
        return []
    pattern = re.compile(rf"^{re.escape(name)}-(\d+)\.parquet$")
    return [int(m.group(1)) for f in folder.iterdir() if (m := pattern.match(f.name))]
