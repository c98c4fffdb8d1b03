"""Generated consumer groups: the benchmark suites, the simulator's and the pipeline's samples.

Deterministic for a given seed. The families are the situations a lag-aware assignor must get
right: one topic with a skewed backlog, topics of very different volume, one hot partition per
topic (where per-topic assignors pile the hot partitions on one member), offsets under either
``auto.offset.reset`` with some partitions never committed, and mixed subscriptions.

:func:`catch_up_suite` gives the same groups with what decides catch-up time besides lag:
produce rates (heavy-tailed, a few hot-inflow partitions) and members of unequal capacity,
most groups at 60–95% of their capacity and one in five overloaded.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace

from lagassign.lag_rules import group_lags
from lagassign.model import Group, Member, Offsets, Partition, Topic

FAMILIES = ("single-topic", "volumes", "hot-partitions", "offsets", "mixed-subscriptions")


@dataclass(frozen=True, slots=True)
class Sample:
    family: str
    seed: int
    group: Group


def _skewed(rng: random.Random, scale: float) -> int:
    # Heavy-tailed like real backlogs: most partitions near zero, a few very large.
    return int(rng.paretovariate(1.2) * scale) if rng.random() < 0.7 else rng.randint(0, int(scale))


def _members(rng: random.Random, n: int, prefix: str = "consumer") -> list[str]:
    return [f"{prefix}-{i}-{rng.getrandbits(24):06x}" for i in range(n)]


def _lag_topic(name: str, lags: list[int]) -> Topic:
    return Topic(name, tuple(Partition(name, i, lag=lag) for i, lag in enumerate(lags)))


def single_topic(rng: random.Random, max_partitions: int) -> Group:
    partitions = rng.randint(2, max_partitions)
    members = rng.randint(2, max(2, min(24, partitions)))
    topic = _lag_topic("events", [_skewed(rng, 1000) for _ in range(partitions)])
    ids = _members(rng, members)
    return Group.of([topic], [Member(m, frozenset({"events"})) for m in ids], id="single")


def volumes(rng: random.Random, max_partitions: int) -> Group:
    topics = []
    budget = max_partitions
    for t in range(rng.randint(2, 8)):
        n = rng.randint(1, max(1, min(40, budget - (7 - t))))
        budget -= n
        scale = 10 ** rng.randint(0, 6)
        topics.append(_lag_topic(f"topic-{t}", [_skewed(rng, scale) for _ in range(n)]))
        if budget <= 1:
            break
    names = frozenset(t.name for t in topics)
    ids = _members(rng, rng.randint(2, 12))
    return Group.of(topics, [Member(m, names) for m in ids], id="volumes")


def hot_partitions(rng: random.Random, max_partitions: int) -> Group:
    members = rng.randint(2, 10)
    count = rng.randint(2, max(2, min(12, max_partitions // members)))
    topics = []
    for t in range(count):
        n = rng.randint(max(1, members - 1), max(members, min(24, max_partitions // count)))
        lags = [rng.randint(0, 50) for _ in range(n)]
        lags[rng.randrange(n)] = rng.randint(50_000, 100_000)
        topics.append(_lag_topic(f"orders-{t}", lags))
    names = frozenset(t.name for t in topics)
    return Group.of(topics, [Member(m, names) for m in _members(rng, members)], id="hot")


def with_offsets(rng: random.Random, max_partitions: int) -> Group:
    reset = rng.choice(("latest", "earliest"))
    topics = []
    for t in range(rng.randint(1, 5)):
        parts = []
        for p in range(rng.randint(1, max(1, max_partitions // 5))):
            begin = rng.randint(0, 10_000)
            end = begin + _skewed(rng, 5000)
            committed = None if rng.random() < 0.25 else rng.randint(max(begin - 100, 0), end)
            parts.append(Partition(f"log-{t}", p, offsets=Offsets(begin, end, committed)))
        topics.append(Topic(f"log-{t}", tuple(parts)))
    names = frozenset(t.name for t in topics)
    members = [Member(m, names) for m in _members(rng, rng.randint(2, 10))]
    return Group.of(topics, members, id="offsets", auto_offset_reset=reset)


def mixed_subscriptions(rng: random.Random, max_partitions: int) -> Group:
    count = rng.randint(2, 6)
    topics = [
        _lag_topic(
            f"t{t}",
            [
                _skewed(rng, 10 ** rng.randint(1, 4))
                for _ in range(rng.randint(1, max(1, max_partitions // count)))
            ],
        )
        for t in range(count)
    ]
    names = [t.name for t in topics]
    members = [
        Member(m, frozenset(rng.sample(names, rng.randint(1, len(names)))))
        for m in _members(rng, rng.randint(2, 10))
    ]
    return Group.of(topics, members, id="mixed")


_BUILDERS = {
    "single-topic": single_topic,
    "volumes": volumes,
    "hot-partitions": hot_partitions,
    "offsets": with_offsets,
    "mixed-subscriptions": mixed_subscriptions,
}


def generate(family: str, seed: int, max_partitions: int = 200) -> Group:
    """One group of ``family``; the same ``(family, seed)`` always gives the same group."""
    rng = random.Random(f"{family}:{seed}")
    return _BUILDERS[family](rng, max_partitions)


def suite(per_family: int, *, first_seed: int = 0, max_partitions: int = 200) -> Iterator[Sample]:
    """``per_family`` groups of every family, family after family."""
    for family in FAMILIES:
        for seed in range(first_seed, first_seed + per_family):
            yield Sample(family, seed, generate(family, seed, max_partitions))


#: one group in this many of :func:`catch_up_suite` takes in more than its members can read
OVERLOADED_EVERY = 5


def with_rates(group: Group, seed: int) -> Group:
    """``group`` with produce rates on its partitions and capacities on its members.

    Capacities differ up to sixfold between members. Produce rates are heavy-tailed, with one
    partition in twenty taking ten times more, and none more than half what the fastest member
    reads; before that cap they add up to 60–95% of what the members can read together, or
    100–130% in every :data:`OVERLOADED_EVERY`-th group. The members'
    capacities are scaled so that the group would drain its backlog in one to thirty minutes
    if its members were alike.
    """
    rng = random.Random(f"rates:{group.id}:{seed}")
    overloaded = seed % OVERLOADED_EVERY == OVERLOADED_EVERY - 1
    load = rng.uniform(1.0, 1.3) if overloaded else rng.uniform(0.6, 0.95)
    speed = [rng.choice((0.5, 1.0, 1.0, 1.5, 2.0, 3.0)) for _ in group.members]
    backlog = sum(group_lags(group).values())
    drain = rng.uniform(60, 1800)
    # total capacity K: the spare (1 − load)·K drains the backlog in `drain` seconds
    total = max(backlog / (max(1 - load, 0.05) * drain), 1.0)
    weights = [
        (rng.paretovariate(1.5) * (10 if rng.random() < 0.05 else 1)) for _ in group.partitions()
    ]
    produce = load * total / sum(weights) if weights else 0.0
    # no partition beyond half the fastest member: one nobody can read alone makes every plan
    # fall behind, which says nothing of a strategy
    hottest = 0.5 * total * max(speed, default=0.0) / sum(speed) if speed else 0.0
    rate_of = {
        p.tp: round(min(w * produce, hottest), 3)
        for p, w in zip(group.partitions(), weights, strict=True)
    }
    topics = [
        Topic(
            name,
            tuple(replace(p, rate_in=rate_of[p.tp]) for p in topic.partitions),
        )
        for name, topic in group.topics.items()
    ]
    members = [
        replace(m, capacity=round(total * v / sum(speed), 3))
        for m, v in zip(group.members, speed, strict=True)
    ]
    return Group.of(topics, members, id=group.id, auto_offset_reset=group.auto_offset_reset)


def catch_up_suite(
    per_family: int, *, first_seed: int = 0, max_partitions: int = 200
) -> Iterator[Sample]:
    """:func:`suite` with produce rates and member capacities (:func:`with_rates`)."""
    for sample in suite(per_family, first_seed=first_seed, max_partitions=max_partitions):
        yield Sample(sample.family, sample.seed, with_rates(sample.group, sample.seed))
