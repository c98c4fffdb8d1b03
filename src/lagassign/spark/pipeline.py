"""The fleet pipeline on PySpark: offsets -> lag -> plans -> metrics -> tables and a report.

::

    sources ──> snapshot rows ──repartition(group).mapInArrow──> results ──> partitions, plans,
    (files, dumps,  (one per group      (per group: model group,           members, groups
     live cluster)   × partition,        core lag, every strategy,          (Parquet), report.html
                     packed by group)    metrics; on the executors)

1. **Read** (:mod:`lagassign.spark.sources`): the inputs become one DataFrame of snapshot rows,
   read on the executors (a task per file, or per share of a live cluster's groups) and packed
   by group (:mod:`lagassign.spark.packing`: a value per group and batch, not a row per
   partition). Bad input stops the run once read and planned, with one line naming the file,
   the row and the column.
2. **Plan**: the packed rows are shuffled by group, and ``mapInArrow`` hands each task's groups
   to :func:`lagassign.spark.groups.plan_batches` (one Python call per task); or, when each
   reading task holds whole groups (:class:`lagassign.spark.sources.WholeGroups`: local Parquet
   files spread over the tasks whole), a task reads and plans in one pass, with no shuffle
   (:func:`lagassign.spark.groups.plan_read`). Either builds each model group and calls the
   core's
   :func:`lagassign.plan.plan_group`: lag by :mod:`lagassign.lag_rules`, every strategy from the
   registry, metrics by :mod:`lagassign.metrics`. Spark only moves rows; every rule is the
   core's. With a local ``--out`` the task writes the tables' files itself
   (:class:`lagassign.spark.groups.TableFiles`) and gives back counts; at a URL it gives back
   the tables' rows as Arrow record batches, for Spark's writers.
3. **Write** (:mod:`lagassign.spark.outputs`): the Parquet tables, ``report.html`` with its
   PNGs (:mod:`lagassign.report.fleet`) and ``summary.json``, into a staging folder that takes
   ``--out``'s place only when everything is written.

Run it as ``lagassign pipeline ...``, ``python -m lagassign.spark.pipeline ...`` or through
``spark-submit`` with this file (same flags; see docs/pipeline.md).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark import SparkContext, StorageLevel
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lagassign import __version__
from lagassign.formats.errors import InputError
from lagassign.kafka.offsets import ClientConfigError, OffsetsError
from lagassign.model import ModelError
from lagassign.plan import CURRENT
from lagassign.spark import class_archive, sources
from lagassign.spark.groups import (
    ERROR_KINDS,
    PLANNED_SCHEMA,
    TableFiles,
    kind_schema,
    plan_batches,
    plan_read,
    table_rows,
    write_empty_tables,
)
from lagassign.spark.options import PipelineOptions, add_arguments, from_args
from lagassign.spark.outputs import Output, check_out, staging, write_summary
from lagassign.spark.schema import TABLES, ddl
from lagassign.spark.storage import StorageError, is_url

log = logging.getLogger("lagassign.pipeline")

BatchFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

EXIT_BAD_INPUT = 2
EXIT_RUNTIME = 1
DEFAULT_MASTER = "local[*]"
DEFAULT_DRIVER_MEMORY = "2g"


class PipelineError(Exception):
    """Spark could not run the job (not the input's fault). ``str()`` is one line."""


@dataclass
class PipelineResult:
    #: a local path, or the URL --out gave
    out: Path | str
    groups: int
    partitions: int
    total_lag: int
    strategies: list[str]
    tables: dict[str, int]
    report: Path | str | None
    seconds: dict[str, float] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------
# Spark


def _under_spark_submit() -> bool:
    """True when spark-submit started this process (it then owns the master and the JVM)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def session_settings(options: PipelineOptions, batch: bool = True) -> dict[str, str]:
    """The Spark settings the pipeline starts a session with; ``--conf`` wins over them.
    ``batch``: for one run of the pipeline (not the monitor's long-lived session): no web UI,
    and a local JVM started for a short life (:data:`LOCAL_JVM_OPTIONS`) that maps Spark's
    classes from the archive an earlier run left (:mod:`lagassign.spark.class_archive`)."""
    conf = dict(options.conf)
    settings: dict[str, str] = {
        "spark.app.name": "lagassign pipeline",
        "spark.log.level": "FATAL",
        "spark.ui.showConsoleProgress": str(not options.quiet and sys.stderr.isatty()).lower(),
        # planning is CPU-bound per group: keep every planning task, however few bytes it reads
        "spark.sql.adaptive.coalescePartitions.enabled": "false",
    }
    if batch:
        # a run nobody browses: no web UI to start (Jetty) and feed; --conf brings it back
        settings["spark.ui.enabled"] = "false"
    if options.master is not None:
        settings["spark.master"] = options.master
    if not _under_spark_submit():
        settings.setdefault("spark.master", DEFAULT_MASTER)
        settings["spark.driver.memory"] = DEFAULT_DRIVER_MEMORY
        # Spark's start-up chatter (log4j's default profile, host name warnings) off; errors
        # reach the user as one line (see run); --conf spark.log.level=WARN brings logs back
        settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={_log4j2()}" + (
            f" {LOCAL_JVM_OPTIONS}" if batch else ""
        )
        s3 = _s3_class_path(options, settings["spark.master"])
        if s3:
            settings["spark.driver.extraClassPath"] = s3
    settings.update(dict(options.conf))
    if batch and not _under_spark_submit() and "spark.driver.extraJavaOptions" not in conf:
        archive = class_archive.archive_for(settings, settings["spark.driver.extraJavaOptions"])
        if archive is not None:
            settings["spark.driver.extraJavaOptions"] += " " + class_archive.jvm_options(archive)
    return settings


def _s3_class_path(options: PipelineOptions, master: str) -> str | None:
    """For a local Spark reading or writing ``s3a://`` URLs: the S3A connector's jars that
    scripts/spark-s3.sh fetched, for the driver's class path (the executors of a local master
    share its JVM; on a cluster, Spark's distribution or ``--conf spark.jars`` brings them).
    None when no URL is an s3a:// one, or the jars were not fetched (Hadoop then says that it
    knows no file system for the scheme, and :func:`lagassign.spark.storage.java_error` how
    to fetch it)."""
    from lagassign.spark.jars import JarsMissing
    from lagassign.spark.s3_jars import s3_jars

    values = [str(options.out), *(str(v) for v in options.source_options.values())]
    values += [str(p) for v in options.source_options.values() if isinstance(v, tuple) for p in v]
    if not master.startswith("local") or not any(v.startswith("s3a://") for v in values):
        return None
    try:
        return os.pathsep.join(str(j) for j in s3_jars())
    except JarsMissing:
        return None


#: the JVM flags of a driver PySpark starts here (a local master's JVM is its executor too).
#: That JVM moves rows between Python workers, who do the work, and lives for one run: its
#: start-up and first jobs were the cost, mostly the C2 compiler's and G1's threads taking
#: both cores while classes load. C1 alone compiles enough for a short life; the serial
#: collector needs no threads of its own.
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

_LOG4J2 = """\
rootLogger.level = fatal
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def _log4j2() -> Path:
    """A log4j2 configuration for the driver that logs fatal errors only."""
    path = Path(tempfile.gettempdir()) / f"lagassign-log4j2-{os.getuid()}.properties"
    if not path.is_file() or path.read_text(encoding="utf-8") != _LOG4J2:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_LOG4J2, encoding="utf-8")
        tmp.replace(path)
    return path


