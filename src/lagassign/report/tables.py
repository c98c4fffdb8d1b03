"""Rich tables of assignments and plans."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.console import Group as RichGroup
from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from tabulate import tabulate

from lagassign.metrics import AssignmentMetrics, MemberLoad
from lagassign.model import Assignment, Group, TopicPartition
from lagassign.plan import CURRENT, GroupPlans, Plan, shown_plans
from lagassign.rates import Capacities, CapacitySource, capacities
from lagassign.report.member_ids import MemberLabels, member_labels
from lagassign.report.text import NEVER, UNKNOWN, duration


def _fmt_partitions(assignment: Assignment, member_id: str, limit: int = 12) -> str:
    tps = assignment[member_id]
    shown = ", ".join(str(tp) for tp in tps[:limit])
    return shown + (f" and {len(tps) - limit} more" if len(tps) > limit else "")


def detached(table: Table) -> RenderableType:
    """``table`` with its title above it and its caption below it as lines of their own, so
    they wrap at the console's width instead of the table's (a narrow table broke a long
    group id over lines) and show even when the table has no columns."""
    lines: list[RenderableType] = []
    if table.title:
        lines.append(Text(str(table.title)))
    if table.columns:
        bare = copy.copy(table)
        bare.title = bare.caption = None
        lines.append(bare)
    if table.caption:
        lines.append(Text(str(table.caption)))
    return RichGroup(*lines)


def catch_up_cell(seconds: float | None) -> Text:
    """A catch-up time, red when it is never: a member that falls behind for good."""
    shown = duration(seconds)
    return Text(shown, style="bold red" if shown == NEVER else "")


def catch_up_legend(capacity: Capacities | None, of: str = "a member") -> str:
    """What a catch-up cell means (``of``: whose time it is), and where the capacities behind
    it come from."""
    if capacity is None or capacity.shared:
        reads = (
            "each member credited with an equal share of the group's measured consume rate "
            "(no member's capacity is known)"
        )
    else:
        counts = Counter(capacity.source.values())
        reads = "capacity " + ", ".join(
            f"{_CAPACITY_SOURCES[source]} for {counts[source]}"
            for source in _CAPACITY_SOURCES
            if counts[source]
        )
    return (
        f"catch-up: predicted time until {of} has read its backlog while its partitions' "
        f"produce rate keeps coming in, backlog ÷ (capacity − inflow); {reads}; {NEVER} (red): "
        f"inflow at or above capacity, the member falls behind for good; {UNKNOWN}: no rate known"
    )


_CAPACITY_SOURCES: dict[CapacitySource, str] = {
    "given": "given",
    "measured": "measured (saturated members' consume rate)",
    "assumed": "assumed (the median of those)",
}


def assignment_table(plan: Plan, capacity: Capacities | None = None) -> Table:
    """``plan`` member by member; with a catch-up column when rates are known."""
    table = Table(title=f"{plan.strategy}", title_justify="left")
    labels = member_labels(m.member_id for m in plan.metrics.members)
    _member_column(table, labels)
    table.add_column("partitions", justify="right")
    table.add_column("lag", justify="right")
    catch_up = plan.metrics.member_catch_up
    notes = [labels.note]
    if catch_up is not None:
        table.add_column("catch-up", justify="right")
        behind = plan.metrics.falls_behind
        notes.insert(0, f"falls behind: {', '.join(labels[m] for m in behind)}" if behind else "")
        notes.append(catch_up_legend(capacity))
    _caption(table, notes)
    table.add_column("assigned")
    for load in plan.metrics.members:
        member_cells: list[str | Text] = [
            labels[load.member_id],
            str(load.partitions),
            f"{load.lag:,}",
        ]
        if catch_up is not None:
            member_cells.append(catch_up_cell(catch_up.get(load.member_id)))
        table.add_row(*member_cells, _fmt_partitions(plan.assignment, load.member_id))
    return table


def _member_column(table: Table, labels: MemberLabels) -> None:
    """The member column: each label whole on one line, never wrapped or cut."""
    table.add_column("member", no_wrap=True, min_width=labels.width)


def _notes(notes: Sequence[str]) -> str:
    """The notes that are not empty, as one caption."""
    return ". ".join(note for note in notes if note)


def _caption(table: Table, notes: Sequence[str]) -> None:
    """The notes that are not empty, as the table's caption."""
    shown = _notes(notes)
    if shown:
        table.caption = shown
        table.caption_justify = "left"


