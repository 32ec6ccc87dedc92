"""Benchmark `agentmemory experiment`: one grid on serial, 2 processes and a Dask LocalCluster(2).

    .venv/bin/python benchmarks/experiment.py [--entries 100000] [--queries 500] [--no-readme]

The grid: BM25 k1 x b (8 x 5 = 40 tasks) on a synthetic collection of
``--entries`` entries and ``--queries`` queries (``synthetic_collection(seed=1)``,
written once as a BEIR folder under ``benchmarks/.cache``), k = 10, seed 7,
each system tested against the first (``comparisons = "baseline"``,
``n_resamples = 1000``).  In each of ``--rounds`` rounds (the executors'
order rotated), each executor runs the whole grid from an empty
output folder (``resume=False``); a second run that reuses every task file
times the client's own part (reading the 40 task files, the statistics, the
writes), so the task phase is the difference.  The three results.json must
be byte-identical.  Dask's overhead per task is measured apart: 400 no-op
tasks submitted at once to each executor.

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
import platform
import statistics
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
from agentmemory.experiment import parse_grid, plan_experiment, run_experiment  # noqa: E402

README = HERE / "README.md"
START, END = "<!-- experiment:start -->", "<!-- experiment:end -->"
K1 = (0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4, 2.7)
B = (0.3, 0.5, 0.75, 0.9, 1.0)
NOOPS = 400


def noop(x: int) -> int:
    return x


def collection_folder(entries: int, queries: int) -> Path:
    folder = HERE / ".cache" / f"experiment-{entries}-{queries}"
    if not (folder / "corpus.jsonl").is_file():
        print(f"writing the synthetic collection to {folder.relative_to(HERE.parent)}", flush=True)
        collection = synthetic_collection(
            seed=1, n_entries=entries, n_queries=queries, n_tags=40, vocabulary=5000, entry_length=(20, 60)
        )
        write_collection(collection, folder)
    return folder


def grid_text(folder: Path) -> str:
    return (
        'name = "bm25-k1-b"\nk = 10\nseeds = 7\n'
        f'systems = [{{ retriever = "bm25", grid = {{ k1 = {list(K1)}, b = {list(B)} }} }}]\n'
        '[statistics]\ncomparisons = "baseline"\nn_resamples = 1000\n'
        f'[[collections]]\nname = "synthetic"\npath = "{folder.as_posix()}"\n'
    )


def timed_runs(plan, executor, out: Path) -> dict:
    t0 = time.perf_counter()
    first = run_experiment(plan, executor, out=out, resume=False)
    total = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = run_experiment(plan, executor, out=out)
    client = time.perf_counter() - t0
    assert first.ok and again.reused == len(plan.tasks), (first.failures, again.summary())
    digest = hashlib.sha256((out / "results.json").read_bytes()).hexdigest()
    return {"total_s": total, "client_s": client, "tasks_s": total - client, "results_sha256": digest}


def noop_overhead(executor) -> float:
    """Seconds per task of ``NOOPS`` no-op tasks submitted at once (after a warm-up)."""
    wait([executor.submit(noop, i) for i in range(8)])
    t0 = time.perf_counter()
    wait([executor.submit(noop, i) for i in range(NOOPS)])
    return (time.perf_counter() - t0) / NOOPS


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "numba", "dask", "distributed"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def cpu() -> str:
    import os

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} logical cores)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} logical cores)"


def burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def cpu_scaling() -> float:
    """How much faster 2 processes do 2 units of pure-Python work than 1 process: this machine's ceiling."""
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


