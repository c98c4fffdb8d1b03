"""What every JSON input format shares: reading the document, and a reader that keeps the path
of the key it is at, so that each error names its place.

A format subclasses :class:`JsonReader` and walks its document inside :meth:`JsonReader.at`::

    reader = JsonReader("group.json")
    with reader.at("members"), reader.at(0):
        reader.expect("C0", dict, "a member object")
    # InputError: group.json: members[0]: expected a member object, got "C0"
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lagassign.formats.errors import InputError, read_text
from lagassign.formats.limits import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    Unreadable,
    shown,
    text_problem,
    too_large,
)
from lagassign.model import ModelError


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: Python keeps the last of a repeated key
    silently, and a repeated ``lag`` would change a plan unseen."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


#: a JSON string (brackets inside it do not nest) and what is neither string nor bracket
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_EMPTY_PAIR = re.compile(r"\[\]|\{\}")


def _too_deep(text: str) -> bool:
    """Whether ``text`` nests lists and objects deeper than :data:`MAX_DEPTH`: each pass
    removes the innermost level of pairs, at C speed, before the parser recurses into them
    (unbalanced brackets are left to the parser to name)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(MAX_DEPTH):
        if not brackets:
            return False
        brackets = _EMPTY_PAIR.sub("", brackets)
    return _EMPTY_PAIR.search(brackets) is not None


def _integer(text: str) -> int | Unreadable:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return Unreadable(f"a number of {digits:,} digits (more than {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float | Unreadable:
    value = float(text)
    return value if math.isfinite(value) else Unreadable(f"{text[:20]} (beyond a double)")


def _constant(name: str) -> Unreadable:
    return Unreadable(f"{name} (not a JSON number)")


def parse_json(text: str, where: str) -> Any:
    """The JSON document ``text``, strictly: invalid JSON, a repeated key or nesting deeper
    than :data:`~lagassign.formats.limits.MAX_DEPTH` is an :class:`InputError` at ``where``
    (with the line and column when the parser knows them). ``NaN``, ``Infinity``, numbers
    beyond a double and integers of more than ``MAX_INT_DIGITS`` digits are read as
    :class:`~lagassign.formats.limits.Unreadable`, which the reader expecting a number there
    rejects naming the key."""
    if _too_deep(text):
        raise InputError(where, f"JSON nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        return json.loads(
            text,
            object_pairs_hook=_object,
            parse_int=_integer,
            parse_float=_float,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as e:
        raise InputError(f"{where}:{e.lineno}:{e.colno}", f"invalid JSON: {e.msg}") from None
    except _DuplicateKey as e:
        raise InputError(where, f"key {e.key!r} appears twice in one object") from None
    except RecursionError:  # (not below MAX_DEPTH; the check above comes first)
        raise InputError(where, "JSON nested too deeply") from None


def load_json(path: str | Path) -> Any:
    """The JSON document in the file at ``path``; an unreadable file or a bad document is an
    :class:`InputError` naming the file (:func:`parse_json`)."""
    return parse_json(read_text(path), str(path))


class JsonReader:
    """Walks a JSON document keeping the path, so each error names its key."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.path: list[str] = []

    def fail(self, message: str, field: str = "") -> InputError:
        where = ("".join(self.path) + (f".{field}" if field else "")).lstrip(".")
        return InputError(f"{self.source}: {where}" if where else self.source, message)

    @contextmanager
    def at(self, key: str | int) -> Iterator[None]:
        self.path.append(f"[{key}]" if isinstance(key, int) else f".{key}")
        try:
            yield
        except ModelError as e:
            # The model names the field inside the object being built here.
            raise self.fail(e.message, e.where) from None
        finally:
            self.path.pop()

    def expect(self, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(f"expected {what}, got {shown(value)}")
        if not isinstance(value, kind):
            raise self.fail(f"expected {what}, got {shown(value)}")
        if isinstance(value, str):
            self.text(value)
        return value

    def text(self, value: str) -> str:
        """``value``, when it can be a name or id (:func:`.limits.text_problem`)."""
        problem = text_problem(value)
        if problem is not None:
            raise self.fail(f"{shown(value)}: {problem}")
        return value

    def within(self, value: Any, largest: float) -> Any:
        """``value`` (a number or None), when it is not above ``largest``."""
        problem = None if value is None else too_large(value, largest)
        if problem is not None:
            raise self.fail(problem)
        return value

    def keys(self, obj: dict[str, Any], allowed: set[str], required: set[str]) -> None:
        for key in obj:
            if key not in allowed:
                with self.at(key):
                    raise self.fail(f"unknown key (expected one of {', '.join(sorted(allowed))})")
        for key in sorted(required - obj.keys()):
            raise self.fail(f"missing key {key!r}")

    def optional(
        self, obj: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str
    ) -> Any:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, kind) and not isinstance(value, bool | str):
            return value  # (what expect passes, without the cost of a place: most values)
        with self.at(key):
            return self.expect(value, kind, what)

    def bounded(
        self,
        obj: dict[str, Any],
        key: str,
        kind: type | tuple[type, ...],
        what: str,
        largest: float,
    ) -> Any:
        """:meth:`optional`, within ``largest``."""
        value = self.optional(obj, key, kind, what)
        if value is None or value <= largest:
            return value
        with self.at(key):
            return self.within(value, largest)
