"""One colour per strategy, the same in every chart: ``plan --plot``, the simulator's charts and
the fleet report.

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
