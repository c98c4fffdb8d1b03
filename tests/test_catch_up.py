"""Time-aware `balanced`: member capacities, catch-up time, and the plan that keeps every
member ahead of its inflow (issue 12's objective), certified against HiGHS."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagassign.formats.group_file import load_group
from lagassign.lag_rules import GroupLags, group_lags
from lagassign.metrics import evaluate
from lagassign.model import Group, Member, ModelError, Partition, Topic, TopicPartition
from lagassign.optimum import catch_up_feasible, catch_up_optimum, utilisation_optimum
from lagassign.plan import plan_group
from lagassign.rates import capacities, catch_up_time, member_catch_up, rates_in
from lagassign.samples import catch_up_suite, with_rates
from lagassign.strategies import create, interpreted, names
from lagassign.strategies.balanced import (
    CATCH_UP_PROVEN,
    DEFAULT_SEARCH_BUDGET,
    BalancedAssignor,
    _balanced_state,
    _Column,
    _MemberTotals,
    _none_within,
    _scale,
    _to_assignment,
    catch_up_plan,
)
from tests.groupgen import random_group
from tests.test_cli import group_file, lagassign  # noqa: F401 (a fixture)
from tests.test_properties import check_per_topic_counts, check_valid


def rated_group(
    partitions: list[tuple[int, float]],
    capacity: dict[str, float | None],
    owned: dict[str, list[int]] | None = None,
    rate_out: list[float | None] | None = None,
) -> Group:
    """One topic ``t`` of (lag, rate_in) partitions; members with the given capacities."""
    outs = rate_out or [None] * len(partitions)
    topic = Topic(
        "t",
        tuple(
            Partition("t", i, lag=lag, rate_in=rate, rate_out=out)
            for i, ((lag, rate), out) in enumerate(zip(partitions, outs, strict=True))
        ),
    )
    members = [
        Member(
            m,
            frozenset({"t"}),
            capacity=c,
            owned=tuple(TopicPartition("t", p) for p in (owned or {}).get(m, [])),
        )
        for m, c in capacity.items()
    ]
    return Group.of([topic], members)


#: catch_up_plan's docstring example
EXAMPLE = rated_group([(6000, 40), (6000, 10), (0, 30), (0, 10)], {"a": 100, "b": 50})


def named(assignment) -> dict[str, list[str]]:
    return {m: [str(tp) for tp in tps] for m, tps in assignment.partitions.items()}


# -- capacities and catch-up time -------------------------------------------------------------


def test_capacities_docstring_example():
    g = rated_group(
        [(5000, 1.0), (0, 30.0)],
        {"a": None, "b": None, "c": None},
        owned={"a": [0], "b": [1]},
        rate_out=[120.0, 30.0],
    )
    found = capacities(g, group_lags(g))
    assert found is not None and not found.shared
    assert dict(found.by_member) == {"a": 120.0, "b": 120.0, "c": 120.0}
    assert dict(found.source) == {"a": "measured", "b": "assumed", "c": "assumed"}


def test_given_capacity_wins_and_sets_the_median_for_the_others():
    g = rated_group(
        [(5000, 1.0), (0, 1.0)], {"a": None, "b": 300.0, "c": None},
        owned={"a": [0]}, rate_out=[100.0, None],
    )
    found = capacities(g, group_lags(g))
    assert found is not None
    assert dict(found.by_member) == {"a": 100.0, "b": 300.0, "c": 200.0}
    assert dict(found.source) == {"a": "measured", "b": "given", "c": "assumed"}


def test_a_stalled_member_says_nothing_of_its_capacity():
    # a has backlog but reads nothing: stalled, not saturated; b reads nothing it has to
    g = rated_group(
        [(5000, 1.0), (0, 2.0)], {"a": None, "b": None},
        owned={"a": [0], "b": [1]}, rate_out=[0.0, 2.0],
    )
    found = capacities(g, group_lags(g))
    assert found is not None and found.shared
    assert dict(found.by_member) == {"a": 1.0, "b": 1.0}  # (0 + 2) msg/s shared by two


def test_nothing_known_is_none():
    g = rated_group([(5, 1.0)], {"a": None})
    assert capacities(g, group_lags(g)) is None
    assert evaluate(g, BalancedAssignor().assign(g), group_lags(g)).member_catch_up is None


def test_catch_up_time():
    assert catch_up_time(1000, 60, 100) == 25.0
    assert catch_up_time(1000, 100, 100) == math.inf  # the spare rate is what gains
    assert catch_up_time(0, 120, 100) == math.inf  # no backlog now, but it will grow
    assert catch_up_time(0, 0, 0) == 0.0  # nothing to read, nothing coming
    assert catch_up_time(0, 120, 100, lower_bound=True) == 0.0  # a share is only a floor


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan, 10**400])
def test_member_capacity_must_be_a_finite_non_negative_number(bad):
    with pytest.raises(ModelError, match="capacity"):
        Member("a", frozenset(), capacity=bad)


# -- the plan ---------------------------------------------------------------------------------


def test_catch_up_plan_docstring_example():
    lags = group_lags(EXAMPLE)
    found = capacities(EXAMPLE, lags)
    assert found is not None
    plan = catch_up_plan(EXAMPLE, lags, found)
    assert named(plan) == {"a": ["t-0", "t-2"], "b": ["t-1", "t-3"]}
    assert member_catch_up(EXAMPLE, plan, lags, found) == {"a": 200.0, "b": 200.0}
    assert named(BalancedAssignor().assign(EXAMPLE)) == named(plan)


def test_member_catch_up_given_the_rates_is_what_it_finds_itself():
    """catch_up_plan hands member_catch_up the rates it has already read; a partition
    without a rate takes in nothing either way."""
    for sample in catch_up_suite(1, max_partitions=40):
        g = sample.group
        lags = group_lags(g)
        found = capacities(g, lags)
        assert found is not None
        plan = BalancedAssignor().assign(g)
        rates = rates_in(g)
        assert member_catch_up(g, plan, lags, found, rate_in=rates) == member_catch_up(
            g, plan, lags, found
        )


def renumbered(g: Group) -> Group:
    """``g`` with its partitions numbered 1, 4, 7, … and listed last first, owning nothing"""
    topics = [
        Topic(name, tuple(replace(p, partition=3 * p.partition + 1) for p in t.partitions[::-1]))
        for name, t in g.topics.items()
    ]
    return Group.of(topics, [replace(m, owned=()) for m in g.members], id=g.id)


@pytest.mark.parametrize("sample", list(catch_up_suite(1, max_partitions=60)),
                         ids=lambda s: f"{s.family}-{s.seed}")
def test_plans_are_judged_by_member_catch_up_to_the_last_bit(sample):
    """catch_up_plan judges a plan in its search state (_MemberTotals) and turns only the chosen
    one into an assignment: the catch-up times must be member_catch_up's on that assignment,
    exactly, numbers with gaps and partitions listed out of order included; and a topic the
    search left in ``placed`` must be where ``held`` has it."""
    for g in (sample.group, renumbered(sample.group)):
        lags = group_lags(g)
        found = capacities(g, lags)
        assert found is not None
        weights = {p.tp: lags[p.tp] + 60.0 * (p.rate_in or 0.0) for p in g.partitions()}
        state = _balanced_state(g, weights, None, 0.05, DEFAULT_SEARCH_BUDGET, found.by_member)
        plan = _to_assignment(g, state)
        totals = _MemberTotals(g)
        owner = totals.owners(state)
        backlog = totals.sum(owner, totals.column([lags[p.tp] for p in totals.partitions]))
        inflow = totals.sum(owner, totals.column([p.rate_in or 0.0 for p in totals.partitions]))
        judged = {
            m.id: catch_up_time(b, r, found.by_member[m.id], lower_bound=found.shared)
            for m, b, r in zip(g.members, backlog, inflow, strict=True)
        }
        assert judged == member_catch_up(g, plan, lags, found)
        state.materialize()
        state.placed.clear()  # every topic from held
        assert _to_assignment(g, state) == plan


@pytest.mark.parametrize("fast", ["a", "b", "c"])
def test_a_topic_the_search_changes_is_taken_from_held(fast):
    """One partition each: the construction places the topic (_State.placed) hottest first to
    members alike at the start, whatever their speeds; the search then hands the hot partition
    to the fast member, and the assignment must show that, not the construction."""
    speeds = {m: 10.0 if m == fast else 1.0 for m in "abc"}
    g = rated_group([(1000, 0.0), (10, 0.0), (10, 0.0)], dict(speeds))
    weights = {p.tp: float(p.lag or 0) for p in g.partitions()}
    state = _balanced_state(g, weights, None, 0.05, DEFAULT_SEARCH_BUDGET, speeds)
    assert _to_assignment(g, state)[fast] == (TopicPartition("t", 0),)


def test_speeds_too_small_for_a_double_count_as_none():
    """tests/test_cooperative.py's hypothesis drew capacities of about 1e-309 msg/s: 1 ÷ them
    overflows a double, every load came out infinite and the bound divided by zero. Such
    members read nothing (_scale), and the plan is made."""
    t = Topic("t0", (Partition("t0", 0, lag=5, rate_in=1e-309),))
    g = Group.of(
        [t],
        [
            Member("consumer-0", frozenset({"t0"}), capacity=9.8892171489209e-310),
            Member("consumer-1", frozenset({"t0"}), capacity=1.97784342978418e-309),
        ],
    )
    assert _scale(g, {m.id: m.capacity for m in g.members}) is None
    plan = BalancedAssignor().assign(g)
    check_valid(g, plan, cooperative=False)
    assert sorted(len(tps) for tps in plan.partitions.values()) == [0, 1]


def test_lag_alone_may_plan_a_member_into_falling_behind():
    # b (10 msg/s) by lag alone gets the lagging partition that also takes 12 msg/s
    g = rated_group([(9000, 12.0), (1000, 1.0), (1000, 1.0)], {"a": 100.0, "b": 10.0})
    lags = group_lags(g)
    ours = evaluate(g, BalancedAssignor().assign(g), lags)
    lag_only = evaluate(g, BalancedAssignor(rate_aware=False).assign(g), lags)
    assert lag_only.falls_behind or lag_only.catch_up_seconds > ours.catch_up_seconds
    assert ours.falls_behind == ()
    # a: 9,000 ÷ (100 − 12) ≈ 102 s beats any plan giving b the 9,000 at 10 msg/s
    assert named(BalancedAssignor().assign(g))["a"][0] == "t-0"


def test_when_no_plan_keeps_up_it_minimises_the_largest_utilisation():
    # 150 msg/s in, 120 msg/s of capacity: someone falls behind whatever the plan
    g = rated_group([(100, 60.0), (100, 50.0), (100, 40.0)], {"a": 80.0, "b": 40.0})
    lags = group_lags(g)
    plan = BalancedAssignor().assign(g)
    rates = rates_in(g)
    found = capacities(g, lags)
    assert found is not None
    used = {m: sum(rates[tp] for tp in tps) / found.by_member[m] for m, tps in plan.partitions.items()}
    best = utilisation_optimum(g, rates, found.by_member)
    assert best.value > 1 and max(used.values()) == pytest.approx(best.value)


def test_without_produce_rates_capacities_change_nothing():
    g = rated_group([(900, 0.0), (100, 0.0), (500, 0.0)], {"a": 10.0, "b": 1000.0})
    plain = rated_group([(900, 0.0), (100, 0.0), (500, 0.0)], {"a": None, "b": None})
    assert BalancedAssignor().assign(g) == BalancedAssignor().assign(plain)
    assert not plan_group(g, ["balanced"]).time_aware


@given(st.randoms(use_true_random=False), st.integers(0, 99))
@settings(max_examples=60, deadline=None)
def test_time_aware_plans_keep_the_count_guarantees(rng, seed):
    g = with_rates(random_group(rng, racks=False), seed)
    a = BalancedAssignor().assign(g)
    check_valid(g, a, cooperative=False)
    check_per_topic_counts(g, a)
    if len({m.topics for m in g.members}) == 1:
        counts = [len(tps) for tps in a.partitions.values()]
        assert max(counts) - min(counts) <= 1, counts


def test_sticky_keeps_a_plan_that_already_catches_up_soonest():
    g = rated_group(
        [(6000, 40), (6000, 10), (0, 30), (0, 10)], {"a": 100, "b": 50},
        owned={"a": [0, 2], "b": [1, 3]},
    )
    assert named(BalancedAssignor().assign(g)) == {"a": ["t-0", "t-2"], "b": ["t-1", "t-3"]}


def _owning(g: Group, plan) -> Group:
    """``g`` with each member owning what ``plan`` gives the next member (of what it
    subscribes): an owned plan that is not the one balanced would make."""
    ids = [m.id for m in g.members]
    after = {m: plan.partitions[ids[(i + 1) % len(ids)]] for i, m in enumerate(ids)}
    members = [
        replace(m, owned=tuple(tp for tp in after[m.id] if tp.topic in m.topics), generation=1)
        for m in g.members
    ]
    return Group.of(g.topics.values(), members, id=g.id)


@pytest.mark.parametrize("sample", list(catch_up_suite(1, max_partitions=60)),
                         ids=lambda s: f"{s.family}-{s.seed}")
def test_sticky_stays_only_within_tolerance_of_the_fresh_catch_up_time(sample):
    """bench/drain-unequal's finding: near capacity, loads (lag + T·rate_in) ÷ capacity within
    5% of the fresh plan's allowed a kept plan to catch up several times later. Staying is
    judged on the catch-up time: within 5% of the fresh plan's, or not at all. (Judged on
    loads, volumes #0 kept 77 s against 67 s fresh, offsets #0 40 s against 34 s.)"""
    g = _owning(sample.group, BalancedAssignor(sticky=False).assign(sample.group))
    lags = group_lags(g)
    found = capacities(g, lags)
    assert found is not None
    kept = max(member_catch_up(g, BalancedAssignor().assign(g), lags, found).values())
    fresh = max(
        member_catch_up(g, BalancedAssignor(sticky=False).assign(g), lags, found).values()
    )
    if fresh < math.inf:
        assert kept <= fresh * 1.05 + 1e-9, (kept, fresh)


