"""One group's snapshot rows -> the model group -> the core's plans -> result rows.

Pure Python and pyarrow: the pipeline calls :func:`plan_batches` on its executors once per task
(``mapInArrow`` over rows packed and shuffled by group, :mod:`lagassign.spark.packing`), or
:func:`plan_read` on the rows a task read itself when its inputs hold whole groups (no
shuffle), and :func:`plan_rows` for each group; the task writes its share of the tables
(:class:`TableFiles`) or hands the rows back to Spark. The benchmark's plain loop calls them
directly. Lag comes from :func:`lagassign.lag_rules.group_lags`, the plans and their metrics
from :func:`lagassign.plan.plan_group` (each plan's predicted catch-up time among them):
nothing here assigns a partition or computes a lag.

The model group comes from :func:`lagassign.formats.snapshot_rows.build_group`, which says
how rows make a group.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from itertools import repeat
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lagassign.formats.errors import InputError
from lagassign.formats.limits import MAX_OFFSET
from lagassign.formats.snapshot_rows import Row, build_group, in_file_order, place
from lagassign.lag_rules import group_lags
from lagassign.model import Group, TopicPartition
from lagassign.plan import CURRENT, GroupPlans, Plan, plan_group
from lagassign.spark.packing import by_group, unpacked
from lagassign.spark.schema import RESULT_SCHEMA, TABLES

#: the columns each kind of result fills (the others are null): a table's columns, or an error's
KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    **{kind: columns for kind, columns in TABLES.values()},
    "input": ("source", "row", "error"),
    "error": ("group", "source", "error"),
    "failure": ("group", "source", "error"),
}

#: the table each kind of result makes
TABLE_OF = {kind: name for name, (kind, _) in TABLES.items()}


class Results:
    """Result rows (:data:`~lagassign.spark.schema.RESULT_SCHEMA`) being collected: a list per
    column of each kind, filled a plan at a time (a group's rows become Arrow columns without a
    Python object per row and column)."""

    def __init__(self) -> None:
        self.kinds: dict[str, dict[str, list[Any]]] = {}

    def columns(self, kind: str) -> dict[str, list[Any]]:
        """The columns of ``kind``'s rows, to append to (all of the same length)."""
        found = self.kinds.get(kind)
        if found is None:
            found = self.kinds[kind] = {name: [] for name in KIND_COLUMNS[kind]}
        return found

    def add(self, kind: str, **values: Any) -> None:
        """One row of ``kind``: its columns' values (those not given are null)."""
        for name, column in self.columns(kind).items():
            column.append(values.get(name))

    def __len__(self) -> int:
        return sum(len(next(iter(cols.values()))) for cols in self.kinds.values())

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The rows collected, a batch per kind, each of the whole result schema."""
        for kind, cols in self.kinds.items():
            n = len(next(iter(cols.values())))
            if not n:
                continue
            arrays = [
                pa.array([kind] * n, pa.string())
                if f.name == "kind"
                else pa.array(cols[f.name], f.type)
                if f.name in cols
                else pa.nulls(n, f.type)
                for f in RESULT_SCHEMA
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=RESULT_SCHEMA)

    def chunks(self) -> Iterator[tuple[str, pa.RecordBatch]]:
        """The rows collected, a batch per kind of that kind's columns (:func:`kind_schema`)."""
        for kind, cols in self.kinds.items():
            if cols and len(next(iter(cols.values()))):
                yield kind, pa.RecordBatch.from_pydict(cols, schema=kind_schema(kind))

    def table(self) -> pa.Table:
        return pa.Table.from_batches(list(self.batches()), schema=RESULT_SCHEMA)

    def add_group(self, rows: Iterable[Row], gp: GroupPlans) -> None:
        """Every result of one group: its partitions' lag, and every plan (the current
        assignment first, as ``current``) with its members' load and the group metrics."""
        group, lags = gp.group.id, gp.lags
        owned = [
            (row["topic"], row["partition"], row.get("member_id"))
            for row in rows
            if row.get("topic") is not None and row.get("partition") is not None
        ]
        cols = self.columns("partition")
        cols["group"].extend(repeat(group, len(owned)))
        cols["topic"].extend(topic for topic, _, _ in owned)
        cols["partition"].extend(number for _, number, _ in owned)
        cols["lag"].extend(lags[TopicPartition(topic, number)] for topic, number, _ in owned)
        cols["member_id"].extend(member for _, _, member in owned)
        plans = ([gp.current] if gp.current else []) + list(gp.plans)
        for plan in plans:
            self.add_plan(gp, plan)
        for plan in gp.settled.values():
            self.add_metrics("settled", gp, plan)

    def add_plan(self, gp: GroupPlans, plan: Plan) -> None:
        group, metrics = gp.group.id, plan.metrics
        cols = self.columns("plan")
        assigned = 0
        for member_id, tps in plan.assignment.partitions.items():
            assigned += len(tps)
            cols["member_id"].extend(repeat(member_id, len(tps)))
            cols["topic"].extend(tp.topic for tp in tps)
            cols["partition"].extend(tp.partition for tp in tps)
        cols["group"].extend(repeat(group, assigned))
        cols["strategy"].extend(repeat(plan.strategy, assigned))
        cols = self.columns("member")
        loads = metrics.members
        cols["group"].extend(repeat(group, len(loads)))
        cols["strategy"].extend(repeat(plan.strategy, len(loads)))
        cols["member_id"].extend(load.member_id for load in loads)
        cols["partitions"].extend(load.partitions for load in loads)
        cols["lag"].extend(load.lag for load in loads)
        self.add_metrics("group", gp, plan)

    def add_metrics(self, kind: str, gp: GroupPlans, plan: Plan) -> None:
        """The row of the plan's metrics: of the ``groups`` table, or of ``settled``."""
        metrics = plan.metrics
        self.add(
            kind,
            group=gp.group.id,
            strategy=plan.strategy,
            members=len(gp.group.members),
            partitions=sum(load.partitions for load in metrics.members) + metrics.unassigned,
            total_lag=metrics.total_lag,
            max_member_lag=metrics.max_member_lag,
            lower_bound=metrics.lower_bound,
            imbalance=metrics.imbalance,
            count_spread=metrics.count_spread,
            moves=metrics.moves,
            unassigned=metrics.unassigned,
            catch_up_s=metrics.catch_up_seconds,
            time_aware=gp.time_aware,
            falls_behind=(
                len(metrics.falls_behind) if metrics.member_catch_up is not None else None
            ),
        )


