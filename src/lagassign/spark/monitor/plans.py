"""Each group's plan every ``--plan-every`` minutes: its rates, its members' capacities, how
long it takes to catch up now and under ``balanced``, and a recommendation (docs/monitor.md).

A group is planned as soon as its rates can be measured, at the first micro-batch in which one
of its partitions has two log-end samples and two points of committed offsets (its second
micro-batch with commits), and then at the first micro-batch at least ``--plan-every``
minutes after its previous plan. A plan takes the
micro-batch's log offsets and the group's committed offsets (every partition of the topics the
group has committed), the members' assignments in the group's description read in this
micro-batch, and what the monitor keeps anyway: each partition's log-end samples
(:mod:`.samples`, for ``lag_seconds``) and the group's window of recent commits per partition
(:mod:`.windows`, for the status). Everything else is the core's:

1. every partition's produce rate over its log-end samples and consume rate over its commit
   window, up to the group's newest commit (:func:`commit_series`), by
   :func:`lagassign.rates.rates_from_series`;
2. each member's capacity (:func:`lagassign.rates.capacities`: a saturated member, one that
   owns backlog, reads all it can, so its measured consume rate is its capacity; the others
   are assumed to read like those);
3. the current assignment's and ``balanced``'s plans with their metrics
   (:func:`lagassign.plan.plan_group`: ``balanced`` plans for catch-up time when the group has
   produce rates, for lag otherwise), whose ``catch_up_seconds`` (the slowest member's
   :func:`lagassign.rates.catch_up_time`) are ``catch_up_now_s`` and ``catch_up_balanced_s``:
   ``inf`` when a member never catches up (it takes in at least what it reads), None when no
   member's consume rate is known, the group has no member, or the coordinator could not
   describe it (and before the group's first plan);
4. ``recommendation``: when a member falls behind under the current assignment
   (:attr:`lagassign.metrics.AssignmentMetrics.falls_behind`), which, at what rates, and
   whether ``balanced`` keeps up; else when ``balanced`` would cut the catch-up time by more
   than the threshold (``--recommend-threshold``, 20%), by how much; else None.

Between plans a group's rows carry its last plan's values. The plans' times and values are
kept per micro-batch like the commit state (``DIR/plans-<id>.parquet``, :mod:`.kept`), and so
are the samples and windows they measure from, so a replayed micro-batch plans from the same
kept state (under a time budget, :meth:`MonitorPlans.update`, it may get through more or
fewer of the due groups).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from lagassign.kafka.offsets import GroupSnapshot, LiveMember, PartitionState
from lagassign.model import Group, Offsets, TopicPartition
from lagassign.plan import GroupPlans, Plan, plan_group
from lagassign.rates import capacities, rates_from_series, series_rate
from lagassign.report.text import duration
from lagassign.spark.monitor import kept
from lagassign.spark.monitor.commits import CommitState
from lagassign.spark.monitor.options import DEFAULT_RECOMMEND_THRESHOLD
from lagassign.spark.monitor.samples import EndSamples
from lagassign.spark.monitor.windows import CommitWindows
from lagassign.status import Commit

BALANCED = "balanced"
#: members a recommendation names before it says how many more
NAMED_MEMBERS = 2

_STATE_FILE = "plans"
PLANS_SCHEMA = pa.schema(
    [
        ("group", pa.string()),
        ("time", pa.float64()),
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
    """A group's last plan: its micro-batch's time (seconds) and its values."""

    time: float
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
        samples: EndSamples,
        windows: CommitWindows,
        every_s: float,
        threshold: float = DEFAULT_RECOMMEND_THRESHOLD,
        budget_s: float | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        """Plans the groups whose plan is due at ``now`` (seconds), from ``samples`` and
        ``windows`` including this micro-batch's; forgets the groups that no longer have a
        committed partition whose log was read.

        A plan is due for a group never planned once its rates can be measured
        (:func:`measurable`), and ``every_s`` after the group's previous plan. With
        ``budget_s``, the due plans, those never made first, then the longest waiting, are made
        until they have taken that many seconds (by ``timer``); the groups left wait for the
        next micro-batch, first in line."""
        by_group = group_offsets(state, logs)
        self.last = {g: p for g, p in self.last.items() if g in by_group}
        due = sorted(
            (-math.inf, g)
            for g, offsets in by_group.items()
            if g not in self.last
            and measurable(offsets, samples, consumed_series(g, offsets, windows))
        ) + sorted((p.time, g) for g, p in self.last.items() if now - p.time >= every_s)
        started = timer()
        for _, group in due:
            if budget_s is not None and timer() - started >= budget_s:
                break
            values = plan_values(
                group, by_group[group], members.get(group), samples, windows, threshold
            )
            self.last[group] = LastPlan(now, values)

    def values(self, group: str) -> PlanValues:
        """What the group's rows carry: its last plan's values."""
        last = self.last.get(group)
        return last.values if last is not None else PlanValues()

    def save(self, folder: Path, batch_id: int) -> None:
        groups = sorted(self.last)
        plans = [self.last[g] for g in groups]
        table = pa.table(
            {
                "group": groups,
                "time": [p.time for p in plans],
                "catch_up_now_s": [p.values.catch_up_now_s for p in plans],
                "catch_up_balanced_s": [p.values.catch_up_balanced_s for p in plans],
                "recommendation": [p.values.recommendation for p in plans],
            },
            schema=PLANS_SCHEMA,
        )
        kept.save(folder, _STATE_FILE, batch_id, table)

    @classmethod
    def load(cls, folder: Path, batch_id: int) -> MonitorPlans:
        """The plans after micro-batch ``batch_id``; none before the first."""
        columns = kept.columns(folder, _STATE_FILE, batch_id, PLANS_SCHEMA)
        return cls(
            {
                group: LastPlan(at, PlanValues(now_s, balanced_s, rec))
                for group, at, now_s, balanced_s, rec in zip(*columns, strict=True)
            }
        )


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


def commit_series(window: Sequence[Commit], until: float) -> list[tuple[float, int]]:
    """A partition's committed offsets over time, from its commit window: each commit's
    ``(time, offset)`` (a negative offset, no position, left out), and the newest offset again
    at ``until``, the group's newest commit, when that is later: a group's commits all live in
    one partition of ``__consumer_offsets``, read in order, so every commit of the group up to
    then has been read, and this partition's offset held (a client that commits only the
    offsets that moved, as librdkafka's, reads 0 from a partition it does not commit).

    >>> w = [Commit(100, 10.0, 5), Commit(160, 16.0, 4)]
    >>> commit_series(w, 16.0), commit_series(w[:1], 16.0)
    ([(10.0, 100), (16.0, 160)], [(10.0, 100), (16.0, 100)])
    """
    series = [(c.time, c.offset) for c in window if c.offset >= 0]
    if series and window[-1].offset >= 0 and until > series[-1][0]:
        series.append((until, series[-1][1]))
    return series


def consumed_series(
    group_id: str, tps: Iterable[TopicPartition], windows: CommitWindows
) -> dict[TopicPartition, list[tuple[float, int]]]:
    """Each partition's :func:`commit_series` in ``group_id``'s windows, until the group's
    newest commit."""
    kept = {tp: windows.of((group_id, tp.topic, tp.partition)) for tp in tps}
    newest = max((w[-1].time for w in kept.values() if w), default=-math.inf)
    return {tp: commit_series(w, newest) for tp, w in kept.items()}


def measurable(
    offsets: Mapping[TopicPartition, Offsets],
    samples: EndSamples,
    consumed: Mapping[TopicPartition, Sequence[tuple[float, int]]],
) -> bool:
    """Whether a partition's produce and consume rates can both be measured
    (:func:`lagassign.rates.series_rate`): a group is planned from then on."""
    return any(
        series_rate(samples.of(tp)) is not None and series_rate(consumed[tp]) is not None
        for tp in offsets
    )


def plan_values(
    group_id: str,
    offsets: Mapping[TopicPartition, Offsets],
    members: Sequence[LiveMember] | None,
    samples: EndSamples,
    windows: CommitWindows,
    threshold: float,
) -> PlanValues:
    """One plan of the group: rates over the kept samples and commit windows, catch-up
    times, recommendation."""
    if not members:
        return PlanValues()
    group = rates_from_series(
        model_group(group_id, offsets, members),
        {tp: samples.of(tp) for tp in offsets},
        consumed_series(group_id, offsets, windows),
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
