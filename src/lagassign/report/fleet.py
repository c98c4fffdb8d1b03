"""The fleet report: ``report.html`` and its PNG charts, from the pipeline's tables.

Takes plain records (rows of the ``groups`` and ``members`` tables), so it needs neither Spark
nor pandas. Charts:

* ``imbalance.png``: across the fleet, the distribution of imbalance (largest member lag ÷
  lower bound) now and under each strategy;
* ``worst-groups.png``: the worst groups first (by imbalance now, among groups whose busiest
  member has at least :data:`MIN_EXCESS` messages beyond the lower bound), their imbalance now
  and under ``lag`` and ``balanced``;
* ``group-NN-<id>.png``: for each of those worst groups, every member's lag now and under
  ``lag`` and ``balanced``, the lower bound dashed.
"""

from __future__ import annotations

import html
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: never needs a display

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from lagassign.report.colors import strategy_color
from lagassign.report.text import NEVER, UNKNOWN, duration

#: the name of the members' current assignment in the tables (lagassign.plan.CURRENT)
CURRENT = "current"
#: strategies the per-group charts compare with the current assignment, when planned
COMPARED = ("lag", "balanced")
#: a plan within this fraction of the lower bound counts as optimal
NEAR = 0.01
WORST_ROWS = 25
#: groups whose busiest member has fewer messages than this beyond the bound are not ranked
MIN_EXCESS = 1000

#: horizontal box plots: ``orientation`` since Matplotlib 3.10, ``vert`` before
_HORIZONTAL: dict[str, Any] = (
    {"orientation": "horizontal"}
    if tuple(int(x) for x in matplotlib.__version__.split(".")[:2]) >= (3, 10)
    else {"vert": False}
)


@dataclass(frozen=True, slots=True)
class GroupResult:
    """A row of the ``groups`` table."""

    group: str
    strategy: str
    members: int
    partitions: int
    total_lag: int
    max_member_lag: int
    lower_bound: float
    imbalance: float
    count_spread: int
    moves: int
    #: partitions the plan gives nobody (a cooperative first round withholds those that move)
    unassigned: int
    catch_up_s: float | None
    #: produce rates known: balanced planned for catch-up time (None in older outputs)
    time_aware: bool | None = None
    #: members this plan leaves behind for good; None without rates
    falls_behind: int | None = None

    @property
    def excess(self) -> float:
        """Messages the busiest member has beyond the lower bound."""
        return self.max_member_lag - self.lower_bound

    @property
    def planned(self) -> bool:
        return self.members > 0 and self.total_lag > 0


@dataclass(frozen=True, slots=True)
class MemberResult:
    """A row of the ``members`` table."""

    group: str
    strategy: str
    member_id: str
    partitions: int
    lag: int


def compared(strategies: Sequence[str]) -> list[str]:
    """The strategies shown beside the current assignment: lag and balanced when planned,
    else the first two planned."""
    chosen = [s for s in COMPARED if s in strategies]
    return chosen or list(strategies[:2])


def _by_group(groups: Iterable[GroupResult]) -> dict[str, dict[str, GroupResult]]:
    out: dict[str, dict[str, GroupResult]] = {}
    for g in groups:
        out.setdefault(g.group, {})[g.strategy] = g
    return out


def worst_groups(groups: Iterable[GroupResult], strategies: Sequence[str]) -> list[str]:
    """Group ids, worst first: by imbalance now (or, for groups without a current assignment,
    under the first compared strategy), then by excess lag. Groups whose busiest member has
    less than :data:`MIN_EXCESS` messages beyond the lower bound are left out: however
    lopsided, a few messages do not matter."""
    first = compared(strategies)[0] if strategies else CURRENT
    ranked = []
    for gid, plans in _by_group(groups).items():
        now = plans.get(CURRENT) or plans.get(first)
        if now is None or not now.planned or now.excess < MIN_EXCESS:
            continue
        ranked.append((-now.imbalance, -now.excess, gid))
    return [gid for *_, gid in sorted(ranked)]


