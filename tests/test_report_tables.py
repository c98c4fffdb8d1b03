"""What the one-group tables and the plan chart show: member ids told apart, every symbol with a
legend, the same strategy colours as the fleet report."""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from lagassign.model import Group
from lagassign.report.member_ids import ELIDED, LABEL_WIDTH, member_labels
from lagassign.strategies import names
from tests.groupgen import random_group

#: Java consumers' member ids: ``consumer-<group>-<n>-<uuid>``, alike for their first 27
#: characters; a column cut at 15 showed ``consumer-billin…`` for every one of them
BILLING = [f"consumer-billing-service-{n}-{uuid.UUID(int=n * 7919)}" for n in range(1, 13)]


def lagassign(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lagassign.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_member_labels_elide_the_shared_prefix_and_keep_what_differs():
    labels = member_labels(BILLING)
    shown = [labels[i] for i in BILLING]
    assert len(set(shown)) == len(BILLING)
    assert labels.prefix == "consumer-billing-service-"
    for member_id, label in zip(BILLING, shown, strict=True):
        assert len(label) <= LABEL_WIDTH
        rest = member_id.removeprefix(labels.prefix)
        head, _, tail = label.removeprefix(ELIDED).partition(ELIDED)
        # the member's number and the end of its UUID
        assert rest.startswith(head) and rest.endswith(tail) and head.split("-")[0].isdigit()
    assert "'consumer-billing-service-'" in labels.note


def test_member_labels_grow_until_no_two_are_alike():
    # alike in all but one character in the middle: the labels keep it whatever the width
    ids = ["x" * 30 + c + "y" * 30 for c in "abc"]
    labels = member_labels(ids, width=10)
    assert len({labels[i] for i in ids}) == 3
    # ids that fit are shown whole, with nothing to explain
    short = member_labels(["C0", "C1", "client-0_/192.168.1.13"])
    assert short.labels == {i: i for i in ["C0", "C1", "client-0_/192.168.1.13"]}
    assert short.note == ""
    # an id that is all of another's prefix keeps a character of its own
    nested = member_labels(["consumer-billing-service-1" + "0" * 20, "consumer-billing-service-1"])
    assert len(set(nested.labels.values())) == 2 and all(nested.labels.values())


def billing_group(path: Path) -> Path:
    group = {
        "group": "billing-service-consumers-eu-west-1-production",
        "topics": {"invoices": {"partitions": [
            {"partition": p, "lag": 1000 * (p % 5) + p} for p in range(24)
        ]}},
        "members": [
            {"id": m, "topics": ["invoices"], "owned": [["invoices", i], ["invoices", i + 12]]}
            for i, m in enumerate(BILLING)
        ],
    }  # fmt: skip
    path.write_text(json.dumps(group))
    return path


def table_rows(stdout: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in stdout.splitlines()
        if line.startswith("│")
    ]


def test_plan_and_assign_tables_tell_members_with_long_shared_prefixes_apart(tmp_path):
    path = billing_group(tmp_path / "billing.json")
    labels = member_labels(BILLING)
    for command in (["plan"], ["assign", "--strategy", "balanced"]):
        out = lagassign(*command, "--input", str(path))
        assert out.returncode == 0, out.stderr
        # every member's row starts with its label, whole, on one line
        firsts = [row[0] for row in table_rows(out.stdout) if row[0].startswith(ELIDED)]
        assert sorted(firsts) == sorted(labels[m] for m in BILLING), command
        assert "member ids: a leading … stands for 'consumer-billing-service-'" in out.stdout
        # the group's name and every strategy's name whole
        assert "billing-service-consumers-eu-west-1-production" in out.stdout
    plan = lagassign("plan", "--input", str(path))
    header = next(line for line in plan.stdout.splitlines() if "┃ member" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "member", "current", "range", "roundrobin", "sticky", "cooperative-sticky", "fair",
        "lag", "balanced",
    ]  # fmt: skip


def test_plan_catch_up_cells_have_a_legend_for_every_symbol(tmp_path):
    """Catch-up shows a time, ``never`` (inflow at or above capacity) or ``–`` (no rate):
    the caption explains each one that appears."""
    group = {
        "group": "g",
        "topics": {"t": {"partitions": [
            {"partition": 0, "lag": 1000, "rate_in": 50.0, "rate_out": 10.0},
            {"partition": 1, "lag": 10, "rate_in": 1.0, "rate_out": 100.0},
        ]}},
        "members": [{"id": "a", "topics": ["t"], "capacity": 20.0},
                    {"id": "b", "topics": ["t"], "capacity": 200.0}],
    }  # fmt: skip
    path = tmp_path / "g.json"
    path.write_text(json.dumps(group))
    for command in (["plan"], ["assign", "--strategy", "range"]):
        out = lagassign(*command, "--input", str(path))
        assert out.returncode == 0, out.stderr
        cells = {cell for row in table_rows(out.stdout) for cell in row}
        assert "never" in cells, out.stdout
        assert "never (red): inflow at or above capacity" in " ".join(out.stdout.split())
        assert "–: no rate known" in " ".join(out.stdout.split())


@pytest.mark.parametrize("strategies", [None, "balanced,lag,sticky"])
def test_plan_chart_colours_are_the_fleet_reports(tmp_path, strategies):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import colors
    from matplotlib.patches import Rectangle

    from lagassign.formats.inputs import load_groups
    from lagassign.plan import plan_group
    from lagassign.report.charts import plan_figure
    from lagassign.report.colors import strategy_color

    (group,) = load_groups(str(billing_group(tmp_path / "billing.json")))
    chosen = strategies.split(",") if strategies else None
    fig = plan_figure([plan_group(group, chosen)])
    (ax,) = fig.axes
    legend = ax.get_legend()
    seen = {
        text.get_text(): colors.to_hex(handle.get_facecolor())
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True)
        if isinstance(handle, Rectangle)
    }
    assert set(seen) == {"current", *(chosen or names())}
    for name, colour in seen.items():
        assert colour == strategy_color(name), name
    # the fleet report's own colours for the strategies it singles out
    assert seen["balanced"] == "#2ca02c" and seen["lag"] == "#d62728"
    # the legend sits beside the axes, not over the bars
    fig.canvas.draw()
    box = legend.get_window_extent()
    axes_box = ax.get_window_extent()
    assert box.x0 >= axes_box.x1


