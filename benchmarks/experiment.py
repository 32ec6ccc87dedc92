"""Benchmark `agentmemory experiment`: grids on serial, 2 processes and a Dask LocalCluster(2), and what sharing saves.

    .venv/bin/python benchmarks/experiment.py [--rounds 3] [--quick] [--no-readme]
    .venv/bin/python benchmarks/experiment.py --memory FOLDER [--memory-workers 4]

Three grids, on synthetic collections written once as BEIR folders under
``benchmarks/.cache`` (``synthetic_collection(seed=s, n_queries=500,
n_tags=40, vocabulary=5000, entry_length=(20, 60))``), k = 10, seed 7, each
system tested against the first (``comparisons = "baseline"``,
``n_resamples = 1000``):

* **sharing, whole process**: 24 BM25 settings (k1 x b, 6 x 4) over one
  collection of 30,000 entries against 1 setting, each as a whole
  ``python -m agentmemory experiment`` process on the serial executor, the
  two alternating (target: at most 4x);
* **k1 x b**: 40 BM25 settings (8 x 5) over 100,000 entries: tasks that share
  one index (serial, 2 processes, Dask), and serially without sharing
  (``run_experiment(share=False)``, every task builds its index, as before);
* **no shared index**: bm25 and tags on each of four collections of 100,000
  entries (8 tasks, no two share an index), also as a **whole process**
  (``python -m agentmemory experiment`` on each executor, from start to
  exit: what a user waits for).

In each of ``--rounds`` rounds (the executors' order rotated) every executor
runs each grid from an empty output folder (``resume=False``, the plan made
beforehand, so its collections are loaded), then again reusing every task
file: that second run is the **client part** (reading the task files, the
statistics, the tables, the writes), and the difference is the **task
phase**.  The **ceiling** is measured in the same round on the same work:
the no-shared-index grid cut in two halves (two collections each), the
halves as two ``agentmemory experiment`` processes one after the other, then
both at once: how much faster two processes do this work than one on this
machine now.  results.json must be byte-identical across executors (and with
sharing off).  Dask's cost per task: 400 no-op tasks submitted at once,
times the Dask tasks a grid submitted (its batches), over its task phase.

Prints a Markdown section and replaces the one between
``<!-- experiment:start -->`` and ``<!-- experiment:end -->`` in
``benchmarks/README.md``; writes the raw numbers to ``benchmarks/experiment.json``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, wait
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from agentmemory.datasets.beir import write_collection  # noqa: E402
from agentmemory.datasets.synthetic import synthetic_collection  # noqa: E402
from agentmemory.experiment import WarmPool, parse_grid, plan_experiment, run_experiment  # noqa: E402

README = HERE / "README.md"
START, END = "<!-- experiment:start -->", "<!-- experiment:end -->"
K1 = (0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4, 2.7)
B = (0.3, 0.5, 0.75, 0.9, 1.0)
SHARE_K1 = (0.6, 0.9, 1.2, 1.5, 1.8, 2.1)
SHARE_B = (0.3, 0.5, 0.75, 1.0)
NOOPS = 400
SEEDS = (2, 3, 4, 5)  # the no-shared-index grid's four collections
STATS = '[statistics]\ncomparisons = "baseline"\nn_resamples = 1000\n'


def noop(x: int) -> int:
    return x


def warm(x: int) -> int:
    """What a worker does before its first task: import agentmemory's experiment tasks (timed apart)."""
    import agentmemory.experiment.task  # noqa: F401

    return x


def started(executor) -> float:
    """Seconds until every worker of ``executor`` (2) has imported agentmemory: start-up, not a task's work."""
    t0 = time.perf_counter()
    wait([executor.submit(warm, i) for i in range(8)])
    return time.perf_counter() - t0


def collection_folder(entries: int, seed: int) -> Path:
    folder = HERE / ".cache" / (f"experiment-{entries}-500" + ("" if seed == 1 else f"-seed{seed}"))
    if not (folder / "corpus.jsonl").is_file():
        print(f"writing a synthetic collection to {folder.relative_to(HERE.parent)}", flush=True)
        collection = synthetic_collection(
            seed=seed, n_entries=entries, n_queries=500, n_tags=40, vocabulary=5000, entry_length=(20, 60)
        )
        write_collection(collection, folder)
    return folder


