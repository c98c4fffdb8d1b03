"""The ``groups`` rows of the last micro-batches, for the live report's lag over time.

:class:`GroupsHistory` keeps the rows of the newest :data:`HISTORY_BATCHES` micro-batch ids
in memory, and reads those it does not hold back from the ``groups`` table (after a restart:
the table keeps every batch's rows under its id). A replayed micro-batch replaces its own rows
and forgets any it held of later ids, as the table does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from lagassign.spark.monitor.groups_table import GROUPS_SCHEMA, GROUPS_TABLE
from lagassign.spark.monitor.lag_table import read_batch

#: micro-batches the live report's chart goes back: at the default 10 s interval, 10 minutes
HISTORY_BATCHES = 60

Rows = list[dict[str, Any]]


class GroupsHistory:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.batches: dict[int, Rows] = {}

    def add(self, batch_id: int, rows: pa.Table) -> list[Rows]:
        """``batch_id``'s ``groups`` rows added; the rows of the kept micro-batches, oldest
        first, ``batch_id``'s last."""
        first = max(0, batch_id - HISTORY_BATCHES + 1)
        kept = {b: r for b, r in self.batches.items() if first <= b < batch_id}
        for b in range(first, batch_id):
            if b not in kept:
                table = read_batch(self.out, GROUPS_TABLE, b, GROUPS_SCHEMA)
                kept[b] = [] if table is None else table.to_pylist()
        kept[batch_id] = rows.to_pylist()
        self.batches = kept
        return [kept[b] for b in sorted(kept)]
