"""The ideal drain time: a fluid lower bound no strategy beats, the yardstick of every run."""

from __future__ import annotations

import math

from lagassign.lag_rules import group_lags
from lagassign.simulate.scenario import Join, Scenario


def ideal_drain_time(scenario: Scenario, *, paused: bool = False) -> float | None:
    """No strategy drains sooner (None: it can never drain).

    The larger of two fluid bounds, both ignoring rebalance pauses:

    * the group's: total backlog ÷ (total throughput − total produce rate), with the
      throughput following the joins and leaves (the first time
      ``backlog + produced − capacity consumed`` reaches 0);
    * each partition's: one member reads a partition at a time, so it needs at least
      lag ÷ (the fastest subscriber's throughput − its produce rate).

    ``paused``: the group reads nothing for ``rebalance_pause`` seconds after every join and
    leave (an event within a pause restarts it), as under the eager protocol, where every
    member revokes everything while the group rebalances: the bound no eager strategy beats.
    Each pause costs about ``pause × throughput ÷ (throughput − produce rate)`` seconds: at
    producers writing 70% of what the group reads, a 10 s pause costs 33 s.
    """
    parts = scenario.partitions()
    lags = group_lags(scenario.group)
    rates = {p.tp: scenario.rate_of(p) for p in parts}
    backlog = float(sum(lags[p.tp] for p in parts))
    produce = sum(rates.values())

    bounds: list[float] = [0.0]
    fastest: dict[str, float] = {}
    for m in scenario.all_members():
        for topic in m.topics:
            fastest[topic] = max(fastest.get(topic, 0.0), scenario.throughput_of(m.id))
    for p in parts:
        spare = fastest.get(p.topic, 0.0) - rates[p.tp]
        lag = lags[p.tp]
        if spare < 0 or (lag > 0 and spare == 0):
            return None
        bounds.append(lag / spare if lag else 0.0)

    present = {m.id for m in scenario.group.members if m.topics}
    changes: list[tuple[float, set[str]]] = []
    for _, event in scenario.ordered_events():
        if isinstance(event, Join):
            if event.member.topics:
                present.add(event.member.id)
        else:
            present.discard(event.member_id)
        changes.append((event.time, set(present)))
    pauses = [(at, at + scenario.rebalance_pause) for at, _ in changes] if paused else []
    # from each of these times on: who reads, and whether the group is paused
    points = sorted({at for at, _ in changes} | {end for _, end in pauses})
    steps = []
    for at in points:
        members = next((m for when, m in reversed(changes) if when <= at), set())
        steps.append((at, members, any(a <= at < b for a, b in pauses)))
    members_now = {m.id for m in scenario.group.members if m.topics}
    idle = False
    t, left = 0.0, backlog
    group_bound: float | None = None
    for until, after, idle_after in [*steps, (math.inf, set(), False)]:
        net = (0.0 if idle else sum(map(scenario.throughput_of, members_now))) - produce
        if left <= 0:
            group_bound = t
            break
        if net > 0 and t + left / net <= until:
            group_bound = t + left / net
            break
        if until == math.inf:
            break
        left -= net * (until - t)
        t, members_now, idle = until, after, idle_after
    if group_bound is None:
        return None
    return max(*bounds, group_bound)