def check_total_lag(group: Group, rows: Sequence[Row]) -> None:
    """The group's lag adds up to a 64-bit integer, as the tables hold it; else an
    :class:`InputError` at the row where the sum passes 2^63 − 1 (offsets near that limit are
    each valid, but no real group has that much lag)."""
    # a partition's lag is at most its end offset: most groups are cleared without their lags
    if sum(row.get("end") or 0 for row in rows) <= MAX_OFFSET:
        return
    lags = group_lags(group)
    total = 0
    for row in in_file_order(rows):
        topic, number = row.get("topic"), row.get("partition")
        if topic is None or number is None:
            continue
        total += lags[TopicPartition(topic, number)]
        if total > MAX_OFFSET:
            raise InputError(
                place(str(row.get("source") or group.id), row.get("row")),
                f"end: the lag of group {group.id!r} adds up to more than 2^63 − 1 here",
            )


def plan_rows(
    rows: Sequence[Row], strategies: Sequence[str], into: Results | None = None
) -> Results:
    """The results of one group's rows: lag, plans, members, metrics; or one ``error`` row (bad
    input, naming the file and row) or ``failure`` row (a strategy failed). Added to ``into``
    when given."""
    results = Results() if into is None else into
    try:
        group = build_group(rows)
        check_total_lag(group, rows)
    except InputError as e:
        results.add("error", group=rows[0].get("group"), source=e.place, error=e.message)
        return results
    try:
        gp = plan_group(group, strategies)
    except Exception as e:  # a strategy's bug: reported as such, not as bad input
        results.add(
            "failure",
            group=group.id,
            source=f"group {group.id!r}",
            error=f"planning failed: {type(e).__name__}: {e}",
        )
        return results
    results.add_group(rows, gp)
    return results


