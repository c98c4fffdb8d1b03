"""`lagassign describe` as a user waits for it, beside Kafka's `kafka-consumer-groups --describe`.

A fresh development broker (scripts/kafka.sh) gets, for every scale, its own topics of 500
partitions (bench/offsets.py's set-up: 1–3 records in every partition, a committed offset on
every other) and one running member (a confluent-kafka consumer, polled until the group is
Stable with every partition assigned to it, as the real-broker tests run their members), so
that both tools list every partition with its owner. Each run is a process of its own, from
its start to its exit, as a user runs it:

* ``lagassign (table)``: ``lagassign describe --bootstrap-server B --group G``, the partition
  table and the member table, to a pipe;
* ``lagassign (json)``: the same with ``--format json``;
* ``kafka-consumer-groups``: ``ConsumerGroupCommand --describe --group G`` (kafka-tools of the
  broker's version, tests/java/tools/pom.xml), in a JVM of its own as ``bin/kafka-consumer-
  groups.sh`` starts it.

Contenders and scales take turns within each round; round 0 is a warm-up and does not count.
Every run's partition rows are counted (a line that names a topic of the scale in its first two
cells; in JSON, the ``partitions`` listed): a run that lists fewer than all fails the benchmark.

    .venv/bin/python bench/describe.py [--scales 1000,10000] [--rounds 10]

Prints a table and writes bench/results/describe.json and describe.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _broker import Broker, measure_and_save
from offsets import (
    PARTITIONS_PER_TOPIC,
    add_row,
    loadavg,
    markdown_head,
    percentile,
    setup,
    setup_sentence,
)
from rich.table import Table

from tests.javaref import (
    CONSUMER_GROUPS,
    TOOLS_LIB,
    TOOLS_POM,
    ensure_jars,
    kafka_tool_command,
)
from tests.kafka.test_offsets import running_group

CONTENDERS = ("lagassign (table)", "lagassign (json)", "kafka-consumer-groups")
LAGASSIGN = Path(sys.executable).with_name("lagassign")


def command(name: str, bootstrap: str, group: str) -> list[str]:
    if name == "kafka-consumer-groups":
        return kafka_tool_command(
            CONSUMER_GROUPS, ["--bootstrap-server", bootstrap, "--describe", "--group", group]
        )
    shown = ["--format", "json"] if name.endswith("(json)") else []
    return [str(LAGASSIGN), "describe", "--bootstrap-server", bootstrap, "--group", group, *shown]


def timed(argv: Sequence[str], topics: Sequence[str]) -> tuple[float, int]:
    """Seconds from the process's start to its exit, and the partition rows it printed."""
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}):\n{done.stderr}")
    if done.stdout.startswith("{"):
        return seconds, len(json.loads(done.stdout)["partitions"])
    names = set(topics)
    return seconds, sum(1 for line in done.stdout.splitlines() if names & set(line.split()[:2]))


def run(args: argparse.Namespace, broker: Broker) -> dict[str, Any]:
    topics, setup_s = setup(broker, args.scales)
    groups = {scale: f"bench-offsets-{scale}" for scale in args.scales}
    samples: dict[str, dict[str, list[float]]] = {
        str(s): {n: [] for n in CONTENDERS} for s in args.scales
    }
    printed: dict[str, dict[str, int]] = {str(s): {} for s in args.scales}
    runs = [(scale, name) for scale in args.scales for name in CONTENDERS]
    load_before = loadavg()
    began = time.monotonic()
    with ExitStack() as members:
        for scale in args.scales:
            print(f"{scale:,} partitions: a member joins ...", file=sys.stderr)
            members.enter_context(running_group(broker.bootstrap, groups[scale], topics[scale], 1))
        for i in range(args.rounds + 1):
            turn = runs[i % len(runs) :] + runs[: i % len(runs)]
            for scale, name in turn:
                seconds, rows = timed(command(name, broker.bootstrap, groups[scale]), topics[scale])
                if rows != scale:
                    raise RuntimeError(f"{name} listed {rows} partitions of {scale}")
                printed[str(scale)][name] = rows
                if i > 0:
                    samples[str(scale)][name].append(seconds)
            print(f"\rround {i}/{args.rounds}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    summary = []
    for scale in args.scales:
        row: dict[str, Any] = {"partitions": scale}
        for name in CONTENDERS:
            times = samples[str(scale)][name]
            row[name] = {
                "p50": percentile(times, 0.5),
                "p95": percentile(times, 0.95),
                "rows": printed[str(scale)][name],
            }
        java = row["kafka-consumer-groups"]["p50"]
        for name in CONTENDERS[:2]:
            row[f"{name} / kafka-consumer-groups"] = row[name]["p50"] / java
        summary.append(row)
    return {
        "scales": args.scales,
        "rounds": args.rounds,
        "warmup_rounds": 1,
        "setup": setup_s,
        "measure_s": round(time.monotonic() - began, 1),
        "load_before": load_before,
        "load_after": loadavg(),
        "cpus": os.cpu_count(),
        "summary": summary,
        "samples": samples,
    }


def render(result: dict[str, Any]) -> tuple[Table, str]:
    columns = ["partitions"]
    for name in CONTENDERS:
        columns += [f"{name} p50 s", f"{name} p95 s"]
    ratios = [k for k in result["summary"][0] if " / " in k]
    columns += ratios
    table = Table(title=f"describe, seconds per run over {result['rounds']} rounds")
    for c in columns:
        table.add_column(c, justify="right")
    lines = [
        f"Real Kafka 4.4 broker (scripts/kafka.sh, one node); per scale its own topics of "
        f"{PARTITIONS_PER_TOPIC} partitions, 1–3 records in each, a committed offset on every "
        "other, and one running member that owns them all (the group Stable). One run: a process "
        "of its own from start to exit, its output to a pipe: `lagassign describe` (both "
        "tables; `--format json`) and Kafka's `kafka-consumer-groups --describe` "
        "(ConsumerGroupCommand of kafka-tools 4.4 in a JVM of its own, as its script starts "
        "it). Seconds wall-clock, nearest-rank p50/p95 over "
        f"{result['rounds']} rounds after one warm-up; contenders and scales take turns within "
        "a round. Every run listed every partition (checked). Ratios: p50 over p50. Load average "
        f"{result['load_before']} before and {result['load_after']} after, on "
        f"{result['cpus']} cores.",
        "",
        *markdown_head(columns),
    ]
    for row in result["summary"]:
        cells = [f"{row['partitions']:,}"]
        for name in CONTENDERS:
            cells += [f"{row[name]['p50']:.2f}", f"{row[name]['p95']:.2f}"]
        cells += [f"{row[r]:.2f}×" for r in ratios]
        add_row(table, lines, cells)
    lines += ["", setup_sentence(result["setup"]) + f"; measured in {result['measure_s']} s."]
    return table, "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1000,10000", help="partitions, comma-separated")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    args.scales = [int(s) for s in args.scales.split(",")]
    if not 0 < args.rounds <= 1000:
        parser.error("--rounds 1..1000")
    ensure_jars(TOOLS_POM, TOOLS_LIB, "kafka-tools-*.jar")  # fetched before the broker starts
    measure_and_save("describe", lambda broker: run(args, broker), render)


if __name__ == "__main__":
    main()
