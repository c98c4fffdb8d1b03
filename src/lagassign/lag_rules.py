"""The lag rules. This is the only place they are written; every edge and strategy calls here.

A partition's lag is how many messages the group still has to read from it:

* with a committed offset inside the log: ``end - committed`` (never below 0);
* with no committed offset, or one below the log start (the consumer would reset from it):
  ``auto.offset.reset`` decides; "latest" (any case, Kafka's default) starts at the log end,
  so lag 0; anything else ("earliest", "none", ...) counts the whole log, ``end - begin``.
  This is the seed lag assignor's rule, kept as it is for "none" too.

Lag in seconds (:func:`lag_seconds`, for ``lagassign monitor``): how long ago the log end was
where the group's committed offset is now, from samples of the log end over time.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from lagassign.java_ordering import java_order
from lagassign.model import Group, Partition, TopicPartition

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
    # Topics as Group.partitions() orders them. Most inputs give the lags themselves: a topic
    # whose every partition has one is read at C speed (a million partitions one at a time in
    # Python took a good part of a second).
    for name in sorted(group.topics, key=java_order):
        partitions = group.topics[name].partitions
        given = list(map(_lag, partitions))
        if None in given:
            given = [p.lag if p.lag is not None else partition_lag(p, reset) for p in partitions]
        lags.update(zip(map(_tp, partitions), given, strict=True))
    return lags


_lag = attrgetter("lag")
_tp = attrgetter("tp")


@dataclass(frozen=True, slots=True)
class LagSeconds:
    """How long ago the log end was at the committed offset: ``seconds`` (None when the
    samples cannot tell), ``estimated`` when that moment lies before the oldest sample and was
    extrapolated (never with None)."""

    seconds: float | None
    estimated: bool = False


def lag_seconds(samples: Sequence[tuple[float, int]], committed: int, now: float) -> LagSeconds:
    """Lag in seconds from log-end samples ``(time, end)``, oldest first (times in seconds).

    The time at which the log end was at ``committed`` (when it passed from at or below
    ``committed`` to above it, linearly between the two samples around it), then ``now`` minus
    that time; 0 when the committed offset is at or past the newest log end. A committed offset
    older than every sample is extrapolated back from the oldest two samples whose ends differ
    (their produce rate), and says so; with no such pair the seconds are unknown.

    >>> s = [(100.0, 1000), (110.0, 2000), (120.0, 2000), (130.0, 3000)]
    >>> lag_seconds(s, 3000, 131.0), lag_seconds(s, 1500, 131.0), lag_seconds(s, 2500, 131.0)
    (LagSeconds(seconds=0.0, estimated=False), LagSeconds(seconds=26.0, estimated=False), \
LagSeconds(seconds=6.0, estimated=False))
    >>> lag_seconds(s, 500, 131.0)
    LagSeconds(seconds=36.0, estimated=True)
    """
    if not samples or committed >= samples[-1][1]:
        return LagSeconds(0.0 if samples else None)
    if committed >= samples[0][1]:
        # the last sample at or below committed, and the next one (above it)
        i = max(k for k, (_, end) in enumerate(samples) if end <= committed)
        (t0, e0), (t1, e1) = samples[i], samples[i + 1]
        return LagSeconds(now - (t0 + (committed - e0) / (e1 - e0) * (t1 - t0)))
    rising = [(a, b) for a, b in itertools.pairwise(samples) if b[1] > a[1]]
    if not rising:
        return LagSeconds(None)
    (t0, e0), (t1, e1) = rising[0]
    rate = (e1 - e0) / (t1 - t0) if t1 > t0 else 0.0
    if rate <= 0:
        return LagSeconds(None)
    return LagSeconds(now - (t0 - (e0 - committed) / rate), True)
