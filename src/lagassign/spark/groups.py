"""One group's snapshot rows -> the model group -> the core's plans -> result rows.

Pure Python and pyarrow: the pipeline calls :func:`plan_rows` on its executors once per group
(``groupBy("group").applyInArrow``), and the benchmark's plain loop calls it directly. Lag comes
from :func:`lagassign.lag_rules.group_lags`, the plans and their metrics from
:func:`lagassign.plan.plan_group` (each plan's predicted catch-up time among them): nothing
here assigns a partition or computes a lag.

The rows of a group make the model group this way: its members are the distinct non-null
``member_id``\\ s, each owning the partitions of its rows; a member subscribes its ``subscribed``
topics, or every topic of the group when no row of it says; its ``rack``, ``instance_id``
(static membership), ``generation`` (of what it owns, for the sticky strategies) and
``capacity`` are those its rows give; ``auto_offset_reset`` is the group's (null means
"latest"). Rows that disagree about a group or a member raise
:class:`InputError` naming the file and row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from lagassign.formats.errors import InputError
from lagassign.lag_rules import DEFAULT_AUTO_OFFSET_RESET
from lagassign.model import (
    Group,
    Member,
    ModelError,
    Offsets,
    Partition,
    Topic,
    TopicPartition,
    java_order,
)
from lagassign.plan import CURRENT, GroupPlans, Plan, plan_group
from lagassign.spark.schema import RESULT_SCHEMA
from lagassign.spark.snapshot import place

Row = Mapping[str, Any]


def _where(row: Row) -> str:
    return place(str(row.get("source") or "<input>"), row.get("row"))


def _order(row: Row) -> tuple[bool, bytes, int, str, int]:
    topic = row.get("topic")
    return (
        topic is None,
        java_order(topic or ""),
        row.get("partition") or 0,
        str(row.get("source") or ""),
        row.get("row") or 0,
    )


#: a member's columns that every row of the member must agree on (null rows say nothing)
MEMBER_COLUMNS = ("rack", "instance_id", "generation", "capacity")


@dataclass
class _MemberRows:
    first: Row
    #: column -> (value, the row that first gave it)
    said: dict[str, tuple[Any, Row]] = field(default_factory=dict)
    subscribed: set[str] | None = None
    owned: list[TopicPartition] = field(default_factory=list)

    def value(self, column: str) -> Any:
        return self.said[column][0] if column in self.said else None


def build_group(rows: Sequence[Row]) -> Group:
    """The model group of one group's rows (all with the same ``group``)."""
    if not rows:
        raise ValueError("a group needs rows")
    rows = sorted(rows, key=_order)
    group_id = str(rows[0]["group"])
    reset: str | None = None
    reset_row: Row | None = None
    partitions: dict[str, list[Partition]] = {}
    seen: dict[TopicPartition, Row] = {}
    members: dict[str, _MemberRows] = {}
    all_topics = _topics(rows)
    for row in sorted(rows, key=lambda r: (str(r.get("source") or ""), r.get("row") or 0)):
        value = row.get("auto_offset_reset")
        if value is not None:
            if reset is None:
                reset, reset_row = value, row
            elif value.lower() != reset.lower():
                raise InputError(
                    _where(row),
                    f"auto_offset_reset: {value!r} disagrees with {reset!r} "
                    f"({_where(reset_row or row)}) for group {group_id!r}",
                )
    for row in rows:
        topic, number = row.get("topic"), row.get("partition")
        member_id = row.get("member_id")
        if topic is not None and number is not None:
            tp = TopicPartition(topic, number)
            if tp in seen:
                raise InputError(
                    _where(row),
                    f"partition: {tp} listed twice for group {group_id!r} "
                    f"(also at {_where(seen[tp])})",
                )
            seen[tp] = row
            try:
                partitions.setdefault(topic, []).append(_partition(row, topic, number))
            except ModelError as e:
                raise InputError(_where(row), f"{e.where or 'partition'}: {e.message}") from None
        if member_id is None:
            continue
        m = members.setdefault(member_id, _MemberRows(row))
        if topic is not None and number is not None:
            m.owned.append(TopicPartition(topic, number))
        for column in MEMBER_COLUMNS:
            value = row.get(column)
            if value is None:
                continue
            if column not in m.said:
                m.said[column] = (value, row)
            elif value != m.said[column][0]:
                first, first_row = m.said[column]
                raise InputError(
                    _where(row),
                    f"{column}: {value!r} disagrees with {first!r} ({_where(first_row)}) "
                    f"for member {member_id!r}",
                )
        subscribed = row.get("subscribed")
        if subscribed is not None:
            unknown = [t for t in subscribed if t not in all_topics]
            if unknown:
                raise InputError(
                    _where(row),
                    f"subscribed: topic {unknown[0]!r} has no partitions in group {group_id!r}",
                )
            m.subscribed = (m.subscribed or set()) | set(subscribed)
    every_topic = frozenset(partitions)
    model_members = []
    for mid, m in sorted(members.items()):
        try:
            model_members.append(
                Member(
                    mid,
                    frozenset(m.subscribed) if m.subscribed is not None else every_topic,
                    instance_id=m.value("instance_id"),
                    rack=m.value("rack"),
                    owned=tuple(m.owned),
                    generation=m.value("generation"),
                    capacity=m.value("capacity"),
                )
            )
        except ModelError as e:
            raise InputError(_where(m.first), f"{e.where}: {e.message}") from None
    topics = {
        name: Topic(name, tuple(partitions[name])) for name in sorted(partitions, key=java_order)
    }
    try:
        return Group(group_id, topics, tuple(model_members), reset or DEFAULT_AUTO_OFFSET_RESET)
    except ModelError as e:  # pragma: no cover - the checks above come first
        raise InputError(_where(rows[0]), f"group {group_id!r}: {e}") from None


