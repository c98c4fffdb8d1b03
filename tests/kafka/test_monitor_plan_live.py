"""``lagassign monitor``'s plans on the real broker and real Spark: a running group of two
members reads a topic whose backlog is uneven (the member owning partitions 0 and 1 has ten
times the other's) and commits a few records of every partition a few times a second while
the monitor runs with a plan every 15 s. The last micro-batch's ``groups`` row holds the last
plan's catch-up times, ``balanced``'s shorter, and recommends it; every ``lag`` row names the
member that owns the partition."""

from __future__ import annotations

import math
import re
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
RUN_S = 300.0


def test_plans_fill_the_catch_up_columns_of_a_group_with_a_backlog(
    kafka_bootstrap: str, make_topic: MakeTopic, tmp_path: Path
) -> None:
    topic = make_topic(COUNTS)
    group = unique("q-plan")
    out = tmp_path / "out"
    args = ("--interval", "2", "--duration", "40", "--plan-every", "0.25")
    with running_group(kafka_bootstrap, group, [topic], members=2) as consumers:
        owned = {c.memberid(): sorted(tp.partition for tp in c.assignment()) for c in consumers}
        assert sorted(owned.values()) == [[0, 1], [2, 3]]
        read = 0
        with (tmp_path / "stdout").open("w") as stdout, (tmp_path / "stderr").open("w") as err:
            proc = subprocess.Popen(
                on_cluster(kafka_bootstrap, re.escape(group), out, *args), stdout=stdout, stderr=err
            )
            deadline = time.monotonic() + RUN_S
            try:
                while proc.poll() is None:
                    assert time.monotonic() < deadline, "the monitor did not stop"
                    read += 1
                    for c in consumers:
                        offsets = [
                            KafkaTopicPartition(topic, tp.partition, read) for tp in c.assignment()
                        ]
                        c.commit(offsets=offsets, asynchronous=False)
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