def charted_groups(
    groups: Iterable[GroupResult], strategies: Sequence[str], count: int
) -> list[str]:
    """The groups that get a chart of their own: the ``count`` worst."""
    return worst_groups(groups, strategies)[:count]


# ------------------------------------------------------------------------------------------------
# numbers


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


def _lag(n: float) -> str:
    """A message count, short: 950, 12k, 3.2M, 162M."""
    if n >= 10_000_000:
        return f"{n / 1e6:,.0f}M"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n / 1e3:,.0f}k"
    return f"{n:,.0f}"


@dataclass(frozen=True, slots=True)
class StrategySummary:
    strategy: str
    groups: int
    median: float
    p90: float
    worst: float
    near: float
    moves: int
    catch_up: float | None
    #: groups where this plan leaves some member behind for good
    behind: int
    #: partitions the plans give nobody, over the fleet (a first round's withheld ones)
    unassigned: int = 0
    #: a first round, whose rounds settle on the strategy's own row
    first_round: bool = False
    #: every group's imbalance
    ratios: tuple[float, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.strategy}, round 1" if self.first_round else self.strategy


def settled_view(
    groups: Iterable[GroupResult], settled: Iterable[GroupResult]
) -> list[GroupResult]:
    """``groups`` with every plan whose first round withholds partitions replaced by where its
    rounds settle (the ``settled`` table's row of the same group and strategy)."""
    later = {(g.group, g.strategy): g for g in settled}
    return [later.get((g.group, g.strategy), g) for g in groups]


def _never_settles(settled: Iterable[GroupResult]) -> str:
    """The report's sentence on the groups whose rounds never settle (``settled`` rows that
    still leave partitions unassigned, :func:`lagassign.plan.settle`), if there are any."""
    never = Counter(g.strategy for g in settled if g.unassigned)
    if not never:
        return ""
    counts = ", ".join(f"{strategy} on {n:,}" for strategy, n in sorted(never.items()))
    return (
        f" The rounds never settle in {sum(never.values()):,} group(s) ({counts}): they come "
        "back to an assignment they made before, so the group would rebalance for ever; there "
        "the settled row is the round that repeats an earlier one, and its unassigned "
        "partitions are those that round withholds. Kafka's rack-aware "
        "CooperativeStickyAssignor does this on some groups, and ours assigns as it does in "
        "every round."
    )


def _summary(strategy: str, plans: Sequence[GroupResult], first_round: bool) -> StrategySummary:
    ratios = [g.imbalance for g in plans]
    known = [g.catch_up_s for g in plans if g.catch_up_s is not None]
    return StrategySummary(
        strategy=strategy,
        groups=len(plans),
        median=statistics.median(ratios),
        p90=_quantile(ratios, 0.9),
        worst=max(ratios),
        near=sum(1 for r in ratios if r <= 1 + NEAR) / len(ratios),
        moves=sum(g.moves for g in plans),
        catch_up=statistics.median(known) if known else None,
        behind=sum(1 for g in plans if g.falls_behind),
        unassigned=sum(g.unassigned for g in plans),
        first_round=first_round,
        ratios=tuple(ratios),
    )


def summarize(
    groups: Iterable[GroupResult],
    strategies: Sequence[str],
    settled: Iterable[GroupResult] = (),
) -> list[StrategySummary]:
    """A row per strategy (the current assignment first) over the groups with members and lag:
    where its rounds settle; for a strategy whose first round withholds partitions somewhere
    (``settled`` has its rows), a second row of its first rounds."""
    groups = list(groups)
    settled = list(settled)
    rounds = {g.strategy for g in settled}
    final = settled_view(groups, settled)
    rows = []
    for strategy in [CURRENT, *strategies]:
        plans = [g for g in final if g.strategy == strategy and g.planned]
        if not plans:
            continue
        rows.append(_summary(strategy, plans, first_round=False))
        if strategy in rounds:
            first = [g for g in groups if g.strategy == strategy and g.planned]
            rows.append(_summary(strategy, first, first_round=True))
    return rows


# ------------------------------------------------------------------------------------------------
# charts


