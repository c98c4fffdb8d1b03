"""The lag rules. This is the only place they are written; every edge and strategy calls here.

A partition's lag is how many messages the group still has to read from it:

* with a committed offset inside the log: ``end - committed`` (never below 0);
* with no committed offset, or one below the log start (the consumer would reset from it):
  ``auto.offset.reset`` decides; "latest" (any case, Kafka's default) starts at the log end,
  so lag 0; anything else ("earliest", "none", ...) counts the whole log, ``end - begin``.
  This is the seed lag assignor's rule, kept as it is for "none" too.

Lag in seconds (:func:`lag_seconds`, for ``lagassign monitor``): how long ago the log end was
where the group's committed offset is now, from samples of the log end over time. The same
samples give the log end at a past moment (:func:`end_at`: a commit's lag at its own time, for
the group status); both read them through one interpolation, :func:`interpolate`.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

from lagassign.java_ordering import java_order
from lagassign.model import Group, Partition, TopicPartition

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DEFAULT_AUTO_OFFSET_RESET = "latest"
#: what ``auto.offset.reset`` may say (any case): Kafka's values, and "by_duration:<duration>"
#: (KIP-1106, counted as the whole log here)
AUTO_OFFSET_RESETS = "latest, earliest, none or by_duration:<duration>"


def known_reset(auto_offset_reset: str) -> bool:
    """Whether ``auto_offset_reset`` is one of :data:`AUTO_OFFSET_RESETS`."""
    low = auto_offset_reset.lower()
    return low in ("latest", "earliest", "none") or low.startswith("by_duration:")


def resets_to_latest(auto_offset_reset: str) -> bool:
    return auto_offset_reset.lower() == "latest"


def lag_from_offsets(
    begin: int, end: int, committed: int | None, auto_offset_reset: str = DEFAULT_AUTO_OFFSET_RESET
) -> int:
    """Lag of a partition from its offsets.

    >>> lag_from_offsets(1111, 9999, 5555, "none")
    4444
    >>> lag_from_offsets(1111, 9999, None, "latest"), lag_from_offsets(1111, 9999, None, "earliest")
    (0, 8888)
    """
    if committed is None or committed < begin:
        return 0 if resets_to_latest(auto_offset_reset) else max(end - begin, 0)
    return max(end - committed, 0)


def partition_lag(partition: Partition, auto_offset_reset: str = DEFAULT_AUTO_OFFSET_RESET) -> int:
    """Lag of a partition: its given lag, else derived from its offsets, else 0."""
    if partition.lag is not None:
        return partition.lag
    if partition.offsets is not None:
        o = partition.offsets
        return lag_from_offsets(o.begin, o.end, o.committed, auto_offset_reset)
    return 0


def group_lags(group: Group) -> dict[TopicPartition, int]:
    """Lag of every partition of the group, under the group's ``auto.offset.reset``."""
    reset = group.auto_offset_reset
    lags: dict[TopicPartition, int] = {}
    for name in sorted(group.topics, key=java_order):  # as Group.partitions() orders them
        partitions = group.topics[name].partitions
        lags.update(zip(map(_tp, partitions), topic_lags(partitions, reset), strict=True))
    return lags


class GroupLags(Mapping[TopicPartition, int]):
    """:func:`group_lags` of ``group``, built only when something looks a lag up by key; a
    plan that reads every partition's lag in a known order takes them with :meth:`of`,
    without the dictionary (a million partitions: a quarter of a second to build)."""

    def __init__(self, group: Group) -> None:
        self.group = group
        self._lags: dict[TopicPartition, int] | None = None

    def _built(self) -> dict[TopicPartition, int]:
        if self._lags is None:
            self._lags = group_lags(self.group)
        return self._lags

    def __getitem__(self, tp: TopicPartition) -> int:
        return self._built()[tp]

    def __iter__(self) -> Iterator[TopicPartition]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())

    def of(self, partitions: Sequence[Partition]) -> list[int]:
        """The lag of each of ``partitions`` (the group's), in their order"""
        return topic_lags(partitions, self.group.auto_offset_reset)


def topic_lags(
    partitions: Sequence[Partition], auto_offset_reset: str = DEFAULT_AUTO_OFFSET_RESET
) -> list[int]:
    """Lag of each of ``partitions`` (a topic's), in their order: :func:`partition_lag`.

    Most inputs give the lags themselves; then they are read at C speed (a million partitions
    one at a time in Python took a good part of a second). Strategies that take a topic at a
    time read them here rather than through a dictionary of the group's lags."""
    given = list(map(_lag, partitions))
    if None in given:
        # partition_lag without its call per partition (a rebalance's 10,000 from offsets)
        return [
            lag
            if lag is not None
            else 0
            if (o := p.offsets) is None
            else lag_from_offsets(o.begin, o.end, o.committed, auto_offset_reset)
            for lag, p in zip(given, partitions, strict=True)
        ]
    return given


def topic_lags_on_array(
    partitions: Sequence[Partition], auto_offset_reset: str = DEFAULT_AUTO_OFFSET_RESET
) -> NDArray[np.int64] | None:
    """:func:`topic_lags` on an array of 64-bit ints, read at C speed without a Python number
    made per partition; None when a lag does not fit in 64 bits (those stay in Python)."""
    import numpy as np  # here: it takes a while to load, small groups never need it

    n = len(partitions)
    try:
        # lags are whole numbers (model.Partition), so the array holds them exactly
        return np.fromiter(map(_lag, partitions), dtype=np.int64, count=n)
    except TypeError:  # a lag of None: from offsets, by the rule
        pass
    except OverflowError:
        return None
    try:
        return np.fromiter(topic_lags(partitions, auto_offset_reset), dtype=np.int64, count=n)
    except OverflowError:
        return None