def start_session(
    options: PipelineOptions, own_process_group: bool = False, batch: bool = True
) -> SparkSession:
    """A Spark session with :func:`session_settings` (``batch``: see there).
    ``own_process_group``: the JVM that PySpark starts (none under spark-submit, or while one
    runs) gets a process group of its own, so a signal to this process's group (a
    supervisor's SIGTERM, ``kill -- -PGID``) reaches this process only, which decides when
    Spark stops; the JVM still ends when this process does (PySpark's gateway exits when its
    standard input closes)."""
    settings = session_settings(options, batch)
    if settings.get("spark.master", "").startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # local mode: the Python workers run in this interpreter's environment (PySpark reads
        # the worker's Python from this variable only, not from spark.pyspark.python)
        os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    launching = SparkContext._gateway is None
    try:
        with _jvm_stderr_filtered(), _sigint_handler_kept():
            if own_process_group:
                _launch_own_group(settings)
            session = builder.getOrCreate()
            if launching:
                class_archive.started(
                    settings.get("spark.driver.extraJavaOptions", ""),
                    getattr(SparkContext._gateway, "proc", None),
                )
            return session
    except Exception as e:  # no Java, a bad master URL, a port in use
        raise PipelineError(f"cannot start Spark: {_one_line(e)}") from None


@contextmanager
def _sigint_handler_kept() -> Iterator[None]:
    """The process's SIGINT handler as it was before the block. A new SparkContext replaces it
    with PySpark's own (cancel every job, raise ``KeyboardInterrupt``), dropping the caller's:
    the pipeline's records the signal (:func:`_signals_unwind`), which a ``KeyboardInterrupt``
    raised inside a finalizer is not (PySpark's handler ran in py4j's finalizer of a Java
    object, Python dropped the exception there, and the run went on to write --out and exit 0:
    seen once in a fresh-clone CI run of tests/spark/test_faults.py)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        if handler is not None:  # None: set outside Python, nothing to put back
            signal.signal(signal.SIGINT, handler)


def _launch_own_group(settings: dict[str, str]) -> None:
    """Starts the JVM as the session's would be (the same settings), in a process group of its
    own, and its SparkContext, which ``getOrCreate`` then takes. Nothing when a JVM runs
    already or spark-submit started this process."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if _under_spark_submit() or SparkContext._gateway is not None:
        return
    conf = SparkConf().setAll(list(settings.items()))
    gateway = launch_gateway(conf, popen_kwargs={"process_group": 0})  # type: ignore[no-untyped-call]
    SparkContext(conf=conf, gateway=gateway)