# -- the yardstick ----------------------------------------------------------------------------


def test_optimum_on_the_docstring_example():
    lags = {tp: float(v) for tp, v in group_lags(EXAMPLE).items()}
    rates = rates_in(EXAMPLE)
    capacity = {"a": 100.0, "b": 50.0}
    assert utilisation_optimum(EXAMPLE, rates, capacity).value == pytest.approx(0.7)
    best = catch_up_optimum(EXAMPLE, lags, rates, capacity, upper=400.0)
    assert best.bound <= 200.0 <= best.value <= 200.0 * 1.002


def test_utilisation_optimum_stops_at_a_target():
    """With a target the solver stops at the first plan at or below it (bench/drain.py asks
    only whether every member can keep up); without a plan that good, it goes on to the
    optimum, whose value is above the target."""
    rates = rates_in(EXAMPLE)
    capacity = {"a": 100.0, "b": 50.0}
    reached = utilisation_optimum(EXAMPLE, rates, capacity, node_limit=100, target=1 - 1e-6)
    assert 0.7 - 1e-9 <= reached.value < 1
    missed = utilisation_optimum(EXAMPLE, rates, capacity, node_limit=100, target=0.5)
    assert missed.value == pytest.approx(0.7)


CERTIFIED = list(catch_up_suite(8, max_partitions=40))
#: branch-and-bound nodes each HiGHS call of the certification may take (as test_balanced.py)
NODES = 10_000


