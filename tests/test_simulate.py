"""The drain simulator: conservation, exact drain times, rebalances, cooperative rounds, the
scenario file and the `lagassign simulate` command."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from lagassign.formats.errors import InputError
from lagassign.formats.group_file import load_group
from lagassign.formats.scenario import load_scenario, parse_scenario
from lagassign.model import Group, Member, Partition, Topic, TopicPartition
from lagassign.plan import rebalance_round
from lagassign.samples import suite
from lagassign.simulate.engine import MAX_ROUNDS, run_strategy, simulate
from lagassign.simulate.generators import churn_scenario, default_scenario, with_load
from lagassign.simulate.ideal import ideal_drain_time
from lagassign.simulate.results import Run
from lagassign.simulate.scenario import Join, Leave, Scenario
from lagassign.strategies import RebalanceProtocol, create, names
from tests.builders import group


def one_run(scenario: Scenario, strategy: str, samples: int = 100_000) -> Run:
    return run_strategy(scenario, create(strategy), samples)


def rated(lags: dict[str, list[int]], rates: dict[str, list[float]], members: dict) -> Group:
    topics = [
        Topic(t, tuple(Partition(t, i, lag=lag, rate_in=rates[t][i]) for i, lag in enumerate(ls)))
        for t, ls in lags.items()
    ]
    return Group.of(topics, [Member(m, frozenset(ts)) for m, ts in members.items()])


def at(run: Run, t: float) -> int:
    """Index of the sample at time ``t`` (every step is sampled in these tests)."""
    return min(range(len(run.series.times)), key=lambda i: abs(run.series.times[i] - t))


# -- the model ------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", names())
def test_conservation_consumed_plus_remaining_is_initial_plus_produced(strategy):
    g = rated(
        {"a": [500, 20, 0, 900], "b": [50, 3000, 7]},
        {"a": [3.0, 1.5, 0.0, 12.0], "b": [0.5, 8.0, 2.0]},
        {"m1": ["a", "b"], "m2": ["a", "b"], "m3": ["a"]},
    )
    scenario = Scenario(
        g,
        throughput=40.0,
        member_throughput={"m3": 15.0, "m4": 60.0},
        events=(
            Join(17.0, Member("m4", frozenset({"a", "b"}))),
            Leave(40.5, "m1"),
            Leave(41.0, "m3"),
            Join(90.0, Member("m1", frozenset({"b"}))),
        ),
        dt=0.5,
        horizon=200.0,
        rebalance_pause=6.0,
    )
    run = one_run(scenario, strategy)
    assert run.initial_lag == 500 + 20 + 900 + 50 + 3000 + 7
    assert run.produced == pytest.approx(sum([3, 1.5, 12, 0.5, 8, 2]) * 200.0)
    assert run.consumed + run.final_lag == pytest.approx(
        run.initial_lag + run.produced, rel=1e-12, abs=1e-6
    )
    assert run.final_lag == pytest.approx(run.series.total[-1])
    assert all(v >= 0 for v in run.series.total)
    # what the members own plus what nobody owns is everything
    for i, total in enumerate(run.series.total):
        owned = sum(v[i] or 0.0 for v in run.series.members.values())
        assert owned + run.series.unowned[i] == pytest.approx(total, abs=1e-6)


@pytest.mark.parametrize("dt", [1.0, 0.5, 0.25])
def test_single_member_drains_in_exactly_backlog_over_spare_throughput(dt):
    # 1,000 + 200 behind, 4 + 1 produced per second, 15 read per second: 1,200 / 10 = 120 s
    g = rated({"t": [1000, 200]}, {"t": [4.0, 1.0]}, {"solo": ["t"]})
    scenario = Scenario(g, throughput=15.0, dt=dt, horizon=500.0)
    run = one_run(scenario, "range")
    assert run.drain_time == 120.0
    assert ideal_drain_time(scenario) == pytest.approx(120.0)
    # before draining the lag falls by exactly 10 a second
    assert run.series.total[at(run, 60.0)] == pytest.approx(1200 - 60 * 10)


def test_eager_floor_is_the_ideal_with_the_group_idle_during_every_pause():
    # 1,200 behind, 5 produced and 15 read per second. A member reading 5 more joins at 30 s
    # and leaves at 35 s: without pauses 900 left at 30 s, 825 at 35 s, 82.5 s more. With
    # them the leave, within the join's 10 s pause, restarts it: nobody reads from 30 to 45 s,
    # 900 + 75 produced = 975 left, 975 ÷ 10 = 97.5 s more, drained at 142.5 s.
    g = rated({"t": [1000, 200]}, {"t": [4.0, 1.0]}, {"solo": ["t"]})
    scenario = Scenario(
        g,
        throughput=15.0,
        member_throughput={"j": 5.0},
        events=(Join(30.0, Member("j", frozenset({"t"}))), Leave(35.0, "j")),
        horizon=500.0,
        rebalance_pause=10.0,
    )
    assert ideal_drain_time(scenario) == pytest.approx(117.5)
    assert ideal_drain_time(scenario, paused=True) == pytest.approx(142.5)
    # an eager strategy in the simulator revokes everything for the pause: no sooner
    run = one_run(scenario, "range")
    assert run.drain_time is not None and run.drain_time >= 142.5


def joined(*events: Join | Leave, joiner: float = 10.0) -> Scenario:
    """1,200 behind (6 partitions of 200), 5 produced and 15 read per second by ``solo``, and
    ``events`` of a member ``j`` reading ``joiner`` a second, 10 s rebalances."""
    g = rated({"t": [200] * 6}, {"t": [1.0] * 5 + [0.0]}, {"solo": ["t"]})
    return Scenario(
        g,
        throughput=15.0,
        member_throughput={"j": joiner},
        events=events,
        horizon=500.0,
        rebalance_pause=10.0,
    )


def test_cooperative_floor_is_the_ideal_with_the_joiner_idle_for_two_rounds():
    """ideal_drain_time's example: a member reading 10 a second joins at 30 s (900 behind then):
    75 s without pauses. Under the cooperative protocol the joiner reads nothing for two
    rounds, whatever the strategy: 85 s. With the eager pause as well (nobody reads from 30 to
    40 s): 92.5 s."""
    scenario = joined(Join(30.0, Member("j", frozenset({"t"}))))
    assert ideal_drain_time(scenario) == pytest.approx(75.0)
    assert ideal_drain_time(scenario, joiner_idle=20.0) == pytest.approx(85.0)
    assert ideal_drain_time(scenario, paused=True) == pytest.approx(87.5)
    assert ideal_drain_time(scenario, paused=True, joiner_idle=20.0) == pytest.approx(92.5)
    # the simulator's cooperative strategies drain no sooner, and the join's rebalance takes
    # two rounds at least (the joiner is handed partitions at the end of the second)
    for name in ("cooperative-sticky", "balanced"):
        run = run_strategy(scenario, create(name), 1, RebalanceProtocol.COOPERATIVE)
        assert run.drain_time is not None and run.drain_time >= 85.0, name
        assert run.rebalances[-1].end >= 50.0, name


def test_an_event_at_time_0_pauses_the_group_at_once():
    """A join at 0 s: 60 s without pauses (1,200 ÷ 20 a second of spare); the eager floor has
    nobody read from 0 to 10 s, 1,250 behind then: 72.5 s."""
    scenario = joined(Join(0.0, Member("j", frozenset({"t"}))))
    assert ideal_drain_time(scenario) == pytest.approx(60.0)
    assert ideal_drain_time(scenario, paused=True) == pytest.approx(72.5)


def test_a_joiner_that_leaves_before_its_idle_time_ends_never_reads():
    scenario = joined(Join(30.0, Member("j", frozenset({"t"}))), Leave(40.0, "j"))
    # 900 behind at 30 s and the solo member alone: 900 ÷ 10 = 90 s more
    assert ideal_drain_time(scenario, joiner_idle=20.0) == pytest.approx(120.0)
    # without the idle time the joiner reads from 30 to 40 s: 200 less, then 700 ÷ 10
    assert ideal_drain_time(scenario) == pytest.approx(30.0 + 10.0 + 700 / 10)


def test_drain_time_is_the_end_of_the_step_it_happens_in():
    g = rated({"t": [1000]}, {"t": [0.0]}, {"solo": ["t"]})
    run = one_run(Scenario(g, throughput=30.0, dt=1.0, horizon=100.0), "range")
    assert run.drain_time == math.ceil(1000 / 30)


def test_not_drained_within_the_horizon_is_none():
    g = rated({"t": [1000]}, {"t": [9.0]}, {"solo": ["t"]})
    run = one_run(Scenario(g, throughput=10.0, horizon=100.0), "range")
    assert run.drain_time is None
    assert run.final_lag == pytest.approx(900)


def test_capacity_is_shared_max_min_fair_among_a_members_partitions():
    # 100/s over lags 10 and 1,000: the small one is read to the end, the rest goes to the big
    g = rated({"t": [10, 1000]}, {"t": [0.0, 0.0]}, {"solo": ["t"]})
    run = one_run(Scenario(g, throughput=100.0, horizon=3.0), "range")
    assert run.series.total[:4] == (1010, 910, 810, 710)
    assert run.drain_time is None


def test_lag_piling_hot_partitions_on_one_member_drains_slower_than_balanced():
    # one hot partition per topic: lag gives all three to the first member (2,700 vs 30 + 30),
    # balanced one to each (920 each)
    hot = {f"t{i}": [900, 10, 10] for i in range(3)}
    g = group(hot, {m: list(hot) for m in ("a", "b", "c")})
    scenario = Scenario(g, throughput=10.0, horizon=400.0)
    lag, balanced = one_run(scenario, "lag"), one_run(scenario, "balanced")
    assert lag.drain_time == 270.0
    assert balanced.drain_time == 92.0
    assert lag.peak_member_lag == 2700 and lag.peak_member == "a"
    assert balanced.peak_member_lag == 920
    assert ideal_drain_time(scenario) == pytest.approx(2760 / 30)


# -- rebalances -----------------------------------------------------------------------------


def six_partitions(events, pause=4.0):
    g = rated({"t": [600] * 6}, {"t": [1.0] * 6}, {"a": ["t"], "b": ["t"]})
    return Scenario(g, throughput=20.0, events=events, horizon=300.0, rebalance_pause=pause)


def test_join_and_leave_rebalance_and_count_moves():
    scenario = six_partitions(
        (Join(10.0, Member("c", frozenset({"t"}))), Leave(50.0, "c")), pause=4.0
    )
    ranged, sticky = one_run(scenario, "range"), one_run(scenario, "sticky")
    for run in (ranged, sticky):
        assert [(r.start, r.end, r.causes, r.rounds) for r in run.rebalances] == [
            (0.0, 0.0, ("start",), 1),
            (10.0, 14.0, ("c joins",), 1),
            (50.0, 54.0, ("c leaves",), 1),
        ]
        assert run.rebalances[0].moved == 0
    # range: a [0 1 2] b [3 4 5] -> a [0 1] b [2 3] c [4 5]: a gives up 2, b gives up 4 and 5;
    # c leaves -> a [0 1 2] b [3 4 5]: b gives up 2 and takes c's 4 and 5
    assert [r.moved for r in ranged.rebalances] == [0, 3, 3]
    # sticky: c takes one partition from each; when it leaves they go back, the only moves
    assert [r.moved for r in sticky.rebalances] == [0, 2, 2]
    assert ranged.moves == 6 and sticky.moves == 4


def test_eager_rebalance_stops_all_consumption_for_the_pause():
    scenario = six_partitions((Join(10.0, Member("c", frozenset({"t"}))),), pause=4.0)
    run = one_run(scenario, "sticky")
    s = run.series
    # 6 partitions produce 6/s; nobody consumes from 10 s to 14 s
    assert s.total[at(run, 14.0)] - s.total[at(run, 10.0)] == pytest.approx(4 * 6.0)
    assert s.unowned[at(run, 12.0)] == s.total[at(run, 12.0)]
    assert s.members["c"][at(run, 5.0)] is None
    assert s.members["c"][at(run, 15.0)] > 0


def test_cooperative_keeps_consuming_and_withholds_moving_partitions_for_a_second_round():
    scenario = six_partitions((Join(10.0, Member("c", frozenset({"t"}))),), pause=4.0)
    eager, coop = one_run(scenario, "sticky"), one_run(scenario, "cooperative-sticky")
    (rebalance,) = coop.rebalances[1:]
    assert (rebalance.start, rebalance.end, rebalance.rounds) == (10.0, 18.0, 2)
    assert rebalance.withheld == 2 and rebalance.moved == 2
    s = coop.series
    # first round: a and b keep consuming everything (40/s against 6/s produced)
    assert s.unowned[at(coop, 12.0)] == 0
    assert s.total[at(coop, 14.0)] - s.total[at(coop, 10.0)] == pytest.approx(4 * (6 - 40))
    # second round: the two partitions c gets are revoked and idle; c owns nothing yet
    assert s.members["c"][at(coop, 16.0)] == 0
    assert s.unowned[at(coop, 16.0)] > 0
    # (a sample at t is the state at the end of the step ending at t)
    assert s.unowned[at(coop, 14.0)] == 0
    assert s.unowned[at(coop, 18.0)] - s.unowned[at(coop, 15.0)] == pytest.approx(3 * 2.0)
    assert s.members["c"][at(coop, 19.0)] > 0 and s.unowned[at(coop, 19.0)] == 0
    # eager sticky hands them over at 14 s, the cooperative one at 18 s
    assert eager.series.members["c"][at(eager, 15.0)] > 0
    assert eager.rebalances[1].end == 14.0


def test_balanced_on_the_cooperative_protocol_pauses_only_what_moves():
    """balanced prefers the eager protocol and supports the cooperative one; on it, as in
    Kafka's cooperative rebalance, a and b keep reading through the first round, revoke at its
    end only the two partitions c gets, and the follow-up round hands those to c and moves
    nothing else: two rounds, and only the two moved partitions pause (from 14 s to 18 s)."""
    scenario = six_partitions((Join(10.0, Member("c", frozenset({"t"}))),), pause=4.0)
    balanced = create("balanced")
    eager = run_strategy(scenario, balanced, 100_000)
    coop = run_strategy(scenario, balanced, 100_000, RebalanceProtocol.COOPERATIVE)
    assert (eager.protocol, coop.protocol) == (RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE)
    assert [(r.start, r.end, r.rounds, r.withheld, r.moved) for r in eager.rebalances[1:]] == [
        (10.0, 14.0, 1, 0, 2)
    ]
    assert [(r.start, r.end, r.rounds, r.withheld, r.moved) for r in coop.rebalances[1:]] == [
        (10.0, 18.0, 2, 2, 2)
    ]
    s = coop.series
    # first round: nothing pauses, a and b read 40/s against 6/s produced
    assert s.unowned[at(coop, 14.0)] == 0
    assert s.total[at(coop, 14.0)] - s.total[at(coop, 10.0)] == pytest.approx(4 * (6 - 40))
    # follow-up round: only the two withheld partitions pause (2/s produced into them)
    assert s.unowned[at(coop, 18.0)] - s.unowned[at(coop, 15.0)] == pytest.approx(3 * 2.0)
    assert s.members["c"][at(coop, 18.0)] == 0
    assert s.members["c"][at(coop, 19.0)] > 0 and s.unowned[at(coop, 19.0)] == 0
    # under the eager protocol everything pauses for the round
    assert eager.series.unowned[at(eager, 12.0)] == eager.series.total[at(eager, 12.0)]


def test_the_built_in_scenario_settles_balanced_cooperative_joins_in_two_rounds():
    """The join of the built-in scenario (10 members, 133 partitions, producers at 70%):
    balanced's follow-up rounds place what the rounds before withheld, and the join settles in
    two rounds, 57 partitions withheld in all (before, each follow-up round planned afresh
    and moved a few owned partitions again: four rounds; with the catch-up rounds' restarts
    every round, before CATCH_UP_RESTARTS, two rounds and 25; before plans were searched on
    the catch-up time with the pause priced, three rounds and 31; before the finer step near
    capacity (balanced.CATCH_UP_STEP), whose first plan is another, three rounds and 40, and
    the group drained 2 s sooner, in 224 s)."""
    run = run_strategy(default_scenario(), create("balanced"), 10, RebalanceProtocol.COOPERATIVE)
    join = run.rebalances[1]
    assert join.causes == ("consumer-new joins",)
    assert (join.rounds, join.withheld) == (2, 57)
    # and it drains well before balanced on the eager protocol
    eager = run_strategy(default_scenario(), create("balanced"), 10)
    assert run.drain_time is not None and eager.drain_time is not None
    assert run.drain_time < eager.drain_time


def test_a_protocol_the_strategy_does_not_support_is_refused():
    with pytest.raises(ValueError, match="'range' does not support the cooperative protocol"):
        run_strategy(six_partitions(()), create("range"), 10, RebalanceProtocol.COOPERATIVE)


def test_an_event_during_a_rebalance_restarts_the_round():
    scenario = six_partitions(
        (Join(10.0, Member("c", frozenset({"t"}))), Leave(12.0, "a")), pause=4.0
    )
    run = one_run(scenario, "range")
    assert [(r.start, r.end, r.causes) for r in run.rebalances[1:]] == [
        (10.0, 16.0, ("c joins", "a leaves"))
    ]


def test_deterministic():
    scenario = default_scenario()
    assert one_run(scenario, "lag") == one_run(scenario, "lag")


def test_ideal_follows_joins_and_leaves():
    g = rated({"t": [500, 500]}, {"t": [0.0, 0.0]}, {"a": ["t"]})
    # alone at 10/s for 50 s (500 left), then 20/s for 25 s
    scenario = Scenario(g, throughput=10.0, events=(Join(50.0, Member("b", frozenset({"t"}))),))
    assert ideal_drain_time(scenario) == pytest.approx(75.0)
    # a partition produced faster than any member reads never drains
    fast = rated({"t": [0, 5]}, {"t": [0.0, 11.0]}, {"a": ["t"], "b": ["t"]})
    assert ideal_drain_time(Scenario(fast, throughput=10.0)) is None


def test_default_scenario_runs_producers_at_70_percent_of_capacity():
    scenario = default_scenario()
    produce = sum(scenario.rate_of(p) for p in scenario.partitions())
    assert produce == pytest.approx(0.7 * scenario.throughput * len(scenario.group.members))
    assert [type(e) for e in scenario.events] == [Join, Leave]
    assert len(with_load(scenario.group, throughput=1.0, load=0.5).members) == 9


def test_simulate_runs_every_strategy_by_default():
    g = rated({"t": [100, 50]}, {"t": [1.0, 1.0]}, {"a": ["t"], "b": ["t"]})
    sim = simulate(Scenario(g, throughput=10.0, horizon=50.0))
    assert [r.strategy for r in sim.runs] == names()
    assert sim.backlog == 150 and sim.produce_rate == 2 and sim.capacity == 20
    assert all(sim.vs_ideal(r) is not None and sim.vs_ideal(r) >= 1 for r in sim.runs)


# -- the scenario file ----------------------------------------------------------------------

GROUP = {
    "group": "g",
    "topics": {"t": {"partitions": [{"partition": 0, "lag": 300}, {"partition": 1, "lag": 0}]}},
    "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}],
}


def scenario_data(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "group": json.loads(json.dumps(GROUP)),
        "throughput": 10,
        "member_throughput": {"a": 5},
        "rates": {"t": [1, 2.5]},
        "events": [
            {"time": 5, "join": {"id": "c", "topics": ["t"], "throughput": 20}},
            {"time": 9, "leave": "a"},
        ],
        "dt": 0.5,
        "horizon": 60,
        "rebalance_pause": 2,
        "drain_threshold": 1,
    }
    data.update(changes)
    return data


def test_scenario_file_reads_every_key():
    sc = parse_scenario(scenario_data(), "s.json")
    assert sc.name == "s" and sc.group.id == "g"
    assert sc.throughput_of("a") == 5 and sc.throughput_of("b") == 10
    assert sc.throughput_of("c") == 20
    assert sc.rates == {TopicPartition("t", 0): 1.0, TopicPartition("t", 1): 2.5}
    assert sc.events == (Join(5.0, Member("c", frozenset({"t"}))), Leave(9.0, "a"))
    assert (sc.dt, sc.horizon, sc.rebalance_pause, sc.drain_threshold) == (0.5, 60, 2, 1)
    minimal = parse_scenario({"group": GROUP, "rates": {"t": 3}}, "m.json")
    assert minimal.rates[TopicPartition("t", 1)] == 3.0 and minimal.events == ()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"horizn": 5}, "s.json: horizn: unknown key (expected one of"),
        ({"dt": 0}, "s.json: dt: must be positive, got 0"),
        ({"dt": "1"}, 's.json: dt: expected a number, got "1"'),
        ({"rebalance_pause": -1}, "s.json: rebalance_pause: must not be negative, got -1"),
        ({"horizon": 1e9}, "s.json: horizon: horizon ÷ dt is"),
        ({"member_throughput": {"zz": 3}}, "s.json: member_throughput.zz: not a member"),
        ({"rates": {"u": 1}}, "s.json: rates.u: unknown topic"),
        ({"rates": {"t": [1]}}, "s.json: rates.t: 1 rates for 2 partitions"),
        ({"rates": {"t": [1, -2]}}, "s.json: rates.t-1: must not be negative, got -2"),
        (
            {"events": [{"time": 1}]},
            's.json: events[0]: expected exactly one of "join" and "leave"',
        ),
        ({"events": [{"time": 1, "leave": "a", "at": 2}]}, "s.json: events[0].at: unknown key"),
        (
            {"events": [{"time": 1, "leave": "zz"}]},
            "s.json: events[0].leave: no member 'zz' in the group at 1",
        ),
        (
            {"events": [{"time": 1, "join": {"id": "a"}}]},
            "s.json: events[0].join.id: 'a' is in the group at 1 already",
        ),
        (
            {"events": [{"time": 1, "join": {"id": "c", "topic": ["t"]}}]},
            "s.json: events[0].join.topic: unknown key",
        ),
        (
            {"events": [{"time": 1, "join": {"id": "c", "topics": ["u"]}}]},
            "s.json: events[0].join.topics: unknown topic 'u'",
        ),
        (
            {"events": [{"time": 99, "leave": "a"}]},
            "s.json: events[0].time: 99 is after the horizon",
        ),
        (
            {"group": {**GROUP, "members": [{"id": "a", "topic": ["t"]}]}},
            "s.json: group.members[0].topic: unknown key",
        ),
        ({"group": 3}, "s.json: group: expected a group object or a group file path, got 3"),
    ],
)
def test_scenario_errors_are_one_line_naming_the_key(changes, message):
    with pytest.raises(InputError) as e:
        parse_scenario(scenario_data(**changes), "s.json")
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_a_member_leaving_then_joining_again_is_fine_but_leaving_twice_is_not():
    events = [{"time": 1, "leave": "a"}, {"time": 2, "join": {"id": "a"}}]
    assert len(parse_scenario(scenario_data(events=events), "s.json").events) == 2
    # events apply in time order: the second one listed (at 1 s) comes first
    with pytest.raises(InputError, match=r"events\[0\]\.leave: no member 'a' in the group at 3"):
        parse_scenario(scenario_data(events=[{"time": 3, "leave": "a"}, {"time": 1, "leave": "a"}]))


# -- the command ----------------------------------------------------------------------------


def lagassign(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lagassign.cli", "simulate", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_default_scenario_prints_table_and_writes_pngs(tmp_path):
    out = lagassign(
        "--strategies", "range,cooperative-sticky,lag", "--plot-dir", str(tmp_path / "p")
    )
    assert out.returncode == 0, out.stderr
    assert "hot-partitions #2" in out.stdout
    for name in ("range", "cooperative-sticky", "lag", "drained at", "÷ ideal", "withheld"):
        assert name in out.stdout
    for png in ("drain-total.png", "drain-members.png"):
        assert (tmp_path / "p" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "charts written to" in out.stderr


def test_cli_scenario_file_with_group_path_as_json(tmp_path):
    (tmp_path / "g.json").write_text(json.dumps(GROUP))
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(scenario_data(group="g.json")))
    out = lagassign("--scenario", str(scenario), "--strategies", "range,sticky", "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["scenario"] == "s" and result["backlog"] == 300
    assert [r["strategy"] for r in result["runs"]] == ["range", "sticky"]
    for run in result["runs"]:
        assert run["drain_time"] is not None and run["vs_ideal"] >= 1
        assert [r["causes"] for r in run["rebalances"]] == [["start"], ["c joins"], ["a leaves"]]
        assert set(run["series"]["members"]) == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("content", "args", "fragment"),
    [
        (scenario_data(dt=-1), [], "s.json: dt: must be positive, got -1"),
        (scenario_data(extra=1), [], "s.json: extra: unknown key"),
        ('{"group": ', [], "s.json:1:11: invalid JSON"),
        (scenario_data(group="missing.json"), [], "missing.json: cannot read"),
        (scenario_data(), ["--strategies", "range,zz"], "--strategies: unknown strategy 'zz'"),
    ],
)
def test_cli_bad_scenario_is_one_line_exit_2(tmp_path, content, args, fragment):
    path = tmp_path / "s.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    out = lagassign("--scenario", str(path), *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in out.stderr


def test_cli_missing_scenario_and_unwritable_plot_dir_are_exit_2(tmp_path):
    out = lagassign("--scenario", str(tmp_path / "none.json"))
    assert out.returncode == 2 and "none.json: cannot read" in out.stderr
    blocker = tmp_path / "file"
    blocker.write_text("")
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario_data()))
    out = lagassign(
        "--scenario", str(path), "--strategies", "range", "--plot-dir", str(blocker / "d")
    )
    assert out.returncode == 2 and "--plot-dir: cannot write" in out.stderr


def test_scenario_path_errors_name_the_group_file(tmp_path: Path):
    (tmp_path / "g.json").write_text(json.dumps({**GROUP, "members": [{"id": "a"}]}))
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario_data(group="g.json", member_throughput={})))
    out = lagassign("--scenario", str(path))
    assert out.returncode == 2 and "g.json: members[0]: missing key 'topics'" in out.stderr


def test_load_scenario_reads_the_group_file_beside_it(tmp_path: Path):
    (tmp_path / "g.json").write_text(json.dumps(GROUP))
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario_data(group="g.json")))
    inline = parse_scenario(scenario_data(), str(path))
    assert load_scenario(path) == inline
    assert load_scenario(str(path)).name == "s"


def test_load_scenario_names_the_line_of_invalid_json(tmp_path: Path):
    path = tmp_path / "s.json"
    path.write_text('{"group":\n')
    with pytest.raises(InputError) as e:
        load_scenario(path)
    assert str(e.value) == f"{path}:2:1: invalid JSON: Expecting value"


def test_member_throughputs_are_the_capacities_balanced_plans_with():
    """a reads 100 msg/s, b 20. Given t-0 (30 msg/s in) b never catches up; given t-1 (5 msg/s)
    it catches up in 3,000 ÷ (20 − 5) = 200 s: time-aware balanced gives b t-1, whatever the
    equal lags say, and the group drains in the 200 s b needs."""
    t = Topic(
        "t", (Partition("t", 0, lag=3000, rate_in=30.0), Partition("t", 1, lag=3000, rate_in=5.0))
    )
    g = Group.of([t], [Member("a", frozenset({"t"}), capacity=100), Member("b", frozenset({"t"}))])
    scenario = Scenario(g, throughput=1000, member_throughput={"b": 20}, dt=1, horizon=2000)
    assert (scenario.throughput_of("a"), scenario.throughput_of("b")) == (100, 20)
    run = run_strategy(scenario, create("balanced"))
    assert run.drain_time is not None  # (with t-0, b would never catch up)
    assert run.drain_time == pytest.approx(200, abs=2)
    ideal = ideal_drain_time(scenario)
    assert ideal is not None and ideal <= run.drain_time


def test_a_leavers_partitions_count_as_moves_in_the_cli_tables():
    """``sticky`` hands a leaver's partitions to those still here: moves, not "0 moved"."""
    scenario = six_partitions((Leave(20.0, "b"),))
    result = simulate(scenario, ["sticky", "range"])
    for run in result.runs:
        (leave,) = [r for r in run.rebalances if r.causes == ("b leaves",)]
        assert leave.moved == 3, run.strategy  # b's t-3, t-4 and t-5, all to a
    from lagassign.report.simulation import rebalances_table

    cells = [list(column.cells) for column in rebalances_table(result).columns]
    assert cells[1] == ["3 moved, 4 s", "3 moved, 4 s"]


