"""The ``groups`` table: one row per group per micro-batch, written once per batch id.

Columns, exactly (:data:`GROUPS_SCHEMA`): ``time`` (the micro-batch's sample, as in ``lag``),
``group``, ``status`` (``OK``, ``WARN``, ``STALL``, ``STOP`` or ``REWIND``: the worst of its
partitions' by :mod:`lagassign.status`, over each partition's commit window,
:mod:`.windows`), ``total_lag`` (the sum of its ``lag`` rows), ``max_lag_seconds`` (the
largest ``lag_seconds`` of its rows; null when any of them is null: the samples cannot tell
yet, and the largest could be that one), ``members`` (how
many members the group has at the micro-batch, from the groups' descriptions; null when the
coordinator could not tell), and from the group's last plan (:mod:`.plans`, every
``--plan-every`` minutes; carried by the rows between plans) ``catch_up_now_s`` (seconds until
its slowest member has read its backlog under its current assignment), ``catch_up_balanced_s``
(the same under ``balanced``'s plan), each ``inf`` when a member never catches up and null
when the plan cannot tell, and ``recommendation`` (a short text, or null).

Files: ``OUT/groups/date=YYYY-MM-DD/batch-<id>.parquet``, written like the ``lag`` table's
(:func:`.lag_table.write_batch`): a replayed micro-batch replaces its rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime

import pyarrow as pa

from lagassign.kafka.offsets import LiveMember
from lagassign.spark.monitor.plans import MonitorPlans, PlanValues
from lagassign.spark.monitor.windows import CommitWindows
from lagassign.status import Status, group_status, partition_status

GROUPS_TABLE = "groups"
GROUPS_SCHEMA = pa.schema(
    [
        ("time", pa.timestamp("us", tz="UTC")),
        ("group", pa.string()),
        ("status", pa.string()),
        ("total_lag", pa.int64()),
        ("max_lag_seconds", pa.float64()),
        ("members", pa.int32()),
        ("catch_up_now_s", pa.float64()),
        ("catch_up_balanced_s", pa.float64()),
        ("recommendation", pa.string()),
    ]
)


def group_rows(
    lag: pa.Table,
    windows: CommitWindows,
    members: Mapping[str, Sequence[LiveMember] | None],
    time: datetime,
    plans: MonitorPlans | None = None,
) -> pa.Table:
    """The rows of one sample at ``time`` from the same sample's ``lag`` rows, the groups'
    members (a group missing from ``members``, or None there, counts null) and their last
    plans (None: the plan's columns are null), sorted by group."""
    now = time.timestamp()
    statuses: dict[str, list[Status]] = defaultdict(list)
    totals: dict[str, int] = defaultdict(int)
    seconds: dict[str, list[float | None]] = defaultdict(list)
    columns = (lag.column(n).to_pylist() for n in ("group", "topic", "partition", "lag"))
    for group, topic, partition, lag_now, behind in zip(
        *columns, lag.column("lag_seconds").to_pylist(), strict=True
    ):
        window = windows.of((group, topic, partition))
        statuses[group].append(partition_status(window, lag_now, now))
        totals[group] += lag_now
        seconds[group].append(behind)
    groups = sorted(statuses)
    values = [plans.values(g) if plans is not None else PlanValues() for g in groups]
    return pa.table(
        {
            "time": [time] * len(groups),
            "group": groups,
            "status": [group_status(statuses[g]).name for g in groups],
            "total_lag": [totals[g] for g in groups],
            "max_lag_seconds": [max_known(seconds[g]) for g in groups],
            "members": [member_count(members.get(g)) for g in groups],
            "catch_up_now_s": [v.catch_up_now_s for v in values],
            "catch_up_balanced_s": [v.catch_up_balanced_s for v in values],
            "recommendation": [v.recommendation for v in values],
        },
        schema=GROUPS_SCHEMA,
    )


def member_count(members: Sequence[LiveMember] | None) -> int | None:
    return None if members is None else len(members)


def max_known(values: list[float | None]) -> float | None:
    """The largest of ``values``; None when any is None (or there are none)."""
    known = [v for v in values if v is not None]
    return max(known) if known and len(known) == len(values) else None
