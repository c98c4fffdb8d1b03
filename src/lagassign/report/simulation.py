"""A drain simulation as tables, JSON and charts (total lag; per-member lag per strategy)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from lagassign.report.colors import strategy_color
from lagassign.simulate.results import Rebalance, Run, Simulation
from lagassign.simulate.scenario import Join

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TOTAL_PNG = "drain-total.png"
MEMBERS_PNG = "drain-members.png"


def _seconds(value: float) -> str:
    return f"{value:,.0f} s" if value >= 100 else f"{value:,.3g} s"


def _drain(sim: Simulation, run: Run) -> str:
    """When ``run`` drained, as the table, the chart legend and the panel titles all say it: a
    run that has not drained by the horizon may still drain after it, so not "never"."""
    if run.drain_time is None:
        return f"not within {_seconds(sim.scenario.horizon)}"
    return _seconds(run.drain_time)


def _ratio(sim: Simulation, run: Run) -> str:
    ratio = sim.vs_ideal(run)
    return "-" if ratio is None else f"{ratio:.2f}"


def summary_title(sim: Simulation) -> str:
    sc = sim.scenario
    joins = sum(isinstance(e, Join) for e in sc.events)
    leaves = len(sc.events) - joins
    ideal = "never" if sim.ideal is None else _seconds(sim.ideal)
    return (
        f"{sc.name}\n"
        f"{len(sc.group.members)} members (+{joins} joining, -{leaves} leaving), "
        f"{len(sc.partitions())} partitions, backlog {sim.backlog:,.0f}, "
        f"produce {sim.produce_rate:,.0f}/s\n"
        f"capacity {sim.capacity:,.0f}/s, ideal drain {ideal}; step {sc.dt:g} s, "
        f"horizon {sc.horizon:g} s, "
        f"rebalance pause {sc.rebalance_pause:g} s"
    )


def summary_table(sim: Simulation) -> Table:
    """Strategies side by side: drain time, against the ideal, peak lags, moves."""
    table = Table(title=summary_title(sim), title_justify="left")
    for name, justify in [
        ("strategy", "left"),
        ("protocol", "left"),
        ("drained at", "right"),
        ("÷ ideal", "right"),
        ("peak total lag", "right"),
        ("peak member lag", "right"),
        ("moves", "right"),
    ]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for run in sim.runs:
        table.add_row(
            run.strategy,
            run.protocol.value,
            _drain(sim, run),
            _ratio(sim, run),
            f"{run.peak_total_lag:,.0f}",
            f"{run.peak_member_lag:,.0f}",
            str(run.moves),
        )
    return table


def _key(r: Rebalance) -> tuple[float, tuple[str, ...]]:
    return r.start, r.causes


def rebalances_table(sim: Simulation) -> Table:
    """Per strategy, per rebalance: partitions moved and how long until all are consumed again.

    The initial assignment is left out unless it moved something (owned partitions given).
    """
    keys = sorted(
        {_key(r) for run in sim.runs for r in run.rebalances if r.causes != ("start",) or r.moved}
    )
    table = Table(
        title="rebalances: partitions moved, time until every partition is consumed again "
        "(partitions withheld for a second round)",
        title_justify="left",
    )
    table.add_column("strategy")
    for start, causes in keys:
        table.add_column(f"{_seconds(start)}: {', '.join(causes)}", justify="right")
    for run in sim.runs:
        cells = []
        for key in keys:
            found = [r for r in run.rebalances if _key(r) == key]
            if not found:
                cells.append("-")
                continue
            r = found[0]
            cell = f"{r.moved} moved, {_seconds(r.end - r.start)}"
            if r.withheld:
                cell += f" ({r.withheld} withheld)"
            cells.append(cell)
        table.add_row(run.strategy, *cells)
    return table


def _rebalance_json(r: Rebalance) -> dict[str, Any]:
    return {
        "start": r.start,
        "end": r.end,
        "causes": list(r.causes),
        "rounds": r.rounds,
        "moved": r.moved,
        "withheld": r.withheld,
    }


def simulation_json(sim: Simulation, *, series: bool = True) -> dict[str, Any]:
    """The simulation as JSON-ready data; ``series`` adds the sampled lag over time."""
    sc = sim.scenario
    out: dict[str, Any] = {
        "scenario": sc.name,
        "group": sc.group.id,
        "members": len(sc.group.members),
        "partitions": len(sc.partitions()),
        "backlog": sim.backlog,
        "produce_rate": sim.produce_rate,
        "capacity": sim.capacity,
        "ideal_drain_time": sim.ideal,
        "dt": sc.dt,
        "horizon": sc.horizon,
        "rebalance_pause": sc.rebalance_pause,
        "drain_threshold": sc.drain_threshold,
        "runs": [],
    }
    for run in sim.runs:
        entry: dict[str, Any] = {
            "strategy": run.strategy,
            "protocol": run.protocol.value,
            "drain_time": run.drain_time,
            "vs_ideal": sim.vs_ideal(run),
            "peak_total_lag": run.peak_total_lag,
            "peak_member_lag": run.peak_member_lag,
            "peak_member": run.peak_member,
            "moves": run.moves,
            "rebalances": [_rebalance_json(r) for r in run.rebalances],
            "initial_lag": run.initial_lag,
            "produced": run.produced,
            "consumed": run.consumed,
            "final_lag": run.final_lag,
        }
        if series:
            entry["series"] = {
                "times": list(run.series.times),
                "total": list(run.series.total),
                "unowned": list(run.series.unowned),
                "members": {mid: list(v) for mid, v in run.series.members.items()},
            }
        out["runs"].append(entry)
    return out


# -- charts ---------------------------------------------------------------------------------


def _event_lines(ax: Any, sim: Simulation, *, labels: bool) -> None:
    for event in sim.scenario.events:
        ax.axvline(event.time, color="0.55", linestyle=":", linewidth=1)
        if labels:
            ax.annotate(
                event.describe(),
                (event.time, 0.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, 4),
                textcoords="offset points",
                rotation=90,
                va="bottom",
                fontsize=7,
                color="0.35",
            )


def _thousands(ax: Any) -> None:
    from matplotlib.ticker import FuncFormatter

    def fmt(value: float, _pos: int) -> str:
        if abs(value) >= 1e6:
            return f"{value / 1e6:g}M"
        if abs(value) >= 1e3:
            return f"{value / 1e3:g}k"
        return f"{value:g}"

    ax.yaxis.set_major_formatter(FuncFormatter(fmt))


def _x_limit(sim: Simulation) -> float:
    """Up to a little after the last drain (or the horizon when some strategy never drains)."""
    ends = [r.drain_time for r in sim.runs]
    if not ends or any(e is None for e in ends):
        return sim.scenario.horizon
    last = max(e for e in ends if e is not None)
    last = max([last, *(e.time for e in sim.scenario.events), sim.ideal or 0.0])
    return min(sim.scenario.horizon, last * 1.1 + sim.scenario.dt)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Figure, out: str | Path) -> Path:
    out = Path(out)
    try:
        fig.savefig(out, dpi=110)
    finally:
        _pyplot().close(fig)
    return out


def total_figure(sim: Simulation) -> Figure:
    """Total lag over time, one line per strategy in its colour (:mod:`lagassign.report.colors`);
    events dotted, the ideal drain dashed."""
    fig: Figure
    fig, ax = _pyplot().subplots(figsize=(11, 5.2))
    for run in sim.runs:
        color = strategy_color(run.strategy)
        ax.plot(
            run.series.times,
            run.series.total,
            color=color,
            linewidth=1.6,
            label=f"{run.strategy} (drained: {_drain(sim, run)})",
        )
        if run.drain_time is not None:
            ax.plot([run.drain_time], [0], marker="o", color=color, clip_on=False)
    if sim.ideal is not None and sim.ideal <= sim.scenario.horizon:
        ax.axvline(sim.ideal, color="black", linestyle="--", linewidth=1)
        ax.annotate(
            f"ideal {_seconds(sim.ideal)}",
            (sim.ideal, 0.5),
            xycoords=("data", "axes fraction"),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=8,
        )
    _event_lines(ax, sim, labels=True)
    ax.set_xlim(0, _x_limit(sim))
    ax.set_ylim(bottom=0)
    _thousands(ax)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("total lag (messages)")
    ax.set_title(f"{sim.scenario.name}: total lag", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def plot_total(sim: Simulation, out: str | Path) -> Path:
    """:func:`total_figure` written to ``out`` (PNG)."""
    return _save(total_figure(sim), out)


def members_figure(sim: Simulation) -> Figure:
    """Small multiples, one panel per strategy: each member's lag over time, same scales."""
    from matplotlib.lines import Line2D

    plt = _pyplot()
    n = len(sim.runs)
    cols = min(n, 3) if n != 4 else 2
    rows = math.ceil(n / cols)
    fig: Figure
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.2 * cols, 3.4 * rows), sharex=True, sharey=True, squeeze=False
    )
    member_ids = list(sim.runs[0].series.members) if sim.runs else []
    cmap = plt.get_cmap("tab20" if len(member_ids) > 10 else "tab10")
    color = {mid: cmap(i % cmap.N) for i, mid in enumerate(member_ids)}
    for ax, run in zip(axes.flat, sim.runs, strict=False):
        s = run.series
        for mid, values in s.members.items():
            ys = [math.nan if v is None else v for v in values]
            ax.plot(s.times, ys, color=color.get(mid, "0.3"), linewidth=1.1)
        ax.plot(s.times, s.unowned, color="black", linestyle="--", linewidth=0.8)
        _event_lines(ax, sim, labels=False)
        moves = "1 move" if run.moves == 1 else f"{run.moves} moves"
        ax.set_title(f"{run.strategy} — drained: {_drain(sim, run)}, {moves}", fontsize=9)
        ax.grid(alpha=0.3)
        _thousands(ax)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("member lag")
    for ax in axes[-1, :]:
        ax.set_xlabel("time (s)")
    axes.flat[0].set_xlim(0, _x_limit(sim))
    # Scaled to the members' lag: during an eager rebalance nobody owns anything, and the
    # unowned line (the whole backlog) would flatten every member's line if it set the scale.
    peak = max((run.peak_member_lag for run in sim.runs), default=0.0)
    axes.flat[0].set_ylim(0, peak * 1.08 if peak > 0 else 1.0)
    handles = [Line2D([], [], color=color[mid], linewidth=1.5, label=mid) for mid in member_ids]
    handles.append(
        Line2D([], [], color="black", linestyle="--", linewidth=0.8, label="unowned (clipped)")
    )
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(len(handles), 6),
        fontsize=7,
        frameon=False,
    )
    legend_rows = math.ceil(len(handles) / 6)
    fig.suptitle(f"{sim.scenario.name}: lag each member owns (events dotted)", fontsize=10)
    fig.tight_layout(rect=(0, 0.03 + 0.025 * legend_rows, 1, 1))
    return fig


def plot_members(sim: Simulation, out: str | Path) -> Path:
    """:func:`members_figure` written to ``out`` (PNG)."""
    return _save(members_figure(sim), out)


def plot_simulation(sim: Simulation, directory: str | Path) -> list[Path]:
    """Both charts into ``directory`` (created if missing)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    return [plot_total(sim, directory / TOTAL_PNG), plot_members(sim, directory / MEMBERS_PNG)]
