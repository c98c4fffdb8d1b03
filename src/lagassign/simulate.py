"""The drain simulator: a consumer group working off its backlog while producers keep producing.

Given a :class:`Scenario` (the group with each partition's initial lag and produce rate
``rate_in``, each member's throughput, members joining and leaving at given times) the
simulator steps time forward in steps of ``dt`` seconds, for each strategy, and reports how
long the group takes to drain, how high the lag gets and how many partitions move at
rebalances. Pure: no I/O, no printing; deterministic.

One step, from ``t`` to ``t + dt``:

1. events due at ``t`` (the first step boundary at or after their time) are applied, and
   rebalance rounds due at ``t`` complete;
2. producers add ``rate_in × dt`` to every partition, owned or not;
3. every member consumes up to ``throughput × dt`` from the partitions it owns, **max-min
   fair**: each partition with lag gets an equal share of the member's capacity, a partition
   needing less than its share is read to the end and what it leaves over is shared among the
   others again (water-filling). This is how a Kafka consumer's fetches behave roughly (every
   partition with data gets a slice of each fetch) and it is the same for every strategy;
4. the group is **drained** at ``t + dt`` the first time its total lag is at most
   ``drain_threshold`` (default 0.5: less than one whole message left).

Rebalances. Time 0 is the end of the initial rebalance: the strategy assigns the group as
given (owned partitions and generations included) and every member consumes from the start.
Every join or leave starts a rebalance; each round of it lasts ``rebalance_pause`` seconds and
at its end the strategy is called with the lags at that moment and every member's currently
owned partitions and generation (so sticky strategies can be sticky), and the assignment takes
effect. The protocol is the strategy's preferred one (``Strategy.protocols[0]``):

* **eager**: at the start of the rebalance every member revokes everything, so nothing is
  consumed for ``rebalance_pause``;
* **cooperative**: members keep consuming what they own during the round. At its end they
  give up the partitions the new assignment takes from them; ``cooperative-sticky`` withholds
  those from their new owners, so a follow-up round starts, and they are idle until it ends
  ``rebalance_pause`` later. Rounds repeat while a round revokes anything (at most
  ``MAX_ROUNDS``).

A member that leaves stops consuming at once; its partitions are idle until the rebalance
assigns them. An event during a rebalance restarts the current round.

Moves follow :func:`lagassign.metrics.moves`: a partition moves when a member owned it before
the rebalance and, still in the group afterwards, no longer owns it (the partitions of a member
that left are not counted: every strategy must move those).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from lagassign.formats.group_file import _Reader
from lagassign.lag_rules import group_lags
from lagassign.model import Group, Member, ModelError, Partition, Topic, TopicPartition
from lagassign.samples import generate
from lagassign.strategies import RebalanceProtocol, Strategy, create, names

DEFAULT_THROUGHPUT = 1000.0
DEFAULT_DT = 1.0
DEFAULT_HORIZON = 3600.0
DEFAULT_REBALANCE_PAUSE = 10.0
DEFAULT_DRAIN_THRESHOLD = 0.5
#: points kept of each time series (the simulation itself runs every step)
DEFAULT_SAMPLES = 500
#: rounds of one cooperative rebalance at most (cooperative-sticky needs two)
MAX_ROUNDS = 5
MAX_STEPS = 2_000_000
#: event and pause times within this many steps of a boundary count as on it (float noise)
_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Join:
    """A member joins at ``time`` seconds; it owns nothing yet."""

    time: float
    member: Member

    def describe(self) -> str:
        return f"{self.member.id} joins"


@dataclass(frozen=True, slots=True)
class Leave:
    """A member leaves at ``time`` seconds and stops consuming at once."""

    time: float
    member_id: str

    def describe(self) -> str:
        return f"{self.member_id} leaves"


Event = Join | Leave


def _check_number(where: str, value: float, *, positive: bool = False) -> None:
    if not math.isfinite(value):
        raise ModelError(where, f"must be a finite number, got {value}")
    if positive and value <= 0:
        raise ModelError(where, f"must be positive, got {value:g}")
    if value < 0:
        raise ModelError(where, f"must not be negative, got {value:g}")


@dataclass(frozen=True)
class Scenario:
    """What to simulate. Times in seconds, rates and throughputs in messages per second.

    ``throughput`` is every member's unless ``member_throughput`` names it (members of the
    group and members that join). A partition produces its ``rate_in`` (0 if unset) unless
    ``rates`` overrides it. Events apply in time order (equal times: in the order given).
    """

    group: Group
    throughput: float = DEFAULT_THROUGHPUT
    member_throughput: Mapping[str, float] = field(default_factory=dict)
    rates: Mapping[TopicPartition, float] = field(default_factory=dict)
    events: tuple[Event, ...] = ()
    dt: float = DEFAULT_DT
    horizon: float = DEFAULT_HORIZON
    rebalance_pause: float = DEFAULT_REBALANCE_PAUSE
    drain_threshold: float = DEFAULT_DRAIN_THRESHOLD
    name: str = "scenario"

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "member_throughput", MappingProxyType(dict(self.member_throughput))
        )
        object.__setattr__(self, "rates", MappingProxyType(dict(self.rates)))
        object.__setattr__(self, "events", tuple(self.events))
        _check_number("throughput", self.throughput)
        _check_number("dt", self.dt, positive=True)
        _check_number("horizon", self.horizon, positive=True)
        _check_number("rebalance_pause", self.rebalance_pause)
        _check_number("drain_threshold", self.drain_threshold)
        if self.horizon / self.dt > MAX_STEPS:
            raise ModelError(
                "horizon", f"horizon ÷ dt is {self.horizon / self.dt:.0f} steps, over {MAX_STEPS:,}"
            )
        for tp, rate in self.rates.items():
            try:
                self.group.partition(tp)
            except KeyError:
                raise ModelError(f"rates.{tp}", "unknown partition") from None
            _check_number(f"rates.{tp}", rate)
        self._check_events()
        known = {m.id for m in self.group.members} | {
            e.member.id for e in self.events if isinstance(e, Join)
        }
        for mid, value in self.member_throughput.items():
            if mid not in known:
                raise ModelError(
                    f"member_throughput.{mid}", "no such member in the group or joining"
                )
            _check_number(f"member_throughput.{mid}", value)

    def _check_events(self) -> None:
        present = {m.id for m in self.group.members}
        for i, event in self.ordered_events():
            where = f"events[{i}]"
            _check_number(f"{where}.time", event.time)
            if event.time > self.horizon:
                raise ModelError(f"{where}.time", f"{event.time:g} is after the horizon")
            if isinstance(event, Join):
                m = event.member
                if m.id in present:
                    raise ModelError(
                        f"{where}.join.id", f"{m.id!r} is in the group at {event.time:g} already"
                    )
                for t in sorted(m.topics):
                    if t not in self.group.topics:
                        raise ModelError(f"{where}.join.topics", f"unknown topic {t!r}")
                if m.owned:
                    raise ModelError(f"{where}.join.owned", "a joining member owns nothing")
                present.add(m.id)
            else:
                if event.member_id not in present:
                    raise ModelError(
                        f"{where}.leave",
                        f"no member {event.member_id!r} in the group at {event.time:g}",
                    )
                present.discard(event.member_id)

    def ordered_events(self) -> list[tuple[int, Event]]:
        """(index as given, event), by time; equal times keep the order given."""
        return sorted(enumerate(self.events), key=lambda ie: (ie[1].time, ie[0]))

    @property
    def steps(self) -> int:
        return max(1, math.ceil(self.horizon / self.dt - _EPSILON))

    def step_of(self, seconds: float) -> int:
        """The first step boundary at or after ``seconds``."""
        return max(0, math.ceil(seconds / self.dt - _EPSILON))

    def throughput_of(self, member_id: str) -> float:
        return self.member_throughput.get(member_id, self.throughput)

    def rate_of(self, partition: Partition) -> float:
        rate = self.rates.get(partition.tp)
        if rate is not None:
            return rate
        return partition.rate_in or 0.0

    def all_members(self) -> list[Member]:
        """Every member that is ever in the group: the group's, then joiners in time order."""
        seen = {m.id: m for m in self.group.members}
        for _, event in self.ordered_events():
            if isinstance(event, Join) and event.member.id not in seen:
                seen[event.member.id] = event.member
        return list(seen.values())

    def partitions(self) -> list[Partition]:
        """The partitions simulated: those of topics some member subscribes at some time."""
        subscribed = {t for m in self.all_members() for t in m.topics}
        return [p for p in self.group.partitions() if p.topic in subscribed]


