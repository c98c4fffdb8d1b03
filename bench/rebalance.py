"""Rebalance cost on a real broker: the group leader's work, offsets fetch and assignment.

A fresh development broker (scripts/kafka.sh) gets 20 topics × 500 partitions (10,000), a
skewed backlog on them and a committed offset for the group on every partition. Then, N times
per strategy, the leader's work in a rebalance runs exactly as in a kafka-python consumer: the
adapter's ``assign()`` (lagassign.kafka.kafka_python) on 50 members with identical
subscriptions, whose strategy reads the offsets of every partition through the reader the
adapters keep from rebalance to rebalance (``KeptReader``, one deadline per read) and then
assigns. ``fetch`` is that read;
``assignment`` is the rest (decoding the members' subscriptions, building the group, the
strategy, encoding the assignments); ``total`` is both. ``range`` reads nothing: it is the
no-fetch baseline.

Two scenarios: ``first``, members owning nothing (a group's first rebalance), and ``join``,
49 members owning what the same strategy gave them before and one new member (the usual
rebalance; only ``balanced`` is sticky, so only it behaves differently). Strategies and
scenarios take turns within each round, so machine noise falls on all of them alike; the first
round is a warm-up and does not count.

    .venv/bin/python bench/rebalance.py [--topics 20] [--partitions 500] [--members 50] \
        [--rounds 20]

Prints a table and writes bench/results/rebalance.json and rebalance.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _broker import (
    Broker,
    admin_client,
    commit,
    create_topics,
    end_offsets,
    exit_on_sigterm,
    produce,
    wait_leaders,
)
from rich.console import Console
from rich.table import Table

from lagassign.kafka.group import KeptReader
from lagassign.kafka.kafka_python import assignor, encode_subscription
from lagassign.model import Offsets, TopicPartition

RESULTS = Path(__file__).parent / "results"
STRATEGIES = ("lag", "balanced", "range")
SCENARIOS = ("first", "join")
GROUP = "bench-rebalance"
#: the leader's deadline for the offsets: generous, so a slow read is measured, not cut short
LAG_TIMEOUT_S = 120.0
#: what the backlog is made of; only the offsets matter, so the cheapest records to produce
PAYLOAD = b"x" * 16
PRODUCER = {"linger.ms": "50", "acks": "1", "compression.type": "none"}


# -- setup ----------------------------------------------------------------------------------


def backlog(topics: Sequence[str], partitions: int, seed: int) -> dict[tuple[str, int], int]:
    """Records per partition: a heavy-tailed skew (Pareto), mean about 10, capped at 2,000."""
    rng = random.Random(seed)
    return {
        (t, p): min(2000, int(rng.paretovariate(1.2) * 2) - 1)
        for t in topics
        for p in range(partitions)
    }


# -- the leader's work ----------------------------------------------------------------------


class Leader:
    """One strategy's kafka-python assignor, its offsets reads timed."""

    def __init__(self, strategy: str, bootstrap: str) -> None:
        self.reads: list[float] = []
        self.read_cpu: list[float] = []
        self.last_offsets: Mapping[TopicPartition, Offsets] = {}
        self.reader = KeptReader({"bootstrap.servers": bootstrap})

        def fetch(group: str, topics: Sequence[str], timeout: float) -> Any:
            began, cpu = time.perf_counter(), time.process_time()
            offsets = self.reader(group, topics, timeout)
            self.reads.append(time.perf_counter() - began)
            # the whole process's CPU (librdkafka's threads too); the caller only waits
            self.read_cpu.append(time.process_time() - cpu)
            self.last_offsets = offsets
            return offsets

        self.assignor = assignor(
            strategy,
            group_id=GROUP,
            auto_offset_reset="earliest",
            lag_timeout=LAG_TIMEOUT_S,
            bootstrap_servers=bootstrap,
            fetch=fetch,
        )

    def rebalance(self, cluster: Any, members: Sequence[Any]) -> dict[str, Any]:
        """The leader's assign() and the wire encoding of its answer; the timings."""
        self.reads.clear()
        self.read_cpu.clear()
        began = time.perf_counter()
        answer = self.assignor.assign(cluster, members)
        encoded = {m: a.encode() for m, a in answer.items()}
        total = time.perf_counter() - began
        result = self.assignor.last_result
        assert result is not None
        fetch = sum(self.reads)
        if result.lag not in ("offsets", "unused"):
            raise RuntimeError(f"{result.strategy}: the offsets read failed: {result.error}")
        return {
            "fetch": fetch,
            "fetch_cpu": sum(self.read_cpu),
            "assignment": total - fetch,
            "total": total,
            "lag": result.lag,
            "partitions_read": len(self.last_offsets) if self.reads else 0,
            "bytes": sum(len(b) for b in encoded.values()),
            "assignment_result": result.assignment,
        }


