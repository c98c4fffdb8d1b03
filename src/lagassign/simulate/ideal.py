"""The ideal drain time: a fluid lower bound no strategy beats, the yardstick of every run."""

from __future__ import annotations

import math

from lagassign.lag_rules import group_lags
from lagassign.simulate.scenario import Join, Scenario


def ideal_drain_time(
    scenario: Scenario, *, paused: bool = False, joiner_idle: float = 0.0
) -> float | None:
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

    ``joiner_idle``: a joining member reads nothing for that many seconds after it joins.
    Under the cooperative protocol a member that joins while every partition of its topics is
    consumed (no rebalance under way) reads nothing for two rounds, ``2 × rebalance_pause``,
    whatever the strategy: the first round withholds from it every partition it is given,
    since another member still consumes it, and only the follow-up round hands them over. With
    that, the bound no cooperative strategy beats on such a scenario (bench/drain.py's, where
    the one join comes long after the initial assignment).

    Example (tests/test_simulate.py): 1,200 behind, 5 produced and 15 read per second, a member
    reading 10 more joins at 30 s, 900 behind then: drained at 75 s (900 ÷ 20 a second of
    spare); with the joiner idle for 20 s, at 85 s (it reads 200 less, 10 s of that spare).
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

    # when each member reads: from the start or its join (+ joiner_idle) until it leaves
    since: dict[str, float] = {m.id: 0.0 for m in scenario.group.members if m.topics}
    reading: list[tuple[float, float, str]] = []
    events: list[float] = []
    for _, event in scenario.ordered_events():
        events.append(event.time)
        if isinstance(event, Join):
            if event.member.topics and event.member.id not in since:
                since[event.member.id] = event.time + joiner_idle
        else:
            begun = since.pop(event.member_id, None)
            if begun is not None and begun < event.time:
                reading.append((begun, event.time, event.member_id))
    reading += [(begun, math.inf, mid) for mid, begun in since.items()]
    pauses = [(at, at + scenario.rebalance_pause) for at in events] if paused else []
    # from each of these times on: who reads, and whether the group is paused
    # (0 among them: a step of no length, or the pause of an event then)
    points = sorted(
        {a for a, _, _ in reading}
        | {b for _, b, _ in reading if b < math.inf}
        | set(events)
        | {end for _, end in pauses}
    )

    def readers(at: float) -> list[str]:
        return [mid for begun, until, mid in reading if begun <= at < until]

    steps = [(at, readers(at), any(a <= at < b for a, b in pauses)) for at in points]
    members_now = readers(0.0)
    idle = False
    t, left = 0.0, backlog
    group_bound: float | None = None
    for until, after, idle_after in [*steps, (math.inf, [], False)]:
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
