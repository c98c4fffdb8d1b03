"""Snapshot files as Parquet (``.parquet``, ``.pq``): its columns are the columns, checked in
Arrow where their types are the expected ones (:mod:`lagassign.formats.snapshot`); errors name
a row by its number, from 1."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from lagassign.formats.errors import InputError
from lagassign.formats.snapshot_formats import Opener, snapshot_format

if TYPE_CHECKING:
    import pyarrow as pa


@snapshot_format("parquet", (".parquet", ".pq"), gzip=False, lines=False)
def read_parquet(
    path: str, opener: Opener, groups: re.Pattern[str] | None
) -> Iterator[pa.RecordBatch]:
    # (pyarrow: only when reading)
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lagassign.formats import snapshot

    try:
        source = opener(path)
        parquet = pq.ParquetFile(source)
    except (OSError, pa.ArrowException) as e:
        raise InputError(path, f"not a Parquet file: {e}") from None
    with source:
        names = parquet.schema_arrow.names
        snapshot.check_known(names, path)
        snapshot.check_required(names, path)
        first = 1
        try:
            for batch in parquet.iter_batches(batch_size=snapshot.BATCH_ROWS):
                n = batch.num_rows
                snapshot.check_utf8(batch, path, first)
                chunk = snapshot.Chunk(path, {}, list(range(first, first + n)))
                arrow = {name: batch.column(name) for name in batch.schema.names}
                yield snapshot.only_groups(snapshot.checked_batch(chunk, arrow), groups)
                first += n
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{path}: row {first}", f"cannot read: {e}") from None
        except UnicodeDecodeError:  # (strings nested deeper than snapshot.check_utf8 looks)
            raise InputError(f"{path}: row {first}", "not UTF-8 text") from None
