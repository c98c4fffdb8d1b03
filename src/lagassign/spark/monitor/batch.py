"""One micro-batch of the monitor, from ``__consumer_offsets`` records to ``lag`` rows.

:meth:`MonitorBatches.run` is what the streaming query's ``foreachBatch`` is to call with the
micro-batch's id and its records (key and value bytes, in log order per partition of
``__consumer_offsets``; a group's records all live in one partition, so its order is kept):

1. the commit state after the previous micro-batch (in memory, or after a restart from
   ``STATE/commits-<id − 1>.parquet``, :mod:`.commits`);
2. every record decoded (:mod:`lagassign.formats.consumer_offsets`) and applied; unknown
   versions counted and logged once each;
3. the log start and end of every partition of every committed topic, in one batched read on
   the driver (``read_logs``: :func:`offsets_reader_logs` over
   :class:`lagassign.kafka.offsets.OffsetsReader`), and the sample's time, the rows' ``time``.
   The query reads them as the micro-batch starts (:meth:`MonitorBatches.sample`), before its
   records are reduced and decoded, for the topics committed up to the previous micro-batch:
   every record of the micro-batch was in ``__consumer_offsets`` when Spark planned it, so
   every commit it holds was made before that read, and the sample is as close to the commits
   as it can be. When the micro-batch's commits name a topic that read did not cover, all the
   topics are read again after decoding, and that read is the sample;
4. one log-end sample per partition added to the samples kept after the previous batch
   (:mod:`.samples`), for ``lag_seconds``; every decoded commit added to its partition's
   commit window (:mod:`.windows`) with its lag at its own time (from those samples), for the
   group status;
5. the groups' members and their assignments, in one description of them all
   (``read_members``: :class:`lagassign.kafka.groups.GroupMembers`): each partition's owner.
   The query starts it with the sample, for the groups committed up to the previous
   micro-batch, in a thread of the driver while Spark reduces the records (describing 1,000
   groups takes the coordinator most of a second); groups first seen in this micro-batch are
   described after decoding;
6. the groups whose plan is due planned (:mod:`.plans`: as soon as its rates can be
   measured, its second micro-batch with commits, then every ``plan_every_s``, for at most
   ``plan_budget_s``), with rates measured over those samples and windows;
7. the state, the samples, the windows and the plans saved for this id, then the ``lag`` rows
   (:mod:`.lag_table`) and the ``groups`` rows (:mod:`.groups_table`) written for this id.
   Saving first means a crash between the two replays the batch from the state before it,
   which the previous files still hold;
8. the live report ``OUT/report.html`` rewritten (:mod:`lagassign.report.live`) from the
   ``groups`` rows of this and the previous micro-batches (:mod:`.history`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from lagassign.collector import collector_paused
from lagassign.formats.consumer_offsets import DecodeCounts, Decoded, UnknownVersion, decode
from lagassign.kafka.offsets import LiveMember, OffsetsReader
from lagassign.model import Offsets, TopicPartition
from lagassign.report.live import write_live_report
from lagassign.spark.monitor.commits import CommitState
from lagassign.spark.monitor.groups_table import GROUPS_TABLE, group_rows
from lagassign.spark.monitor.history import GroupsHistory
from lagassign.spark.monitor.lag_table import LAG_TABLE, lag_rows, partition_owners, write_batch
from lagassign.spark.monitor.options import DEFAULT_PLAN_EVERY_MIN, DEFAULT_RECOMMEND_THRESHOLD
from lagassign.spark.monitor.plans import MonitorPlans
from lagassign.spark.monitor.samples import EndSamples
from lagassign.spark.monitor.windows import CommitWindows

log = logging.getLogger(__name__)

#: the log offsets of every partition of the topics
ReadLogs = Callable[[set[str]], Mapping[TopicPartition, Offsets]]
#: the members each of the groups has now, with their assignments (None: the coordinator
#: could not tell)
ReadMembers = Callable[[set[str]], Mapping[str, Sequence[LiveMember] | None]]
#: one record of __consumer_offsets: key and value bytes (the value None for a tombstone)
Record = tuple[bytes | None, bytes | None]
#: the group id the monitor's offsets reads name; it never joins or commits
MONITOR_GROUP = "lagassign-monitor"


@dataclass(frozen=True)
class BatchSummary:
    """What one micro-batch did: the progress line's numbers."""

    batch_id: int
    time: datetime
    #: records the micro-batch read
    records: int
    #: the records decoded (the last of each key, when the query reduced them)
    counts: DecodeCounts
    groups: int
    partitions: int
    #: from the log-end read (:meth:`MonitorBatches.sample`, else the start of ``run``) to
    #: the rows and the report written
    seconds: float


