"""Random consumer groups for property and differential tests.

One generator serves both: hypothesis drives it through ``st.randoms()``, the differential
tests through a seeded ``random.Random``, so a failing case is reproducible from its seed.
"""

from __future__ import annotations

import random

from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition

RACKS = ("a", "b", "c")


def random_group(
    rng: random.Random,
    *,
    max_topics: int = 5,
    max_partitions: int = 12,
    max_members: int = 7,
    identical_subscriptions: bool | None = None,
    racks: bool | None = None,
    static_members: bool | None = None,
    owned: bool | None = None,
    offsets: bool | None = None,
) -> Group:
    """A valid random group. Each ``None`` knob is decided at random for this group."""
    pick = lambda knob: rng.random() < 0.5 if knob is None else knob  # noqa: E731
    identical = pick(identical_subscriptions)
    with_racks, with_static, with_owned, with_offsets = (
        pick(racks),
        pick(static_members),
        pick(owned),
        pick(offsets),
    )
    reset = rng.choice(("latest", "earliest", "LATEST", "none"))

    topics = []
    for t in range(rng.randint(1, max_topics)):
        name = f"t{t}"
        parts = []
        for p in range(rng.randint(1, max_partitions)):
            replica_racks = (
                frozenset(rng.sample(RACKS, rng.randint(1, 2))) if with_racks else frozenset()
            )
            if with_offsets:
                begin = rng.randint(0, 1000)
                end = begin + rng.choice((0, rng.randint(0, 100), rng.randint(0, 1_000_000)))
                committed = rng.choice((None, rng.randint(0, end + 10)))
                parts.append(
                    Partition(name, p, offsets=Offsets(begin, end, committed), racks=replica_racks)
                )
            else:
                lag = rng.choice((0, rng.randint(0, 100), rng.randint(0, 10**6), 10**7))
                parts.append(Partition(name, p, lag=lag, racks=replica_racks))
        topics.append(Topic(name, tuple(parts)))

    names = [t.name for t in topics]
    n_members = rng.randint(1, max_members)
    ids = rng.sample(range(1000), n_members)
    instance_ids = rng.sample(range(1000), n_members)
    members = []
    for i in range(n_members):
        subscribed = (
            frozenset(names)
            if identical
            else frozenset(rng.sample(names, rng.randint(1, len(names))))
        )
        members.append(
            Member(
                id=f"consumer-{ids[i]}",
                topics=subscribed,
                instance_id=f"instance-{instance_ids[i]}"
                if with_static and rng.random() < 0.7
                else None,
                rack=rng.choice(RACKS) if with_racks and rng.random() < 0.8 else None,
            )
        )

    if with_owned:
        members = _with_owned(rng, topics, members)
    return Group.of(topics, members, id="g", auto_offset_reset=reset)


def _with_owned(rng: random.Random, topics: list[Topic], members: list[Member]) -> list[Member]:
    """Give members owned partitions as a previous generation might have left them: mostly
    disjoint, some partitions unowned, occasionally claimed twice or by an older generation."""
    owned: dict[str, list[TopicPartition]] = {m.id: [] for m in members}
    for topic in topics:
        for p in topic.partitions:
            roll = rng.random()
            if roll < 0.2:
                continue
            holders = [m for m in members if topic.name in m.topics] or members
            owned[rng.choice(holders).id].append(p.tp)
            if roll > 0.95:
                owned[rng.choice(members).id].append(p.tp)
    generation = rng.randint(1, 10)
    result = []
    for m in members:
        gen = generation if rng.random() < 0.85 else max(generation - rng.randint(1, 3), 0)
        result.append(
            Member(m.id, m.topics, m.instance_id, m.rack, tuple(dict.fromkeys(owned[m.id])), gen)
        )
    return result
