"""A consumer process for the end-to-end tests: a group member with a lagassign assignor.

    python tests/kafka/consumer_proc.py --client kafka-python|aiokafka --bootstrap HOST:PORT
        --group G --topics a,b [--strategy lag] [--consume] ...

It reports on stdout, one JSON object a line, each with ``event`` and the process's ``name``:

* ``{"event": "started"}`` once the consumer exists;
* ``{"event": "assigned", "member_id", "generation", "partitions": [[topic, partition], ...]}``
  when partitions are assigned: the member's whole assignment after the rebalance (eager
  protocol: after every rebalance; cooperative: when it gained partitions);
* ``{"event": "revoked", "member_id", "generation", "partitions", "assignment"}`` when
  partitions are revoked: those revoked and the member's assignment at that moment (eager:
  still the old one; cooperative: what it keeps);
* ``{"event": "leader", "generation", "lag", "seconds", "error", "assignment": {member: [...]}}``
  after a rebalance this member led: what its assignor computed (``LeaderAssignment``);
* ``{"event": "consumed", "records": [[topic, partition, first, last], ...]}`` for every batch it
  processed (``--consume``), before committing the batch (``--commit``);
* ``{"event": "committed", ...}`` after each commit, ``{"event": "error", "message"}`` on a
  failure.

Logging (lagassign's warnings among them) goes to stderr. The process stops by itself after
``--max-seconds`` or once its parent is gone, so a test that dies leaves no consumer behind.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# run as a script: make `lagassign` (src) importable even without an installed package
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

_out_lock = threading.Lock()


def emit(name: str, event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, "name": name, "time": time.time(), **fields})
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--client", choices=["kafka-python", "aiokafka"], required=True)
    p.add_argument("--name", default=f"proc-{os.getpid()}")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--offsets-bootstrap", help="bootstrap.servers of the leader's offsets reader")
    p.add_argument("--group", required=True)
    p.add_argument("--topics", required=True, help="comma-separated")
    p.add_argument("--strategy", default="lag")
    p.add_argument("--auto-offset-reset", default="earliest")
    p.add_argument("--lag-timeout", type=float, default=None)
    p.add_argument("--consume", action="store_true", help="process records (else only report)")
    p.add_argument("--commit", action="store_true", help="commit after every processed batch")
    p.add_argument("--max-records", type=int, default=20)
    p.add_argument("--delay", type=float, default=0.0, help="seconds to sleep per batch")
    p.add_argument("--session-timeout-ms", type=int, default=6000)
    p.add_argument("--heartbeat-interval-ms", type=int, default=1000)
    p.add_argument("--max-poll-interval-ms", type=int, default=20000)
    p.add_argument("--max-seconds", type=float, default=300.0)
    p.add_argument("--debug", action="append", default=[], help="a logger to log at DEBUG")
    return p.parse_args(argv)


def assignor_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {
        "group_id": args.group,
        "auto_offset_reset": args.auto_offset_reset,
        "bootstrap_servers": args.offsets_bootstrap or args.bootstrap,
    }
    if args.lag_timeout is not None:
        options["lag_timeout"] = args.lag_timeout
    return options


def ranges(records: Iterable[Any]) -> list[list[Any]]:
    """[[topic, partition, first offset, last offset], ...] of a batch's records."""
    spans: dict[tuple[str, int], list[int]] = {}
    for r in records:
        span = spans.setdefault((r.topic, r.partition), [r.offset, r.offset])
        span[0], span[1] = min(span[0], r.offset), max(span[1], r.offset)
    return [[t, p, first, last] for (t, p), (first, last) in sorted(spans.items())]


class Stopper:
    def __init__(self, max_seconds: float) -> None:
        self.deadline = time.monotonic() + max_seconds
        self.parent = os.getppid()

    def done(self) -> bool:
        return time.monotonic() > self.deadline or os.getppid() != self.parent


def watchdog(stopper: Stopper) -> None:
    while not stopper.done():
        time.sleep(0.5)
    sys.stdout.flush()
    os._exit(0)


def report_leader(name: str, assignor: Any, generation: int, seen: list[Any]) -> None:
    result = assignor.last_result
    if result is None or (seen and seen[-1] is result):
        return
    seen.append(result)
    emit(
        name,
        "leader",
        generation=generation,
        strategy=result.strategy,
        lag=result.lag,
        seconds=result.seconds,
        error=result.error,
        prefetched=result.prefetched,
        assignment={m: [[tp.topic, tp.partition] for tp in tps] for m, tps in result.assignment.partitions.items()},
    )


def tp_list(tps: Iterable[Any]) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in tps)


