"""The pipeline's sources by name: where its snapshot rows come from.

Each source is one module named in :data:`_MODULES` whose reading function (``(SparkSession,
PipelineOptions) -> DataFrame`` of snapshot rows, :data:`~lagassign.formats.snapshot_rows.
ROW_SCHEMA`, packed by group on the executors: :func:`lagassign.spark.packing.packed`,
:data:`~lagassign.spark.packing.PACKED_SCHEMA`; or :class:`WholeGroups` when each reading
task holds whole groups) is registered with :func:`source`: its name,
its flags (the first is its choice in the pipeline's mutually exclusive input flags; the
others go only with it), its precedence, whether ``--auto-offset-reset`` applies to it, and
how ``summary.json`` describes it.
:mod:`lagassign.spark.options` adds the flags from here and keeps their values as the
options' source options (``options.bootstrap_server``); :mod:`lagassign.spark.pipeline` reads
with the source the options choose (:func:`chosen`).

Files are listed on the driver and read on the executors (:mod:`.files`); a live cluster's
groups are listed on the driver and read on the executors, each task with its own
:class:`~lagassign.kafka.offsets.OffsetsReader` (:mod:`.live`). A source that fails gives an
``error`` row instead of raising on the executor, so that the driver can say what went wrong in
one line (:func:`source_error`).

Importing this package or a source's module does not import PySpark or pyarrow (``lagassign
--help`` lists the flags); a reading function imports what it needs when it reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lagassign.module_registry import ModuleRegistry

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from lagassign.spark.options import PipelineOptions

#: the sources' modules in lagassign.spark.sources: the order of their flags in the help
_MODULES = ("snapshots", "describe", "sample", "live")

#: the error rows of a live source whose cluster could not be read have this source
CLUSTER = "<cluster>"


@dataclass(frozen=True)
class WholeGroups:
    """What a source reads when each of its tasks holds whole groups (every row of a group
    comes from one task): ``tasks``, each task's inputs (a string each: a file, a group id),
    and ``read``, the function that turns a task's inputs, Arrow batches of one string column
    ``column``, into snapshot rows (:data:`~lagassign.formats.snapshot_rows.ROW_SCHEMA`). The
    pipeline then reads and plans in one pass per task, with no shuffle: what the rows of a
    group shuffled together cost (packing, the JVM's copies, the shuffle's files) is not
    spent."""

    column: str
    tasks: list[list[str]]
    read: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

    def batch(self, inputs: Sequence[str]) -> pa.RecordBatch:
        """A task's inputs as ``read`` takes them."""
        import pyarrow as pa

        return pa.RecordBatch.from_pydict({self.column: list(inputs)})

    def frame(self, spark: SparkSession) -> DataFrame:
        """The tasks' inputs as a DataFrame of ``column``, a partition per task (as
        ``spark.range`` makes them: one id per partition, no shuffle)."""
        from pyspark.sql import functions as F

        listed = F.array(*[F.array(*[F.lit(v) for v in task]) for task in self.tasks])
        index = (F.col("id") + 1).cast("int")
        n = len(self.tasks)
        return spark.range(0, n, 1, n).select(
            F.explode(F.element_at(listed, index)).alias(self.column)
        )


#: a source's reading function: packed rows (a DataFrame of
#: :data:`~lagassign.spark.packing.PACKED_SCHEMA`, shuffled by group to plan), or
#: :class:`WholeGroups`
Read = Callable[["SparkSession", "PipelineOptions"], "DataFrame | WholeGroups"]


@dataclass(frozen=True)
class Flag:
    """A flag of a source and the option it fills."""

    flag: str
    #: argparse's add_argument keywords; a flag that is not given parses as None (False for
    #: store_true), so that the options can tell it was not given
    arguments: Mapping[str, Any]
    #: the option's value when the flag is not given
    default: Any = None

    @property
    def option(self) -> str:
        """The option's name: argparse's dest."""
        return str(self.arguments.get("dest") or self.flag.removeprefix("--").replace("-", "_"))

    def value(self, parsed: Any) -> Any:
        """The option's value from what argparse parsed (lists become tuples)."""
        if parsed is None:
            return self.default
        return tuple(parsed) if isinstance(parsed, list) else parsed


def flag(name: str, *, default: Any = None, **arguments: Any) -> Flag:
    """A source's flag: ``name`` and argparse's keywords; ``default``: the option's value when
    the flag is not given."""
    return Flag(name, arguments, default)


@dataclass(frozen=True)
class Source:
    """One kind of pipeline input."""

    name: str
    #: the first: its choice among the input flags; the others go only with it
    flags: tuple[Flag, ...]
    read: Read
    #: what summary.json says of the input
    described: Callable[[PipelineOptions], dict[str, Any]]
    #: the options choose the source of the highest precedence that they give (the input
    #: flags are mutually exclusive; options built in code may give several)
    precedence: int
    #: chosen when the options give no source
    fallback: bool = False
    #: --auto-offset-reset applies to what it reads (its input does not say the groups' reset)
    takes_reset: bool = False
    options: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(f.option for f in self.flags))

    def given(self, options: Mapping[str, Any]) -> bool:
        """Whether ``options`` (source options by name) give this source."""
        return self.fallback or options[self.flags[0].option] not in (None, False, ())


_REGISTRY = ModuleRegistry[Source]("lagassign.spark.sources", _MODULES, "pipeline source")


def source(
    name: str,
    *,
    flags: tuple[Flag, ...],
    described: Callable[[PipelineOptions], dict[str, Any]],
    precedence: int,
    fallback: bool = False,
    takes_reset: bool = False,
) -> Callable[[Read], Read]:
    """Registers a source: its reading function and this declaration above it."""
    return _REGISTRY.registering(
        name,
        lambda read: Source(name, flags, read, described, precedence, fallback, takes_reset),
    )


def listed() -> list[Source]:
    """Every source, in :data:`_MODULES` order."""
    return _REGISTRY.entries()


def option_defaults() -> dict[str, Any]:
    """Every source option and its value when its flag is not given."""
    return {f.option: f.default for s in listed() for f in s.flags}


def chosen(options: PipelineOptions) -> Source:
    """The source that reads for ``options``."""
    by_precedence = sorted(listed(), key=lambda s: -s.precedence)
    return next(s for s in by_precedence if s.given(options.source_options))


def source_error(where: str, message: str) -> Exception:
    """The exception of a source's error row: :class:`InputError` for bad input (``where``
    names the file and row), :class:`OffsetsError` when the cluster could not be read."""
    from lagassign.formats.errors import InputError
    from lagassign.kafka.offsets import OffsetsError

    if where == CLUSTER:
        return OffsetsError(message)
    return InputError(where, message)
