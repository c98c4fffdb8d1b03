"""The core's modules that may run as C extensions: which they are, where each one's extension
lies, and whether that extension was built from the source beside it.

scripts/compile.py builds them with mypyc and stamps each with the SHA-256 of its source
(``<module>.compiled-from``); :mod:`lagassign.strategies` imports an extension only while
:func:`current` holds, for Python would import a stale one before the edited ``.py``. Both
read the rule here. This module imports nothing of lagassign's: the compiler must not load
the extensions it is about to overwrite.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
from pathlib import Path

#: the modules compiled (dotted names). Only strategy modules are kept from a stale extension
#: today (lagassign.strategies does it as it imports them): a module elsewhere added here needs
#: the same check where it is imported.
MODULES = ("lagassign.strategies.balanced",)

_PACKAGE = Path(__file__).resolve().parent


def source(module: str) -> Path:
    """The ``.py`` of ``module``, one of :data:`MODULES`."""
    package, _, rest = module.partition(".")
    if package != _PACKAGE.name:
        raise ValueError(f"{module!r} is not a module of {_PACKAGE.name}")
    return _PACKAGE.joinpath(*rest.split(".")).with_suffix(".py")


def extension(source: Path) -> Path:
    """Where the extension of ``source`` lies: beside it, named for this interpreter."""
    return source.with_name(source.stem + importlib.machinery.EXTENSION_SUFFIXES[0])


def stamp(source: Path) -> Path:
    """The file that names the source the extension of ``source`` was built from."""
    return source.with_suffix(".compiled-from")


def digest(source: Path) -> str:
    return hashlib.sha256(source.read_bytes()).hexdigest()


def current(source: Path) -> bool:
    """Whether the extension of ``source`` exists and was built from it as it is now."""
    built_from = stamp(source)
    return (
        extension(source).exists()
        and built_from.exists()
        and built_from.read_text().strip() == digest(source)
    )