def _ratio_axis(ax: Axes, top: float, axis: str = "x") -> None:
    ticks = [t for t in (1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100) if t <= top * 1.05] + []
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    target.set_major_locator(FixedLocator(ticks))
    target.set_minor_locator(NullLocator())
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))


def imbalance_chart(summary: Sequence[StrategySummary], path: Path) -> Path:
    """Box plots of imbalance per strategy (current first), log scale: where each strategy's
    rounds settle (first rounds are in the table, with what they leave unassigned)."""
    summary = [s for s in summary if not s.first_round]
    order = [s.strategy for s in summary]
    data = [list(s.ratios) for s in summary]
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(order) + 1.6))
    positions = list(range(len(order), 0, -1))
    box = ax.boxplot(
        data,
        positions=positions,
        **_HORIZONTAL,
        widths=0.6,
        patch_artist=True,
        showfliers=True,
        flierprops={"marker": ".", "markersize": 3, "alpha": 0.4},
        medianprops={"color": "black"},
    )
    for patch, strategy in zip(box["boxes"], order, strict=True):
        patch.set_facecolor(strategy_color(strategy))
        patch.set_alpha(0.75)
    top = max((max(d) for d in data if d), default=2.0)
    ax.set_xlim(0.98, max(top * 1.15, 1.3))
    _ratio_axis(ax, top)
    ax.set_yticks(positions)
    ax.set_yticklabels(
        [f"{s.strategy}\nmedian {s.median:.2f}×, {s.near:.0%} optimal" for s in summary], fontsize=8
    )
    ax.axvline(1, color="black", linewidth=0.8, linestyle="--")
    ax.set_xlabel("largest member lag ÷ lower bound (1× is as good as can be)")
    ax.set_title(f"Imbalance across the fleet ({len(data[0]) if data else 0} groups with lag)")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def worst_chart(
    worst: Sequence[str],
    plans: Mapping[str, Mapping[str, GroupResult]],
    shown: Sequence[str],
    path: Path,
) -> Path:
    """Writes :func:`worst_figure` to ``path``."""
    return _save(worst_figure(worst, plans, shown), path)


def worst_figure(
    worst: Sequence[str],
    plans: Mapping[str, Mapping[str, GroupResult]],
    shown: Sequence[str],
) -> Figure:
    """Imbalance of the worst groups (worst at the top) now and under the compared strategies."""
    series = [CURRENT, *shown]
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(worst) * max(1, len(series) / 2.5) + 1.4))
    height = 0.8 / len(series)
    top = 1.0
    for i, strategy in enumerate(series):
        ys, xs = [], []
        for j, gid in enumerate(worst):
            g = plans[gid].get(strategy)
            if g is None:
                continue
            ys.append(len(worst) - j + (len(series) / 2 - i - 0.5) * height)
            xs.append(g.imbalance)
        top = max([top, *xs])
        # from the left edge, not from 1: a plan at the bound (1.00×) keeps a visible bar
        ax.barh(
            ys,
            [x - _LEFT for x in xs],
            height,
            left=_LEFT,
            label=strategy,
            color=strategy_color(strategy),
        )
        for x, y in zip(xs, ys, strict=True):
            ax.text(x * 1.01, y, f"{x:.2f}×", va="center", fontsize=6, color="#333333")
    ax.set_xscale("log")
    ax.set_xlim(_LEFT, max(top * 1.25, 1.3))
    _ratio_axis(ax, top)
    ax.axvline(1, color="black", linewidth=0.8, linestyle="--")
    ax.set_yticks([len(worst) - j for j in range(len(worst))])
    ax.set_yticklabels(
        [f"{gid}  ({_lag(plans[gid][next(iter(plans[gid]))].total_lag)} lag)" for gid in worst],
        fontsize=8,
    )
    ax.set_xlabel("largest member lag ÷ lower bound (dashed: 1×, as good as can be)")
    ax.set_title("The worst groups now, worst first")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


#: where the worst groups' bars start, left of 1× (log scale: no bar can start at 0)
_LEFT = 0.9


