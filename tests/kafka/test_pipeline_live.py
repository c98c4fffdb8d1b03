"""The PySpark pipeline against the real broker: two groups listed on the driver, read on the
executors, planned by the core.

One group runs (two subscribed members, some partitions committed), the other only has
committed offsets (no members). The pipeline's tables must say what the cluster says: each
partition's lag and owner, and each group's plans as the core makes them from a snapshot of the
same group. Groups with static members (librdkafka consumers, and kafka-python processes running
lagassign's assignor) plan through the pipeline as ``lagassign plan --bootstrap-server`` plans
them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from lagassign.kafka.offsets import OffsetsError, OffsetsReader
from lagassign.plan import plan_group
from lagassign.spark.options import PipelineOptions
from lagassign.spark.pipeline import run
from lagassign.strategies import names
from tests.kafka.broker import closed_port, commit
from tests.kafka.test_e2e import Procs, wait_settled
from tests.kafka.test_e2e import procs as procs  # fixture: consumer processes
from tests.kafka.test_offsets import (
    COLD,
    HOT,
    READ_TIMEOUT_S,
    MakeTopic,
    running_group,
    unique,
)
from tests.kafka.test_offsets import admin as admin  # fixture used by make_topic
from tests.kafka.test_offsets import make_topic as make_topic  # fixture
from tests.spark.conftest import spark as spark  # fixture: the local[2] session


def test_pipeline_reads_two_live_groups(
    kafka_bootstrap: str, make_topic: MakeTopic, spark: SparkSession, tmp_path: Path
) -> None:
    hot, cold = make_topic(HOT), make_topic(COLD)
    running, idle = unique("pipeline-running"), unique("pipeline-idle")
    committed = {(hot, 0): 100, (hot, 5): 20, (cold, 1): 9}
    commit(kafka_bootstrap, running, committed)
    commit(kafka_bootstrap, idle, {(hot, p): 0 for p in range(len(HOT))})
    config = tmp_path / "client.properties"
    config.write_text("# as for kafka-consumer-groups --command-config\nclient.id=lagassign-t\n")
    out = tmp_path / "out"

    with running_group(kafka_bootstrap, running, [hot, cold], 2) as consumers:
        owner = {(tp.topic, tp.partition): c.memberid() for c in consumers for tp in c.assignment()}
        result = run(
            PipelineOptions(
                out=out,
                bootstrap_server=kafka_bootstrap,
                command_config=str(config),
                groups=f"{re.escape(running)}|{re.escape(idle)}",
                timeout=READ_TIMEOUT_S,
                quiet=True,
            ),
            spark,
        )
        # the core on a snapshot of the same groups, read while nothing has changed
        with OffsetsReader({"bootstrap.servers": kafka_bootstrap}, timeout=READ_TIMEOUT_S) as r:
            core = {g: plan_group(r.snapshot(g).to_group()) for g in (running, idle)}

    assert (result.groups, result.partitions) == (2, len(HOT) + len(COLD) + len(HOT))
    partitions = {
        (r["group"], r["topic"], r["partition"]): (r["lag"], r["member_id"])
        for r in pq.read_table(out / "partitions").to_pylist()
    }
    expected = {
        (running, topic, p): (
            n - committed[(topic, p)] if (topic, p) in committed else 0,
            owner[(topic, p)],
        )
        for topic, counts in ((hot, HOT), (cold, COLD))
        for p, n in enumerate(counts)
    }
    expected |= {(idle, hot, p): (n, None) for p, n in enumerate(HOT)}
    assert partitions == expected

    groups = {(r["group"], r["strategy"]): r for r in pq.read_table(out / "groups").to_pylist()}
    assert {s for g, s in groups if g == running} == {"current", *names()}
    assert {s for g, s in groups if g == idle} == set(names())  # nobody owns anything
    assert groups[(running, "current")]["members"] == 2
    assert groups[(idle, "lag")]["members"] == 0

    members: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for r in pq.read_table(out / "members").to_pylist():
        members[(r["group"], r["strategy"])][r["member_id"]] = r["lag"]
    for gid, gp in core.items():
        for plan in [gp.current, *gp.plans]:
            if plan is None:
                continue
            assert members.get((gid, plan.strategy), {}) == {
                m.member_id: m.lag for m in plan.metrics.members
            }, (gid, plan.strategy)
            assert groups[(gid, plan.strategy)]["moves"] == plan.metrics.moves


def test_unreachable_cluster_is_one_error(spark: SparkSession, tmp_path: Path) -> None:
    bootstrap = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(OffsetsError, match=rf"^Kafka at {re.escape(bootstrap)}: "):
        run(
            PipelineOptions(
                out=tmp_path / "out", bootstrap_server=bootstrap, timeout=2, quiet=True
            ),
            spark,
        )
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()


#: the strategies whose plans depend on static membership or owned partitions, and one more
STATIC_STRATEGIES = ("range", "sticky", "balanced")

Plans = dict[str, dict[str, list[tuple[str, int]]]]


def pipeline_and_plan(bootstrap: str, group: str, spark: SparkSession, out: Path) -> tuple[
    Plans, Plans
]:
    """Each of :data:`STATIC_STRATEGIES`' plans for ``group`` (member -> partitions, members
    given nothing left out) from ``pipeline --bootstrap-server``, and from ``lagassign plan
    --bootstrap-server``, both read now."""
    run(
        PipelineOptions(
            out=out,
            bootstrap_server=bootstrap,
            groups=re.escape(group),
            timeout=READ_TIMEOUT_S,
            rate_window=0,
            strategies=STATIC_STRATEGIES,
            quiet=True,
        ),
        spark,
    )
    planned = subprocess.run(
        [
            sys.executable, "-m", "lagassign.cli", "plan",
            "--bootstrap-server", bootstrap, "--group", group,
            "--rate-window", "0", "--strategies", ",".join(STATIC_STRATEGIES),
            "--format", "json", "--timeout", str(READ_TIMEOUT_S),
        ],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    [result] = json.loads(planned.stdout)
    by_plan = {
        p["strategy"]: {m: sorted(map(tuple, tps)) for m, tps in p["assignment"].items() if tps}
        for p in result["plans"]
        if p["strategy"] in STATIC_STRATEGIES
    }
    got: dict[str, dict[str, list[tuple[str, int]]]] = defaultdict(dict)
    for r in pq.read_table(out / "plans").to_pylist():
        if r["strategy"] in STATIC_STRATEGIES:  # (not "current", what the members own now)
            got[r["strategy"]].setdefault(r["member_id"], []).append((r["topic"], r["partition"]))
    return {s: {m: sorted(tps) for m, tps in by.items()} for s, by in got.items()}, by_plan


def by_instance_prefix(plan: dict[str, list[tuple[str, int]]]) -> dict[str, list[tuple[str, int]]]:
    """A plan keyed by the first two dash-separated words of each member id: a static member's
    id is its instance id and a suffix, a dynamic member's its client id and a suffix."""
    return {"-".join(m.split("-")[:2]): tps for m, tps in plan.items()}


