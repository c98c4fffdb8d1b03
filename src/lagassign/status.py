"""A consumer group's health from its recent commits: Burrow's rules, written once.

Each partition keeps a window of its last :data:`WINDOW` commits (offset, commit time, lag at
that time), oldest first. Commits closer together than :data:`MIN_DISTANCE_S` replace the
window's newest entry instead of adding one (Burrow's ``min-distance``), so a member committing
many times a second still fills a window that spans several seconds. At ``now``, with the
partition's current lag:

1. **OK** when the current lag is 0 or the lag was 0 at any commit in the window (the member
   caught up within the window), or when there is no commit yet. Otherwise the first rule
   that holds, worst first:
2. **REWIND**: some committed offset is lower than the one before it (a reset to earlier);
3. **STOP**: no commit for longer than the window spans: ``now − newest time > newest time −
   oldest time``. A window of one commit spans 0 s, so it is STOP as soon as any time passed
   since that commit while lag remains (as in Burrow);
4. **STALL**: two or more commits, every one of the same offset (committing without moving);
5. **WARN**: two or more commits, and the lag never shrinks from one commit to the next;
6. **OK** otherwise (the lag shrank somewhere: the member is keeping up).

A group's status is its worst partition's, in the order the rules are checked: REWIND >
STOP > STALL > WARN > OK (Burrow checks them in that order, "starting with the worst"; its
group status folds the three errors into ERR, ours keeps the partition's name).

Worked example, lag 50 now at 200 s, commits as (offset, time s, lag):

* (100, 100, 80), (120, 110, 70), (150, 120, 60): the lag shrinks, last commit 80 s ago and the
  window spans 20 s → STOP; at ``now`` 130 s instead → OK (10 s ≤ 20 s, lag shrank).
* (100, 100, 80), (100, 110, 90), (100, 120, 95) at 130 s → STALL.
* (100, 100, 80), (120, 110, 80), (130, 120, 90) at 130 s → WARN (80, 80, 90 never shrinks).
* (150, 100, 80), (120, 110, 110), (130, 120, 90) at 130 s → REWIND (150 → 120).
* (100, 100, 0), (100, 110, 30), (100, 120, 60) at 500 s → OK (caught up at 100 s).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

#: commits kept per partition (Burrow's ``intervals``, default 10)
WINDOW = 10
#: commits this close (seconds) to the window's newest replace it (Burrow's ``min-distance``)
MIN_DISTANCE_S = 1.0


class Status(IntEnum):
    """Partition and group status, in order of severity (higher is worse)."""

    OK = 0
    WARN = 1
    STALL = 2
    STOP = 3
    REWIND = 4


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit of a partition: the committed ``offset``, its ``time`` (seconds) and the
    partition's lag at that time."""

    offset: int
    time: float
    lag: int


def add_commit(window: list[Commit], commit: Commit) -> None:
    """Adds ``commit`` (the newest) to ``window`` in place: it replaces the newest entry when
    within :data:`MIN_DISTANCE_S` of it, and the window keeps its :data:`WINDOW` newest.

    >>> w = [Commit(1, 10.0, 5)]
    >>> add_commit(w, Commit(2, 10.5, 4)); w
    [Commit(offset=2, time=10.5, lag=4)]
    >>> add_commit(w, Commit(3, 12.0, 3)); [c.offset for c in w]
    [2, 3]
    """
    if window and commit.time - window[-1].time < MIN_DISTANCE_S:
        window[-1] = commit
    else:
        window.append(commit)
    del window[:-WINDOW]


def partition_status(window: Sequence[Commit], lag: int, now: float) -> Status:
    """The status of a partition with current ``lag`` at ``now`` (seconds) from its commit
    ``window``, oldest first (the module's rules)."""
    if lag == 0 or not window or any(c.lag == 0 for c in window):
        return Status.OK
    pairs = list(itertools.pairwise(window))
    if any(b.offset < a.offset for a, b in pairs):
        return Status.REWIND
    if now - window[-1].time > window[-1].time - window[0].time:
        return Status.STOP
    if pairs and all(b.offset == a.offset for a, b in pairs):
        return Status.STALL
    if pairs and all(b.lag >= a.lag for a, b in pairs):
        return Status.WARN
    return Status.OK


def group_status(partitions: Iterable[Status]) -> Status:
    """The worst of the partitions' statuses; OK for none."""
    return max(partitions, default=Status.OK)
