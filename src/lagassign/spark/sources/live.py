"""A live cluster (``--bootstrap-server``): every consumer group (or those ``--groups``
matches), listed on the driver and read on the executors, a share of the groups per task,
each task with its own :class:`~lagassign.kafka.offsets.OffsetsReader`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from lagassign.arguments import (
    DEFAULT_RATE_WINDOW_S,
    DEFAULT_TIMEOUT_S,
    bootstrap_servers,
    seconds_or_zero,
    timeout_seconds,
)
from lagassign.formats.errors import InputError
from lagassign.spark.sources import CLUSTER, WholeGroups, flag, source

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from lagassign.spark.options import PipelineOptions

log = logging.getLogger(__name__)


@source(
    "live",
    flags=(
        flag(
            "--bootstrap-server",
            type=bootstrap_servers,
            metavar="HOST:PORT",
            help="read every consumer group (or those --groups matches) live from this cluster",
        ),
        flag(
            "--command-config",
            metavar="FILE",
            help="with --bootstrap-server: Kafka client properties (security.protocol, sasl.*, "
            "ssl.*)",
        ),
        flag(
            "--timeout",
            type=timeout_seconds,
            metavar="S",
            default=DEFAULT_TIMEOUT_S,
            help=f"with --bootstrap-server: seconds for reading one group "
            f"(default {DEFAULT_TIMEOUT_S:g})",
        ),
        flag(
            "--rate-window",
            type=seconds_or_zero,
            metavar="S",
            default=DEFAULT_RATE_WINDOW_S,
            help="with --bootstrap-server: read every group twice S seconds apart and plan with "
            "the measured produce and consume rates (0: one read, no rates; default "
            f"{DEFAULT_RATE_WINDOW_S:g})",
        ),
    ),
    described=lambda o: {
        "bootstrap_server": o.bootstrap_server,
        "groups": o.groups,
        "rate_window": o.rate_window,
    },
    precedence=40,
    takes_reset=True,
)
def read_cluster(spark: SparkSession, o: PipelineOptions) -> WholeGroups:
    return read_live(
        spark,
        o.bootstrap_server,
        command_config=o.command_config,
        timeout=o.timeout,
        rate_window=o.rate_window,
        groups=o.groups,
        auto_offset_reset=o.auto_offset_reset,
    )


BatchFunction = Callable[[Iterator["pa.RecordBatch"]], Iterator["pa.RecordBatch"]]


def _group_collector(
    config: Mapping[str, str], timeout: float, auto_offset_reset: str, rate_window: float
) -> BatchFunction:
    def collect(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from lagassign.formats.snapshot_rows import error_batch, group_rows, rows_batch
        from lagassign.kafka.offsets import OffsetsError, OffsetsReader

        reader: OffsetsReader | None = None
        try:
            ids = [g for batch in batches for g in batch.column("group").to_pylist()]
            if not ids:
                return
            reader = OffsetsReader(config, timeout=timeout)
            for snapshot, model in reader.sampled(ids, rate_window, auto_offset_reset):
                if not snapshot.exists:
                    continue  # gone since it was listed
                clients = {m.member_id: (m.client_id, m.host) for m in snapshot.members}
                source = f"{reader.servers} group {snapshot.group}"
                yield rows_batch(group_rows(model, source, clients))
        except OffsetsError as e:
            yield error_batch(str(e), CLUSTER)
        finally:
            if reader is not None:
                reader.close()

    return collect


def read_live(
    spark: SparkSession,
    bootstrap_server: str,
    *,
    command_config: str | None = None,
    timeout: float = 10.0,
    rate_window: float = 0.0,
    groups: str | None = None,
    auto_offset_reset: str | None = None,
) -> WholeGroups:
    """Every consumer group of the cluster (or those ``groups`` matches), read on the
    executors: membership, committed, earliest and latest offsets; with ``rate_window``, read
    twice that many seconds apart, and the produce and consume rates measured between
    (:func:`lagassign.rates.measure_rates`)."""
    from lagassign.kafka.config import client_config
    from lagassign.kafka.groups import list_groups

    config = client_config(bootstrap_server, command_config)
    ids = list_groups(config, timeout, groups)
    if not ids:
        what = f"matching {groups!r} " if groups is not None else ""
        raise InputError(
            "--groups" if groups else "--bootstrap-server",
            f"no consumer group {what}at {config['bootstrap.servers']}",
        )
    log.info("reading %d consumer group(s) from %s", len(ids), config["bootstrap.servers"])
    tasks = max(1, min(len(ids), 2 * spark.sparkContext.defaultParallelism))
    collector = _group_collector(config, timeout, auto_offset_reset or "latest", rate_window)
    # a group is read by one task: its rows are whole there, planned where they are read
    return WholeGroups("group", [ids[i::tasks] for i in range(tasks)], collector)
