"""Generated scenarios: a generated group under load, and the built-in scenario with one
member joining and one leaving."""

from __future__ import annotations

import random

from lagassign.lag_rules import group_lags
from lagassign.model import Group, Member, Partition, Topic
from lagassign.samples import generate
from lagassign.simulate.scenario import Join, Leave, Scenario


def with_load(
    group: Group,
    *,
    throughput: float,
    load: float,
    seed: str = "rates",
    spread: float = 0.5,
) -> Group:
    """``group`` with produce rates summing to ``load`` × the members' total throughput.

    Each subscribed partition gets a share drawn uniformly from 1 ± ``spread`` (deterministic
    for ``seed``); partitions of topics nobody subscribes produce nothing.
    """
    rng = random.Random(seed)
    subscribed = {t for m in group.members for t in m.topics}
    parts = [p for p in group.partitions() if p.topic in subscribed]
    weights = {p.tp: rng.uniform(1 - spread, 1 + spread) for p in parts}
    total_rate = load * throughput * len(group.members)
    scale = total_rate / sum(weights.values()) if weights else 0.0
    lags = group_lags(group)
    topics = [
        Topic(
            name,
            tuple(
                Partition(
                    p.topic,
                    p.partition,
                    lag=lags[p.tp],
                    racks=p.racks,
                    rate_in=weights[p.tp] * scale if p.tp in weights else 0.0,
                )
                for p in topic.partitions
            ),
        )
        for name, topic in group.topics.items()
    ]
    return Group.of(topics, group.members, id=group.id, auto_offset_reset=group.auto_offset_reset)


def default_scenario() -> Scenario:
    """The scenario ``lagassign simulate`` runs without a file.

    Generated group ``hot-partitions`` #2 (9 members, 8 topics of 133 partitions, one hot
    partition per topic, 634k messages behind), 1,000 msg/s per member, producers at 70% of
    the group's capacity; a tenth member joins at 60 s and the first member leaves at 150 s;
    rebalances take 10 s.
    """
    base = generate("hot-partitions", 2)
    throughput = 1000.0
    group = with_load(base, throughput=throughput, load=0.7, seed="default-scenario")
    topics = frozenset(group.topics)
    first = sorted(m.id for m in group.members)[0]
    return Scenario(
        group=group,
        throughput=throughput,
        events=(
            Join(60.0, Member("consumer-new", topics)),
            Leave(150.0, first),
        ),
        dt=1.0,
        horizon=1000.0,
        rebalance_pause=10.0,
        name="default: hot-partitions #2, producers at 70% of capacity",
    )
