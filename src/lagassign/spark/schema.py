"""The pipeline's two internal tables, as Arrow schemas (and Spark DDL for the same columns).

**Snapshot rows**: one per group × partition, what every source (snapshot files, describe
dumps, a live cluster, the sample fleet) turns its input into. ``source`` and ``row`` say where
a row came from, so that every later error can name the file and the row. Internal extras
beyond the file format: ``lag`` (a lag given as such, as in describe dumps, instead of offsets),
rows with a null ``topic`` (a member that owns nothing: live groups have them) and ``error``
(a source that failed: the only non-null column then, with ``source`` and ``row``).

**Results**: what planning one group gives, every output table in one tagged table: ``kind``
says which table a row belongs to (see :data:`TABLES`); the columns it does not use are null.
Planning a group once and splitting afterwards keeps each group's work in one task.
"""

from __future__ import annotations

import pyarrow as pa

#: a snapshot file's columns, one row per group × partition (docs/pipeline.md): what the
#: readers accept, the sample fleet holds and the benchmark writes
SNAPSHOT_SCHEMA = pa.schema(
    [
        pa.field("group", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("begin", pa.int64()),
        pa.field("end", pa.int64()),
        pa.field("committed", pa.int64()),
        pa.field("member_id", pa.string()),
        pa.field("client_id", pa.string()),
        pa.field("host", pa.string()),
        pa.field("rack", pa.string()),
        pa.field("auto_offset_reset", pa.string()),
        pa.field("subscribed", pa.list_(pa.string())),
        pa.field("replica_racks", pa.list_(pa.string())),
        pa.field("rate_in", pa.float64()),
        pa.field("rate_out", pa.float64()),
        pa.field("instance_id", pa.string()),
        pa.field("generation", pa.int64()),
        pa.field("capacity", pa.float64()),
    ]
)

#: snapshot rows inside the pipeline: a file's columns and the internal extras (see above)
ROW_SCHEMA = pa.schema(
    [
        *SNAPSHOT_SCHEMA,
        pa.field("lag", pa.int64()),
        pa.field("source", pa.string()),
        pa.field("row", pa.int64()),
        pa.field("error", pa.string()),
    ]
)

#: results of planning: kind is "partition", "plan", "member", "group", "error" or "failure"
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

#: output table -> (the results kind it holds, its columns in order)
TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "partitions": ("partition", ("group", "topic", "partition", "lag", "member_id")),
    "plans": ("plan", ("group", "strategy", "member_id", "topic", "partition")),
    "members": ("member", ("group", "strategy", "member_id", "partitions", "lag")),
    "groups": (
        "group",
        (
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
        ),
    ),
}

_DDL_TYPES = {
    pa.string(): "string",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.float64(): "double",
    pa.bool_(): "boolean",
    pa.list_(pa.string()): "array<string>",
}


def ddl(schema: pa.Schema) -> str:
    """The Spark DDL of an Arrow schema of the types used here."""
    return ", ".join(f"`{f.name}` {_DDL_TYPES[f.type]}" for f in schema)


def empty_columns(schema: pa.Schema) -> dict[str, list[object]]:
    return {name: [] for name in schema.names}