def _topics(rows: Sequence[Row]) -> set[str]:
    return {r["topic"] for r in rows if r.get("topic") is not None}


def _partition(row: Row, topic: str, number: int) -> Partition:
    racks = frozenset(row.get("replica_racks") or ())
    rates = {"rate_in": row.get("rate_in"), "rate_out": row.get("rate_out")}
    if row.get("lag") is not None:
        return Partition(topic, number, lag=row["lag"], racks=racks, **rates)
    offsets = Offsets(row["begin"], row["end"], row.get("committed"))
    return Partition(topic, number, offsets=offsets, racks=racks, **rates)


# ------------------------------------------------------------------------------------------------
# plans -> result rows


class Results:
    """Result rows (:data:`~lagassign.spark.schema.RESULT_SCHEMA`) being collected."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in RESULT_SCHEMA.names}

    def add(self, kind: str, **values: Any) -> None:
        for name, column in self.columns.items():
            column.append(kind if name == "kind" else values.get(name))

    def __len__(self) -> int:
        return len(self.columns["kind"])

    def table(self) -> pa.Table:
        return pa.Table.from_pydict(self.columns, schema=RESULT_SCHEMA)

    def add_group(self, rows: Iterable[Row], gp: GroupPlans) -> None:
        """Every result of one group: its partitions' lag, and every plan (the current
        assignment first, as ``current``) with its members' load and the group metrics."""
        group = gp.group
        for row in rows:
            topic, number = row.get("topic"), row.get("partition")
            if topic is None or number is None:
                continue
            self.add(
                "partition",
                group=group.id,
                topic=topic,
                partition=number,
                lag=gp.lags[TopicPartition(topic, number)],
                member_id=row.get("member_id"),
            )
        plans = ([gp.current] if gp.current else []) + list(gp.plans)
        for plan in plans:
            self.add_plan(gp, plan)

    def add_plan(self, gp: GroupPlans, plan: Plan) -> None:
        group, metrics = gp.group.id, plan.metrics
        for member_id, tps in plan.assignment.partitions.items():
            for tp in tps:
                self.add(
                    "plan",
                    group=group,
                    strategy=plan.strategy,
                    member_id=member_id,
                    topic=tp.topic,
                    partition=tp.partition,
                )
        for load in metrics.members:
            self.add(
                "member",
                group=group,
                strategy=plan.strategy,
                member_id=load.member_id,
                partitions=load.partitions,
                lag=load.lag,
            )
        self.add(
            "group",
            group=group,
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


def plan_rows(
    rows: Sequence[Row], strategies: Sequence[str], into: Results | None = None
) -> Results:
    """The results of one group's rows: lag, plans, members, metrics; or one ``error`` row (bad
    input, naming the file and row) or ``failure`` row (a strategy failed). Added to ``into``
    when given."""
    results = Results() if into is None else into
    try:
        group = build_group(rows)
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


__all__ = ["CURRENT", "Results", "build_group", "plan_rows"]
