"""spark/monitor without Spark or a broker: the commit state (log order, tombstones, --group,
kept per micro-batch), the lag table's rows and files, the commit windows and the groups
table's statuses, and micro-batches replayed after a restart. The real-broker run is
tests/kafka/test_monitor_batch_live.py."""

from __future__ import annotations

import logging
import math
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from lagassign.formats.consumer_offsets import OffsetCommit, OffsetDeleted, OtherRecord
from lagassign.kafka.offsets import LiveMember
from lagassign.model import Offsets, TopicPartition
from lagassign.spark.monitor import kept
from lagassign.spark.monitor.batch import MonitorBatches, Record, progress_line
from lagassign.spark.monitor.commits import CommitState, Committed
from lagassign.spark.monitor.groups_table import GROUPS_SCHEMA
from lagassign.spark.monitor.lag_table import LAG_SCHEMA, lag_rows, partition_owners
from lagassign.spark.monitor.samples import MAX_SAMPLES, EndSamples
from lagassign.spark.monitor.windows import CommitWindows
from lagassign.status import Commit, Status, partition_status
from tests.test_consumer_offsets import key, value

T0 = datetime(2026, 11, 24, 23, 59, 50, tzinfo=UTC)


def commit(group: str, topic: str, partition: int, offset: int, ms: int = 1) -> OffsetCommit:
    return OffsetCommit(group, topic, partition, offset, None, "", ms, None, None, 4)


def test_the_last_commit_wins_and_a_tombstone_removes() -> None:
    state = CommitState()
    state.apply(
        [
            commit("g", "t", 0, 10, ms=1),
            commit("g", "t", 1, 5),
            OtherRecord(2, "GroupMetadata", "g"),
            commit("g", "t", 0, 3, ms=2),  # a reset to earlier is a commit too
            OffsetDeleted("g", "t", 1),
            OffsetDeleted("h", "t", 9),  # nothing to delete
            commit("h", "u", 2, 7),
        ]
    )
    assert state.commits == {("g", "t", 0): Committed(3, 2), ("h", "u", 2): Committed(7, 1)}
    assert (state.groups(), state.topics()) == ({"g", "h"}, {"t", "u"})


def test_group_regex_matches_the_whole_id() -> None:
    state = CommitState(group_pattern=re.compile("billing-.*"))
    state.apply([commit("billing-1", "t", 0, 1), commit("x-billing-1", "t", 0, 1)])
    assert state.groups() == {"billing-1"}


def test_state_is_kept_per_batch_and_only_the_two_newest(tmp_path: Path) -> None:
    state = CommitState()
    for batch in range(4):
        state.apply([commit("g", "t", batch, 100 + batch)])
        state.save(tmp_path, batch)
    assert sorted(kept.saved_batches(tmp_path, "commits")) == [2, 3]
    assert CommitState.load(tmp_path, 3).commits == state.commits
    assert len(CommitState.load(tmp_path, 2).commits) == 3
    assert CommitState.load(tmp_path, -1).commits == {}
    only_h = CommitState.load(tmp_path, 3, re.compile("h"))
    assert only_h.commits == {}
    with pytest.raises(FileNotFoundError, match="commits after micro-batch 1 is missing"):
        CommitState.load(tmp_path, 1)


def test_lag_rows_follow_the_lag_rules() -> None:
    state = CommitState()
    state.apply(
        [
            commit("g", "t", 0, 40),  # inside the log
            commit("g", "t", 1, 5),  # below the log start: resets to latest, lag 0
            commit("g", "t", 2, 90),  # caught up
            commit("g", "gone", 0, 1),  # no log offsets read: left out
        ]
    )
    logs = {
        TopicPartition("t", 0): Offsets(0, 100),
        TopicPartition("t", 1): Offsets(10, 30),
        TopicPartition("t", 2): Offsets(0, 90),
    }
    table = lag_rows(state, logs, EndSamples(), T0)
    assert table.schema == LAG_SCHEMA
    assert table.column_names == [
        "time",
        "group",
        "topic",
        "partition",
        "committed",
        "end",
        "lag",
        "lag_seconds",
        "lag_seconds_estimated",
        "member_id",
    ]
    assert table.to_pylist() == [
        {
            "time": T0,
            "group": "g",
            "topic": "t",
            "partition": p,
            "committed": c,
            "end": e,
            "lag": lag,
            "lag_seconds": seconds,
            "lag_seconds_estimated": False,
            "member_id": None,
        }
        for p, c, e, lag, seconds in [
            (0, 40, 100, 60, None),
            (1, 5, 30, 0, 0.0),
            (2, 90, 90, 0, 0.0),
        ]
    ]


