"""The fleet report (lagassign.report.fleet), from rows as the pipeline's tables hold them:
what a cooperative strategy settles on beside its first round, the unassigned partitions, every
partition counted, a legend for every symbol of the worst groups' table, the whole run time,
and bars that show at 1.00×."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Any

from lagassign.report.fleet import (
    GroupResult,
    settled_view,
    summarize,
    worst_figure,
    write_report,
)
from lagassign.report.text import NEVER, UNKNOWN

STRATEGIES = ["sticky", "cooperative-sticky", "lag", "balanced"]


def row(group: str, strategy: str, imbalance: float, **kw: Any) -> GroupResult:
    values: dict[str, Any] = {
        "group": group,
        "strategy": strategy,
        "members": 3,
        "partitions": 12,
        "total_lag": 30_000,
        "max_member_lag": round(10_000 * imbalance),
        "lower_bound": 10_000.0,
        "imbalance": imbalance,
        "count_spread": 1,
        "moves": 2,
        "unassigned": 0,
        "catch_up_s": None,
        "time_aware": False,
        "falls_behind": None,
    }
    return GroupResult(**(values | kw))


def fleet() -> tuple[list[GroupResult], list[GroupResult]]:
    """Two groups with members and one without; cooperative-sticky's first round withholds 4
    partitions of g1 (looking better than sticky), its rounds settle as sticky does."""
    groups = []
    for gid, now in (("g1", 2.5), ("g2", 2.0)):
        timed = {"catch_up_s": 600.0, "falls_behind": 0, "time_aware": True} if gid == "g2" else {}
        groups += [
            row(gid, "current", now, moves=0, **timed),
            row(gid, "sticky", 1.4, **timed),
            row(gid, "lag", 1.2, **timed),
            row(gid, "balanced", 1.0, **timed),
        ]
    groups += [
        row("g1", "cooperative-sticky", 1.1, unassigned=4),
        row("g2", "cooperative-sticky", 1.4, catch_up_s=math.inf, falls_behind=1, time_aware=True),
    ]
    groups += [
        row("empty", s, 1.0, members=0, partitions=0, total_lag=0, moves=0) for s in STRATEGIES
    ]
    settled = [row("g1", "cooperative-sticky", 1.4, moves=4)]
    return groups, settled


def cells(page: str, first: str, tag: str = "td") -> list[str]:
    """The cells (``th``: the header cells) of the table row whose first cell is ``first``."""
    for tr in re.findall(r"<tr>(.*?)</tr>", page):
        found = [html.unescape(c) for c in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", tr)]
        if found and found[0] == first:
            return found
    raise AssertionError(f"no row {first!r}")


def test_a_cooperative_strategy_shows_where_its_rounds_settle() -> None:
    """cooperative-sticky's row is where its two rounds settle, not its first round (which
    leaves partitions with nobody and so looked better balanced than sticky); the first round
    has a row of its own with the partitions it leaves unassigned."""
    groups, settled = fleet()
    rows = {s.label: s for s in summarize(groups, STRATEGIES, settled)}
    assert list(rows) == [
        "current",
        "sticky",
        "cooperative-sticky",
        "cooperative-sticky, round 1",
        "lag",
        "balanced",
    ]
    assert rows["cooperative-sticky"].ratios == (1.4, 1.4) == rows["sticky"].ratios
    assert (rows["cooperative-sticky"].unassigned, rows["cooperative-sticky"].moves) == (0, 6)
    assert rows["cooperative-sticky, round 1"].ratios == (1.1, 1.4)
    assert rows["cooperative-sticky, round 1"].unassigned == 4
    assert [g.imbalance for g in settled_view(groups, settled) if g.group == "g1"] == [
        2.5,
        1.4,
        1.2,
        1.0,
        1.4,
    ]


def test_the_page(tmp_path: Path) -> None:
    groups, settled = fleet()
    asked: list[bool] = []

    def run_time() -> str:
        asked.append((tmp_path / "worst-groups.png").exists())
        return "402 s (starting Spark 15 s, reading 23 s)"

    partitions = {"g1": 12, "g2": 13, "empty": 7}
    path = write_report(
        tmp_path,
        groups,
        [],
        strategies=STRATEGIES,
        facts={"Spark": "4.3.0", "run time": run_time},
        partitions=partitions,
        settled=settled,
    )
    page = path.read_text()
    # the summary: where the rounds settle, and the first round with its unassigned count
    assert cells(page, "strategy", "th")[-1] == "unassigned"
    assert cells(page, "cooperative-sticky")[2] == "1.40×"
    assert cells(page, "cooperative-sticky")[-1] == "0"
    assert cells(page, "cooperative-sticky, round 1")[-1] == "4"
    assert cells(page, "current")[-1] == UNKNOWN
    # every partition counted, the difference from what the strategies assign explained
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "3 groups, 32 partitions (24 in topics their members read" in text
    assert "the other 8: 7 belong to the groups without members and 1 to topics no member" in text
    # the run time, asked when everything else is drawn
    assert cells(page, "run time") == ["run time", "402 s (starting Spark 15 s, reading 23 s)"]
    assert asked == [True]
    # every symbol of the worst groups' table has its legend
    worst = [cells(page, gid) for gid in ("g1", "g2 †")]
    shown = " ".join(c for r in worst for c in r)
    legend = text[text.index("now, lag, balanced:") :]
    for symbol, meaning in {
        "→": "Catch-up now → balanced:",
        UNKNOWN: f"{UNKNOWN}: not known",
        "×": "its ratio to the lower bound (×)",
        "k": "k: thousands",
        "†": "†: the group has produce rates",
    }.items():
        assert symbol in shown, symbol
        assert meaning in legend, symbol
    assert f"{NEVER}: some member takes in at least what it can read" in legend
    # every settled row here hands over what the first round withheld: no word of rounds
    # that never settle
    assert "never settle" not in text


def test_the_page_counts_the_groups_whose_rounds_never_settle(tmp_path: Path) -> None:
    """A settled row that still leaves partitions unassigned is a group whose rounds came back
    to an assignment they made before (lagassign.plan.settle): the page counts those groups
    per strategy and says what their row is."""
    groups, settled = fleet()
    settled = [row("g1", "cooperative-sticky", 1.3, moves=4, unassigned=1)]
    page = write_report(tmp_path, groups, [], strategies=STRATEGIES, settled=settled)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())).split())
    assert (
        "The rounds never settle in 1 group(s) (cooperative-sticky on 1): they come back to an "
        "assignment they made before" in text
    )
    assert cells(page.read_text(), "cooperative-sticky")[-1] == "1"


def test_bars_at_the_bound_show(tmp_path: Path) -> None:
    """A plan at 1.00× gets a bar of visible length (it had none: bars started at 1×)."""
    groups, settled = fleet()
    plans: dict[str, dict[str, GroupResult]] = {}
    for g in settled_view(groups, settled):
        plans.setdefault(g.group, {})[g.strategy] = g
    fig = worst_figure(["g1", "g2"], plans, ["lag", "balanced"])
    at_bound = [b for b in fig.axes[0].patches if math.isclose(b.get_x() + b.get_width(), 1.0)]
    assert len(at_bound) == 2  # balanced in both groups
    for bar in at_bound:
        left, right = fig.axes[0].transData.transform([(bar.get_x(), 0), (1.0, 0)])
        assert right[0] - left[0] > 10  # pixels
