"""The monitor's live report: ``OUT/report.html``, rewritten after every micro-batch.

One self-contained page (its chart inline SVG, no script, nothing fetched) from the rows of
the ``groups`` table (docs/monitor.md), as plain records, the last micro-batch's and those of
the micro-batches before it that the monitor keeps (:mod:`lagassign.spark.monitor.history`):

* the groups by status: how many groups have each status, and every group of the last
  micro-batch, worst status first, then by total lag; the statuses in their colours
  (:data:`lagassign.report.colors.STATUS_COLORS`) with a legend for every status and symbol;
* lag over time for the :data:`TOP_GROUPS` groups with the largest total lag now: total lag
  and largest lag in seconds (:func:`lagassign.report.charts.lag_history_figure`);
* the current recommendations: the ``recommendation`` column of the last micro-batch, or
  "None" and why.

:func:`write_live_report` writes the page to a temporary file beside it and renames it over
the old one, so a browser reloading it never reads half a page.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lagassign.report.charts import LagPoint, figure_svg, lag_history_figure
from lagassign.report.colors import STATUS_COLORS
from lagassign.report.fleet import _STYLE, Cell, _catch_up, _table
from lagassign.report.text import NEVER, UNKNOWN, duration
from lagassign.status import Status

REPORT_FILE = "report.html"
#: groups whose lag the chart follows over time
TOP_GROUPS = 8
#: a row of the ``groups`` table
GroupRow = Mapping[str, Any]

#: what each status means, worst first (the rules: lagassign.status, docs/monitor.md)
STATUS_MEANINGS: dict[str, str] = {
    Status.REWIND.name: "a committed offset went backwards (an offset reset to earlier)",
    Status.STOP.name: "lag, and no commit for longer than its window of recent commits spans",
    Status.STALL.name: "lag, and the group commits the same offset again and again",
    Status.WARN.name: "lag, and it never shrank from one commit to the next across the window",
    Status.OK.name: "no lag now, caught up within the window, or the lag is shrinking",
}
STATUS_ORDER = [s.name for s in sorted(Status, reverse=True)]

_LIVE_STYLE = "".join(
    f".status-{name} {{ background: {color}; color: white; font-weight: bold; "
    "text-align: center; }\n"
    for name, color in STATUS_COLORS.items()
) + (
    ".legend td, .legend th { text-align: left; } .legend td:first-child { width: 6em; }\n"
    "table.groups td:first-child, table.recommendations td:first-child { white-space: nowrap; }\n"
    "table.groups td:last-child, table.recommendations td:last-child,\n"
    "table.groups th:last-child, table.recommendations th:last-child { text-align: left; }\n"
    "svg { max-width: 100%; height: auto; }\n"
)


def _severity(status: str) -> int:
    return Status[status].value if status in Status.__members__ else -1


def _ranked(rows: Sequence[GroupRow]) -> list[GroupRow]:
    """Worst status first, then the largest total lag, then by name."""
    return sorted(rows, key=lambda r: (-_severity(r["status"]), -r["total_lag"], r["group"]))


def _count(value: int | None) -> str:
    return UNKNOWN if value is None else f"{value:,}"


def _status_cell(status: str) -> Cell:
    return (status, f"status-{status}")


def _groups_table(rows: Sequence[GroupRow]) -> str:
    header = [
        "group",
        "status",
        "total lag",
        "largest lag",
        "members",
        "catch-up now",
        "catch-up balanced",
        "recommendation",
    ]
    cells: list[list[Cell]] = [
        [
            r["group"],
            _status_cell(r["status"]),
            f"{r['total_lag']:,}",
            duration(r["max_lag_seconds"]),
            _count(r["members"]),
            _catch_up(r["catch_up_now_s"]),
            _catch_up(r["catch_up_balanced_s"]),
            r["recommendation"] or UNKNOWN,
        ]
        for r in _ranked(rows)
    ]
    return _table(header, cells, "groups")


def _counts_table(rows: Sequence[GroupRow]) -> str:
    counts = {name: 0 for name in STATUS_ORDER}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return _table(
        ["status", "groups"],
        [[_status_cell(name), f"{n:,}"] for name, n in counts.items()],
        "status-counts",
    )


def _legend() -> str:
    rows: list[list[Cell]] = [[_status_cell(name), STATUS_MEANINGS[name]] for name in STATUS_ORDER]
    rows += [
        [
            UNKNOWN,
            "not known: the log-end samples cannot tell the lag in seconds yet, the "
            "coordinator could not count the members, or no plan has been made",
        ],
        [
            (NEVER, "behind"),
            "the group's slowest member takes in at least what it can read: it falls behind "
            "for good",
        ],
    ]
    return _table(["legend", "what it means"], rows, "legend")


def top_groups(rows: Sequence[GroupRow], count: int = TOP_GROUPS) -> list[str]:
    """The ``count`` groups with the largest total lag in ``rows`` (worse status first among
    equals)."""
    ranked = sorted(rows, key=lambda r: (-r["total_lag"], -_severity(r["status"]), r["group"]))
    return [r["group"] for r in ranked[:count]]


def lag_series(
    batches: Sequence[Sequence[GroupRow]], groups: Sequence[str]
) -> dict[str, list[LagPoint]]:
    """Each of ``groups``' points over ``batches`` (oldest first), in ``groups``' order."""
    series: dict[str, list[LagPoint]] = {g: [] for g in groups}
    for rows in batches:
        for r in rows:
            points = series.get(r["group"])
            if points is not None:
                points.append((r["time"], r["total_lag"], r["max_lag_seconds"]))
    return series


def _recommendations(rows: Sequence[GroupRow]) -> str:
    recommended = [r for r in _ranked(rows) if r["recommendation"]]
    if recommended:
        return _table(
            ["group", "status", "catch-up now", "catch-up balanced", "recommendation"],
            [
                [
                    r["group"],
                    _status_cell(r["status"]),
                    _catch_up(r["catch_up_now_s"]),
                    _catch_up(r["catch_up_balanced_s"]),
                    r["recommendation"],
                ]
                for r in recommended
            ],
            "recommendations",
        )
    if all(r["catch_up_now_s"] is None for r in rows):
        why = (
            "no group has a plan yet: the catch-up times are not known, so there is nothing "
            "to recommend."
        )
    else:
        why = (
            "no member is falling behind, and balanced would not cut any group's catch-up "
            "time by more than the monitor's --recommend-threshold."
        )
    return f"<p class='recommendations'><b>None</b>: {html.escape(why)}</p>"


def live_page(batches: Sequence[Sequence[GroupRow]], batch_id: int, time: datetime) -> str:
    """The page after micro-batch ``batch_id`` sampled at ``time``: ``batches`` are the
    ``groups`` rows of the kept micro-batches, oldest first, the last one ``batch_id``'s."""
    rows = list(batches[-1]) if batches else []
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>lagassign monitor</title>",
        f"<style>{_STYLE}{_LIVE_STYLE}</style></head><body>",
        "<h1>Consumer groups now</h1>",
        f"<p class='note' id='sampled'>lagassign monitor: micro-batch {batch_id}, sampled "
        f"{time:%Y-%m-%d %H:%M:%S} UTC; {len(rows):,} groups. This page is rewritten after "
        "every micro-batch: reload it to see the next.</p>",
        "<h2>Groups by status</h2>",
        _counts_table(rows),
    ]
    if rows:
        parts.append(
            "<p class='note'>Every group, worst status first, then by total lag. Total lag: "
            "messages behind the log end over its partitions; largest lag: how long ago the "
            "log end was where its furthest-behind partition has committed.</p>"
        )
        parts.append(_groups_table(rows))
    else:
        parts.append("<p class='note'>No group has committed an offset yet.</p>")
    parts.append(_legend())

    parts.append("<h2>Lag over time</h2>")
    top = top_groups(rows)
    if top:
        parts.append(
            f"<p class='note'>The {len(top)} groups with the largest total lag now, over the "
            f"last {len(batches)} micro-batches.</p>"
        )
        parts.append(figure_svg(lag_history_figure(lag_series(batches, top))))
    else:
        parts.append("<p class='note'>No group yet.</p>")

    parts.append("<h2>Recommendations</h2>")
    parts.append(_recommendations(rows))
    parts.append(
        "<p class='note'>Tables: lag and groups (Parquet) beside this page; see "
        "docs/monitor.md.</p></body></html>"
    )
    return "\n".join(parts)


def write_live_report(
    folder: Path, batches: Sequence[Sequence[GroupRow]], batch_id: int, time: datetime
) -> Path:
    """Writes :func:`live_page` as ``folder/report.html`` at once: to a temporary file in
    ``folder`` first, then renamed over the old page."""
    path = folder / REPORT_FILE
    tmp = folder / f".{REPORT_FILE}.tmp-{os.getpid()}"
    tmp.write_text(live_page(batches, batch_id, time), encoding="utf-8")
    os.replace(tmp, path)
    return path
