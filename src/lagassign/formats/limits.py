"""The limits every input reader checks before any work, written once.

Each is one no real file reaches: Kafka's own types bound offsets, partition numbers,
generations and strings, and the rest sit far above any real group. They exist so that a
mistaken or hostile file (``"partitions": 1000000000``, a lag of 400 digits, a topic name with
a newline) is one line naming its place, exit status 2, instead of a hang, a traceback or an
error message that input text could forge.

=======================  ===========  ==================================================
limit                    value        why
=======================  ===========  ==================================================
``MAX_OFFSET``           2^63 − 1     Kafka's offsets are int64; so are lags
``MAX_PARTITION``        2^31 − 1     partition numbers are int32
``MAX_GENERATION``       2^31 − 1     generation ids are int32
``MAX_PARTITIONS``       1,000,000    partitions of one group (a count or rows)
``MAX_RATE``             10^15        messages per second: rates, capacities
``MAX_TEXT_BYTES``       32,767       Kafka's protocol strings (int16 length), UTF-8
``MAX_INT_DIGITS``       20           digits of a JSON integer (2^64 has 20)
``MAX_DEPTH``            32           JSON nesting (the group file needs 6)
``MAX_PARTITION_STEPS``  10^8         a scenario's steps × partitions (a few minutes of
                                      simulation per strategy on 2 cores)
=======================  ===========  ==================================================

A name, id or any other string must be valid Unicode without control characters (a lone
surrogate cannot be printed; a newline would split an error line in two).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_OFFSET = 2**63 - 1
MAX_PARTITION = 2**31 - 1
MAX_GENERATION = 2**31 - 1
MAX_PARTITIONS = 1_000_000
MAX_RATE = 1e15
MAX_TEXT_BYTES = 32_767
MAX_INT_DIGITS = 20
MAX_DEPTH = 32
MAX_PARTITION_STEPS = 100_000_000

#: control characters (C0, DEL, C1), line and paragraph separators, lone surrogates
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be a name or id, or None when it can."""
    bad = _UNPRINTABLE.search(text)
    if bad is not None:
        code = ord(bad.group())
        kind = "a lone surrogate" if 0xD800 <= code <= 0xDFFF else "a control character"
        return f"{kind} (U+{code:04X}) at character {bad.start() + 1}"
    if len(text) > MAX_TEXT_BYTES // 4 and len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        return f"longer than {MAX_TEXT_BYTES:,} bytes"
    return None


def one_line(text: str) -> str:
    """``text`` with every control character, separator and lone surrogate escaped, so that
    it prints as one line whatever the input put in it."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def too_large(value: float, largest: float) -> str | None:
    """Why ``value`` is above its limit ``largest``, or None when it is not."""
    if value <= largest:
        return None
    limit = f"{largest:,}" if isinstance(largest, int) else f"{largest:,.0f}"
    return f"out of range (at most {limit}), got {shown(value)}"


class Unreadable:
    """A JSON value lagassign does not read: ``NaN``, ``Infinity`` (not JSON), a number beyond
    a double or an integer of more than :data:`MAX_INT_DIGITS` digits. The JSON readers put
    one in its place, so that the reader that expects a number there names the key."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return self.what


def shown(value: Any, width: int = 40) -> str:
    """A value as an error message shows it: JSON (escaped, one line), at most ``width``
    characters; a list or object of more than a few items by its size."""
    if isinstance(value, Unreadable):
        return value.what
    if isinstance(value, dict | list | tuple) and len(value) > 8:
        kind = "an object" if isinstance(value, dict) else "a list"
        return f"{kind} of {len(value):,} {'keys' if isinstance(value, dict) else 'items'}"
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an integer of about {int(value.bit_length() * 0.30103):,} digits"
    if not isinstance(value, str | int | float | dict | list | tuple | None):
        return f"a {type(value).__name__} ({repr(value)[: width // 2]})"  # (Parquet's types)
    text = json.dumps(value, default=repr)
    return text if len(text) <= width else text[: width - 3] + "..."
