"""The simulation: one strategy through a scenario, step by step, and every strategy side by side.

Given a :class:`~lagassign.simulate.scenario.Scenario` (the group with each partition's
initial lag and produce rate ``rate_in``, each member's throughput, members joining and leaving
at given times) the simulator steps time forward in steps of ``dt`` seconds, for each strategy,
and reports how long the group takes to drain, how high the lag gets and how many partitions
move at rebalances. Pure: no I/O, no printing; deterministic.

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
at its end the strategy is called, by the core's one rebalance round
(:func:`lagassign.plan.rebalance_round`), with the lags at that moment and every member's
currently owned partitions and generation (so sticky strategies can be sticky), and the
assignment takes effect. The protocol is the strategy's preferred one
(``Strategy.protocols[0]``), or another it supports given to :func:`run_strategy`:

* **eager**: at the start of the rebalance every member revokes everything, so nothing is
  consumed for ``rebalance_pause``; the leader is told nobody consumes anything;
* **cooperative**: members keep consuming what they own during the round, and the leader is
  told so (each member's owned partitions are what it still consumes). At the round's end they
  give up the partitions the new assignment takes from them; the round withholds those from
  their new owners (:mod:`lagassign.strategies.cooperative`), so a follow-up round starts, and
  they are idle until it ends ``rebalance_pause`` later. Partitions nobody consumed (a leaver's)
  are read from the end of the first round. Rounds repeat while a round revokes anything (at
  most ``MAX_ROUNDS``). This is Kafka's cooperative rebalance (KIP-429): a member revokes
  nothing when the rebalance starts, revokes what its assignment no longer lists when the
  round completes, and rejoins at once if it revoked anything.

A member that leaves stops consuming at once; its partitions are idle until the rebalance
assigns them. An event during a rebalance restarts the current round.

Moves: a partition moves when the member that owned it before the rebalance no longer owns it
afterwards, as :func:`lagassign.metrics.moves` counts them, and also when that member left and
another takes the partition over: a new owner starts from the committed offset whichever way the
partition came to it, so a strategy is not "0 moved" when a member leaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from lagassign.lag_rules import group_lags
from lagassign.model import Group, Partition, Topic, TopicPartition
from lagassign.plan import MAX_ROUNDS, rebalance_round
from lagassign.simulate.ideal import ideal_drain_time
from lagassign.simulate.results import Rebalance, Run, Series, Simulation
from lagassign.simulate.scenario import Event, Join, Scenario
from lagassign.strategies import RebalanceProtocol, Strategy, create, names

#: points kept of each time series (the simulation itself runs every step)
DEFAULT_SAMPLES = 500
# MAX_ROUNDS: rounds of one cooperative rebalance at most (cooperative-sticky mostly needs
# two), as lagassign.plan.settle runs them. Kafka has no such cap: a member that revoked
# anything rejoins, so rounds go on until one revokes nothing, and a cap the rounds reach leaves
# that round's withheld partitions unread until the next rebalance, which Kafka never does. It
# only guards against rounds that never settle (Kafka's rack-aware cooperative-sticky has
# some, see settle) and rounds of no length, as the initial rebalance's.


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

    def __init__(
        self,
        scenario: Scenario,
        strategy: Strategy,
        samples: int,
        protocol: RebalanceProtocol | None = None,
    ) -> None:
        self.sc = scenario
        self.strategy = strategy
        if protocol is not None and protocol not in strategy.protocols:
            raise ValueError(
                f"strategy {strategy.name!r} does not support the {protocol.value} protocol"
            )
        self.protocol = protocol if protocol is not None else strategy.protocols[0]
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
        """The group as the leader sees it now: current lags, produce rates, owned partitions,
        generations, and each member's throughput as its capacity."""
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
        # the members' throughputs are their capacities: balanced plans for catch-up time
        members = [
            replace(
                self.templates[mid],
                owned=self.assigned[mid],
                generation=self.generation[mid],
                capacity=self.sc.throughput_of(mid),
            )
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
        """The end of a round: the leader assigns as every rebalance round does
        (:func:`~lagassign.plan.rebalance_round`), the members take the assignment and give up
        what it takes from them; under the cooperative protocol a member that gave something up
        rejoins, so another round follows."""
        episode = self.episode
        assert episode is not None
        members = self.members_now()
        # what each member still consumes: under the cooperative protocol what it owns, under
        # the eager protocol nothing (it revoked everything when the rebalance started)
        consuming = {mid: self.assigned[mid] if self.cooperative else () for mid in members}
        assignment = (
            dict(rebalance_round(self.strategy, self.group_now(), consuming).assignment.partitions)
            if members
            else {}
        )
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
        # a member still here that lost a partition; a leaver's partition once someone has it
        moved = sum(
            1
            for tp, mid in episode.before.items()
            if after.get(tp) != mid and (mid in present or tp in after)
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


def run_strategy(
    scenario: Scenario,
    strategy: Strategy,
    samples: int = DEFAULT_SAMPLES,
    protocol: RebalanceProtocol | None = None,
) -> Run:
    """``strategy`` through ``scenario`` under ``protocol`` (default: the strategy's preferred
    one, ``Strategy.protocols[0]``)."""
    return _Simulator(scenario, strategy, samples, protocol).run()


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
