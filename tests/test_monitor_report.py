"""The monitor's live report (``OUT/report.html``, lagassign.report.live) as a person sees it:
rendered by headless Chromium (Debian's ``chromium``, driven by Playwright), read from the
page's visible text and computed colours. Micro-batches without Spark or a broker
(:class:`MonitorBatches` with known log ends and commits): the status table's rows and counts
are the ``groups`` table's last micro-batch, the lag chart follows the top groups over the
kept micro-batches, the recommendations say "None" and why; a page from rows with every status
and a recommendation: each status in its colour with its meaning in the legend. Nothing is
fetched from the network. The history behind the chart: bounded, read back after a restart."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from lagassign.model import Offsets, TopicPartition
from lagassign.report.colors import STATUS_COLORS
from lagassign.report.live import STATUS_MEANINGS, TOP_GROUPS, live_page, write_live_report
from lagassign.spark.monitor.batch import MonitorBatches, Record
from lagassign.spark.monitor.groups_table import GROUPS_SCHEMA
from lagassign.spark.monitor.history import HISTORY_BATCHES, GroupsHistory
from lagassign.status import Status
from tests.test_consumer_offsets import key, value

T0 = datetime(2026, 11, 25, 1, 0, 0, tzinfo=UTC)
STATUSES = ["REWIND", "STOP", "STALL", "WARN", "OK"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is missing: bash scripts/setup.sh installs it"
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium)
        try:
            yield launched
        finally:
            launched.close()


def open_page(browser: Browser, path: Path) -> tuple[Page, list[str]]:
    """``path`` loaded in a new page; the URLs it asked for (the page's own among them)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(path.as_uri())
    return page, asked


def table_rows(page: Page, css: str) -> list[list[str]]:
    """The visible text of every body row of ``table.css``, cell by cell."""
    rows = page.locator(f"table.{css} tr:has(td)")
    return [
        [cell.strip() for cell in rows.nth(i).locator("td").all_inner_texts()]
        for i in range(rows.count())
    ]


def background(page: Page, css: str, text: str) -> str:
    cell = page.locator(f"table.{css} td", has_text=text).first
    return str(cell.evaluate("e => getComputedStyle(e).backgroundColor"))


def chart_texts(page: Page) -> list[str]:
    """The texts the chart shows (axis labels, ticks, its legend), in the SVG's order."""
    return [t.strip() for t in page.locator("svg").first.locator("text").all_text_contents()]


def rgb(hex_color: str) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


class Cluster:
    """One partition whose log end grows 20 per 5 s micro-batch (100 at T0): "ok" commits the
    log end every batch, "stall" commits 40 every batch, "stop" committed twice before T0."""

    def __init__(self) -> None:
        self.now = T0

    def clock(self) -> datetime:
        return self.now

    def read_logs(self, topics: set[str]) -> dict[TopicPartition, Offsets]:
        return {TopicPartition("t", 0): Offsets(0, self.end())}

    def end(self) -> int:
        return 100 + int((self.now - T0).total_seconds()) * 4

    def records(self, batch: int) -> list[Record]:
        def commit(group: str, offset: int, at: datetime) -> Record:
            return (key(group, "t", 0), value(4, offset, commit_ms=int(at.timestamp() * 1000)))

        at = self.now - timedelta(seconds=1)
        out = [commit("ok", self.end(), at), commit("stall", 40, at)]
        if batch == 0:
            out += [
                commit("stop", 30, T0 - timedelta(seconds=20)),
                commit("stop", 40, T0 - timedelta(seconds=10)),
            ]
        return out


def run_batches(out: Path, state: Path, ids: range) -> Cluster:
    cluster = Cluster()
    batches = MonitorBatches(out, state, cluster.read_logs, clock=cluster.clock)
    for b in ids:
        cluster.now = T0 + timedelta(seconds=5 * b)
        batches.run(b, cluster.records(b))
    return cluster


def last_groups(out: Path) -> list[dict[str, Any]]:
    table = ds.dataset(out / "groups", format="parquet", partitioning="hive").to_table()
    rows: list[dict[str, Any]] = table.to_pylist()
    last = max(r["time"] for r in rows)
    return [r for r in rows if r["time"] == last]


def shows_the_last_batch(browser: Browser, out: Path) -> tuple[Page, list[dict[str, Any]]]:
    """``out/report.html`` in Chromium asks for nothing but itself, and its status tables are
    the ``groups`` table's last micro-batch under ``out``: every group, worst status first,
    then by total lag, with its status and total lag, and how many groups have each status.
    The page, open, and those rows."""
    page, asked = open_page(browser, out / "report.html")
    assert asked == [(out / "report.html").as_uri()]  # nothing else: no network, no file
    final = last_groups(out)
    ranked = sorted(final, key=lambda r: (-Status[r["status"]], -r["total_lag"], r["group"]))
    assert [row[:3] for row in table_rows(page, "groups")] == [
        [r["group"], r["status"], f"{r['total_lag']:,}"] for r in ranked
    ]
    counts = {status: n for status, n in table_rows(page, "status-counts")}
    assert counts == {s: str(sum(r["status"] == s for r in final)) for s in STATUSES}
    return page, final


def test_the_page_shows_the_last_micro_batch_of_the_groups_table(
    tmp_path: Path, browser: Browser
) -> None:
    out = tmp_path / "out"
    run_batches(out, tmp_path / "state", range(4))
    assert sorted(p.name for p in out.iterdir()) == ["groups", "lag", "report.html"]

    page, final = shows_the_last_batch(browser, out)
    # log end 160 at the last batch (15 s): ok 0, stall 120, stop 120
    assert {r["group"]: (r["status"], r["total_lag"]) for r in final} == {
        "ok": ("OK", 0),
        "stall": ("STALL", 120),
        "stop": ("STOP", 120),
    }
    shown = table_rows(page, "groups")
    assert [row[:3] for row in shown] == [
        ["stop", "STOP", "120"],
        ["stall", "STALL", "120"],
        ["ok", "OK", "0"],
    ]
    assert "micro-batch 3, sampled 2026-11-25 01:00:15 UTC; 3 groups" in page.inner_text("#sampled")

    chart = page.locator("svg").first
    box = chart.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 300
    # its legend names every group (3 < TOP_GROUPS), largest total lag first, the worse
    # status first among equals
    shown_groups = [t for t in chart_texts(page) if t in ("stall", "stop", "ok")]
    assert shown_groups == ["stop", "stall", "ok"]
    assert "over the last 4 micro-batches" in page.inner_text("body")

    recommendations = page.inner_text("p.recommendations")
    assert recommendations.startswith("None: no group has a plan yet"), recommendations
    page.close()


def test_a_restart_keeps_the_chart_s_history(tmp_path: Path, browser: Browser) -> None:
    """A fresh MonitorBatches (a restart) that replays batch 3 reads batches 0-2 back from the
    groups table: the chart still spans four micro-batches."""
    out, state = tmp_path / "out", tmp_path / "state"
    run_batches(out, state, range(4))
    before = (out / "report.html").read_text(encoding="utf-8")
    run_batches(out, state, range(3, 4))
    assert (out / "report.html").read_text(encoding="utf-8") == before
    page, _ = open_page(browser, out / "report.html")
    assert "over the last 4 micro-batches" in page.inner_text("body")
    page.close()


def row(group: str, status: str, total_lag: int, **kw: Any) -> dict[str, Any]:
    values = {
        "time": T0,
        "group": group,
        "status": status,
        "total_lag": total_lag,
        "max_lag_seconds": 30.0,
        "members": 2,
        "catch_up_now_s": None,
        "catch_up_balanced_s": None,
        "recommendation": None,
    }
    values.update(kw)
    return values


def test_every_status_in_its_colour_a_legend_and_the_recommendations(
    tmp_path: Path, browser: Browser
) -> None:
    rows = [
        row("payments", "STOP", 5_000, members=None),
        row(
            "billing",
            "WARN",
            90_000,
            catch_up_now_s=600.0,
            catch_up_balanced_s=240.0,
            recommendation="balanced: catch-up 10 min → 4 min",
        ),
        row("audit", "OK", 0, max_lag_seconds=0.0),
        row("search", "REWIND", 10, max_lag_seconds=None),
        row("mail", "STALL", 700, catch_up_now_s=float("inf"), catch_up_balanced_s=90.0),
    ]
    earlier = [
        {**r, "time": T0 - timedelta(seconds=10), "total_lag": r["total_lag"] // 2} for r in rows
    ]
    write_live_report(tmp_path, [earlier, rows], 7, T0)
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # the temporary file renamed
    page, asked = open_page(browser, tmp_path / "report.html")
    assert len(asked) == 1

    assert table_rows(page, "groups") == [
        ["search", "REWIND", "10", "–", "2", "–", "–", "–"],
        ["payments", "STOP", "5,000", "30 s", "–", "–", "–", "–"],
        ["mail", "STALL", "700", "30 s", "2", "never", "90 s", "–"],
        [
            "billing",
            "WARN",
            "90,000",
            "30 s",
            "2",
            "10 min",
            "4 min",
            "balanced: catch-up 10 min → 4 min",
        ],
        ["audit", "OK", "0", "0 s", "2", "–", "–", "–"],
    ]
    assert table_rows(page, "status-counts") == [[s, "1"] for s in STATUSES]
    legend = table_rows(page, "legend")
    assert legend[: len(STATUSES)] == [[s, STATUS_MEANINGS[s]] for s in STATUSES]
    assert [symbol for symbol, _ in legend[len(STATUSES) :]] == ["–", "never"]
    for status in STATUSES:
        for css in ("groups", "status-counts", "legend"):
            assert background(page, css, status) == rgb(STATUS_COLORS[status]), (css, status)
    for css in ("groups", "legend"):  # never: red, as in the fleet report
        never = page.locator(f"table.{css} td").get_by_text("never", exact=True)
        assert never.evaluate("e => getComputedStyle(e).color") == rgb("#cc0000"), css
    assert table_rows(page, "recommendations") == [
        ["billing", "WARN", "10 min", "4 min", "balanced: catch-up 10 min → 4 min"]
    ]
    page.close()


def test_the_chart_follows_the_top_groups(tmp_path: Path, browser: Browser) -> None:
    rows = [row(f"g{i:02d}", "WARN", 100 * i) for i in range(TOP_GROUPS + 3)]
    html = live_page([rows], 0, T0)
    (tmp_path / "report.html").write_text(html, encoding="utf-8")
    page, _ = open_page(browser, tmp_path / "report.html")
    groups = {r["group"] for r in rows}
    # the legend, largest total lag first: g10 down to g03
    assert [t for t in chart_texts(page) if t in groups] == [
        f"g{i:02d}" for i in range(TOP_GROUPS + 2, 2, -1)
    ]
    assert f"The {TOP_GROUPS} groups with the largest total lag now" in page.inner_text("body")
    page.close()


def test_history_is_bounded_and_a_replay_forgets_later_batches(tmp_path: Path) -> None:
    history = GroupsHistory(tmp_path)

    def rows(batch: int) -> pa.Table:
        return pa.Table.from_pylist([row(f"b{batch}", "OK", batch)], schema=GROUPS_SCHEMA)

    for b in range(HISTORY_BATCHES + 5):
        kept = history.add(b, rows(b))
    assert [r[0]["group"] for r in kept] == [f"b{b}" for b in range(5, HISTORY_BATCHES + 5)]
    replayed = history.add(10, rows(10))  # a replay of batch 10: nothing of 11 and later
    assert sorted(history.batches) == list(range(10 + 1))
    # 5-9 still held; 0-4 read back from the groups table under tmp_path, where there is none
    assert replayed == [[]] * 5 + [rows(b).to_pylist() for b in range(5, 11)]


def test_no_recommendation_says_why() -> None:
    unplanned = [row("a", "WARN", 10)]
    assert "<b>None</b>: no group has a plan yet" in live_page([unplanned], 0, T0)
    planned = [row("a", "WARN", 10, catch_up_now_s=60.0, catch_up_balanced_s=55.0)]
    assert "<b>None</b>: no member is falling behind" in live_page([planned], 0, T0)