@pytest.mark.slow
@pytest.mark.parametrize("sample", CERTIFIED, ids=lambda s: f"{s.family}-{s.seed}")
def test_within_two_percent_of_the_catch_up_optimum(sample):
    """Issue 12's quality target, on 40 generated groups with produce rates and capacities up
    to sixfold apart: where some plan keeps every member below capacity, `balanced` does too
    and its slowest member catches up within 2% of the optimum's; where none does, its
    largest inflow ÷ capacity is within 2% of the least possible."""
    g = sample.group
    lags = group_lags(g)
    found = capacities(g, lags)
    assert found is not None
    plan = BalancedAssignor().assign(g)
    rates = rates_in(g)
    # node budgets, not the clock, end the solver's searches (one thread: deterministic), so
    # the verdict is the same however loaded the machine is
    least = utilisation_optimum(g, rates, found.by_member, time_limit=600, node_limit=NODES)
    slowest = max(member_catch_up(g, plan, lags, found).values())
    if least.value < 1:  # the solver found a plan that keeps every member ahead
        assert slowest < math.inf, f"falls behind although the optimum keeps up ({least})"
        exact = {tp: float(v) for tp, v in lags.items()}
        best = catch_up_optimum(
            g, exact, rates, found.by_member, upper=slowest, time_limit=600, node_limit=NODES
        )
        # value: a time some plan achieves; bound: one no plan beats (bisection within 0.2%,
        # unless the solver ran out of nodes on some step: then match its best within 0.5%)
        resolved = best.value <= best.bound * 1.002 + 1e-6
        assert slowest <= best.bound * 1.02 + 1e-6 or (
            not resolved and slowest <= best.value * 1.005
        ), (slowest, best)
    else:
        used = max(
            sum(rates[tp] for tp in tps) / found.by_member[m] for m, tps in plan.partitions.items()
        )
        assert least.certifies(used, 0.02) or (not least.proven and least.matched(used)), (
            used,
            least,
        )


