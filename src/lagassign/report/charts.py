"""Bar charts of per-member lag under each strategy; the monitor's lag of its top groups over
time."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: never needs a display

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from lagassign.plan import GroupPlans, shown_plans
from lagassign.report.colors import series_color, strategy_color
from lagassign.report.member_ids import member_labels


def plan_figure(groups: Sequence[GroupPlans]) -> Figure:
    """One panel per group: member lag per strategy (where its rounds settle: a cooperative
    first round leaves moving partitions to nobody) as grouped bars in each strategy's colour
    (:mod:`lagassign.report.colors`), lower bound dashed, the legend to the right of the bars;
    members labelled as the tables label them."""
    fig, axes = plt.subplots(len(groups), 1, figsize=(12, 3.8 * len(groups)), squeeze=False)
    for ax, gp in zip(axes[:, 0], groups, strict=True):
        rows = shown_plans(gp)
        members = [m.id for m in gp.group.members]
        labels = member_labels(members)
        width = 0.8 / max(len(rows), 1)
        for i, plan in enumerate(rows):
            lag = {m.member_id: m.lag for m in plan.metrics.members}
            xs = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(members))]
            ax.bar(
                xs,
                [lag[m] for m in members],
                width,
                label=plan.strategy,
                color=strategy_color(plan.strategy),
            )
        if rows:
            ax.axhline(
                rows[0].metrics.lower_bound,
                color="black",
                linestyle="--",
                linewidth=1,
                label="lower bound",
            )
        ax.set_xticks(range(len(members)))
        ax.set_xticklabels([labels[m] for m in members], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("member lag (messages)")
        ax.set_title(f"group {gp.group.id}")
        if labels.note:
            ax.set_xlabel(labels.note, fontsize=8)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig


def plot_plans(groups: Sequence[GroupPlans], out: str | Path) -> Path:
    """:func:`plan_figure` written to ``out`` (PNG)."""
    out = Path(out)
    fig = plan_figure(groups)
    try:
        fig.savefig(out, dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    return out


#: one point of a group's lag over time: (sample time, total lag, largest lag in seconds or None)
LagPoint = tuple[datetime, int, float | None]


def lag_history_figure(series: Mapping[str, Sequence[LagPoint]]) -> Figure:
    """Two panels over time (UTC), one line per group in :func:`series_color`'s order (the
    legend lists them in that order): the total lag in messages above, the largest lag in
    seconds below (a gap where it is not known)."""
    fig, (lag_ax, seconds_ax) = plt.subplots(2, 1, figsize=(11, 5.6), sharex=True)
    for i, (group, points) in enumerate(series.items()):
        times = [t for t, _, _ in points]
        color = series_color(i)
        lag_ax.plot(times, [lag for _, lag, _ in points], marker=".", color=color, label=group)
        seconds = [float("nan") if s is None else s for _, _, s in points]
        seconds_ax.plot(times, seconds, marker=".", color=color)
    lag_ax.set_ylabel("total lag (messages)")
    lag_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    seconds_ax.set_ylabel("largest lag (seconds)")
    seconds_ax.set_xlabel("time (UTC)")
    seconds_ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S"))  # type: ignore[no-untyped-call]
    for ax in (lag_ax, seconds_ax):
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    lag_ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig


def figure_svg(fig: Figure) -> str:
    """``fig`` as an ``<svg>`` element to put inside a page (its text kept as text; the same
    figure gives the same text), closed."""
    buffer = io.StringIO()
    try:
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "lagassign"}):
            fig.savefig(buffer, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]
