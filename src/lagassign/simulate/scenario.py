"""What to simulate: a consumer group with its backlog and produce rates, the members'
throughputs, and the members that join and leave while it drains.

Times are in seconds, rates and throughputs in messages per second. A scenario checks itself
when built and raises :class:`~lagassign.model.ModelError` naming the field, so every reader
(the scenario file, the generators, the benchmarks) gets the same checks.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from lagassign.model import Group, Member, ModelError, Partition, TopicPartition

DEFAULT_THROUGHPUT = 1000.0
DEFAULT_DT = 1.0
#: seconds a scenario runs when it gives no ``horizon`` (not
#: :data:`lagassign.rates.DEFAULT_HORIZON`, the seconds of produce rate a plan weighs)
DEFAULT_DURATION = 3600.0
DEFAULT_REBALANCE_PAUSE = 10.0
DEFAULT_DRAIN_THRESHOLD = 0.5
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
    group and members that join) or the group gives the member a ``capacity``; a member's
    throughput is also its capacity in the group the strategies see, so that time-aware
    ``balanced`` plans with it. A partition produces its ``rate_in`` (0 if unset) unless
    ``rates`` overrides it. Events apply in time order (equal times: in the order given).
    """

    group: Group
    throughput: float = DEFAULT_THROUGHPUT
    member_throughput: Mapping[str, float] = field(default_factory=dict)
    rates: Mapping[TopicPartition, float] = field(default_factory=dict)
    events: tuple[Event, ...] = ()
    dt: float = DEFAULT_DT
    horizon: float = DEFAULT_DURATION
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
        """``member_throughput``'s, else the group file's ``capacity`` of the member, else
        ``throughput``."""
        if member_id in self.member_throughput:
            return self.member_throughput[member_id]
        given = self._capacities.get(member_id)
        return self.throughput if given is None else given

    @functools.cached_property
    def _capacities(self) -> dict[str, float | None]:
        return {m.id: m.capacity for m in self.group.members}

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
