"""Python's cyclic garbage collector, paused around work that makes many short-lived objects.

The strategies on large groups, the offsets reader and the monitor's micro-batches each make
hundreds of thousands to millions of small objects that hold no reference cycles. Their count
alone starts collections of the older generations, which walk every object of the process
again and again: about a second per million partitions in a strategy, and as much CPU as all
the decoding in a read of 10,000 partitions' offsets (40 of 90 ms). What such work makes is
freed by reference counting when it ends, so the collector is paused for its length and runs
again after it as it would have.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for the block, unless it was off already.

    Nested and concurrent blocks are safe: only the block that turned the collector off turns
    it back on. With blocks in several threads, the first to end turns it on, and the others
    then only lose the saving.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
