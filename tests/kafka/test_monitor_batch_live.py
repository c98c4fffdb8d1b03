"""spark/monitor's micro-batches on the real broker, without Spark yet: a classic kafka-python
group and a KIP-848 confluent-kafka group commit known offsets on a topic of known counts;
``__consumer_offsets`` read raw is handed to :class:`MonitorBatches` in two micro-batches with
the real :class:`OffsetsReader`; more records are produced and a third, empty micro-batch
samples again. Every row of the ``lag`` table is log end − committed of its sample, the log
ends the broker's own, and ``--group`` keeps only the two groups."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow.dataset as ds

from lagassign.kafka.offsets import OffsetsReader
from lagassign.spark.monitor.batch import MonitorBatches, offsets_reader_logs
from tests.kafka.broker import admin_client, end_offsets, produce
from tests.kafka.test_consumer_offsets_live import commit_classic, commit_kip848, read_raw
from tests.kafka.test_offsets import MakeTopic, unique
from tests.kafka.test_offsets import admin as admin  # fixture used by make_topic
from tests.kafka.test_offsets import make_topic as make_topic  # fixture

COUNTS = [30, 12, 0]
#: (partition, offset): what each group commits, in this order
CLASSIC = [(0, 4), (0, 10), (1, 12)]
KIP848 = [(0, 25), (2, 0)]
MORE = 5  # records produced to partition 1 before the third micro-batch


def test_lag_rows_are_log_end_minus_committed(
    kafka_bootstrap: str, make_topic: MakeTopic, tmp_path: Path
) -> None:
    topic = make_topic(COUNTS)
    classic, kip848 = unique("mon-classic"), unique("mon-kip848")
    commit_classic(kafka_bootstrap, classic, topic, [(p, o, "") for p, o in CLASSIC])
    commit_kip848(kafka_bootstrap, kip848, topic, [(p, o, "") for p, o in KIP848])
    records = list(read_raw(kafka_bootstrap))
    half = len(records) // 2

    out = tmp_path / "out"
    pattern = re.compile(f"{re.escape(classic)}|{re.escape(kip848)}")
    with OffsetsReader({"bootstrap.servers": kafka_bootstrap}) as reader:
        batches = MonitorBatches(out, tmp_path / "state", offsets_reader_logs(reader), pattern)
        first = batches.run(0, records[:half])
        second = batches.run(1, records[half:])
        produce(kafka_bootstrap, {(topic, 1): MORE})
        third = batches.run(2, [])
    assert first.records + second.records == len(records)
    assert (second.groups, second.partitions) == (2, 4)
    assert (third.records, third.partitions) == (0, 4)

    ends = end_offsets(admin_client(kafka_bootstrap), {topic: len(COUNTS)})
    assert ends == {(topic, 0): 30, (topic, 1): 12 + MORE, (topic, 2): 0}
    committed = {(classic, 0): 10, (classic, 1): 12, (kip848, 0): 25, (kip848, 2): 0}
    rows = ds.dataset(out / "lag", format="parquet", partitioning="hive").to_table().to_pylist()
    assert {r["group"] for r in rows} == {classic, kip848}
    last_batch = [r for r in rows if r["time"] == third.time]
    assert {
        (r["group"], r["partition"]): (r["committed"], r["end"], r["lag"]) for r in last_batch
    } == {(g, p): (c, ends[(topic, p)], ends[(topic, p)] - c) for (g, p), c in committed.items()}
    for r in rows:  # every sample: lag is its own log end − committed
        assert r["lag"] == r["end"] - r["committed"] >= 0, r
    second_batch = {
        (r["group"], r["partition"]): r["end"] for r in rows if r["time"] == second.time
    }
    assert second_batch[(classic, 1)] == 12  # before the later records