_lag = attrgetter("lag")
_tp = attrgetter("tp")


@dataclass(frozen=True, slots=True)
class LagSeconds:
    """How long ago the log end was at the committed offset: ``seconds`` (None when the
    samples cannot tell), ``estimated`` when that moment lies before the oldest sample and was
    extrapolated (never with None)."""

    seconds: float | None
    estimated: bool = False


#: a log-end sample: (time in seconds, log end offset)
EndSample = tuple[float, int]


def interpolate(
    samples: Sequence[EndSample], value: float, *, at: Literal["time", "end"]
) -> float | None:
    """Linear interpolation between log-end samples ``(time, end)``, oldest first: with
    ``at="time"`` the log end at time ``value``; with ``at="end"`` the time at which the log end
    was at ``value`` (when it passed from at or below ``value`` to above it). Between the last
    sample at or below ``value`` and the next one; None outside the samples (before the oldest,
    after the newest; at the newest, its own). What to do there is the caller's:
    :func:`lag_seconds` extrapolates, :func:`end_at` takes the nearest sample.

    >>> s = [(100.0, 1000), (110.0, 2000), (120.0, 2000), (130.0, 3000)]
    >>> interpolate(s, 105.0, at="time"), interpolate(s, 1500, at="end")
    (1500.0, 105.0)
    >>> interpolate(s, 2000, at="end"), interpolate(s, 99.0, at="time")
    (120.0, None)
    """
    x, y = (0, 1) if at == "time" else (1, 0)
    i = bisect_right(samples, value, key=lambda sample: sample[x]) - 1
    if i < 0:
        return None
    if i == len(samples) - 1:
        return float(samples[i][y]) if samples[i][x] == value else None
    a, b = samples[i], samples[i + 1]
    return a[y] + (value - a[x]) / (b[x] - a[x]) * (b[y] - a[y])


def end_at(samples: Sequence[EndSample], time: float) -> int | None:
    """The log end at ``time`` from log-end samples ``(time, end)``, oldest first: interpolated
    between the two samples around it (:func:`interpolate`, rounded to the nearest offset);
    before the oldest sample, the oldest's end (nothing tells how much lower it was: for
    commits older than every sample, the end read nearest to them); after the newest, the
    newest's end (nothing newer was read); None without samples.

    >>> s = [(100.0, 1000), (110.0, 2000)]
    >>> end_at(s, 104.0), end_at(s, 50.0), end_at(s, 111.0), end_at([], 1.0)
    (1400, 1000, 2000, None)
    """
    if not samples:
        return None
    if time <= samples[0][0]:
        return samples[0][1]
    between = interpolate(samples, time, at="time")
    return samples[-1][1] if between is None else round(between)


def lag_seconds(samples: Sequence[EndSample], committed: int, now: float) -> LagSeconds:
    """Lag in seconds from log-end samples ``(time, end)``, oldest first (times in seconds).

    The time at which the log end was at ``committed`` (when it passed from at or below
    ``committed`` to above it, linearly between the two samples around it: :func:`interpolate`),
    then ``now`` minus that time; 0 when the committed offset is at or past the newest log end.
    A committed offset older than every sample is extrapolated back from the oldest two samples
    whose ends differ (their produce rate), and says so; with no such pair the seconds are
    unknown.

    >>> s = [(100.0, 1000), (110.0, 2000), (120.0, 2000), (130.0, 3000)]
    >>> lag_seconds(s, 3000, 131.0), lag_seconds(s, 1500, 131.0), lag_seconds(s, 2500, 131.0)
    (LagSeconds(seconds=0.0, estimated=False), LagSeconds(seconds=26.0, estimated=False), \
LagSeconds(seconds=6.0, estimated=False))
    >>> lag_seconds(s, 500, 131.0)
    LagSeconds(seconds=36.0, estimated=True)
    """
    return lags_seconds(samples, [committed], now)[0]


def lags_seconds(
    samples: Sequence[EndSample], committed: Sequence[int], now: float
) -> list[LagSeconds]:
    """:func:`lag_seconds` of each of many committed offsets of one partition (a monitor's
    groups on one partition), its produce rate for extrapolating found once.

    >>> s = [(100.0, 1000), (110.0, 2000), (120.0, 2000), (130.0, 3000)]
    >>> [x.seconds for x in lags_seconds(s, [3000, 1500, 500], 131.0)]
    [0.0, 26.0, 36.0]
    """
    if not samples:
        return [LagSeconds(None)] * len(committed)
    newest = samples[-1][1]
    rate: float | None = None
    t0 = e0 = 0.0
    found = False
    out = []
    for offset in committed:
        if offset >= newest:
            out.append(LagSeconds(0.0))
            continue
        passed = interpolate(samples, offset, at="end")
        if passed is not None:
            out.append(LagSeconds(now - passed))
            continue
        if not found:  # older than every sample: the oldest rise's produce rate
            found = True
            rising = next(((a, b) for a, b in itertools.pairwise(samples) if b[1] > a[1]), None)
            if rising is not None:
                (t0, e0), (t1, e1) = rising
                rate = (e1 - e0) / (t1 - t0) if t1 > t0 else None
        if rate is None or rate <= 0:
            out.append(LagSeconds(None))
        else:
            out.append(LagSeconds(now - (t0 - (e0 - offset) / rate), True))
    return out