@dataclass
class _Kept:
    """What a micro-batch starts from and saves for the next: the commit state, the log-end
    samples, the commit windows and the groups' last plans."""

    state: CommitState
    samples: EndSamples
    windows: CommitWindows
    plans: MonitorPlans

    def copy(self) -> _Kept:
        return _Kept(
            CommitState(self.state.commits, self.state.group_pattern),
            EndSamples(self.samples.samples),
            CommitWindows(self.windows.windows),
            MonitorPlans(self.plans.last),
        )

    def save(self, folder: Path, batch_id: int) -> None:
        for part in (self.state, self.samples, self.windows, self.plans):
            part.save(folder, batch_id)

    @classmethod
    def load(cls, folder: Path, batch_id: int, group_pattern: re.Pattern[str] | None) -> _Kept:
        return cls(
            CommitState.load(folder, batch_id, group_pattern),
            EndSamples.load(folder, batch_id),
            CommitWindows.load(folder, batch_id),
            MonitorPlans.load(folder, batch_id),
        )


@dataclass(frozen=True)
class _Sampled:
    """The log offsets read as a micro-batch started (:meth:`MonitorBatches.sample`)."""

    batch_id: int
    kept: _Kept
    topics: frozenset[str]
    logs: Mapping[TopicPartition, Offsets]
    time: datetime
    began: float
    #: the description of the groups committed up to the micro-batch before, under way
    members: Future[Mapping[str, Sequence[LiveMember] | None]] | None


