"""Metrics: member load, lower bound, imbalance, count spread, moves."""

import dataclasses
import random

import numpy as np
import pytest

from lagassign import metrics
from lagassign.lag_rules import group_lags
from lagassign.metrics import evaluate, lower_bound, pigeonhole_bound
from lagassign.model import Assignment, Group, Member, TopicPartition
from lagassign.strategies import create
from tests.builders import lag_topic, tps


def test_seed_000_range_vs_lag_metrics():
    """shared/seeds/000: lag gives C0 100,000 and C1 110,000; range gives C0 [t0p0, t0p1].

    The seed prints range's totals as 160,000 / 50,000, which do not add up with its own lags
    (p1 = 50,000, p2 = 60,000): range's C0 holds 150,000 and C1 60,000.
    """
    t0 = lag_topic("t0", [100_000, 50_000, 60_000])
    g = Group.of([t0], [Member("C0", frozenset({"t0"})), Member("C1", frozenset({"t0"}))])
    lags = group_lags(g)
    range_like = evaluate(
        g, Assignment({"C0": tuple(tps("t0-0", "t0-1")), "C1": tuple(tps("t0-2"))}), lags
    )
    lag_like = evaluate(
        g, Assignment({"C0": tuple(tps("t0-0")), "C1": tuple(tps("t0-2", "t0-1"))}), lags
    )
    assert [m.lag for m in range_like.members] == [150_000, 60_000]
    assert lag_like.max_member_lag == 110_000
    assert lag_like.lower_bound == 105_000
    assert range_like.imbalance == pytest.approx(150_000 / 105_000)
    assert lag_like.count_spread == 1 and range_like.total_lag == 210_000


def test_lower_bound_is_the_largest_partition_when_it_dominates():
    lags = {TopicPartition("t", 0): 90, TopicPartition("t", 1): 10}
    assert lower_bound(lags, 4) == 90
    assert lower_bound(lags, 0) == 0.0


def test_moves_count_partitions_leaving_their_owner_or_withheld():
    t = lag_topic("t", [1, 1, 1])
    g = Group.of(
        [t],
        [
            Member("a", frozenset({"t"}), owned=tuple(tps("t-0", "t-1"))),
            Member("b", frozenset({"t"}), owned=tuple(tps("t-2"))),
        ],
    )
    lags = group_lags(g)
    kept = evaluate(g, Assignment({"a": tuple(tps("t-0", "t-1")), "b": tuple(tps("t-2"))}), lags)
    moved = evaluate(g, Assignment({"a": tuple(tps("t-0")), "b": tuple(tps("t-2", "t-1"))}), lags)
    withheld = evaluate(g, Assignment({"a": tuple(tps("t-0")), "b": tuple(tps("t-2"))}), lags)
    assert (kept.moves, moved.moves, withheld.moves) == (0, 1, 1)
    assert withheld.unassigned == 1


def test_zero_lag_group_is_perfectly_balanced():
    g = Group.of([lag_topic("t", [0, 0])], [Member("a", frozenset({"t"}))])
    m = evaluate(g, Assignment({"a": tuple(tps("t-0", "t-1"))}), group_lags(g))
    assert m.imbalance == 1.0


def test_lower_bound_counts_what_only_some_members_may_read():
    """The metrics docstring's example: consumer-1 alone reads t0, so it carries at least t0's
    lag however the others share t1 (the sample fleet's group mixed-subscriptions-035 is like
    this, and against the mean it looked 3.8× worse than any assignment can be)."""
    lags = {TopicPartition("t0", 0): 100_000, TopicPartition("t0", 1): 66_000}
    lags |= {TopicPartition("t1", p): 1_500 for p in range(4)}
    readers = {"t0": ["consumer-1"], "t1": ["consumer-1", "c2", "c3", "c4"]}
    assert lower_bound(lags, 4) == 100_000  # the largest partition
    assert lower_bound(lags, 4, readers) == 166_000

    # a and b share t0 and t1 between them, c reads only t2: (160,000 + 6,000) ÷ 2
    lags = {TopicPartition("t0", p): 40_000 for p in range(4)}
    lags |= {TopicPartition("t1", p): 1_500 for p in range(4)} | {TopicPartition("t2", 0): 10}
    readers = {"t0": ["a", "b"], "t1": ["a", "b"], "t2": ["c"]}
    assert lower_bound(lags, 3) == pytest.approx(166_010 / 3)
    assert lower_bound(lags, 3, readers) == 83_000


