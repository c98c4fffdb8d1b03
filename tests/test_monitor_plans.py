"""The monitor's plans without Spark or a broker (spark/monitor/plans.py): when a group is
planned, rates and capacities measured over the kept log-end samples and commit windows (the
committed offsets at the samples' times),
catch-up times now and under balanced, each recommendation rule, and plans kept per
micro-batch across a replay.

Two members of group "g" on topic "t": ``a`` owns t-0 and t-1, ``b`` t-2 and t-3. The first
micro-batch at 0 s: log ends 10,000, 10,000, 1,000, 1,000, every partition committed 0. The
second, at 60 s: every partition committed 600 (10 a second each, so each member reads 20 a
second and, owning backlog, is saturated: its capacity is 20), and the producers' rates as each
test says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from lagassign.formats.consumer_offsets import OffsetCommit
from lagassign.kafka.offsets import LiveMember
from lagassign.model import Offsets, TopicPartition
from lagassign.spark.monitor.batch import MonitorBatches
from lagassign.spark.monitor.commits import CommitState
from lagassign.spark.monitor.plans import (
    MonitorPlans,
    PlanValues,
    catch_up_cut,
    commit_series,
    group_offsets,
)
from lagassign.spark.monitor.samples import EndSamples
from lagassign.spark.monitor.windows import CommitWindows
from lagassign.status import Commit
from tests.test_consumer_offsets import key, value
from tests.test_monitor_batch import Clock, commit, live

ENDS = (10_000, 10_000, 1_000, 1_000)
MEMBERS: dict[str, tuple[LiveMember, ...] | None] = {
    "g": (live("a", ("t", 0), ("t", 1)), live("b", ("t", 2), ("t", 3)))
}


class Batches:
    """:class:`MonitorPlans` fed as :class:`MonitorBatches` feeds it: each micro-batch's
    commits applied to the state, a log-end sample of every partition, the commits added to
    their windows, then the plans updated."""

    def __init__(self) -> None:
        self.state = CommitState()
        self.samples = EndSamples()
        self.windows = CommitWindows()
        self.plans = MonitorPlans()

    def at(
        self,
        now: float,
        ends: Sequence[int],
        commits: Sequence[OffsetCommit],
        members: Mapping[str, Sequence[LiveMember] | None] = MEMBERS,
        every_s: float = 60,
        **kwargs: float,
    ) -> PlanValues:
        """The micro-batch at ``now`` s of ``commits`` (stamped ``now``), with log ends
        ``ends`` of topic t; g's values after it."""
        stamped = [replace(c, commit_timestamp_ms=round(now * 1000)) for c in commits]
        changes = self.state.apply(stamped)
        logs = {TopicPartition("t", p): Offsets(0, end) for p, end in enumerate(ends)}
        self.samples.add(now, logs)
        self.windows.add(changes, logs, self.samples)
        self.plans.update(
            now, self.state, logs, members, self.samples, self.windows, every_s, **kwargs
        )
        return self.plans.values("g")


def every(committed: int, group: str = "g") -> list[OffsetCommit]:
    return [commit(group, "t", p, committed) for p in range(len(ENDS))]


def planned(
    produced: tuple[int, ...],
    threshold: float = 0.2,
    members: Mapping[str, Sequence[LiveMember] | None] = MEMBERS,
) -> PlanValues:
    """The values of the second micro-batch, after ``produced[p]`` more records in
    partition p."""
    batches = Batches()
    # one sample: no rates to tell by yet
    assert batches.at(0.0, ENDS, every(0), members) == PlanValues()
    assert batches.plans.last == {}
    ends = tuple(e + n for e, n in zip(ENDS, produced, strict=True))
    return batches.at(60.0, ends, every(600), members, threshold=threshold)


