"""Experiments: a grid of evaluations run as independent tasks on any executor, resumable, byte-identical.

* :mod:`~agentmemory.experiment.grid`: the TOML grid file and its records;
* :mod:`~agentmemory.experiment.plan`: collections loaded, tasks listed and keyed;
* :mod:`~agentmemory.experiment.task`: one task, a pure function run on a worker;
* :mod:`~agentmemory.experiment.executors`: serial, a process pool, Dask;
* :mod:`~agentmemory.experiment.merge`: per-query rows into results, statistics once;
* :mod:`~agentmemory.experiment.reports`: a report notebook per collection;
* :mod:`~agentmemory.experiment.run`: :func:`run_experiment`, all of it.

::

    from agentmemory.experiment import run_experiment

    result = run_experiment("examples/grid.toml", out="out/")            # serial
    from agentmemory.experiment import WarmPool
    with WarmPool(2) as pool:                                            # any Executor works; on this one each
        run_experiment("examples/grid.toml", pool, out="out/")           # collection is read once: the same bytes
    from distributed import Client
    with Client() as client:                                             # the dask extra
        run_experiment("examples/grid.toml", client, out="out/")         # the same bytes

Nothing here imports Dask until a Dask executor is asked for.
"""

from agentmemory.experiment.executors import EXECUTORS, SerialExecutor, WarmPool, open_executor
from agentmemory.experiment.grid import Grid, parse_grid, read_grid
from agentmemory.experiment.plan import Plan, plan_experiment
from agentmemory.experiment.run import ExperimentResult, run_experiment

__all__ = [
    "EXECUTORS",
    "ExperimentResult",
    "Grid",
    "Plan",
    "SerialExecutor",
    "WarmPool",
    "open_executor",
    "parse_grid",
    "plan_experiment",
    "read_grid",
    "run_experiment",
]
