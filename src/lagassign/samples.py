"""Generated consumer groups: the benchmark suites, the simulator's and the pipeline's samples.

Deterministic for a given seed. The families are the situations a lag-aware assignor must get
right: one topic with a skewed backlog, topics of very different volume, one hot partition per
topic (where per-topic assignors pile the hot partitions on one member), offsets under either
``auto.offset.reset`` with some partitions never committed, and mixed subscriptions.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

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