def grid_text(name: str, systems: str, folders: list[Path]) -> str:
    text = f'name = "{name}"\nk = 10\nseeds = 7\nsystems = {systems}\n{STATS}'
    for i, folder in enumerate(folders):
        text += f'[[collections]]\nname = "c{i}"\npath = "{folder.as_posix()}"\n'
    return text


def bm25_grid(k1: tuple[float, ...], b: tuple[float, ...]) -> str:
    return f'[{{ retriever = "bm25", grid = {{ k1 = {list(k1)}, b = {list(b)} }} }}]'


def digest(folder: Path) -> str:
    return hashlib.sha256((folder / "results.json").read_bytes()).hexdigest()


def timed_runs(plan, executor, out: Path, share: bool = True) -> dict:
    """The grid from empty, then again from its task files: total, client part, task phase; the result's digest."""
    t0 = time.perf_counter()
    first = run_experiment(plan, executor, out=out, resume=False, share=share)
    total = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = run_experiment(plan, executor, out=out)
    client = time.perf_counter() - t0
    assert first.ok and again.reused == len(plan.tasks), (first.failures, again.summary())
    return {
        "total_s": total,
        "client_s": client,
        "tasks_s": total - client,
        "indexes_built": first.indexes_built,
        "batches": first.batches,
        "results_sha256": digest(out),
    }


def noop_overhead(executor) -> float:
    """Seconds per task of ``NOOPS`` no-op tasks submitted at once (after a warm-up)."""
    wait([executor.submit(noop, i) for i in range(8)])
    t0 = time.perf_counter()
    wait([executor.submit(noop, i) for i in range(NOOPS)])
    return (time.perf_counter() - t0) / NOOPS


EXECUTOR_ARGS = {
    "serial": [],
    "processes": ["--executor", "processes", "--workers", "2"],
    "dask": ["--executor", "dask", "--workers", "2"],
}


def experiment_process(grid: Path, out: Path, executor: str = "serial") -> subprocess.Popen:
    command = [sys.executable, "-m", "agentmemory", "experiment", str(grid), "--out", str(out)]
    command += EXECUTOR_ARGS[executor]
    return subprocess.Popen([*command, "--no-resume", "--no-progress"], stdout=subprocess.DEVNULL)


def whole(grid: Path, out: Path, executor: str = "serial") -> float:
    """Seconds of one whole ``agentmemory experiment`` process (from empty; serial unless ``executor``)."""
    t0 = time.perf_counter()
    if experiment_process(grid, out, executor).wait() != 0:
        raise SystemExit(f"agentmemory experiment {grid} failed")
    return time.perf_counter() - t0


def ceiling(halves: list[Path], tmp: Path) -> dict:
    """The two halves one after the other in one process each, then both at once: the time ratio."""
    one = sum(whole(grid, tmp / f"one-{i}") for i, grid in enumerate(halves))
    t0 = time.perf_counter()
    processes = [experiment_process(grid, tmp / f"two-{i}") for i, grid in enumerate(halves)]
    if any(p.wait() != 0 for p in processes):
        raise SystemExit("agentmemory experiment failed on a half grid")
    two = time.perf_counter() - t0
    return {"one_s": one, "two_s": two, "ceiling": one / two}


def burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def cpu_scaling() -> float:
    """How much faster 2 processes do 2 units of pure-Python work than 1 process."""
    n = 15_000_000
    t0 = time.perf_counter()
    burn(n)
    burn(n)
    one = time.perf_counter() - t0
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        list(pool.map(burn, [10, 10]))
        t0 = time.perf_counter()
        list(pool.map(burn, [n, n]))
        two = time.perf_counter() - t0
    return one / two


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def load_seconds(plan) -> float:
    """Seconds to load one of the plan's collections in this process (what a worker does for each it is given)."""
    from agentmemory import datasets

    source = plan.collections[0].source
    t0 = time.perf_counter()
    datasets.load(source.path, format=source.format, **dict(source.options))
    return time.perf_counter() - t0


