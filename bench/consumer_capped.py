"""A kafka-python group member with a lagassign assignor, consuming at a capped rate.

    python bench/consumer_capped.py --bootstrap HOST:PORT --group G --topics a,b \
        --strategy lag --rate 2000 [--name c0]

For bench/drain_real.py. The member joins the group with the lagassign assignor of
``--strategy`` and keeps every partition it is assigned **paused** until a line ``go`` arrives
on stdin; then it consumes, at most ``--rate`` records a second (a token bucket holding
``--max-records`` tokens), and commits after every batch. So the group's rebalances at
start-up consume nothing, and every member starts at the same moment.

It reports on stdout, one JSON object a line, each with ``event``, ``name`` and ``time``
(``time.time()``):

* ``{"event": "assigned", "member_id", "generation", "partitions": [[topic, partition], ...]}``
  after every rebalance (kafka-python, eager protocol);
* ``{"event": "leader", "generation", "strategy", "lag", "seconds", "error", "assignment"}``
  after a rebalance this member led;
* ``{"event": "go"}`` when it starts consuming;
* ``{"event": "committed", "records", "offsets": [[topic, partition, next offset], ...]}``
  after each commit;
* ``{"event": "error", "message"}``.

It stops by itself after ``--max-seconds`` or once its parent is gone.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

# run as a script: make `lagassign` (src) and `tests` importable without an installed package
_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]

from tests.kafka.processes import emit, start_watchdog  # noqa: E402


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; :meth:`take` may go into debt and
    then sleeps it off, so the long-run rate never exceeds ``rate``."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = 0.0
        self.at = time.monotonic()

    def take(self, n: int) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate) - n
        self.at = now
        if self.tokens < 0:
            time.sleep(-self.tokens / self.rate)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--topics", required=True, help="comma-separated")
    p.add_argument("--strategy", required=True)
    p.add_argument("--rate", type=float, required=True, help="records a second at most")
    p.add_argument("--name", default=f"capped-{os.getpid()}")
    p.add_argument("--max-records", type=int, default=200, help="per poll; the bucket's size")
    p.add_argument("--lag-timeout", type=float, default=10.0)
    p.add_argument("--max-seconds", type=float, default=900.0)
    args = p.parse_args()
    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format=f"%(asctime)s {args.name} %(levelname)s %(name)s: %(message)s",
    )
    start_watchdog(args.max_seconds)

    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    from lagassign.kafka.kafka_python import assignor as make_assignor

    name = args.name
    assignor = make_assignor(
        args.strategy,
        group_id=args.group,
        auto_offset_reset="earliest",
        lag_timeout=args.lag_timeout,
        bootstrap_servers=args.bootstrap,
    )
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=name,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=10000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=60000,
        partition_assignment_strategy=[assignor],
    )
    go = threading.Event()
    # the listener (poll thread) pauses what it is assigned before `go`; the stdin thread
    # resumes everything paused at `go`: the lock keeps a new assignment from slipping between
    gate = threading.Lock()
    reported: list[Any] = []

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_revoked(self, revoked: Any) -> None:
            pass

        def on_partitions_assigned(self, assigned: Any) -> None:
            with gate:
                if not go.is_set():
                    consumer.pause(*consumer.assignment())
            meta = consumer.group_metadata()
            emit(
                name,
                "assigned",
                member_id=meta.member_id,
                generation=meta.generation_id,
                partitions=sorted([tp.topic, tp.partition] for tp in consumer.assignment()),
            )
            result = assignor.last_result
            if result is not None and not (reported and reported[-1] is result):
                reported.append(result)
                emit(
                    name,
                    "leader",
                    generation=meta.generation_id,
                    strategy=result.strategy,
                    lag=result.lag,
                    seconds=result.seconds,
                    error=result.error,
                    assignment={
                        m: [[tp.topic, tp.partition] for tp in tps]
                        for m, tps in result.assignment.partitions.items()
                    },
                )

    def wait_for_go() -> None:
        for line in sys.stdin:
            if line.strip() == "go":
                with gate:
                    go.set()
                    consumer.resume(*consumer.paused())
                emit(name, "go")
                return

    consumer.subscribe(args.topics.split(","), listener=Listener())
    threading.Thread(target=wait_for_go, daemon=True).start()
    bucket = TokenBucket(args.rate, args.max_records)
    # poll() without a deadline: kafka-python 3.0 loses a rebalance whose leader is still
    # assigning when the poll() that started it times out (docs/consumers.md); while paused,
    # poll() loops inside and picks up the resume; the watchdog ends the process
    try:
        while True:
            batches = consumer.poll(timeout_ms=float("inf"), max_records=args.max_records)
            records = sum(len(rs) for rs in batches.values())
            if not records:
                continue
            bucket.take(records)
            try:
                consumer.commit()
            except Exception as exc:  # a rebalance in between: the next owner re-reads
                emit(name, "error", message=f"commit: {type(exc).__name__}: {exc}")
                continue
            emit(
                name,
                "committed",
                records=records,
                offsets=[[tp.topic, tp.partition, rs[-1].offset + 1] for tp, rs in batches.items()],
            )
    except Exception as exc:
        emit(name, "error", message=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        consumer.close(autocommit=False)


if __name__ == "__main__":
    main()