def test_member_id_is_the_one_member_whose_assignment_lists_the_partition() -> None:
    """Owners from the groups' descriptions: t-0 is a's, t-1 b's; t-2 is listed by both a
    member giving it up and one taking it (mid-rebalance) and t-3 by nobody: null; a group
    the coordinator could not describe has no owners."""
    described = {
        "g": (live("a", ("t", 0), ("t", 2)), live("b", ("t", 1), ("t", 2))),
        "h": None,
    }
    owners = partition_owners(described)
    assert owners == {("g", "t", 0): "a", ("g", "t", 1): "b"}
    state = CommitState()
    state.apply([commit(g, "t", p, 5) for g in ("g", "h") for p in range(4)])
    logs = {TopicPartition("t", p): Offsets(0, 10) for p in range(4)}
    table = lag_rows(state, logs, EndSamples(), T0, owners)
    assert [(r["group"], r["partition"], r["member_id"]) for r in table.to_pylist()] == [
        ("g", 0, "a"),
        ("g", 1, "b"),
        ("g", 2, None),
        ("g", 3, None),
        ("h", 0, None),
        ("h", 1, None),
        ("h", 2, None),
        ("h", 3, None),
    ]


def live(member_id: str, *assigned: tuple[str, int]) -> LiveMember:
    """A member as the group's description has it, assigned ``(topic, partition)`` pairs."""
    tps = tuple(TopicPartition(t, p) for t, p in assigned)
    topics = frozenset(tp.topic for tp in tps)
    return LiveMember(member_id, "client", "/127.0.0.1", None, topics, tps)


def members(*ids: str) -> tuple[LiveMember, ...]:
    return tuple(live(member_id) for member_id in ids)


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def records(*commits: tuple[str, str, int, int]) -> list[Record]:
    return [(key(g, t, p), value(4, o)) for g, t, p, o in commits]


def read_lag(out: Path) -> list[dict[str, object]]:
    dataset = ds.dataset(out / "lag", format="parquet", partitioning="hive")
    rows: list[dict[str, object]] = dataset.to_table().to_pylist()
    return sorted(rows, key=lambda r: (r["time"], r["group"], r["topic"], r["partition"]))  # type: ignore[arg-type,return-value]


