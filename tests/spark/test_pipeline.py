"""The PySpark pipeline on local[2]: the sample fleet, equality with the core, bad input.

The pipeline must add nothing of its own to the core: its lag is the core's lag rule on every
row, and every group's plans are what ``lagassign assign`` gives for the same group (built here
from the snapshot rows by the rules of docs/pipeline.md, independently of the pipeline's own
builder, and written as a group file).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession

from lagassign import cli
from lagassign.formats.describe import load_describe
from lagassign.formats.errors import InputError
from lagassign.formats.snapshot import read_snapshot
from lagassign.formats.snapshot_rows import (
    ROW_SCHEMA,
    SNAPSHOT_SCHEMA,
    build_group,
    group_rows,
    rows_batch,
)
from lagassign.lag_rules import lag_from_offsets
from lagassign.model import Group, Member, Offsets, Partition, Topic
from lagassign.plan import plan_group
from lagassign.spark.groups import Results, plan_batches, plan_rows, table_rows
from lagassign.spark.options import PipelineOptions
from lagassign.spark.outputs import staging
from lagassign.spark.packing import pack, unpacked
from lagassign.spark.pipeline import plan_groups, run
from lagassign.spark.schema import TABLES
from lagassign.spark.sources import WholeGroups
from lagassign.spark.sources.files import read_files, spread_files
from lagassign.spark.sources.sample import sample_fleet
from lagassign.strategies import names
from tests.spark.cli import error_lines, run_pipeline

SEED002 = Path(str(cli.sample_describe_file()))
#: a subset of the sample fleet: a few groups of every family, and seed 002's two groups
SUBSET = (
    r"(single-topic|volumes|hot-partitions|offsets|mixed-subscriptions)-00[0-3]|test-group0[23]"
)
TABLE_COLUMNS = {
    "partitions": ["group", "topic", "partition", "lag", "member_id"],
    "plans": ["group", "strategy", "member_id", "topic", "partition"],
    "members": ["group", "strategy", "member_id", "partitions", "lag"],
    "groups": [
        "group",
        "strategy",
        "members",
        "partitions",
        "total_lag",
        "max_member_lag",
        "lower_bound",
        "imbalance",
        "count_spread",
        "moves",
        "unassigned",
        "catch_up_s",
        "time_aware",
        "falls_behind",
    ],
}
TABLE_COLUMNS["settled"] = TABLE_COLUMNS["groups"]


def options(out: Path, **kw: Any) -> PipelineOptions:
    return PipelineOptions(out=out, quiet=True, **kw)


def read(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / table).to_pylist()


def fleet_rows() -> list[dict[str, Any]]:
    """The sample fleet's rows as the files hold them (read with pyarrow, not the pipeline)."""
    rows: list[dict[str, Any]] = []
    for path in sorted(sample_fleet().iterdir()):
        if path.suffix == ".parquet":
            rows += pq.read_table(path).to_pylist()
        else:
            rows += [json.loads(line) for line in path.read_text().splitlines() if line]
    return rows


