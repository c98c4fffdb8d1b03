"""Invariants every strategy keeps, on random groups (hypothesis)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lagassign.model import Assignment, Group, Topic, TopicPartition
from lagassign.strategies import create, names
from tests.groupgen import random_group

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: strategies that balance counts per topic among the topic's subscribers
PER_TOPIC_BALANCED = {"range", "lag", "balanced"}
#: strategies that balance total counts when every member subscribes the same topics
IDENTICAL_BALANCED = {"roundrobin", "sticky", "cooperative-sticky", "fair", "balanced"}


def subscribed_partitions(g: Group) -> set[TopicPartition]:
    topics = {t for m in g.members for t in m.topics}
    return {p.tp for p in g.partitions() if p.tp.topic in topics}


def check_valid(g: Group, a: Assignment, cooperative: bool) -> None:
    assert list(a.partitions) == [m.id for m in g.members], "every member listed, in order"
    counts = Counter(tp for tps in a.partitions.values() for tp in tps)
    assert all(c == 1 for c in counts.values()), "no partition twice"
    for m in g.members:
        assert all(tp.topic in m.topics for tp in a[m.id]), f"{m.id} got an unsubscribed topic"
    missing = subscribed_partitions(g) - counts.keys()
    if cooperative:
        # only partitions handed from one owner to another may be withheld for a round
        claimed = {tp for m in g.members for tp in m.owned}
        assert missing <= claimed, "withheld a partition nobody owned"
    else:
        assert not missing, f"unassigned: {sorted(missing)[:5]}"


@given(st.randoms(use_true_random=False), st.sampled_from(names()))
@SETTINGS
def test_every_partition_once_only_to_subscribers(rng, name):
    g = random_group(rng)
    strategy = create(name)
    check_valid(g, strategy.assign(g), cooperative=strategy.withholds_moving)


@given(st.randoms(use_true_random=False), st.sampled_from(sorted(PER_TOPIC_BALANCED)))
@SETTINGS
def test_per_topic_count_balance(rng, name):
    g = random_group(rng, racks=False)
    check_per_topic_counts(g, create(name).assign(g))


def check_per_topic_counts(g: Group, a: Assignment) -> None:
    """Each topic's subscribers hold the floor or the ceiling of its partitions ÷ their number."""
    owner = a.owners()
    for topic in g.topics:
        subscribers = [m.id for m in g.subscribers(topic)]
        if not subscribers:
            continue
        per_member = Counter(owner[p.tp] for p in g.topics[topic].partitions)
        counts = [per_member.get(m, 0) for m in subscribers]
        assert max(counts) - min(counts) <= 1, (topic, counts)


@given(st.randoms(use_true_random=False), st.sampled_from(sorted(IDENTICAL_BALANCED)))
@SETTINGS
def test_identical_subscriptions_balance_total_counts(rng, name):
    g = random_group(rng, identical_subscriptions=True, owned=False)
    counts = [len(tps) for tps in create(name).assign(g).partitions.values()]
    assert max(counts) - min(counts) <= 1, counts


@given(st.randoms(use_true_random=False), st.sampled_from(names()))
@SETTINGS
def test_deterministic(rng, name):
    g = random_group(rng)
    assert create(name).assign(g) == create(name).assign(g)


@pytest.mark.parametrize("name", names())
def test_group_without_members(name):
    # A group whose members have all left still has topics (describe dumps show such groups).
    g = Group.of([Topic.of("t", 3)], [])
    assert create(name).assign(g).partitions == {}