def member_ids(n: int) -> list[str]:
    rng = random.Random(42)
    return [f"consumer-{i}-{rng.getrandbits(64):016x}" for i in range(n)]


def join_group(
    ids: Sequence[str], topics: Sequence[str], owned: Mapping[str, Sequence[TopicPartition]]
) -> list[Any]:
    """JoinGroup members as kafka-python's leader sees them: id and encoded subscription."""
    return [
        SimpleNamespace(
            member_id=mid,
            group_instance_id=None,
            # eager members (the strategies measured run eagerly): nothing still consumed
            metadata=encode_subscription(
                topics, owned.get(mid, ()), 1 if mid in owned else None, consuming=False
            ).encode(),
        )
        for mid in ids
    ]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


# -- main -----------------------------------------------------------------------------------


def run(args: argparse.Namespace, broker: Broker) -> dict[str, Any]:
    topics = [f"bench-topic-{t:02d}" for t in range(args.topics)]
    shape = dict.fromkeys(topics, args.partitions)
    total_partitions = args.topics * args.partitions
    admin = admin_client(broker.bootstrap)
    setup: dict[str, Any] = {"broker_start_s": round(broker.started_seconds, 1)}

    print(f"creating {args.topics} topics × {args.partitions} partitions ...", file=sys.stderr)
    began = time.monotonic()
    create_topics(admin, shape, led=False)  # the wait for leaders is timed below
    setup["create_topics_s"] = round(time.monotonic() - began, 1)
    setup["wait_leaders_s"] = round(wait_leaders(admin, shape), 1)
    print(f"  {setup['create_topics_s'] + setup['wait_leaders_s']:.0f} s", file=sys.stderr)

    counts = backlog(topics, args.partitions, seed=5)
    print(f"producing {sum(counts.values()):,} records ...", file=sys.stderr)
    began = time.monotonic()
    produce(broker.bootstrap, counts, value=lambda *_: PAYLOAD, config=PRODUCER)
    setup["produce_s"] = round(time.monotonic() - began, 1)
    setup["records"] = sum(counts.values())

    ends = end_offsets(admin, shape)
    rng = random.Random(6)
    committed = {tp: rng.randint(0, ends[tp]) for tp in sorted(ends)}
    began = time.monotonic()
    commit(broker.bootstrap, GROUP, committed)
    setup["commit_s"] = round(time.monotonic() - began, 1)
    setup["lag"] = sum(ends[tp] - o for tp, o in committed.items())
    setup["broker_rss_mib_after_setup"] = round(broker.rss_mib() or 0)

    def partitions_for_topic(topic: str) -> range | None:  # the client's metadata cache
        return range(shape[topic]) if topic in shape else None

    cluster = SimpleNamespace(partitions_for_topic=partitions_for_topic)
    ids = member_ids(args.members)
    leaders = {s: Leader(s, broker.bootstrap) for s in args.strategies}

    # join: the others own what the strategy gave them without the newcomer
    groups: dict[tuple[str, str], list[Any]] = {}
    for s in args.strategies:
        groups[(s, "first")] = join_group(ids, topics, {})
        if "join" in args.scenarios:
            before = leaders[s].rebalance(cluster, join_group(ids[1:], topics, {}))
            owned = before["assignment_result"].partitions
            groups[(s, "join")] = join_group(ids, topics, owned)
    runs = [(s, sc) for s in args.strategies for sc in args.scenarios]

    samples: dict[str, list[dict[str, Any]]] = {f"{s}/{sc}": [] for s, sc in runs}
    checked: dict[str, Any] = {}
    broker_cpu = broker.cpu_seconds() or 0.0
    load_before = [round(x, 2) for x in os.getloadavg()]
    began = time.monotonic()
    for i in range(args.rounds + 1):
        turn = runs[i % len(runs) :] + runs[: i % len(runs)]
        for s, sc in turn:
            got = leaders[s].rebalance(cluster, groups[(s, sc)])
            counts_per_member = sorted(len(v) for v in got["assignment_result"].partitions.values())
            assigned = sum(counts_per_member)
            if assigned != total_partitions:
                raise RuntimeError(f"{s}: assigned {assigned} of {total_partitions} partitions")
            if got["lag"] == "offsets" and got["partitions_read"] != total_partitions:
                raise RuntimeError(f"{s}: read {got['partitions_read']} partitions")
            checked[f"{s}/{sc}"] = {
                "partitions_per_member": [counts_per_member[0], counts_per_member[-1]],
                "assignment_bytes": got["bytes"],
                "lag": got["lag"],
            }
            if i > 0:  # round 0 is the warm-up
                samples[f"{s}/{sc}"].append(
                    {k: got[k] for k in ("fetch", "fetch_cpu", "assignment", "total")}
                )
        print(f"\rround {i}/{args.rounds}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    measured_s = time.monotonic() - began

    fetches = [
        r["fetch"]
        for key, rows in samples.items()
        if checked[key]["lag"] == "offsets"
        for r in rows
    ]
    summary = []
    for key, rows in samples.items():
        s, sc = key.split("/")
        entry: dict[str, Any] = {"strategy": s, "scenario": sc, **checked[key]}
        for part in ("fetch", "fetch_cpu", "assignment", "total"):
            values = [r[part] for r in rows]
            entry[part] = {
                "p50": percentile(values, 0.5),
                "p95": percentile(values, 0.95),
                "mean": statistics.fmean(values),
                "max": max(values),
            }
        summary.append(entry)
    return {
        "topics": args.topics,
        "partitions_per_topic": args.partitions,
        "partitions": total_partitions,
        "members": args.members,
        "rounds": args.rounds,
        "warmup_rounds": 1,
        "setup": setup,
        "measure_s": round(measured_s, 1),
        "broker_cpu_s_during_measure": round((broker.cpu_seconds() or 0.0) - broker_cpu, 1),
        "broker_rss_mib_end": round(broker.rss_mib() or 0),
        "heap": args.heap or "-Xms256m -Xmx768m",
        "fetch_over_default_lag_timeout": {
            client: sum(f > limit for f in fetches) / len(fetches) if fetches else 0.0
            for client, limit in (("kafka-python", 3.0), ("aiokafka", 1.0))
        },
        # issue 15's target for the adapters (half aiokafka's default), and kafka-python's
        # threshold for a step that blocks its event loop
        "fetch_over_s": {
            str(limit): sum(f > limit for f in fetches) / len(fetches) if fetches else 0.0
            for limit in (0.5, 0.1)
        },
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "summary": summary,
        "samples": samples,
    }


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}"