def test_balanced_cuts_the_catch_up_time_and_is_recommended() -> None:
    """t-0 takes in 10 a second. a: backlog 10,000 + 9,400 at 20 − 10 spare: 1,940 s; b: 800
    at 20: 40 s. balanced (time-aware) gives each member one heavy and one light partition:
    a with t-0, t-2 (or t-3) 10,400 at 10 spare, 1,040 s; b 9,800 at 20, 490 s. 46% less."""
    values = planned((600, 0, 0, 0))
    assert (values.catch_up_now_s, values.catch_up_balanced_s) == (1940.0, 1040.0)
    assert values.recommendation == "rebalance with balanced: catch-up 32 min → 17 min (−46%)"


def test_no_recommendation_within_the_threshold() -> None:
    values = planned((600, 0, 0, 0), threshold=0.5)
    assert (values.catch_up_now_s, values.catch_up_balanced_s) == (1940.0, 1040.0)
    assert values.recommendation is None


def test_a_member_falling_behind_is_named_with_its_rates() -> None:
    """t-2 takes in 15 and t-3 10 a second: b takes in 25, reads 20, and never catches up;
    balanced splits the two between the members, and both catch up."""
    values = planned((0, 0, 900, 600))
    assert values.catch_up_now_s == math.inf
    assert values.catch_up_balanced_s is not None and values.catch_up_balanced_s < math.inf
    assert values.recommendation is not None
    assert values.recommendation.startswith(
        "falling behind: b (takes in 25/s, reads 20/s); balanced catches up in "
    )


def test_when_no_plan_keeps_up_it_says_so() -> None:
    """t-2 alone takes in 30 a second, more than any member reads."""
    values = planned((0, 0, 1800, 0))
    assert (values.catch_up_now_s, values.catch_up_balanced_s) == (math.inf, math.inf)
    assert values.recommendation == (
        "falling behind: b (takes in 30/s, reads 20/s); balanced cannot keep up either: "
        "add consumers"
    )


def test_a_partition_assigned_but_not_sampled_is_left_out() -> None:
    """b is also assigned t-4, added to the topic after its log was read: planned as before."""
    b = live("b", ("t", 2), ("t", 3), ("t", 4))
    values = planned((600, 0, 0, 0), members={"g": (MEMBERS["g"][0], b)})  # type: ignore[index]
    assert (values.catch_up_now_s, values.catch_up_balanced_s) == (1940.0, 1040.0)


def test_a_group_that_reads_nothing_falls_behind_at_0_a_second() -> None:
    """The group commits 0 again (stalled): no member is measured, each gets a share of the 0 the group reads, and every
    member with backlog never catches up, under any plan."""
    batches = Batches()
    batches.at(0.0, ENDS, every(0))
    values = batches.at(60.0, ENDS, every(0))
    assert (values.catch_up_now_s, values.catch_up_balanced_s) == (math.inf, math.inf)
    assert values.recommendation == (
        "falling behind: a (takes in 0/s, reads 0/s), b (takes in 0/s, reads 0/s); "
        "balanced cannot keep up either: add consumers"
    )


def test_a_negative_committed_offset_counts_as_none() -> None:
    """A client committed -1 to t-3: the sample has no committed offset there (the model
    rejects negative offsets) and its window no position, so t-3 has no consume rate and b,
    owning it, is not measured: it is assumed to read like a, 20 a second."""
    batches = Batches()
    negative = commit("g", "t", 3, -1)
    batches.at(0.0, ENDS, [*every(0)[:3], negative])
    assert group_offsets(batches.state, {TopicPartition("t", 3): Offsets(0, 1_000)}) == {
        "g": {TopicPartition("t", 3): Offsets(0, 1_000)}
    }
    values = batches.at(60.0, (10_600, *ENDS[1:]), [*every(600)[:3], negative])
    assert values.catch_up_now_s == 1940.0


def test_the_committed_offsets_over_time_from_a_window() -> None:
    """Each commit's (time, offset), then the newest offset again at the group's newest commit
    when later (this partition's held until then); a negative offset is no position."""
    window = [Commit(100, 10.0, 5), Commit(160, 16.0, 4)]
    assert commit_series(window, 16.0) == [(10.0, 100), (16.0, 160)]
    assert commit_series(window, 30.0) == [(10.0, 100), (16.0, 160), (30.0, 160)]
    assert commit_series([*window, Commit(-1, 20.0, 0)], 30.0) == [(10.0, 100), (16.0, 160)]