def test_batches_carry_state_and_a_replay_after_a_restart_replaces_its_rows(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out, state_dir = tmp_path / "out", tmp_path / "state"
    ends = {TopicPartition("t", 0): Offsets(0, 50), TopicPartition("t", 1): Offsets(0, 20)}
    reads: list[set[str]] = []

    def read_logs(topics: set[str]) -> dict[TopicPartition, Offsets]:
        reads.append(set(topics))
        return ends

    clock = Clock(T0)
    batches = MonitorBatches(out, state_dir, read_logs, clock=clock)
    unknown = (key("g", "t", 0), b"\x00\x07whatever")
    with caplog.at_level(logging.WARNING, logger="lagassign.spark.monitor.batch"):
        first = batches.run(0, [*records(("g", "t", 0, 10), ("g", "t", 1, 4)), unknown, unknown])
    assert [r.message.count("unknown value version 7") for r in caplog.records] == [1]
    assert (first.groups, first.partitions, first.records, first.counts.commits) == (1, 2, 4, 2)
    assert "batch 0: 1 groups, 2 partitions, 4 records (2 commits" in progress_line(first)

    clock.now = T0 + timedelta(seconds=5)
    batches.run(1, records(("g", "t", 0, 30)))
    assert reads == [{"t"}, {"t"}]
    rows = read_lag(out)
    assert [(r["partition"], r["committed"], r["lag"]) for r in rows] == [
        (0, 10, 40),
        (1, 4, 16),
        (0, 30, 20),
        (1, 4, 16),  # batch 1 had no commit for partition 1: the state carried it
    ]

    # a restart replays batch 1 past midnight: a fresh instance loads the state after batch 0
    clock.now = T0 + timedelta(seconds=15)
    MonitorBatches(out, state_dir, read_logs, clock=clock).run(1, records(("g", "t", 0, 30)))
    files = sorted(p.relative_to(out).as_posix() for p in (out / "lag").rglob("*.parquet"))
    assert files == [
        "lag/date=2026-11-24/batch-000000000000.parquet",
        "lag/date=2026-11-25/batch-000000000001.parquet",
    ]
    replayed = read_lag(out)
    assert [(r["partition"], r["committed"], r["lag"]) for r in replayed] == [
        (0, 10, 40),
        (1, 4, 16),
        (0, 30, 20),
        (1, 4, 16),
    ]
    assert {r["time"] for r in replayed[2:]} == {T0 + timedelta(seconds=15)}


def test_the_sample_is_read_before_the_records_and_again_for_a_new_topic(tmp_path: Path) -> None:
    out = tmp_path / "out"
    reads: list[tuple[set[str], datetime]] = []
    clock = Clock(T0)

    def read_logs(topics: set[str]) -> dict[TopicPartition, Offsets]:
        reads.append((set(topics), clock.now))
        ends = {TopicPartition("t", 0): Offsets(0, 50), TopicPartition("u", 0): Offsets(0, 9)}
        return {tp: o for tp, o in ends.items() if tp.topic in topics}

    batches = MonitorBatches(out, tmp_path / "state", read_logs, clock=clock)
    batches.sample(0)  # nothing committed before the first micro-batch: nothing to read
    clock.now = T0 + timedelta(seconds=1)
    batches.run(0, records(("g", "t", 0, 10)))
    assert reads == [({"t"}, T0 + timedelta(seconds=1))]

    # the log ends of "t" read as batch 1 starts are its sample, decoded after them
    clock.now = T0 + timedelta(seconds=5)
    batches.sample(1)
    clock.now = T0 + timedelta(seconds=7)
    one = batches.run(1, records(("g", "t", 0, 30)))
    assert reads[1:] == [({"t"}, T0 + timedelta(seconds=5))]
    assert one.time == T0 + timedelta(seconds=5)

    # a commit to a topic the first read did not cover: everything read again, after it
    clock.now = T0 + timedelta(seconds=10)
    batches.sample(2)
    clock.now = T0 + timedelta(seconds=12)
    two = batches.run(2, records(("h", "u", 0, 4)))
    assert reads[2:] == [({"t"}, T0 + timedelta(seconds=10)), ({"t", "u"}, two.time)]
    assert two.time == T0 + timedelta(seconds=12)
    rows = [(r["time"], r["group"], r["topic"], r["committed"], r["lag"]) for r in read_lag(out)]
    assert rows == [
        (T0 + timedelta(seconds=1), "g", "t", 10, 40),
        (T0 + timedelta(seconds=5), "g", "t", 30, 20),
        (T0 + timedelta(seconds=12), "g", "t", 30, 20),
        (T0 + timedelta(seconds=12), "h", "u", 4, 5),
    ]


def test_the_groups_are_described_with_the_sample_and_new_ones_after_decoding(
    tmp_path: Path,
) -> None:
    described: list[set[str]] = []

    def read_members(groups: set[str]) -> dict[str, tuple[LiveMember, ...] | None]:
        described.append(set(groups))
        return {g: (live(f"{g}-m", ("t", 0)),) for g in groups}

    def read_logs(topics: set[str]) -> dict[TopicPartition, Offsets]:
        return {TopicPartition("t", 0): Offsets(0, 50)}

    out = tmp_path / "out"
    batches = MonitorBatches(out, tmp_path / "state", read_logs, read_members=read_members)
    batches.sample(0)
    batches.run(0, records(("g", "t", 0, 10)))
    batches.sample(1)  # g, committed before, is described from here on
    assert described == [{"g"}, {"g"}]
    batches.run(1, records(("h", "t", 0, 20)))
    assert described == [{"g"}, {"g"}, {"h"}]
    last = [(r["group"], r["member_id"]) for r in read_lag(out)][-2:]
    assert last == [("g", "g-m"), ("h", "h-m")]


def test_samples_are_bounded_and_kept_per_batch(tmp_path: Path) -> None:
    samples = EndSamples()
    tp = TopicPartition("t", 0)
    for i in range(MAX_SAMPLES + 5):
        samples.add(float(i), {tp: Offsets(0, 10 * i)})
    assert samples.of(tp) == [(float(i), 10 * i) for i in range(5, MAX_SAMPLES + 5)]
    samples.save(tmp_path, 7)
    assert EndSamples.load(tmp_path, 7).samples == samples.samples
    assert EndSamples.load(tmp_path, -1).samples == {}


def test_lag_seconds_against_a_steady_producer_and_a_stalled_group(tmp_path: Path) -> None:
    """The log end grows 10 records a second from 1,000; the group committed 1,000 and stops:
    every sample after the first says exactly how long ago the end was at 1,000, and a
    committed offset older than every sample is extrapolated from the produce rate."""
    clock = Clock(T0)
    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)

    def read_logs(topics: set[str]) -> dict[TopicPartition, Offsets]:
        grown = int((clock.now - T0).total_seconds() * 10)
        return {tp0: Offsets(0, 1000 + grown), tp1: Offsets(0, 1000 + grown)}

    out = tmp_path / "out"
    batches = MonitorBatches(out, tmp_path / "state", read_logs, clock=clock)
    batches.run(0, records(("g", "t", 0, 1000)))  # caught up at the first sample
    for batch in range(1, 5):
        clock.now = T0 + timedelta(seconds=5 * batch)
        batches.run(batch, records(("g", "t", 1, 900)) if batch == 2 else [])
    rows = [r for r in read_lag(out) if r["time"] == clock.now]
    assert [
        (r["partition"], r["lag"], r["lag_seconds"], r["lag_seconds_estimated"]) for r in rows
    ] == [
        (0, 200, 20.0, False),  # the end was at 1,000 at T0, 20 s ago
        (1, 300, 30.0, True),  # 900 is before the first sample: 100 records at 10/s earlier
    ]