def group_file(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The group file (docs/formats.md) of one group's snapshot rows, by docs/pipeline.md's
    rules: members are the distinct non-null member ids, owning their rows' partitions and
    subscribing their ``subscribed`` topics or else every topic; no auto_offset_reset is
    "latest"."""
    topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
    owned: dict[str, list[list[Any]]] = defaultdict(list)
    subscribed: dict[str, set[str]] = {}
    racks: dict[str, str] = {}
    reset = "latest"
    for r in sorted(rows, key=lambda r: (r["topic"], r["partition"])):
        p = {"partition": r["partition"], "begin": r["begin"], "end": r["end"]}
        p["committed"] = r.get("committed")
        for key, name in (
            ("replica_racks", "racks"),
            ("rate_in", "rate_in"),
            ("rate_out", "rate_out"),
        ):
            if r.get(key) is not None:
                p[name] = r[key]
        topics[r["topic"]].append(p)
        reset = r.get("auto_offset_reset") or reset
        member = r.get("member_id")
        if member:
            owned[member].append([r["topic"], r["partition"]])
            if r.get("subscribed") is not None:
                subscribed.setdefault(member, set()).update(r["subscribed"])
            if r.get("rack"):
                racks[member] = r["rack"]
    return {
        "group": rows[0]["group"],
        "auto_offset_reset": reset,
        "topics": {t: {"partitions": ps} for t, ps in topics.items()},
        "members": [
            {
                "id": m,
                "topics": sorted(subscribed.get(m, topics)),
                "rack": racks.get(m),
                "owned": owned[m],
            }
            for m in sorted(owned)
        ],
    }


def lagassign_assign(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """``lagassign assign ... --format json``, in this process."""
    assert cli.main(["assign", *args, "--format", "json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def pipeline_plans(out: Path) -> dict[tuple[str, str], dict[str, list[tuple[str, int]]]]:
    plans: dict[tuple[str, str], dict[str, list[tuple[str, int]]]] = defaultdict(dict)
    for r in read(out, "plans"):
        plans[(r["group"], r["strategy"])].setdefault(r["member_id"], []).append(
            (r["topic"], r["partition"])
        )
    for key, members in read_members(out).items():
        for member in members:
            plans[key].setdefault(member, [])
    return {k: {m: sorted(tps) for m, tps in v.items()} for k, v in plans.items()}


def read_members(out: Path) -> dict[tuple[str, str], dict[str, int]]:
    members: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for r in read(out, "members"):
        members[(r["group"], r["strategy"])][r["member_id"]] = r["lag"]
    return members


def expected(result: dict[str, Any]) -> tuple[dict[str, list[tuple[str, int]]], dict[str, int]]:
    assignment = {m: sorted((t, p) for t, p in tps) for m, tps in result["assignment"].items()}
    return assignment, result["member_lag"]


# ------------------------------------------------------------------------------------------------
# the sample fleet


@pytest.fixture(scope="module")
def subset(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("subset") / "out"
    run(options(out, sample=True, groups=SUBSET, report=False), spark)
    return out


@pytest.fixture(scope="module")
def full(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("full") / "fleet"
    result = run(options(out, sample=True), spark)
    assert result.out == out and result.groups == 302
    return out


def test_subset_tables(subset: Path) -> None:
    rows = [r for r in fleet_rows() if re.fullmatch(SUBSET, r["group"])]
    groups = {r["group"] for r in rows}
    assert len(groups) == 22
    for table, columns in TABLE_COLUMNS.items():
        assert pq.read_table(subset / table).schema.names == columns, table
    assert sorted(
        (r["group"], r["topic"], r["partition"], r["member_id"]) for r in read(subset, "partitions")
    ) == sorted((r["group"], r["topic"], r["partition"], r["member_id"]) for r in rows)
    by_group = defaultdict(set)
    for r in read(subset, "groups"):
        by_group[r["group"]].add(r["strategy"])
    owned = {r["group"] for r in rows if r["member_id"]}
    assert set(by_group) == groups
    for g, strategies in by_group.items():
        assert strategies == set(names()) | ({"current"} if g in owned else set()), g
    assert not (subset / "report.html").exists()
    assert json.loads((subset / "summary.json").read_text())["groups"] == 22


def test_subset_plans_equal_lagassign_assign(
    subset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every strategy's plan for every generated group of the subset is what ``lagassign
    assign`` gives for the same group, member by member, with the same member lag."""
    plans, members = pipeline_plans(subset), read_members(subset)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in fleet_rows():
        if re.fullmatch(SUBSET, r["group"]) and not r["group"].startswith("test-group"):
            by_group[r["group"]].append(r)
    checked = 0
    for gid, rows in sorted(by_group.items()):
        path = tmp_path / f"{gid}.json"
        path.write_text(json.dumps(group_file(rows)))
        for strategy in names():
            result = lagassign_assign(capsys, "--strategy", strategy, "--input", str(path))
            assignment, member_lag = expected(result)
            assert plans.get((gid, strategy), {}) == assignment, (gid, strategy)
            assert members.get((gid, strategy), {}) == member_lag, (gid, strategy)
            checked += 1
    assert checked == 20 * len(names())


def test_seed002_plans_equal_lagassign_assign_on_the_describe_file(
    subset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 002's groups, shipped in the fleet as snapshot rows, plan as ``lagassign assign
    --describe-file`` plans them from the original dump."""
    plans, members = pipeline_plans(subset), read_members(subset)
    for gid in ("test-group02", "test-group03"):
        for strategy in names():
            result = lagassign_assign(
                capsys, "--strategy", strategy, "--describe-file", str(SEED002), "--group", gid
            )
            assignment, member_lag = expected(result)
            assert plans[(gid, strategy)] == assignment, (gid, strategy)
            assert members[(gid, strategy)] == member_lag, (gid, strategy)


def test_full_sample_lag_equals_the_core_on_every_row(full: Path) -> None:
    rows = fleet_rows()
    lag = {(r["group"], r["topic"], r["partition"]): r["lag"] for r in read(full, "partitions")}
    assert len(lag) == len(rows) == 10_860
    for r in rows:
        core = lag_from_offsets(
            r["begin"], r["end"], r["committed"], r.get("auto_offset_reset") or "latest"
        )
        assert lag[(r["group"], r["topic"], r["partition"])] == core, r


def test_full_sample_metrics_and_report(full: Path) -> None:
    groups = read(full, "groups")
    assert len({g["group"] for g in groups}) == 302
    # the current assignment's members and lag are what the rows say each member owns
    lag = {(r["group"], r["topic"], r["partition"]): r["lag"] for r in read(full, "partitions")}
    now: dict[tuple[str, str], int] = defaultdict(int)
    for (g, t, p), owner in {
        (r["group"], r["topic"], r["partition"]): r["member_id"] for r in read(full, "partitions")
    }.items():
        if owner:
            now[(g, owner)] += lag[(g, t, p)]
    current = {
        (m["group"], m["member_id"]): m["lag"]
        for m in read(full, "members")
        if m["strategy"] == "current"
    }
    assert current == dict(now)
    for g in groups:
        if g["members"] and not g["unassigned"]:  # (withheld partitions count for nobody)
            assert g["max_member_lag"] >= g["lower_bound"] - 1e-6, g
            assert g["imbalance"] >= 1 - 1e-9, g
    # rates are known for some groups: catch-up time is predicted for them only
    assert any(g["catch_up_s"] is not None for g in groups)
    assert any(g["catch_up_s"] is None for g in groups)
    for g in groups:  # a plan falls behind exactly when its slowest member never catches up
        if g["catch_up_s"] is None:
            assert g["falls_behind"] is None, g
        else:
            assert (g["falls_behind"] > 0) == math.isinf(g["catch_up_s"]), g
    # groups with produce rates, and only they, are planned for catch-up time
    assert any(g["time_aware"] for g in groups) and not all(g["time_aware"] for g in groups)

    # cooperative-sticky's first rounds withhold partitions; settled says where its rounds
    # settle for exactly those plans: every partition assigned, as well balanced as sticky can
    first_rounds = {
        g["group"]: g for g in groups if g["strategy"] == "cooperative-sticky" and g["unassigned"]
    }
    settled = read(full, "settled")
    assert first_rounds and {g["group"] for g in settled} == set(first_rounds)
    assert {g["strategy"] for g in settled} == {"cooperative-sticky"}
    for g in settled:
        first = first_rounds[g["group"]]
        assert g["unassigned"] == 0 and g["partitions"] == first["partitions"], g
        assert g["max_member_lag"] >= g["lower_bound"] - 1e-6, g

    summary = json.loads((full / "summary.json").read_text())
    assert summary["tool"] == "lagassign pipeline" and summary["partitions"] == 10_860
    assert summary["seconds"]["total"] >= sum(
        v for k, v in summary["seconds"].items() if k != "total"
    )
    report = (full / "report.html").read_text()
    text = re.sub(r"<[^>]+>", " ", report)
    # the page counts the 10,860 partitions summary.json and stdout say, and explains what the
    # strategies assign of them; both rounds of cooperative-sticky, each with what it leaves
    # unassigned; the worst table's symbols; the whole run time
    read_by_members = sum(g["partitions"] for g in groups if g["strategy"] == "range")
    assert f"302 groups, 10,860 partitions ({read_by_members:,} in topics" in text
    # (the table, as the fleet chart, counts the groups with members and lag)
    withheld = sum(g["unassigned"] for g in first_rounds.values() if g["total_lag"])
    assert re.search(
        rf"<td>cooperative-sticky, round 1</td>(<td[^>]*>[^<]*</td>)*<td>{withheld:,}</td></tr>",
        report,
    )
    assert "Catch-up now → balanced:" in text and "†: the group has produce rates" in text
    # (the tests' session is started once, outside the run: no "starting Spark" step here)
    assert re.search(
        r"<td>run time</td><td>\d+ s \(reading \d+ s, planning \d+ s, writing the tables \d+ s, "
        r"the report \d+ s\)</td>",
        report,
    )
    images = re.findall(r"<img src='([^']+)'", report)
    assert "imbalance.png" in images and "worst-groups.png" in images
    assert sum(1 for i in images if i.startswith("group-")) == 6
    for image in images:
        assert (full / image).read_bytes().startswith(b"\x89PNG"), image


# ------------------------------------------------------------------------------------------------
# other inputs


def test_describe_folder_plans_as_the_core(spark: SparkSession, tmp_path: Path) -> None:
    folder = tmp_path / "dumps"
    folder.mkdir()
    (folder / "seed002.txt").write_text(SEED002.read_text())
    out = tmp_path / "out"
    run(options(out, describe=(str(folder),), auto_offset_reset="earliest", report=False), spark)
    members = read_members(out)
    for group in load_describe(SEED002, "earliest"):
        gp = plan_group(group)
        for plan in [gp.current, *gp.plans]:
            assert plan is not None
            assert members[(group.id, plan.strategy)] == {
                m.member_id: m.lag for m in plan.metrics.members
            }


def test_csv_and_jsonl_inputs_with_subscriptions(spark: SparkSession, tmp_path: Path) -> None:
    """Snapshot CSV with nulls, a member subscribing one topic, a group with no commits under
    earliest; the group's plans are the core's."""
    snapshot = tmp_path / "snap.csv"
    with snapshot.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "group",
                "topic",
                "partition",
                "begin",
                "end",
                "committed",
                "member_id",
                "client_id",
                "host",
                "subscribed",
                "auto_offset_reset",
            ]
        )
        w.writerow(["g1", "a", 0, 0, 100, 10, "m1", "c1", "/h1", "a", ""])
        w.writerow(["g1", "a", 1, 0, 50, "", "m2", "c2", "/h2", "a,b", ""])
        w.writerow(["g1", "b", 0, 5, 500, 400, "m2", "c2", "/h2", "a b", ""])
        w.writerow(["g2", "c", 0, 10, 30, "", "", "", "", "", "earliest"])
    out = tmp_path / "out"
    result = run(options(out, inputs=(str(snapshot),), report=False), spark)
    assert (result.groups, result.partitions) == (2, 4)
    lags = {(r["group"], r["topic"], r["partition"]): r["lag"] for r in read(out, "partitions")}
    assert lags == {("g1", "a", 0): 90, ("g1", "a", 1): 0, ("g1", "b", 0): 100, ("g2", "c", 0): 20}
    g1 = Group.of(
        [
            Topic(
                "a",
                (
                    Partition("a", 0, offsets=Offsets(0, 100, 10)),
                    Partition("a", 1, offsets=Offsets(0, 50, None)),
                ),
            ),
            Topic("b", (Partition("b", 0, offsets=Offsets(5, 500, 400)),)),
        ],
        [
            Member("m1", frozenset({"a"}), owned=(Partition("a", 0).tp,)),
            Member("m2", frozenset({"a", "b"}), owned=(Partition("a", 1).tp, Partition("b", 0).tp)),
        ],
        id="g1",
    )
    members = read_members(out)
    for plan in plan_group(g1).plans:
        assert members[("g1", plan.strategy)] == {m.member_id: m.lag for m in plan.metrics.members}
    # a group without members: every strategy assigns nothing, nobody owns anything
    assert next(r for r in read(out, "groups") if r["group"] == "g2")["members"] == 0


def test_group_rows_round_trip() -> None:
    """Model groups -> rows -> model groups (the describe and live sources' way in)."""
    for group in load_describe(SEED002, "earliest"):
        cols = group_rows(group, "x")
        rows = pa.Table.from_pydict(cols).to_pylist()
        rebuilt = build_group(rows)
        assert {m.id: set(m.owned) for m in rebuilt.members} == {
            m.id: set(m.owned) for m in group.members
        }
        assert plan_group(rebuilt).lags == plan_group(group).lags


def _planned_tables(planned: list[pa.RecordBatch]) -> dict[str, list[dict[str, Any]]]:
    """Every table's rows that planned batches carry, sorted."""
    return {
        name: sorted(
            (r for b in table_rows(planned, kind) for r in b.to_pylist()),
            key=lambda r: json.dumps(r, sort_keys=True),
        )
        for name, (kind, _) in TABLES.items()
    }


def test_packed_groups_plan_alike_however_their_rows_come() -> None:
    """The sources pack each batch they read by group (spark.packing): a group's rows split
    over batches (files), groups interleaved in one batch, list columns and a member owning
    nothing plan exactly as each group's rows planned by the core's glue at once."""
    odd = 't,"0\\'
    t0 = Topic(odd, tuple(Partition(odd, p, lag=lag) for p, lag in enumerate([50, 7, 300])))
    t1 = Topic("t1", tuple(Partition("t1", p, lag=lag) for p, lag in enumerate([9, 80])))
    g = Group.of(
        [t0, t1],
        [Member("A", frozenset({odd}), owned=(t0.partitions[0].tp,)), Member("B", frozenset())],
        id="g",
    )
    h = Group.of([t1], [Member("C", frozenset({"t1"}), owned=(t1.partitions[1].tp,))], id="h")
    rows_g = rows_batch(group_rows(g, "x"))
    rows_h = rows_batch(group_rows(h, "y"))
    assert any(v for v in rows_g.column("subscribed").to_pylist())
    both = pa.Table.from_batches([rows_g, rows_h]).combine_chunks()
    interleaved = both.take([0, 6, 1, 2, 7, 3, 4, 5]).to_batches()[0]
    expected = Results()
    for batch in (rows_g, rows_h):
        plan_rows(batch.to_pylist(), names(), expected)
    as_read = list(plan_batches([pack(rows_g), pack(rows_h)], names()))
    split = list(plan_batches([pack(interleaved.slice(0, 3)), pack(interleaved.slice(3))], names()))
    want = {
        name: sorted(
            (r for kind_, b in expected.chunks() if kind_ == kind for r in b.to_pylist()),
            key=lambda r: json.dumps(r, sort_keys=True),
        )
        for name, (kind, _) in TABLES.items()
    }
    assert _planned_tables(as_read) == want
    assert _planned_tables(split) == want
    assert {r["member_id"] for r in want["plans"]} == {"A", "C"}


def test_a_packed_group_carries_its_own_rows_only() -> None:
    """A group packed from a batch of many groups is as large as packed alone: the topics other
    groups' rows subscribe (a list column) do not travel with it."""
    many = [f"topic-{i:04d}" for i in range(2000)]
    cols = {name: [] for name in ROW_SCHEMA.names}
    # (a slice whose lists are all null carried the whole child array of the batch)
    for g, subscribed in (("big", many), ("small", None)):
        for p in range(3):
            for name in ROW_SCHEMA.names:
                cols[name].append(None)
            cols["group"][-1], cols["topic"][-1], cols["partition"][-1] = g, "t", p
            cols["begin"][-1], cols["end"][-1], cols["member_id"][-1] = 0, 5, "m"
            cols["subscribed"][-1] = subscribed
    both = pa.RecordBatch.from_pydict(cols, schema=ROW_SCHEMA)
    packed = pack(both)
    alone = pack(both.filter(pa.array([g == "small" for g in cols["group"]])))
    groups, data = packed.column("group").to_pylist(), packed.column("arrow").to_pylist()
    sizes = dict(zip(groups, data, strict=True))
    assert len(sizes["small"]) == len(alone.column("arrow")[0].as_py())
    assert len(sizes["small"]) < len(sizes["big"]) / 10
    assert [b.to_pylist() for b in unpacked([packed])["small"]] == [
        alone_rows.to_pylist() for alone_rows in unpacked([alone])["small"]
    ]


def static_group(gid: str = "static") -> Group:
    """Two static members whose instance ids sort the other way round from their member ids
    (Kafka's range orders static members by instance id), a dynamic one, and owned partitions
    from different generations. (A snapshot row names one owner per partition, so partitions
    claimed twice cannot be written as rows.)"""
    t0 = Topic("t0", tuple(Partition("t0", p, lag=lag) for p, lag in enumerate([50, 7, 300, 1])))
    t1 = Topic("t1", tuple(Partition("t1", p, lag=lag) for p, lag in enumerate([9, 80, 0, 12])))
    both = frozenset({"t0", "t1"})
    return Group.of(
        [t0, t1],
        [
            Member("C1", both, instance_id="z-static", owned=(t0.partitions[0].tp,), generation=3),
            Member("C2", both, instance_id="a-static", owned=(t1.partitions[3].tp,), capacity=25.5),
            Member("C3", both, owned=(t0.partitions[2].tp, t1.partitions[1].tp), generation=5),
        ],
        id=gid,
    )


def test_static_members_and_generations_survive_the_rows() -> None:
    """Snapshot rows carry instance_id, generation and capacity, so range (static members
    ordered by instance id), the sticky strategies (generations) and balanced (capacities)
    plan from rows exactly as from the group (issue 11's bug)."""
    group = static_group()
    rebuilt = build_group(pa.Table.from_pydict(group_rows(group, "x")).to_pylist())
    assert rebuilt.members == group.members
    for strategy in ("range", "sticky", "cooperative-sticky", "balanced"):
        assert plan_group(rebuilt, [strategy]).plans == plan_group(group, [strategy]).plans


def test_rows_that_disagree_about_a_member_name_the_row() -> None:
    rows = pa.Table.from_pydict(group_rows(static_group(), "f.jsonl")).to_pylist()
    for i, row in enumerate(rows, 1):
        row["row"] = i
    c3 = [r for r in rows if r["member_id"] == "C3"]
    c3[-1]["generation"] = 4
    with pytest.raises(InputError, match=r"^f\.jsonl:\d+: generation: 4 disagrees with 5 "):
        build_group(rows)


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_static_members_plan_as_assign_from_every_file_format(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """A snapshot file with static members and generations through the pipeline: every
    strategy's plan is what ``lagassign assign --input FILE --group G`` reads from the same file
    and gives (member by member, with the same member lag), and the core's plan_group on the
    group the file was written from."""
    groups = [static_group("static-a"), static_group("static-b")]
    table = pa.concat_tables(
        pa.Table.from_pydict(group_rows(g, "x")).select(SNAPSHOT_COLUMNS) for g in groups
    )
    # the rows carry lags as such (the model groups have no offsets): files carry offsets
    table = table.set_column(
        table.schema.get_field_index("begin"), "begin", pa.array([0] * len(table), pa.int64())
    )
    table = table.set_column(
        table.schema.get_field_index("end"),
        "end",
        pa.array(group_rows_lags(groups), pa.int64()),
    )
    table = table.set_column(
        table.schema.get_field_index("committed"),
        "committed",
        pa.array([0] * len(table), pa.int64()),
    )
    path = tmp_path / f"fleet.{suffix}"
    if suffix == "parquet":
        pq.write_table(table, path)
    elif suffix == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()))
    else:
        with path.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(table.schema.names)
            for r in table.to_pylist():
                w.writerow(
                    " ".join(v) if isinstance(v, list) else "" if v is None else v
                    for v in r.values()
                )
    out = tmp_path / "out"
    run(options(out, inputs=(str(path),), report=False), spark)
    plans, members = pipeline_plans(out), read_members(out)
    for g in groups:
        for plan in plan_group(g).plans:
            core = {
                m: sorted((tp.topic, tp.partition) for tp in tps)
                for m, tps in plan.assignment.partitions.items()
            }
            result = lagassign_assign(
                capsys, "--strategy", plan.strategy, "--input", str(path), "--group", g.id
            )
            assignment, member_lag = expected(result)
            assert plans[(g.id, plan.strategy)] == assignment == core, (g.id, plan.strategy)
            assert members[(g.id, plan.strategy)] == member_lag, (g.id, plan.strategy)


def group_rows_lags(groups: list[Group]) -> list[int]:
    """Each row's lag, in group_rows' order: as the end offset over begin = committed = 0."""
    return [p.lag or 0 for g in groups for p in g.partitions()]


#: the columns of a snapshot file (the pipeline adds lag, source, row and error)
SNAPSHOT_COLUMNS = [f.name for f in SNAPSHOT_SCHEMA]


# ------------------------------------------------------------------------------------------------
# bad input: one line naming the file, the row and the column


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


HEADER = "group,topic,partition,begin,end,committed,member_id,client_id,host\n"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "bad-type.csv",
            HEADER + "g,t,0,0,10,,,,\ng,t,1,0,abc,,,,\n",
            "bad-type.csv:3: end: expected an integer, got 'abc'",
        ),
        (
            "missing.csv",
            "group,topic,partition,begin,committed\n",
            "missing.csv:1: missing column 'end'",
        ),
        (
            "negative.csv",
            HEADER + "g,t,0,0,10,-5,,,\n",
            "negative.csv:2: committed: must not be negative, got -5",
        ),
        (
            "below.csv",
            HEADER + "g,t,0,20,10,,,,\n",
            "below.csv:2: end: end offset 10 is below begin offset 20",
        ),
        (
            "unknown.csv",
            HEADER.strip() + ",comitted\ng,t,0,0,10,,,,,5\n",
            "unknown.csv:1: unknown column 'comitted'",
        ),
        (
            "type.jsonl",
            '{"group": "g", "topic": "t", "partition": "0", "begin": 0, "end": 1}\n',
            "type.jsonl:1: partition: expected an integer, got '0'",
        ),
        (
            "nulls.jsonl",
            '\n{"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": null}\n',
            "nulls.jsonl:2: end: missing (required)",
        ),
        (
            "reset.jsonl",
            '{"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": 1, '
            '"auto_offset_reset": "lastest"}\n',
            "reset.jsonl:1: auto_offset_reset: expected latest, earliest, none or by_duration:",
        ),
        ("broken.jsonl", '{"group": "g",\n', "broken.jsonl:1: invalid JSON"),
    ],
)
def test_bad_snapshot_files(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = _write(tmp_path / name, text)
    with pytest.raises(InputError) as e:
        list(read_snapshot(path))
    assert str(e.value).startswith(f"{tmp_path}/{message}")


def test_bad_parquet_files(tmp_path: Path) -> None:
    good = {
        "group": ["g", "g"],
        "topic": ["t", "t"],
        "partition": [0, 1],
        "begin": [0, 0],
        "end": [10, 20],
    }
    cases = {
        "string-partition": (
            {**good, "partition": ["0", "x"]},
            "row 1: partition: expected an integer, got '0'",
        ),
        "negative-begin": (
            {**good, "begin": [0, -5]},
            "row 2: begin: must not be negative, got -5",
        ),
        "no-topic": ({k: v for k, v in good.items() if k != "topic"}, "missing column 'topic'"),
    }
    for name, (data, message) in cases.items():
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table(data), path)
        with pytest.raises(InputError) as e:
            list(read_snapshot(str(path)))
        assert str(e.value) == f"{path}: {message}", name
    # pandas writes an integer column with nulls as floats: read as integers
    path = tmp_path / "floats.parquet"
    pq.write_table(pa.table({**good, "committed": [5.0, float("nan")]}), path)
    [batch] = list(read_snapshot(str(path)))
    assert batch.column("committed").to_pylist() == [5, None]


