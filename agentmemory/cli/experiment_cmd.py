"""``agentmemory experiment``: a grid of evaluations run as tasks on an executor (serial, processes, Dask).

``--out`` (or its default, ``experiments/<grid name>`` in the working folder) is fixed to an absolute
path before the grid is read, so a plugin that changes the working folder moves none of the grid's files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path, PurePath

from agentmemory.cli.args import PROG, parse_int, progress
from agentmemory.errors import NumberTextError, ParameterError, UnknownNameError, check_positive_int
from agentmemory.experiment import open_executor, plan_experiment, read_grid, run_experiment
from agentmemory.experiment.executors import EXECUTORS
from agentmemory.experiment.grid import Grid
from agentmemory.experiment.plan import default_out
from agentmemory.files.numbers import parse_number
from agentmemory.files.output_plan import OutputPath, OutputPlan

__all__ = ["run"]


def _workers(args: argparse.Namespace) -> int | None:
    """``--workers`` as an integer >= 1, or ``None`` (the executor's default: the CPUs)."""
    if args.workers is None:
        return None
    return check_positive_int("--workers", parse_int("--workers", args.workers, "an integer >= 1"))


def _connect_timeout(args: argparse.Namespace) -> float:
    """``--connect-timeout`` as a number of seconds > 0."""
    try:
        timeout = parse_number(args.connect_timeout)
    except NumberTextError as err:
        raise ParameterError(
            "--connect-timeout", args.connect_timeout, err.problem, "give seconds > 0, e.g. 10"
        ) from None
    if not 0 < timeout < float("inf"):
        raise ParameterError("--connect-timeout", args.connect_timeout, "is not a number of seconds > 0", "e.g. 10")
    return timeout


def _declare_outputs(outputs: OutputPlan, grid: Grid, out: OutputPath) -> None:
    """The grid's inputs, and the outputs ``--out`` will hold (never over an input of the grid)."""
    outputs.add_inputs(
        path
        for c in grid.collections
        for path in (c.path, *(p for r in c.runs for p in (r.path, r.memories) if p is not None))
    )
    for name in ("results.json", "per_query.csv", "per_query.parquet"):
        outputs.file("--out", out / name, example="experiments/grid/")


def run(args: argparse.Namespace) -> int:
    """Run ``agentmemory experiment``: exit status 1 when a task (or a report) failed."""
    if args.executor not in EXECUTORS:
        raise UnknownNameError("--executor", args.executor, EXECUTORS)
    workers = _workers(args)
    timeout = _connect_timeout(args)
    here = Path.cwd()  # the default --out is fixed here, as a given one was when parsed, before any plugin runs
    outputs = OutputPlan([args.grid])
    given = outputs.folder("--out", args.out) if args.out else None  # refused before any loading
    grid = read_grid(args.grid)
    target: OutputPath = args.out or OutputPath(default_out(grid), base=here)
    out = given if given is not None else outputs.folder("--out", target)
    _declare_outputs(outputs, grid, target)
    with open_executor(args.executor, workers=workers, scheduler=args.scheduler, timeout=timeout) as executor:
        plan = plan_experiment(grid, executor)  # the workers start (and load the collections) meanwhile
        result = run_experiment(
            plan,
            executor,
            out=out,
            resume=args.resume,
            reports=args.reports,
            parquet=args.parquet,
            progress=progress(args),
        )
    for failure in result.failures:
        print(f"{PROG}: task failed: {failure.task.describe()}: {failure.error}", file=sys.stderr)
    for name, error in result.report_failures:
        print(f"{PROG}: report failed: collection {name}: {error}", file=sys.stderr)
    for warning in result.merged.warnings:  # too few resamples for any marker of a comparison table
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    evaluations = len([e for e in result.results["evaluations"] if e["systems"]])
    print(f"Experiment {plan.grid.name}: {result.summary()}; {evaluations} evaluations.")
    print(
        f"Wrote {PurePath(str(target))}/: results.json, per_query.csv, tables/" + (", reports/" if args.reports else "")
    )
    return 0 if result.ok else 1