def test_a_group_is_planned_once_it_has_two_commits_and_two_samples() -> None:
    """Its first micro-batch, one commit of t-0 and one sample: no plan; the second, no commit:
    still one commit, no consume rate, no plan; the third commits t-0 again (not t-1, which
    holds its offset until then, reading 0): planned."""
    batches = Batches()
    assert batches.at(0.0, ENDS, every(0)) == PlanValues()
    assert batches.at(30.0, ENDS, []) == PlanValues()
    assert batches.plans.last == {}
    values = batches.at(60.0, (10_600, *ENDS[1:]), [commit("g", "t", 0, 600)])
    assert batches.plans.last["g"].time == 60.0 and values.catch_up_now_s is not None


def one_member(start: tuple[int, int], lag: int) -> PlanValues:
    """Member a alone on t-0, its first micro-batch at 0 s (log end, committed: ``start``) and
    its second, planned, 300 s later,
    after 56 records a second came and a read as many, ``lag`` behind the log end."""
    members = {"g": (live("a", ("t", 0)),)}
    batches = Batches()
    end, committed = start
    batches.at(0.0, (end,), [commit("g", "t", 0, committed)], members, every_s=300)
    end += 56 * 300
    return batches.at(300.0, (end,), [commit("g", "t", 0, end - lag)], members, every_s=300)


def test_a_member_keeping_up_with_lag_in_flight_is_not_falling_behind() -> None:
    """a reads the 56 a second that come in and is 170 behind at the plan's sample (what came
    since its last commit): no more than it reads in the 300 s between the plans, so it is not
    saturated, its 56 a second is no capacity, and it is caught up (a share of what the group
    reads is only a lower bound). 20,000 behind (more than 56 × 300) it is saturated: its
    capacity is its inflow, it falls behind."""
    keeping_up = one_member((1_000, 830), 170)
    assert keeping_up == PlanValues(0.0, 0.0, None)
    behind = one_member((30_000, 10_000), 20_000)
    assert (behind.catch_up_now_s, behind.catch_up_balanced_s) == (math.inf, math.inf)
    assert behind.recommendation == (
        "falling behind: a (takes in 56/s, reads 56/s); balanced cannot keep up either: "
        "add consumers"
    )


def test_without_members_or_a_description_the_plan_cannot_tell() -> None:
    for members in ({"g": ()}, {"g": None}, {}):
        assert planned((600, 0, 0, 0), members=members) == PlanValues()


def test_a_group_is_planned_from_its_second_micro_batch_then_every_period() -> None:
    """Micro-batches 30 s apart, a plan every 60 s: none at the first (one sample), the first
    plan at the second, carried at the third, the next plan at the fourth; a group that no
    longer has a committed partition is forgotten."""
    batches = Batches()
    assert batches.at(0.0, ENDS, every(0)) == PlanValues()
    first = batches.at(30.0, (10_300, *ENDS[1:]), every(300))
    assert batches.plans.last["g"].time == 30.0 and first.catch_up_now_s is not None
    assert batches.at(60.0, (10_600, *ENDS[1:]), every(600)) == first
    assert batches.plans.last["g"].time == 30.0  # not due
    batches.at(90.0, (10_900, *ENDS[1:]), every(900))
    assert batches.plans.last["g"].time == 90.0
    batches.plans.update(91.0, CommitState(), {}, MEMBERS, batches.samples, batches.windows, 60)
    assert batches.plans.last == {} and batches.plans.values("g") == PlanValues()


