"""Snapshot files and describe dumps -> checked snapshot rows (Arrow).

Pure Python and pyarrow, no Spark: the pipeline runs these functions on its executors, one
file per call, and the tests and the benchmark's plain loop call them directly. Each file
format (JSON lines, CSV, Parquet: :mod:`lagassign.formats.snapshot_formats`) is a module of its
own that turns a file into :class:`Chunk`\\ s of raw values; this module checks them
(:func:`checked_batch`) the same way whatever the format.

A snapshot has one row per group × partition::

    group, topic, partition, begin, end, committed, member_id, client_id, host
    [, rack, auto_offset_reset, subscribed, replica_racks, rate_in, rate_out,
       instance_id, generation, capacity]

``group``, ``topic``, ``partition``, ``begin`` and ``end`` are required; the others may be null
or left out. Every value is checked: a bad one raises :class:`InputError` naming the file, the
row (the line of a JSON lines or CSV file, counting a CSV's header as line 1; the row number,
from 1, of a Parquet file) and the column. Unknown columns are errors, so that a misspelt
``subscribed`` never silently changes a plan.
"""

from __future__ import annotations

import gzip
import io
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lagassign.formats import snapshot_formats
from lagassign.formats.describe import load_describe
from lagassign.formats.errors import InputError
from lagassign.formats.limits import (
    MAX_GENERATION,
    MAX_INT_DIGITS,
    MAX_OFFSET,
    MAX_PARTITION,
    MAX_RATE,
    MAX_TEXT_BYTES,
    shown,
    text_problem,
    too_large,
)
from lagassign.formats.snapshot_formats import Opener, format_of, open_local, shown_suffixes
from lagassign.formats.snapshot_rows import ROW_SCHEMA, group_rows, place, rows_batch
from lagassign.lag_rules import AUTO_OFFSET_RESETS, known_reset

#: rows per Arrow batch a reader yields
BATCH_ROWS = 50_000

REQUIRED = ("group", "topic", "partition", "begin", "end")
NULLABLE = ("committed", "member_id", "client_id", "host")
OPTIONAL = (
    "rack",
    "auto_offset_reset",
    "subscribed",
    "replica_racks",
    "rate_in",
    "rate_out",
    "instance_id",
    "generation",
    "capacity",
)
COLUMNS = REQUIRED + NULLABLE + OPTIONAL

_LIST_SEPARATORS = re.compile(r"[\s,;]+")


# ------------------------------------------------------------------------------------------------
# checking values


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    #: "name" (non-empty string), "text" (string), "int", "partition", "rate", "reset", "list"
    kind: str
    required: bool
    #: the largest value of a number (lagassign.formats.limits)
    largest: float = MAX_OFFSET


_SPECS = {
    "group": _Column("group", "name", True),
    "topic": _Column("topic", "name", True),
    "partition": _Column("partition", "partition", True, MAX_PARTITION),
    "begin": _Column("begin", "int", True),
    "end": _Column("end", "int", True),
    "committed": _Column("committed", "int", False),
    "member_id": _Column("member_id", "text", False),
    "client_id": _Column("client_id", "text", False),
    "host": _Column("host", "text", False),
    "rack": _Column("rack", "text", False),
    "auto_offset_reset": _Column("auto_offset_reset", "reset", False),
    "subscribed": _Column("subscribed", "list", False),
    "replica_racks": _Column("replica_racks", "list", False),
    "rate_in": _Column("rate_in", "rate", False, MAX_RATE),
    "rate_out": _Column("rate_out", "rate", False, MAX_RATE),
    "instance_id": _Column("instance_id", "text", False),
    "generation": _Column("generation", "int", False, MAX_GENERATION),
    "capacity": _Column("capacity", "rate", False, MAX_RATE),
}

_ARROW_TYPES = {
    "name": pa.string(),
    "text": pa.string(),
    "reset": pa.string(),
    "int": pa.int64(),
    "partition": pa.int32(),
    "rate": pa.float64(),
    "list": pa.list_(pa.string()),
}


class _Bad(ValueError):
    """A bad value; the caller knows the row and the column."""


def shown_value(value: Any) -> str:
    if not isinstance(value, str):
        return shown(value)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


#: what a CSV cell may hold as an integer or a number (Python's int() and float() also take
#: "1_000", other scripts' digits, "nan" and "inf")
_CSV_INTEGER = re.compile(r"\s*-?([0-9]+)\s*")
_CSV_NUMBER = re.compile(r"\s*-?(?:[0-9]{1,20}(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?\s*")


