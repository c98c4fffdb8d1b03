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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lagassign.formats.errors import InputError, read_text
from lagassign.model import ModelError


def load_json(path: str | Path) -> Any:
    """The JSON document in the file at ``path``; an unreadable file or invalid JSON is an
    :class:`InputError` naming the file (and the line and column)."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}:{e.colno}", f"invalid JSON: {e.msg}") from None


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
            raise self.fail(f"expected {what}, got {json.dumps(value)}")
        if not isinstance(value, kind):
            raise self.fail(f"expected {what}, got {json.dumps(value)[:40]}")
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
        with self.at(key):
            return self.expect(value, kind, what)