def test_group_status_over_micro_batches_and_a_replay(tmp_path: Path) -> None:
    """Five groups on one partition whose log end grows 20 per 5 s micro-batch (100 at T0):
    "ok" commits the log end, "stop" committed twice before T0 and never again, "stall"
    commits 40 every batch, "warn" commits 10 more every batch (its lag grows), "rewind"
    commits 60 then 30. Each batch's statuses, the last batch's sums, and a replay of the last
    batch after a restart (the windows reloaded) giving the same rows."""
    clock = Clock(T0)

    def read_logs(topics: set[str]) -> dict[TopicPartition, Offsets]:
        return {TopicPartition("t", 0): Offsets(0, 100 + int((clock.now - T0).total_seconds()) * 4)}

    def ms(at: datetime) -> int:
        return int(at.timestamp() * 1000)

    def batch_records(b: int) -> list[Record]:
        at = T0 + timedelta(seconds=5 * b - 1)
        commits = [("ok", 100 + 20 * b), ("stall", 40), ("warn", 50 + 10 * b)]
        commits += {0: [("rewind", 60)], 1: [("rewind", 30)]}.get(b, [])
        out = [(key(g, "t", 0), value(4, o, commit_ms=ms(at))) for g, o in commits]
        if b == 0:
            out[:0] = [
                (key("stop", "t", 0), value(4, o, commit_ms=ms(T0 - timedelta(seconds=s))))
                for o, s in ((30, 20), (40, 10))
            ]
        return out

    def read_members(groups: set[str]) -> dict[str, tuple[LiveMember, ...] | None]:
        assert groups == {"ok", "rewind", "stall", "stop", "warn"}
        return {
            "ok": (live("a", ("t", 0)), *members("b", "c")),
            "rewind": members("a"),
            "stall": members("a"),
            "stop": (),
            "warn": None,
        }

    out, state_dir = tmp_path / "out", tmp_path / "state"
    batches = MonitorBatches(out, state_dir, read_logs, clock=clock, read_members=read_members)
    for b in range(4):
        clock.now = T0 + timedelta(seconds=5 * b)
        batches.run(b, batch_records(b))

    def read_groups() -> list[dict[str, object]]:
        dataset = ds.dataset(out / "groups", format="parquet", partitioning="hive")
        table = dataset.to_table()
        assert table.column_names[: len(GROUPS_SCHEMA)] == GROUPS_SCHEMA.names
        return sorted(table.to_pylist(), key=lambda r: (r["time"], r["group"]))  # type: ignore[arg-type,return-value]

    rows = read_groups()
    statuses = [
        [r["status"] for r in rows if r["time"] == T0 + timedelta(seconds=5 * b)] for b in range(4)
    ]
    # groups in order: ok, rewind, stall, stop, warn
    assert statuses == [
        ["OK", "STOP", "STOP", "OK", "STOP"],  # one commit spans 0 s; stop's two span 10 s
        ["OK", "REWIND", "STALL", "STOP", "WARN"],  # stop: 15 s since its last commit > 10 s
        ["OK", "REWIND", "STALL", "STOP", "WARN"],
        ["OK", "REWIND", "STALL", "STOP", "WARN"],
    ]
    last = [r for r in rows if r["time"] == clock.now]
    # log end 160; lag_seconds extrapolated back at 4 records a second from 100 at T0
    assert [(r["group"], r["total_lag"], r["max_lag_seconds"], r["members"]) for r in last] == [
        ("ok", 0, 0.0, 3),
        ("rewind", 130, 32.5, 1),
        ("stall", 120, 30.0, 1),
        ("stop", 120, 30.0, 0),
        ("warn", 80, 20.0, None),  # the coordinator could not tell
    ]
    owners = {(r["group"], r["member_id"]) for r in read_lag(out) if r["time"] == clock.now}
    assert owners == {
        ("ok", "a"),
        ("rewind", None),
        ("stall", None),
        ("stop", None),
        ("warn", None),
    }
    # batch 0: one log-end sample, no rates: no plan. Batch 1 plans each group (the log end
    # took in 4/s), batches 2 and 3 carry its values (the next plan is due in 5 minutes).
    # ok reads 4/s (100 → 120 in its window) and is caught up: 0 s, also under balanced;
    # rewind and stall read 0/s: owning nothing now (null), never under balanced, which gives
    # their one member the partition; stop has no member and warn no description: null.
    plans = ("catch_up_now_s", "catch_up_balanced_s", "recommendation")
    planned = {
        "ok": (0.0, 0.0, None),
        "rewind": (None, math.inf, None),
        "stall": (None, math.inf, None),
        "stop": (None, None, None),
        "warn": (None, None, None),
    }
    assert [tuple(r[n] for n in plans) for r in rows] == [(None, None, None)] * 5 + [
        planned[str(r["group"])] for r in rows[5:]
    ]

    replay = MonitorBatches(out, state_dir, read_logs, clock=clock, read_members=read_members)
    replay.run(3, batch_records(3))
    assert read_groups() == rows
    assert len(list((out / "groups").rglob("batch-*.parquet"))) == 4