@dataclass(frozen=True, slots=True)
class Rebalance:
    """One rebalance: from its first event to the end of its last round."""

    start: float
    end: float
    causes: tuple[str, ...]
    rounds: int
    #: partitions owned before by a member still in the group that no longer owns them
    moved: int
    #: partitions revoked at the end of a round and given to nobody until the next round
    withheld: int


@dataclass(frozen=True, slots=True)
class Series:
    """Sampled time series: ``times`` in seconds, lags in messages."""

    times: tuple[float, ...]
    total: tuple[float, ...]
    #: lag of partitions nobody owns (rebalancing, withheld, their member gone)
    unowned: tuple[float, ...]
    #: lag each member owns; None while it is not in the group
    members: Mapping[str, tuple[float | None, ...]]


@dataclass(frozen=True, slots=True)
class Run:
    """One strategy through the scenario."""

    strategy: str
    protocol: RebalanceProtocol
    #: first time the total lag is at most the drain threshold; None if not within the horizon
    drain_time: float | None
    peak_total_lag: float
    peak_member_lag: float
    peak_member: str | None
    rebalances: tuple[Rebalance, ...]
    series: Series
    initial_lag: float
    produced: float
    consumed: float
    final_lag: float

    @property
    def moves(self) -> int:
        return sum(r.moved for r in self.rebalances)