def test_rows_that_disagree_name_the_row() -> None:
    rows = [
        {
            "group": "g",
            "topic": "t",
            "partition": 0,
            "begin": 0,
            "end": 1,
            "source": "f.csv",
            "row": 2,
        },
        {
            "group": "g",
            "topic": "t",
            "partition": 0,
            "begin": 0,
            "end": 1,
            "source": "f.csv",
            "row": 7,
        },
    ]
    with pytest.raises(
        InputError,
        match=r"^f\.csv:7: partition: t-0 listed twice for group 'g' \(also at f\.csv:2\)",
    ):
        build_group(rows)
    rows[1] |= {"partition": 1, "auto_offset_reset": "earliest"}
    rows[0] |= {"auto_offset_reset": "latest"}
    with pytest.raises(InputError, match=r"^f\.csv:7: auto_offset_reset: 'earliest' disagrees"):
        build_group(rows)
    rows[1] |= {"auto_offset_reset": None, "member_id": "m", "subscribed": ["u"]}
    with pytest.raises(InputError, match=r"^f\.csv:7: subscribed: topic 'u' has no partitions"):
        build_group(rows)


def test_bad_file_in_a_folder_stops_the_run_and_writes_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "a.csv", HEADER + "g,t,0,0,10,5,m,c,h\n")
    bad = _write(folder / "b.csv", HEADER + "g2,t,0,0,10,5,m,c,h\ng2,t,1,0,x10,5,m,c,h\n")
    out = tmp_path / "out"
    previous = out / "summary.json"
    out.mkdir()
    previous.write_text(json.dumps({"tool": "lagassign pipeline", "marker": 1}))
    with pytest.raises(InputError) as e:
        run(options(out, inputs=(str(folder),)), spark)
    assert str(e.value) == f"{bad}:3: end: expected an integer, got 'x10'"
    # the previous output is untouched, and no staging folder is left behind
    assert json.loads(previous.read_text())["marker"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]