#: (family, seed) of catch_up_suite(max_partitions=60) groups whose slowest member `balanced`
#: left 2-10% above the optimum while its catch-up rounds restarted every round, before
#: CATCH_UP_RESTARTS and _place_earliest (the first four: bench/quality.py's catch-up suite;
#: offsets #1019: of 77 groups from seed 1,000, 9.5% above); and two of the held-out groups
#: (seeds 60-419) its rounds left 7% and 14% above the best plan found before best-fit
#: restarts (BEST_FIT_RESTARTS; docs/strategies.md, *Best-fit restarts*)
ONCE_ABOVE = (
    ("hot-partitions", 29),
    ("hot-partitions", 47),
    ("mixed-subscriptions", 36),
    ("mixed-subscriptions", 52),
    ("offsets", 1019),
    ("hot-partitions", 61),
    ("single-topic", 329),
)


def suite_group(family: str, seed: int) -> Group:
    """Group ``seed`` of ``family`` in catch_up_suite(max_partitions=60)."""
    [sample] = [
        s for s in catch_up_suite(1, first_seed=seed, max_partitions=60) if s.family == family
    ]
    return sample.group


def sooner_than_balanced(g: Group, within: float, nodes: int) -> bool | None:
    """Whether HiGHS finds a plan, with `balanced`'s count guarantees, under which every
    member of ``g`` catches up within T = `balanced`'s slowest time ÷ ``within`` (one
    feasibility problem, L_m + T·I_m ≤ T·C_m and I_m < C_m); False: it proves there is none,
    so `balanced` is within that factor of the optimum."""
    lags = group_lags(g)
    found = capacities(g, lags)
    assert found is not None
    slowest = max(member_catch_up(g, BalancedAssignor().assign(g), lags, found).values())
    assert slowest < math.inf
    rates = rates_in(g)
    exact = {tp: float(v) for tp, v in lags.items()}
    return catch_up_feasible(
        g, exact, rates, found.by_member, slowest / within, time_limit=600, node_limit=nodes
    )


