"""Run the benchmark suite: every engine in its own process, then one table.

    .venv/bin/python benchmarks/run.py [--sizes 10k,100k,1M] [--quick] [--passes N] [--only core|dense|store]
    .venv/bin/python benchmarks/run.py --report-only   # rewrite the README's results from results.json
    .venv/bin/python benchmarks/run.py --only whole [--quick]   # whole processes (benchmarks/whole_process.py)
    .venv/bin/python benchmarks/run.py --only grid [--quick]    # experiment grids (benchmarks/experiment.py)

Three groups: ``core`` (BM25, the tag scorer, the metrics, start-up),
``dense`` (the dense retriever against faiss, wordllama's encoding, hybrid
fusion) and ``store`` (reopening a persistent store against building the
index from JSONL).  Prints the tables and the targets of issues 5, 10 and 14 (met or not,
with the measured ratio), writes ``benchmarks/results.json`` (raw numbers)
and replaces the results section of ``benchmarks/README.md`` with them.
``--only`` runs one group and keeps the other's numbers from
``results.json`` (each group says when and by which command it was
measured).  See ``benchmarks/README.md`` for what each engine does.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"
MARK = "BENCH-RESULT "
TIMEOUT = 1800


def parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if text[-1:] in "km" else text) * mult)


def label(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


def run_engine(script: str, *args: str, env: dict | None = None) -> dict:
    """Run ``benchmarks/<script>`` in a fresh interpreter; its result line, or an error."""
    cmd = [sys.executable, str(HERE / script), *args]
    print("  $", " ".join([Path(cmd[0]).name, *cmd[1:]]).replace(str(HERE) + "/", ""), flush=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT} s"}
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            out = json.loads(line[len(MARK) :])
            out["wall_s"] = time.perf_counter() - t0
            return out
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"error": f"exit {proc.returncode}: " + " | ".join(tail)}


def overlap(tops: list[list[int]], ref: list[list[int]]) -> tuple[float, float]:
    """(mean |top10 & ref| / |ref|, share of queries whose top 10 equals ref in order) over the queries run."""
    pairs = list(zip(tops, ref))
    if not pairs:
        return float("nan"), float("nan")
    share = statistics.fmean(len(set(a) & set(b)) / len(b) if b else float(not a) for a, b in pairs)
    same = statistics.fmean(a == b for a, b in pairs)
    return share, same


def first_query_probe() -> dict:
    """Wall time of ``import agentmemory`` + a 100-entry store + its first search, in a fresh process."""
    code = (
        "import time; t0 = time.perf_counter()\n"
        "import agentmemory, sys\n"
        "t1 = time.perf_counter()\n"
        "s = agentmemory.MemoryStore()\n"
        "s.add([agentmemory.MemoryEntry(f'm{i}', f'note {i} about topic {i % 7}', tags=(f't{i % 5}',)) for i in range(100)])\n"
        "s.search('topic 3 note', k=5)\n"
        "t2 = time.perf_counter()\n"
        "print(round(t1 - t0, 4), round(t2 - t0, 4), 'numba' in sys.modules)\n"
    )
    runs = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        imp, total, numba = out.stdout.split()
        runs.append((float(imp), float(total), numba == "True"))
    return {
        "import_s": statistics.median(r[0] for r in runs),
        "first_query_s": statistics.median(r[1] for r in runs),
        "numba_imported": any(r[2] for r in runs),
    }


def cold_jit_probe() -> float | None:
    """Seconds to compile agentmemory's kernels from scratch (empty numba cache), or None without numba."""
    code = (
        "import os, time; t0 = time.perf_counter()\n"
        "from agentmemory import BM25, MemoryEntry, Query, TagScorer\n"
        "from agentmemory.retrievers._index import accelerator\n"
        "if accelerator(10**9) is None: print('none'); raise SystemExit\n"
        "os.environ['AGENTMEMORY_ACCEL'] = 'on'\n"
        "r = BM25(); r.add([MemoryEntry('a', 'cold start'), MemoryEntry('b', 'start')]); r.search('start', 1)\n"
        "t = TagScorer(); t.add([MemoryEntry('a', '', tags=('x',))]); t.search(Query('q', '', tags=('x',)), 1)\n"
        "print(time.perf_counter() - t0)\n"
    )
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "NUMBA_CACHE_DIR": cache},
        )
    text = out.stdout.strip()
    return None if not text or text == "none" else float(text)


CORE_PACKAGES = ("numpy", "numba", "tantivy", "bm25s", "rank-bm25", "ranx", "pytrec-eval-terrier")
DENSE_PACKAGES = ("numpy", "faiss-cpu", "wordllama", "tokenizers", "numba")


