"""One colour per strategy, the same in every chart: ``plan --plot``, the simulator's charts and
the fleet report; one per group status, and the lines of a chart over time, for the monitor's
live report.

The colours go by name, not by a strategy's place in what a chart shows, so ``balanced`` is
green whichever strategies ``--strategies`` picks. They are the fleet report's first colours:
the current assignment grey, ``lag`` red, ``balanced`` green, Kafka's assignors and ``fair``
Matplotlib's tab10 blue, orange, purple, brown and pink.
"""

from __future__ import annotations

import zlib

from lagassign.plan import CURRENT

STRATEGY_COLORS: dict[str, str] = {
    CURRENT: "#7f7f7f",
    "range": "#1f77b4",
    "roundrobin": "#ff7f0e",
    "sticky": "#9467bd",
    "cooperative-sticky": "#8c564b",
    "fair": "#e377c2",
    "lag": "#d62728",
    "balanced": "#2ca02c",
}
#: for strategies registered after these: one by the name's checksum, so it never changes
_SPARE = ("#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94")


def strategy_color(strategy: str) -> str:
    """The colour of ``strategy`` (or of ``current``, the members' own assignment)."""
    known = STRATEGY_COLORS.get(strategy)
    if known is not None:
        return known
    return _SPARE[zlib.crc32(strategy.encode("utf-8", "surrogatepass")) % len(_SPARE)]

#: a group's status (lagassign.status) in the monitor's live report: green for OK, then
#: yellow, orange and red as it gets worse, purple for a rewind
STATUS_COLORS: dict[str, str] = {
    "OK": "#2ca02c",
    "WARN": "#e6b000",
    "STALL": "#ff7f0e",
    "STOP": "#d62728",
    "REWIND": "#9467bd",
}
#: the lines of a chart that follows several groups over time: Matplotlib's tab10, in order
SERIES_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def series_color(index: int) -> str:
    """The colour of a chart's ``index``-th line (the 11th has the first's again)."""
    return SERIES_COLORS[index % len(SERIES_COLORS)]
