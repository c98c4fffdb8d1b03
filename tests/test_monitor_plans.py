"""The monitor's plans without Spark or a broker (spark/monitor/plans.py): when a group is
planned, rates and capacities measured between two plans' samples, catch-up times now and
under balanced, each recommendation rule, and plans kept per micro-batch across a restart.

Two members of group "g" on topic "t": ``a`` owns t-0 and t-1, ``b`` t-2 and t-3. The first
plan's sample at 0 s: log ends 10,000, 10,000, 1,000, 1,000, nothing committed. The second, at
60 s: every partition committed 600 (10 a second each, so each member reads 20 a second and,
owning backlog, is saturated: its capacity is 20), and the producers' rates as each test says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from lagassign.kafka.offsets import LiveMember
from lagassign.model import Offsets, TopicPartition
from lagassign.spark.monitor.batch import MonitorBatches
from lagassign.spark.monitor.commits import CommitState
from lagassign.spark.monitor.plans import (
    MonitorPlans,
    PlanValues,
    catch_up_cut,
    group_offsets,
)
from tests.test_consumer_offsets import key, value
from tests.test_monitor_batch import Clock, commit, live

ENDS = (10_000, 10_000, 1_000, 1_000)
MEMBERS: dict[str, tuple[LiveMember, ...] | None] = {
    "g": (live("a", ("t", 0), ("t", 1)), live("b", ("t", 2), ("t", 3)))
}


def sample(
    ends: tuple[int, ...], committed: int
) -> tuple[CommitState, dict[TopicPartition, Offsets]]:
    """The commit state with every partition at ``committed``, and the partitions' logs."""
    state = CommitState()
    state.apply([commit("g", "t", p, committed) for p in range(len(ends))])
    logs = {TopicPartition("t", p): Offsets(0, end) for p, end in enumerate(ends)}
    return state, logs


def planned(
    produced: tuple[int, ...],
    threshold: float = 0.2,
    members: Mapping[str, Sequence[LiveMember] | None] = MEMBERS,
) -> PlanValues:
    """The second plan's values, after ``produced[p]`` more records in partition p."""
    plans = MonitorPlans()
    plans.update(0.0, *sample(ENDS, 0), members, every_s=60)
    assert plans.values("g") == PlanValues()  # the first plan has no rates to tell by
    ends = tuple(e + n for e, n in zip(ENDS, produced, strict=True))
    plans.update(60.0, *sample(ends, 600), members, 60, threshold)
    return plans.values("g")


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
    """Nothing read between the samples: no member is measured, each gets a share of the 0 the
    group reads, and every member with backlog never catches up, under any plan."""
    plans = MonitorPlans()
    plans.update(0.0, *sample(ENDS, 0), MEMBERS, every_s=60)
    plans.update(60.0, *sample(ENDS, 0), MEMBERS, every_s=60)
    values = plans.values("g")
    assert (values.catch_up_now_s, values.catch_up_balanced_s) == (math.inf, math.inf)
    assert values.recommendation == (
        "falling behind: a (takes in 0/s, reads 0/s), b (takes in 0/s, reads 0/s); "
        "balanced cannot keep up either: add consumers"
    )


def test_a_negative_committed_offset_counts_as_none() -> None:
    """A client committed -1 to t-3: the sample has no committed offset there (the model
    rejects negative offsets), so t-3 has no consume rate and b, owning it, is not measured:
    it is assumed to read like a, 20 a second."""
    plans = MonitorPlans()
    state, logs = sample(ENDS, 0)
    state.apply([commit("g", "t", 3, -1)])
    assert group_offsets(state, logs)["g"][TopicPartition("t", 3)] == Offsets(0, 1_000)
    plans.update(0.0, state, logs, MEMBERS, every_s=60)
    state, logs = sample((10_600, *ENDS[1:]), 600)
    state.apply([commit("g", "t", 3, -1)])
    plans.update(60.0, state, logs, MEMBERS, every_s=60)
    assert plans.values("g").catch_up_now_s == 1940.0


def one_member(start: tuple[int, int], lag: int) -> PlanValues:
    """Member a alone on t-0, planned at 0 s (log end, committed: ``start``) and 300 s later,
    after 56 records a second came and a read as many, ``lag`` behind the log end."""
    members = {"g": (live("a", ("t", 0)),)}
    plans = MonitorPlans()
    end, committed = start
    plans.update(0.0, *sample((end,), committed), members, every_s=300)
    end += 56 * 300
    plans.update(300.0, *sample((end,), end - lag), members, every_s=300)
    return plans.values("g")


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