def _rows(batch: pa.RecordBatch) -> Iterator[Row]:
    """The rows of ``batch`` as dictionaries of their non-null columns (a row's missing key
    reads as null)."""
    kept = [i for i, column in enumerate(batch.columns) if column.null_count < len(column)]
    names = [batch.schema.names[i] for i in kept]
    values = [batch.column(i).to_pylist() for i in kept]
    return (dict(zip(names, row, strict=True)) for row in zip(*values, strict=True))


#: what a planning task gives back: for each kind of result and chunk of a task's results, its
#: count of rows, and for the ``groups`` table the groups and their lag as the first strategy's
#: rows count them; ``arrow``, the chunk's rows (an Arrow record batch of the kind's columns,
#: :func:`kind_schema`) unless the task wrote them itself (:class:`TableFiles`); an error
#: (``input``, ``error``, ``failure``) is a row of its own, with ``group``, ``source``,
#: ``row`` and ``error``
PLANNED_SCHEMA = pa.schema(
    [
        pa.field("kind", pa.string()),
        pa.field("group", pa.string()),
        pa.field("source", pa.string()),
        pa.field("row", pa.int64()),
        pa.field("error", pa.string()),
        pa.field("rows", pa.int64()),
        pa.field("groups", pa.int64()),
        # a group's lag fits 64 bits (check_total_lag), a chunk's may not
        pa.field("lag", pa.decimal128(38, 0)),
        pa.field("arrow", pa.binary()),
    ]
)

#: the kinds of results that stop the run, first reported first: a source's error (bad input
#: as read, or a cluster that cannot be read), a group's bad input, a strategy that failed
ERROR_KINDS = ("input", "error", "failure")


def kind_schema(kind: str) -> pa.Schema:
    """The columns of ``kind``'s results (a table's, in its order), typed as in
    :data:`~lagassign.spark.schema.RESULT_SCHEMA`."""
    return pa.schema([RESULT_SCHEMA.field(name) for name in KIND_COLUMNS[kind]])


class TableFiles:
    """The output tables' Parquet files one planning task writes:
    ``<folder>/<table>/part-<task>.parquet``, written under a hidden name and renamed when
    whole, so a retried task replaces its own files and readers never see half of one."""

    def __init__(self, folder: str, task: int) -> None:
        self.folder, self.task = folder, task
        self.writers: dict[str, tuple[pq.ParquetWriter, str, str]] = {}

    def write(self, kind: str, batch: pa.RecordBatch) -> None:
        found = self.writers.get(kind)
        if found is None:
            name = TABLE_OF[kind]
            os.makedirs(os.path.join(self.folder, name), exist_ok=True)
            final = os.path.join(self.folder, name, f"part-{self.task:05d}.parquet")
            hidden = os.path.join(self.folder, name, f".part-{self.task:05d}.parquet.tmp")
            found = self.writers[kind] = (pq.ParquetWriter(hidden, batch.schema), hidden, final)
        found[0].write_batch(batch)

    def close(self) -> None:
        for writer, hidden, final in self.writers.values():
            writer.close()
            os.replace(hidden, final)
        self.writers.clear()


def write_empty_tables(folder: str) -> None:
    """A Parquet file of no rows, with the table's columns, for every table no task wrote."""
    for name, (kind, _) in TABLES.items():
        path = os.path.join(folder, name)
        if os.path.isdir(path) and any(f.endswith(".parquet") for f in os.listdir(path)):
            continue
        os.makedirs(path, exist_ok=True)
        pq.write_table(kind_schema(kind).empty_table(), os.path.join(path, "part-00000.parquet"))