def _integer(value: Any, text: bool) -> int:
    if text and isinstance(value, str):
        match = _CSV_INTEGER.fullmatch(value)
        if match is None:
            raise _Bad(f"expected an integer, got {shown_value(value)}")
        if len(match.group(1)) > MAX_INT_DIGITS:
            raise _Bad(f"out of range, got a number of {len(match.group(1)):,} digits")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(f"expected an integer, got {shown_value(value)}")
    if isinstance(value, float):
        if not value.is_integer():
            raise _Bad(f"expected an integer, got {value!r}")
        return int(value)
    return value


def _check_value(spec: _Column, value: Any, text: bool) -> Any:
    """The checked value of ``spec``'s column; ``text``: the value comes from a CSV cell."""
    if value is None or (isinstance(value, str) and value == "" and spec.kind != "name"):
        if spec.required:
            raise _Bad("missing (required)")
        return None
    if isinstance(value, float) and math.isnan(value) and spec.kind != "rate":
        # pandas writes a null of an integer column as NaN
        if spec.required:
            raise _Bad("missing (required)")
        return None
    kind = spec.kind
    if kind in ("name", "text", "reset"):
        if not isinstance(value, str):
            raise _Bad(f"expected a string, got {shown_value(value)}")
        _check_text(value)
        if kind == "name" and not value:
            raise _Bad("must not be empty")
        if kind == "reset" and not known_reset(value):
            raise _Bad(f"expected {AUTO_OFFSET_RESETS}, got {shown_value(value)}")
        return value
    if kind in ("int", "partition"):
        number = _integer(value, text)
        if number < 0:
            raise _Bad(f"must not be negative, got {number}")
        _within(number, spec.largest)
        return number
    if kind == "rate":
        if text and isinstance(value, str):
            if _CSV_NUMBER.fullmatch(value) is None:
                raise _Bad(f"expected a number, got {shown_value(value)}")
            rate = float(value)
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise _Bad(f"expected a number, got {shown_value(value)}")
        else:
            rate = float(value)
        if not math.isfinite(rate) or rate < 0:
            raise _Bad(
                f"must be a number of messages per second, not below 0, got {shown_value(value)}"
            )
        _within(rate, spec.largest)
        return rate
    # list: topic names (subscribed) or rack ids (replica_racks)
    if isinstance(value, str):
        _check_text(value)
        return [item for item in _LIST_SEPARATORS.split(value) if item]
    if not isinstance(value, list | tuple):
        raise _Bad(f"expected a list of strings, got {shown_value(value)}")
    for item in value:
        if not isinstance(item, str) or not item:
            raise _Bad(f"expected a list of non-empty strings, got {shown_value(list(value))}")
        _check_text(item)
    return list(value)


def _check_text(value: str) -> None:
    problem = text_problem(value)
    if problem is not None:
        raise _Bad(f"{shown_value(value)}: {problem}")


def _within(value: float, largest: float) -> None:
    problem = too_large(value, largest)
    if problem is not None:
        raise _Bad(problem)


# ------------------------------------------------------------------------------------------------
# chunks of rows -> Arrow batches


@dataclass
class Chunk:
    """Rows read but not yet checked: raw values per column and where each row is."""

    source: str
    columns: dict[str, list[Any]]
    rows: list[int]
    #: values come from CSV cells (strings)
    text: bool = False

    def __len__(self) -> int:
        return len(self.rows)


def _first_error(
    found: tuple[int, str, str] | None, index: int, column: str, message: str
) -> tuple[int, str, str]:
    if found is None or index < found[0]:
        return (index, column, message)
    return found


def _check_pylist(spec: _Column, values: Sequence[Any], text: bool) -> tuple[list[Any], int, str]:
    out: list[Any] = []
    for i, value in enumerate(values):
        try:
            out.append(_check_value(spec, value, text))
        except _Bad as e:
            return out, i, str(e)
    return out, -1, ""