@dataclass
class MonitorBatches:
    """The monitor's micro-batches: state under ``state_dir``, tables under ``out``."""

    out: Path
    state_dir: Path
    read_logs: ReadLogs
    group_pattern: re.Pattern[str] | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    #: None: the ``groups`` table's ``members`` stay null
    read_members: ReadMembers | None = None
    #: a group is planned every this many seconds (``--plan-every``, :mod:`.plans`)
    plan_every_s: float = DEFAULT_PLAN_EVERY_MIN * 60
    #: recommend ``balanced`` when it cuts catch-up time by more than this fraction
    recommend_threshold: float = DEFAULT_RECOMMEND_THRESHOLD
    #: seconds of a micro-batch its plans may take (None: every due plan is made)
    plan_budget_s: float | None = None
    _kept: _Kept | None = None
    _kept_batch: int | None = None
    _history: GroupsHistory | None = None
    _sampled: _Sampled | None = None
    _describer: ThreadPoolExecutor | None = None

    def sample(self, batch_id: int) -> None:
        """Reads the log offsets of micro-batch ``batch_id`` before its records are known: every
        partition of the topics committed up to the micro-batch before, at the sample's time
        (the module's step 3). :meth:`run` of the same id then uses them."""
        with collector_paused():  # as in run: copying the kept state makes 100,000s of lists
            self._sample(batch_id)

    def _sample(self, batch_id: int) -> None:
        began = time.perf_counter()
        kept = self._kept_before(batch_id)
        topics = frozenset(kept.state.topics())
        logs = self.read_logs(set(topics)) if topics else {}
        now = self.clock()
        members = None
        if self.read_members is not None:
            groups = {g for g, t, p in kept.state.commits if TopicPartition(t, p) in logs}
            if groups:
                if self._describer is None:
                    self._describer = ThreadPoolExecutor(1, thread_name_prefix="describe")
                members = self._describer.submit(self.read_members, groups)
        self._sampled = _Sampled(batch_id, kept, topics, logs, now, began, members)

    def run(
        self, batch_id: int, records: Iterable[Record], read: int | None = None
    ) -> BatchSummary:
        """Micro-batch ``batch_id`` of ``records``, in log order; ``read``: how many records
        the micro-batch read, when ``records`` are fewer (reduced to the last of each key).

        Python's cycle collector is paused for it: a micro-batch makes 100,000s of small
        acyclic objects beside the kept state's millions, and each collection of the oldest
        generation walked them all again."""
        with collector_paused():
            return self._run(batch_id, records, read)

    def _run(self, batch_id: int, records: Iterable[Record], read: int | None) -> BatchSummary:
        sampled, self._sampled = self._sampled, None
        if sampled is not None and sampled.batch_id != batch_id:
            sampled = None
        began = time.perf_counter() if sampled is None else sampled.began
        kept = self._kept_before(batch_id) if sampled is None else sampled.kept
        state, samples, windows = kept.state, kept.samples, kept.windows
        counts = DecodeCounts()

        def decoded() -> Iterator[Decoded]:
            for key, value in records:
                result = decode(key, value)
                if counts.add(result) and isinstance(result, UnknownVersion):
                    log.warning(
                        "__consumer_offsets: a record of unknown %s version %d (counted; "
                        "this is said once per version)",
                        result.part,
                        result.version,
                    )
                yield result

        changes = state.apply(decoded())
        topics = state.topics()
        logs: Mapping[TopicPartition, Offsets] = {}
        if sampled is not None and topics <= sampled.topics:
            logs = {tp: o for tp, o in sampled.logs.items() if tp.topic in topics}
            now = sampled.time
        else:
            if state.commits:
                logs = self.read_logs(topics)
            now = self.clock()
        samples.add(now.timestamp(), logs)
        windows.add(changes, logs, samples)
        groups = {g for g, t, p in state.commits if TopicPartition(t, p) in logs}
        members = self._members(groups, sampled)
        table = lag_rows(state, logs, samples, now, partition_owners(members))
        kept.plans.update(
            now.timestamp(),
            state,
            logs,
            members,
            samples,
            windows,
            self.plan_every_s,
            self.recommend_threshold,
            self.plan_budget_s,
        )
        kept.save(self.state_dir, batch_id)
        self._kept, self._kept_batch = kept, batch_id
        write_batch(self.out, LAG_TABLE, batch_id, table, now)
        group_table = group_rows(table, windows, members, now, kept.plans)
        write_batch(self.out, GROUPS_TABLE, batch_id, group_table, now)
        if self._history is None:
            self._history = GroupsHistory(self.out)
        write_live_report(self.out, self._history.add(batch_id, group_table), batch_id, now)
        return BatchSummary(
            batch_id=batch_id,
            time=now,
            records=counts.total if read is None else read,
            counts=counts,
            groups=len(groups),
            partitions=table.num_rows,
            seconds=time.perf_counter() - began,
        )

    def _members(
        self, groups: set[str], sampled: _Sampled | None
    ) -> Mapping[str, Sequence[LiveMember] | None]:
        """The members of ``groups``: the description under way since the sample (the
        module's step 5) and of the groups it did not cover."""
        if self.read_members is None or not groups:
            return {}
        described = sampled.members.result() if sampled and sampled.members else {}
        members = {g: m for g, m in described.items() if g in groups}
        missing = groups - members.keys()
        if missing:
            members.update(self.read_members(missing))
        return members

    def _kept_before(self, batch_id: int) -> _Kept:
        """A copy of what was kept after ``batch_id - 1``: in memory, or from its files."""
        previous = batch_id - 1
        if self._kept is not None and self._kept_batch == previous:
            return self._kept.copy()
        return _Kept.load(self.state_dir, previous, self.group_pattern)


def offsets_reader_logs(reader: OffsetsReader) -> ReadLogs:
    """``read_logs`` through the one offsets reader: one batched read of log start and end for
    every partition of the topics (the committed offsets it also reads are the monitor's own
    group's, none: the monitor's come from ``__consumer_offsets``)."""

    def read(topics: set[str]) -> Mapping[TopicPartition, Offsets]:
        return reader.offsets(MONITOR_GROUP, topics)

    return read


def progress_line(summary: BatchSummary) -> str:
    """One line per micro-batch for the terminal."""
    c = summary.counts
    unknown = sum(c.unknown_versions.values())
    reduced = f", {c.total} last per key" if c.total != summary.records else ""
    return (
        f"batch {summary.batch_id}: {summary.groups} groups, {summary.partitions} partitions, "
        f"{summary.records} records{reduced} ({c.commits} commits, {c.deleted} deleted, "
        f"{c.other} other, {unknown} unknown, {c.undecodable} undecodable) "
        f"in {summary.seconds:.2f} s, sampled {summary.time:%Y-%m-%dT%H:%M:%SZ}"
    )