@dataclass(frozen=True, slots=True)
class PlainTable:
    """A table as ``kafka-consumer-groups`` prints one: aligned columns under their headers,
    no box (tabulate's ``simple`` layout), its title above and its caption below.

    For tables of a row per partition. Rich lays a table out a cell at a time, measuring and
    wrapping each: 3.7 s for ``describe``'s 10,000 partitions (eight columns), against 0.2 s
    here. Every line is printed whole: a line wider than the terminal wraps there, as Kafka's
    tool's do, instead of being cut (print it with ``crop=False``)."""

    title: str
    #: (header, "left" or "right") of each column
    columns: Sequence[tuple[str, str]]
    rows: Sequence[Sequence[str]]
    caption: str = ""

    def body(self) -> list[str]:
        """The header, its rule and the rows, a line each."""
        return tabulate(
            self.rows,
            headers=[name for name, _ in self.columns],
            tablefmt="simple",
            disable_numparse=True,  # cells are shown as given ("1,234", "-")
            colalign=[justify for _, justify in self.columns],
        ).splitlines()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(self.title)  # title and caption wrap at the console's width
        # the rows as they are: no markup, no measuring, no wrapping a cell at a time
        for line in self.body():
            yield Segment(line)
            yield Segment.line()
        if self.caption:
            yield Text(self.caption)


def summary_row(m: AssignmentMetrics, catch_up: bool = False) -> list[str | Text]:
    cells: list[str | Text] = [
        f"{m.max_member_lag:,}",
        f"{m.mean_member_lag:,.0f}",
        f"{m.imbalance:.3f}",
        str(m.count_spread),
        str(m.moves),
    ]
    return [*cells, catch_up_cell(m.catch_up_seconds)] if catch_up else cells


def plan_summary_table(
    gp: GroupPlans, *, members_from: str = "", notes: Sequence[str] = ()
) -> Table:
    """Every strategy's metrics, one row each; the title says the group's members
    (``members_from``: whence they come, when not the group itself), partitions and total lag:
    the lag of every partition, with members or without. A group without members gets no
    rows, only ``notes`` saying why."""
    first = gp.plans[0].metrics if gp.plans and gp.group.members else None
    lower = f", lower bound {first.lower_bound:,.0f}" if first else ""
    mode = (
        "; balanced planned for catch-up time (produce rates and member capacities)"
        if gp.time_aware
        else ""
    )
    whence = f" ({members_from})" if members_from else ""
    table = Table(
        title=f"group {gp.group.id}: {len(gp.group.members)} members{whence}, "
        f"{len(gp.lags)} partitions, total lag {sum(gp.lags.values()):,}{lower}{mode}",
        title_justify="left",
    )
    _caption(table, notes)
    if not gp.group.members:
        return table
    for name, justify in [
        ("strategy", "left"),
        ("largest member lag", "right"),
        ("mean", "right"),
        ("÷ lower bound", "right"),
        ("count spread", "right"),
        ("moves", "right"),
    ]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    settled = gp.settled
    rows: list[tuple[str, Plan]] = [(CURRENT, gp.current)] if gp.current else []
    for plan in gp.plans:
        if plan.strategy in settled:
            rows += [(_settled_name(gp, plan.strategy), settled[plan.strategy])]
            rows.append((f"{plan.strategy}, round 1", plan))
        else:
            rows.append((plan.strategy, plan))
    legends = list(notes)
    if settled:
        table.add_column("unassigned", justify="right")
        legends.append(_ROUNDS_LEGEND)
    if gp.unsettled:
        legends.append(_NEVER_SETTLES_LEGEND)
    # catch-up is predicted only from measured consume rates; without them the column is left out
    catch_up = any(plan.metrics.catch_up_seconds is not None for _, plan in rows)
    if catch_up:
        table.add_column("catch-up", justify="right")
        legends.append(
            catch_up_legend(gp.capacities or capacities(gp.group, gp.lags), of="the slowest member")
        )
    _caption(table, legends)
    for name, plan in rows:
        unassigned = [f"{plan.metrics.unassigned:,}"] if settled else []
        cells = summary_row(plan.metrics, catch_up)
        table.add_row(name, *cells[:5], *unassigned, *cells[5:])
    return table


#: what the rows of a strategy that withholds partitions in its first round say
_ROUNDS_LEGEND = (
    "“…, round 1”: the strategy's first rebalance round (what `assign` gives), which assigns "
    "nobody the partitions that move while their owner still consumes them (the cooperative "
    "protocol); the strategy's own row is where its rounds settle, once the next rounds hand "
    "them over. Unassigned: partitions a plan gives to nobody"
)


