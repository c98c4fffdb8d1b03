"""Each partition's recent log-end samples ``(time, end)``, for ``lag_seconds`` and the
plans' rates (:mod:`.plans`).

Every micro-batch adds one sample per partition whose log offsets it read; a partition keeps
its newest :data:`MAX_SAMPLES`. Kept per micro-batch like the commit state
(``DIR/samples-<id>.parquet``, :mod:`.kept`), so a replayed micro-batch starts from the same
samples. :func:`lagassign.lag_rules.lag_seconds` turns them into seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa

from lagassign.lag_rules import EndSample as Sample
from lagassign.model import Offsets, TopicPartition
from lagassign.spark.monitor import kept

#: samples per partition: at the default 10 s interval, the last 10 minutes
MAX_SAMPLES = 60
_STATE_FILE = "samples"
SAMPLES_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("times", pa.list_(pa.float64())),
        ("ends", pa.list_(pa.int64())),
    ]
)


class EndSamples:
    def __init__(self, samples: dict[TopicPartition, list[Sample]] | None = None) -> None:
        self.samples: dict[TopicPartition, list[Sample]] = {
            tp: list(s) for tp, s in (samples or {}).items()
        }

    def add(self, time: float, logs: Mapping[TopicPartition, Offsets]) -> None:
        """One sample at ``time`` (seconds) of every partition's log end in ``logs``."""
        for tp, log in logs.items():
            kept_samples = self.samples.setdefault(tp, [])
            kept_samples.append((time, log.end))
            del kept_samples[:-MAX_SAMPLES]

    def of(self, tp: TopicPartition) -> list[Sample]:
        return self.samples.get(tp, [])

    def save(self, folder: Path, batch_id: int) -> None:
        tps = sorted(self.samples)
        table = pa.table(
            {
                "topic": [tp.topic for tp in tps],
                "partition": [tp.partition for tp in tps],
                "times": [[t for t, _ in self.samples[tp]] for tp in tps],
                "ends": [[e for _, e in self.samples[tp]] for tp in tps],
            },
            schema=SAMPLES_SCHEMA,
        )
        kept.save(folder, _STATE_FILE, batch_id, table)

    @classmethod
    def load(cls, folder: Path, batch_id: int) -> EndSamples:
        """The samples after micro-batch ``batch_id``; none before the first."""
        columns = kept.columns(folder, _STATE_FILE, batch_id, SAMPLES_SCHEMA)
        return cls(
            {
                TopicPartition(topic, partition): list(zip(times, ends, strict=True))
                for topic, partition, times, ends in zip(*columns, strict=True)
            }
        )