def test_a_group_is_planned_every_period_and_forgotten_when_gone() -> None:
    plans = MonitorPlans()
    plans.update(0.0, *sample(ENDS, 0), MEMBERS, every_s=60)
    first = plans.last["g"]
    plans.update(59.0, *sample(ENDS, 590), MEMBERS, every_s=60)
    assert plans.last["g"] is first  # not due: the sample the next rates start from stays
    plans.update(60.0, *sample(ENDS, 600), MEMBERS, every_s=60)
    assert plans.last["g"].time == 60.0 and plans.values("g").catch_up_now_s is not None
    plans.update(61.0, CommitState(), {}, MEMBERS, every_s=60)
    assert plans.last == {} and plans.values("g") == PlanValues()


def test_plans_beyond_the_budget_wait_for_the_next_micro_batch_longest_waiting_first() -> None:
    """Three groups due, a timer that says each look took 1 s and a budget of 1.5 s: one plan
    per micro-batch, the group that waited longest first; a new group's first plan (its sample)
    is made whatever the budget."""
    ticks = iter(range(1000))

    def timer() -> float:
        return float(next(ticks))

    state = CommitState()
    state.apply([commit(g, "t", 0, 0) for g in ("x", "y", "z")])
    logs = {TopicPartition("t", 0): Offsets(0, 100)}
    plans = MonitorPlans()
    plans.update(0.0, state, logs, {}, every_s=60)
    plans.last["y"] = replace(plans.last["y"], time=-10.0)  # y waited longest
    times = []
    for now in (60.0, 61.0, 62.0):
        if now == 61.0:
            state.apply([commit("new", "t", 0, 0)])
        plans.update(now, state, logs, {}, every_s=60, budget_s=1.5, timer=timer)
        times.append({g: p.time for g, p in plans.last.items()})
    assert times == [
        {"x": 0.0, "y": 60.0, "z": 0.0},
        {"x": 61.0, "y": 60.0, "z": 0.0, "new": 61.0},
        {"x": 61.0, "y": 60.0, "z": 62.0, "new": 61.0},
    ]


@pytest.mark.parametrize(
    ("now", "balanced", "cut"),
    [(100.0, 25.0, 0.75), (math.inf, 50.0, 1.0), (math.inf, math.inf, 0.0), (0.0, 0.0, 0.0)],
)
def test_catch_up_cut(now: float, balanced: float, cut: float) -> None:
    assert catch_up_cut(now, balanced) == cut


T0 = datetime(2026, 11, 24, 23, 59, 0, tzinfo=UTC)


def test_micro_batches_plan_carry_the_last_plan_and_replay_it(tmp_path: Path) -> None:
    """A plan every 60 s over micro-batches 30 s apart: batches 0 and 1 carry nulls (the first
    plan has no rates), batch 2 plans with the rates of the 60 s since batch 0, batch 3 carries
    batch 2's values; batch 3 replayed after a restart (plans read back from its file) writes
    the same rows."""
    clock = Clock(T0)
    ends = {0: ENDS, 1: ENDS, 2: (10_600, *ENDS[1:]), 3: (10_900, *ENDS[1:])}
    offsets = {0: 0, 1: 300, 2: 600, 3: 900}

    def read_logs(topics: set[str]) -> dict[TopicPartition, Offsets]:
        batch = round((clock.now - T0).total_seconds() / 30)
        return {TopicPartition("t", p): Offsets(0, e) for p, e in enumerate(ends[batch])}

    out, state_dir = tmp_path / "out", tmp_path / "state"

    def batches() -> MonitorBatches:
        return MonitorBatches(
            out, state_dir, read_logs, clock=clock, read_members=lambda g: MEMBERS, plan_every_s=60
        )

    monitor = batches()
    for b in range(4):
        clock.now = T0 + timedelta(seconds=30 * b)
        monitor.run(b, [(key("g", "t", p), value(4, offsets[b])) for p in range(4)])

    def rows() -> list[tuple[object, ...]]:
        table = ds.dataset(out / "groups", format="parquet", partitioning="hive").to_table()
        columns = ["time", "catch_up_now_s", "catch_up_balanced_s", "recommendation"]
        return sorted(tuple(r[c] for c in columns) for r in table.to_pylist())

    planned_values = (1940.0, 1040.0, "rebalance with balanced: catch-up 32 min → 17 min (−46%)")
    expected = [
        (T0, None, None, None),
        (T0 + timedelta(seconds=30), None, None, None),
        (T0 + timedelta(seconds=60), *planned_values),
        (T0 + timedelta(seconds=90), *planned_values),
    ]
    assert rows() == expected
    batches().run(3, [(key("g", "t", p), value(4, offsets[3])) for p in range(4)])
    assert rows() == expected