#: lines the JVM writes on start-up to stderr itself, whatever log4j says: Java's warning for
#: the incubator module Spark adds to every JVM it starts, and Spark's shell notes on log
#: levels (PySpark's driver counts as a shell)
JVM_NOISE = (
    "WARNING: Using incubator modules:",
    "Setting default log level to ",
    "To adjust logging level use sc.setLogLevel(",
    "Setting Spark log level to ",
)


@contextmanager
def _jvm_stderr_filtered() -> Iterator[None]:
    """Starts the JVM (in the block) with its stderr through a filter that drops
    :data:`JVM_NOISE` and passes every other line on, for as long as the process lives.

    The JVM inherits file descriptor 2 when PySpark starts it; for that moment, fd 2 is a pipe
    read by a thread of this process. Under spark-submit, or with a JVM already running, there
    is nothing to start and nothing is changed.
    """
    from pyspark import SparkContext

    if _under_spark_submit() or SparkContext._gateway is not None:
        yield
        return
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    stderr = os.dup(2)
    threading.Thread(
        target=_relay, args=(read_end, stderr), daemon=True, name="lagassign-jvm-stderr"
    ).start()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(stderr, 2)


def _relay(read_end: int, stderr: int) -> None:
    with os.fdopen(read_end, "rb") as lines:
        for line in lines:
            if not line.decode("utf-8", "replace").startswith(JVM_NOISE):
                with contextlib.suppress(OSError):
                    os.write(stderr, line)


def _one_line(e: BaseException) -> str:
    """The gist of a Spark or Python worker error: its last meaningful line."""
    text = str(e).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    for line in reversed(lines):
        if not line.startswith(("at ", "File ", "^", "...", "JVM stacktrace")):
            return line[:400]
    return lines[0][:400]


