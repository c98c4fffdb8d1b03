"""The pipeline's results table, as an Arrow schema (and Spark DDL for any Arrow schema).

(The snapshot rows the pipeline reads are :mod:`lagassign.formats.snapshot_rows`'.)

**Results**: what planning one group gives, every output table in one tagged table: ``kind``
says which table a row belongs to (see :data:`TABLES`); the columns it does not use are null.
Planning a group once and splitting afterwards keeps each group's work in one task.
"""

from __future__ import annotations

import pyarrow as pa

#: results of planning: kind is "partition", "plan", "member", "group", "settled", "error" or
#: "failure"
RESULT_SCHEMA = pa.schema(
    [
        pa.field("kind", pa.string()),
        pa.field("group", pa.string()),
        pa.field("strategy", pa.string()),
        pa.field("member_id", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("lag", pa.int64()),
        pa.field("partitions", pa.int32()),
        pa.field("members", pa.int32()),
        pa.field("total_lag", pa.int64()),
        pa.field("max_member_lag", pa.int64()),
        pa.field("lower_bound", pa.float64()),
        pa.field("imbalance", pa.float64()),
        pa.field("count_spread", pa.int32()),
        pa.field("moves", pa.int32()),
        pa.field("unassigned", pa.int32()),
        pa.field("catch_up_s", pa.float64()),
        pa.field("time_aware", pa.bool_()),
        pa.field("falls_behind", pa.int32()),
        pa.field("error", pa.string()),
        pa.field("source", pa.string()),
        pa.field("row", pa.int64()),
    ]
)

#: the columns of a plan's metrics: the ``groups`` and ``settled`` tables
METRICS_COLUMNS = (
    "group",
    "strategy",
    "members",
    "partitions",
    "total_lag",
    "max_member_lag",
    "lower_bound",
    "imbalance",
    "count_spread",
    "moves",
    "unassigned",
    "catch_up_s",
    "time_aware",
    "falls_behind",
)

#: output table -> (the results kind it holds, its columns in order)
TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "partitions": ("partition", ("group", "topic", "partition", "lag", "member_id")),
    "plans": ("plan", ("group", "strategy", "member_id", "topic", "partition")),
    "members": ("member", ("group", "strategy", "member_id", "partitions", "lag")),
    "groups": ("group", METRICS_COLUMNS),
    #: where the rounds settle, for the plans of ``groups`` whose first round withholds
    "settled": ("settled", METRICS_COLUMNS),
}

_DDL_TYPES = {
    pa.string(): "string",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.float64(): "double",
    pa.bool_(): "boolean",
    pa.list_(pa.string()): "array<string>",
    pa.binary(): "binary",
    pa.decimal128(38, 0): "decimal(38,0)",
}


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL of an Arrow schema of the types used here."""
    return ", ".join(f"`{f.name}` {_DDL_TYPES[f.type]}" for f in schema)


def empty_columns(schema: pa.Schema) -> dict[str, list[object]]:
    return {name: [] for name in schema.names}
