"""Run the benchmark suite: every engine in its own process, then one table.

    .venv/bin/python benchmarks/run.py [--sizes 10k,100k,1M] [--quick] [--passes N]
    .venv/bin/python benchmarks/run.py --only store     # re-measure one part, keep the rest
    .venv/bin/python benchmarks/run.py --only whole [--quick]   # whole processes (benchmarks/whole_process.py)

Prints the tables and the targets (met or not, with the measured ratio),
writes ``benchmarks/results.json`` (raw numbers) and replaces the results
section of ``benchmarks/README.md`` with what was measured.  ``--only store``
re-measures the persistent store's reopen alone and keeps every other number
of ``results.json``.
See ``benchmarks/README.md`` for what each engine does and how it is fed.
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


PACKAGES = ("numpy", "numba", "tantivy", "bm25s", "rank-bm25", "ranx", "pytrec-eval-terrier")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k,1M", help="corpus sizes, e.g. 10k,100k,1M")
    ap.add_argument("--quick", action="store_true", help="10k and 100k, 3 passes, small budgets (a smoke run)")
    ap.add_argument("--passes", type=int, default=None, help="query passes per engine (median reported; default 5)")
    ap.add_argument("--rank-bm25-max", default="100k", help="largest size rank_bm25 is built at (default 100k)")
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite benchmarks/README.md")
    ap.add_argument("--store-size", default="100k", help="entries of the persistent-store reopen benchmark (100k)")
    ap.add_argument(
        "--only",
        choices=["store", "whole"],
        help="re-measure only this part and keep the other numbers of benchmarks/results.json",
    )
    args, rest = ap.parse_known_args()
    if args.only == "whole":  # whole processes: whole_process.py, with the options given after --only whole
        raise SystemExit(subprocess.run([sys.executable, str(HERE / "whole_process.py"), *rest]).returncode)
    if rest:
        ap.error("unrecognized arguments: " + " ".join(rest))
    if args.only == "store":
        results = json.loads((HERE / "results.json").read_text(encoding="utf-8"))
        # results.json is written with sorted keys: put sizes and versions back in the order a full run reports them
        results["sizes"] = dict(sorted(results["sizes"].items(), key=lambda item: parse_size(item[0])))
        results["versions"] = {k: results["versions"][k] for k in ("python", *PACKAGES) if k in results["versions"]}
        results["store"] = store_reopen(args)
        write_results(results, args)
        return
    sizes = [
        parse_size(s) for s in ("10k,100k" if args.quick and args.sizes == "10k,100k,1M" else args.sizes).split(",")
    ]
    passes = args.passes or (3 if args.quick else 5)
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
    print("\n== persistent store", flush=True)
    results["store"] = store_reopen(args)
    results["elapsed_s"] = time.perf_counter() - t_start
    results["date"] = started.strftime("%Y-%m-%d %H:%M UTC")
    results["command"] = "python benchmarks/run.py " + " ".join(sys.argv[1:])
    write_results(results, args)


def store_reopen(args: argparse.Namespace) -> dict:
    """Reopen of a persistent store + first query vs building the index from JSONL (engine_store_reopen.py)."""
    size = parse_size(args.store_size)
    row = run_engine("engine_store_reopen.py", "--size", str(size), "--passes", "3")
    row["date"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    row["command"] = "python benchmarks/run.py " + " ".join(sys.argv[1:])
    return row


def write_results(results: dict, args: argparse.Namespace) -> None:
    """Print the report, write results.json and (unless --no-readme) the results section of README.md."""
    text = report(results)
    print("\n" + text)
    (HERE / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not args.no_readme and README.is_file():
        readme = README.read_text(encoding="utf-8")
        if START in readme and END in readme:
            head, rest = readme.split(START, 1)
            _, tail = rest.split(END, 1)
            README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
            print(f"\nwrote the results into {README.relative_to(HERE.parent)}")


def ratio(a, b) -> float | None:
    try:
        return a / b if a is not None and b else None
    except TypeError:
        return None


def report(results: dict) -> str:
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
        f"Compiling agentmemory's kernels with an empty numba cache (once per machine, on the first index of "
        f">= 50,000 entries): {fmt(results['cold_jit_s'])} s.",
        "",
    ]
    lines += store_section(results.get("store"))
    lines += targets(results)
    return "\n".join(lines)


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
    ]


def targets(results: dict) -> list[str]:
    sizes = results["sizes"]
    out = ["### Targets (issues 5 and 14)", "", "| target | measured | met |", "|---|---|---|"]

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
    row = results.get("store") or {}
    if "ratio" in row:
        add(
            f"reopen a {label(row['size'])}-entry store + first query <= 2x building the index from JSONL (issue 14)",
            f"{fmt(row['ratio'])}x ({fmt(row['reopen_s'])} s vs {fmt(row['jsonl_s'])} s); same top 10: {row['same_top10']}",
            row["ratio"] <= 2.0 and row["same_top10"],
        )
    return out


if __name__ == "__main__":
    main()