def _check_arrow(spec: _Column, array: pa.Array) -> tuple[pa.Array, int, str] | None:
    """Checks a typed Parquet column without leaving Arrow, when its type is the expected one;
    None when it is not (the caller then checks value by value, which finds the bad row)."""
    kind = spec.kind
    target = _ARROW_TYPES[kind]
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    t = array.type
    if kind in ("int", "partition") and pa.types.is_integer(t):
        if pa.types.is_uint64(t):
            return None  # values above 2**63 - 1 are found value by value (Arrow's compare fails)
        if spec.required and array.null_count:
            return array, _index(pc.is_null(array)), "missing (required)"
        negative = pc.fill_null(pc.less(array, 0), False)
        if pc.any(negative).as_py():
            i = _index(negative)
            return array, i, f"must not be negative, got {array[i].as_py()}"
        big = pc.fill_null(pc.greater(array, spec.largest), False)
        if pc.any(big).as_py():
            i = _index(big)
            return array, i, str(too_large(array[i].as_py(), spec.largest))
        return array.cast(target), -1, ""
    if kind == "rate" and (pa.types.is_floating(t) or pa.types.is_integer(t)):
        values = array.cast(pa.float64())
        bad = pc.fill_null(pc.or_(pc.less(values, 0), pc.invert(pc.is_finite(values))), False)
        big = pc.fill_null(pc.greater(values, spec.largest), False)
        if pc.any(big).as_py() and not pc.any(bad).as_py():
            i = _index(big)
            return values, i, str(too_large(values[i].as_py(), spec.largest))
        if pc.any(bad).as_py():
            i = _index(bad)
            return (
                values,
                i,
                (
                    "must be a number of messages per second, not below 0, "
                    f"got {values[i].as_py()!r}"
                ),
            )
        return values, -1, ""
    if kind in ("name", "text") and (pa.types.is_string(t) or pa.types.is_large_string(t)):
        array = array.cast(pa.string())
        if _has_bad_text(array):
            return None  # found value by value, with its row
        if kind == "name":
            if array.null_count:
                return array, _index(pc.is_null(array)), "missing (required)"
            empty = pc.equal(array, "")
            if pc.any(empty).as_py():
                return array, _index(empty), "must not be empty"
            return array, -1, ""
        empty = pc.fill_null(pc.equal(array, ""), False)
        return pc.if_else(empty, pa.scalar(None, pa.string()), array), -1, ""
    if kind == "list" and pa.types.is_list(t) and pa.types.is_string(t.value_type):
        flat = pc.list_flatten(array)
        if _has_empty_items(flat) or _has_bad_text(flat):
            return None
        return array.cast(target), -1, ""
    return None


def _has_empty_items(flat: pa.Array) -> bool:
    return bool(flat.null_count) or bool(pc.any(pc.equal(flat, "")).as_py() or False)


#: text_problem's characters, for Arrow's RE2 (valid UTF-8 holds no surrogates)
_BAD_TEXT_RE2 = "[\\x00-\\x1f\\x7f-\\x{9f}\\x{2028}\\x{2029}]"


def _has_bad_text(strings: pa.Array) -> bool:
    """Whether some string breaks the text limits (lagassign.formats.limits.text_problem)."""
    bad = pc.match_substring_regex(strings, _BAD_TEXT_RE2)
    long = pc.greater(pc.binary_length(strings), MAX_TEXT_BYTES)
    return bool(pc.any(pc.or_(bad, long)).as_py() or False)


def _index(mask: pa.Array) -> int:
    return int(pc.index(mask, True).as_py())


def checked_batch(chunk: Chunk, arrow: Mapping[str, pa.Array] | None = None) -> pa.RecordBatch:
    """Checks every value of the chunk; raises InputError at the first bad row (in file order;
    within a row, the first bad column in COLUMNS order)."""
    found: tuple[int, str, str] | None = None
    arrays: dict[str, pa.Array] = {}
    n = len(chunk)
    for name in COLUMNS:
        spec = _SPECS[name]
        checked = None
        if arrow is not None and name in arrow:
            checked = _check_arrow(spec, arrow[name])
            if checked is None:
                values, bad, message = _check_pylist(spec, arrow[name].to_pylist(), False)
                checked = (pa.array(values, _ARROW_TYPES[spec.kind]), bad, message)
        elif name in chunk.columns:
            values, bad, message = _check_pylist(spec, chunk.columns[name], chunk.text)
            checked = (pa.array(values, _ARROW_TYPES[spec.kind]), bad, message)
        elif spec.required:
            checked = (pa.nulls(n, _ARROW_TYPES[spec.kind]), 0 if n else -1, "missing (required)")
        else:
            checked = (pa.nulls(n, _ARROW_TYPES[spec.kind]), -1, "")
        array, bad, message = checked
        if bad >= 0:
            found = _first_error(found, bad, name, message)
            if bad == 0:
                break
        arrays[name] = array
    if found is None:
        below = pc.fill_null(pc.less(arrays["end"], arrays["begin"]), False)
        if pc.any(below).as_py():
            i = _index(below)
            begin, end = arrays["begin"][i].as_py(), arrays["end"][i].as_py()
            found = (i, "end", f"end offset {end} is below begin offset {begin}")
    if found is not None:
        i, column, message = found
        raise InputError(place(chunk.source, chunk.rows[i]), f"{column}: {message}")
    columns: dict[str, pa.Array] = {
        **arrays,
        "lag": pa.nulls(n, pa.int64()),
        "rate_window": pa.nulls(n, pa.float64()),
        "source": pa.array([chunk.source] * n, pa.string()),
        "row": pa.array(chunk.rows, pa.int64()),
        "error": pa.nulls(n, pa.string()),
    }
    return pa.RecordBatch.from_arrays([columns[f] for f in ROW_SCHEMA.names], schema=ROW_SCHEMA)


