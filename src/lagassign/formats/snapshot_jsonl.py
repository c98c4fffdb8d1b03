"""Snapshot files as JSON lines (``.jsonl``, ``.ndjson``, ``.json``, and gzipped): one JSON
object per line, its keys the columns (:mod:`lagassign.formats.snapshot`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lagassign.formats.errors import InputError
from lagassign.formats.json_reader import parse_json
from lagassign.formats.snapshot_formats import Opener, snapshot_format

if TYPE_CHECKING:
    import pyarrow as pa


@snapshot_format("jsonl", (".jsonl", ".ndjson", ".json"), gzip=True, lines=True)
def read_jsonl(
    path: str, opener: Opener, groups: re.Pattern[str] | None
) -> Iterator[pa.RecordBatch]:
    # (pyarrow: only when reading)
    from lagassign.formats import snapshot

    chunk = snapshot.Chunk(path, {c: [] for c in snapshot.COLUMNS}, [])
    with snapshot.open_text(path, opener) as lines:
        number = 0
        try:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{number}"
                obj = parse_json_line(line, where)
                if not isinstance(obj, dict):
                    got = snapshot.shown_value(obj)
                    raise InputError(where, f"expected a JSON object, got {got}")
                snapshot.check_known(obj, where)
                for column in snapshot.COLUMNS:
                    chunk.columns[column].append(obj.get(column))
                chunk.rows.append(number)
                if len(chunk) >= snapshot.BATCH_ROWS:
                    yield snapshot.only_groups(snapshot.checked_batch(chunk), groups)
                    chunk = snapshot.Chunk(path, {c: [] for c in snapshot.COLUMNS}, [])
        except UnicodeDecodeError:
            raise InputError(f"{path}:{number + 1}", "not UTF-8 text") from None
    if len(chunk):
        yield snapshot.only_groups(snapshot.checked_batch(chunk), groups)


def parse_json_line(line: str, where: str) -> Any:
    """One line of a JSON lines file; the column is the line's (``file:line``, column N)."""
    try:
        return parse_json(line, where)
    except InputError as e:
        place, _, column = e.place.partition(f"{where}:")
        if place or not column:
            raise
        # parse_json says where:1:col; a line's errors name the file's line and the column
        raise InputError(where, f"{e.message} (column {column.split(':')[-1]})") from None