@pytest.mark.slow
@pytest.mark.parametrize("family,seed", ONCE_ABOVE)
def test_within_one_percent_where_the_rounds_once_stopped_short(family, seed):
    assert sooner_than_balanced(suite_group(family, seed), 1.01, NODES) is False


def weighed_at(g: Group, time: float) -> dict[TopicPartition, float]:
    """lag + ``time`` × rate_in per partition: the weights of a plan within ``time``"""
    lags = group_lags(g)
    return {p.tp: lags[p.tp] + time * (p.rate_in or 0.0) for p in g.partitions()}


def test_none_within_docstring_example():
    g = rated_group([(90, 0.5), (10, 0.5)], {"a": 2.0, "b": 1.0})
    scale = _scale(g, {"a": 2.0, "b": 1.0})
    assert _none_within(g, weighed_at(g, 50), scale, 1.0, 50)
    assert not _none_within(g, weighed_at(g, 60), scale, 1.0, 60)
    lags = group_lags(g)
    found = capacities(g, lags)
    assert found is not None
    plan = BalancedAssignor().assign(g)
    assert named(plan) == {"a": ["t-0"], "b": ["t-1"]}
    assert member_catch_up(g, plan, lags, found) == {"a": 60.0, "b": 20.0}


@pytest.mark.slow
@pytest.mark.parametrize("sample", CERTIFIED, ids=lambda s: f"{s.family}-{s.seed}")
def test_what_none_within_rules_out_highs_rules_out(sample):
    """The proof that ends the catch-up rounds is sound: at times just below `balanced`'s
    slowest member, and well below it, whatever the search's bound rules out HiGHS finds no
    plan for either (the same counts; members alike or not)."""
    g = sample.group
    lags = group_lags(g)
    found = capacities(g, lags)
    assert found is not None
    if found.shared:
        return  # catch_up_plan never asks: a member within its share counts as caught up
    slowest = max(member_catch_up(g, BalancedAssignor().assign(g), lags, found).values())
    if not 0 < slowest < math.inf:
        return  # no rounds: nothing to catch up on, or nobody keeps up
    alike = set(found.by_member.values())
    per = alike.pop() if len(alike) == 1 else 1.0
    scale = _scale(g, found.by_member)
    rates = rates_in(g)
    exact = {tp: float(v) for tp, v in lags.items()}
    for factor in (1 + CATCH_UP_PROVEN, 1.01, 1.1, 2.0):
        time = slowest / factor
        if _none_within(g, weighed_at(g, time), scale, per, time):
            feasible = catch_up_feasible(
                g, exact, rates, found.by_member, time, time_limit=600, node_limit=NODES
            )
            assert feasible is not True, (factor, time)


