"""The consumer-group model: topics, partitions, members and assignments.

Everything here is immutable and free of I/O. Constructors check their own invariants and
raise :class:`ModelError` naming the offending place (``members[2].topics``), so every input
format gets the same checks and the same messages.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from types import MappingProxyType
from typing import NamedTuple

from lagassign.java_ordering import java_order


class ModelError(ValueError):
    """An invalid group. ``where`` is a path into the group (``topics.t0.partitions[1]``)."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message


class TopicPartition(NamedTuple):
    # A NamedTuple, not a dataclass: strategies key big dictionaries by it, and a tuple's
    # hash and comparisons run in C.
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    def sort_key(self) -> tuple[bytes, int]:
        return java_order(self.topic), self.partition


_new_tuple = tuple.__new__


@dataclass(frozen=True, slots=True)
class Offsets:
    """A partition's log start (``begin``), log end (``end``) and the group's committed offset."""

    begin: int
    end: int
    committed: int | None = None

    def __post_init__(self) -> None:
        # one comparison chain when all is well: readers make one per partition, 10,000 a read
        committed = self.committed
        if 0 <= self.begin <= self.end and (committed is None or committed >= 0):
            return
        for name in ("begin", "end", "committed"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ModelError(name, f"offset must not be negative, got {value}")
        raise ModelError("end", f"end offset {self.end} is below begin offset {self.begin}")


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition of a topic, with either a known lag or the offsets to derive it from.

    ``rate_in`` / ``rate_out`` are produce and consume rates in messages per second, when known.
    """

    topic: str
    partition: int
    lag: int | None = None
    offsets: Offsets | None = None
    racks: frozenset[str] = frozenset()
    rate_in: float | None = None
    rate_out: float | None = None
    #: the partition's key, made once: strategies look it up a few times per partition, and
    #: the group's index holds the same object
    tp: TopicPartition = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # tuple.__new__ directly: TopicPartition's own __new__ is Python (10,000 a rebalance)
        object.__setattr__(self, "tp", _new_tuple(TopicPartition, (self.topic, self.partition)))
        if self.partition < 0:
            raise ModelError(
                "partition", f"partition number must not be negative, got {self.partition}"
            )
        lag = self.lag
        if lag is not None:
            if self.offsets is not None:
                raise ModelError("lag", "give either a lag or offsets, not both")
            # A count of messages. Strategies read the lags of large groups into arrays of
            # 64-bit ints, which would cut 2.5 to 2.
            if type(lag) is not int:
                try:
                    operator.index(lag)  # NumPy's ints are whole numbers too
                except TypeError:
                    message = f"lag must be a whole number, got {lag!r:.40}"
                    raise ModelError("lag", message) from None
            if lag < 0:
                raise ModelError("lag", f"lag must not be negative, got {lag}")
        if self.rate_in is None and self.rate_out is None:
            return
        for name in ("rate_in", "rate_out"):
            value = getattr(self, name)
            if value is None:
                continue
            try:
                finite = math.isfinite(value)
            except OverflowError:  # an int too large for a float
                finite = False
            if not finite:
                raise ModelError(
                    name, f"rate must be a finite number of messages per second, got {value!s:.40}"
                )
            if value < 0:
                raise ModelError(name, f"rate must not be negative, got {value}")


_partition_number = attrgetter("partition")


@dataclass(frozen=True, slots=True)
class Topic:
    """A topic and its partitions, which it keeps in partition-number order."""

    name: str
    partitions: tuple[Partition, ...]

    def __post_init__(self) -> None:
        seen: set[int] = set()
        previous = -1
        ordered = True
        for i, p in enumerate(self.partitions):
            if p.topic != self.name:
                raise ModelError(f"partitions[{i}]", f"belongs to topic {p.topic!r}")
            if p.partition in seen:
                raise ModelError(f"partitions[{i}]", f"duplicate partition {p.partition}")
            seen.add(p.partition)
            ordered = ordered and p.partition > previous
            previous = p.partition
        if not ordered:
            # Sorted once here, so that nothing that walks a topic has to sort it again.
            object.__setattr__(
                self, "partitions", tuple(sorted(self.partitions, key=_partition_number))
            )

    @staticmethod
    def of(name: str, count: int) -> Topic:
        """A topic of ``count`` partitions, all with lag 0."""
        return Topic(name, tuple(Partition(name, i, lag=0) for i in range(count)))


#: the generation of a member that reports none, as in Kafka
NO_GENERATION = -1


@dataclass(frozen=True, slots=True)
class Member:
    """A consumer-group member as the group leader sees it in the member's subscription."""

    id: str
    topics: frozenset[str]
    instance_id: str | None = None
    rack: str | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    #: the member's ``client.id`` and host, as the group coordinator describes them (reports
    #: show them; no strategy reads them)
    client_id: str | None = None
    host: str | None = None
    #: messages per second the member can read, when known (:func:`lagassign.rates.capacities`
    #: estimates it otherwise)
    capacity: float | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise ModelError("id", "member id must not be empty")
        if self.capacity is not None:
            try:
                capacity = float(self.capacity)
            except OverflowError:
                capacity = math.inf
            if not 0 <= capacity < math.inf:
                raise ModelError(
                    "capacity",
                    f"capacity must be a non-negative number of messages per second, "
                    f"got {str(self.capacity)[:40]}",
                )
            object.__setattr__(self, "capacity", capacity)


@dataclass(frozen=True)
class Group:
    """A consumer group: its members, the topics they subscribe and the group's reset policy.

    ``rate_window``: the seconds over which the partitions' rates were measured, when they were
    (two offset samples that far apart: :func:`lagassign.rates.measure_rates`; the longest span
    of sample series: :func:`lagassign.rates.rates_from_series`); None when the
    rates were given as such (a group file) or there are none. It decides which members count
    as saturated (:func:`lagassign.rates.saturated`)."""

    id: str
    topics: Mapping[str, Topic]
    members: tuple[Member, ...]
    auto_offset_reset: str = "latest"
    rate_window: float | None = None
    _partitions: Mapping[TopicPartition, Partition] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "topics", MappingProxyType(dict(self.topics)))
        for name, topic in self.topics.items():
            if topic.name != name:
                raise ModelError(f"topics.{name}", f"holds topic {topic.name!r}")
        ids: set[str] = set()
        for i, m in enumerate(self.members):
            if m.id in ids:
                raise ModelError(f"members[{i}].id", f"duplicate member id {m.id!r}")
            ids.add(m.id)
            for t in sorted(m.topics):
                if t not in self.topics:
                    raise ModelError(f"members[{i}].topics", f"unknown topic {t!r}")
        index = {p.tp: p for topic in self.topics.values() for p in topic.partitions}
        object.__setattr__(self, "_partitions", MappingProxyType(index))
        for i, m in enumerate(self.members):
            for tp in m.owned:
                if tp not in index:
                    raise ModelError(f"members[{i}].owned", f"unknown partition {tp}")

    @staticmethod
    def of(
        topics: Iterable[Topic],
        members: Iterable[Member],
        *,
        id: str = "group",
        auto_offset_reset: str = "latest",
    ) -> Group:
        return Group(id, {t.name: t for t in topics}, tuple(members), auto_offset_reset)

    def partition(self, tp: TopicPartition) -> Partition:
        return self._partitions[tp]

    def partition_keys(self) -> Iterable[TopicPartition]:
        """Every partition's key, topics in the order of ``topics``, partitions in number
        order: read from the group's index at C speed (on a million partitions, reading
        each partition's ``tp`` took three times as long)."""
        return self._partitions.keys()

    def partitions(self) -> Iterator[Partition]:
        """Every partition, topics in name order, partitions in number order."""
        for name in sorted(self.topics, key=java_order):
            yield from self.topics[name].partitions

    def subscribers(self, topic: str) -> list[Member]:
        return [m for m in self.members if topic in m.topics]

    def member(self, member_id: str) -> Member:
        for m in self.members:
            if m.id == member_id:
                return m
        raise KeyError(member_id)

    def current_owners(self) -> dict[TopicPartition, str]:
        """Who owns each partition now: its sole claimant by :func:`newest_claims`.

        A partition two members claim in its newest generation belongs to nobody, as in Kafka's
        sticky assignors.
        """
        best, shared = _newest_claims(self.members)
        return {tp: mid for tp, (_, mid) in best.items() if tp not in shared}


