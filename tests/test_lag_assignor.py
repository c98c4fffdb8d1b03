"""The `lag` strategy reproduces the seed's Java LagBasedPartitionAssignor exactly."""

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagassign.java_ordering import java_order
from lagassign.lag_rules import group_lags
from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition
from lagassign.strategies import lag
from lagassign.strategies.lag import LagAssignor
from tests.builders import group, partitions_of
from tests.groupgen import random_group


def assign(g: Group) -> dict[str, list[str]]:
    return partitions_of(LagAssignor().assign(g))


def test_seed_000_readme_example():
    """shared/seeds/000: C0/C1 on t0 with lags 100,000 / 50,000 / 60,000."""
    g = group({"t0": [100_000, 50_000, 60_000]}, {"C0": ["t0"], "C1": ["t0"]})
    a = LagAssignor().assign(g)
    assert partitions_of(a) == {"C0": ["t0-0"], "C1": ["t0-2", "t0-1"]}


def test_java_original_unit_test():
    """grantneale/kafka-lag-based-assignor LagBasedPartitionAssignorTest (shared/seeds/README.md)."""
    g = group(
        {"topic1": [100_000, 100_000, 500, 1], "topic2": [900_000, 100_000]},
        {"consumer-1": ["topic1", "topic2"], "consumer-2": ["topic1"]},
    )
    assert assign(g) == {
        "consumer-1": ["topic1-0", "topic1-2", "topic2-0", "topic2-1"],
        "consumer-2": ["topic1-1", "topic1-3"],
    }


def test_issue_2_zero_lag_partitions_alternate():
    """Issue 2: 7 zero-lag partitions on consumer-1/consumer-2 -> [0,2,4,6] / [1,3,5]."""
    g = group({"t": 7}, {"consumer-1": ["t"], "consumer-2": ["t"]})
    assert assign(g) == {
        "consumer-1": ["t-0", "t-2", "t-4", "t-6"],
        "consumer-2": ["t-1", "t-3", "t-5"],
    }


def test_issue_2_skewed_topic_on_three_consumers():
    """Issue 2: topic1 lags p0..p9 on consumer-1..3 -> [8,2,7] / [9,1,3] / [4,0,5,6]."""
    lags = [360, 359, 230, 118, 444, 122, 65, 111, 455_000, 424_000]
    g = group({"topic1": lags}, {f"consumer-{i}": ["topic1"] for i in (1, 2, 3)})
    a = assign(g)
    assert {m: [int(p.split("-")[1]) for p in ps] for m, ps in a.items()} == {
        "consumer-1": [8, 2, 7],
        "consumer-2": [9, 1, 3],
        "consumer-3": [4, 0, 5, 6],
    }


def test_each_topic_starts_from_zero():
    # Per-topic counters: consumer-1's lag on t0 does not stop it winning t1's hottest partition.
    g = group({"t0": [1000, 1], "t1": [500, 1]}, {"a": ["t0", "t1"], "b": ["t0", "t1"]})
    assert assign(g) == {"a": ["t0-0", "t1-0"], "b": ["t0-1", "t1-1"]}


def test_member_ids_compare_as_java_strings():
    # "B" < "a" in String.compareTo (upper case first), as in Python's str order for ASCII.
    g = group({"t": [5]}, {"a": ["t"], "B": ["t"]})
    assert assign(g) == {"a": [], "B": ["t-0"]}


def test_lag_from_offsets_and_reset_policy():
    # No commit under "earliest" counts the whole log (begin..end), so p1 is the hottest.
    t = Topic(
        "t",
        (
            Partition("t", 0, offsets=Offsets(0, 100, 90)),
            Partition("t", 1, offsets=Offsets(100, 600, None)),
        ),
    )
    members = [Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))]
    earliest = Group.of([t], members, auto_offset_reset="earliest")
    latest = Group.of([t], members, auto_offset_reset="latest")
    assert assign(earliest) == {"a": ["t-1"], "b": ["t-0"]}
    assert assign(latest) == {"a": ["t-0"], "b": ["t-1"]}


def test_members_without_subscribers_get_nothing_and_are_listed():
    g = group({"t0": [1, 2], "t1": [3]}, {"a": ["t0"], "b": ["t1"], "c": ["t1"]})
    assert assign(g) == {"a": ["t0-1", "t0-0"], "b": ["t1-0"], "c": []}


def one_partition_at_a_time(g: Group) -> dict[str, list[TopicPartition]]:
    """The seed's rule written as the Java original runs it: for each partition, hottest first,
    scan every subscriber for the fewest partitions, then least lag, then smallest id."""
    lags = group_lags(g)
    assigned: dict[str, list[TopicPartition]] = {m.id: [] for m in g.members}
    for name in sorted(g.topics, key=java_order):
        counts = {m.id: 0 for m in g.members if name in m.topics}
        load = dict.fromkeys(counts, 0)
        tps = sorted((p.tp for p in g.topics[name].partitions), key=lambda tp: (-lags[tp], tp))
        for tp in tps if counts else ():
            winner = min(counts, key=lambda m: (counts[m], load[m], java_order(m)))
            assigned[winner].append(tp)
            counts[winner] += 1
            load[winner] += lags[tp]
    return assigned


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_rounds_give_what_one_partition_at_a_time_gives(seed: int):
    # The strategy hands out partitions a round at a time (see its comments); on random
    # groups with many equal lags, that is exactly the per-partition rule.
    g = random_group(random.Random(seed), max_partitions=30, max_members=9)
    got = LagAssignor().assign(g)
    assert {m: list(tps) for m, tps in got.partitions.items()} == one_partition_at_a_time(g)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_on_arrays_the_same_as_one_partition_at_a_time(seed: int):
    # From ARRAYS_FROM partitions on, topics are ordered and the assignment listed on arrays:
    # the same assignment, each member's partitions in the same order. With lags from offsets,
    # several rounds, one round, short last rounds, and lags beyond 64 bits (ordered in Python).
    rng = random.Random(seed)
    g = random_group(rng, max_topics=6, max_partitions=30, max_members=9)
    if rng.random() < 0.3:
        name = rng.choice(sorted(g.topics))
        huge = tuple(
            replace(p, lag=rng.choice((0, 2**63 - 1, 2**70)), offsets=None)
            for p in g.topics[name].partitions
        )
        g = replace(g, topics={**g.topics, name: replace(g.topics[name], partitions=huge)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lag, "ARRAYS_FROM", 0)
        got = LagAssignor().assign(g)
    assert {m: list(tps) for m, tps in got.partitions.items()} == one_partition_at_a_time(g)
    assert list(got.partitions) == [m.id for m in g.members]