def versions(names: tuple[str, ...] = CORE_PACKAGES) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "-"
    return out


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} logical cores)"
    except OSError:
        pass
    return platform.processor() or "unknown"


def fmt(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "-"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return f"{x:,}"


GROUPS = ("core", "dense", "store")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k,1M", help="corpus sizes, e.g. 10k,100k,1M")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, 3 passes, small budgets (a smoke run)")
    ap.add_argument("--passes", type=int, default=None, help="query passes per engine (median reported; default 5)")
    ap.add_argument("--rank-bm25-max", default="100k", help="largest size rank_bm25 is built at (default 100k)")
    ap.add_argument(
        "--only",
        choices=(*GROUPS, "whole", "grid"),
        default=None,
        help="run one group and keep the others' numbers; whole: the whole-process table (whole_process.py); "
        "grid: the experiment grids on serial, 2 processes and Dask (experiment.py)",
    )
    ap.add_argument("--dense-sizes", default=None, help="dense vs faiss sizes (default 100k,1M; --quick 10k,100k)")
    ap.add_argument("--hybrid-size", default=None, help="hybrid and encoding corpus size (default 100k; --quick 10k)")
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite benchmarks/README.md")
    ap.add_argument("--report-only", action="store_true", help="run nothing: rewrite the README from results.json")
    ap.add_argument("--store-size", default="100k", help="entries of the persistent-store reopen benchmark (100k)")
    args, rest = ap.parse_known_args()
    if args.only == "whole":  # whole processes: whole_process.py, with the options given after --only whole
        raise SystemExit(subprocess.run([sys.executable, str(HERE / "whole_process.py"), *rest]).returncode)
    if args.only == "grid":  # experiment grids: experiment.py, with the options given after --only grid
        raise SystemExit(subprocess.run([sys.executable, str(HERE / "experiment.py"), *rest]).returncode)
    if rest:
        ap.error("unrecognized arguments: " + " ".join(rest))
    passes = args.passes or (3 if args.quick else 5)
    command = "python benchmarks/run.py " + " ".join(sys.argv[1:])
    results: dict = {}
    path = HERE / "results.json"
    if (args.only or args.report_only) and path.is_file():
        results = json.loads(path.read_text(encoding="utf-8"))
    if args.report_only and not results:
        ap.error(f"--report-only: {path} holds no results")
    if not args.report_only and args.only in (None, "core"):
        for key in ("sizes", "metrics", "first_query", "cold_jit_s"):
            results.pop(key, None)
        results.update(run_core(args, passes, command))
    if not args.report_only and args.only in (None, "dense"):
        results["dense"] = run_dense(args, passes, command)
    if not args.report_only and args.only in (None, "store"):
        print("\n== persistent store", flush=True)
        results["store"] = store_reopen(args, command)

    text = report(results)
    print("\n" + text)
    if not args.report_only:
        path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not args.no_readme and README.is_file():
        readme = README.read_text(encoding="utf-8")
        if START in readme and END in readme:
            head, rest = readme.split(START, 1)
            _, tail = rest.split(END, 1)
            README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
            print(f"\nwrote the results into {README.relative_to(HERE.parent)}")


