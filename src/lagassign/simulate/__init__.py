"""The drain simulator: a consumer group working off its backlog while producers keep producing,
under each strategy, with members joining and leaving (docs/simulate.md).

Pure and deterministic, like the rest of the core; the scenario file is read by
:mod:`lagassign.formats.scenario` and the results are rendered by
:mod:`lagassign.report.simulation`.

* :mod:`~lagassign.simulate.scenario`: what to simulate (the group, throughputs, events);
* :mod:`~lagassign.simulate.engine`: the simulation, one strategy at a time, step by step;
* :mod:`~lagassign.simulate.results`: what a run reports;
* :mod:`~lagassign.simulate.ideal`: the fluid lower bound of the drain time;
* :mod:`~lagassign.simulate.generators`: generated scenarios (the built-in one included).
"""