def one_round(plan, tmp: Path, order: list[str], distributed) -> dict:
    out: dict = {"cpu_scaling": cpu_scaling()}
    for name in order:
        print(f"  {name} ...", flush=True)
        folder = tmp / f"{name}-{len(list(tmp.iterdir()))}"
        if name == "serial":
            out[name] = timed_runs(plan, None, folder)
        elif name == "processes":
            with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
                out[name] = timed_runs(plan, pool, folder)
                out[name]["noop_s"] = noop_overhead(pool)
        else:
            t0 = time.perf_counter()
            cluster = distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
            )
            client = distributed.Client(cluster)
            startup = time.perf_counter() - t0
            try:
                out[name] = timed_runs(plan, client, folder)
                out[name]["startup_s"] = startup
                out[name]["noop_s"] = noop_overhead(client.get_executor(pure=False))
            finally:
                client.close()
                cluster.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the executors' order rotated (median reported)")
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite benchmarks/README.md")
    args = ap.parse_args()
    import distributed

    started = _dt.datetime.now(_dt.timezone.utc)
    t_start = time.perf_counter()
    folder = collection_folder(args.entries, args.queries)
    t0 = time.perf_counter()
    plan = plan_experiment(parse_grid(grid_text(folder), source="benchmark grid"))
    plan_s = time.perf_counter() - t0
    results: dict = {"plan_s": plan_s, "tasks": len(plan.tasks), "entries": args.entries, "queries": args.queries}
    names = ["serial", "processes", "dask"]
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            order = names[i % 3 :] + names[: i % 3]
            print(f"round {i + 1}: {', '.join(order)}", flush=True)
            rounds.append(one_round(plan, Path(tmp), order, distributed))
    results["rounds"] = rounds
    for name in names:
        runs = [r[name] for r in rounds]
        results[name] = {
            key: statistics.median(run[key] for run in runs) for key in runs[0] if isinstance(runs[0][key], float)
        }
        results[name]["tasks_s_best"] = min(r["tasks_s"] for r in runs)
        results[name]["tasks_s_range"] = [min(r["tasks_s"] for r in runs), max(r["tasks_s"] for r in runs)]
    results["cpu_scaling"] = [r["cpu_scaling"] for r in rounds]
    digests = {run[name]["results_sha256"] for run in rounds for name in names}
    results["identical"] = len(digests) == 1
    results["versions"] = versions()
    results["cpu"] = cpu()
    results["date"] = started.strftime("%Y-%m-%d %H:%M UTC")
    results["elapsed_s"] = time.perf_counter() - t_start
    results["command"] = "python benchmarks/experiment.py " + " ".join(sys.argv[1:])
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


def report(r: dict) -> str:
    n = r["tasks"]
    serial, procs, dask = r["serial"], r["processes"], r["dask"]
    rows = [("serial", serial), ("2 processes (spawn)", procs), ("Dask LocalCluster(2)", dask)]
    lines = [
        f"Measured {r['date']} by `{r['command'].strip()}` ({r['elapsed_s'] / 60:.1f} min) on {r['cpu']}; "
        f"best and median of {len(r['rounds'])} rounds, the executors' order rotated each round.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()) + ".",
        "",
        f"### Experiment: a BM25 k1 x b grid ({n} tasks) on {r['entries']:,} synthetic entries, {r['queries']:,} queries",
        "",
        f"Planning (the client loads the collection once, for its digest): {r['plan_s']:.2f} s. "
        f"results.json byte-identical in every run on all three executors: {'yes' if r['identical'] else 'NO'}. "
        "This machine's ceiling, measured at the start of each round: 2 processes do pure-Python work "
        + ", ".join(f"{x:.2f}x" for x in r["cpu_scaling"])
        + " as fast as one (the 2 virtual cores are shared with the host's other work, so timings vary).",
        "",
        "| executor | wall s (all tasks, from empty; median) | task phase s: best, median (slowest) | per task s (best) "
        f"| speed-up over serial (best) | client part s ({n} cached tasks, statistics, writes; median) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows:
        best = row["tasks_s_best"]
        speedup = "" if name == "serial" else f"{serial['tasks_s_best'] / best:.2f}x"
        lines.append(
            f"| {name} | {row['total_s']:.2f} | {best:.2f}, {row['tasks_s']:.2f} ({row['tasks_s_range'][1]:.1f}) | "
            f"{best / n:.3f} | {speedup} | {row['client_s']:.2f} |"
        )
    lines += [
        "",
        f"Dask's own costs: starting the LocalCluster(2) {dask['startup_s']:.2f} s (not in the wall times above); "
        f"{dask['noop_s'] * 1000:.2f} ms per no-op task ({NOOPS} submitted at once) against "
        f"{procs['noop_s'] * 1000:.2f} ms on the process pool.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