def one_round(plans: dict, grids: dict, tmp: Path, order: list[str], distributed) -> dict:
    out: dict = {"load_before": load_average(), "cpu_scaling": cpu_scaling(), "load_s": load_seconds(plans["unshared"])}
    out["ceiling"] = ceiling(grids["halves"], tmp)
    pair = [("g24", grids["share24"]), ("g1", grids["share1"])]
    out["sharing"] = {name: whole(grid, tmp / f"{name}-{len(list(tmp.iterdir()))}") for name, grid in pair}
    out["sharing"]["ratio"] = out["sharing"]["g24"] / out["sharing"]["g1"]
    out["whole"] = {}
    for name in order:  # the no-shared-index grid as a whole `agentmemory experiment` process on each executor
        folder = tmp / f"whole-{name}"
        out["whole"][name] = whole(grids["unshared"], folder, name)
        out["whole"][f"{name}_sha256"] = digest(folder)
    for name in order:
        print(f"  {name} ...", flush=True)
        runs = {}
        if name == "serial":
            for grid, plan in plans.items():
                runs[grid] = timed_runs(plan, None, tmp / f"{name}-{grid}-{len(list(tmp.iterdir()))}")
            plan = plans["k1b"]
            runs["k1b_unshared"] = timed_runs(plan, None, tmp / f"unshared-{len(list(tmp.iterdir()))}", share=False)
        elif name == "processes":
            with WarmPool(2) as pool:  # what `--executor processes --workers 2` runs on
                runs["startup_s"] = started(pool)
                for grid, plan in plans.items():
                    runs[grid] = timed_runs(plan, pool, tmp / f"{name}-{grid}-{len(list(tmp.iterdir()))}")
                runs["noop_s"] = noop_overhead(pool)
        else:
            t0 = time.perf_counter()
            cluster = distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
            )
            client = distributed.Client(cluster)
            client.wait_for_workers(2)
            runs["startup_s"] = time.perf_counter() - t0 + started(client.get_executor(pure=False))
            try:
                for grid, plan in plans.items():
                    runs[grid] = timed_runs(plan, client, tmp / f"{name}-{grid}-{len(list(tmp.iterdir()))}")
                runs["noop_s"] = noop_overhead(client.get_executor(pure=False))
            finally:
                client.close()
                cluster.close()
        out[name] = runs
    out["load_after"] = load_average()
    return out


def write_grids(folder: Path, args) -> dict:
    big = 20_000 if args.quick else 100_000
    small = 10_000 if args.quick else 30_000
    four = [collection_folder(big, seed) for seed in SEEDS]  # not k1 x b's (seed 1): a worker keeps that index
    shared = collection_folder(small, 1)
    texts = {
        "share24": grid_text("share24", bm25_grid(SHARE_K1, SHARE_B), [shared]),
        "share1": grid_text("share1", '["bm25"]', [shared]),
        "k1b": grid_text("bm25-k1-b", bm25_grid(K1, B), [collection_folder(big, 1)]),
        "unshared": grid_text("unshared", '["bm25", "tags"]', four),
        "half0": grid_text("half0", '["bm25", "tags"]', four[:2]),
        "half1": grid_text("half1", '["bm25", "tags"]', four[2:]),
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = folder / f"{name}.toml"
        paths[name].write_text(text, encoding="utf-8")
    paths["halves"] = [paths.pop("half0"), paths.pop("half1")]
    return {"paths": paths, "texts": texts, "entries": big, "shared_entries": small}


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "numba", "dask", "distributed"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} logical cores)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} logical cores)"