def test_a_run_not_drained_by_the_horizon_reads_the_same_in_table_and_charts():
    from lagassign.report.simulation import members_figure, summary_table, total_figure

    # range gives the 9/s partition and the 1/s one each to a 10/s member: t-0 never drains
    g = rated({"t": [1000, 10]}, {"t": [9.0, 1.0]}, {"a": ["t"], "b": ["t"]})
    result = simulate(Scenario(g, throughput=10.0, horizon=100.0), ["range"])
    (run,) = result.runs
    assert run.drain_time is None
    said = "not within 100 s"
    table = summary_table(result)
    drained = [c.header for c in table.columns].index("drained at")
    assert list(table.columns[drained].cells) == [said]
    total = total_figure(result)
    assert [t.get_text() for t in total.axes[0].get_legend().get_texts()] == [
        f"range (drained: {said})"
    ]
    members = members_figure(result)
    assert members.axes[0].get_title() == f"range — drained: {said}, 0 moves"
    texts = [t.get_text() for fig in (total, members) for ax in fig.axes for t in ax.texts]
    assert not any("never" in t for t in [*texts, members.axes[0].get_title()])


#: bench/drain.py's churn groups (capacities up to sixfold apart, and one up to twofold) whose
#: cooperative rebalance under time-aware balanced ran to the simulator's cap of 50 rounds, each
#: round moving partitions again (a rebalance storm in Kafka), so that they never drained; eager
#: balanced drained them. Now its rebalances take at most 5 and 3, 3 and 13, 10, and 3 and 3
#: rounds, and all four drain.
STORMED = (("single-topic", 8, 6), ("offsets", 0, 6), ("offsets", 6, 6), ("offsets", 5, 2))


