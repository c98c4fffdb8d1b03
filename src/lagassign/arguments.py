"""Argument types shared by the ``lagassign`` commands and the pipeline's flags.

Every error names its flag in one line. The ``type=`` functions raise
:class:`argparse.ArgumentTypeError`, which argparse prints as ``argument --flag: ...``. Strategy
names are checked after parsing instead: their error is an :class:`InputError`, so it reaches
the user as the same ``lagassign: error: --strategies: ...`` line as any other bad input, and
the pipeline reports it before starting Spark.
"""

from __future__ import annotations

import argparse
import math

from lagassign.formats.errors import InputError
from lagassign.formats.limits import MAX_PARTITIONS
from lagassign.lag_rules import AUTO_OFFSET_RESETS, known_reset
from lagassign.strategies import UnknownStrategy, names

#: the default of ``--timeout``, wherever the cluster is read live
DEFAULT_TIMEOUT_S = 10.0
#: the default of ``--rate-window``: two of Kafka's default auto-commit intervals (5 s), so a
#: member that reads has committed in the window, and short beside the minutes a backlog
#: takes to drain (docs/kafka.md says what a longer window buys)
DEFAULT_RATE_WINDOW_S = 10.0
#: the longest ``--timeout``: librdkafka takes an admin request's timeout in milliseconds,
#: 0..3,600,000 (``rd_kafka_AdminOptions_set_request_timeout``; confluent-kafka raises
#: ``ValueError: ... expecting integer in range 0..3600000`` beyond it)
MAX_TIMEOUT_S = 3600.0


def positive_seconds(text: str) -> float:
    """A duration such as ``--timeout 2.5``: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    # `not value > 0` rather than `value <= 0`: NaN compares false both ways and must fail
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def positive_minutes(text: str) -> float:
    """A period such as ``--plan-every 0.5``: a finite number of minutes above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of minutes: {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number of minutes, got {text}")
    return value


def percent(text: str) -> float:
    """A share such as ``--recommend-threshold 20``: a percentage from 0 up to (not including)
    100, as a fraction (0.2)."""
    try:
        value = float(text.removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0 <= value < 100:
        raise argparse.ArgumentTypeError(f"must be a percentage from 0 to below 100, got {text}")
    return value / 100


def timeout_seconds(text: str) -> float:
    """A ``--timeout`` for reading a cluster: seconds above 0, at most :data:`MAX_TIMEOUT_S`."""
    value = positive_seconds(text)
    if value > MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_TIMEOUT_S:g} s (librdkafka's longest request timeout), got {text}"
        )
    return value


def bootstrap_servers(text: str) -> str:
    """``--bootstrap-server``: ``HOST:PORT`` entries separated by commas, none of them empty
    (librdkafka would take an empty list and wait out the timeout for nothing)."""
    entries = [entry.strip() for entry in text.split(",")]
    if not any(entries):
        raise argparse.ArgumentTypeError("empty; expected HOST:PORT[,HOST:PORT...]")
    for entry in entries:
        host, colon, port = entry.rpartition(":")
        if not entry or any(c.isspace() for c in entry):
            raise argparse.ArgumentTypeError(f"not HOST:PORT[,HOST:PORT...]: {text!r}")
        if colon and not (host and port.isdigit() and 0 < int(port) < 65536):
            raise argparse.ArgumentTypeError(f"not HOST:PORT (port 1-65535): {entry!r}")
    return ",".join(entries)


def auto_offset_reset(text: str) -> str:
    """``--auto-offset-reset``: a policy Kafka knows (a misspelt one would count every log whole,
    as ``earliest`` does, without a word)."""
    if not known_reset(text):
        raise argparse.ArgumentTypeError(f"expected {AUTO_OFFSET_RESETS}, got {text!r}")
    return text


def seconds_or_zero(text: str) -> float:
    """A duration that may be 0 (off), such as ``--rate-window 0``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def positive_int(text: str) -> int:
    """A count such as ``--partitions 8``: a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def member_count(text: str) -> int:
    """``--members N``: at least 1 and at most :data:`~lagassign.formats.limits.MAX_PARTITIONS`,
    the most partitions a group may have (members beyond its partitions own nothing)."""
    value = positive_int(text)
    if value > MAX_PARTITIONS:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_PARTITIONS:,} (the most partitions a group may have), got {text}"
        )
    return value


def strategy_name(name: str, flag: str = "--strategy") -> str:
    """``name`` when a strategy is registered under it; else an error naming ``flag``."""
    if name not in names():
        raise InputError(flag, str(UnknownStrategy(name)))
    return name


def strategy_list(text: str, flag: str = "--strategies") -> list[str]:
    """Registered strategy names separated by commas (``lag, balanced``), in the given order.

    An empty list is an error rather than "plan with nothing": every command that takes the
    flag means "these strategies instead of all of them", and leaving the flag out says "all".
    """
    chosen = [strategy_name(s.strip(), flag) for s in text.split(",") if s.strip()]
    if not chosen:
        raise InputError(flag, "name at least one strategy")
    return chosen
