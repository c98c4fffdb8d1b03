"""Files at any URL Spark takes (``s3a://``, ``hdfs://``, ``abfss://``, ``file://``), through
Hadoop's ``FileSystem`` in the driver's JVM (PySpark's gateway): list, look, put, rename,
delete. Spark's own readers and writers move the data; this module does what they do not (the
pipeline's listing of input folders and the commit of ``--out``).

A plain path (no ``scheme:/``) stays a path on the driver's file system, read and written by
Python as before; only URLs come here. Importing this module does not import PySpark.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lagassign.formats.errors import InputError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: a URL: a scheme (RFC 3986), a colon, a slash; ``file:/x`` as Hadoop writes it is one too
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:/")


def is_url(path: str | Path) -> bool:
    """Whether ``path`` is a URL for Hadoop's file systems (not a plain local path)."""
    return isinstance(path, str) and _URL.match(path) is not None


def hidden(name: str) -> bool:
    """Names a listing skips: hidden files and folders, Spark's ``_SUCCESS`` and ``_temporary``,
    checksum files."""
    return name.startswith((".", "_")) or name.endswith(".crc")


#: bytes per call through the gateway when putting a local file
PUT_CHUNK = 1 << 20


class StorageError(Exception):
    """A file system operation failed: ``place`` (the URL) and ``message``; ``str()`` is one
    line, ``place: message``."""

    def __init__(self, place: str, message: str) -> None:
        super().__init__(f"{place}: {message}")
        self.place = place
        self.message = message


def java_error(e: BaseException) -> str:
    """The Java exception behind a gateway error, in one line: its class's simple name and
    message (``FileNotFoundException: No such file or directory: s3a://b/k``)."""
    java = getattr(e, "java_exception", None)
    if java is None:
        return " ".join(str(e).split())[:300]
    message = " ".join(str(java.getMessage() or "").split())
    name = str(java.getClass().getSimpleName())
    text = f"{name}: {message}" if message else name
    if name in ("UnsupportedFileSystemException", "ClassNotFoundException") or (
        "S3AFileSystem" in message
    ):
        # Hadoop knows no file system for the scheme: a connector's jars are missing
        text += " (its connector is not on Spark's class path; s3a://: bash scripts/spark-s3.sh)"
    return text[:400]


class HadoopFiles:
    """Hadoop's file systems, as the session's Hadoop configuration sets them up
    (``spark.hadoop.*`` settings, ``--conf spark.hadoop.fs.s3a.endpoint=...``)."""

    def __init__(self, spark: SparkSession) -> None:
        self._jvm: Any = spark.sparkContext._jvm
        self._conf: Any = spark._jsparkSession.sessionState().newHadoopConf()

    def _path(self, url: str) -> tuple[Any, Any]:
        """(file system, Hadoop Path) of ``url``."""
        path = self._jvm.org.apache.hadoop.fs.Path(url)
        return path.getFileSystem(self._conf), path

    @contextmanager
    def _named(self, url: str, doing: str) -> Iterator[None]:
        """Gateway errors as :class:`StorageError` naming ``url``."""
        from py4j.protocol import Py4JError  # type: ignore[import-untyped]

        try:
            yield
        except Py4JError as e:
            raise StorageError(url, f"cannot {doing}: {java_error(e)}") from None

    def kind(self, url: str) -> str | None:
        """``"file"``, ``"folder"``, or None when nothing is at ``url``."""
        with self._named(url, "look"):
            fs, path = self._path(url)
            if not fs.exists(path):
                return None
            return "folder" if fs.getFileStatus(path).isDirectory() else "file"

    def qualified(self, url: str) -> str:
        """``url`` as Hadoop names it (``file:///tmp/x/`` -> ``file:/tmp/x``)."""
        with self._named(url, "look"):
            fs, path = self._path(url)
            return str(fs.makeQualified(path).toString())

    def names(self, url: str) -> list[str]:
        """The names of a folder's entries."""
        with self._named(url, "list"):
            fs, path = self._path(url)
            return sorted(str(s.getPath().getName()) for s in fs.listStatus(path))

    def files(self, url: str) -> list[str]:
        """Every file under the folder ``url``, as URLs, but those under hidden names
        (:func:`hidden`, at any depth below ``url``); sorted."""
        with self._named(url, "list"):
            fs, path = self._path(url)
            root = str(fs.makeQualified(path).toString()).rstrip("/") + "/"
            found = []
            listing = fs.listFiles(path, True)
            while listing.hasNext():
                file = str(listing.next().getPath().toString())
                inside = file.removeprefix(root).split("/")
                if not any(hidden(part) for part in inside):
                    found.append(file)
            return sorted(found)

    def read_text(self, url: str) -> str:
        """A small file's text (UTF-8)."""
        with self._named(url, "read"):
            fs, path = self._path(url)
            stream = fs.open(path)
            try:
                return str(self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
            finally:
                stream.close()

    def mkdirs(self, url: str) -> None:
        with self._named(url, "create"):
            fs, path = self._path(url)
            if not fs.mkdirs(path):
                raise StorageError(url, "cannot create")

    def put(self, local: Path, url: str) -> None:
        """Copies the local file ``local`` to ``url`` (replacing what is there), through the
        file system's output stream, as Spark's writers write. (Not copyFromLocalFile: S3A
        sends that with ``Expect: 100-continue``, which not every S3 server answers.)"""
        with self._named(url, "write"):
            fs, path = self._path(url)
            stream = fs.create(path, True)
            try:
                with local.open("rb") as file:
                    while chunk := file.read(PUT_CHUNK):
                        stream.write(bytearray(chunk))
            finally:
                stream.close()

    def rename(self, source: str, target: str) -> None:
        """Renames ``source`` to ``target``, which must not exist (Hadoop would move
        ``source`` into it)."""
        with self._named(target, f"rename {source} to it"):
            fs, path = self._path(source)
            if not fs.rename(path, self._jvm.org.apache.hadoop.fs.Path(target)):
                raise StorageError(target, f"cannot rename {source} to it")

    def delete(self, url: str) -> None:
        """Removes ``url``, a folder with everything in it; nothing there is no error."""
        with self._named(url, "delete"):
            fs, path = self._path(url)
            fs.delete(path, True)


def parent_and_name(url: str) -> tuple[str, str]:
    """``s3a://b/out/fleet/`` -> (``s3a://b/out``, ``fleet``); a bucket or root itself has no
    name (:class:`InputError` for ``--out``)."""
    trimmed = url.rstrip("/")
    scheme_end = trimmed.find(":/") + 1
    head, _, name = trimmed.rpartition("/")
    if not name or "/" not in trimmed[scheme_end:].lstrip("/"):
        raise InputError("--out", f"{url}: name a folder under the bucket or root, not it")
    return head, name
