"""The monitor stops between micro-batches (spark/monitor/query.py's _Stop), also when they run
back to back; a fake query stands in for Spark's, no clock decides anything."""

from __future__ import annotations

import threading

from lagassign.spark.monitor.query import _Stop


class _BackToBack:
    """A query whose trigger is always running, as when every micro-batch is overdue; the
    running batch writes its rows on the ``ends_at``-th look at the status."""

    def __init__(self, stop: _Stop, ends_at: int) -> None:
        self.stop, self.ends_at, self.looks = stop, ends_at, 0

    @property
    def status(self) -> dict[str, bool]:
        self.looks += 1
        if self.looks == self.ends_at:
            self.stop.batch_ended.set()
        return {"isTriggerActive": True}


class _Idle:
    @property
    def status(self) -> dict[str, bool]:
        return {"isTriggerActive": False}


def test_back_to_back_batches_stop_after_the_running_one_writes_its_rows() -> None:
    stop = _Stop()
    stop.batch_ended.set()  # an earlier batch's end does not count
    query = _BackToBack(stop, ends_at=3)
    stop.between_batches(query)
    assert query.looks == 3


def test_an_idle_trigger_stops_at_once() -> None:
    stop = _Stop()
    stop.between_batches(_Idle())
    assert not stop.batch_ended.is_set()


def test_a_signal_asks_and_the_running_batch_is_waited_for() -> None:
    stop = _Stop()
    stop(15, None)
    assert stop.requested.is_set()
    query = _BackToBack(stop, ends_at=2)
    waiter = threading.Thread(target=stop.between_batches, args=(query,))
    waiter.start()
    waiter.join()
    assert query.looks == 2
