"""kafka-python's event-loop warnings in a 10,000-partition group: which steps, how long, whose.

kafka-python 3 runs its consumer as tasks on an event loop of its own and logs every task
step longer than 0.1 s: ``Task … ran for 0.188s (>0.100s threshold). It is blocking the event
loop``. This benchmark counts those warnings in real kafka-python consumer processes on a fresh
development broker (scripts/kafka.sh) with 20 topics × 500 partitions (10,000), 1–3 records in
each partition and a committed offset on every other, and says whose work each slow step was:

* ``kafka-python range``: kafka-python's own ``RangePartitionAssignor``, no lagassign: what
  kafka-python logs by itself for a member of a group of that size;
* ``lagassign range``: lagassign's ``range`` through the adapter (reads no lag);
* ``lagassign lag``: lagassign's ``lag`` (every member prefetches the offsets as it sends
  JoinGroup; the leader's ``assign()`` uses that read).
* ``lagassign balanced``: lagassign's ``balanced``, which reads the offsets as ``lag`` does and
  searches its plan in the leader's ``assign()``.

Each round starts ``--members`` consumer processes of a new group at once, each subscribed to
every topic and polling from the earliest offset, for ``--seconds``; variants take turns
within each round. Every member reports every slow step: its length, and the coroutine that ran
it (outermost first) with the line it stopped at after the step, so a step is placed in
kafka-python's code; and the wall and CPU time (its thread's) of the assignor's ``assign()``
(kafka-python calls it inside the step that handles the JoinGroup answer and sends SyncGroup)
and ``metadata()``.

    .venv/bin/python bench/loop_warnings.py [--rounds 3] [--members 2] [--seconds 25]

Prints a table and writes bench/results/loop_warnings.json and loop_warnings.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from _broker import admin_client, commit, create_topics, measure_and_save, produce
from rich.table import Table

TOPICS = 20
PARTITIONS_PER_TOPIC = 500
VARIANTS = ("kafka-python range", "lagassign range", "lagassign lag", "lagassign balanced")
PRODUCER = {"linger.ms": "50", "acks": "1", "compression.type": "none"}
SLOW = "ran for "


# -- a member (this script with --member) -----------------------------------------------------


def coroutine_chain(frame: FrameType | None) -> list[str]:
    """The coroutine of the task kafka-python's selector just stepped, outermost first, each
    as ``qualname:line`` where it stopped (found from the selector's frame, which is logging)."""
    while frame is not None and frame.f_code.co_name != "_poll_once":
        frame = frame.f_back
    task = getattr(frame.f_locals.get("self") if frame is not None else None, "_current", None)
    chain: list[str] = []
    stack = getattr(task, "_stack", None)
    if not stack:  # the step ended the task: its coroutine is gone, what made it is kept
        return [f"{getattr(task, 'made_for', '?')} (the task ended in this step)"]
    coro = stack[0]
    while coro is not None and len(chain) < 12:
        code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
        inner = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if code is None:
            chain.append(type(coro).__name__)
            break
        chain.append(f"{code.co_qualname}:{inner.f_lineno if inner else '-'}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return chain


class SlowSteps(logging.Handler):
    """Reports kafka-python's slow-step warnings as ``slow`` events (``report``: the member's
    ``emit``, imported before: an import inside a log call can deadlock at interpreter exit)."""

    def __init__(self, name: str, report: Any) -> None:
        super().__init__(logging.WARNING)
        self.member = name
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if SLOW not in message:
            return
        seconds = float(message.split(SLOW, 1)[1].split("s", 1)[0])
        self.report(self.member, "slow", seconds=seconds, chain=coroutine_chain(sys._getframe()))


def name_tasks() -> None:
    """Every kafka-python task keeps the name of the coroutine or callback it runs
    (``made_for``), so a step that ends its task can still be placed."""
    from kafka.net import selector

    made = selector.Task.__init__

    def init(task: Any, coro: Any) -> None:
        made(task, coro)
        code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
        target = getattr(coro, "__func__", coro)
        task.made_for = code.co_qualname if code else getattr(target, "__qualname__", "?")

    selector.Task.__init__ = init


def member(args: argparse.Namespace) -> None:
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    from lagassign.kafka.kafka_python import assignor
    from tests.kafka.processes import emit, start_watchdog

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("kafka").addHandler(SlowSteps(args.name, emit))
    name_tasks()
    start_watchdog(args.seconds)
    if args.variant == "kafka-python range":
        chosen: Any = RangePartitionAssignor()  # kafka-python makes one of a class the same way
    else:
        chosen = assignor(
            args.variant.split()[-1],
            group_id=args.group,
            auto_offset_reset="earliest",
            bootstrap_servers=args.bootstrap,
        )
    for method in ("assign", "metadata"):
        original = getattr(chosen, method)

        def timing(*a: Any, _original: Any = original, _method: str = method) -> Any:
            began, cpu = time.perf_counter(), time.thread_time()
            result = _original(*a)
            seconds, used = time.perf_counter() - began, time.thread_time() - cpu
            led = getattr(chosen, "last_result", None) if _method == "assign" else None
            emit(
                args.name,
                _method,
                seconds=seconds,
                cpu=used,
                # lagassign's leader: where its lags came from, and how old the read was
                lag=getattr(led, "lag", None),
                offsets_age=getattr(led, "offsets_age", None),
            )
            return result

        setattr(chosen, method, timing)
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=args.name,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[chosen],
    )
    consumer.subscribe(args.topics.split(","))
    emit(args.name, "started", pid=os.getpid())
    records = 0
    try:
        while True:  # without a deadline (docs/consumers.md); the watchdog ends the process
            batches = consumer.poll(timeout_ms=float("inf"), max_records=5000)
            got = sum(len(b) for b in batches.values())
            if got:
                records += got
                emit(args.name, "records", total=records)
    except BaseException as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        emit(
            args.name,
            "error",
            message=f"{type(exc).__name__}: {exc} ({where.filename}:{where.lineno})",
        )
        sys.stdout.flush()
        os._exit(1)


# -- the benchmark ------------------------------------------------------------------------------


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_group(
    bootstrap: str, variant: str, group: str, topics: Sequence[str], members: int, seconds: float
) -> list[dict[str, Any]]:
    """``members`` member processes of ``group`` at once; every event they reported (through
    files: a full pipe would stall a member's event loop)."""
    with tempfile.TemporaryDirectory(prefix="lagassign-loop-") as tmp:
        outs = [Path(tmp) / f"m{i}.jsonl" for i in range(members)]
        procs = []
        for i, out in enumerate(outs):
            with out.open("w") as sink:
                procs.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            __file__,
                            "--member",
                            "--variant",
                            variant,
                            "--name",
                            f"m{i}",
                            "--bootstrap",
                            bootstrap,
                            "--group",
                            group,
                            "--topics",
                            ",".join(topics),
                            "--seconds",
                            str(seconds),
                        ],
                        stdout=sink,
                        stderr=subprocess.DEVNULL,
                        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                    )
                )
        for proc in procs:
            try:
                proc.wait(timeout=seconds + 60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return [
            json.loads(line)
            for out in outs
            for line in out.read_text().splitlines()
            if line.startswith("{")
        ]


def run(args: argparse.Namespace, broker: Any) -> dict[str, Any]:
    topics = [f"loop-{t:02d}" for t in range(TOPICS)]
    shape = dict.fromkeys(topics, PARTITIONS_PER_TOPIC)
    admin = admin_client(broker.bootstrap)
    create_topics(admin, shape)  # and waits for every partition's leader
    counts = {(t, p): 1 + p % 3 for t in topics for p in range(PARTITIONS_PER_TOPIC)}
    produce(broker.bootstrap, counts, value=lambda *_: b"x" * 16, config=PRODUCER)
    load_before = loadavg()
    rounds: list[dict[str, Any]] = []
    for r in range(args.rounds):
        for i in range(len(VARIANTS)):
            variant = VARIANTS[(r + i) % len(VARIANTS)]
            group = f"loop-{variant.replace(' ', '-')}-{r}"
            commit(broker.bootstrap, group, {tp: n - 1 for tp, n in counts.items() if tp[1] % 2})
            load = loadavg()
            events = run_group(broker.bootstrap, variant, group, topics, args.members, args.seconds)
            rounds.append({"round": r, "variant": variant, "load": load, "events": events})
            slow = [e for e in events if e["event"] == "slow"]
            print(
                f"round {r} {variant}: {len(slow)} slow steps, load {load[0]}",
                file=sys.stderr,
            )
    return {
        "topics": TOPICS,
        "partitions_per_topic": PARTITIONS_PER_TOPIC,
        "members": args.members,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "rebalance_delay_ms": args.rebalance_delay_ms,
        "load_before": load_before,
        "load_after": loadavg(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "records": sum(counts.values()),
        "summary": summarise(rounds, args.members, sum(counts.values())),
        "runs": rounds,
    }


def where(chain: Sequence[str]) -> str:
    """A slow step's place: the coroutines it ran in, without line numbers of the outer ones
    that only await (``poll`` and the like), innermost with its line."""
    return " › ".join(chain) if chain else "?"


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else float("nan")


def summarise(rounds: Sequence[dict[str, Any]], members: int, records: int) -> list[dict[str, Any]]:
    summary = []
    for variant in VARIANTS:
        runs = [r for r in rounds if r["variant"] == variant]
        slow = [e for r in runs for e in r["events"] if e["event"] == "slow"]
        places: dict[str, list[float]] = defaultdict(list)
        for e in slow:
            places[where(e["chain"])].append(e["seconds"])
        assigns = [e for r in runs for e in r["events"] if e["event"] == "assign"]
        metas = [e for r in runs for e in r["events"] if e["event"] == "metadata"]
        # a round whose members between them read every record
        read: dict[tuple[int, str], int] = Counter()
        for r in runs:
            for e in r["events"]:
                if e["event"] == "records":
                    key = (r["round"], e["name"])
                    read[key] = max(read[key], e["total"])
        rounds_read: dict[int, int] = Counter()
        for (rnd, _), n in read.items():
            rounds_read[rnd] += n
        summary.append(
            {
                "variant": variant,
                "member_runs": len(runs) * members,
                "slow_steps": len(slow),
                "slow_max_s": max((e["seconds"] for e in slow), default=None),
                "places": {
                    k: {"count": len(v), "max_s": max(v), "p50_s": percentile(v, 0.5)}
                    for k, v in sorted(places.items(), key=lambda kv: -len(kv[1]))
                },
                "assign_p50_s": percentile([e["seconds"] for e in assigns], 0.5),
                "assign_max_s": max((e["seconds"] for e in assigns), default=None),
                "assign_cpu_p50_s": percentile([e["cpu"] for e in assigns], 0.5),
                "assigns": len(assigns),
                "metadata_max_s": max((e["seconds"] for e in metas), default=None),
                "errors": [
                    e["message"] for r in runs for e in r["events"] if e["event"] == "error"
                ],
                "rounds_reading_every_record": sum(1 for n in rounds_read.values() if n == records),
            }
        )
    return summary


def ms(seconds: float | None) -> str:
    return "—" if seconds is None or seconds != seconds else f"{seconds * 1000:,.0f}"


def render(result: dict[str, Any]) -> tuple[Table, str]:
    columns = [
        "variant",
        "member runs",
        "slow steps",
        "longest ms",
        "assign() p50 ms",
        "assign() max ms",
        "assign() CPU p50 ms",
        "metadata() max ms",
    ]
    table = Table(title="kafka-python slow event-loop steps (> 100 ms), 10,000 partitions")
    for c in columns:
        table.add_column(c, justify="left" if c == "variant" else "right")
    lines = [
        f"Real Kafka 4.4 broker (scripts/kafka.sh, one node); {result['topics']} topics × "
        f"{result['partitions_per_topic']} partitions, 1–3 records in each, a committed offset "
        f"on every other; per round and variant a new group of {result['members']} kafka-python "
        f"3 consumer processes started at once, each subscribed to every topic, polling from "
        f"the earliest offset for {result['seconds']:g} s; {result['rounds']} rounds, variants "
        f"taking turns. Slow steps: kafka-python's own `Task … ran for … It is blocking the "
        f"event loop` warnings (threshold 0.1 s). The broker waits "
        f"{result.get('rebalance_delay_ms', 0):,} ms for more members before it answers a new "
        f"group's first JoinGroup (`group.initial.rebalance.delay.ms`; Kafka's default is "
        f"3,000). "
        f"Load average {result['load_before']} before "
        f"and {result['load_after']} after, on {result['machine']['cpus']} cores shared with "
        f"other work.",
        "",
        "| " + " | ".join(columns) + " |",
        "|---|" + "---:|" * (len(columns) - 1),
    ]
    for row in result["summary"]:
        cells = [
            row["variant"],
            str(row["member_runs"]),
            str(row["slow_steps"]),
            ms(row["slow_max_s"]),
            ms(row["assign_p50_s"]),
            ms(row["assign_max_s"]),
            ms(row["assign_cpu_p50_s"]),
            ms(row["metadata_max_s"]),
        ]
        table.add_row(*cells)
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Where the slow steps ran (the task's coroutines, outermost first, each at "
        "the line it stopped at after the step): count, p50 / max ms.",
        "",
    ]
    for row in result["summary"]:
        lines.append(f"- **{row['variant']}**:")
        for place, v in row["places"].items():
            lines.append(f"  - `{place}`: {v['count']}, {ms(v['p50_s'])} / {ms(v['max_s'])}")
        if not row["places"]:
            lines.append("  - none")
        for message in row["errors"]:
            lines.append(f"  - a member failed: `{message}`")
    return table, "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--members", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument(
        "--rebalance-delay-ms",
        type=int,
        default=0,
        help="the broker's group.initial.rebalance.delay.ms (default 0, as the tests' broker; "
        "Kafka's default is 3000); other than 0 writes loop_warnings-delay-MS.*",
    )
    parser.add_argument("--member", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--group", help=argparse.SUPPRESS)
    parser.add_argument("--topics", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.member:
        member(args)
        return
    name = "loop_warnings"
    if args.rebalance_delay_ms:
        name += f"-delay-{args.rebalance_delay_ms}"
    # the broker (scripts/kafka.sh) reads it from the environment it is started in
    os.environ["LAGASSIGN_KAFKA_GROUP_DELAY_MS"] = str(args.rebalance_delay_ms)
    measure_and_save(name, lambda broker: run(args, broker), render)


if __name__ == "__main__":
    main()
