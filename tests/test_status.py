"""lagassign.status: Burrow's rules over a partition's commit window, one worked example per
rule (the module docstring's), and the window's bounds."""

from __future__ import annotations

import pytest

from lagassign.status import (
    MIN_DISTANCE_S,
    WINDOW,
    Commit,
    Status,
    add_commit,
    group_status,
    partition_status,
)


def window(*commits: tuple[int, float, int]) -> list[Commit]:
    return [Commit(*c) for c in commits]


KEEPING_UP = window((100, 100, 80), (120, 110, 70), (150, 120, 60))


@pytest.mark.parametrize(
    ("commits", "lag", "now", "expected"),
    [
        # the lag shrinks and the last commit is 10 s old, within the window's 20 s span
        (KEEPING_UP, 50, 130.0, Status.OK),
        # the same commits 80 s later: no commit for longer than the window spans
        (KEEPING_UP, 50, 200.0, Status.STOP),
        # exactly the span since the last commit is not yet longer than it
        (KEEPING_UP, 50, 140.0, Status.OK),
        # one commit spans 0 s: any time since it, with lag, is STOP
        (window((100, 100, 80)), 50, 100.5, Status.STOP),
        (window((100, 100, 80), (100, 110, 90), (100, 120, 95)), 95, 130.0, Status.STALL),
        (window((100, 100, 80), (120, 110, 80), (130, 120, 90)), 95, 130.0, Status.WARN),
        (window((150, 100, 80), (120, 110, 110), (130, 120, 90)), 90, 130.0, Status.REWIND),
        # a rewind is the worst: it wins over a stop too
        (window((150, 100, 80), (120, 110, 110)), 90, 500.0, Status.REWIND),
        # a stop wins over a stall
        (window((100, 100, 80), (100, 110, 90)), 90, 500.0, Status.STOP),
        # caught up at some commit of the window, or now: OK whatever else holds
        (window((100, 100, 0), (100, 110, 30), (100, 120, 60)), 60, 500.0, Status.OK),
        (window((150, 100, 80), (120, 110, 110)), 0, 500.0, Status.OK),
        # no commit seen yet
        ([], 70, 500.0, Status.OK),
    ],
)
def test_partition_status_worked_examples(
    commits: list[Commit], lag: int, now: float, expected: Status
) -> None:
    assert partition_status(commits, lag, now) == expected


def test_the_group_is_its_worst_partition() -> None:
    assert Status.OK < Status.WARN < Status.STALL < Status.STOP < Status.REWIND
    assert group_status([Status.OK, Status.STOP, Status.WARN]) == Status.STOP
    assert group_status([Status.STALL, Status.REWIND, Status.STOP]) == Status.REWIND
    assert group_status([]) == Status.OK


def test_the_window_keeps_the_newest_commits_at_least_min_distance_apart() -> None:
    w: list[Commit] = []
    for i in range(WINDOW + 3):
        add_commit(w, Commit(i, 10.0 * i, 5))
    assert [c.offset for c in w] == list(range(3, WINDOW + 3))
    newest = w[-1]
    add_commit(w, Commit(99, newest.time + MIN_DISTANCE_S / 2, 1))
    assert len(w) == WINDOW and w[-1] == Commit(99, newest.time + MIN_DISTANCE_S / 2, 1)
    # a second after the replacement: added, the oldest dropped
    add_commit(w, Commit(100, newest.time + MIN_DISTANCE_S * 1.5, 0))
    assert [c.offset for c in w] == [*range(4, WINDOW + 2), 99, 100]
