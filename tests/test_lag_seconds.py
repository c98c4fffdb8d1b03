"""lag_rules.lag_seconds: interpolation between log-end samples, 0 when caught up,
extrapolation before the oldest sample (and said so), unknown when the samples cannot tell;
hypothesis: against a producer at a steady rate the answer is exact."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lagassign.lag_rules import LagSeconds, lag_seconds

S = [(100.0, 1000), (110.0, 2000), (120.0, 2000), (130.0, 3000)]


@pytest.mark.parametrize(
    ("committed", "expected"),
    [
        (3000, LagSeconds(0.0)),  # at the newest end
        (3500, LagSeconds(0.0)),  # past it (the end read before the commit)
        (1000, LagSeconds(31.0)),  # exactly the oldest sample
        (1500, LagSeconds(26.0)),
        (2000, LagSeconds(11.0)),  # the end stayed at 2,000 until 120 s: it left it after
        (2500, LagSeconds(6.0)),
        (500, LagSeconds(36.0, estimated=True)),  # 500 records at 100/s before 100 s
    ],
)
def test_worked_samples(committed: int, expected: LagSeconds) -> None:
    assert lag_seconds(S, committed, 131.0) == expected


def test_unknown_without_samples_or_a_moving_end() -> None:
    assert lag_seconds([], 5, 10.0) == LagSeconds(None)
    assert lag_seconds([(1.0, 100)], 50, 10.0) == LagSeconds(None)
    assert lag_seconds([(1.0, 100), (2.0, 100)], 50, 10.0) == LagSeconds(None)
    assert lag_seconds([(1.0, 100)], 100, 10.0) == LagSeconds(0.0)


@given(
    rate=st.integers(1, 10_000),
    start=st.integers(0, 10**9),
    interval=st.integers(1, 60),
    count=st.integers(2, 60),
    behind=st.integers(1, 10**6),
)
def test_a_steady_producer_gives_the_exact_age(
    rate: int, start: int, interval: int, count: int, behind: int
) -> None:
    """Samples every ``interval`` s of a log growing ``rate``/s; a committed offset ``behind``
    records short of the newest end is ``behind / rate`` seconds old, interpolated or (older
    than the samples) extrapolated."""
    samples = [(float(i * interval), start + rate * i * interval) for i in range(count)]
    now, end = samples[-1]
    committed = end - behind
    result = lag_seconds(samples, committed, now)
    assert result.seconds == pytest.approx(behind / rate, rel=1e-9, abs=1e-6)
    assert result.estimated == (committed < start)