def render(result: dict[str, Any]) -> tuple[Table, str]:
    title = (
        f"leader's work per rebalance: {result['partitions']:,} partitions "
        f"({result['topics']} topics × {result['partitions_per_topic']}), "
        f"{result['members']} members; ms over {result['rounds']} rounds"
    )
    table = Table(title=title)
    columns = (
        "strategy", "scenario", "fetch p50", "fetch p95", "fetch CPU p50", "assign p50",
        "assign p95", "total p50", "total p95",
    )  # fmt: skip
    for c in columns:
        table.add_column(c, justify="left" if c in ("strategy", "scenario") else "right")
    setup = result["setup"]
    over = result["fetch_over_default_lag_timeout"]
    lines = [
        f"Real Kafka 4.4 broker (scripts/kafka.sh, one node, heap {result['heap']}), "
        f"{result['partitions']:,} partitions ({result['topics']} topics × "
        f"{result['partitions_per_topic']}), {setup['records']:,} records, a committed offset "
        f"on every partition (total lag {setup['lag']:,}). {result['members']} members with "
        f"identical subscriptions. Each rebalance is the kafka-python adapter's `assign()` on "
        f"the leader: `fetch` = `OffsetsReader.offsets()` of every partition through the reader "
        f"the adapters keep from rebalance to rebalance (`KeptReader`; the warm-up round opens "
        f"it), and `fetch CPU` the CPU time this process (Python and librdkafka's threads) "
        f"spent on it; `assign` = the rest (decode subscriptions, build the group, the "
        f"strategy, encode). `first`: nothing owned; `join`: 49 members own their previous "
        f"assignment, one is new. Milliseconds, nearest-rank p50/p95 over {result['rounds']} "
        f"rounds after one warm-up round; strategies and scenarios take turns within a round.",
        "",
        "| " + " | ".join(columns) + " |",
        "|---|---|" + "---:|" * (len(columns) - 2),
    ]
    for e in result["summary"]:
        row = [
            e["strategy"],
            e["scenario"],
            ms(e["fetch"]["p50"]) if e["lag"] == "offsets" else "—",
            ms(e["fetch"]["p95"]) if e["lag"] == "offsets" else "—",
            ms(e["fetch_cpu"]["p50"]) if e["lag"] == "offsets" else "—",
            ms(e["assignment"]["p50"]),
            ms(e["assignment"]["p95"]),
            ms(e["total"]["p50"]),
            ms(e["total"]["p95"]),
        ]
        table.add_row(*row)
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        f"Setup: broker start {setup['broker_start_s']} s, creating the topics "
        f"{setup['create_topics_s']} s + {setup['wait_leaders_s']} s until every partition had "
        f"a leader, producing {setup['produce_s']} s, committing {setup['commit_s']} s. Broker "
        f"RSS {setup['broker_rss_mib_after_setup']} MiB after setup, "
        f"{result['broker_rss_mib_end']} MiB at the end; broker CPU "
        f"{result['broker_cpu_s_during_measure']} s over the {result['measure_s']} s measured.",
        "",
        f"Fetches slower than the adapters' default `lag_timeout` (then the leader assigns as "
        f"if every lag were 0): {over['kafka-python']:.0%} of them above kafka-python's 3 s, "
        f"{over['aiokafka']:.0%} above aiokafka's 1 s; "
        f"{result['fetch_over_s']['0.5']:.0%} above 0.5 s, "
        f"{result['fetch_over_s']['0.1']:.0%} above 0.1 s (kafka-python's threshold for a "
        f"step that blocks its event loop, which `assign()` is when the leader did not prefetch). "
        f"Load average {result['load_before']} before and {result['load_after']} after, on "
        f"{result['machine']['cpus']} cores shared with other work while this ran.",
    ]
    return table, "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=500, help="per topic")
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--heap", help="broker heap options (LAGASSIGN_KAFKA_HEAP_OPTS)")
    args = parser.parse_args()
    args.strategies = args.strategies.split(",")
    args.scenarios = args.scenarios.split(",")
    if not 0 < args.rounds <= 1000 or args.members < 2:
        parser.error("--rounds must be 1..1000 and --members at least 2")
    exit_on_sigterm()
    began = time.monotonic()
    with Broker(heap_opts=args.heap) as broker:
        result = run(args, broker)
    result["broker_stop_s"] = round(broker.stopped_seconds, 1)
    result["wall_s"] = round(time.monotonic() - began, 1)
    table, md = render(result)
    Console().print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "rebalance.json").write_text(json.dumps(result, indent=1))
    (RESULTS / "rebalance.md").write_text(md)
    print(f"written {RESULTS / 'rebalance.md'} ({result['wall_s']} s in all)", file=sys.stderr)


if __name__ == "__main__":
    main()