#: catch_up_suite(max_partitions=40) groups where the first plan is proven within
#: CATCH_UP_PROVEN of the soonest: three plans before the proof ended the rounds, one after
PROVEN_FIRST = (("volumes", 0), ("mixed-subscriptions", 0))


@pytest.mark.slow
@pytest.mark.parametrize("family,seed", PROVEN_FIRST)
def test_rounds_end_once_no_plan_is_proven_sooner(family, seed, monkeypatch):
    module = interpreted("balanced")  # its plans are the compiled module's, and it can be patched
    searched = []
    original = module._balanced_state

    def counted(*args, **kwargs):
        searched.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, "_balanced_state", counted)
    [g] = [
        s.group
        for s in catch_up_suite(1, first_seed=seed, max_partitions=40)
        if s.family == family
    ]
    plan = module.BalancedAssignor().assign(g)
    assert len(searched) == 1  # the first plan, and no round after it
    assert plan.partitions == BalancedAssignor().assign(g).partitions
    assert sooner_than_balanced(g, 1 + CATCH_UP_PROVEN, NODES) is False


#: (family, seed) of held-out catch_up_suite(max_partitions=60) groups whose inflow is
#: 98.9-99.96% of the group's capacity, where `balanced` stopped 4.3%, 24.9% and 6.4% above
#: the plan HiGHS found while its search stepped by MIN_GAIN of the load, a quarter of T there
#: (docs/strategies.md, *Near capacity*)
NEAR_CAPACITY = (("hot-partitions", 74), ("hot-partitions", 164), ("hot-partitions", 149))


@pytest.mark.slow
@pytest.mark.parametrize("family,seed", NEAR_CAPACITY)
def test_within_two_percent_near_capacity(family, seed):
    """Issue 12's 2%, on groups that take in within 1.1% of what they can read."""
    g = suite_group(family, seed)
    found = capacities(g, group_lags(g))
    assert found is not None
    inflow = sum(p.rate_in or 0.0 for p in g.partitions())
    assert inflow > 0.989 * sum(found.by_member.values())  # the groups are what they were
    assert sooner_than_balanced(g, 1.02, 2 * NODES) is False


