"""The monitor's streaming query: Spark's Kafka source on ``__consumer_offsets`` ->
:class:`MonitorBatches` in ``foreachBatch`` (docs/monitor.md).

* Source: ``subscribe=__consumer_offsets`` with ``kafka.exclude.internal.topics=false``,
  ``startingOffsets=earliest`` on the first start, then the checkpoint
  (``CHECKPOINT/query``). Spark's default offset reader (the admin client's) sees no records
  in ``__consumer_offsets`` (found with Spark 4.2's Kafka source against Kafka 4.4); the
  consumer-based one (``spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true``) does.
* Each micro-batch: the log ends read first (:meth:`MonitorBatches.sample`), then its
  records reduced on the executors to the last of each key (:func:`batch_records`), in log
  order, to :meth:`MonitorBatches.run` on the driver, the commit state under
  ``CHECKPOINT/commits``; one progress line (its time from the log-end read on).
* Stops after ``duration`` seconds, or on SIGINT/SIGTERM, between micro-batches: the running
  one is finished and committed first. The JVM runs in a process group of its own, so a
  signal to the monitor's whole process group does not end it mid-batch.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType
from typing import Any

from lagassign.collector import collector_paused
from lagassign.formats.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from lagassign.kafka.groups import GroupMembers
from lagassign.kafka.offsets import OffsetsReader
from lagassign.spark.kafka_jars import kafka_jars
from lagassign.spark.monitor.batch import (
    MONITOR_GROUP,
    MonitorBatches,
    Record,
    offsets_reader_logs,
    progress_line,
)
from lagassign.spark.monitor.options import MonitorOptions

_POLL_S = 0.2
#: ``spark.sql.shuffle.partitions`` unless ``--conf`` says otherwise: the tasks that reduce a
#: micro-batch's records by key
SHUFFLE_PARTITIONS = 8
#: the share of ``--interval`` a micro-batch's plans may take (:meth:`.plans.MonitorPlans.update`)
PLAN_SHARE = 0.5


def source_options(options: MonitorOptions) -> dict[str, str]:
    """The Kafka source's options: the Java client's properties prefixed ``kafka.``."""
    java = options.source_config if options.source_config is not None else options.client_config
    source = {f"kafka.{k}": v for k, v in java.items()}
    source.update(
        {
            "subscribe": CONSUMER_OFFSETS_TOPIC,
            "kafka.exclude.internal.topics": "false",
            "startingOffsets": "earliest",
            "failOnDataLoss": "false",  # compaction removes records under a running query
        }
    )
    return source


@dataclass(frozen=True)
class BatchRecords:
    """A micro-batch's records reduced to the last of each key, in log order, and how many
    records the micro-batch read."""

    records: list[Record]
    read: int


def batch_records(frame: Any) -> BatchRecords:
    """The micro-batch's records of ``__consumer_offsets`` reduced on the executors to the last
    record of each key, collected in one Spark job: a Spark aggregation by key (each key's
    count, and its value at its highest offset) whose partial aggregates are computed before
    the shuffle, so the driver receives one record per key and never the rest.

    The last record of a key is the one the coordinator's state ends with: a key's records all
    live in one partition of ``__consumer_offsets`` (the group's), in offset order. Sorted by
    partition and offset, the kept records keep the log's order."""
    from pyspark.sql import functions as F

    last = frame.groupBy("key").agg(
        F.count(F.lit(1)).alias("read"),
        F.max("partition").alias("partition"),
        F.max("offset").alias("offset"),
        F.max_by("value", "offset").alias("value"),
    )
    table = last.toArrow().sort_by([("partition", "ascending"), ("offset", "ascending")])
    keys, values = table.column("key").to_pylist(), table.column("value").to_pylist()
    return BatchRecords(list(zip(keys, values, strict=True)), sum(table.column("read").to_pylist()))


class _Stop:
    """SIGINT/SIGTERM ask the query to stop after its running micro-batch."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        #: set as each micro-batch's rows are written
        self.batch_ended = threading.Event()

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        self.requested.set()

    def between_batches(self, query: Any) -> None:
        """Returns once no trigger is running, or once a micro-batch has written its rows
        since the call: micro-batches that take longer than the interval run back to back, and
        the moment between two of them is too short to be seen by polling, so waiting for an
        idle trigger alone kept such a query running past ``--duration`` (bench/monitor.py saw
        three more batches). Stopping right after a batch's rows may cut Spark's commit of that
        batch; a restart then replays it, and a replay replaces its rows (docs/monitor.md)."""
        self.batch_ended.clear()
        while query.status["isTriggerActive"] and not self.batch_ended.wait(_POLL_S):
            pass


def run_monitor(options: MonitorOptions) -> int:
    """Runs the query; its exit status. The cluster is read once before Spark starts, so an
    unreachable one is an :class:`OffsetsError` with nothing written."""
    jars = ",".join(str(j) for j in kafka_jars())
    reader = OffsetsReader(dict(options.client_config), options.timeout)
    try:
        reader.offsets(MONITOR_GROUP, [CONSUMER_OFFSETS_TOPIC])
    except BaseException:
        reader.close()
        raise
    with reader:
        return _run(options, jars, reader)


def _run(options: MonitorOptions, jars: str, reader: OffsetsReader) -> int:
    from lagassign.spark.options import PipelineOptions
    from lagassign.spark.pipeline import start_session

    conf = (
        ("spark.jars", jars),
        ("spark.sql.streaming.kafka.useDeprecatedOffsetFetching", "true"),
        # the reduction by key shuffles a few records per key: Spark's 200 tasks for it were
        # most of a micro-batch's time on a small machine
        ("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS)),
        *options.conf,
    )
    # the JVM in a process group of its own: a SIGTERM to the monitor's whole group (a
    # supervisor's, kill -- -PGID) reaches this process only, which finishes the micro-batch
    spark = start_session(
        PipelineOptions(out=options.out, master=options.master, conf=conf, quiet=True),
        own_process_group=True,
        batch=False,
    )
    checkpoint = options.checkpoint_dir
    stop = _Stop()
    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        batches = MonitorBatches(
            options.out,
            checkpoint / "commits",
            offsets_reader_logs(reader),
            options.group,
            read_members=GroupMembers(dict(options.client_config), options.timeout),
            plan_every_s=options.plan_every * 60,
            recommend_threshold=options.recommend_threshold,
            plan_budget_s=options.interval * PLAN_SHARE,
        )

        def each(frame: Any, batch_id: int) -> None:
            with collector_paused():  # see MonitorBatches.run
                batches.sample(batch_id)  # the log ends first: the sample nearest the commits
                reduced = batch_records(frame)
                summary = batches.run(batch_id, reduced.records, read=reduced.read)
            print(progress_line(summary), flush=True)
            stop.batch_ended.set()

        reader_stream = spark.readStream.format("kafka")
        for key, value in source_options(options).items():
            reader_stream = reader_stream.option(key, value)
        query = (
            reader_stream.load()
            .writeStream.foreachBatch(each)
            .option("checkpointLocation", str(checkpoint / "query"))
            .trigger(processingTime=f"{options.interval} seconds")
            .start()
        )
        ends = None if options.duration is None else time.monotonic() + options.duration
        while query.isActive:
            if stop.requested.is_set() or (ends is not None and time.monotonic() >= ends):
                stop.between_batches(query)
                query.stop()
                break
            time.sleep(_POLL_S)
        if query.exception() is not None:
            print(f"lagassign: error: monitor: {query.exception()}", file=sys.stderr)
            return 1
        return 0
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        spark.stop()