@pytest.mark.parametrize("family,seed,spread", STORMED)
def test_balanced_cooperative_rebalances_settle_where_they_stormed(family, seed, spread):
    [sample] = [s for s in suite(seed + 1) if (s.family, s.seed) == (family, seed)]
    scenario = churn_scenario(sample, unequal=True, spread=spread)
    assert scenario is not None
    run = run_strategy(scenario, create("balanced"), 1, RebalanceProtocol.COOPERATIVE)
    assert max(r.rounds for r in run.rebalances) <= 13 < MAX_ROUNDS
    assert run.drain_time is not None


#: two consecutive follow-up rounds of a cooperative rebalance that once never settled:
#: bench/drain.py's sixfold churn, offsets #8, after the leave (docs/strategies.md, "Priced as
#: it is, the pause changes which plan is best"); what members own is what they consume
STORM = Path(__file__).parent / "data" / "storm"


@pytest.mark.parametrize(
    "name,unread", [("round-1.json", "log-0-24"), ("round-2.json", "log-0-18")]
)
def test_a_follow_up_round_gives_the_joiner_what_nobody_reads(name, unread):
    """The joiner (157 msg/s, 105 in) must take a fourth partition of log-0, and each of them
    brings about 40 msg/s: any it takes leaves it little to spare. One partition, withheld the
    round before, is unread, its lag grown (415, 423). Round 1 once withheld consumer-5's
    log-0-18 for the joiner (priced at the 10 s pause alone) and gave consumer-5 log-0-24;
    round 2, seeing the group after it, did the mirror of that, and so on for 50 rounds.
    Handed over, log-0-18 would reach the joiner a round later as far behind as the unread
    one is now: the round gives the joiner the unread one and withholds nothing, so the
    rebalance ends."""
    g = load_group(STORM / name)
    consuming = {m.id: tuple(m.owned) for m in g.members}
    round_ = rebalance_round(create("balanced"), g, consuming)
    assert round_.withheld == frozenset()
    joiner = set(map(str, round_.assignment["joiner"]))
    assert joiner == {str(tp) for tp in consuming["joiner"]} | {unread}
