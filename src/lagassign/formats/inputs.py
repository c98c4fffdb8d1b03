"""What ``--input FILE`` of ``assign`` and ``plan`` reads, chosen by the file's name: every
format a command can read groups from, in one registry.

=====================================  ==============================================
``.jsonl`` ``.ndjson`` ``.csv``         snapshot files of many groups
``.parquet`` ``.pq`` (``.gz`` for the   (:mod:`lagassign.formats.snapshot_input`), as
text ones)                             the fleet pipeline reads them
``.json``, and any other name          a group file (:mod:`lagassign.formats.group_file`)
=====================================  ==============================================

Each format is one module named in :data:`_MODULES` whose reading function is registered with
:func:`input_format`: its name, the file name endings it reads, and its line of ``--input``'s
help. A file is read by the first format, in :data:`_MODULES` order, whose ending its name has,
or else by the fallback format (the group file). Importing this module and the formats'
modules is cheap (the command line's help lists them); a reader imports pyarrow when it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lagassign.model import Group
from lagassign.module_registry import ModuleRegistry

#: the formats' modules in lagassign.formats: the order names are matched in and help lists
_MODULES = ("group_file", "snapshot_input")

#: reads every group of a file
Reader = Callable[[str], list[Group]]


@dataclass(frozen=True)
class InputFormat:
    name: str
    #: file name endings, in lower case
    suffixes: tuple[str, ...]
    read: Reader
    #: what ``--input``'s help says of it
    help: str
    #: read when no format's ending ends the name
    fallback: bool


_REGISTRY = ModuleRegistry[InputFormat]("lagassign.formats", _MODULES, "input format")


def input_format(
    name: str, suffixes: tuple[str, ...], help: str, *, fallback: bool = False
) -> Callable[[Reader], Reader]:
    """Registers an input format: its reading function and this line above it."""
    return _REGISTRY.registering(
        name, lambda read: InputFormat(name, suffixes, read, help, fallback)
    )


def formats() -> list[InputFormat]:
    """Every format, in :data:`_MODULES` order."""
    return _REGISTRY.entries()


def input_help() -> str:
    """``--input``'s help: what each format is, in :data:`_MODULES` order."""
    return ", or ".join(f.help for f in formats())


def load_groups(path: str) -> list[Group]:
    """Every group of the file at ``path``, read by the format its name says; by the fallback
    format (a group file) when it says none."""
    name = path.lower()
    every = formats()
    chosen = next((f for f in every if name.endswith(f.suffixes)), None)
    if chosen is None:
        chosen = next(f for f in every if f.fallback)
    return chosen.read(path)
