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


def parse_json(text: str, where: str) -> Any:
    """The JSON document ``text``; invalid JSON, a repeated key, nesting too deep or a number
    too long to read is an :class:`InputError` at ``where`` (with the line and column when the
    parser knows them)."""
    try:
        return json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}:{e.lineno}:{e.colno}", f"invalid JSON: {e.msg}") from None
    except _DuplicateKey as e:
        raise InputError(where, f"key {e.key!r} appears twice in one object") from None
    except RecursionError:
        raise InputError(where, "JSON nested too deeply") from None
    except ValueError as e:  # an integer of thousands of digits
        raise InputError(where, f"cannot read a number: {str(e)[:80]}") from None


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
