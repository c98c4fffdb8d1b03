"""The output folder: written whole or not at all.

Everything is written into a hidden staging folder beside ``--out``; only when the run has
succeeded does the staging folder take ``--out``'s name (a rename on one file system), so a
failed run never leaves a half-written output, and a previous output stays as it was. ``--out``
is only replaced when it is empty or a previous pipeline output (it has ``summary.json``), never
a folder of something else.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lagassign.formats.errors import InputError

SUMMARY = "summary.json"
TOOL = "lagassign pipeline"


def is_pipeline_output(path: Path) -> bool:
    if not path.is_dir():
        return False
    if not any(path.iterdir()):
        return True
    try:
        summary = json.loads((path / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and summary.get("tool") == TOOL


def check_out(out: Path) -> Path:
    """``out`` as an absolute path, if the pipeline may write there."""
    out = out.expanduser().absolute()
    if out.exists() and not is_pipeline_output(out):
        raise InputError(
            "--out",
            f"{out} exists and is not a lagassign pipeline output; remove it or choose another",
        )
    return out


@contextmanager
def staging(out: Path) -> Iterator[Path]:
    """A fresh folder to write into; it becomes ``out`` when the block succeeds and is removed
    when it fails."""
    out = check_out(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError("--out", f"cannot create {out.parent}: {e.strerror or e}") from None
    tag = uuid.uuid4().hex[:8]
    tmp = out.parent / f".{out.name}.tmp-{tag}"
    try:
        tmp.mkdir()
    except OSError as e:  # a folder this user may not write in, a read-only file system
        raise InputError("--out", f"cannot write in {out.parent}: {e.strerror or e}") from None
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        old = out.parent / f".{out.name}.old-{tag}"
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        tmp.rename(out)


def write_summary(folder: Path, summary: dict[str, Any]) -> None:
    text = json.dumps({"tool": TOOL, **summary}, indent=2, default=str)
    (folder / SUMMARY).write_text(text + "\n", encoding="utf-8")
