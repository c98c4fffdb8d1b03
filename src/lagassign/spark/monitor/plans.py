"""Each group's plan every ``--plan-every`` minutes: its rates, its members' capacities, how
long it takes to catch up now and under ``balanced``, and a recommendation (docs/monitor.md).

A group is planned at its first micro-batch and then at the first micro-batch at least
``--plan-every`` minutes after its previous plan. Each plan starts from the previous plan's
sample, which it keeps (every partition of the topics the group has committed: log start, log
end, the group's committed offset), and the members' assignments in the group's description
read in this micro-batch; everything else is the core's:

1. every partition's produce rate (from its log end) and consume rate (from the group's
   committed offset) between the two samples (:func:`lagassign.rates.measure_rates`);
2. each member's capacity (:func:`lagassign.rates.capacities`: a saturated member, one that
   owns backlog, reads all it can, so its measured consume rate is its capacity; the others
   are assumed to read like those);
3. the current assignment's and ``balanced``'s plans with their metrics
   (:func:`lagassign.plan.plan_group`: ``balanced`` plans for catch-up time when the group has
   produce rates, for lag otherwise), whose ``catch_up_seconds`` (the slowest member's
   :func:`lagassign.rates.catch_up_time`) are ``catch_up_now_s`` and ``catch_up_balanced_s``:
   ``inf`` when a member never catches up (it takes in at least what it reads), None when no
   member's consume rate is known, the group has no member, or the coordinator could not
   describe it (and a group's first plan, which has no earlier sample to measure rates from);
4. ``recommendation``: when a member falls behind under the current assignment
   (:attr:`lagassign.metrics.AssignmentMetrics.falls_behind`), which, at what rates, and
   whether ``balanced`` keeps up; else when ``balanced`` would cut the catch-up time by more
   than the threshold (``--recommend-threshold``, 20%), by how much; else None.

Between plans a group's rows carry its last plan's values. Kept per micro-batch like the commit
state (``DIR/plans-<id>.parquet``, :mod:`.kept`), so a replayed micro-batch plans from the
same samples (under a time budget, :meth:`MonitorPlans.update`, it may get through more or
fewer of the due groups).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from lagassign.kafka.offsets import GroupSnapshot, LiveMember, PartitionState
from lagassign.model import Group, Offsets, TopicPartition
from lagassign.plan import GroupPlans, Plan, plan_group
from lagassign.rates import capacities, measure_rates
from lagassign.report.text import duration
from lagassign.spark.monitor import kept
from lagassign.spark.monitor.commits import CommitState

#: ``--plan-every``'s default, in minutes
DEFAULT_PLAN_EVERY_MIN = 5.0
#: ``--recommend-threshold``'s default: recommend ``balanced`` when it cuts catch-up by more
DEFAULT_RECOMMEND_THRESHOLD = 0.2
BALANCED = "balanced"
#: members a recommendation names before it says how many more
NAMED_MEMBERS = 2

_STATE_FILE = "plans"
PLANS_SCHEMA = pa.schema(
    [
        ("group", pa.string()),
        ("time", pa.float64()),
        ("topics", pa.list_(pa.string())),
        ("partitions", pa.list_(pa.int32())),
        ("begins", pa.list_(pa.int64())),
        ("ends", pa.list_(pa.int64())),
        ("committed", pa.list_(pa.int64())),
        ("catch_up_now_s", pa.float64()),
        ("catch_up_balanced_s", pa.float64()),
        ("recommendation", pa.string()),
    ]
)


@dataclass(frozen=True, slots=True)
class PlanValues:
    """A plan's columns of the ``groups`` table (all None: no plan has told yet)."""

    catch_up_now_s: float | None = None
    catch_up_balanced_s: float | None = None
    recommendation: str | None = None


@dataclass(frozen=True, slots=True)
class LastPlan:
    """A group's last plan: its sample's time (seconds), the offsets it sampled, its values."""

    time: float
    offsets: Mapping[TopicPartition, Offsets]
    values: PlanValues


