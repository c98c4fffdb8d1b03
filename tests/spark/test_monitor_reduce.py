"""The monitor's micro-batch reduced on the executors (spark/monitor/query.batch_records): the
last record of each key in log order, how many records were read, and the same commit state
and ``lag`` rows as from every record."""

from __future__ import annotations

from pathlib import Path

import pyarrow.dataset as ds
from pyspark.sql import SparkSession
from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

from lagassign.model import Offsets, TopicPartition
from lagassign.spark.monitor.batch import MonitorBatches, Record
from lagassign.spark.monitor.query import batch_records
from tests.test_consumer_offsets import key, value
from tests.test_monitor_batch import T0, Clock

SOURCE = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
    ]
)


def test_the_last_record_of_each_key_in_log_order(spark: SparkSession, tmp_path: Path) -> None:
    """__consumer_offsets partition 0 holds group g's records, partition 1 group h's: g commits
    t-0 three times and t-1 once, h commits t-0 and then deletes it (a tombstone), and a group
    metadata record of g comes between. The driver gets each key's last record, in log order."""
    g0, g1, h0 = key("g", "t", 0), key("g", "t", 1), key("h", "t", 0)
    metadata = b"\x00\x02\x00\x01g"  # a group metadata key (version 2): skipped when decoded
    rows: list[tuple[bytes, bytes | None, int, int]] = [
        (g0, value(4, 10), 0, 100),
        (g1, value(4, 3), 0, 101),
        (g0, value(4, 20), 0, 102),
        (metadata, b"\x00\x03", 0, 103),
        (g0, value(4, 15), 0, 104),  # a reset to earlier: still the last
        (h0, value(4, 7), 1, 50),
        (h0, None, 1, 51),
    ]
    frame = spark.createDataFrame(rows, SOURCE)
    reduced = batch_records(frame)
    assert reduced.read == len(rows)
    assert reduced.records == [
        (g1, value(4, 3)),
        (metadata, b"\x00\x03"),
        (g0, value(4, 15)),
        (h0, None),
    ]

    logs = {TopicPartition("t", p): Offsets(0, 40) for p in range(2)}

    def lag_rows(out: Path, records: list[Record], read: int | None) -> list[dict[str, object]]:
        batches = MonitorBatches(out, out / "state", lambda topics: logs, clock=Clock(T0))
        summary = batches.run(0, records, read=read)
        assert (summary.records, summary.counts.total) == (len(rows), len(records))
        table = ds.dataset(out / "lag", format="parquet", partitioning="hive").to_table()
        return sorted(table.to_pylist(), key=lambda r: (r["group"], r["partition"]))  # type: ignore[arg-type,return-value]

    every = [(k, v) for k, v, _, _ in rows]
    assert lag_rows(tmp_path / "reduced", reduced.records, reduced.read) == lag_rows(
        tmp_path / "every", every, None
    )
    assert [
        (r["group"], r["partition"], r["committed"])
        for r in lag_rows(tmp_path / "again", reduced.records, reduced.read)
    ] == [("g", 0, 15), ("g", 1, 3)]