def group_chart(
    gid: str,
    plans: Mapping[str, GroupResult],
    members: Sequence[MemberResult],
    shown: Sequence[str],
    path: Path,
) -> Path:
    """Every member's lag now and under the compared strategies; the lower bound dashed."""
    series = [s for s in [CURRENT, *shown] if s in plans]
    ids = sorted({m.member_id for m in members})
    lag = {(m.strategy, m.member_id): m.lag for m in members}
    fig, ax = plt.subplots(figsize=(min(14, 3 + 0.5 * len(ids) * len(series) / 2), 4))
    width = 0.8 / max(len(series), 1)
    for i, strategy in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(ids))]
        g = plans[strategy]
        ax.bar(
            xs,
            [lag.get((strategy, m), 0) for m in ids],
            width,
            label=f"{strategy}: max {_lag(g.max_member_lag)} ({g.imbalance:.2f}×)",
            color=strategy_color(strategy),
        )
    bound = next(iter(plans.values())).lower_bound
    ax.axhline(
        bound, color="black", linestyle="--", linewidth=1, label=f"lower bound {_lag(bound)}"
    )
    ax.set_xticks(range(len(ids)))
    ax.set_xticklabels([_short(m) for m in ids], rotation=30, ha="right", fontsize=7)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _lag(v)))
    ax.set_ylabel("member lag (messages)")
    any_plan = next(iter(plans.values()))
    ax.set_title(
        f"group {gid}: {any_plan.members} members, {any_plan.partitions} partitions, "
        f"total lag {_lag(any_plan.total_lag)}",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def _short(member_id: str, limit: int = 28) -> str:
    return member_id if len(member_id) <= limit else member_id[: limit - 1] + "…"


def _file_name(index: int, gid: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", gid)[:60]
    return f"group-{index:02d}-{safe}.png"


# ------------------------------------------------------------------------------------------------
# the page

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f6f6f6; } td:first-child, th:first-child { text-align: left; }
.facts td { text-align: left; } img { max-width: 100%; margin: 0.5em 0; }
.note { color: #666; font-size: 0.9em; }
.behind { color: #c00; font-weight: bold; }
"""


#: a table cell: its text, or its text and a CSS class (``behind``: red)
Cell = str | tuple[str, str]


def _cell(c: Cell) -> str:
    text, css = (c, "") if isinstance(c, str) else c
    return f"<td class='{css}'>{html.escape(text)}</td>" if css else f"<td>{html.escape(text)}</td>"


def _catch_up(seconds: float | None) -> Cell:
    """A catch-up time; red when never: a member falls behind for good."""
    shown = duration(seconds)
    return (shown, "behind") if shown == NEVER else shown


def _table(header: Sequence[str], rows: Iterable[Sequence[Cell]], css: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>\n" for row in rows)
    head_row = f"<tr>{head}</tr>\n" if any(header) else ""
    return f'<table class="{css}">\n{head_row}{body}</table>'


#: a fact of the page: its text, or what gives it when the page is written (the run time)
Fact = str | Callable[[], str]


def _fleet_counts(
    plans: Mapping[str, Mapping[str, GroupResult]],
    any_plan: Mapping[str, GroupResult],
    partitions: Mapping[str, int] | None,
) -> str:
    """The fleet in a sentence: groups, partitions (all of them, and how many the strategies
    assign, the difference explained), lag."""
    read = sum(g.partitions for g in any_plan.values())
    no_members = [gid for gid, g in any_plan.items() if g.members == 0]
    no_current = sum(1 for p in plans.values() if CURRENT not in p)
    fleet_lag = sum(g.total_lag for g in any_plan.values())
    if partitions is None:
        counted = f"{read:,} partitions their members read"
    else:
        total = sum(partitions.values())
        memberless = sum(partitions.get(gid, 0) for gid in no_members)
        unread = total - read - memberless
        others = [f"{memberless:,} belong to the groups without members"] if memberless else []
        others += [f"{unread:,} to topics no member subscribes"] if unread else []
        counted = f"{total:,} partitions"
        if others:
            counted += (
                f" ({read:,} in topics their members read, which the strategies assign and the "
                f"tables below count; the other {total - read:,}: {' and '.join(others)})"
            )
    return (
        f"{len(plans)} groups, {counted}; total lag {fleet_lag:,} messages in the partitions "
        f"members read. {len(no_members)} groups have no members; {no_current} have no current "
        "assignment to compare with."
    )


def write_report(
    folder: Path,
    groups: Sequence[GroupResult],
    members: Sequence[MemberResult],
    *,
    strategies: Sequence[str],
    facts: Mapping[str, Fact] | None = None,
    charts: int | None = None,
    partitions: Mapping[str, int] | None = None,
    settled: Sequence[GroupResult] = (),
) -> Path:
    """Writes ``report.html`` and its PNGs into ``folder``; ``members`` are those of the groups
    to chart (:func:`charted_groups`); ``partitions``: every group's partitions (all of them,
    read or not); ``settled``: where the rounds settle for plans whose first round withholds
    (the ``settled`` table). Facts given as functions are asked last, once the charts are
    drawn. Returns the report's path."""
    folder = Path(folder)
    final = settled_view(groups, settled)
    plans = _by_group(final)
    shown = compared(strategies)
    summary = summarize(groups, strategies, settled)
    worst = worst_groups(final, strategies)
    first = strategies[0] if strategies else CURRENT
    any_plan = {gid: p.get(first) or next(iter(p.values())) for gid, p in plans.items()}

    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>lagassign fleet report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Consumer-group lag and assignment plans</h1>",
        f"<p class='note'>{html.escape(_fleet_counts(plans, any_plan, partitions))}</p>",
    ]
    facts_at = len(parts)

    parts.append("<h2>Imbalance across the fleet</h2>")
    parts.append(
        "<p class='note'>Imbalance is the largest member lag divided by the lower bound "
        "(the largest of: total lag ÷ members, the largest partition lag, and for each set of "
        "members the lag of the topics only they read ÷ their number): 1× is as good as any "
        "assignment can be. Groups without members or lag are left out. Optimal: within "
        f"{NEAR:.0%} of the bound. Moves: partitions that leave their current owner, summed "
        "over the fleet.</p>"
    )
    timed = sum(1 for g in any_plan.values() if g.time_aware)
    parts.append(
        "<p class='note'>Catch-up: the predicted time until a plan's slowest member has read its "
        "backlog while its partitions' produce rate keeps coming in, backlog ÷ (capacity − "
        "inflow), from measured rates (capacity: a saturated member's consume rate, the median "
        "of those for the others, else an equal share of the group's); the median over the "
        f"groups with rates. {NEVER} (red): some member takes in at least what it can read and "
        f"falls behind for good; {UNKNOWN}: no rate known. Falls behind: groups where the plan "
        f"does that. {timed} of {len(any_plan)} groups have produce rates; balanced planned them "
        "for catch-up time (marked † below) and the others for lag.</p>"
    )
    parts.append(
        "<p class='note'>Each strategy's row is the assignment its rebalance rounds settle on. "
        "Under the cooperative protocol (cooperative-sticky) a partition that moves goes to "
        "nobody while its owner still consumes it: the first round (the row “…, round 1”, "
        "and the tables groups, plans and members) leaves those unassigned, and the next "
        "rounds hand them over (the table settled). Unassigned: partitions the plans give "
        f"nobody, summed over these groups.{_never_settles(settled)}</p>"
    )
    parts.append(
        _table(
            [
                "strategy",
                "groups",
                "median",
                "p90",
                "worst",
                "optimal",
                "moves",
                "median catch-up",
                "falls behind",
                "unassigned",
            ],
            [
                (
                    s.label,
                    f"{s.groups:,}",
                    f"{s.median:.2f}×",
                    f"{s.p90:.2f}×",
                    f"{s.worst:.2f}×",
                    f"{s.near:.0%}",
                    f"{s.moves:,}" if s.strategy != CURRENT else "–",
                    _catch_up(s.catch_up),
                    (f"{s.behind:,}", "behind") if s.behind else "0",
                    f"{s.unassigned:,}" if s.strategy != CURRENT else "–",
                )
                for s in summary
            ],
        )
    )
    if summary:
        imbalance_chart(summary, folder / "imbalance.png")
        parts.append("<img src='imbalance.png' alt='imbalance across the fleet'>")

    if worst:
        parts.append("<h2>The worst groups first</h2>")
        parts.append(
            "<p class='note'>Ranked by imbalance now (groups without a current assignment: "
            f"under {shown[0]}), among groups whose busiest member has at least "
            f"{MIN_EXCESS:,} messages beyond the lower bound. †: planned for catch-up time; red: "
            f"{shown[-1]} leaves a member behind for good.</p>"
        )
        header = ["group", "members", "partitions", "total lag", "lower bound", "now"]
        header += [f"{s}" for s in shown] + [f"{shown[-1]} moves", f"catch-up now → {shown[-1]}"]
        rows: list[list[Cell]] = []
        for gid in worst[:WORST_ROWS]:
            p = plans[gid]
            now = p.get(CURRENT)
            base = now or p[shown[0]]
            last = p.get(shown[-1])
            row: list[Cell] = [
                f"{gid} †" if base.time_aware else gid,
                str(base.members),
                str(base.partitions),
                f"{base.total_lag:,}",
                f"{base.lower_bound:,.0f}",
                f"{_lag(now.max_member_lag)} ({now.imbalance:.2f}×)" if now else "–",
            ]
            for s in shown:
                g = p.get(s)
                row.append(f"{_lag(g.max_member_lag)} ({g.imbalance:.2f}×)" if g else "–")
            row.append(str(last.moves) if last else "–")
            after = last.catch_up_s if last else None
            row.append(
                (
                    f"{duration(now.catch_up_s if now else None)} → {duration(after)}",
                    "behind" if last and last.falls_behind else "",
                )
            )
            rows.append(row)
        parts.append(_table(header, rows))
        parts.append(f"<p class='note'>{html.escape(_worst_legend(shown))}</p>")
        worst_chart(worst[:15], plans, shown, folder / "worst-groups.png")
        parts.append("<img src='worst-groups.png' alt='the worst groups'>")

    member_groups: dict[str, list[MemberResult]] = {}
    for m in members:
        member_groups.setdefault(m.group, []).append(m)
    charted = [gid for gid in worst if gid in member_groups][: charts or len(member_groups)]
    if charted:
        parts.append("<h2>Member lag in the worst groups</h2>")
        parts.append(
            f"<p class='note'>Each member's lag now and under {' and '.join(shown)}; the dashed "
            "line is the lower bound.</p>"
        )
        for i, gid in enumerate(charted, start=1):
            name = _file_name(i, gid)
            group_chart(gid, plans[gid], member_groups[gid], shown, folder / name)
            parts.append(f"<img src='{html.escape(name)}' alt='group {html.escape(gid)}'>")
    parts.append(
        "<p class='note'>Tables: partitions, plans, members, groups (Parquet) beside this "
        "page; see docs/pipeline.md.</p></body></html>"
    )
    if facts:
        known = [(k, v() if callable(v) else v) for k, v in facts.items()]
        parts.insert(facts_at, _table(["", ""], known, "facts"))
    path = folder / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _worst_legend(shown: Sequence[str]) -> str:
    """What every symbol of the worst groups' table means."""
    last = shown[-1]
    return (
        f"now, {', '.join(shown)}: the largest member lag (k: thousands, M: millions of "
        "messages) and, in brackets, its ratio to the lower bound (×). "
        f"{last} moves: partitions that leave their current owner. "
        f"Catch-up now → {last}: the predicted time until the slowest member has read its "
        f"backlog, now and under {last}. {NEVER}: some member takes in at least what it can "
        f"read and falls behind for good (red: under {last}). {UNKNOWN}: not known: the group "
        "has no produce and consume rates (or, for now, no current assignment). †: the group "
        "has produce rates: balanced plans it for catch-up time rather than lag."
    )
