"""Generated scenarios: a generated group under load, the built-in scenario with one member
joining and one leaving, and bench/drain.py's churn over a generated sample."""

from __future__ import annotations

import random

from lagassign.lag_rules import group_lags
from lagassign.model import Group, Member, Partition, Topic
from lagassign.samples import Sample, generate
from lagassign.simulate.ideal import ideal_drain_time
from lagassign.simulate.scenario import Join, Leave, Scenario

#: bench/drain.py's churn (:func:`churn_scenario`): producers at this fraction of capacity
CHURN_LOAD = 0.7
#: ... member throughput such that the group alone drains in this many seconds
CHURN_DRAIN_S = 300.0
#: ... rebalance rounds of this many seconds
CHURN_PAUSE_S = 10.0
#: ... steps of the ideal drain time ÷ this
CHURN_STEPS_PER_IDEAL = 500
#: ... a horizon of this many ideal drain times
CHURN_HORIZON_IDEALS = 4.0
#: member speeds drawn for unequal capacities (scaled so that they average 1), by how far
#: apart they may be (``spread``)
CHURN_SPEEDS = {6: (0.5, 1.0, 1.0, 1.5, 2.0, 3.0), 2: (1.0, 1.0, 1.25, 1.5, 2.0)}


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


def churn_scenario(sample: Sample, unequal: bool = False, spread: int = 6) -> Scenario | None:
    """bench/drain.py's scenario for a generated sample: its group under load
    (:data:`CHURN_LOAD` of capacity, member throughput such that the group alone would drain in
    :data:`CHURN_DRAIN_S`), a member joining (with the subscription of a random member) at a
    quarter of the ideal drain time and a random member leaving at half of it; None without
    backlog. ``unequal``: member throughputs up to ``spread``-fold apart
    (:data:`CHURN_SPEEDS`), the group's total as with equal ones, so the ideal drain time stays
    the same."""
    g = sample.group
    subscribed = {t for m in g.members for t in m.topics}
    backlog = sum(lag for tp, lag in group_lags(g).items() if tp.topic in subscribed)
    if not backlog:
        return None
    throughput = backlog / ((1 - CHURN_LOAD) * len(g.members) * CHURN_DRAIN_S)
    loaded = with_load(
        g, throughput=throughput, load=CHURN_LOAD, seed=f"{sample.family}:{sample.seed}"
    )
    still = Scenario(loaded, throughput=throughput, horizon=1e9, dt=1e3)
    ideal = ideal_drain_time(still)
    assert ideal is not None and ideal > 0
    rng = random.Random(f"drain:{sample.family}:{sample.seed}")
    like = rng.choice(g.members)
    leaving = rng.choice(g.members)
    member_throughput: dict[str, float] = {}
    if unequal:
        speeds = [rng.choice(CHURN_SPEEDS[spread]) for _ in [*g.members, "joiner"]]
        mean = sum(speeds[:-1]) / len(g.members)
        member_throughput = {
            m: throughput * v / mean
            for m, v in zip([*(m.id for m in g.members), "joiner"], speeds, strict=True)
        }
    return Scenario(
        loaded,
        throughput=throughput,
        member_throughput=member_throughput,
        events=(
            Join(0.25 * ideal, Member("joiner", like.topics)),
            Leave(0.5 * ideal, leaving.id),
        ),
        dt=ideal / CHURN_STEPS_PER_IDEAL,
        horizon=CHURN_HORIZON_IDEALS * ideal,
        rebalance_pause=CHURN_PAUSE_S,
        name=f"{sample.family} #{sample.seed}",
    )