class MonitorPlans:
    def __init__(self, last: Mapping[str, LastPlan] | None = None) -> None:
        self.last: dict[str, LastPlan] = dict(last or {})

    def update(
        self,
        now: float,
        state: CommitState,
        logs: Mapping[TopicPartition, Offsets],
        members: Mapping[str, Sequence[LiveMember] | None],
        every_s: float,
        threshold: float = DEFAULT_RECOMMEND_THRESHOLD,
        budget_s: float | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        """Plans the groups whose plan is due at ``now`` (seconds); forgets the groups that no
        longer have a committed partition whose log was read.

        A group's first plan (its sample only) is always made. With ``budget_s``, the other
        due plans, the longest waiting first, are made until they have taken that many
        seconds (by ``timer``); the groups left wait for the next micro-batch, first in line."""
        by_group = group_offsets(state, logs)
        self.last = {g: p for g, p in self.last.items() if g in by_group}
        for group in sorted(by_group.keys() - self.last.keys()):
            self.last[group] = LastPlan(now, by_group[group], PlanValues())
        due = sorted((p.time, g) for g, p in self.last.items() if now - p.time >= every_s)
        started = timer()
        for _, group in due:
            if budget_s is not None and timer() - started >= budget_s:
                break
            offsets = by_group[group]
            values = plan_values(
                group, self.last[group], now, offsets, members.get(group), threshold
            )
            self.last[group] = LastPlan(now, offsets, values)

    def values(self, group: str) -> PlanValues:
        """What the group's rows carry: its last plan's values."""
        last = self.last.get(group)
        return last.values if last is not None else PlanValues()

    def save(self, folder: Path, batch_id: int) -> None:
        columns: dict[str, list[object]] = {name: [] for name in PLANS_SCHEMA.names}
        for group in sorted(self.last):
            last = self.last[group]
            tps = sorted(last.offsets)
            row = {
                "group": group,
                "time": last.time,
                "topics": [tp.topic for tp in tps],
                "partitions": [tp.partition for tp in tps],
                "begins": [last.offsets[tp].begin for tp in tps],
                "ends": [last.offsets[tp].end for tp in tps],
                "committed": [last.offsets[tp].committed for tp in tps],
                "catch_up_now_s": last.values.catch_up_now_s,
                "catch_up_balanced_s": last.values.catch_up_balanced_s,
                "recommendation": last.values.recommendation,
            }
            for name, value in row.items():
                columns[name].append(value)
        kept.save(folder, _STATE_FILE, batch_id, pa.table(columns, schema=PLANS_SCHEMA))

    @classmethod
    def load(cls, folder: Path, batch_id: int) -> MonitorPlans:
        """The plans after micro-batch ``batch_id``; none before the first."""
        columns = kept.columns(folder, _STATE_FILE, batch_id, PLANS_SCHEMA)
        last = {}
        for group, at, topics, parts, begins, ends, committed, now_s, bal_s, rec in zip(
            *columns, strict=True
        ):
            offsets = {
                TopicPartition(t, p): Offsets(b, e, c)
                for t, p, b, e, c in zip(topics, parts, begins, ends, committed, strict=True)
            }
            last[group] = LastPlan(at, offsets, PlanValues(now_s, bal_s, rec))
        return cls(last)


def group_offsets(
    state: CommitState, logs: Mapping[TopicPartition, Offsets]
) -> dict[str, dict[TopicPartition, Offsets]]:
    """Each group's sample: every partition of the topics it has committed whose log was read,
    with the group's committed offset (None where it has none, or a negative one)."""
    topics: dict[str, set[str]] = defaultdict(set)
    for group, topic, _ in state.commits:
        topics[group].add(topic)
    by_topic: dict[str, list[tuple[TopicPartition, Offsets]]] = defaultdict(list)
    for tp, log in logs.items():
        by_topic[tp.topic].append((tp, log))
    sampled = {}
    for group, names in topics.items():
        offsets = {}
        for topic in names:
            for tp, log in by_topic.get(topic, ()):
                commit = state.commits.get((group, tp.topic, tp.partition))
                # a client may commit a negative offset (-1); no position, as if none
                committed = commit.offset if commit is not None and commit.offset >= 0 else None
                offsets[tp] = Offsets(log.begin, log.end, committed)
        if offsets:
            sampled[group] = offsets
    return sampled


def model_group(
    group: str, offsets: Mapping[TopicPartition, Offsets], members: Sequence[LiveMember]
) -> Group:
    """The core's group: the sampled partitions, the members owning what they are assigned
    (:meth:`lagassign.kafka.offsets.GroupSnapshot.to_group`, as ``plan`` reads a live group)
    of those partitions (a partition added to a topic after its log was read is left out)."""
    partitions = tuple(
        PartitionState(tp.topic, tp.partition, o.begin, o.end, o.committed)
        for tp, o in sorted(offsets.items())
    )
    sampled = tuple(
        replace(m, assigned=tuple(tp for tp in m.assigned if tp in offsets)) for m in members
    )
    return GroupSnapshot(group, "Unknown", sampled, partitions).to_group()


def plan_values(
    group_id: str,
    previous: LastPlan,
    now: float,
    offsets: Mapping[TopicPartition, Offsets],
    members: Sequence[LiveMember] | None,
    threshold: float,
) -> PlanValues:
    """One plan of the group: rates since ``previous``, catch-up times, recommendation."""
    if not members:
        return PlanValues()
    group = measure_rates(
        model_group(group_id, previous.offsets, ()),
        model_group(group_id, offsets, members),
        now - previous.time,
    )
    plans = plan_group(group, [BALANCED])
    balanced = plans.settled.get(BALANCED, plans.plans[0])
    current = plans.current
    return PlanValues(
        None if current is None else current.metrics.catch_up_seconds,
        balanced.metrics.catch_up_seconds,
        None if current is None else recommendation(plans, current, balanced, threshold),
    )


def catch_up_cut(now_s: float, balanced_s: float) -> float:
    """The share of the catch-up time now that ``balanced`` saves: 1 when it catches up and
    the group never does now, 0 when neither ever does or nothing is to catch up."""
    if math.isinf(now_s):
        return 0.0 if math.isinf(balanced_s) else 1.0
    return (now_s - balanced_s) / now_s if now_s > 0 else 0.0


def recommendation(
    plans: GroupPlans, current: Plan, balanced: Plan, threshold: float
) -> str | None:
    """What to do, in one short line, or None (see the module docstring): ``current`` and
    ``balanced`` are plans of ``plans``' group. A member falling behind is named with what it
    takes in (its partitions' produce rates) and what it reads (its capacity)."""
    now_s, balanced_s = current.metrics.catch_up_seconds, balanced.metrics.catch_up_seconds
    if now_s is None or balanced_s is None:
        return None
    behind = current.metrics.falls_behind
    if behind:
        group = plans.group
        capacity = capacities(group, plans.lags)
        inflow = {
            m: sum(group.partition(tp).rate_in or 0.0 for tp in current.assignment[m])
            for m in behind
        }
        named = ", ".join(
            f"{m} (takes in {inflow[m]:,.0f}/s, reads {capacity.by_member[m]:,.0f}/s)"
            if capacity is not None
            else m
            for m in behind[:NAMED_MEMBERS]
        )
        more = f" and {len(behind) - NAMED_MEMBERS} more" if len(behind) > NAMED_MEMBERS else ""
        then = (
            "balanced cannot keep up either: add consumers"
            if math.isinf(balanced_s)
            else f"balanced catches up in {duration(balanced_s)}"
        )
        return f"falling behind: {named}{more}; {then}"
    cut = catch_up_cut(now_s, balanced_s)
    if cut > threshold:
        return (
            f"rebalance with balanced: catch-up {duration(now_s)} → {duration(balanced_s)} "
            f"(−{cut:.0%})"
        )
    return None