def _planned(
    results: Results, first: str | None, files: TableFiles | None
) -> Iterator[pa.RecordBatch]:
    """``results`` as :data:`PLANNED_SCHEMA` rows, their tables' rows written to ``files``
    when given."""
    cols: dict[str, list[Any]] = {name: [] for name in PLANNED_SCHEMA.names}

    def add(**values: Any) -> None:
        for name, column in cols.items():
            column.append(values.get(name))

    for kind, chunk in results.chunks():
        if kind in ERROR_KINDS:
            for row in chunk.to_pylist():
                add(kind=kind, rows=1, **row)
            continue
        groups = lag = None
        if kind == TABLES["groups"][0]:
            mine = chunk.filter(pc.equal(chunk.column("strategy"), first))
            groups = mine.num_rows
            lag = Decimal(pc.sum(mine.column("total_lag").cast(pa.decimal128(38, 0))).as_py() or 0)
        if files is not None:
            files.write(kind, chunk)
        data = None if files is not None else chunk.serialize().to_pybytes()
        add(kind=kind, rows=chunk.num_rows, groups=groups, lag=lag, arrow=data)
    if cols["kind"]:
        yield pa.RecordBatch.from_pydict(cols, schema=PLANNED_SCHEMA)


#: results held before a chunk of them goes out (plan_batches)
FLUSH_ROWS = 100_000


def plan_batches(
    batches: Iterable[pa.RecordBatch],
    strategies: Sequence[str],
    tables: TableFiles | None = None,
) -> Iterator[pa.RecordBatch]:
    """The results (:data:`PLANNED_SCHEMA`) of every group whose rows are in ``batches``
    (packed by group, :mod:`lagassign.spark.packing`; whole groups, in any order): what a
    planning task of the pipeline does with its share of the groups after the shuffle. A
    source's error row becomes an ``input`` result, naming its file and row. With ``tables``,
    the tables' rows are written there (and closed at the end) instead of carried in
    ``arrow``."""
    return plan_grouped(unpacked(batches), strategies, tables)


def plan_read(
    batches: Iterable[pa.RecordBatch],
    strategies: Sequence[str],
    tables: TableFiles | None = None,
) -> Iterator[pa.RecordBatch]:
    """As :func:`plan_batches`, of snapshot rows as a source reads them (not packed): what a
    task that reads whole groups itself does, without a shuffle; and the benchmark's plain
    loop."""
    return plan_grouped(by_group(batches), strategies, tables)


def plan_grouped(
    groups: dict[str | None, list[pa.RecordBatch]],
    strategies: Sequence[str],
    tables: TableFiles | None = None,
) -> Iterator[pa.RecordBatch]:
    """The results of whole groups' rows (group -> its batches; a null group: source errors)."""
    first = strategies[0] if strategies else None
    results = Results()
    for group, parts in groups.items():
        rows: list[Row] = []
        for part in parts:
            for row in _rows(part):
                if row.get("error") is not None:
                    results.add(
                        "input", source=row.get("source"), row=row.get("row"), error=row["error"]
                    )
                else:
                    rows.append(row)
        if group is not None and rows:
            plan_rows(rows, strategies, results)
        if len(results) >= FLUSH_ROWS:
            yield from _planned(results, first, tables)
            results = Results()
    yield from _planned(results, first, tables)
    if tables is not None:
        tables.close()


def table_rows(batches: Iterable[pa.RecordBatch], kind: str) -> Iterator[pa.RecordBatch]:
    """The rows of ``kind`` that :data:`PLANNED_SCHEMA` batches carry in ``arrow``."""
    schema = kind_schema(kind)
    for batch in batches:
        kinds = batch.column("kind").to_pylist()
        data = batch.column("arrow")
        for i, k in enumerate(kinds):
            if k == kind and data[i].is_valid:
                yield pa.ipc.read_record_batch(data[i].as_buffer(), schema)


__all__ = [
    "CURRENT",
    "PLANNED_SCHEMA",
    "Results",
    "TableFiles",
    "plan_batches",
    "plan_read",
    "plan_rows",
]