@contextmanager
def _sql_settings(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


# ------------------------------------------------------------------------------------------------
# the job


def read_inputs(spark: SparkSession, options: PipelineOptions) -> DataFrame | sources.WholeGroups:
    return sources.chosen(options).read(spark, options)


def _planner(
    strategies: Sequence[str], tables: str | None, read: BatchFunction | None = None
) -> BatchFunction:
    chosen = list(strategies)

    def plan(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        files = TableFiles(tables, context.partitionId() if context else 0) if tables else None
        if read is not None:
            return plan_read(read(batches), chosen, files)
        return plan_batches(batches, chosen, files)

    return plan


def plan_groups(
    rows: DataFrame | sources.WholeGroups,
    strategies: Sequence[str],
    tasks: int,
    tables: str | None = None,
) -> DataFrame:
    """Results (:data:`groups.PLANNED_SCHEMA`) of every group of ``rows``: packed by group
    (:mod:`lagassign.spark.packing`), shuffled by group into ``tasks`` partitions, each
    planned by the core in one Python call (``mapInArrow``: a task's groups in Arrow batches,
    no Spark overhead per group); or, when each of the source's tasks holds whole groups
    (:class:`sources.WholeGroups`), read and planned in one pass per task, no shuffle. A
    source's error rows become ``input`` results. ``tables``: a local folder where the
    planning tasks write the output tables themselves (:class:`groups.TableFiles`), else the
    results carry the tables' rows."""
    if isinstance(rows, sources.WholeGroups):
        frame = rows.frame(SparkSession.active())
        return frame.mapInArrow(_planner(strategies, tables, rows.read), ddl(PLANNED_SCHEMA))
    planner = _planner(strategies, tables)
    return rows.repartition(tasks, "group").mapInArrow(planner, ddl(PLANNED_SCHEMA))


def plan_tasks(
    sc: SparkContext, rows: sources.WholeGroups, strategies: Sequence[str], tables: str
) -> list[dict[str, Any]]:
    """The results (:data:`groups.PLANNED_SCHEMA`, as dictionaries) of every group of ``rows``,
    each task reading and planning its share and writing the tables into ``tables``: the few
    rows of counts each task gives back, collected. An RDD job, not a DataFrame's: Spark's SQL
    engine (its session state, query planning, code generation, Arrow in the JVM) would cost
    the JVM seconds of CPU at start and move nothing that the driver needs."""
    planner = _planner(strategies, tables, rows.read)

    def plan(inputs: Iterable[list[str]]) -> Iterator[dict[str, Any]]:
        for batch in planner(rows.batch(task) for task in inputs):
            yield from batch.to_pylist()

    n = len(rows.tasks)
    planned: list[dict[str, Any]] = sc.parallelize(rows.tasks, n).mapPartitions(plan).collect()
    return planned


#: the order in which errors are reported: a source's first (bad input as read), then a
#: group's bad input, then a strategy's failure
_ERROR_RANK = {"input": 0, "error": 1, "failure": 2}


def first_result_error(results: DataFrame, counts: dict[str, int]) -> None:
    """Raises the first error of ``results`` (whose count of rows per kind is ``counts``):
    sources' errors in file and row order, then groups' bad input, then failures."""
    if not any(counts.get(kind) for kind in ERROR_KINDS):
        return
    rank = F.when(F.col("kind") == "input", 0).when(F.col("kind") == "error", 1).otherwise(2)
    bad = (
        results.filter(F.col("kind").isin(*ERROR_KINDS))
        .select("kind", "source", "error")
        .orderBy(rank, "source", "row")
        .limit(1)
        .collect()
    )
    _raise_error(*bad[0])


def first_planned_error(planned: Sequence[Any]) -> None:
    """As :func:`first_result_error`, of result rows collected (Spark's order: nulls first)."""
    bad = [r for r in planned if r["kind"] in ERROR_KINDS]
    if not bad:
        return
    first = min(
        bad,
        key=lambda r: (
            _ERROR_RANK[r["kind"]],
            r["source"] is not None,
            r["source"] or "",
            r["row"] is not None,
            r["row"] or 0,
        ),
    )
    _raise_error(first["kind"], first["source"], first["error"])


def _raise_error(kind: str, source: str, message: str) -> None:
    if kind == "input":
        raise sources.source_error(source, message)
    if kind == "failure":
        raise PipelineError(f"{source}: {message}")
    raise InputError(source, message)


def _table_rows(kind: str) -> BatchFunction:
    def rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return table_rows(batches, kind)

    return rows


def table(results: DataFrame, name: str) -> DataFrame:
    """The rows of table ``name`` that ``results`` carry."""
    kind, _ = TABLES[name]
    carried = results.filter((F.col("kind") == kind) & F.col("arrow").isNotNull())
    return carried.select("kind", "arrow").mapInArrow(_table_rows(kind), ddl(kind_schema(kind)))


#: rows of a table per Parquet file (and writing task) at most, about 10-20 MB
ROWS_PER_FILE = 1_000_000


def _write_tables(
    spark: SparkSession,
    results: DataFrame,
    folder: Output,
    rows: dict[str, int],
    tasks: int,
) -> None:
    """Writes every table that ``results`` carry (of ``rows[name]`` rows) where ``folder``
    keeps the tables (at a URL: Spark's writers reach it, Python's do not), the tables' Spark
    jobs side by side (each table is a scan of the persisted results: together they keep the
    cores busy while the driver sets up and commits each job). A table is written by as many
    tasks, of at most ``tasks``, as it has millions of rows."""
    sc = spark.sparkContext

    def write(name: str) -> None:
        sc.setJobDescription(f"writing {name}")
        files = min(tasks, max(1, -(-rows[name] // ROWS_PER_FILE)))
        table(results, name).coalesce(files).write.parquet(folder.table(name))

    with ThreadPoolExecutor(len(TABLES), thread_name_prefix="lagassign-write") as pool:
        futures = [pool.submit(write, name) for name in TABLES]
        try:
            for future in futures:
                future.result()
        except BaseException:  # a failed write, Ctrl-C: the other writes stop too
            for future in futures:
                future.cancel()
            with contextlib.suppress(Exception):
                sc.cancelAllJobs()
            raise


def _finish_local_tables(folder: str) -> None:
    """The tables the planning tasks wrote into ``folder``: an empty file for a table no task
    had rows of, and Spark's ``_SUCCESS`` mark in each (readers that look for it find it)."""
    write_empty_tables(folder)
    for name in TABLES:
        Path(folder, name, "_SUCCESS").touch()


#: seconds between progress lines of a long step, when Spark shows no progress bar
PROGRESS_EVERY_S = 15.0


@dataclass
class _Clock:
    """Times the steps and logs them; during a step, logs Spark's task counts now and then
    (for logs and pipes, where Spark's console progress bar is off)."""

    spark: SparkSession | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    #: the step under way and when it began
    current: tuple[str, float] | None = None

    def total(self) -> float:
        """Seconds since the run began, Spark's start included."""
        return time.monotonic() - self.started

    def so_far(self) -> dict[str, float]:
        """Each step's seconds, the one under way until now."""
        steps = dict(self.seconds)
        if self.current is not None:
            steps[self.current[0]] = time.monotonic() - self.current[1]
        return steps

    @contextmanager
    def step(self, name: str, message: str) -> Iterator[None]:
        log.info("%s ...", message)
        start = time.monotonic()
        self.current = (name, start)
        done = threading.Event()
        watcher = None
        if self.spark is not None and log.isEnabledFor(logging.INFO):
            watcher = threading.Thread(
                target=self._watch, args=(message, done), daemon=True, name="lagassign-progress"
            )
            with _sigterm_deferred():
                watcher.start()
        try:
            yield
        finally:
            with _sigterm_deferred():
                done.set()
                self.current = None
                if watcher is not None:
                    watcher.join(timeout=1)
        _unwind_if_signalled()
        self.seconds[name] = round(time.monotonic() - start, 3)
        log.info("%s: done in %.1f s", message, self.seconds[name])

    def _watch(self, message: str, done: threading.Event) -> None:
        assert self.spark is not None
        if self.spark.conf.get("spark.ui.showConsoleProgress", "false") == "true":
            return
        tracker = self.spark.sparkContext.statusTracker()
        progress = Progress()
        while not done.wait(PROGRESS_EVERY_S):
            try:
                stages = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
            except Exception:  # the session is stopping
                return
            counts = [(s.stageId, s.numCompletedTasks, s.numTasks) for s in stages if s is not None]
            for line in progress.lines(counts):
                log.info("%s: %s", message, line)


class Progress:
    """Progress lines for logs and pipes: one line per stage and count, a stage's count only
    growing. (Summing the active stages' counts went backwards whenever a stage ended and the
    next began, and repeated itself while a task ran.)"""

    def __init__(self) -> None:
        self.said: dict[int, int] = {}

    def lines(self, stages: Iterable[tuple[int, int, int]]) -> list[str]:
        """The lines to log for these (stage id, tasks done, tasks) counts: those of stages
        whose count has grown since their last line."""
        out = []
        for stage, done, total in sorted(stages):
            if done <= self.said.get(stage, -1):
                continue
            self.said[stage] = done
            out.append(f"stage {stage}: {done} of {total} tasks done")
        return out


def run(options: PipelineOptions, spark: SparkSession | None = None) -> PipelineResult:
    """Runs the pipeline; on a given session, or on one it starts (and stops) itself.

    Raises :class:`InputError` for bad input (naming the file, row and column) and for an
    ``--out`` that cannot be written, :class:`OffsetsError` when a live cluster cannot be read
    and :class:`PipelineError` when Spark fails. Nothing is written to ``options.out`` unless
    the whole run succeeds; a run stopped by an exception of any kind (KeyboardInterrupt
    included) removes its staging folder.
    """
    strategies = options.strategy_names()
    url = is_url(options.out)
    if not url:
        check_out(Path(options.out))  # before starting Spark: a wrong --out is a quick error
    own = spark is None
    clock = _Clock()
    cached: list[DataFrame] = []
    try:
        if url and spark is None:  # Hadoop's file systems are in Spark's JVM
            with clock.step("start", "starting Spark"):
                spark = start_session(options)
        # a local staging folder before Spark: an --out that cannot be written is a quick error
        with staging(options.out, spark) as folder:
            if spark is None:
                with clock.step("start", "starting Spark"):
                    spark = start_session(options)
            done = _job(spark, options, strategies, folder, clock, cached)
            _unwind_if_signalled()  # before the staging folder becomes --out
        out: Path | str
        if url:
            out = str(options.out).rstrip("/")
            report: Path | str | None = f"{out}/{done.report.name}" if done.report else None
        else:
            out = Path(options.out).expanduser().absolute()
            report = out / done.report.name if done.report else None
        result = PipelineResult(
            out=out,
            groups=done.groups,
            partitions=done.partitions,
            total_lag=done.total_lag,
            strategies=strategies,
            tables=done.tables,
            report=report,
            seconds=clock.seconds,
        )
        log.info("%d groups, %d partitions: written to %s", done.groups, done.partitions, out)
        return result
    except (InputError, OffsetsError, PipelineError, ModelError):
        raise
    except StorageError as e:  # --out's commit, at a URL
        raise PipelineError(str(e)) from None
    except PySparkException as e:
        raise PipelineError(f"Spark failed: {_one_line(e)}") from None
    except OSError as e:  # the disk is full, a folder was removed under the run
        where = f" {e.filename}" if e.filename else ""
        raise PipelineError(f"cannot write{where}: {e.strerror or e}") from None
    except Exception as e:
        if type(e).__module__.startswith(("py4j", "pyspark")):
            raise PipelineError(f"Spark failed: {_one_line(e)}") from None
        raise
    finally:
        for frame in cached:
            with contextlib.suppress(Exception):  # the session may be gone already
                frame.unpersist()
        if own and spark is not None:
            # the JVM may be gone already: a signal to the whole process group (Ctrl-C in a
            # terminal, systemd, docker stop, timeout) reaches it too
            with contextlib.suppress(Exception), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                spark.stop()


@dataclass
class _Done:
    groups: int
    partitions: int
    total_lag: int
    tables: dict[str, int]
    report: Path | None


def _job(
    spark: SparkSession,
    options: PipelineOptions,
    strategies: list[str],
    folder: Output,
    clock: _Clock,
    cached: list[DataFrame],
) -> _Done:
    """Read, plan, write into ``folder``: everything but the staging folder and the session."""
    clock.spark = spark
    sc = spark.sparkContext
    log.info("Spark %s, master %s, %d cores", spark.version, sc.master, sc.defaultParallelism)
    partitions = options.partitions or 4 * sc.defaultParallelism
    # one shuffle (rows by group), as many partitions as planning tasks; adaptive execution
    # would only split each shuffle's stages into jobs of their own (it must not coalesce the
    # planning tasks, and there is no join to adapt)
    settings = {"spark.sql.shuffle.partitions": str(partitions)}
    if "spark.sql.adaptive.enabled" not in dict(options.conf):
        settings["spark.sql.adaptive.enabled"] = "false"
    with _sql_settings(spark, settings):
        with clock.step("read", "reading the input"):
            # the inputs listed (files, a cluster's groups); the executors read them while they
            # plan: the rows go from the sources to the planning tasks without being kept, and
            # a source's bad row stops the run once that one pass is done
            rows = read_inputs(spark, options)
        message = f"planning every group with {len(strategies)} strategies"
        with clock.step("plan", message):
            sc.setJobDescription(message)
            # a local --out: the planning tasks write the tables themselves (pyarrow), and
            # what comes back is a few rows per task; at a URL, Spark's writers write what
            # the results carry
            local_tables = None if is_url(folder.tables) else folder.tables
            tally: dict[str, Any]
            results = None
            if local_tables is not None and isinstance(rows, sources.WholeGroups):
                planned: list[Any] = plan_tasks(sc, rows, strategies, local_tables)
            else:
                results = plan_groups(rows, strategies, partitions, local_tables)
            if local_tables is not None:
                # the tables are written: what comes back is a few rows of counts per task,
                # added up here (a Spark aggregation would cost a shuffle and its job)
                if results is not None:
                    planned = results.collect()
                tally = _tally(planned)
                counts = {kind: int(r["count"]) for kind, r in tally.items()}
                first_planned_error(planned)
            else:
                assert results is not None
                results = results.persist(StorageLevel.MEMORY_AND_DISK)
                cached.append(results)
                # one job: the rows of each kind, and (of the groups table) the groups and
                # their lag as the first strategy's rows count them
                tally = {
                    r["kind"]: r
                    for r in results.groupBy("kind")
                    .agg(
                        F.sum("rows").alias("count"),
                        F.sum("groups").alias("groups"),
                        F.sum("lag").alias("lag"),
                    )
                    .collect()
                }
                counts = {kind: int(r["count"]) for kind, r in tally.items()}
                first_result_error(results, counts)
            if not counts:
                raise InputError(
                    "input",
                    "no rows" + (" of a group --groups matches" if options.groups else ""),
                )
        written = {name: counts.get(kind, 0) for name, (kind, _) in TABLES.items()}
        with clock.step("write", "writing the tables"):
            if local_tables is not None:
                _finish_local_tables(local_tables)
            else:
                assert results is not None
                _write_tables(spark, results, folder, written, partitions)
        metrics = tally.get(TABLES["groups"][0])
        groups = int(metrics["groups"]) if metrics else 0
        total_lag = int(metrics["lag"] or 0) if metrics else 0
        total_partitions = counts.get("partition", 0)
        report_path = None
        if options.report:
            with clock.step("report", "writing the report"):
                report_path = _report(folder, options, strategies, spark, clock)
        write_summary(
            folder.local,
            {
                "version": __version__,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "input": sources.chosen(options).described(options),
                "groups": groups,
                "partitions": total_partitions,
                "strategies": strategies,
                "tables": written,
                "spark": {
                    "version": spark.version,
                    "master": sc.master,
                    "classes": class_archive.described(
                        sc.getConf().get("spark.driver.extraJavaOptions", "")
                    ),
                },
                "seconds": {**clock.seconds, "total": round(clock.total(), 3)},
            },
        )
    return _Done(groups, total_partitions, total_lag, written, report_path)


def _tally(planned: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Result rows collected, added up per kind as the Spark aggregation does: ``count`` of
    rows, ``groups`` and ``lag`` (null where no row has any)."""
    tally: dict[str, dict[str, Any]] = {}
    for r in planned:
        found = tally.setdefault(r["kind"], {"count": 0, "groups": None, "lag": None})
        found["count"] += r["rows"] or 0
        for key in ("groups", "lag"):
            if r[key] is not None:
                found[key] = (found[key] or 0) + r[key]
    return tally


def _read_back(
    spark: SparkSession,
    folder: Output,
    name: str,
    where: dict[str, list[str]] | None = None,
) -> list[dict[str, Any]]:
    """The rows of table ``name`` as written into ``folder`` (those whose columns hold one of
    ``where``'s values): by pyarrow from a local folder, by Spark from a URL."""
    if not is_url(folder.tables):
        filters = [(column, "in", values) for column, values in (where or {}).items()]
        rows: list[dict[str, Any]] = pq.read_table(
            folder.table(name), filters=filters or None
        ).to_pylist()
        return rows
    frame = spark.read.parquet(folder.table(name))
    for column, values in (where or {}).items():
        frame = frame.filter(F.col(column).isin(values))
    return [row.asDict() for row in frame.collect()]


def _partitions_per_group(spark: SparkSession, folder: Output) -> dict[str, int]:
    """Rows of the ``partitions`` table per group, as written into ``folder``."""
    if not is_url(folder.tables):
        groups = pq.read_table(folder.table("partitions"), columns=["group"]).column("group")
        return {count["values"]: count["counts"] for count in pc.value_counts(groups).to_pylist()}
    frame = spark.read.parquet(folder.table("partitions")).groupBy("group").count()
    return {row["group"]: int(row["count"]) for row in frame.collect()}


def _report(
    folder: Output,
    options: PipelineOptions,
    strategies: list[str],
    spark: SparkSession,
    clock: _Clock,
) -> Path:
    from lagassign.report.fleet import (
        Fact,
        GroupResult,
        MemberResult,
        charted_groups,
        write_report,
    )

    groups = [GroupResult(**row) for row in _read_back(spark, folder, "groups")]
    settled = [GroupResult(**row) for row in _read_back(spark, folder, "settled")]
    partitions = _partitions_per_group(spark, folder)
    shown = charted_groups(groups, strategies, options.charts)
    member_rows = (
        _read_back(spark, folder, "members", {"group": shown, "strategy": [CURRENT, *strategies]})
        if shown
        else []
    )
    members = [MemberResult(**row) for row in member_rows]
    facts: dict[str, Fact] = {
        "input": ", ".join(
            f"{k}: {v}" for k, v in sources.chosen(options).described(options).items() if v
        ),
        "Spark": f"{spark.version} on {spark.sparkContext.master}",
        "strategies": ", ".join(strategies),
        "run time": lambda: _run_time(clock),
    }
    return write_report(
        folder.local,
        groups,
        members,
        strategies=strategies,
        facts=facts,
        partitions=partitions,
        settled=settled,
    )


#: the steps of a run as the report names them
_STEPS = {
    "start": "starting Spark",
    "read": "reading",
    "plan": "planning",
    "write": "writing the tables",
    "report": "the report",
}


def _run_time(clock: _Clock) -> str:
    """The run's time until now, Spark's start included, and each step's."""
    steps = ", ".join(f"{_STEPS.get(k, k)} {v:.0f} s" for k, v in clock.so_far().items())
    return f"{clock.total():.0f} s ({steps})"


# ------------------------------------------------------------------------------------------------
# command line (lagassign pipeline, python -m lagassign.spark.pipeline, spark-submit)


def _progress_to_stderr(quiet: bool) -> None:
    logger = logging.getLogger("lagassign")
    if not any(getattr(h, "lagassign_pipeline", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("lagassign: %(message)s"))
        handler.lagassign_pipeline = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        for h in logger.handlers:
            h.setLevel(logging.WARNING if quiet else logging.INFO)
    logger.setLevel(logging.WARNING if quiet else logging.INFO)


#: exit statuses of a run ended by SIGINT and SIGTERM (128 + the signal, as shells report)
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread so that the run unwinds as for Ctrl-C
    (staging folder removed, Spark stopped) instead of dying where it stands."""


class _Deferral:
    #: how many _sigterm_deferred sections the main thread is in, and whether a SIGTERM came
    #: during one
    held = 0
    pending = False
    #: the signal (SIGINT, SIGTERM) that came during the run, if one did
    signalled: int | None = None
    #: whether the run is in :func:`_signals_unwind` (only there is a signal recorded)
    watching = False


@contextmanager
def _sigterm_deferred() -> Iterator[None]:
    """Holds a SIGTERM back until the section ends. Threading's own locks do not survive an
    exception raised in their middle: ``Terminated`` raised while ``Thread.start`` waited on
    its condition left the lock released twice, and the run ended on ``RuntimeError: release
    unlocked lock`` with a traceback and status 1 instead of 143 (seen once in a fresh-clone
    CI run, the signal sent as "reading the input ..." was logged)."""
    _Deferral.held += 1
    try:
        yield
    finally:
        _Deferral.held -= 1
    if _Deferral.held == 0 and _Deferral.pending:
        _Deferral.pending = False
        raise Terminated


@contextmanager
def _signals_unwind() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` (held back in :func:`_sigterm_deferred` sections),
    SIGINT ``KeyboardInterrupt`` as Python's own handler does; either is recorded
    (:attr:`_Deferral.signalled`) for :func:`run_from_args`, and raised again between the
    run's steps if Python dropped it (:func:`_unwind_if_signalled`)."""

    def terminated(signum: int, frame: object) -> None:
        _Deferral.signalled = signum
        _py4j_quiet()
        if _Deferral.held:
            _Deferral.pending = True
            return
        raise Terminated

    def interrupted(signum: int, frame: Any) -> None:
        _Deferral.signalled = signum
        _py4j_quiet()
        signal.default_int_handler(signum, frame)

    def dropped(unraisable: Any) -> None:
        # a signal's exception raised in a finalizer: the run raises it again between its
        # steps (_unwind_if_signalled); Python's "Exception ignored in ..." lines would be the
        # only trace of it on stderr
        if isinstance(unraisable.exc_value, KeyboardInterrupt | Terminated):
            return
        before_hook(unraisable)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _Deferral.signalled = None
    before = signal.signal(signal.SIGTERM, terminated)
    before_int = signal.signal(signal.SIGINT, interrupted)
    before_hook, sys.unraisablehook = sys.unraisablehook, dropped
    _Deferral.watching = True
    try:
        yield
    finally:
        _Deferral.watching = False
        signal.signal(signal.SIGTERM, before)
        signal.signal(signal.SIGINT, before_int)
        sys.unraisablehook = before_hook


def _unwind_if_signalled() -> None:
    """Raises what a signal that came during the run raises, if the run is still going on
    regardless: raised while Python ran a finalizer (py4j's of a Java object, when it collects
    one), the exception is dropped there, and the run would go on to write --out and exit 0.
    Called between the run's steps and before --out is written, so such a run ends there."""
    if not _Deferral.watching:
        return
    if _Deferral.signalled == signal.SIGINT:
        raise KeyboardInterrupt
    if _Deferral.signalled == signal.SIGTERM and not _Deferral.held:
        raise Terminated


def _py4j_quiet() -> None:
    """Once a signal came, the JVM may be gone (a signal to the process group reaches it too),
    and py4j logs each call that fails on its closed connection with ``logging.exception``,
    through the root logger, which Python then sets up to print on stderr: a traceback per call
    the run's unwinding makes (restoring its settings, stopping Spark). A handler that drops
    them keeps stderr to the one line that says how the run ended."""
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())


#: what a run ended by a signal exits with, and says
_SIGNAL_ENDS = {
    signal.SIGINT: (EXIT_INTERRUPTED, "lagassign: interrupted (SIGINT)"),
    signal.SIGTERM: (EXIT_TERMINATED, "lagassign: terminated (SIGTERM)"),
}


def _ended_by(e: BaseException) -> int | None:
    """The signal that ended the run, whatever exception the run unwound with: py4j's and
    PySpark's calls do not survive one raised in their middle (``Terminated`` inside a py4j
    call ended the run on PySpark's ``TypeError: 'JavaObject' object is not callable``, and
    inside py4j's finalizer of a Java object it was ignored, the run going on to fail on the
    JVM's closed connection: status 1, seen once in four runs of tests/spark/test_faults.py
    once Spark started faster)."""
    if isinstance(e, Terminated):
        return signal.SIGTERM
    if isinstance(e, KeyboardInterrupt):
        return signal.SIGINT
    return _Deferral.signalled


def run_from_args(args: argparse.Namespace) -> PipelineResult:
    """``lagassign pipeline``: options from the flags, progress on stderr, then :func:`run`.
    Spark failures print one line and exit with status 1; SIGINT and SIGTERM end the run
    without a traceback, its staging folder removed, with status 130 and 143."""
    options = from_args(args)
    _progress_to_stderr(options.quiet)
    try:
        with _signals_unwind():
            result = run(options)
    except BaseException as e:
        signum = _ended_by(e)
        if signum is not None:
            class_archive.abandon()
            status, said = _SIGNAL_ENDS[signal.Signals(signum)]
            print(said, file=sys.stderr)
            raise SystemExit(status) from None
        if isinstance(e, PipelineError):
            print(f"lagassign: error: {e}", file=sys.stderr)
            raise SystemExit(EXIT_RUNTIME) from None
        raise
    print(
        f"{result.groups} groups, {result.partitions} partitions, "
        f"{len(result.strategies)} strategies -> {result.out}"
        + (f" (report: {result.report})" if result.report else "")
    )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="lagassign-pipeline",
        description="Lag and assignment plans for every consumer group, on PySpark.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        run_from_args(args)
    except (InputError, ModelError, ClientConfigError) as e:
        print(f"lagassign: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OffsetsError as e:
        print(f"lagassign: error: {e}", file=sys.stderr)
        return EXIT_RUNTIME
    return 0


if __name__ == "__main__":
    sys.exit(main())