@dataclass(frozen=True, slots=True)
class Simulation:
    scenario: Scenario
    #: the fluid lower bound of the drain time (see :func:`ideal_drain_time`)
    ideal: float | None
    backlog: float
    produce_rate: float
    #: total throughput of the members at time 0
    capacity: float
    runs: tuple[Run, ...]

    def vs_ideal(self, run: Run) -> float | None:
        if run.drain_time is None or not self.ideal:
            return None
        return run.drain_time / self.ideal


# -- the ideal ------------------------------------------------------------------------------


def ideal_drain_time(scenario: Scenario) -> float | None:
    """No strategy drains sooner (None: it can never drain).

    The larger of two fluid bounds, both ignoring rebalance pauses:

    * the group's: total backlog ÷ (total throughput − total produce rate), with the
      throughput following the joins and leaves (the first time
      ``backlog + produced − capacity consumed`` reaches 0);
    * each partition's: one member reads a partition at a time, so it needs at least
      lag ÷ (the fastest subscriber's throughput − its produce rate).
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
    members_now = {m.id for m in scenario.group.members if m.topics}
    t, left = 0.0, backlog
    group_bound: float | None = None
    for until, after in [*changes, (math.inf, set())]:
        net = sum(scenario.throughput_of(mid) for mid in members_now) - produce
        if left <= 0:
            group_bound = t
            break
        if net > 0 and t + left / net <= until:
            group_bound = t + left / net
            break
        if until == math.inf:
            break
        left -= net * (until - t)
        t, members_now = until, after
    if group_bound is None:
        return None
    return max(*bounds, group_bound)


# -- the simulation -------------------------------------------------------------------------


@dataclass
class _Episode:
    start_step: int
    round_end: int
    causes: list[str]
    #: partition -> member owning it when the rebalance started
    before: dict[TopicPartition, str]
    #: steps a round lasts (0 for the initial rebalance, over before time 0)
    pause: int
    rounds: int = 0
    withheld: int = 0


class _Simulator:
    """One strategy through one scenario. State is per partition index and per member id."""

    def __init__(self, scenario: Scenario, strategy: Strategy, samples: int) -> None:
        self.sc = scenario
        self.strategy = strategy
        self.protocol = strategy.protocols[0]
        self.cooperative = self.protocol is RebalanceProtocol.COOPERATIVE
        self.pause_steps = scenario.step_of(scenario.rebalance_pause)
        self.parts = scenario.partitions()
        self.index = {p.tp: i for i, p in enumerate(self.parts)}
        lags = group_lags(scenario.group)
        self.fixed_lag = lags  # partitions not simulated keep their lag for the strategies
        self.lag = [float(lags[p.tp]) for p in self.parts]
        self.rate_dt = [scenario.rate_of(p) * scenario.dt for p in self.parts]
        self.rate_by_tp = {p.tp: scenario.rate_of(p) for p in scenario.group.partitions()}
        self.templates = {m.id: m for m in scenario.all_members()}
        self.order = list(self.templates)
        self.present: dict[str, bool] = {mid: False for mid in self.order}
        self.assigned: dict[str, tuple[TopicPartition, ...]] = {}
        self.generation: dict[str, int | None] = {}
        for m in scenario.group.members:
            self.present[m.id] = True
            self.assigned[m.id] = m.owned
            self.generation[m.id] = m.generation
        gens = [m.generation for m in scenario.group.members if m.generation is not None]
        self.group_generation = max(gens, default=0)
        self.capacity_dt = {
            mid: scenario.throughput_of(mid) * scenario.dt for mid in self.templates
        }
        #: who consumes each partition now (None: nobody)
        self.owner: list[str | None] = [None] * len(self.parts)
        self._buckets: dict[str | None, list[int]] | None = None
        self.episode: _Episode | None = None
        self.rebalances: list[Rebalance] = []
        self.samples = samples

    # -- ownership

    def _set_owner(self, i: int, mid: str | None) -> None:
        self.owner[i] = mid
        self._buckets = None

    def buckets(self) -> dict[str | None, list[int]]:
        if self._buckets is None:
            buckets: dict[str | None, list[int]] = {None: []}
            for i, mid in enumerate(self.owner):
                buckets.setdefault(mid, []).append(i)
            self._buckets = buckets
        return self._buckets

    def members_now(self) -> list[str]:
        return [mid for mid in self.order if self.present[mid]]

    def group_now(self) -> Group:
        """The group as the leader sees it now: current lags, owned partitions, generations."""
        topics = []
        for name, topic in self.sc.group.topics.items():
            partitions = []
            for p in topic.partitions:
                i = self.index.get(p.tp)
                lag = round(self.lag[i]) if i is not None else self.fixed_lag[p.tp]
                partitions.append(
                    Partition(
                        p.topic, p.partition, lag=lag, racks=p.racks, rate_in=self.rate_by_tp[p.tp]
                    )
                )
            topics.append(Topic(name, tuple(partitions)))
        members = [
            replace(self.templates[mid], owned=self.assigned[mid], generation=self.generation[mid])
            for mid in self.members_now()
        ]
        return Group.of(
            topics, members, id=self.sc.group.id, auto_offset_reset=self.sc.group.auto_offset_reset
        )

    def owners_now(self) -> dict[TopicPartition, str]:
        return {tp: mid for mid in self.members_now() for tp in self.assigned[mid]}

    # -- rebalances

    def start_episode(self, step: int, cause: str, before: dict[TopicPartition, str]) -> None:
        if self.episode is None:
            self.episode = _Episode(
                step, step + self.pause_steps, [cause], before, self.pause_steps
            )
        else:
            self.episode.round_end = step + self.pause_steps
            self.episode.causes.append(cause)
        if not self.cooperative:
            for i in range(len(self.owner)):
                if self.owner[i] is not None:
                    self._set_owner(i, None)

    def apply_event(self, step: int, event: Event) -> None:
        before = self.owners_now() if self.episode is None else {}
        if isinstance(event, Join):
            mid = event.member.id
            self.templates[mid] = event.member
            self.present[mid] = True
            self.assigned[mid] = ()
            self.generation[mid] = None
        else:
            mid = event.member_id
            self.present[mid] = False
            self.assigned[mid] = ()
            for i, owner in enumerate(self.owner):
                if owner == mid:
                    self._set_owner(i, None)
        self.start_episode(step, event.describe(), before)

    def complete_round(self, step: int) -> None:
        episode = self.episode
        assert episode is not None
        members = self.members_now()
        assignment = dict(self.strategy.assign(self.group_now()).partitions) if members else {}
        self.group_generation += 1
        episode.rounds += 1
        revoked: set[TopicPartition] = set()
        for mid in members:
            new = assignment.get(mid, ())
            kept = set(new)
            revoked.update(tp for tp in self.assigned[mid] if tp not in kept)
            self.assigned[mid] = tuple(new)
            self.generation[mid] = self.group_generation
        owner: list[str | None] = [None] * len(self.parts)
        for mid, tps in assignment.items():
            for tp in tps:
                i = self.index.get(tp)
                if i is not None:
                    owner[i] = mid
        self.owner = owner
        self._buckets = None
        if self.cooperative and revoked and episode.rounds < MAX_ROUNDS:
            owned = self.owners_now()
            episode.withheld += sum(1 for tp in revoked if tp not in owned)
            episode.round_end = step + episode.pause
            return
        after = self.owners_now()
        present = set(members)
        moved = sum(
            1 for tp, mid in episode.before.items() if mid in present and after.get(tp) != mid
        )
        dt = self.sc.dt
        self.rebalances.append(
            Rebalance(
                start=episode.start_step * dt,
                end=step * dt,
                causes=tuple(episode.causes),
                rounds=episode.rounds,
                moved=moved,
                withheld=episode.withheld,
            )
        )
        self.episode = None

    def complete_due_rounds(self, step: int) -> None:
        while self.episode is not None and self.episode.round_end == step:
            self.complete_round(step)

    # -- consumption

    def advance(self) -> tuple[float, dict[str, float]]:
        """One step: produce, then consume. Returns (lag consumed, remaining lag per owner)."""
        lag, rate_dt = self.lag, self.rate_dt
        consumed = 0.0
        remaining: dict[str, float] = {}
        for mid, idx in self.buckets().items():
            if mid is None:
                for i in idx:
                    lag[i] += rate_dt[i]
                continue
            demand = [lag[i] + rate_dt[i] for i in idx]
            total = sum(demand)
            capacity = self.capacity_dt[mid]
            if total <= capacity:
                for i in idx:
                    lag[i] = 0.0
                consumed += total
                remaining[mid] = 0.0
                continue
            level = _water_level(demand, capacity)
            left = 0.0
            for i, d in zip(idx, demand, strict=True):
                rest = d - level if d > level else 0.0
                lag[i] = rest
                left += rest
            consumed += total - left
            remaining[mid] = left
        return consumed, remaining

    def run(self) -> Run:
        sc = self.sc
        steps = sc.steps
        due: dict[int, list[Event]] = {}
        for _, event in sc.ordered_events():
            due.setdefault(sc.step_of(event.time), []).append(event)

        # time 0: the initial rebalance, already over
        self.episode = _Episode(0, 0, ["start"], dict(sc.group.current_owners()), pause=0)
        self.complete_due_rounds(0)
        initial = sum(self.lag)
        produced = consumed = 0.0
        produce_step = sum(self.rate_dt)

        every = max(1, math.ceil(steps / max(self.samples, 1)))
        times: list[float] = []
        totals: list[float] = []
        unowned: list[float] = []
        member_series: dict[str, list[float | None]] = {mid: [] for mid in self.order}

        def member_lags() -> dict[str, float]:
            out: dict[str, float] = {}
            for mid, idx in self.buckets().items():
                if mid is not None:
                    out[mid] = sum(self.lag[i] for i in idx)
            return out

        def sample(t: float, total: float, by_member: dict[str, float]) -> None:
            times.append(t)
            totals.append(total)
            unowned.append(sum(self.lag[i] for i in self.buckets()[None]))
            for mid in self.order:
                member_series[mid].append(by_member.get(mid, 0.0) if self.present[mid] else None)

        by_member = member_lags()
        drain_time = 0.0 if initial <= sc.drain_threshold else None
        peak_total = initial
        peak_member, peak_member_id = 0.0, None
        for mid, value in by_member.items():
            if value > peak_member:
                peak_member, peak_member_id = value, mid
        sample(0.0, initial, by_member)

        total = initial
        for k in range(steps):
            for event in due.get(k, ()):
                self.apply_event(k, event)
            self.complete_due_rounds(k)
            got, by_member = self.advance()
            consumed += got
            produced += produce_step
            total = sum(self.lag)
            t = (k + 1) * sc.dt
            if drain_time is None and total <= sc.drain_threshold:
                drain_time = t
            peak_total = max(peak_total, total)
            for mid, value in by_member.items():
                if value > peak_member:
                    peak_member, peak_member_id = value, mid
            if (k + 1) % every == 0 or k == steps - 1:
                sample(t, total, by_member)

        series = Series(
            times=tuple(times),
            total=tuple(totals),
            unowned=tuple(unowned),
            members=MappingProxyType({mid: tuple(v) for mid, v in member_series.items()}),
        )
        return Run(
            strategy=self.strategy.name,
            protocol=self.protocol,
            drain_time=drain_time,
            peak_total_lag=peak_total,
            peak_member_lag=peak_member,
            peak_member=peak_member_id,
            rebalances=tuple(self.rebalances),
            series=series,
            initial_lag=initial,
            produced=produced,
            consumed=consumed,
            final_lag=total,
        )


def _water_level(demand: Sequence[float], capacity: float) -> float:
    """The share level at which max-min fair shares of ``capacity`` sum to it.

    Every partition gets ``min(demand, level)``; only called when the demands exceed capacity.
    """
    ordered = sorted(demand)
    left = capacity
    count = len(ordered)
    for j, d in enumerate(ordered):
        share = left / (count - j)
        if d > share:
            return share
        left -= d
    return math.inf


def run_strategy(scenario: Scenario, strategy: Strategy, samples: int = DEFAULT_SAMPLES) -> Run:
    return _Simulator(scenario, strategy, samples).run()


def simulate(
    scenario: Scenario, strategies: Iterable[str] | None = None, samples: int = DEFAULT_SAMPLES
) -> Simulation:
    """Every named strategy (default: all registered) through ``scenario``, side by side."""
    chosen = list(strategies) if strategies is not None else names()
    runs = tuple(run_strategy(scenario, create(name), samples) for name in chosen)
    parts = scenario.partitions()
    lags = group_lags(scenario.group)
    return Simulation(
        scenario=scenario,
        ideal=ideal_drain_time(scenario),
        backlog=float(sum(lags[p.tp] for p in parts)),
        produce_rate=sum(scenario.rate_of(p) for p in parts),
        capacity=sum(scenario.throughput_of(m.id) for m in scenario.group.members),
        runs=runs,
    )


# -- scenarios ------------------------------------------------------------------------------


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


# -- the scenario file ----------------------------------------------------------------------

_SCENARIO_KEYS = {
    "name",
    "group",
    "throughput",
    "member_throughput",
    "rates",
    "events",
    "dt",
    "horizon",
    "rebalance_pause",
    "drain_threshold",
}
_EVENT_KEYS = {"time", "join", "leave"}
_JOIN_KEYS = {"id", "topics", "throughput", "rack", "instance_id"}


def parse_scenario(
    data: Any, source: str = "<scenario>", load_group: Callable[[str], Group] | None = None
) -> Scenario:
    """A scenario from its JSON document (see docs/simulate.md).

    ``group`` is a group file object, or a path that ``load_group`` reads (the caller resolves
    it, relative to the scenario file). Raises :class:`InputError` naming the key.
    """
    return _ScenarioReader(source, load_group).scenario(data)


class _ScenarioReader(_Reader):
    """The group file's reader, extended to the scenario's keys; errors in the same style."""

    def __init__(self, source: str, load_group: Callable[[str], Group] | None) -> None:
        super().__init__(source)
        self.load_group = load_group

    def number(self, obj: dict[str, Any], key: str, default: float) -> float:
        value = self.optional(obj, key, (int, float), "a number")
        return default if value is None else float(value)

    def scenario(self, data: Any) -> Scenario:
        obj = self.expect(data, dict, "a JSON object")
        self.keys(obj, _SCENARIO_KEYS, {"group"})
        name = self.optional(obj, "name", str, "a string") or Path(self.source).stem
        with self.at("group"):
            spec = self.expect(obj["group"], (dict, str), "a group object or a group file path")
            if isinstance(spec, str):
                if self.load_group is None:
                    raise self.fail("a group file path is not supported here")
                group = self.load_group(spec)
            else:
                group = self.group(spec)
        throughput = self.number(obj, "throughput", DEFAULT_THROUGHPUT)
        member_throughput: dict[str, float] = {}
        with self.at("member_throughput"):
            spec = self.expect(obj.get("member_throughput") or {}, dict, "an object")
            ids = {m.id for m in group.members}
            for mid, value in spec.items():
                with self.at(mid):
                    if mid not in ids:
                        raise self.fail(
                            "not a member of the group (a joining member's throughput goes in "
                            "its join event)"
                        )
                    member_throughput[mid] = float(self.expect(value, (int, float), "a number"))
        rates = self.rates(obj.get("rates") or {}, group)
        events: list[Event] = []
        with self.at("events"):
            for i, spec in enumerate(self.expect(obj.get("events") or [], list, "a list")):
                with self.at(i):
                    events.append(self.event(spec, group, member_throughput))
        try:
            return Scenario(
                group=group,
                throughput=throughput,
                member_throughput=member_throughput,
                rates=rates,
                events=tuple(events),
                dt=self.number(obj, "dt", DEFAULT_DT),
                horizon=self.number(obj, "horizon", DEFAULT_HORIZON),
                rebalance_pause=self.number(obj, "rebalance_pause", DEFAULT_REBALANCE_PAUSE),
                drain_threshold=self.number(obj, "drain_threshold", DEFAULT_DRAIN_THRESHOLD),
                name=name,
            )
        except ModelError as e:
            raise self.fail(e.message, e.where) from None

    def rates(self, spec: Any, group: Group) -> dict[TopicPartition, float]:
        rates: dict[TopicPartition, float] = {}
        with self.at("rates"):
            obj = self.expect(spec, dict, "an object of topics")
            for topic, value in obj.items():
                with self.at(topic):
                    if topic not in group.topics:
                        raise self.fail("unknown topic")
                    numbers = sorted(p.partition for p in group.topics[topic].partitions)
                    given = self.expect(value, (int, float, list), "a number or a list of numbers")
                    if not isinstance(given, list):
                        given = [given] * len(numbers)
                    elif len(given) != len(numbers):
                        raise self.fail(f"{len(given)} rates for {len(numbers)} partitions")
                    for n, rate in zip(numbers, given, strict=True):
                        with self.at(n):
                            self.expect(rate, (int, float), "a number")
                        rates[TopicPartition(topic, n)] = float(rate)
        return rates

    def event(self, spec: Any, group: Group, member_throughput: dict[str, float]) -> Event:
        obj = self.expect(spec, dict, "an event object")
        self.keys(obj, _EVENT_KEYS, {"time"})
        with self.at("time"):
            time = float(self.expect(obj["time"], (int, float), "a number of seconds"))
        if ("join" in obj) == ("leave" in obj):
            raise self.fail('expected exactly one of "join" and "leave"')
        if "leave" in obj:
            with self.at("leave"):
                return Leave(time, self.expect(obj["leave"], str, "a member id"))
        with self.at("join"):
            join = self.expect(obj["join"], dict, "a member object")
            self.keys(join, _JOIN_KEYS, {"id"})
            with self.at("id"):
                member_id = self.expect(join["id"], str, "a string")
            topics: list[str] = sorted(group.topics)
            if "topics" in join:
                with self.at("topics"):
                    topics = self.expect(join["topics"], list, "a list of topic names")
                    for i, t in enumerate(topics):
                        with self.at(i):
                            self.expect(t, str, "a topic name")
            rate = self.optional(join, "throughput", (int, float), "a number")
            if rate is not None:
                if member_id in member_throughput:
                    with self.at("throughput"):
                        raise self.fail(f"{member_id!r} has a throughput already")
                member_throughput[member_id] = float(rate)
            member = Member(
                member_id,
                frozenset(topics),
                instance_id=self.optional(join, "instance_id", str, "a string or null"),
                rack=self.optional(join, "rack", str, "a string or null"),
            )
        return Join(time, member)


__all__ = [
    "Event",
    "Join",
    "Leave",
    "Rebalance",
    "Run",
    "Scenario",
    "Series",
    "Simulation",
    "default_scenario",
    "ideal_drain_time",
    "parse_scenario",
    "run_strategy",
    "simulate",
    "with_load",
]