# -- kafka-python ----------------------------------------------------------------------------


def run_kafka_python(args: argparse.Namespace) -> None:
    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    from lagassign.kafka.kafka_python import assignor as make_assignor

    name = args.name
    assignor = make_assignor(args.strategy, **assignor_options(args))
    seen: list[Any] = []
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=name,
        enable_auto_commit=False,
        auto_offset_reset=args.auto_offset_reset,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        max_poll_interval_ms=args.max_poll_interval_ms,
        partition_assignment_strategy=[assignor],
    )

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            meta = consumer.group_metadata()
            emit(
                name,
                "revoked",
                member_id=meta.member_id,
                generation=meta.generation_id,
                partitions=tp_list(revoked),
                assignment=tp_list(consumer.assignment()),
            )

        def on_partitions_assigned(self, assigned: Any) -> None:
            meta = consumer.group_metadata()
            emit(
                name,
                "assigned",
                member_id=meta.member_id,
                generation=meta.generation_id,
                partitions=tp_list(consumer.assignment()),
            )
            report_leader(name, assignor, meta.generation_id, seen)

    consumer.subscribe(args.topics.split(","), listener=Listener())
    emit(name, "started", client=args.client, pid=os.getpid())
    # poll() without a deadline: kafka-python 3.0.12 loses a rebalance whose leader is still
    # assigning when the poll() that started it times out (docs/consumers.md); a watchdog
    # thread ends the process instead of a bounded loop
    stopper = Stopper(args.max_seconds)
    threading.Thread(target=watchdog, args=(stopper,), daemon=True).start()
    try:
        while True:
            batches = consumer.poll(timeout_ms=float("inf"), max_records=args.max_records)
            records = [r for batch in batches.values() for r in batch]
            if not records or not args.consume:
                continue
            emit(name, "consumed", records=ranges(records))
            if args.delay:
                time.sleep(args.delay)
            if args.commit:
                try:
                    consumer.commit()
                    emit(name, "committed", records=ranges(records))
                except Exception as exc:  # a rebalance in between: the next owner re-reads
                    emit(name, "error", message=f"commit: {type(exc).__name__}: {exc}")
    finally:
        consumer.close(autocommit=False)


# -- aiokafka --------------------------------------------------------------------------------


async def run_aiokafka(args: argparse.Namespace) -> None:
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

    from lagassign.kafka.aiokafka import assignor as make_assignor

    name = args.name
    assignor = make_assignor(args.strategy, **assignor_options(args))
    seen: list[Any] = []
    consumer = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=name,
        enable_auto_commit=False,
        auto_offset_reset=args.auto_offset_reset,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        max_poll_interval_ms=args.max_poll_interval_ms,
        rebalance_timeout_ms=args.max_poll_interval_ms,
        partition_assignment_strategy=[assignor],
    )

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            coordinator = consumer._coordinator
            emit(
                name,
                "revoked",
                member_id=coordinator.member_id,
                generation=coordinator.generation,
                partitions=tp_list(revoked),
                assignment=tp_list(consumer.assignment()),
            )

        def on_partitions_assigned(self, assigned: Any) -> None:
            # aiokafka has no public accessor for the member id and generation
            coordinator = consumer._coordinator
            emit(
                name,
                "assigned",
                member_id=coordinator.member_id,
                generation=coordinator.generation,
                partitions=tp_list(consumer.assignment()),
            )
            report_leader(name, assignor, coordinator.generation, seen)

    consumer.subscribe(args.topics.split(","), listener=Listener())
    await consumer.start()
    emit(name, "started", client=args.client, pid=os.getpid())
    stopper = Stopper(args.max_seconds)
    try:
        while not stopper.done():
            batches = await consumer.getmany(timeout_ms=200, max_records=args.max_records)
            records = [r for batch in batches.values() for r in batch]
            if not records or not args.consume:
                continue
            emit(name, "consumed", records=ranges(records))
            if args.delay:
                await asyncio.sleep(args.delay)
            if args.commit:
                try:
                    await consumer.commit()
                    emit(name, "committed", records=ranges(records))
                except Exception as exc:
                    emit(name, "error", message=f"commit: {type(exc).__name__}: {exc}")
    finally:
        await consumer.stop()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format=f"%(asctime)s {args.name} %(levelname)s %(name)s: %(message)s",
    )
    for name in args.debug:
        logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        if args.client == "kafka-python":
            run_kafka_python(args)
        else:
            asyncio.run(run_aiokafka(args))
    except Exception as exc:
        emit(args.name, "error", message=f"{type(exc).__name__}: {exc}")
        raise


if __name__ == "__main__":
    main()