def summarise(rounds: list[dict]) -> dict:
    """Medians over the rounds of every figure, and the ratios taken round by round."""
    med = statistics.median
    out: dict = {
        "ceiling": med(r["ceiling"]["ceiling"] for r in rounds),
        "ceilings": [r["ceiling"]["ceiling"] for r in rounds],
        "cpu_scaling": [r["cpu_scaling"] for r in rounds],
        "sharing": {key: med(r["sharing"][key] for r in rounds) for key in ("g24", "g1", "ratio")},
        "sharing_ratios": [r["sharing"]["ratio"] for r in rounds],
        "load": [(r["load_before"], r["load_after"]) for r in rounds],
        "collection_load_s": med(r["load_s"] for r in rounds),
    }
    for name in ("serial", "processes", "dask"):
        row: dict = {}
        for grid in ("k1b", "unshared", "k1b_unshared"):
            if grid not in rounds[0][name]:
                continue
            runs = [r[name][grid] for r in rounds]
            row[grid] = {k: med(run[k] for run in runs) for k in ("total_s", "client_s", "tasks_s")}
            row[grid]["indexes_built"] = runs[0]["indexes_built"]
            row[grid]["batches"] = runs[0]["batches"]
            if name != "serial":
                speedups = [r["serial"][grid]["tasks_s"] / r[name][grid]["tasks_s"] for r in rounds]
                row[grid]["speedup"] = med(speedups)
                row[grid]["of_ceiling"] = med(s / r["ceiling"]["ceiling"] for s, r in zip(speedups, rounds))
        for key in ("noop_s", "startup_s"):
            if key in rounds[0][name]:
                row[key] = med(r[name][key] for r in rounds)
        out[name] = row
    dask = out["dask"]
    for grid in ("k1b", "unshared"):
        shares = [r["dask"]["noop_s"] * r["dask"][grid]["batches"] / r["dask"][grid]["tasks_s"] for r in rounds]
        dask[grid]["overhead_share"] = med(shares)
    out["whole"] = {name: med(r["whole"][name] for r in rounds) for name in ("serial", "processes", "dask")}
    for name in ("processes", "dask"):
        speedups = [r["whole"]["serial"] / r["whole"][name] for r in rounds]
        out["whole"][f"{name}_speedups"] = speedups
        out["whole"][f"{name}_of_ceiling"] = [x / r["ceiling"]["ceiling"] for x, r in zip(speedups, rounds)]
    out["sharing_gain"] = med(r["serial"]["k1b_unshared"]["tasks_s"] / r["serial"]["k1b"]["tasks_s"] for r in rounds)
    return out


