"""The one error every input format raises: a place (file, key or line) and what is wrong."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input. ``str()`` is the one line the CLI prints: ``place: message``."""

    def __init__(self, place: str, message: str) -> None:
        super().__init__(f"{place}: {message}")
        self.place = place
        self.message = message