#: how a strategy's row is marked when its rounds never settle (GroupPlans.unsettled)
NEVER_SETTLES = "(never settles)"
_NEVER_SETTLES_LEGEND = (
    f"{NEVER_SETTLES}: the strategy's rounds come back to an assignment they made before, so the "
    "group would rebalance for ever with some partition always in flight; its row is the round "
    "that repeats an earlier one, with what that round withholds unassigned. Kafka's rack-aware "
    "CooperativeStickyAssignor does this on some groups, and ours assigns as it does in every "
    "round"
)


def _settled_name(gp: GroupPlans, strategy: str) -> str:
    """How the plan where ``strategy``'s rounds end is named: marked if they never settle."""
    return f"{strategy} {NEVER_SETTLES}" if strategy in gp.unsettled else strategy


def plan_members_table(gp: GroupPlans) -> Table:
    """Per member, partitions / lag under each strategy, side by side."""
    rows = shown_plans(gp)
    table = Table(title=f"group {gp.group.id}: partitions / lag per member", title_justify="left")
    labels = member_labels(m.id for m in gp.group.members)
    _member_column(table, labels)
    for plan in rows:
        # a cell on one line; a strategy's name folded rather than cut when space is short
        table.add_column(_settled_name(gp, plan.strategy), justify="right", overflow="fold")
    _caption(table, [labels.note] + ([_NEVER_SETTLES_LEGEND] if gp.unsettled else []))
    loads = [{m.member_id: m for m in plan.metrics.members} for plan in rows]
    for member in gp.group.members:
        cells = [f"{by_id[member.id].partitions} / {by_id[member.id].lag:,}" for by_id in loads]
        table.add_row(labels[member.id], *cells)
    return table


def describe_table(
    group: Group, lags: Mapping[TopicPartition, int], state: str
) -> PlainTable:
    """Per partition, as ``kafka-consumer-groups --describe``: offsets, lag and owner."""
    partitions = list(group.partitions())
    owners = group.current_owners()
    members = {m.id: m for m in group.members}
    total = sum(lags.get(p.tp, 0) for p in partitions)
    labels = member_labels(m.id for m in group.members)
    uncommitted = any(p.offsets is None or p.offsets.committed is None for p in partitions)
    rows = []
    for p in partitions:
        owner = members.get(owners.get(p.tp, ""))
        committed = p.offsets.committed if p.offsets else None
        rows.append(
            (
                p.topic,
                str(p.partition),
                "-" if committed is None else f"{committed:,}",
                f"{p.offsets.end:,}" if p.offsets else "-",
                f"{lags.get(p.tp, 0):,}",
                labels[owner.id] if owner else "-",
                (owner.host if owner else None) or "-",
                (owner.client_id if owner else None) or "-",
            )
        )
    return PlainTable(
        f"group {group.id} ({state}): {len(group.members)} members, "
        f"{len(partitions)} partitions, total lag {total:,}",
        (
            ("topic", "left"),
            ("partition", "right"),
            ("current offset", "right"),
            ("log end offset", "right"),
            ("lag", "right"),
            ("member", "left"),
            ("host", "left"),
            ("client id", "left"),
        ),
        rows,
        _notes(
            [
                labels.note,
                f"current offset -: the group has committed none, so the lag follows "
                f"auto.offset.reset {group.auto_offset_reset}"
                if uncommitted
                else "",
                "member, host, client id -: no member owns the partition"
                if len(owners) < len(partitions)
                else "",
            ]
        ),
    )


def describe_members_table(group: Group, loads: Sequence[MemberLoad]) -> PlainTable:
    """Per member: what it owns now and the lag of it."""
    members = {m.id: m for m in group.members}
    labels = member_labels(load.member_id for load in loads)
    rows = []
    for load in loads:
        member = members.get(load.member_id)
        rows.append(
            (
                labels[load.member_id],
                (member.host if member else None) or "-",
                (member.client_id if member else None) or "-",
                str(load.partitions),
                f"{load.lag:,}",
            )
        )
    return PlainTable(
        f"group {group.id}: members",
        (
            ("member", "left"),
            ("host", "left"),
            ("client id", "left"),
            ("partitions", "right"),
            ("lag", "right"),
        ),
        rows,
        _notes([labels.note, "" if loads else "none now"]),
    )
