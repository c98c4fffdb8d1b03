"""The lag read at scale: lagassign's OffsetsReader against kafka-python and Kafka's Java Admin.

A fresh development broker (scripts/kafka.sh) gets, for every scale, its own topics of 500
partitions (1,000 partitions: 2 topics, 10,000: 20), a few records in every partition and a
group with a committed offset on every other partition. One read is what a group leader needs
for the lag of every partition of the group's topics: the partitions (metadata), each one's log
start and log end (ListOffsets) and the group's committed offsets (OffsetFetch). Contenders,
each reading the same partitions (checked: the same partition count and the same sum of every
offset read):

* ``lagassign``: ``OffsetsReader.offsets(group, topics)``, one reader kept for every read (the
  adapters' leader keeps one so); it reads through Kafka's protocol (lagassign.kafka.protocol)
  and would fall back on librdkafka (which it does not here: the contenders' answers agree);
* ``lagassign (new reader)``: ``lagassign.kafka.group.read_offsets``, a new reader per read, as
  the adapters' leader reads at a rebalance (connecting included);
* ``kafka-python``: ``KafkaAdminClient`` (kept): ``describe_topics``, ``list_partition_offsets``
  with ``OffsetSpec.EARLIEST`` and with ``OffsetSpec.LATEST``, ``list_group_offsets``;
* ``Java Admin``: Kafka's own ``Admin`` (kafka-clients, the jars of scripts/java-reference.sh)
  in one warm JVM (bench/java/OffsetsRead.java): ``describeTopics``, then ``listOffsets``
  (earliest), ``listOffsets`` (latest) and ``listConsumerGroupOffsets`` in flight together.

Contenders and scales take turns within each round, so machine noise falls on all of them
alike; round 0 is a warm-up and does not count. Times are wall-clock per read, measured inside
each client's own process (Java: ``System.nanoTime``), plus the CPU time of this process for
the Python ones (``time.process_time``: librdkafka's threads too).

    .venv/bin/python bench/offsets.py [--scales 1000,10000] [--rounds 20] [--nodes N]

Prints a table and writes bench/results/offsets.json and offsets.md (one node), or
offsets-N-nodes.json and .md (``--nodes N``: a cluster of N nodes, scripts/kafka.sh with
LAGASSIGN_KAFKA_NODES; node 1 is the controller and a broker). The partitions of every scale are
spread over the brokers by Kafka. 50,000 partitions need a cluster here: every partition's log
keeps a file open in its broker, the hard limit on open files is 20,000 a process and the
container does not let even root raise it (``ulimit -Hn``); one broker holds 10,000 with room,
so ``--scales 1000,10000,50000 --nodes 6`` puts some 10,000 on each.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _broker import (
    Broker,
    admin_client,
    commit,
    create_topics,
    measure_and_save,
    produce,
    wait_leaders,
)
from rich.table import Table

from lagassign.kafka.group import read_offsets
from lagassign.kafka.offsets import OffsetsReader
from tests.javaref import ensure_jars

JAVA_SOURCE = Path(__file__).parent / "java" / "OffsetsRead.java"
PARTITIONS_PER_TOPIC = 500
READ_TIMEOUT_S = 120.0
CONTENDERS = ("lagassign", "lagassign (new reader)", "kafka-python", "Java Admin")
PRODUCER = {"linger.ms": "50", "acks": "1", "compression.type": "none"}

#: one read: (nanoseconds or seconds as measured, partitions read, sum of every offset read)
Read = Callable[[str, Sequence[str]], tuple[float, float | None, int, int]]


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


# -- the contenders --------------------------------------------------------------------------


def offsets_sum(offsets: Any) -> int:
    return sum(o.begin + o.end + (o.committed or 0) for o in offsets.values())


def lagassign_warm(bootstrap: str) -> tuple[Read, Callable[[], None]]:
    reader = OffsetsReader({"bootstrap.servers": bootstrap}, timeout=READ_TIMEOUT_S)

    def read(group: str, topics: Sequence[str]) -> tuple[float, float | None, int, int]:
        began, cpu = time.perf_counter(), time.process_time()
        got = reader.offsets(group, topics)
        return time.perf_counter() - began, time.process_time() - cpu, len(got), offsets_sum(got)

    return read, reader.close


def lagassign_new(bootstrap: str) -> tuple[Read, Callable[[], None]]:
    config = {"bootstrap.servers": bootstrap}

    def read(group: str, topics: Sequence[str]) -> tuple[float, float | None, int, int]:
        began, cpu = time.perf_counter(), time.process_time()
        got = read_offsets(config, group, topics, READ_TIMEOUT_S)
        return time.perf_counter() - began, time.process_time() - cpu, len(got), offsets_sum(got)

    return read, lambda: None


def kafka_python(bootstrap: str) -> tuple[Read, Callable[[], None]]:
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import OffsetSpec

    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap,
        client_id="offsets-bench-kafka-python",
        request_timeout_ms=int(READ_TIMEOUT_S * 1000),
    )

    def read(group: str, topics: Sequence[str]) -> tuple[float, float | None, int, int]:
        began, cpu = time.perf_counter(), time.process_time()
        described = admin.describe_topics(list(topics))
        tps = [
            TopicPartition(t["name"], p["partition_index"])
            for t in described
            for p in t["partitions"]
        ]
        begin = admin.list_partition_offsets(dict.fromkeys(tps, OffsetSpec.EARLIEST))
        end = admin.list_partition_offsets(dict.fromkeys(tps, OffsetSpec.LATEST))
        committed = admin.list_group_offsets({group: tps})[group]
        seconds, used = time.perf_counter() - began, time.process_time() - cpu
        total = sum(begin[tp].offset + end[tp].offset for tp in tps)
        total += sum(max(committed[tp].offset, 0) for tp in tps if tp in committed)
        return seconds, used, len(tps), total

    return read, admin.close


def java_admin(bootstrap: str) -> tuple[Read, Callable[[], None]]:
    lib = ensure_jars()
    proc = subprocess.Popen(
        ["java", "-cp", f"{lib}/*", str(JAVA_SOURCE), bootstrap],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def read(group: str, topics: Sequence[str]) -> tuple[float, float | None, int, int]:
        stdin.write(f"{group} {','.join(topics)}\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the Java reader ended (exit {proc.wait()})")
        nanos, count, total = (int(x) for x in line.split())
        return nanos / 1e9, None, count, total

    def close() -> None:
        stdin.close()
        proc.wait(timeout=60)

    return read, close


MAKERS = {
    "lagassign": lagassign_warm,
    "lagassign (new reader)": lagassign_new,
    "kafka-python": kafka_python,
    "Java Admin": java_admin,
}


# -- main -----------------------------------------------------------------------------------


def setup(broker: Broker, scales: Sequence[int]) -> tuple[dict[int, list[str]], dict[str, Any]]:
    admin = admin_client(broker.bootstrap)
    topics: dict[int, list[str]] = {}
    done: dict[str, Any] = {}
    for scale in scales:
        names = [f"bench-{scale}-{t:03d}" for t in range(math.ceil(scale / PARTITIONS_PER_TOPIC))]
        topics[scale] = names
        shape = dict.fromkeys(names, PARTITIONS_PER_TOPIC)
        print(f"{scale:,} partitions: creating {len(names)} topics ...", file=sys.stderr)
        began = time.monotonic()
        create_topics(admin, shape, led=False)  # the wait for leaders is timed below
        created = time.monotonic() - began
        wait_leaders(admin, shape)
        led = time.monotonic() - began
        # a few records everywhere (the offsets are not all 0) and a commit on every other
        counts = {(t, p): 1 + p % 3 for t in names for p in range(PARTITIONS_PER_TOPIC)}
        produce(broker.bootstrap, counts, value=lambda *_: b"x" * 16, config=PRODUCER)
        produced = time.monotonic() - began
        commit(
            broker.bootstrap,
            f"bench-offsets-{scale}",
            {tp: n - 1 for tp, n in counts.items() if tp[1] % 2 == 0},
        )
        done[str(scale)] = {
            "create_s": round(created, 1),
            "topics_s": round(led, 1),
            "produce_s": round(produced - led, 1),
            "setup_s": round(time.monotonic() - began, 1),
            "load": loadavg(),
        }
        print(f"  {done[str(scale)]}", file=sys.stderr)
    return topics, done


def run(args: argparse.Namespace, broker: Broker) -> dict[str, Any]:
    topics, setup_s = setup(broker, args.scales)
    readers = {name: MAKERS[name](broker.bootstrap) for name in args.contenders}
    runs = [(scale, name) for scale in args.scales for name in args.contenders]
    samples: dict[str, dict[str, list[dict[str, float | None]]]] = {
        str(s): {n: [] for n in args.contenders} for s in args.scales
    }
    checked: dict[str, dict[str, tuple[int, int]]] = {str(s): {} for s in args.scales}
    load_before = loadavg()
    broker_cpu = broker.cpu_seconds() or 0.0
    began = time.monotonic()
    try:
        for i in range(args.rounds + 1):
            turn = runs[i % len(runs) :] + runs[: i % len(runs)]
            for scale, name in turn:
                seconds, cpu, count, total = readers[name][0](
                    f"bench-offsets-{scale}", topics[scale]
                )
                checked[str(scale)][name] = (count, total)
                if i > 0:
                    samples[str(scale)][name].append({"seconds": seconds, "cpu": cpu})
            print(f"\rround {i}/{args.rounds}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        for _, close in readers.values():
            close()
    measured = time.monotonic() - began
    for scale, seen in checked.items():
        if len(set(seen.values())) != 1 or next(iter(seen.values()))[0] != int(scale):
            raise RuntimeError(f"{scale} partitions: the contenders read differently: {seen}")

    summary = []
    for scale in args.scales:
        row: dict[str, Any] = {"partitions": scale}
        for name in args.contenders:
            rows = samples[str(scale)][name]
            times = [r["seconds"] for r in rows if r["seconds"] is not None]
            cpus = [r["cpu"] for r in rows if r["cpu"] is not None]
            row[name] = {
                "p50": percentile(times, 0.5),
                "p95": percentile(times, 0.95),
                "cpu_p50": percentile(cpus, 0.5) if cpus else None,
            }
        for name in ("lagassign", "lagassign (new reader)"):
            for other in ("kafka-python", "Java Admin"):
                if name in row and other in row:
                    row[f"{name} / {other}"] = row[name]["p50"] / row[other]["p50"]
        summary.append(row)
    return {
        "scales": args.scales,
        "rounds": args.rounds,
        "warmup_rounds": 1,
        "contenders": args.contenders,
        "nodes": broker.nodes,
        "setup": setup_s,
        "measure_s": round(measured, 1),
        "load_before": load_before,
        "load_after": loadavg(),
        "broker_cpu_s_during_measure": round((broker.cpu_seconds() or 0.0) - broker_cpu, 1),
        "open_files_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[1],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "summary": summary,
        "samples": samples,
    }


def ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:,.0f}"


def where(nodes: int) -> str:
    if nodes == 1:
        return "broker (scripts/kafka.sh, one node)"
    return (
        f"cluster of {nodes} nodes on this machine (scripts/kafka.sh with "
        f"LAGASSIGN_KAFKA_NODES={nodes}: node 1 the controller and a broker, nodes 2–{nodes} "
        f"brokers, each its own JVM; Kafka spreads the partitions over the {nodes} brokers)"
    )


def markdown_head(columns: Sequence[str]) -> list[str]:
    """The header and rule of a Markdown table of ``columns`` (the first one a label)."""
    return ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]


def add_row(table: Table, lines: list[str], cells: Sequence[str]) -> None:
    """A row of ``cells`` added to the printed ``table`` and to the Markdown ``lines``."""
    table.add_row(*cells)
    lines.append("| " + " | ".join(cells) + " |")


def setup_sentence(setup: dict[str, Any]) -> str:
    """What setting each scale up took (:func:`setup`)."""
    return (
        "Setup per scale (creating the topics until every partition has a leader; with "
        "producing and committing): "
        + ", ".join(f"{s}: {v['topics_s']} s / {v['setup_s']} s" for s, v in setup.items())
    )


def render(result: dict[str, Any]) -> tuple[Table, str]:
    contenders = result["contenders"]
    table = Table(
        title=f"one lag read (metadata + log start + log end + committed), ms over "
        f"{result['rounds']} rounds"
    )
    columns = ["partitions"]
    for name in contenders:
        columns += [f"{name} p50", f"{name} p95"] + (
            [f"{name} CPU p50"] if name.startswith("lagassign") or name == "kafka-python" else []
        )
    ratios = [k for k in result["summary"][0] if " / " in k]
    columns += ratios
    for c in columns:
        table.add_column(c, justify="right")
    lines = [
        f"Real Kafka 4.4 {where(result['nodes'])}; per scale its own topics of "
        f"{PARTITIONS_PER_TOPIC} partitions, 1–3 records in each, a committed offset on every "
        f"other. One read: the partitions of the topics, each one's log start and log end, the "
        f"group's committed offsets. Milliseconds wall-clock per read, nearest-rank p50/p95 "
        f"over {result['rounds']} rounds after one warm-up; contenders and scales take turns "
        f"within a round; CPU: this process's CPU time per read (all its threads). Ratios: "
        f"p50 over p50. Load average {result['load_before']} before and {result['load_after']} "
        f"after, on {result['machine']['cpus']} cores shared with other work.",
        "",
        *markdown_head(columns),
    ]
    for row in result["summary"]:
        cells = [f"{row['partitions']:,}"]
        for name in contenders:
            cells += [ms(row[name]["p50"]), ms(row[name]["p95"])]
            if name.startswith("lagassign") or name == "kafka-python":
                cells.append(ms(row[name]["cpu_p50"]))
        cells += [f"{row[r]:.2f}×" for r in ratios]
        add_row(table, lines, cells)
    lines += [
        "",
        setup_sentence(result["setup"])
        + f". Broker CPU {result['broker_cpu_s_during_measure']} s over the "
        f"{result['measure_s']} s measured"
        + (
            f". 50,000 partitions do not fit one broker here (hard limit of "
            f"{result['open_files_limit']:,} open files a process, which the container does not "
            f"let root raise; every partition's log holds one): `--nodes 6` measures them."
            if result["nodes"] == 1
            else f" ({result['nodes']} JVMs together)."
        ),
    ]
    return table, "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1000,10000", help="partitions, comma-separated")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument("--heap", help="broker heap options (LAGASSIGN_KAFKA_HEAP_OPTS)")
    parser.add_argument(
        "--nodes", type=int, default=1, help="Kafka nodes (LAGASSIGN_KAFKA_NODES; default 1)"
    )
    args = parser.parse_args()
    args.scales = [int(s) for s in args.scales.split(",")]
    args.contenders = args.contenders.split(",")
    unknown = set(args.contenders) - set(CONTENDERS)
    if unknown or not 0 < args.rounds <= 1000 or not 1 <= args.nodes <= 32:
        parser.error(f"--contenders from {', '.join(CONTENDERS)}; --rounds 1..1000; --nodes 1..32")
    measure_and_save(
        "offsets" if args.nodes == 1 else f"offsets-{args.nodes}-nodes",
        lambda broker: run(args, broker),
        render,
        heap_opts=args.heap,
        nodes=args.nodes,
    )


if __name__ == "__main__":
    main()
