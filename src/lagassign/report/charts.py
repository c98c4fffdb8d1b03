"""Bar charts of per-member lag under each strategy."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: never needs a display

import matplotlib.pyplot as plt

from lagassign.plan import GroupPlans


def plot_plans(groups: Sequence[GroupPlans], out: str | Path) -> Path:
    """One panel per group: member lag per strategy as grouped bars, lower bound dashed."""
    out = Path(out)
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, 3.8 * len(groups)), squeeze=False)
    for ax, gp in zip(axes[:, 0], groups, strict=True):
        rows = ([gp.current] if gp.current else []) + list(gp.plans)
        members = [m.id for m in gp.group.members]
        width = 0.8 / max(len(rows), 1)
        for i, plan in enumerate(rows):
            lag = {m.member_id: m.lag for m in plan.metrics.members}
            xs = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(members))]
            ax.bar(xs, [lag[m] for m in members], width, label=plan.strategy)
        if rows:
            ax.axhline(
                rows[0].metrics.lower_bound,
                color="black",
                linestyle="--",
                linewidth=1,
                label="lower bound",
            )
        ax.set_xticks(range(len(members)))
        ax.set_xticklabels(members, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("member lag (messages)")
        ax.set_title(f"group {gp.group.id}")
        ax.legend(fontsize=8, ncol=4)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
