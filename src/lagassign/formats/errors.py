"""The one error every input format raises: a place (file, key or line) and what is wrong."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import IO

from lagassign.formats.limits import one_line


class InputError(ValueError):
    """Bad input. ``str()`` is the one line the CLI prints: ``place: message``; whatever the
    input put in either (a newline in a topic name), it stays one line, escaped."""

    def __init__(self, place: str, message: str) -> None:
        place, message = one_line(place), one_line(message)
        super().__init__(f"{place}: {message}")
        self.place = place
        self.message = message


def _open_local(path: str) -> IO[bytes]:
    return open(path, "rb")


def read_text(path: str | Path, opener: Callable[[str], IO[bytes]] | None = None) -> str:
    """A text file's contents (UTF-8, without a byte-order mark, line ends as they are); an
    unreadable file is an :class:`InputError`. ``opener`` opens it as bytes (default: a local
    file)."""
    try:
        with io.TextIOWrapper(
            (opener or _open_local)(str(path)), encoding="utf-8-sig", newline=""
        ) as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read: {getattr(e, 'strerror', None) or e}") from None