def newest_claims(members: Iterable[Member]) -> dict[TopicPartition, frozenset[str]]:
    """The members claiming each owned partition in the newest generation that claims it.

    Each member claims the partitions of its ``owned`` list in its ``generation`` (a member
    without one counts as Kafka's default, -1). A claim of an older generation than another
    claim of the same partition has been replaced: its member lost the partition in a rebalance
    it took no part in. Several claimants of the newest generation may all still hold it.
    """
    best, shared = _newest_claims(members)
    return {
        tp: frozenset(shared[tp]) if tp in shared else frozenset((mid,))
        for tp, (_, mid) in best.items()
    }


def _newest_claims(
    members: Iterable[Member],
) -> tuple[dict[TopicPartition, tuple[int, str]], dict[TopicPartition, set[str]]]:
    """(partition -> (newest generation, its first claimant), partition -> every claimant of
    the newest generation, for partitions with several only): the rule of
    :func:`newest_claims` without a set per partition, which large groups would pay for."""
    best: dict[TopicPartition, tuple[int, str]] = {}
    shared: dict[TopicPartition, set[str]] = {}
    for m in members:
        generation = NO_GENERATION if m.generation is None else m.generation
        for tp in m.owned:
            seen = best.get(tp)
            if seen is None or generation > seen[0]:
                best[tp] = (generation, m.id)
                if shared:
                    shared.pop(tp, None)
            elif generation == seen[0] and seen[1] != m.id:
                shared.setdefault(tp, {seen[1]}).add(m.id)
    return best, shared


@dataclass(frozen=True)
class Assignment:
    """The result of a strategy: partitions per member, in the order the strategy gave them.

    Every member of the group is present, with an empty tuple if it got nothing.
    """

    partitions: Mapping[str, tuple[TopicPartition, ...]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", MappingProxyType(dict(self.partitions)))

    @staticmethod
    def build(
        members: Iterable[Member] | Iterable[str], assigned: Mapping[str, Iterable[TopicPartition]]
    ) -> Assignment:
        ids = [m if isinstance(m, str) else m.id for m in members]
        return Assignment({mid: tuple(assigned.get(mid, ())) for mid in ids})

    def __getitem__(self, member_id: str) -> tuple[TopicPartition, ...]:
        return self.partitions[member_id]

    def owners(self) -> dict[TopicPartition, str]:
        return {tp: mid for mid, tps in self.partitions.items() for tp in tps}

    def as_lists(self) -> dict[str, list[tuple[str, int]]]:
        return {
            mid: [(tp.topic, tp.partition) for tp in tps] for mid, tps in self.partitions.items()
        }
