"""Metrics: member load, lower bound, imbalance, count spread, moves."""

import pytest

from lagassign.lag import group_lags
from lagassign.metrics import evaluate, lower_bound
from lagassign.model import Assignment, Group, Member, TopicPartition
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