def test_duplicate_partition_across_files_is_named(spark: SparkSession, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _write(
        folder / "a.jsonl", '{"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": 1}\n'
    )
    _write(
        folder / "b.jsonl", '\n{"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": 3}\n'
    )
    with pytest.raises(InputError, match=r"b\.jsonl:2: partition: t-0 listed twice for group 'g'"):
        run(options(tmp_path / "out", inputs=(str(folder),)), spark)
    assert not (tmp_path / "out").exists()


def test_out_is_never_a_folder_of_something_else(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with (
        pytest.raises(InputError, match="not a lagassign pipeline output"),
        staging(tmp_path / "mine"),
    ):
        pass
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad.csv", HEADER + "g,t,0,0,10,-1,m,c,h\n")
    out = tmp_path / "out"
    done = run_pipeline("--input", bad, "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert error_lines(done.stderr) == [f"lagassign: error: {bad}:2: committed: must not be negative, got -1"]
    assert "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sample", "--format", "csv"], "--format: only with --input"),
        (["--sample", "--timeout", "3"], "--timeout: only with --bootstrap-server"),
        (["--sample", "--auto-offset-reset", "earliest"], "--auto-offset-reset: only with"),
        (["--sample", "--strategies", "lag,nope"], "--strategies: unknown strategy 'nope'"),
        (["--sample", "--strategies", ","], "--strategies: name at least one strategy"),
        (["--sample", "--groups", "("], "--groups: not a regular expression"),
    ],
)
def test_bad_flags_exit_2_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert cli.main(["pipeline", *args, "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith(f"lagassign: error: {message}")


# ------------------------------------------------------------------------------------------------
# whole groups without a shuffle


def test_spread_files_keeps_groups_together_and_the_cores_even() -> None:
    # files 0 and 3 share group "b"; 4 shares "e" with 3 (so 0, 3, 4 go together)
    files = [(40, ["a", "b"]), (30, ["c"]), (30, ["d"]), (20, ["b", "e"]), (10, ["e"])]
    spread = spread_files(files, tasks=8, cores=2)
    assert spread == [[0, 3, 4], [1], [2]]
    # fewer tasks than sets of files: the sets are filled in, the largest first
    assert spread_files(files, tasks=2, cores=2) == [[0, 3, 4], [1, 2]]
    # one set of files holding most rows would leave a core idle: shuffle instead
    assert spread_files([(100, ["a"]), (10, ["b"]), (10, ["a", "c"])], tasks=8, cores=2) is None
    assert spread_files([(100, ["a"])], tasks=8, cores=2) is None
    assert spread_files([(100, ["a"])], tasks=8, cores=1) == [[0]]


def _split_sample(folder: Path) -> tuple[list[Path], str]:
    """The sample fleet's generated groups as 4 Parquet files, whole groups but one, whose rows
    are in the first file and the last. Returns the files and that group."""
    table = pq.read_table(sample_fleet() / "generated.parquet")
    names = sorted(set(table.column("group").to_pylist()))
    split = names[0]
    folder.mkdir()
    files = []
    for i in range(4):
        mine = set(names[1 + i :: 4])
        keep = [g in mine for g in table.column("group").to_pylist()]
        part = table.filter(pa.array(keep))
        rows = table.filter(pa.array([g == split for g in table.column("group").to_pylist()]))
        if i == 0:
            part = pa.concat_tables([rows.slice(0, rows.num_rows // 2), part])
        if i == 3:
            part = pa.concat_tables([part, rows.slice(rows.num_rows // 2)])
        files.append(folder / f"part-{i}.parquet")
        pq.write_table(part, files[-1])
    return files, split


def test_parquet_files_of_whole_groups_plan_without_a_shuffle_as_with_one(
    spark: SparkSession, tmp_path: Path, full: Path
) -> None:
    """Parquet files are spread over the tasks whole, files sharing a group together; read and
    planned in one pass per task, with no shuffle, they give the tables the shuffled rows of
    the same groups give (the sample fleet, read through the shuffle: seed 002's JSON lines
    are not looked into)."""
    files, split = _split_sample(tmp_path / "in")
    rows = read_files(spark, [str(tmp_path / "in")], tasks=8)
    assert isinstance(rows, WholeGroups)
    assert [str(files[0]), str(files[3])] in rows.tasks and sum(map(len, rows.tasks)) == 4
    # as a DataFrame (for Spark's writers at a URL): a partition per task, no shuffle either
    frame = [sorted(r["path"] for r in task) for task in rows.frame(spark).rdd.glom().collect()]
    assert sorted(frame) == sorted(rows.tasks)
    planned = plan_groups(rows, names(), 8)
    assert "Exchange" not in planned._jdf.queryExecution().executedPlan().toString()
    assert isinstance(read_files(spark, [str(sample_fleet())]), DataFrame)

    out = tmp_path / "out"
    result = run(options(out, inputs=(str(tmp_path / "in"),), report=False), spark)
    assert result.groups == 300
    for name in TABLES:
        ours = read(out, name)
        theirs = [r for r in read(full, name) if not r["group"].startswith("test-group")]
        assert sorted(map(repr, ours)) == sorted(map(repr, theirs)), name
    assert {r["group"] for r in read(out, "groups")} >= {split}
    # the DataFrame's results (what Spark's writers write at a URL) carry the same rows
    carried: dict[str, int] = defaultdict(int)
    for r in planned.collect():
        carried[r["kind"]] += r["rows"]
    assert {name: carried[kind] for name, (kind, _) in TABLES.items()} == result.tables


def test_duplicate_partition_across_parquet_files_is_named(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Files that share a group are read by one task: its rows meet as through the shuffle."""
    folder = tmp_path / "in"
    folder.mkdir()
    row = {"group": ["g"], "topic": ["t"], "partition": [0], "begin": [0], "end": [1]}
    pq.write_table(pa.table(row), folder / "a.parquet")
    pq.write_table(pa.table({**row, "group": ["h"]}), folder / "b.parquet")
    pq.write_table(pa.table({**row, "end": [3]}), folder / "c.parquet")
    with pytest.raises(InputError, match=r"c\.parquet: row 1: partition: t-0 listed twice"):
        run(options(tmp_path / "out", inputs=(str(folder),)), spark)
    assert not (tmp_path / "out").exists()
