"""Kafka's own assignors as a reference: runs ``tests/java/AssignorHarness.java`` on our groups.

``java_assign(strategy, groups)`` starts one JVM for any number of groups and returns Kafka's
assignments as our :class:`Assignment` (members in group order, partitions in the order Kafka
listed them). The jars come from ``tests/java/pom.xml`` into ``.cache/java-reference/lib``;
:func:`ensure_jars` fetches them with Maven when they are missing, so a clean clone works.

Kafka's command-line tools (``tests/java/tools/pom.xml``, into ``.cache/kafka-tools/lib``) are
the reference for ``lagassign describe``: :func:`kafka_tool` runs one, such as
``kafka-consumer-groups`` (:data:`CONSUMER_GROUPS`), fetching the jars alike.

When Java or Maven is missing, :class:`JavaReferenceUnavailable` is raised: the differential
tests turn it into a failure rather than a skip, so that a CI run without Java is not green.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import quote, unquote_plus

from lagassign.java_ordering import java_order
from lagassign.model import Assignment, Group, Member, TopicPartition

ROOT = Path(__file__).resolve().parents[1]
POM = ROOT / "tests" / "java" / "pom.xml"
HARNESS = ROOT / "tests" / "java" / "AssignorHarness.java"
LIB = ROOT / ".cache" / "java-reference" / "lib"
TOOLS_POM = ROOT / "tests" / "java" / "tools" / "pom.xml"
TOOLS_LIB = ROOT / ".cache" / "kafka-tools" / "lib"
#: the class behind ``kafka-consumer-groups.sh``
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")
_ABSENT = "!"


class JavaReferenceUnavailable(RuntimeError):
    """Java, Maven or the kafka-clients jars cannot be had on this machine."""


class JavaAssignorError(RuntimeError):
    """Kafka's assignor threw on a group; ``index`` is the group's position in the batch."""

    def __init__(self, index: int, trace: str) -> None:
        super().__init__(f"group {index}: Kafka's assignor failed:\n{trace}")
        self.index = index
        self.trace = trace


def mvn_copy_command(lib: Path = LIB, pom: Path = POM) -> list[str]:
    """The one Maven call that puts the jars ``pom`` pins into ``lib`` (also used by CI
    set-up, scripts/java-reference.sh)."""
    return [
        "mvn", "-B", "-q", "-f", str(pom), "dependency:copy-dependencies",
        "-DincludeScope=runtime", f"-DoutputDirectory={lib}",
    ]


def ensure_jars(pom: Path = POM, lib: Path = LIB, jar: str = "kafka-clients-*.jar") -> Path:
    """Make sure Java and the jars ``pom`` pins are in ``lib`` (``jar``: one of them),
    fetching them with Maven if needed."""
    if shutil.which("java") is None:
        raise JavaReferenceUnavailable("`java` (17 or newer) is not on PATH")
    if not any(lib.glob(jar)):
        if shutil.which("mvn") is None:
            raise JavaReferenceUnavailable(
                f"the jars of {pom} are not in {lib} and `mvn` is not on PATH to fetch them"
            )
        command = mvn_copy_command(lib, pom)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not any(lib.glob(jar)):
            raise JavaReferenceUnavailable(
                f"fetching the jars of {pom} failed:\n{done.stdout}\n{done.stderr}"
            )
    return lib


def kafka_tool_command(main_class: str, args: Sequence[str]) -> list[str]:
    """The command that runs one of Kafka's command-line tools (``main_class``, e.g.
    :data:`CONSUMER_GROUPS`) with ``args`` in a JVM of its own, as its ``bin/*.sh`` script
    runs it; the jars fetched first if need be."""
    lib = ensure_jars(TOOLS_POM, TOOLS_LIB, "kafka-tools-*.jar")
    return ["java", "-cp", str(lib / "*"), main_class, *args]


def kafka_tool(
    main_class: str, args: Sequence[str], timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    """One of Kafka's command-line tools run (:func:`kafka_tool_command`), its output kept."""
    return subprocess.run(
        kafka_tool_command(main_class, args),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def kafka_clients_version() -> str:
    """The kafka-clients version the harness runs, read from the jar's name."""
    jar = next(LIB.glob("kafka-clients-*.jar"))
    return jar.stem.removeprefix("kafka-clients-")


# -- encoding ------------------------------------------------------------------------------------

def _text(value: str) -> str:
    # quote() with nothing safe leaves no TAB, comma, colon or "!" in the field
    return quote(value, safe="")


def _optional(value: str | int | None) -> str:
    if value is None:
        return _ABSENT
    return str(value) if isinstance(value, int) else _text(value)


def _tps(tps: Sequence[TopicPartition]) -> str:
    return ",".join(f"{_text(tp.topic)}:{tp.partition}" for tp in tps)


def _member_line(m: Member) -> str:
    # Subscribed topics in Java String order: RangeAssignor (ours and Kafka's) sees them so.
    topics = ",".join(_text(t) for t in sorted(m.topics, key=java_order))
    fields = ["member", _text(m.id), _optional(m.instance_id), _optional(m.rack),
              _optional(m.generation), topics, _tps(m.owned)]
    return "\t".join(fields)


def encode(strategy: str, groups: Sequence[Group]) -> str:
    """The harness input for ``groups`` (format documented in AssignorHarness.java)."""
    lines: list[str] = []
    for group in groups:
        lines.append(f"group\t{strategy}")
        for p in group.partitions():
            racks = ",".join(_text(r) for r in sorted(p.racks))
            lines.append(f"partition\t{_text(p.topic)}\t{p.partition}\t{racks}")
        lines.extend(_member_line(m) for m in group.members)
        lines.append("end")
    return "\n".join(lines) + "\n"


# -- decoding ------------------------------------------------------------------------------------

def _parse_tps(field: str) -> tuple[TopicPartition, ...]:
    if not field:
        return ()
    result = []
    for item in field.split(","):
        topic, _, number = item.rpartition(":")
        result.append(TopicPartition(unquote_plus(topic), int(number)))
    return tuple(result)


def _records(output: str) -> Iterator[list[str]]:
    for line in output.splitlines():
        if line:
            yield line.split("\t")


def decode(output: str, groups: Sequence[Group]) -> list[Assignment | JavaAssignorError]:
    """Parse the harness output: one Assignment per group, or the error Kafka's assignor threw."""
    results: list[Assignment | JavaAssignorError] = []
    assigned: dict[str, tuple[TopicPartition, ...]] = {}
    error: JavaAssignorError | None = None
    for fields in _records(output):
        kind = fields[0]
        if kind == "group":
            assigned, error = {}, None
        elif kind == "member":
            assigned[unquote_plus(fields[1])] = _parse_tps(fields[2])
        elif kind == "nanos":
            pass  # timings are for the benchmarks (timed_run)
        elif kind == "error":
            error = JavaAssignorError(len(results), unquote_plus(fields[1]))
        elif kind == "end":
            group = groups[len(results)]
            results.append(error or Assignment.build(group.members, assigned))
        else:
            raise ValueError(f"unexpected harness output record {fields!r}")
    if len(results) != len(groups):
        raise ValueError(f"harness answered {len(results)} of {len(groups)} groups")
    return results


# -- running -------------------------------------------------------------------------------------

def run_harness(strategy: str, groups: Sequence[Group]) -> list[Assignment | JavaAssignorError]:
    """Kafka's answer for every group, keeping per-group failures as values."""
    if strategy not in STRATEGIES:
        raise ValueError(f"Kafka has no assignor {strategy!r} (known: {', '.join(STRATEGIES)})")
    if not groups:
        return []
    return decode(run_raw(encode(strategy, groups)), groups)


def run_raw(harness_input: str) -> str:
    """Run the harness once on input in its line format and return what it printed."""
    lib = ensure_jars()
    done = subprocess.run(
        ["java", "-cp", f"{lib}/*", str(HARNESS)],
        input=harness_input, capture_output=True, text=True, encoding="utf-8", check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the Java harness failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def timed_run(strategy: str, groups: Sequence[Group]) -> list[float]:
    """Seconds Kafka's assignor took on each group, measured inside one JVM (later groups run
    on warmed-up code: send a group several times to time it warm)."""
    output = run_raw(encode(strategy, groups))
    return [int(fields[1]) / 1e9 for fields in _records(output) if fields[0] == "nanos"]


def java_assign(strategy_name: str, groups: list[Group]) -> list[Assignment]:
    """Kafka's assignment of every group; raises :class:`JavaAssignorError` if one failed."""
    results = run_harness(strategy_name, groups)
    for result in results:
        if isinstance(result, JavaAssignorError):
            raise result
    return [r for r in results if isinstance(r, Assignment)]
