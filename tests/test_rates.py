"""Rates from offset samples, the drain horizon, catch-up time, and rate-aware `balanced`."""

from dataclasses import replace

import pytest

from lagassign.formats.snapshot_rows import build_group, group_rows
from lagassign.lag_rules import group_lags
from lagassign.model import (
    Assignment,
    Group,
    Member,
    ModelError,
    Offsets,
    Partition,
    Topic,
    TopicPartition,
)
from lagassign.rates import (
    DEFAULT_HORIZON,
    MAX_HORIZON,
    capacities,
    catch_up_seconds,
    drain_horizon,
    drain_seconds,
    drain_weights,
    measure_rates,
)
from lagassign.strategies.balanced import BalancedAssignor
from tests.builders import partitions_of


def sampled(ends: list[int], committed: list[int | None]) -> Group:
    t = Topic(
        "t",
        tuple(
            Partition("t", i, offsets=Offsets(0, e, c))
            for i, (e, c) in enumerate(zip(ends, committed, strict=True))
        ),
    )
    return Group.of([t], [Member("a", frozenset({"t"}))], auto_offset_reset="earliest")


def test_rates_from_two_samples():
    before = sampled([1000, 500], [900, None])
    after = sampled([3000, 500], [1400, 100])
    measured = measure_rates(before, after, seconds=10)
    p0, p1 = measured.topics["t"].partitions
    assert (p0.rate_in, p0.rate_out) == (200.0, 50.0)
    assert (p1.rate_in, p1.rate_out) == (0.0, None)  # no earlier commit: consume rate unknown
    assert p0.offsets == after.topics["t"].partitions[0].offsets


def test_samples_must_be_apart():
    with pytest.raises(ModelError, match="apart"):
        measure_rates(sampled([1], [0]), sampled([1], [0]), 0)


def owned_by_a(end: int, committed: int) -> Group:
    t = Topic("t", (Partition("t", 0, offsets=Offsets(0, end, committed)),))
    return Group.of([t], [Member("a", frozenset({"t"}), owned=(TopicPartition("t", 0),))])


@pytest.mark.parametrize(
    ("lag", "source", "catch_up"),
    [
        (170, "share", 0.0),  # 3 s of inflow in flight: keeping up
        (20_000, "measured", float("inf")),  # more than 560 it reads in 10 s: saturated
    ],
)
def test_over_a_known_window_only_a_backlog_beyond_what_it_reads_there_saturates(
    lag: int, source: str, catch_up: float
) -> None:
    """rates.saturated's worked example: a reads 56 a second over 10 s while 56 come in."""
    before, after = owned_by_a(1000 + lag, 1000), owned_by_a(1560 + lag, 1560)
    group = measure_rates(before, after, seconds=10)
    assert group.rate_window == 10
    lags = group_lags(group)
    capacity = capacities(group, lags)
    assert capacity is not None
    assert (capacity.by_member["a"], capacity.source["a"]) == (56.0, source)
    current = Assignment({"a": (TopicPartition("t", 0),)})
    assert catch_up_seconds(group, current, lags) == catch_up
    # the same rates given as such (a group file): any backlog saturates, as before
    as_given = replace(group, rate_window=None)
    assert capacities(as_given, lags).source["a"] == "measured"  # type: ignore[union-attr]
    assert catch_up_seconds(as_given, current, lags) == float("inf")


def test_the_rate_window_travels_in_the_pipeline_s_rows() -> None:
    """pipeline --rate-window: a live read's group becomes rows on the executors and a group
    again where it is planned; the window it was measured over comes with it."""
    group = measure_rates(owned_by_a(1170, 1000), owned_by_a(1730, 1560), seconds=10)
    columns = group_rows(group, "live")
    rows = zip(*columns.values(), strict=True)
    built = build_group([dict(zip(columns, row, strict=True)) for row in rows])
    assert built.rate_window == 10
    assert capacities(built, group_lags(built)).source["a"] == "share"  # type: ignore[union-attr]


def rated(lags: list[int], rate_in: list[float], rate_out: list[float | None]) -> Group:
    t = Topic(
        "t",
        tuple(
            Partition("t", i, lag=lag, rate_in=r, rate_out=o)
            for i, (lag, r, o) in enumerate(zip(lags, rate_in, rate_out, strict=True))
        ),
    )
    return Group.of([t], [Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))])


def test_horizon_is_the_predicted_drain_time():
    g = rated([600, 400], [1, 1], [6, 6])  # drains 1000 messages at 12 - 2 = 10 per second
    assert drain_horizon(g, group_lags(g)) == 100


def test_horizon_without_consume_rates_and_when_falling_behind():
    assert drain_horizon(rated([5, 5], [1, 0], [None, None]), {}) == DEFAULT_HORIZON
    behind = rated([5, 5], [10, 10], [3, 3])
    assert drain_horizon(behind, group_lags(behind)) == MAX_HORIZON


def test_drain_seconds_counts_only_the_spare_rate():
    assert drain_seconds(1000, consume_rate=40, produce_rate=10) == pytest.approx(1000 / 30)
    assert drain_seconds(0, consume_rate=40, produce_rate=10) == 0
    assert drain_seconds(1, consume_rate=40, produce_rate=40) == float("inf")


def test_catch_up_is_the_slowest_members_time_on_an_even_share():
    # the worked example of catch_up_seconds' docstring: a and b read 80 msg/s, 40 each
    g = rated([1000, 0], [10, 30], [40, 40])
    t0, t1 = (p.tp for p in g.partitions())
    split = Assignment.build(g.members, {"a": [t0], "b": [t1]})
    assert catch_up_seconds(g, split, group_lags(g)) == pytest.approx(1000 / 30)
    both = Assignment.build(g.members, {"a": [t0, t1]})  # 40 msg/s in on a 40 msg/s share
    assert catch_up_seconds(g, both, group_lags(g)) == float("inf")


def test_catch_up_without_consume_rates_or_members_is_unknown():
    g = rated([5, 5], [1, 1], [None, None])
    assert catch_up_seconds(g, Assignment.build(g.members, {}), group_lags(g)) is None
    t = g.topics["t"]
    alone = Group.of([t], [])
    assert catch_up_seconds(alone, Assignment.build((), {}), group_lags(alone)) is None


def test_catch_up_with_nothing_to_read_is_immediate():
    g = rated([0, 0], [50, 50], [10, 10])  # far behind on rates, but no backlog yet
    assigned = Assignment.build(g.members, {"a": [p.tp for p in g.partitions()]})
    assert catch_up_seconds(g, assigned, group_lags(g)) == 0


def test_weights_add_what_producers_write_over_the_horizon():
    g = rated([600, 400], [1, 1], [6, 6])
    assert drain_weights(g, group_lags(g)) == {
        TopicPartition("t", 0): 700.0,
        TopicPartition("t", 1): 500.0,
    }


def test_rate_aware_balanced_pairs_the_busy_partition_with_a_light_one():
    # By lag alone {600, 300} / {500, 400} is perfect; but p3 takes 2 msg/s, worth 600 more
    # messages over the default horizon, so it goes with the lightest partition it can.
    g = rated([600, 500, 400, 300], [0, 0, 0, 2], [None] * 4)
    by_lag = partitions_of(BalancedAssignor(rate_aware=False).assign(g))
    aware = partitions_of(BalancedAssignor().assign(g))
    assert sorted(map(sorted, by_lag.values())) == [["t-0", "t-3"], ["t-1", "t-2"]]
    assert sorted(map(sorted, aware.values())) == [["t-0", "t-1"], ["t-2", "t-3"]]