#: bench/catch_up_contract.py's group #127 (24 partitions of four topics on 9 members of
#: 37.6-289.6 msg/s): before ruin-and-recreate restarts (RUIN_RESTARTS) the rounds stopped
#: 1.99% above the best plan HiGHS found
CONTRACT_127 = Path(__file__).parent / "data" / "contract-127.json"


@pytest.mark.slow
def test_within_one_percent_through_the_group_file_contract():
    """Through the contract acceptance uses (a group file with ``capacity`` on members and
    ``rate_in`` on partitions, ``assign --strategy balanced --format json``): nobody falls
    behind, and HiGHS proves that no plan has every member catch up within the slowest
    member's ``member_catch_up`` ÷ 1.01."""
    out = lagassign(
        "assign", "--strategy", "balanced", "--format", "json", "--input", str(CONTRACT_127)
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["falls_behind"] == []
    slowest = max(data["member_catch_up"].values())
    g = load_group(CONTRACT_127)
    lags = {p.tp: float(p.lag or 0) for p in g.partitions()}
    rates = rates_in(g)
    capacity = {m.id: m.capacity or 0.0 for m in g.members}
    sooner = catch_up_feasible(
        g, lags, rates, capacity, slowest / 1.01, time_limit=600, node_limit=NODES
    )
    assert sooner is False, (slowest, sooner)


# -- the command ------------------------------------------------------------------------------

EXAMPLE_FILE = {
    "group": "g",
    "topics": {
        "t": {
            "partitions": [
                {"partition": 0, "lag": 6000, "rate_in": 40},
                {"partition": 1, "lag": 6000, "rate_in": 10},
                {"partition": 2, "lag": 0, "rate_in": 30},
                {"partition": 3, "lag": 0, "rate_in": 10},
            ]
        }
    },
    "members": [
        {"id": "a", "topics": ["t"], "capacity": 100},
        {"id": "b", "topics": ["t"], "capacity": 50},
    ],
}


def test_assign_json_gives_catch_up_and_who_falls_behind(group_file):  # noqa: F811
    out = lagassign("assign", "--strategy", "balanced", "--format", "json",
                    "--input", group_file(EXAMPLE_FILE))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["assignment"] == {"a": [["t", 0], ["t", 2]], "b": [["t", 1], ["t", 3]]}
    assert data["member_catch_up"] == {"a": 200.0, "b": 200.0}
    assert data["falls_behind"] == []
    assert out.stderr == ""


def test_assign_json_null_is_never(group_file):  # noqa: F811
    out = lagassign("assign", "--strategy", "range", "--format", "json",
                    "--input", group_file({**EXAMPLE_FILE, "members": [
                        {"id": "a", "topics": ["t"], "capacity": 100},
                        {"id": "b", "topics": ["t"], "capacity": 39},
                    ]}))
    data = json.loads(out.stdout)
    # range: b gets t-2 and t-3, 40 msg/s in on 39
    assert data["member_catch_up"] == {"a": 12000 / 50, "b": None}
    assert data["falls_behind"] == ["b"]


def test_overloaded_group_warns_on_one_line_and_still_plans(group_file):  # noqa: F811
    overloaded = {**EXAMPLE_FILE, "members": [
        {"id": "a", "topics": ["t"], "capacity": 50},
        {"id": "b", "topics": ["t"], "capacity": 30},
    ]}
    out = lagassign("assign", "--strategy", "balanced", "--format", "json",
                    "--input", group_file(overloaded))
    assert out.returncode == 0
    data = json.loads(out.stdout)
    assert data["falls_behind"]
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("lagassign: warning: group g:") and "inflow ÷ capacity" in line


def test_assign_table_shows_catch_up_and_a_legend(group_file):  # noqa: F811
    out = lagassign("assign", "--strategy", "balanced", "--input", group_file(EXAMPLE_FILE))
    assert out.returncode == 0
    assert "catch-up" in out.stdout and "3 min" in out.stdout
    text = " ".join(out.stdout.split())
    assert "capacity given for 2" in text and "never (red)" in text


def test_plan_json_marks_the_time_aware_mode(group_file):  # noqa: F811
    out = lagassign("plan", "--format", "json", "--input", group_file(EXAMPLE_FILE))
    (group,) = json.loads(out.stdout)
    assert group["time_aware"] is True
    by_name = {p["strategy"]: p for p in group["plans"]}
    assert set(by_name) == set(names())
    assert by_name["balanced"]["catch_up_seconds"] == 200.0
    assert all(p["catch_up_seconds"] is None or p["catch_up_seconds"] >= 200.0
               for p in by_name.values())


@pytest.mark.parametrize(
    "capacity, message",
    [
        (-5, "members[1].capacity: capacity must be a non-negative number"),
        ("fast", "members[1].capacity: expected a number (messages per second)"),
        (True, "members[1].capacity: expected a number (messages per second)"),
        # strict JSON (issue 13): not JSON, or beyond a double, is no number at all
        ("NaN", "members[1].capacity: expected a number (messages per second), got NaN"),
        ("1e400", "members[1].capacity: expected a number (messages per second), got 1e400"),
        ("Infinity", "members[1].capacity: expected a number (messages per second), got Infinity"),
        ([1], "members[1].capacity: expected a number (messages per second), got [1]"),
    ],
)
def test_bad_capacity_names_the_member(group_file, capacity, message):  # noqa: F811
    text = json.dumps({**EXAMPLE_FILE, "members": [
        {"id": "a", "topics": ["t"]},
        {"id": "b", "topics": ["t"], "capacity": "PLACEHOLDER"},
    ]})
    shown = capacity if capacity in ("NaN", "1e400", "Infinity") else json.dumps(capacity)
    out = lagassign("assign", "--strategy", "balanced",
                    "--input", group_file(text.replace('"PLACEHOLDER"', str(shown))))
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    assert message in line, line


def test_every_strategy_reports_catch_up_beside_balanced():
    for name in names():
        a = create(name).assign(EXAMPLE)
        m = evaluate(EXAMPLE, a, group_lags(EXAMPLE))
        assert m.catch_up_seconds is not None and m.catch_up_seconds >= 200.0


@pytest.mark.parametrize("rate", ["NaN", "Infinity", "1e400", "-1"])
def test_bad_rates_name_the_partition(group_file, rate):  # noqa: F811
    text = json.dumps(EXAMPLE_FILE).replace('"rate_in": 10}', f'"rate_in": {rate}}}', 1)
    out = lagassign("assign", "--strategy", "balanced", "--input", group_file(text))
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    # strict JSON (issue 13): NaN, Infinity and 1e400 are no number at all
    reason = "rate must" if rate == "-1" else f"expected a number, got {rate}"
    assert f"topics.t.partitions[1].rate_in: {reason}" in line, line


@pytest.mark.parametrize("seed", range(8))
def test_weights_by_column_are_the_weights_by_partition(seed: int):
    """catch_up_plan hands its weights to the plans as a column in _MemberTotals' order and
    reads lags without building their dictionary: the same weight for every partition, and
    the same plan, whether partitions were given in number order or not, numbered 0, 1, 2, …
    or with gaps."""
    rng = random.Random(seed)
    g = with_rates(random_group(rng, max_partitions=30), seed=seed)
    shuffled = []
    for t in g.topics.values():
        parts = list(t.partitions)
        if rng.random() < 0.5:
            rng.shuffle(parts)
        if rng.random() < 0.5:
            parts = [replace(p, partition=3 * p.partition + 1) for p in parts]
        shuffled.append(Topic(t.name, tuple(parts)))
    members = [replace(m, owned=()) for m in g.members]  # renumbered: owned would be unknown
    g = Group.of(shuffled, members, id=g.id, auto_offset_reset=g.auto_offset_reset)
    totals = _MemberTotals(g)
    values = [rng.random() for _ in totals.partitions]
    by_tp = dict(zip((p.tp for p in totals.partitions), values, strict=True))
    column = _Column(totals, values)
    for name, topic in g.topics.items():
        assert column.of(name, topic.partitions) == [by_tp[p.tp] for p in topic.partitions]
    lags = GroupLags(g)
    assert lags.of(totals.partitions) == [group_lags(g)[p.tp] for p in totals.partitions]
    found = capacities(g, group_lags(g))
    assert found is not None
    assert catch_up_plan(g, lags, found) == catch_up_plan(g, group_lags(g), found)
