"""Compiles the core's hot modules with mypyc (part of mypy, a development dependency) into C
extensions beside their sources, where Python imports them instead of the ``.py`` files.

Run by scripts/setup.sh; it compiles a module again only when its source changed since. Each
build writes ``<module>.compiled-from`` beside the extension: the SHA-256 of the source it was
built from. ``lagassign.strategies`` uses an extension only while that still matches (an edit
without a rebuild runs the edited source, not the stale extension), so the extensions are a
speed-up and nothing else: the interpreted module gives the same plans (tests/test_compiled.py).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: modules compiled, as paths under src/; lagassign/strategies/__init__.py lists the same
MODULES = ("lagassign/strategies/balanced.py",)


def extension(source: Path) -> Path:
    """Where the extension of ``source`` goes: beside it, named for this interpreter."""
    return source.with_name(source.stem + importlib.machinery.EXTENSION_SUFFIXES[0])


def compile_module(relative: str) -> None:
    source = ROOT / "src" / relative
    stamp = source.with_suffix(".compiled-from")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    if extension(source).exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return
    print(f"compile.py: compiling {relative} with mypyc (about a minute)", flush=True)
    with tempfile.TemporaryDirectory(prefix="lagassign-mypyc-") as build:
        # in a directory of its own: mypyc's build runs setuptools, which would otherwise read
        # (and reject) this project's pyproject.toml as its own configuration. It copies what
        # it builds to the module's package folder there.
        package = Path(build, relative).parent
        package.mkdir(parents=True)
        done = subprocess.run(
            [str(Path(sys.executable).with_name("mypyc")), "--config-file",
             str(ROOT / "pyproject.toml"), str(source)],
            cwd=build, capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            sys.exit(f"compile.py: mypyc failed on {relative}:\n{done.stdout}{done.stderr}")
        # the module's extension and mypyc's runtime library for it (<module>__mypyc)
        built = list(package.glob(f"{source.stem}*.so"))
        if len(built) != 2:
            sys.exit(f"compile.py: mypyc built {[p.name for p in built]} for {relative}")
        for library in built:
            shutil.copy2(library, source.parent / library.name)
    stamp.write_text(digest + "\n")


def main() -> None:
    for relative in MODULES:
        compile_module(relative)


if __name__ == "__main__":
    main()