def test_evaluate_uses_the_subscriptions():
    g = Group.of(
        [lag_topic("t0", [100_000, 66_000]), lag_topic("t1", [1_500] * 4)],
        [Member("consumer-1", frozenset({"t0", "t1"}))]
        + [Member(f"c{i}", frozenset({"t1"})) for i in (2, 3, 4)],
    )
    best = create("balanced").assign(g)
    metrics = evaluate(g, best, group_lags(g))
    # consumer-1 must also take one of t1's four partitions (one each): 167,500 is the best
    assert metrics.lower_bound == 166_000 and metrics.max_member_lag == 167_500


@pytest.mark.parametrize("seed", range(6))
def test_pigeonhole_bound_sorts_long_lags_with_numpy_to_the_same_bound(seed: int, monkeypatch):
    """Long lists of lags are sorted by NumPy: the same bound to the last bit as Python's sort,
    for lags (ints, with ties) and for weights that mix ints and floats (left to Python); and
    the same for either given on an array (as balanced gives a million lags)."""
    rng = random.Random(seed)
    lags = [int(rng.paretovariate(1.2) * 100) for _ in range(rng.randint(1, 3000))]
    mixed = [w + 0.25 if rng.random() < 0.5 else w for w in lags]
    members, floor = rng.randint(1, 40), rng.randint(0, 5)
    bounds = []
    for numpy_from in (0, 10**9):
        monkeypatch.setattr(metrics, "NUMPY_SORT_FROM", numpy_from)
        bounds.append([pigeonhole_bound(w, members, floor) for w in (lags, mixed)])
        for values in map(np.array, (lags, mixed)):  # ints; floats
            listed = values.tolist()
            assert pigeonhole_bound(values, members, floor) == pigeonhole_bound(
                listed, members, floor
            )
    assert bounds[0] == bounds[1]
    assert bounds[0][0] >= max(lags)


def test_a_groups_facts_found_once_evaluate_every_plan_alike():
    """plan_group finds what every plan's metrics read of the group once (group_facts): each
    plan's metrics equal those evaluated on their own, rates and current owners included, and
    each settled plan equals settle run from scratch."""
    from lagassign.metrics import group_facts
    from lagassign.plan import plan_group, settle
    from lagassign.samples import FAMILIES, generate

    checked = rated = settled = 0
    for i in range(12):
        g = generate(FAMILIES[i % len(FAMILIES)], i, 24)
        owners = create("range").assign(g).partitions
        members = tuple(
            dataclasses.replace(m, owned=owners[m.id][: 3 + i % 4]) for m in g.members
        )
        g = dataclasses.replace(g, members=members)
        if i % 2:
            g = dataclasses.replace(g, topics={
                name: dataclasses.replace(t, partitions=tuple(
                    dataclasses.replace(p, rate_in=float(p.partition % 5), rate_out=7.0)
                    for p in t.partitions
                ))
                for name, t in g.topics.items()
            })
        gp = plan_group(g)
        facts = group_facts(g, gp.lags)
        for plan in gp.plans:
            alone = evaluate(g, plan.assignment, gp.lags)
            assert plan.metrics == alone == evaluate(g, plan.assignment, gp.lags, facts)
            checked += 1
            rated += alone.member_catch_up is not None
        for name, plan in gp.settled.items():
            assert plan.assignment == settle(create(name), g).assignment
            settled += 1
    assert checked == 84 and rated and settled
