"""Compiles the core's hot modules with mypyc (part of mypy, a development dependency) into C
extensions beside their sources, where Python imports them instead of the ``.py`` files.

Run by scripts/setup.sh; it compiles a module (``lagassign.extensions.MODULES``) again only
when its source changed since. Each build writes ``<module>.compiled-from`` beside the
extension: the SHA-256 of the source it was built from. ``lagassign.strategies`` uses an
extension only while that still matches (``lagassign.extensions.current``: an edit without a
rebuild runs the edited source, not the stale extension), so the extensions are a speed-up and
nothing else: the interpreted module gives the same plans (tests/test_compiled.py).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# lagassign.extensions imports nothing of lagassign's, so no extension this overwrites is loaded
sys.path.insert(0, str(ROOT / "src"))
from lagassign import extensions  # noqa: E402


def compile_module(module: str) -> None:
    source = extensions.source(module)
    if extensions.current(source):
        return
    relative = source.relative_to(ROOT / "src").as_posix()
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
    extensions.stamp(source).write_text(extensions.digest(source) + "\n")


def main() -> None:
    for module in extensions.MODULES:
        compile_module(module)


if __name__ == "__main__":
    main()
