"""Snapshot files as CSV (``.csv``, and gzipped): a header row naming the columns, then one
row per line (:mod:`lagassign.formats.snapshot`); errors count the header as line 1."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from lagassign.formats.errors import InputError
from lagassign.formats.snapshot_formats import Opener, snapshot_format

if TYPE_CHECKING:
    import pyarrow as pa


@snapshot_format("csv", (".csv",), gzip=True, lines=True)
def read_csv(path: str, opener: Opener, groups: re.Pattern[str] | None) -> Iterator[pa.RecordBatch]:
    # (pyarrow: only when reading)
    from lagassign.formats import snapshot

    with snapshot.open_text(path, opener) as text:
        reader = csv.reader(text)
        try:
            header = next(reader, None)
            if header is None:
                return
            header = [h.strip().removeprefix("\ufeff") for h in header]  # (Excel's BOM)
            where = f"{path}:1"
            snapshot.check_known(header, where)
            snapshot.check_required(header, where)
            for column in header:
                if header.count(column) > 1:
                    raise InputError(where, f"column {column!r} appears twice")
            chunk = snapshot.Chunk(path, {c: [] for c in header}, [], text=True)
            for cells in reader:
                if not cells:
                    continue
                number = reader.line_num
                if len(cells) != len(header):
                    raise InputError(
                        f"{path}:{number}", f"expected {len(header)} cells, got {len(cells)}"
                    )
                for column, cell in zip(header, cells, strict=True):
                    chunk.columns[column].append(cell)
                chunk.rows.append(number)
                if len(chunk) >= snapshot.BATCH_ROWS:
                    yield snapshot.only_groups(snapshot.checked_batch(chunk), groups)
                    chunk = snapshot.Chunk(path, {c: [] for c in header}, [], text=True)
        except UnicodeDecodeError:
            raise InputError(f"{path}:{reader.line_num + 1}", "not UTF-8 text") from None
        except csv.Error as e:
            raise InputError(f"{path}:{reader.line_num}", f"bad CSV: {e}") from None
    if len(chunk):
        yield snapshot.only_groups(snapshot.checked_batch(chunk), groups)