def run_core(args: argparse.Namespace, passes: int, command: str) -> dict:
    """BM25 and the tag scorer at every size, the metrics, start-up: the top-level keys of results.json."""
    sizes = [
        parse_size(s) for s in ("10k,100k" if args.quick and args.sizes == "10k,100k,1M" else args.sizes).split(",")
    ]
    rank_max = parse_size(args.rank_bm25_max)
    budget = "5" if args.quick else "20"
    started = _dt.datetime.now(_dt.timezone.utc)
    t_start = time.perf_counter()

    results: dict = {"sizes": {}, "versions": versions(), "cpu": cpu(), "passes": passes}
    print("corpus:", flush=True)
    subprocess.run([sys.executable, str(HERE / "corpus.py"), *map(str, sizes)], check=True)
    for n in sizes:
        print(f"\n== {label(n)} entries", flush=True)
        ref = run_engine("engine_reference.py", "--size", str(n), "--passes", "1")
        rows = {"numpy-dense": ref}
        rows["agentmemory"] = run_engine(
            "engine_agentmemory_bm25.py", "--size", str(n), "--passes", str(passes), "--incremental"
        )
        rows["agentmemory-numpy"] = run_engine(
            "engine_agentmemory_bm25.py", "--size", str(n), "--passes", str(max(2, passes // 2)), "--mode", "off"
        )
        rows["tantivy"] = run_engine("engine_tantivy_bm25.py", "--size", str(n), "--passes", str(passes))
        rows["bm25s-numba"] = run_engine("engine_bm25s_numba.py", "--size", str(n), "--passes", str(passes))
        if n <= rank_max:
            rows["rank_bm25"] = run_engine("engine_rank_bm25_okapi.py", "--size", str(n), "--budget", budget)
        else:
            rows["rank_bm25"] = {"error": f"not run above {label(rank_max)} (time budget; --rank-bm25-max)"}
        rows["tags"] = run_engine("engine_tags.py", "--size", str(n), "--passes", str(passes))
        ref_tops = ref.get("top10", [])
        for row in rows.values():
            if "top10" in row and ref_tops:
                row["overlap"], row["identical"] = overlap(row["top10"], ref_tops)
            row.pop("top10", None)
        results["sizes"][label(n)] = rows
    print("\n== metrics (10,000 queries x 100 documents)", flush=True)
    results["metrics"] = {
        e: run_engine("engine_metrics.py", "--engine", e, "--passes", str(passes))
        for e in ("agentmemory", "pytrec_eval", "ranx")
    }
    print("\n== start-up", flush=True)
    results["first_query"] = first_query_probe()
    results["cold_jit_s"] = cold_jit_probe()
    results["elapsed_s"] = time.perf_counter() - t_start
    results["date"] = started.strftime("%Y-%m-%d %H:%M UTC")
    results["command"] = command
    return results


def store_reopen(args: argparse.Namespace, command: str) -> dict:
    """Reopen of a persistent store + first query vs building the index from JSONL (engine_store_reopen.py)."""
    size = parse_size(args.store_size)
    row = run_engine("engine_store_reopen.py", "--size", str(size), "--passes", "3")
    row["date"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    row["command"] = command
    return row


def store_section(row: dict | None) -> list[str]:
    if not row:
        return []
    title = f"### Persistent store: reopen {label(row.get('size', 0))} entries and answer a first query"
    if "error" in row:
        return [title, "", f"Not measured: {row['error']}", ""]
    return [
        title,
        "",
        "| path | seconds (median of 3 fresh processes) |",
        "|---|---:|",
        f"| build from JSONL: `load_collection` + `MemoryStore().add` (BM25, tags) + first search | {fmt(row['jsonl_s'])} |",
        f"| reopen the store file: `MemoryStore.open(path, readonly=True)` + first search | {fmt(row['reopen_s'])} |",
        f"| of which reading the entries back from SQLite | {fmt(row['read_s'])} |",
        "",
        f"Reopen / JSONL build: {fmt(row['ratio'])}x. Store file {fmt(row['store_mb'], 1)} MB "
        f"(corpus.jsonl {fmt(row['jsonl_mb'], 1)} MB); importing the JSONL into it took {fmt(row['import_s'])} s "
        f"(one transaction, no index built). Same top 10 both ways: {row['same_top10']}. "
        f"Measured {row['date']} by `{row['command'].strip()}`.",
        "",
        "### Targets (issue 14)",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        f"| reopen a {label(row['size'])}-entry store + first query <= 2x building the index from JSONL | "
        f"{fmt(row['ratio'])}x ({fmt(row['reopen_s'])} s vs {fmt(row['jsonl_s'])} s); same top 10: "
        f"{row['same_top10']} | {'yes' if row['ratio'] <= 2.0 and row['same_top10'] else 'no'} |",
    ]


SCORE_TIE = 1e-6  # float32 scores closer than this may be ordered either way by two exact engines (rounding)


def agreement(ours: dict, theirs: dict) -> dict:
    """How agentmemory's top 10 compares with faiss's, query by query (ids and scores of both).

    ``identical``: the same ids in the same order.  ``same_up_to_ties``: at
    every rank the two scores agree within :data:`SCORE_TIE`, and every id
    in one list only scores within it of that list's last score (two exact
    engines may order, or cut, scores that tie within float32 rounding
    differently; faiss also keeps the lowest ids of an exact tie at the
    cut-off, the ranking rule the highest).
    """
    identical = same = same_set = 0
    diff = 0.0
    pairs = list(zip(ours["top10"], ours["top10_scores"], theirs["top10"], theirs["top10_scores"]))
    for a, sa, b, sb in pairs:
        identical += a == b
        same_set += set(a) == set(b)
        ok = len(a) == len(b) and all(abs(x - y) <= SCORE_TIE for x, y in zip(sa, sb))
        if ok and a != b:
            only = [(i, sa[-1], dict(zip(a, sa))) for i in set(a) - set(b)]
            only += [(i, sb[-1], dict(zip(b, sb))) for i in set(b) - set(a)]
            ok = all(abs(scores[i] - last) <= SCORE_TIE for i, last, scores in only)
        same += ok
        common = dict(zip(b, sb))
        diff = max([diff, *(abs(s - common[i]) for i, s in zip(a, sa) if i in common)])
    n = len(pairs) or 1
    return {
        "queries": len(pairs),
        "identical": identical / n,
        "same_up_to_ties": same / n,
        "same_set": same_set / n,
        "max_score_diff": diff,
    }


def run_dense(args: argparse.Namespace, passes: int, command: str) -> dict:
    """The dense group: agentmemory's dense retriever against faiss at each size, wordllama's encoding, hybrid."""
    default_sizes = "10k,100k" if args.quick else "100k,1M"
    sizes = [parse_size(s) for s in (args.dense_sizes or default_sizes).split(",")]
    hybrid_n = parse_size(args.hybrid_size or ("10k" if args.quick else "100k"))
    started = _dt.datetime.now(_dt.timezone.utc)
    t_start = time.perf_counter()
    out: dict = {
        "versions": versions(DENSE_PACKAGES),
        "cpu": cpu(),
        "passes": passes,
        "sizes": {},
    }
    out["load"] = []  # the 1-minute load average as each size starts (the machine is shared)
    for n in sizes:
        print(f"\n== dense, {label(n)} vectors", flush=True)
        out["load"].append(round(os.getloadavg()[0], 2))
        single = min(1000, max(10, 100_000_000 // n)) if not args.quick else min(100, max(10, 10_000_000 // n))
        both = run_engine("engine_dense.py", "--size", str(n), "--passes", str(passes), "--single", str(single))
        if "error" in both:
            out["sizes"][label(n)] = {"error": both["error"]}
            continue
        row = {"agentmemory": both["agentmemory"], "faiss": both["faiss"]}
        if "top10" in row["faiss"]:
            row["agreement"] = agreement(row["agentmemory"], row["faiss"])
        for engine in row.values():
            engine.pop("top10", None)
            engine.pop("top10_scores", None)
        out["sizes"][label(n)] = row
    print(f"\n== wordllama encoding, {label(hybrid_n)} texts", flush=True)
    out["encoding"] = run_engine("engine_wordllama.py", "--size", str(hybrid_n), "--passes", str(min(passes, 3)))
    print(f"\n== hybrid over bm25 + dense, {label(hybrid_n)} entries", flush=True)
    out["hybrid"] = run_engine("engine_hybrid.py", "--size", str(hybrid_n), "--passes", str(passes))
    out["elapsed_s"] = time.perf_counter() - t_start
    out["date"] = started.strftime("%Y-%m-%d %H:%M UTC")
    out["command"] = command
    return out


def ratio(a, b) -> float | None:
    try:
        return a / b if a is not None and b else None
    except TypeError:
        return None


def in_order(versions_: dict[str, str], names: tuple[str, ...]) -> dict[str, str]:
    """``versions_`` with python first, then ``names`` in their order, then the rest (results.json sorts keys)."""
    order = ["python", *names]
    return dict(sorted(versions_.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0])))


def by_size(rows: dict) -> dict:
    """``rows`` keyed by size labels, smallest first (results.json sorts keys as text: 100k before 10k)."""
    return dict(sorted(rows.items(), key=lambda kv: parse_size(kv[0])))


def report(results: dict) -> str:
    """The results section: the core group's tables and targets, then the dense group's."""
    parts = []
    if "sizes" in results:
        core = {**results, "sizes": by_size(results["sizes"]), "versions": in_order(results["versions"], CORE_PACKAGES)}
        parts.append(report_core(core))
    if "dense" in results:
        d = results["dense"]
        parts.append(
            report_dense({**d, "sizes": by_size(d["sizes"]), "versions": in_order(d["versions"], DENSE_PACKAGES)})
        )
    if results.get("store"):
        parts.append("\n".join(store_section(results["store"])).rstrip("\n"))
    return "\n\n".join(parts)


def report_core(results: dict) -> str:
    lines = [
        f"Measured {results['date']} by `{results['command'].strip()}` ({results['elapsed_s'] / 60:.1f} min) on "
        f"{results['cpu']}; one thread per engine; median of {results['passes']} query passes.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + ".",
        "",
    ]
    engines = ["agentmemory", "agentmemory-numpy", "tantivy", "bm25s-numba", "numpy-dense", "rank_bm25"]
    for size, rows in results["sizes"].items():
        ours = rows.get("agentmemory", {})
        lines += [
            f"### BM25 top-10, {size} entries, 1,000 queries",
            "",
            "| engine | build s | queries/s | peak RSS MB (build) | top-10 overlap | identical top-10 | "
            "ours: q/s ratio | ours: build ratio | ours: memory ratio |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name in engines:
            row = rows.get(name)
            if row is None:
                continue
            if "error" in row:
                lines.append(f"| {name} | {row['error']} | | | | | | | |")
                continue
            mem = row["peak_rss_mb"] - row["base_rss_mb"]
            row["peak_delta_mb"] = mem
            ours_mem = ours.get("peak_rss_mb", 0) - ours.get("base_rss_mb", 0) if "peak_rss_mb" in ours else None
            is_ours = name == "agentmemory"
            build = fmt(row["build_s"])
            if "add_s" in row:
                build += f" ({fmt(row['add_s'])} add)"
            if row.get("jit_s") and name.startswith("bm25s"):
                build += f" + {fmt(row['jit_s'])} JIT"
            lines.append(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                    name + (" (numba kernels)" if is_ours and row.get("accelerated") else ""),
                    build,
                    fmt(row.get("qps"), 0) + (f" ({row['queries_run']} q)" if "queries_run" in row else ""),
                    fmt(mem, 0),
                    fmt(row.get("overlap"), 3),
                    fmt(row.get("identical"), 3),
                    "" if is_ours else fmt(ratio(ours.get("qps"), row.get("qps"))) + "x",
                    "" if is_ours else fmt(ratio(ours.get("build_s"), row["build_s"])) + "x",
                    "" if is_ours or ours_mem is None else fmt(ratio(ours_mem, mem)) + "x",
                )
            )
        inc = ours.get("incremental")
        if inc:
            lines += [
                "",
                f"Incremental add of {inc['added']:,} entries (1%) to the built index: add() {fmt(inc['add_s'], 3)} s "
                f"(+ {fmt(inc['records_s'], 3)} s creating the records) = "
                f"{fmt(100 * ratio(inc['add_s'], ours['add_s']), 1)}% of the full add() "
                f"({fmt(100 * ratio(inc['add_s'] + inc['records_s'], ours['build_s']), 1)}% with records); "
                f"first query after it {fmt(inc['first_query_s'] * 1000, 2)} ms; {fmt(inc['qps_after'], 0)} q/s after. "
                f"Top-10 (ids and scores) of all 1,000 queries equal a full rebuild's: {inc['top10_equal_rebuild']}; "
                f"score_all() of 50 queries equal: {inc['score_all_equal_rebuild_50q']}; "
                f"queries whose top-10 ids the add changed: {inc['top10_ids_changed_by_add']}.",
            ]
        tags = rows.get("tags", {})
        if "error" not in tags and tags:
            lines += [
                "",
                f"Tag scorer: build {fmt(tags['build_s'])} s ({fmt(tags['add_s'])} add), {fmt(tags['qps'], 0)} q/s "
                f"vs {fmt(tags['scan_qps'], 0)} q/s for a full scan ({fmt(ratio(tags['qps'], tags['scan_qps']), 1)}x); "
                f"top 10 identical to the scan on {fmt(100 * tags['identical_top10'], 1)}% of queries.",
            ]
        lines.append("")
    met = results["metrics"]
    lines += [
        "### Metrics, 10,000 queries x 100 ranked documents (P@10, R@10, RR, nDCG@10, AP@100)",
        "",
        "| library | cold s | warm s | ours: warm ratio | same means as pytrec_eval |",
        "|---|---:|---:|---:|---:|",
    ]
    base_means = met.get("pytrec_eval", {}).get("means", {})
    for name in ("agentmemory", "pytrec_eval", "ranx"):
        row = met.get(name, {})
        if "error" in row:
            lines.append(f"| {name} | {row['error']} | | | |")
            continue
        same = all(abs(row["means"][m] - base_means.get(m, float("nan"))) <= 1e-12 for m in row["means"])
        lines.append(
            f"| {name} | {fmt(row['cold_s'], 3)} | {fmt(row['warm_s'], 3)} | "
            f"{'' if name == 'agentmemory' else fmt(ratio(met['agentmemory'].get('warm_s'), row['warm_s'])) + 'x'} | {same} |"
        )
    fq = results["first_query"]
    lines += [
        "",
        f"Start-up: `import agentmemory` {fmt(fq['import_s'] * 1000, 0)} ms; import + 100-entry store + first search "
        f"{fmt(fq['first_query_s'] * 1000, 0)} ms; numba imported: {fq['numba_imported']}. "
        f"Compiling agentmemory's kernels with an empty numba cache (once per machine: in the background, started "
        f"by the first index of >= 10,000 entries; in the process itself for >= 2,000,000 entries or with "
        f"AGENTMEMORY_ACCEL=on): {fmt(results['cold_jit_s'])} s.",
        "",
    ]
    lines += targets(results)
    return "\n".join(lines)


def targets(results: dict) -> list[str]:
    sizes = results["sizes"]
    out = ["### Targets (issue 5)", "", "| target | measured | met |", "|---|---|---|"]

    def add(name: str, measured: str, ok: bool | None) -> None:
        out.append(f"| {name} | {measured} | {'yes' if ok else 'no' if ok is not None else 'not measured'} |")

    for size in ("100k", "1M"):
        rows = sizes.get(size)
        if not rows:
            add(f"BM25 q/s >= 1.0x tantivy at {size}, exact", "size not run", None)
            continue
        ours, tv = rows.get("agentmemory", {}), rows.get("tantivy", {})
        r = ratio(ours.get("qps"), tv.get("qps"))
        exact = ours.get("identical")
        add(
            f"BM25 q/s >= 1.0x tantivy at {size}, exact top 10",
            f"{fmt(r)}x ({fmt(ours.get('qps'), 0)} vs {fmt(tv.get('qps'), 0)}); identical to reference on "
            f"{fmt(100 * exact if exact is not None else None, 1)}% of queries",
            None if r is None else (r >= 1.0 and exact == 1.0),
        )
    largest = list(sizes)[-1] if sizes else None
    if largest:
        rows = sizes[largest]
        ours, tv, bs = rows.get("agentmemory", {}), rows.get("tantivy", {}), rows.get("bm25s-numba", {})
        rb = ratio(ours.get("build_s"), tv.get("build_s"))
        ra = ratio(ours.get("add_s"), tv.get("build_s"))
        add(
            f"build time <= 1.0x tantivy ({largest})",
            f"{fmt(rb)}x with record creation ({fmt(ours.get('build_s'))} s vs {fmt(tv.get('build_s'))} s); "
            f"{fmt(ra)}x for add() alone",
            None if rb is None else rb <= 1.0,
        )
        om = ours.get("peak_delta_mb")
        bm = bs.get("peak_delta_mb")
        rm = ratio(om, bm)
        add(
            f"peak memory <= 1.0x bm25s ({largest})",
            f"{fmt(rm)}x ({fmt(om, 0)} MB vs {fmt(bm, 0)} MB over the process baseline)",
            None if rm is None else rm <= 1.0,
        )
        inc = ours.get("incremental")
        if inc:
            ri = ratio(inc["add_s"] + inc["records_s"], ours["build_s"])
            add(
                f"incremental 1% add <= 5% of a full build, scores equal a rebuild ({largest})",
                f"{fmt(100 * ri, 1)}% ; equal: {inc['top10_equal_rebuild'] and inc['score_all_equal_rebuild_50q']}",
                ri <= 0.05 and inc["top10_equal_rebuild"] and inc["score_all_equal_rebuild_50q"],
            )
        tags = rows.get("tags", {})
        if "qps" in tags:
            small = sizes[list(sizes)[0]].get("tags", {})
            add(
                "tag scorer: candidates only (exact, no full scan)",
                f"{fmt(ratio(tags['qps'], tags['scan_qps']), 1)}x a full scan at {largest}; q/s {fmt(small.get('qps'), 0)} "
                f"at {list(sizes)[0]} -> {fmt(tags['qps'], 0)} at {largest}; identical {fmt(100 * tags['identical_top10'], 1)}%",
                tags["identical_top10"] == 1.0 and tags["qps"] > tags["scan_qps"],
            )
    met = results["metrics"]
    if "warm_s" in met.get("agentmemory", {}) and "warm_s" in met.get("pytrec_eval", {}):
        rm = ratio(met["agentmemory"]["warm_s"], met["pytrec_eval"]["warm_s"])
        same = all(
            abs(met["agentmemory"]["means"][m] - met["pytrec_eval"]["means"][m]) <= 1e-12
            for m in met["agentmemory"]["means"]
        )
        add(
            "metrics <= 0.5x pytrec_eval's time, same numbers",
            f"{fmt(rm)}x warm; same means: {same}",
            rm <= 0.5 and same,
        )
    fq = results["first_query"]
    add(
        "import + first query on a small store interactive (no JIT)",
        f"{fmt(fq['first_query_s'] * 1000, 0)} ms; numba imported: {fq['numba_imported']}",
        fq["first_query_s"] < 1.0 and not fq["numba_imported"],
    )
    return out


def _mb(x) -> str:
    return fmt(x, 0) if x is not None else "-"


def report_dense(d: dict) -> str:
    """The dense group's tables: dense vs faiss per size, wordllama's encoding, hybrid against its parts."""
    lines = [
        "### Dense top-10 against faiss `IndexFlatIP` (exact), 256 dimensions, 1,000 queries",
        "",
        f"Measured {d['date']} by `{d['command'].strip()}` ({d['elapsed_s'] / 60:.1f} min) on {d['cpu']}; one "
        f"thread; median of {d['passes']} passes, agentmemory's and faiss's alternating in one process"
        + (
            f" (1-minute load average {min(d['load']):.1f}-{max(d['load']):.1f} as the sizes started)."
            if d.get("load")
            else "."
        ),
        "Versions: " + ", ".join(f"{k} {v}" for k, v in d["versions"].items()) + ".",
        "",
        "| entries | engine | build s | queries/s, batched | queries/s, one at a time | peak RSS MB (build) | "
        "RSS MB held | ours: batched ratio | ours: one-at-a-time ratio |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for size, row in d["sizes"].items():
        if "error" in row:
            lines.append(f"| {size} | {row['error']} | | | | | | | |")
            continue
        ours, theirs = row["agentmemory"], row["faiss"]
        lines.append(
            f"| {size} | agentmemory (`search_batch` / `search`) | {fmt(ours['build_s'])} | {fmt(ours.get('batch_qps'), 0)} | "
            f"{fmt(ours.get('single_qps'), 0)} | {_mb(ours['peak_mb'])} | {_mb(ours['retained_mb'])} | | |"
        )
        if "error" in theirs:
            lines.append(f"| {size} | faiss: {theirs['error']} | | | | | | | |")
            continue
        lines.append(
            f"| {size} | faiss {theirs.get('version', '')} `IndexFlatIP` (`search` of all / of one) | "
            f"{fmt(theirs['build_s'])} | {fmt(theirs.get('batch_qps'), 0)} | {fmt(theirs.get('single_qps'), 0)} | "
            f"{_mb(theirs['peak_mb'])} | {_mb(theirs['retained_mb'])} | "
            f"{fmt(ratio(ours.get('batch_qps'), theirs.get('batch_qps')))}x | "
            f"{fmt(ratio(ours.get('single_qps'), theirs.get('single_qps')))}x |"
        )
        ag = row.get("agreement", {})
        notes.append(
            f"{size}: top 10 identical to faiss's (same ids, same order) for {fmt(100 * ag.get('identical', 0), 1)}% "
            f"of the {ag.get('queries', 0):,} queries, the same up to scores tied within {SCORE_TIE:g} for "
            f"{fmt(100 * ag.get('same_up_to_ties', 0), 1)}%, the same set for {fmt(100 * ag.get('same_set', 0), 1)}%; "
            f"largest score difference on a shared hit {ag.get('max_score_diff', 0):.1e}.  One query at a time: "
            f"the first {ours['single_queries']:,} queries; their ids equal the batched ones: ours "
            f"{ours.get('single_equals_batch_ids')}, faiss {theirs.get('single_equals_batch_ids')}.  agentmemory's "
            f"index holds {fmt(ours['index_mb'], 0)} MB of arrays (faiss {fmt(theirs['index_mb'], 0)} MB)."
        )
    lines += ["", *notes]
    enc = d.get("encoding", {})
    if enc and "error" not in enc:
        lines += [
            "",
            f"**Encoding** (wordllama `{enc['model']['model']}`, the default encoder, one thread): loading it "
            f"{fmt(enc['load_s'] * 1000, 0)} ms (after `import agentmemory`, {fmt(enc['import_agentmemory_s'] * 1000, 0)} ms); "
            f"{fmt(enc['entries_per_s'], 0)} entries/s encoding the first {enc['size']:,} corpus texts in one call "
            f"({fmt(enc['tokens_per_entry'], 0)} tokens per entry on average: pseudo-words cut into several pieces); "
            f"queries {fmt(enc['queries_one_call_each_per_s'], 0)}/s one call each "
            f"({fmt(1000 / enc['queries_one_call_each_per_s'], 3)} ms), {fmt(enc['queries_one_call_per_s'], 0)}/s in one call.",
        ]
    elif enc:
        lines += ["", f"**Encoding**: {enc['error']}"]
    hy = d.get("hybrid", {})
    if hy and "error" not in hy:
        ms, qps = hy["ms_per_query"], hy["qps"]
        lines += [
            "",
            f"**Hybrid** `hybrid[of=bm25+dense]` (RRF, rrf_k 60, depth {hy['depth']}) over the first "
            f"{hy['size']:,} corpus texts, dense with wordllama embeddings computed in the build; one query at a time:",
            "",
            "| search | ms per query | queries/s |",
            "|---|---:|---:|",
            f"| hybrid, top 10 | {fmt(ms['hybrid'], 3)} | {fmt(qps['hybrid'], 0)} |",
            f"| its BM25{' (numba kernels)' if hy.get('bm25_accelerated') else ''}, top {hy['depth'] + 1} | "
            f"{fmt(ms['bm25'], 3)} | {fmt(qps['bm25'], 0)} |",
            f"| its dense (wordllama; the query encoded each time), top {hy['depth'] + 1} | {fmt(ms['dense'], 3)} | "
            f"{fmt(qps['dense'], 0)} |",
            f"| sum of the parts | {fmt(hy['parts_ms'], 3)} | |",
            "",
            f"Fusing costs {fmt(hy['fusion_ms'], 3)} ms per query: the hybrid takes {fmt(hy['ratio_to_parts'])}x the "
            f"sum of its parts ({fmt(hy['mean_candidates'], 0)} candidates fused per query on average).  Build "
            f"{fmt(hy['build_s'], 1)} s (BM25 and wordllama encoding of every text), peak RSS "
            f"{fmt(hy['peak_mb'], 0)} MB over the baseline.",
        ]
    elif hy:
        lines += ["", f"**Hybrid**: {hy['error']}"]
    lines += ["", *targets_dense(d)]
    return "\n".join(lines)


def targets_dense(d: dict) -> list[str]:
    out = ["### Targets (issue 10)", "", "| target | measured | met |", "|---|---|---|"]

    def add(name: str, measured: str, ok: bool | str) -> None:
        verdict = ok if isinstance(ok, str) else "yes" if ok else "no"
        out.append(f"| {name} | {measured} | {verdict} |")

    for size in ("100k", "1M"):
        row = d["sizes"].get(size)
        if not row or "error" in row or "error" in row.get("faiss", {"error": 1}):
            add(f"dense q/s >= 1.0x faiss IndexFlatIP at {size}, same top 10", "size not run", "not measured")
            continue
        ours, theirs, ag = row["agentmemory"], row["faiss"], row.get("agreement", {})
        same = ag.get("same_up_to_ties") == 1.0
        for kind, what in (("batch", "batched"), ("single", "one query at a time")):
            r = ratio(ours.get(f"{kind}_qps"), theirs.get(f"{kind}_qps"))
            add(
                f"dense q/s >= 1.0x faiss IndexFlatIP at {size}, {what}, same top 10",
                f"{fmt(r)}x ({fmt(ours.get(f'{kind}_qps'), 0)} vs {fmt(theirs.get(f'{kind}_qps'), 0)}); top 10 "
                f"identical for {fmt(100 * ag.get('identical', 0), 1)}%, the same up to tied scores for "
                f"{fmt(100 * ag.get('same_up_to_ties', 0), 1)}%",
                "not measured" if r is None else (r >= 1.0 and same),
            )
    big = d["sizes"].get("1M")
    if big and "error" not in big and "error" not in big.get("faiss", {"error": 1}):
        ours, theirs = big["agentmemory"], big["faiss"]
        add(
            "memory at 1M (float32: 1 GB) against faiss",
            f"held {_mb(ours['retained_mb'])} MB vs {_mb(theirs['retained_mb'])} MB "
            f"({fmt(ratio(ours['retained_mb'], theirs['retained_mb']))}x); build peak {_mb(ours['peak_mb'])} MB vs "
            f"{_mb(theirs['peak_mb'])} MB",
            "reported",
        )
    enc = d.get("encoding", {})
    if "entries_per_s" in enc:
        add(
            "wordllama encoding throughput",
            f"{fmt(enc['entries_per_s'], 0)} entries/s ({enc['size']:,} texts); load {fmt(enc['load_s'] * 1000, 0)} ms",
            "reported",
        )
    hy = d.get("hybrid", {})
    if "ratio_to_parts" in hy:
        add(
            f"hybrid over BM25 + dense ({label(hy['size'])}): cost against the sum of its parts",
            f"{fmt(hy['ratio_to_parts'])}x ({fmt(hy['ms_per_query']['hybrid'], 3)} ms vs {fmt(hy['parts_ms'], 3)} ms)",
            "reported",
        )
    return out


if __name__ == "__main__":
    main()
