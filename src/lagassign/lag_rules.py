"""The lag rules. This is the only place they are written; every edge and strategy calls here.

A partition's lag is how many messages the group still has to read from it:

* with a committed offset inside the log: ``end - committed`` (never below 0);
* with no committed offset, or one below the log start (the consumer would reset from it):
  ``auto.offset.reset`` decides; "latest" (any case, Kafka's default) starts at the log end,
  so lag 0; anything else ("earliest", "none", ...) counts the whole log, ``end - begin``.
  This is the seed lag assignor's rule, kept as it is for "none" too.
"""

from __future__ import annotations

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
    # Most inputs give the lag itself; reading it here saves a call per partition.
    return {
        p.tp: p.lag if p.lag is not None else partition_lag(p, reset) for p in group.partitions()
    }