def test_static_members_plan_as_lagassign_plan(
    kafka_bootstrap: str, make_topic: MakeTopic, spark: SparkSession, tmp_path: Path
) -> None:
    """Issue 11's bug: static members read live through the pipeline plan exactly as
    ``lagassign plan --bootstrap-server`` plans them (``range`` orders static members before
    dynamic ones, by instance id; the sticky strategies read generations)."""
    hot = make_topic(HOT)
    group = unique("pipeline-static")
    commit(kafka_bootstrap, group, {(hot, 0): 100, (hot, 5): 20})
    with running_group(
        kafka_bootstrap, group, [hot], 3, instance_ids=["static-c", "static-b", None]
    ):
        got, expected = pipeline_and_plan(kafka_bootstrap, group, spark, tmp_path / "out")
    assert got == expected
    # and range is Kafka's static order, not the member ids': "member-2-…" (dynamic) sorts
    # first by id, but static members come first by instance id
    assert by_instance_prefix(expected["range"]) == {
        "static-b": [(hot, 0), (hot, 1)],
        "static-c": [(hot, 2), (hot, 3)],
        "member-2": [(hot, 4), (hot, 5)],
    }


def test_static_kafka_python_members_plan_as_lagassign_plan(
    kafka_bootstrap: str, make_topic: MakeTopic, spark: SparkSession, procs: Procs, tmp_path: Path
) -> None:
    """The same for a group of kafka-python processes running lagassign's ``sticky`` assignor,
    two of them static (``group_instance_id``): ``pipeline --bootstrap-server`` gives the
    ``range`` and ``sticky`` plans (and ``balanced``'s) that ``lagassign plan
    --bootstrap-server`` gives for the same group."""
    hot = make_topic(HOT)
    group = unique("pipeline-kafka-python")
    members = [
        procs.member(
            "kafka-python", name, group, [hot], "--strategy", "sticky",
            *(["--instance-id", name] if name.startswith("static") else []),
        )
        for name in ("static-c", "static-b", "a-dynamic")
    ]  # fmt: skip
    _, settled = wait_settled(members, {(hot, p) for p in range(len(HOT))}, procs)
    got, expected = pipeline_and_plan(kafka_bootstrap, group, spark, tmp_path / "out")
    assert got == expected
    # what the members own now stays where it is under sticky: the group is balanced already
    assert expected["sticky"] == settled
    # "a-dynamic-…" sorts first by member id; range puts the static members first
    assert by_instance_prefix(expected["range"]) == {
        "static-b": [(hot, 0), (hot, 1)],
        "static-c": [(hot, 2), (hot, 3)],
        "a-dynamic": [(hot, 4), (hot, 5)],
    }
