"""``lagassign monitor``'s plans on the real broker and real Spark: a running group of two
members reads a topic whose backlog is uneven (the member owning partitions 0 and 1 has ten
times the other's) and commits a few records of every partition a few times a second while
the monitor runs with the default ``--plan-every`` (5 minutes), until the group's ``groups``
rows have a plan (its second micro-batch measures the rates), then is stopped by SIGTERM. The
last micro-batch's ``groups`` row holds the plan's catch-up times, ``balanced``'s shorter,
and recommends it; every ``lag`` row names the member that owns the partition."""

from __future__ import annotations

import math
import re
import signal
import subprocess
import time
from pathlib import Path

import pyarrow.dataset as ds
from confluent_kafka import TopicPartition as KafkaTopicPartition

from tests.kafka.test_monitor_live import on_cluster
from tests.kafka.test_offsets import MakeTopic, running_group, unique
from tests.kafka.test_offsets import admin as admin  # fixture used by make_topic
from tests.kafka.test_offsets import make_topic as make_topic  # fixture

#: the range assignor gives one member partitions 0 and 1, the other 2 and 3; the light
#: partitions keep a backlog for 1,000 s of the test's commits (4 a second), far longer than
#: the run
COUNTS = [40_000, 40_000, 4_000, 4_000]
#: seconds between the test's commits; each commit reads one more record of every partition
COMMIT_EVERY_S = 0.25
#: the test's commits between two looks at the ``groups`` table
LOOK_EVERY = 8
#: how long to wait for the first plan (Spark's start included) and for the stop after it
TIMEOUT_S = 240.0


def planned(out: Path, group: str) -> bool:
    """Whether a ``groups`` row of ``group`` has a plan (its catch-up time now is known)."""
    if not (out / "groups").is_dir():
        return False
    rows = ds.dataset(out / "groups", format="parquet", partitioning="hive").to_table()
    return any(r["group"] == group and r["catch_up_now_s"] is not None for r in rows.to_pylist())


def test_plans_fill_the_catch_up_columns_of_a_group_with_a_backlog(
    kafka_bootstrap: str, make_topic: MakeTopic, tmp_path: Path
) -> None:
    topic = make_topic(COUNTS)
    group = unique("q-plan")
    out = tmp_path / "out"
    args = ("--interval", "4")  # the default --plan-every, no --duration: stopped below
    with running_group(kafka_bootstrap, group, [topic], members=2) as consumers:
        owned = {c.memberid(): sorted(tp.partition for tp in c.assignment()) for c in consumers}
        assert sorted(owned.values()) == [[0, 1], [2, 3]]
        read = 0
        with (tmp_path / "stdout").open("w") as stdout, (tmp_path / "stderr").open("w") as err:
            proc = subprocess.Popen(
                on_cluster(kafka_bootstrap, re.escape(group), out, *args), stdout=stdout, stderr=err
            )
            deadline = time.monotonic() + TIMEOUT_S
            stopped = False
            try:
                while proc.poll() is None:
                    assert time.monotonic() < deadline, (
                        "the monitor did not stop" if stopped else "no plan of the group yet"
                    )
                    read += 1
                    for c in consumers:
                        offsets = [
                            KafkaTopicPartition(topic, tp.partition, read) for tp in c.assignment()
                        ]
                        c.commit(offsets=offsets, asynchronous=False)
                    if not stopped and read % LOOK_EVERY == 0 and planned(out, group):
                        proc.send_signal(signal.SIGTERM)  # finishes its micro-batch, exits 0
                        stopped = True
                    time.sleep(COMMIT_EVERY_S)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
    assert proc.returncode == 0, (tmp_path / "stderr").read_text()[-3000:]
    assert read < min(COUNTS)  # every partition kept a backlog

    groups = ds.dataset(out / "groups", format="parquet", partitioning="hive").to_table()
    last = max(groups.to_pylist(), key=lambda r: r["time"])
    now_s, balanced_s = last["catch_up_now_s"], last["catch_up_balanced_s"]
    assert (last["group"], last["members"]) == (group, 2)
    # the heavy member has ten times the light one's backlog at the same rates
    assert now_s is not None and balanced_s is not None
    assert 0 < balanced_s < now_s < math.inf
    assert last["recommendation"].startswith("rebalance with balanced: catch-up ")

    lag = ds.dataset(out / "lag", format="parquet", partitioning="hive").to_table().to_pylist()
    owners = {p: member for member, parts in owned.items() for p in parts}
    assert {(r["partition"], r["member_id"]) for r in lag} == set(owners.items())
