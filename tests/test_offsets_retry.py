"""The offsets reader asks again for partitions whose leader is moving (no broker needed: the
consumer's ``offsets_for_times`` is a stand-in that answers as a broker does while a topic's
leaders are being elected). Found by the 10,000-partition aiokafka e2e test, whose leader read
the log offsets of topics created a moment before: one "Not leader for partition" failed the
whole read and the group fell back to lag 0."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from lagassign.kafka import offsets
from lagassign.kafka.offsets import EARLIEST, LATEST, OffsetsReader


@dataclass
class Answer:
    """What librdkafka answers for one partition: its offset, or an error."""

    offset: int
    error: KafkaError | None = None


class ElectingConsumer:
    """``offsets_for_times`` answers ``error`` for partition 1 the first ``failures`` times
    (``raises``: fails the whole call with it, as librdkafka does with a partition's error
    when it cannot ask that partition's leader), then log start 10 and log end 100 +
    partition for everything."""

    def __init__(self, error: int, failures: int, raises: bool = False) -> None:
        self.error, self.failures, self.calls, self.raises = error, failures, 0, raises
        # the reader's threads call at once: each call is one step of the broker's story
        self.lock = threading.Lock()

    def offsets_for_times(self, request: list[Any], timeout: float) -> list[Any]:
        with self.lock:
            return self._answer(request)

    def _answer(self, request: list[Any]) -> list[Any]:
        self.calls += 1
        out = []
        if self.raises and self.failures > 0 and any(k.partition == 1 for k in request):
            self.failures -= 1
            raise KafkaException(KafkaError(self.error, "Failed to get offsets"))
        for k in request:
            if k.partition == 1 and self.failures > 0:
                out.append(Answer(-1, KafkaError(self.error)))
            else:
                offset = 10 if k.offset == EARLIEST else 100 + k.partition
                out.append(Answer(offset))
        if any(k.partition == 1 for k in request):
            self.failures -= 1
        return out


def read(consumer: ElectingConsumer, timeout: float) -> list[tuple[int, int, list[int], Any]]:
    reader = OffsetsReader({"bootstrap.servers": "127.0.0.1:9"}, timeout=timeout)
    try:
        reader._consumer_client = lambda: consumer  # type: ignore[method-assign]
        calls = reader._list_offsets_calls([("t", 0), ("t", 1), ("t", 2)], time.monotonic() + timeout)
        return [row for future in calls.values() for row in future.result(timeout=timeout)]
    finally:
        reader.close()


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    # the backoff is the production one; the test need not sleep through it
    monkeypatch.setattr(offsets, "RETRY_BACKOFF_S", 0.001)
    monkeypatch.setattr(offsets, "MAX_RETRY_BACKOFF_S", 0.001)


@pytest.mark.parametrize("raises", [False, True], ids=["partition-error", "call-fails"])
@pytest.mark.parametrize(
    "error", [KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE]
)
def test_a_partition_whose_leader_is_moving_is_asked_again(error: int, raises: bool) -> None:
    consumer = ElectingConsumer(error, failures=3, raises=raises)
    rows = sorted(read(consumer, timeout=30))
    assert rows == [(EARLIEST, 0, [10, 10, 10], None), (LATEST, 0, [100, 101, 102], None)]
    assert consumer.calls == 2 + 3  # one call per spec, and three more until partition 1 answers


def test_an_error_that_does_not_pass_is_not_asked_again() -> None:
    consumer = ElectingConsumer(KafkaError.TOPIC_AUTHORIZATION_FAILED, failures=1)
    rows = read(consumer, timeout=30)
    failed = [row[3] for row in rows if row[3] is not None]
    assert [(where, e.code()) for where, e in failed] == [
        ("t-1", KafkaError.TOPIC_AUTHORIZATION_FAILED)
    ]
    assert consumer.calls == 2


def test_a_call_failing_with_an_error_that_does_not_pass_fails_the_read() -> None:
    consumer = ElectingConsumer(KafkaError.TOPIC_AUTHORIZATION_FAILED, failures=1, raises=True)
    with pytest.raises(KafkaException):
        read(consumer, timeout=30)