def test_windows_are_kept_per_batch_and_a_deleted_offset_drops_its_window(tmp_path: Path) -> None:
    state, windows = CommitState(), CommitWindows()
    logs = {TopicPartition("t", 0): Offsets(10, 100)}
    changes = state.apply(
        [
            commit("g", "t", 0, 40, ms=1000),
            commit("g", "t", 0, 50, ms=5000),
            commit("g", "gone", 0, 1),
        ]
    )
    samples = EndSamples()
    samples.add(6.0, logs)
    windows.add(changes, logs, samples)
    # the log of "gone" was not read: its commit is left out; both commits are older than the
    # one sample, so their lag counts against its end
    assert windows.windows == {("g", "t", 0): [Commit(40, 1.0, 60), Commit(50, 5.0, 50)]}
    windows.save(tmp_path, 4)
    assert CommitWindows.load(tmp_path, 4).windows == windows.windows
    assert CommitWindows.load(tmp_path, -1).windows == {}
    deleted = state.apply([OffsetDeleted("g", "t", 0), OffsetDeleted("g", "t", 0)])
    windows.add(deleted, logs, samples)
    assert windows.windows == {}


def test_a_commit_s_lag_is_counted_at_its_own_time() -> None:
    """A member reading 15 records a second while 20 come, committing every 2 s, seen by a
    monitor that reads the log end every 10 s (0 at 100 s, 200 at 110 s, 400 at 120 s). Its
    commits between two reads, against the end read after them, would seem to catch up (lag
    170, 140, 110, 80 at 110 s: OK); at their own times the lag grows by 10 every commit:
    WARN."""
    samples = EndSamples()
    state, windows = CommitState(), CommitWindows()
    tp = TopicPartition("t", 0)
    for at, end in ((100, 0), (110, 200), (120, 400)):
        logs = {tp: Offsets(0, end)}
        samples.add(float(at), logs)
        commits = [
            commit("g", "t", 0, 15 * (c - 100), ms=1000 * c)
            for c in range(at - 8, at + 1, 2)
            if 100 < c <= at
        ]
        windows.add(state.apply(commits), logs, samples)
    window = windows.of(("g", "t", 0))
    # the end at 102 s is 40, interpolated between (100 s, 0) and (110 s, 200); 30 was read
    assert [(c.time, c.offset, c.lag) for c in window] == [
        (t, 15 * (t - 100), 5 * (t - 100)) for t in range(102, 121, 2)
    ]
    assert partition_status(window, 5 * 20, 120.0) is Status.WARN
    # what the end read at each micro-batch made of the same commits
    against_read = [Commit(c.offset, c.time, 200 - c.offset) for c in window[:4]]
    assert partition_status(against_read, 5 * 20, 110.0) is Status.OK