def peak_mb() -> float:
    """This process's peak resident memory since it started its program, MB: ``VmHWM`` of /proc/self/status on
    Linux.  Not ``ru_maxrss``: a spawned worker's counts the client's resident memory at the fork before its
    ``exec`` (a worker started by a client holding 500 MB reads 500 MB before doing anything)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):  # not Linux: ru_maxrss (kB on Linux, bytes on macOS)
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory(folder: Path, workers: int) -> dict:
    """The sum of the workers' peak RSS (:func:`peak_mb`) on a grid over the collection at ``folder`` (BM25 with
    ``workers`` k1 settings: one index group), on a pool of ``workers`` against a pool of 1; prints both and
    their ratio.

    What the plan does with that group decides the ratio: on LongMemEval-M's shape (2.5M entries in 500 scopes,
    500 queries) the group is one batch, whose build outweighs its searching, and on a pool of several workers
    it runs in parts by scope (:func:`~agentmemory.experiment.plan.scope_split`): the worker that planned the
    collection writes it as a snapshot the others map (:mod:`agentmemory.collection.snapshot`), each keeps its
    share of the scopes and builds only their indexes.  So the pool holds one index between its workers and one
    reading of the collection.  ``VmHWM`` counts the mapped pages a worker touched in each worker that touched
    them, so the sum overstates a pool that shares them."""
    k1 = tuple(0.6 + 0.3 * i for i in range(workers))
    text = grid_text("memory", bm25_grid(k1, (0.75,)), [folder])
    found = {}
    for size in (1, workers):
        with tempfile.TemporaryDirectory() as tmp, WarmPool(size) as pool:
            wait([pool.submit_to(slot, noop, 0) for slot in pool.slots])
            base = [pool.submit_to(slot, peak_mb).result() for slot in pool.slots]
            t0 = time.perf_counter()
            result = run_experiment(parse_grid(text, source="memory grid"), pool, out=Path(tmp) / "out")
            seconds = time.perf_counter() - t0
            assert result.ok, result.failures
            peaks = [pool.submit_to(slot, peak_mb).result() for slot in pool.slots]
            found[size] = {"peaks_mb": peaks, "started_mb": base, "s": seconds, "batches": result.batches}
            print(
                f"{size} worker(s): {result.batches} batches, {seconds:.1f} s, peak RSS per worker "
                + ", ".join(f"{x:.0f}" for x in peaks)
                + f" MB (at start {', '.join(f'{x:.0f}' for x in base)}), sum {sum(peaks):.0f} MB",
                flush=True,
            )
    ratio = sum(found[workers]["peaks_mb"]) / sum(found[1]["peaks_mb"])
    load = load_average()
    print(f"{workers} workers hold {ratio:.2f}x the memory of 1 (load average {load:.1f})")
    return {
        "folder": folder.name,
        "workers": workers,
        "one": found[1],
        "pool": found[workers],
        "ratio": ratio,
        "load": load,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the executors' order rotated (medians reported)")
    ap.add_argument("--quick", action="store_true", help="collections of 20,000 and 10,000 entries, one round")
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite benchmarks/README.md")
    ap.add_argument("--memory", type=Path, help="only measure the workers' peak memory on this collection folder")
    ap.add_argument("--memory-workers", type=int, default=4, help="the pool size --memory compares with 1 worker")
    args = ap.parse_args()
    if args.memory is not None:
        memory(args.memory.resolve(), args.memory_workers)
        return
    if args.quick:
        args.rounds = 1
    import distributed

    started = _dt.datetime.now(_dt.timezone.utc)
    t_start = time.perf_counter()
    names = ["serial", "processes", "dask"]
    rounds = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        grids = write_grids(tmp, args)
        t0 = time.perf_counter()
        plans = {
            name: plan_experiment(parse_grid(grids["texts"][name], source=f"benchmark grid {name}"))
            for name in ("k1b", "unshared")
        }
        plan_s = time.perf_counter() - t0
        for i in range(args.rounds):
            order = names[i % 3 :] + names[: i % 3]
            print(f"round {i + 1}: {', '.join(order)}", flush=True)
            work = tmp / f"round{i}"
            work.mkdir()
            rounds.append(one_round(plans, grids["paths"], work, order, distributed))
    scopes = HERE / ".cache" / "whole" / "scopes-500x5000"  # written by whole_process.py (make bench runs it first)
    pool_memory = None
    if not args.quick and (scopes / "corpus.jsonl").is_file():
        print(f"memory: a pool of 4 against 1 on {scopes.name}", flush=True)
        pool_memory = memory(scopes, 4)
    digests = {
        grid: {r[name][grid]["results_sha256"] for r in rounds for name in names}
        | ({r["serial"]["k1b_unshared"]["results_sha256"] for r in rounds} if grid == "k1b" else set())
        for grid in ("k1b", "unshared")
    }
    results = {
        "rounds": rounds,
        "summary": summarise(rounds),
        "identical": {grid: len(found) == 1 for grid, found in digests.items()}
        | {"whole": len({r["whole"][f"{n}_sha256"] for r in rounds for n in names} | digests["unshared"]) == 1},
        "plan_s": plan_s,
        "tasks": {name: len(plan.tasks) for name, plan in plans.items()},
        "entries": grids["entries"],
        "shared_entries": grids["shared_entries"],
        "versions": versions(),
        "cpu": cpu(),
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": time.perf_counter() - t_start,
        "command": "python benchmarks/experiment.py " + " ".join(sys.argv[1:]),
        "pool_memory": pool_memory,
    }
    text = report(results)
    print("\n" + text)
    (HERE / "experiment.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not args.no_readme and README.is_file():
        readme = README.read_text(encoding="utf-8")
        if START in readme and END in readme:
            head, rest = readme.split(START, 1)
            _, tail = rest.split(END, 1)
            README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
            print(f"\nwrote the results into {README.relative_to(HERE.parent)}")


def _row(label: str, run: dict, serial: bool) -> str:
    speed = "" if serial else f"{run['speedup']:.2f}x"
    share = "" if serial else f"{run['of_ceiling']:.2f}"
    return (
        f"| {label} | {run['total_s']:.2f} | {run['tasks_s']:.2f} | {run['client_s']:.2f} | {speed} | {share} "
        f"| {run['indexes_built']} | {run['batches']} |"
    )


def _whole_lines(r: dict) -> list[str]:
    """The paragraph on the whole process of the no-shared-index grid on each executor."""
    w = r["summary"]["whole"]
    parts = []
    for label, name in (("a pool of 2 processes", "processes"), ("Dask LocalCluster(2)", "dask")):
        speedups, shares = w[f"{name}_speedups"], w[f"{name}_of_ceiling"]
        parts.append(
            f"{label} {w[name]:.2f} s, **{statistics.median(speedups):.2f}x** serial (rounds: "
            + ", ".join(f"{x:.2f}" for x in speedups)
            + f"), **{statistics.median(shares):.2f} of the ceiling** (rounds: "
            + ", ".join(f"{x:.2f}" for x in shares)
            + ")"
        )
    return [
        f"**The whole process** (`agentmemory experiment` over the four collections of {r['entries']:,} entries, "
        "bm25 and tags, from start to exit: imports, planning, the workers' start, the tasks, the statistics "
        f"and writes): serial {w['serial']:.2f} s; " + "; ".join(parts) + ".  Each collection is read once per "
        "grid: on the pool and on Dask by the worker that plans it, which then runs its tasks.  results.json "
        f"identical to the tables' runs: {'yes' if r['identical']['whole'] else 'NO'}.",
        "",
    ]


def report(r: dict) -> str:
    s = r["summary"]
    n = len(r["rounds"])
    tasks = r["tasks"]
    entries = f"{r['entries']:,}"
    executors = [("serial", "serial"), ("2 processes (spawn)", "processes"), ("Dask LocalCluster(2)", "dask")]
    header = [
        "| executor | wall s (from empty) | task phase s | client part s | speed-up over serial (task phase) "
        "| of the ceiling | indexes built | executor calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines = [
        f"Measured {r['date']} by `{r['command'].strip()}` ({r['elapsed_s'] / 60:.1f} min) on {r['cpu']}; medians "
        f"of {n} rounds, the executors' order rotated each round; ratios taken within each round.  The machine "
        "was shared with other work: 1-minute load average before and after each round "
        + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in s["load"])
        + ".",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()) + ".",
        "",
        f"**The ceiling** (this machine, this round, this work: the no-shared-index grid's two halves as two "
        f"processes one after the other, then at once): {s['ceiling']:.2f}x (rounds: "
        + ", ".join(f"{x:.2f}" for x in s["ceilings"])
        + "); pure-Python work on 2 processes: "
        + ", ".join(f"{x:.2f}x" for x in s["cpu_scaling"])
        + ".",
        "",
        *_whole_lines(r),
        f"**Sharing, whole process** (serial, from empty): 24 BM25 settings (k1 x b) over {r['shared_entries']:,} "
        f"entries {s['sharing']['g24']:.2f} s against one setting {s['sharing']['g1']:.2f} s: "
        f"**{s['sharing']['ratio']:.2f}x** (rounds: " + ", ".join(f"{x:.2f}" for x in s["sharing_ratios"]) + ").",
        "",
        f"### A BM25 k1 x b grid ({tasks['k1b']} tasks sharing one index) on {entries} entries, 500 queries",
        "",
        *header,
    ]
    for label, name in executors:
        lines.append(_row(label, s[name]["k1b"], name == "serial"))
    unshared = s["serial"]["k1b_unshared"]
    lines.append(
        f"| serial, sharing off (`share=False`: each task builds its index) | {unshared['total_s']:.2f} | "
        f"{unshared['tasks_s']:.2f} | {unshared['client_s']:.2f} |  |  | {unshared['indexes_built']} | "
        f"{unshared['batches']} |"
    )
    lines += [
        "",
        f"Sharing the index makes the serial task phase {s['sharing_gain']:.2f}x as fast.  The client part is "
        f"the statistics, tables and writes for {tasks['k1b']} systems at 500 queries (reading {tasks['k1b']} "
        "task files included).",
        "",
        f"### No shared index: bm25 and tags on four collections of {entries} entries ({tasks['unshared']} tasks)",
        "",
        *header,
    ]
    for label, name in executors:
        lines.append(_row(label, s[name]["unshared"], name == "serial"))
    dask, procs = s["dask"], s["processes"]
    lines += [
        "",
        f"Planning both grids in this script's process (for the two tables; each loads its collections here): "
        f"{r['plan_s']:.2f} s, before the timings above; the serial executor finds the collections loaded, a "
        f"worker loads each one it is given itself ({s['collection_load_s']:.2f} s for one of these collections "
        "in this script's process), which the task phases of the pool and of Dask above include (in a whole "
        "process the workers plan the collections instead, see above).  "
        "results.json byte-identical on all executors in every round: k1 x b "
        f"{'yes' if r['identical']['k1b'] else 'NO'} (sharing off too), no shared index "
        f"{'yes' if r['identical']['unshared'] else 'NO'}.",
        "",
        f"Start-up, not in the times above (workers started and agentmemory imported in them, before the "
        f"first grid): the pool {procs['startup_s']:.2f} s, the LocalCluster(2) {dask['startup_s']:.2f} s.  "
        "Dask's own costs: "
        f"{dask['noop_s'] * 1000:.2f} ms per no-op task ({NOOPS} submitted at once; the process pool "
        f"{procs['noop_s'] * 1000:.2f} ms), so its per-task overhead is {100 * dask['k1b']['overhead_share']:.2f}% "
        f"of the k1 x b task phase ({dask['k1b']['batches']} Dask tasks) and "
        f"{100 * dask['unshared']['overhead_share']:.2f}% of the no-shared-index one "
        f"({dask['unshared']['batches']} Dask tasks).",
    ]
    lines += ["", *_memory_lines(r.get("pool_memory"))]
    return "\n".join(lines)


def _memory_lines(m: dict | None) -> list[str]:
    """The pool-memory paragraph of the report (see :func:`memory`)."""
    head = "### Memory of a pool on LongMemEval-M's shape (500 scopes x 5,000 entries, BM25 with 4 k1 settings)"
    if not m:
        return [
            head,
            "",
            "Not measured in this run: `benchmarks/.cache/whole/scopes-500x5000` is written by "
            "`run.py --only whole`, which `make bench` runs first (or `--quick` was given).",
        ]
    one, many = m["one"], m["pool"]
    return [
        head,
        "",
        f"A pool of {m['workers']} holds {m['ratio']:.2f}x the memory of a pool of 1 (the sum of the workers' peak "
        f"RSS, `VmHWM`: {sum(many['peaks_mb']):,.0f} MB against {sum(one['peaks_mb']):,.0f} MB; per worker "
        + ", ".join(f"{x:,.0f}" for x in many["peaks_mb"])
        + f" MB), in {many['s']:.1f} s against {one['s']:.1f} s ({many['batches']} and {one['batches']} executor "
        f"calls; load average {m['load']:.1f}).  On the pool the index group runs in parts by scope (one call "
        "each): the worker that planned the collection writes it once as a snapshot, the others map it instead "
        "of reading the corpus, each keeps its share of the 500 scopes and builds only their indexes, so the "
        "workers hold one index between them.  A worker's `VmHWM` counts the snapshot's pages it touched, "
        "which the workers share, so the sum overstates what the pool holds (see `--memory`).",
    ]


if __name__ == "__main__":
    main()