def test_plans_beyond_the_budget_wait_for_the_next_micro_batch_never_planned_first() -> None:
    """Three groups committing every micro-batch, a timer that says each plan took 1 s and a
    budget of 1.5 s: one plan per micro-batch; a group never planned goes before any other
    (by name; "new" once it has two commits), then the one that waited longest."""
    ticks = iter(range(1000))

    def timer() -> float:
        return float(next(ticks))

    batches = Batches()
    groups = ["x", "y", "z"]
    batches.at(0.0, ENDS, [commit(g, "t", 0, 0) for g in groups], {}, timer=timer)
    assert batches.plans.last == {}  # one sample: nothing due
    times = []
    for now in (1.0, 2.0, 3.0, 70.0, 71.0, 72.0):
        if now == 70.0:
            groups.append("new")
        commits = [commit(g, "t", 0, 0) for g in groups]
        batches.at(now, ENDS, commits, {}, budget_s=1.5, timer=timer)
        times.append({g: p.time for g, p in batches.plans.last.items()})
    assert times == [
        {"x": 1.0},
        {"x": 1.0, "y": 2.0},
        {"x": 1.0, "y": 2.0, "z": 3.0},
        {"x": 70.0, "y": 2.0, "z": 3.0},
        {"x": 70.0, "y": 2.0, "z": 3.0, "new": 71.0},
        {"x": 70.0, "y": 72.0, "z": 3.0, "new": 71.0},
    ]


@pytest.mark.parametrize(
    ("now", "balanced", "cut"),
    [(100.0, 25.0, 0.75), (math.inf, 50.0, 1.0), (math.inf, math.inf, 0.0), (0.0, 0.0, 0.0)],
)
def test_catch_up_cut(now: float, balanced: float, cut: float) -> None:
    assert catch_up_cut(now, balanced) == cut


T0 = datetime(2026, 11, 24, 23, 59, 0, tzinfo=UTC)


def test_micro_batches_plan_from_the_second_carry_the_last_plan_and_replay_it(
    tmp_path: Path,
) -> None:
    """Micro-batches at 0, 60 and 90 s, a plan every 60 s: batch 0 carries nulls (one sample),
    batch 1 plans with the rates measured since batch 0 (the worked example), batch 2 carries
    batch 1's values; batch 1 replayed after a restart (what was kept after batch 0 read back
    from its files) writes the same rows."""
    clock = Clock(T0)
    at = {0: 0, 1: 60, 2: 90}
    ends = {0: ENDS, 60: (10_600, *ENDS[1:]), 90: (10_900, *ENDS[1:])}
    offsets = {0: 0, 1: 600, 2: 900}

    def read_logs(topics: set[str]) -> dict[TopicPartition, Offsets]:
        seconds = round((clock.now - T0).total_seconds())
        return {TopicPartition("t", p): Offsets(0, e) for p, e in enumerate(ends[seconds])}

    out, state_dir = tmp_path / "out", tmp_path / "state"

    def batches() -> MonitorBatches:
        return MonitorBatches(
            out, state_dir, read_logs, clock=clock, read_members=lambda g: MEMBERS, plan_every_s=60
        )

    def run(monitor: MonitorBatches, b: int) -> None:
        clock.now = T0 + timedelta(seconds=at[b])
        ms = round(clock.now.timestamp() * 1000)
        monitor.run(b, [(key("g", "t", p), value(4, offsets[b], commit_ms=ms)) for p in range(4)])

    def rows() -> list[tuple[object, ...]]:
        table = ds.dataset(out / "groups", format="parquet", partitioning="hive").to_table()
        columns = ["time", "catch_up_now_s", "catch_up_balanced_s", "recommendation"]
        return sorted(tuple(r[c] for c in columns) for r in table.to_pylist())

    monitor = batches()
    for b in (0, 1):
        run(monitor, b)
    planned_values = (1940.0, 1040.0, "rebalance with balanced: catch-up 32 min → 17 min (−46%)")
    expected = [(T0, None, None, None), (T0 + timedelta(seconds=60), *planned_values)]
    assert rows() == expected
    replayed = batches()
    run(replayed, 1)
    assert rows() == expected
    run(replayed, 2)
    assert rows() == [*expected, (T0 + timedelta(seconds=90), *planned_values)]
