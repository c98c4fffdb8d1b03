"""What a simulation reports: each strategy's run (drain time, peaks, rebalances, sampled
lag series) and all runs of one scenario side by side."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lagassign.simulate.scenario import Scenario
from lagassign.strategies import RebalanceProtocol


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