def check_known(columns: Iterable[str], where: str) -> None:
    for column in columns:
        if column not in _SPECS:
            raise InputError(
                where, f"unknown column {column!r} (expected some of: {', '.join(COLUMNS)})"
            )


def check_required(columns: Iterable[str], where: str) -> None:
    present = set(columns)
    for column in REQUIRED:
        if column not in present:
            raise InputError(where, f"missing column {column!r}")


# ------------------------------------------------------------------------------------------------
# what the formats' readers (lagassign.formats.snapshot_formats) share


def open_text(path: str, opener: Opener) -> io.TextIOWrapper:
    """A text file as UTF-8 lines, gunzipped when its name ends in ``.gz``."""
    raw = opener(path)
    if path.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw), encoding="utf-8-sig", newline="")
    return io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")


def only_groups(batch: pa.RecordBatch, groups: re.Pattern[str] | None) -> pa.RecordBatch:
    """The rows of ``batch`` whose group id the whole pattern matches (all: None)."""
    if groups is None:
        return batch
    keep = [groups.fullmatch(g) is not None for g in batch.column("group").to_pylist()]
    return batch.filter(pa.array(keep, pa.bool_()))


def check_utf8(batch: pa.RecordBatch, path: str, first: int) -> None:
    """Parquet does not promise that its strings are UTF-8 (Arrow reads them unchecked): the
    first that is not, in row order, is an InputError naming its row and column."""
    found = [
        (row, name)
        for name, array in zip(batch.schema.names, batch.columns, strict=True)
        if (row := _first_invalid_utf8(array)) >= 0
    ]
    if found:
        row, name = min(found)
        raise InputError(place(path, first + row), f"{name}: not UTF-8 text")


def _first_invalid_utf8(array: pa.Array) -> int:
    """The index of the first value of a string or list-of-strings column that is not UTF-8,
    or -1."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    t = array.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        parents = pc.list_parent_indices(array)
        i = _first_invalid_utf8(pc.list_flatten(array))
        return -1 if i < 0 else int(parents[i].as_py())
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return -1
    try:
        array.validate(full=True)
        return -1
    except pa.ArrowInvalid:
        pass
    for i, raw in enumerate(array.cast(pa.large_binary()).to_pylist()):
        if raw is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return i
    return -1


def read_snapshot(
    path: str,
    fmt: str | None = None,
    opener: Opener = open_local,
    groups: re.Pattern[str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The rows of one snapshot file, checked, in batches; ``groups``: only groups whose id
    matches the whole pattern. Raises :class:`InputError` at the first bad row."""
    found = snapshot_formats.get(fmt or format_of(path) or "")
    if found is None:
        raise InputError(path, f"unknown snapshot format (expected {shown_suffixes(' or ')})")
    try:
        yield from found.read(path, opener, groups)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None


def read_describe(
    path: str,
    auto_offset_reset: str = "latest",
    groups: re.Pattern[str] | None = None,
    opener: Opener = open_local,
) -> Iterator[pa.RecordBatch]:
    """The rows of a ``kafka-consumer-groups --describe`` dump (lagassign.formats.describe)."""
    for group in load_describe(path, auto_offset_reset, opener):
        if groups is None or groups.fullmatch(group.id):
            yield rows_batch(group_rows(group, path))
