"""The one error every input format raises: a place (file, key or line) and what is wrong."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad input. ``str()`` is the one line the CLI prints: ``place: message``."""

    def __init__(self, place: str, message: str) -> None:
        super().__init__(f"{place}: {message}")
        self.place = place
        self.message = message


def read_text(path: str | Path) -> str:
    """A text file's contents (UTF-8); an unreadable file is an :class:`InputError`."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read: {getattr(e, 'strerror', None) or e}") from None
