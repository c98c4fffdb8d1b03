"""Bar charts of per-member lag under each strategy."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: never needs a display

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from lagassign.plan import GroupPlans, shown_plans
from lagassign.report.colors import strategy_color
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
