"""One group's snapshot rows -> the model group -> the core's plans -> result rows.

Pure Python and pyarrow: the pipeline calls :func:`plan_rows` on its executors once per group
(``groupBy("group").applyInArrow``), and the benchmark's plain loop calls it directly. Lag comes
from :func:`lagassign.lag_rules.group_lags`, the plans and their metrics from
:func:`lagassign.plan.plan_group` (each plan's predicted catch-up time among them): nothing
here assigns a partition or computes a lag.

The model group comes from :func:`lagassign.formats.snapshot_rows.build_group`, which says
how rows make a group.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from lagassign.formats.errors import InputError
from lagassign.formats.limits import MAX_OFFSET
from lagassign.formats.snapshot_rows import Row, build_group, place
from lagassign.lag_rules import group_lags
from lagassign.model import Group, TopicPartition
from lagassign.plan import CURRENT, GroupPlans, Plan, plan_group
from lagassign.spark.schema import RESULT_SCHEMA


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
        for plan in gp.settled.values():
            self.add_metrics("settled", gp, plan)

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
    for row in sorted(rows, key=lambda r: (str(r.get("source") or ""), r.get("row") or 0)):
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


__all__ = ["CURRENT", "Results", "plan_rows"]
