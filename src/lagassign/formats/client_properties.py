"""Java client properties files, read the way Kafka's own tools read them
(``java.util.Properties.load``): ``key=value``, ``key: value`` or ``key value``; ``#`` and ``!``
start comment lines; a line ending in an odd number of backslashes continues on the next;
``\\t``, ``\\n``, ``\\uXXXX`` and ``\\=`` style escapes.

What the properties mean to a Kafka client is :mod:`lagassign.kafka.config`'s. Bad input
raises :class:`~lagassign.formats.errors.InputError` naming ``file:line``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lagassign.formats.errors import InputError
from lagassign.formats.limits import text_problem


@dataclass(frozen=True, slots=True)
class Property:
    key: str
    value: str
    #: the line the property starts on (1-based)
    line: int


# ------------------------------------------------------------------------------------------------
# java.util.Properties syntax

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


#: line ends as Java's Properties.load knows them (str.splitlines would also split at form
#: feeds, U+0085 and U+2028, which Java keeps inside a line)
_LINE_END = re.compile(r"\r\n|\r|\n")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Joins continued lines: (first line number, logical line), comments and blanks dropped."""
    out: list[tuple[int, str]] = []
    lines = _LINE_END.split(text)
    i = 0
    while i < len(lines):
        start = i + 1
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        if _continues(line):  # a backslash on the last line of the file: Java drops it
            line = line[:-1]
        out.append((start, line))
    return out


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _unescape(raw: str, place: str, what: str) -> str:
    """The text of a raw key or value; ``what`` names it in errors ("the key", "the value of
    'sasl.password'"), which never show any of its text: a value may be a secret."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(raw):
            i += 1
            continue
        nxt = raw[i + 1]
        if nxt == "u":
            digits = raw[i + 2 : i + 6]
            if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise InputError(place, f"malformed \\uXXXX escape in {what}")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    # \uD83D\uDE00 pairs: join surrogates as Java's UTF-16 strings would
    try:
        return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        raise InputError(
            place, f"a \\uXXXX escape in {what} is a lone surrogate (not valid Unicode)"
        ) from None


def _split(line: str) -> tuple[str, str, bool]:
    """(raw key, raw value, whether a separator or value followed the key)."""
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:]
    stripped = rest.lstrip(" \t\f")
    if stripped[:1] in ("=", ":"):
        stripped = stripped[1:].lstrip(" \t\f")
        return key, stripped, True
    return key, stripped, bool(stripped)


def parse_properties(text: str, source: str) -> list[Property]:
    """Every property of a Java properties text, in file order (a repeated key appears twice).

    ``source`` names the file in error messages (``source:line``). Unlike Java, a key with no
    value at all (``sasl.mechanism`` alone on a line) is an error, since no client property
    means anything empty that way; write ``key=`` for an empty value.
    """
    props = []
    for number, line in _logical_lines(text):
        place = f"{source}:{number}"
        raw_key, raw_value, separated = _split(line)
        key = _unescape(raw_key, place, "the key")
        if not key:
            raise InputError(place, "no key before the '=' or ':'")
        problem = text_problem(key)
        if problem is not None:
            raise InputError(place, f"key {key!r}: {problem}")
        if not separated:
            # the line is all key; it may be a secret whose '=' was lost, so it is not shown
            raise InputError(place, "no '=' or ':' (expected key=value; the line is not shown)")
        props.append(Property(key, _unescape(raw_value, place, f"the value of {key!r}"), number))
    return props


def read_properties(path: str | Path) -> list[Property]:
    """The properties of a file; unreadable files and bad lines raise ``InputError``."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(source, f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"{source}:{line}", "not UTF-8 text") from None
    return parse_properties(text.removeprefix("\ufeff"), source)