def test_plan_chart_labels_members_as_the_tables_do(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from lagassign.formats.inputs import load_groups
    from lagassign.plan import plan_group
    from lagassign.report.charts import plan_figure

    (group,) = load_groups(str(billing_group(tmp_path / "billing.json")))
    fig = plan_figure([plan_group(group, ["lag"])])
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    labels = member_labels(BILLING)
    assert ticks == [labels[m] for m in BILLING]
    assert all(re.fullmatch(r"…\d+-[0-9a-f]+…[0-9a-f]+", t) for t in ticks)


def test_a_group_without_members_shows_its_real_lag_and_plans_for_members_n(tmp_path):
    group = {
        "group": "stopped",
        "topics": {"t": {"partitions": [
            {"partition": 0, "lag": 100, "rate_in": 2.0, "rate_out": 0.0},
            {"partition": 1, "lag": 30, "rate_in": 1.0, "rate_out": 0.0},
            {"partition": 2, "lag": 50, "rate_in": 1.0, "rate_out": 0.0},
        ]}},
        "members": [],
    }  # fmt: skip
    path = tmp_path / "stopped.json"
    path.write_text(json.dumps(group))
    nobody = lagassign("plan", "--input", str(path))
    assert nobody.returncode == 0, nobody.stderr
    assert nobody.stdout.splitlines() == [
        "group stopped: 0 members, 3 partitions, total lag 180",
        "group stopped has no members (the input lists none): nothing to plan; --members N plans "
        "for N members reading its topics",
    ]
    as_json = lagassign("plan", "--input", str(path), "--format", "json")
    assert json.loads(as_json.stdout)[0] | {"plans": None} == {
        "group": "stopped", "total_lag": 180, "members": 0, "members_from": "group",
        "time_aware": False, "plans": None,
    }  # fmt: skip
    assert json.loads(as_json.stdout)[0]["plans"] == []
    assert as_json.stderr.startswith("lagassign: warning: group stopped has no members")

    two = lagassign("plan", "--input", str(path), "--members", "2", "--strategies", "balanced")
    assert two.returncode == 0, two.stderr
    assert "group stopped: 2 members (--members; it has 0 now), 3 partitions, total lag 180, " \
        "lower bound 100" in two.stdout
    # the stopped members read nothing: that says nothing of what new ones can (no "never")
    assert "never" not in two.stdout
    rows = {row[0]: row[1] for row in table_rows(two.stdout) if row[0].startswith("member-")}
    assert sorted(rows.values()) == ["1 / 100", "2 / 80"] and len(rows) == 2


def test_with_members_keeps_lags_and_produce_rates_and_drops_consume_rates():
    from lagassign.model import Group, Member, Partition, Topic
    from lagassign.plan import with_members

    topic = Topic("t", (Partition("t", 0, lag=7, rate_in=3.0, rate_out=0.0),))
    old = Group.of([topic], [Member("gone", frozenset({"t"}), owned=(topic.partitions[0].tp,))])
    new = with_members(old, 2)
    assert [(m.id, m.topics, m.owned) for m in new.members] == [
        ("member-1", frozenset({"t"}), ()),
        ("member-2", frozenset({"t"}), ()),
    ]
    (p,) = new.partitions()
    assert (p.lag, p.rate_in, p.rate_out) == (7, 3.0, None)


def test_ids_are_shown_as_they_are_never_as_markup(tmp_path):
    """A group or member id with [brackets] (rich's markup) or :colons: (emoji codes) is shown
    as written: "b[/]" was a MarkupError traceback, "g[bold]x[/]" showed as "gx"."""
    group = {
        "group": "g[bold]x[/]:fire:",
        "topics": {"t": {"partitions": [{"partition": 0, "lag": 5}, {"partition": 1, "lag": 7}]}},
        "members": [{"id": "a[red]", "topics": ["t"]}, {"id": "b[/]", "topics": ["t"]}],
    }
    path = tmp_path / "markup.json"
    path.write_text(json.dumps(group))
    for command in (["plan"], ["assign", "--strategy", "lag"]):
        out = lagassign(*command, "--input", str(path))
        assert out.returncode == 0, out.stderr
        firsts = {row[0] for row in table_rows(out.stdout)}
        assert {"a[red]", "b[/]"} <= firsts, out.stdout
        assert "group g[bold]x[/]:fire:: 2 members" in out.stdout


def test_a_long_group_id_is_never_broken_over_lines(tmp_path):
    name = "payments-settlement-reconciliation-consumers-eu-west-1-production-blue"
    group = {
        "group": name,
        "topics": {"t": {"partitions": [{"partition": 0, "lag": 5}]}},
        "members": [{"id": "a", "topics": ["t"]}],
    }
    path = tmp_path / "long.json"
    path.write_text(json.dumps(group))
    out = lagassign("plan", "--input", str(path), "--strategies", "lag")
    assert out.returncode == 0, out.stderr
    assert f"group {name}: 1 members, 1 partitions, total lag 5, lower bound 5\n" in out.stdout
    assert f"group {name}: partitions / lag per member\n" in out.stdout


def rendered(table) -> str:
    from rich.console import Console

    from lagassign.report.tables import detached

    console = Console(width=1000, markup=False, file=io.StringIO())
    console.print(detached(table))
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_describe_tables_explain_their_dashes():
    from lagassign.lag_rules import group_lags
    from lagassign.model import Group, Member, Offsets, Partition, Topic
    from lagassign.report.tables import describe_members_table, describe_table

    topic = Topic("t", (
        Partition("t", 0, offsets=Offsets(0, 50, 10)),
        Partition("t", 1, offsets=Offsets(0, 70, None)),
    ))  # fmt: skip
    owned = Group.of(
        [topic], [Member("m", frozenset({"t"}), owned=(topic.partitions[0].tp,))],
        id="g", auto_offset_reset="earliest",
    )  # fmt: skip
    text = printed(describe_table(owned, group_lags(owned), "Stable"))
    assert "current offset -: the group has committed none, so the lag follows " \
        "auto.offset.reset earliest" in text
    assert "member, host, client id -: no member owns the partition" in text
    lines = printed(describe_members_table(Group.of([topic], [], id="g"), ())).splitlines()
    assert (lines[0], lines[-1]) == ("group g: members", "none now")


def printed(renderable, width: int = 1000) -> str:
    from rich.console import Console

    console = Console(width=width, markup=False, file=io.StringIO())
    console.print(renderable, crop=False)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_describe_prints_a_row_per_partition_whole_as_kafka_consumer_groups_does():
    """Columns aligned under their headers (numbers to the right), every row on one line
    however narrow the console, title and caption wrapped at its width."""
    from lagassign.lag_rules import group_lags
    from lagassign.model import Group, Member, Offsets, Partition, Topic
    from lagassign.report.member_ids import member_labels
    from lagassign.report.tables import describe_table

    topic = Topic("orders", tuple(
        Partition("orders", p, offsets=Offsets(0, 1_000 * (p + 1), 10 * p)) for p in range(12)
    ))  # fmt: skip
    member = Member("consumer-orders-1-3f2a5b7c-1111-2222-3333-444455556666",
                    frozenset({"orders"}), owned=tuple(p.tp for p in topic.partitions[:6]),
                    host="/10.0.0.7", client_id="consumer-orders-1")  # fmt: skip
    group = Group.of([topic], [member], id="g")
    lines = [
        line.rstrip()
        for line in printed(describe_table(group, group_lags(group), "Stable"), 40).splitlines()
    ]
    assert lines[0] == "group g (Stable): 1 members, 12"
    assert lines[1] == "partitions, total lag 77,340"
    header, rule, *rows = lines[2:16]
    assert header.split() == ["topic", "partition", "current", "offset", "log", "end", "offset",
                              "lag", "member", "host", "client", "id"]  # fmt: skip
    assert set(rule) == {"-", " "} and len(rule) > 40  # wider than the console, not cut
    assert all(len(line) <= len(rule) for line in [header, *rows])
    assert [row.split()[:5] for row in rows] == [
        ["orders", str(p), f"{10 * p:,}", f"{1_000 * (p + 1):,}", f"{1_000 * (p + 1) - 10 * p:,}"]
        for p in range(12)
    ]
    # right-aligned numbers end where their header ends; owners and dashes beside them
    lag_end = header.index("lag") + len("lag")
    assert all(row[:lag_end].endswith(row.split()[4]) for row in rows)
    label = member_labels([member.id])[member.id]
    assert rows[0].split()[5:] == [label, "/10.0.0.7", "consumer-orders-1"]
    assert rows[11].split()[5:] == ["-", "-", "-"]
    assert "member, host, client id -: no member owns the partition" in " ".join(lines[16:])


def test_assign_of_a_group_without_members_says_so_and_long_lists_say_how_many_more(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({
        "group": "g",
        "topics": {"t": {"partitions": [{"partition": p, "lag": p} for p in range(20)]}},
        "members": [],
    }))  # fmt: skip
    out = lagassign("assign", "--strategy", "lag", "--input", str(path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "group g: 0 members, 20 partitions, total lag 190",
        "group g has no members (the input lists none): nothing to assign; plan --members N "
        "plans for N members reading its topics",
    ]
    data = json.loads(path.read_text())
    data["members"] = [{"id": "solo", "topics": ["t"]}]
    path.write_text(json.dumps(data))
    out = lagassign("assign", "--strategy", "range", "--input", str(path))
    assert "t-0, t-1, t-2, t-3, t-4, t-5, t-6, t-7, t-8, t-9, t-10, t-11 and 8 more" in out.stdout


def test_plan_shows_where_cooperative_rounds_settle_and_what_round_1_leaves_unassigned(tmp_path):
    """Issue 13: a cooperative first round gives the moving partitions to nobody, so on its own
    it looks better balanced than sticky, which it cannot be. ``a`` owns t-0..t-3 (lags 100,
    200, 300, 400) and ``b`` joins: cooperative-sticky's first round keeps t-0 and t-1 on
    ``a`` and withholds t-2 and t-3 (largest member lag 300 of a lower bound 500); the next
    round hands them to ``b`` (700), as sticky does at once."""
    path = tmp_path / "joining.json"
    path.write_text(
        json.dumps(
            {
                "group": "g",
                "topics": {
                    "t": {"partitions": [{"partition": p, "lag": 100 * (p + 1)} for p in range(4)]}
                },
                "members": [
                    {"id": "a", "topics": ["t"], "owned": [["t", p] for p in range(4)]},
                    {"id": "b", "topics": ["t"]},
                ],
            }
        )
    )
    out = lagassign("plan", "--input", str(path))
    assert out.returncode == 0, out.stderr
    summary = {row[0]: row[1:] for row in table_rows(out.stdout) if len(row) == 7}
    # largest member lag, mean, ÷ lower bound, count spread, moves, unassigned
    assert summary["sticky"] == ["700", "500", "1.400", "0", "2", "0"]
    assert summary["cooperative-sticky"] == summary["sticky"]
    assert summary["cooperative-sticky, round 1"] == ["300", "500", "0.600", "2", "2", "2"]
    assert "“…, round 1”: the strategy's first rebalance round" in out.stdout
    # the members table shows the settled plan: b reads t-2 and t-3
    members = {row[0]: row[1:] for row in table_rows(out.stdout) if len(row) == 9}
    assert members["b"][4] == "2 / 700"

    data = json.loads(lagassign("plan", "--input", str(path), "--format", "json").stdout)
    plans = {p["strategy"]: p for p in data[0]["plans"]}
    coop = plans["cooperative-sticky"]
    assert (coop["unassigned"], coop["max_member_lag"]) == (2, 300)
    assert coop["settled"]["assignment"] == {"a": [["t", 0], ["t", 1]], "b": [["t", 2], ["t", 3]]}
    assert (coop["settled"]["unassigned"], coop["settled"]["max_member_lag"]) == (0, 700)
    assert coop["settled"]["settles"] is True
    assert all("settled" not in p for name, p in plans.items() if name != "cooperative-sticky")


def _group_file(group: Group, path: Path) -> Path:
    """``group`` as a group file (docs/formats.md): lags, racks, ownership and generations."""
    path.write_text(
        json.dumps(
            {
                "group": group.id,
                "topics": {
                    name: {
                        "partitions": [
                            {"partition": p.partition, "lag": p.lag, "racks": sorted(p.racks)}
                            for p in topic.partitions
                        ]
                    }
                    for name, topic in group.topics.items()
                },
                "members": [
                    {
                        "id": m.id,
                        "topics": sorted(m.topics),
                        "instance_id": m.instance_id,
                        "rack": m.rack,
                        "owned": [[tp.topic, tp.partition] for tp in m.owned],
                        "generation": m.generation,
                    }
                    for m in group.members
                ],
            }
        )
    )
    return path


def test_rounds_that_never_settle_are_shown_as_such(tmp_path):
    """cooperative-sticky's rounds on this group come back to an assignment they made before
    (so do Kafka's, test_differential_java): its row and its members' column say "never
    settles", with a legend under each table, and the JSON says ``"settles": false``."""
    from tests.test_cooperative import NEVER_SETTLES_SEED

    group = random_group(random.Random(NEVER_SETTLES_SEED), owned=True)
    path = _group_file(group, tmp_path / "never.json")
    out = lagassign("plan", "--input", str(path), "--strategies", "sticky,cooperative-sticky")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    summary = {row[0]: row[1:] for row in table_rows(out.stdout) if len(row) == 7}
    assert summary["cooperative-sticky (never settles)"][-1] == "8"  # unassigned: in flight
    assert "cooperative-sticky, round 1" in summary
    assert text.count("(never settles): the strategy's rounds come back") == 2
    data = json.loads(
        lagassign(
            "plan", "--input", str(path), "--strategies", "sticky,cooperative-sticky",
            "--format", "json",
        ).stdout
    )
    plans = {p["strategy"]: p for p in data[0]["plans"]}
    assert plans["cooperative-sticky"]["settled"]["settles"] is False
    assert plans["cooperative-sticky"]["settled"]["unassigned"] == 8


def test_a_strategy_that_withholds_nothing_gets_no_unassigned_column(tmp_path):
    out = lagassign("plan", "--input", "examples/seed000-lag.json")
    assert out.returncode == 0, out.stderr
    assert "unassigned" not in out.stdout and "round 1" not in out.stdout


def test_describe_aligns_client_ids_in_any_script_by_their_width_on_screen():
    from wcwidth import wcswidth

    from lagassign.metrics import MemberLoad
    from lagassign.model import Group, Member, Offsets, Partition, Topic
    from lagassign.report.tables import describe_members_table

    topic = Topic("t", (Partition("t", 0, offsets=Offsets(0, 5, 1)),))
    members = [Member("a", frozenset({"t"}), client_id="消费者-1"),
               Member("b", frozenset({"t"}), client_id="reader-2")]  # fmt: skip
    loads = [MemberLoad("a", 1, 4), MemberLoad("b", 0, 0)]
    lines = printed(describe_members_table(Group.of([topic], members, id="g"), loads))
    header, _, first, second = lines.splitlines()[1:5]
    # the lag column ends at the same place on screen in every line
    ends = {wcswidth(line.rstrip()) for line in (header, first, second)}
    assert len(ends) == 1, (header, first, second)
