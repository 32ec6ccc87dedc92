"""Whole processes, from process start to exit: what a user waits for, on the install a user has.

    python benchmarks/whole_process.py                      # 10k, 100k, 1M and 500 x 5,000 scopes, 3 rounds
    python benchmarks/whole_process.py --quick              # 10k and 100k, 50 x 5,000 scopes (a smoke run)
    python benchmarks/whole_process.py --sizes 100k --rounds 5 --no-readme
    python benchmarks/run.py --only whole                   # the same, from the suite's runner

Every row is one command run as its own process; its time is the wall clock
from starting it to its exit, its memory the process's peak RSS (``wait4``'s
``ru_maxrss``; every row is started by a small launcher process, because a
child's ``ru_maxrss`` begins at its parent's peak).  Rows of one table run in turn, and each round rotates their
order (alternating runs: this machine's cores are shared with other work);
the table shows each row's median over ``--rounds`` rounds, and the spread.

* **agentmemory (plain install)**: ``agentmemory retrieve --retriever bm25
  --k 10`` (and ``agentmemory eval``) from a virtual environment this script
  builds with ``pip install <this repository>`` and no extras (pinned by
  ``constraints.txt``): what ``pip install agentmemory-eval`` gives a user.
  Built once per source version in ``benchmarks/.cache/plainvenv`` (about 15 s;
  rebuilt when ``pyproject.toml`` or a file of the package changes).
  numba is a core dependency; its kernels are used from 150,000 entries on
  once cached, and the first index of 10,000+ entries compiles them into the
  cache in the background (nobody waits for it).  When this script starts it
  empties the plain install's numba cache and then compiles BM25's kernels
  into it, untimed, with that background compiler's own program: the 10k and
  100k rows are the NumPy path (below 150,000 entries), and the 1M rows what
  an install gets once it has run any evaluation of 10,000+ entries (the
  kernels, from numba's cache).  From 150,000 entries a row **agentmemory,
  first run** is the same command with numba's cache pointed at an empty
  folder and no background compile: the very first run of a fresh install
  (the NumPy path).
* **agentmemory, warm numba cache**: the same command from the source tree
  (this interpreter, ``PYTHONPATH``) whose kernels are compiled into numba's
  cache by one untimed run first: what every run after the first gets.
* **tantivy**, **bm25s**, **rank_bm25**: ``engine_whole_*.py``, each a script
  a user would write: read the same JSONL with ``json.loads``, index with one
  thread, write the same TREC run file.  rank_bm25 stops querying after
  ``--rank-budget`` seconds; its time for all queries is extrapolated from the
  queries it ran (and marked so).

The collections (``whole_collection.py``, cached in ``benchmarks/.cache/whole``)
are the benchmark corpus's first 10k, 100k and 1M entries as BEIR folders, and
the many-scopes collection: 500 scopes x 5,000 entries, one query per scope
(shaped like LongMemEval-M, whose 500 questions each search their own
haystack).  The reader rows time ``load_collection`` against ``orjson`` /
``json`` parsing the same lines into dicts (in-process seconds, imports
excluded).  Writes ``benchmarks/whole.json`` and the section between the
``whole`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import CACHE  # noqa: E402  (benchmarks/ is not a package)
from run import MARK, cpu, fmt, label, parse_size, ratio  # noqa: E402
from whole_collection import folder, scoped_folder  # noqa: E402

README = HERE / "README.md"
RESULTS = HERE / "whole.json"
START, END = "<!-- whole:start -->", "<!-- whole:end -->"
PLAIN = CACHE / "plainvenv"
TIMEOUT = 3600
LOADS: list[float] = []  # the 1-minute load average at the start of every round (the machine is shared)


# -- the plain install ----------------------------------------------------------------------------
def source_digest() -> str:
    """sha256 of what a plain install is built from: pyproject.toml, constraints.txt, the package, the fixture."""
    h = hashlib.sha256()
    files = [REPO / "pyproject.toml", REPO / "constraints.txt", REPO / "README.md"]
    files += sorted((REPO / "agentmemory").rglob("*.py"))
    files += sorted(p for p in (REPO / "fixtures" / "assistant-notes").rglob("*") if p.is_file())
    for path in files:
        h.update(path.relative_to(REPO).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def plain_install(python: str | None = None) -> Path:
    """The plain venv's ``bin`` folder (built or rebuilt when the sources changed)."""
    if python:
        return Path(python).parent
    digest = source_digest()
    stamp = PLAIN / ".source-digest"
    if stamp.is_file() and stamp.read_text().strip() == digest and (PLAIN / "bin" / "agentmemory").exists():
        return PLAIN / "bin"
    print(f"building the plain install in {PLAIN.relative_to(REPO)} (pip install ., no extras)", flush=True)
    shutil.rmtree(PLAIN, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(PLAIN)], check=True)
    pip = [str(PLAIN / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    with tempfile.TemporaryDirectory() as tmp:  # build from a copy: no build/ or egg-info left in the tree
        src = Path(tmp) / "src"
        shutil.copytree(
            REPO, src, ignore=shutil.ignore_patterns(".git", ".venv", ".cache", "__pycache__", "reports", "*.egg-info")
        )
        subprocess.run([*pip, "-c", str(REPO / "constraints.txt"), str(src)], check=True)
    stamp.write_text(digest + "\n")
    return PLAIN / "bin"


def _installed_retrievers(python: str) -> Path:
    """The folder of ``python``'s installed ``agentmemory.retrievers`` (asked from a neutral folder: run from this
    checkout, ``python -c`` would import the checkout's)."""
    code = "import agentmemory.retrievers as r, os; print(os.path.dirname(r.__file__))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return Path(done.stdout.strip())


def empty_numba_cache(python: str) -> int:
    """Delete the numba cache files beside the installed ``agentmemory.retrievers`` (a fresh install's state)."""
    gone = 0
    for path in (_installed_retrievers(python) / "__pycache__").glob("_accel.*.nb[ic]"):
        path.unlink()
        gone += 1
    return gone


def warm_numba_cache(python: str) -> float:
    """Compile BM25's kernels into the plain install's cache, untimed, as the background compiler started by any
    evaluation of 10,000+ entries does (its very program); its seconds."""
    from agentmemory.retrievers._index import WARM_COMMAND

    root = _installed_retrievers(python).parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        lock = Path(tmp) / "warm.lock"
        lock.write_bytes(b"")
        t0 = time.perf_counter()
        subprocess.run(
            [python, "-c", WARM_COMMAND, str(root), "bm25", str(lock)],
            check=True,
            cwd=tmp,
            env={**os.environ, "AGENTMEMORY_ACCEL": "on"},
        )
        return time.perf_counter() - t0


def has_numba(python: str) -> bool:
    return subprocess.run([python, "-c", "import numba"], capture_output=True).returncode == 0


# -- running one process ----------------------------------------------------------------------------
# A child's ``ru_maxrss`` starts at its parent's high-water RSS (Linux carries
# the forking process's peak across exec), so a row started from this script,
# which by then has read collections of up to a million entries, would report
# this script's peak instead of its own.  Every row is therefore started by a
# small launcher process, itself started before this script holds any data.
_LAUNCHER = r"""
import json, os, subprocess, sys, tempfile, time
for line in sys.stdin:
    job = json.loads(line)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(job["cmd"], stdout=out, stderr=err, env=job["env"])
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        reply = {"wall_s": wall, "peak_mb": usage.ru_maxrss / 1024, "code": os.waitstatus_to_exitcode(status),
                 "stdout": out.read().decode(errors="replace"), "stderr": err.read().decode(errors="replace")}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
"""
_launcher: subprocess.Popen | None = None


def start_launcher() -> None:
    """Start the launcher (call first thing, while this process is small)."""
    global _launcher
    if _launcher is None:
        _launcher = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )


def run_process(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """Run ``cmd``; wall seconds from start to exit, peak RSS (MiB) of the process, its last stdout line."""
    start_launcher()
    assert _launcher is not None and _launcher.stdin is not None and _launcher.stdout is not None
    _launcher.stdin.write(json.dumps({"cmd": cmd, "env": {**os.environ, **(env or {})}}) + "\n")
    _launcher.stdin.flush()
    reply = json.loads(_launcher.stdout.readline())
    stdout, stderr = reply["stdout"], reply["stderr"]
    if reply["code"] != 0:
        tail = " | ".join((stderr or stdout).strip().splitlines()[-2:])
        return {"error": f"exit {reply['code']}: {tail}"}
    lines = stdout.strip().splitlines()
    return {"wall_s": reply["wall_s"], "peak_mb": reply["peak_mb"], "last": lines[-1] if lines else ""}


def rounds(rows: dict[str, tuple[list[str], dict]], n_rounds: int) -> dict[str, dict]:
    """Run every row ``n_rounds`` times, rotating the order each round; medians and all runs per row."""
    names = list(rows)
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for r in range(n_rounds):
        LOADS.append(os.getloadavg()[0])
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            cmd, env = rows[name]
            res = run_process(cmd, env)
            shown = f"{res['wall_s']:.2f} s, {res['peak_mb']:.0f} MB" if "wall_s" in res else res["error"]
            print(f"  round {r + 1}: {name}: {shown}", flush=True)
            runs[name].append(res)
    out = {}
    for name, got in runs.items():
        ok = [g for g in got if "wall_s" in g]
        if not ok:
            out[name] = {"error": got[0]["error"] if got else "not run"}
            continue
        walls = [g["wall_s"] for g in ok]
        out[name] = {
            "wall_s": statistics.median(walls),
            "walls": [round(w, 3) for w in walls],
            "peak_mb": statistics.median(g["peak_mb"] for g in ok),
            "last": [g["last"] for g in ok],
        }
    return out


def run_ids(path: Path) -> dict[str, list[str]]:
    """Query id -> its entry ids in rank order, from a TREC run file."""
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _, d, *_ = line.split()
        out.setdefault(q, []).append(d)
    return out


def reference_check(n: int, run: Path) -> dict:
    """Share of queries whose top 10 in ``run`` equals the exact reference's (engine_reference.py)."""
    proc = subprocess.run(
        [sys.executable, str(HERE / "engine_reference.py"), "--size", str(n), "--passes", "1"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    ref = next((json.loads(x[len(MARK) :]) for x in proc.stdout.splitlines() if x.startswith(MARK)), None)
    if ref is None or not run.is_file():
        return {"error": "reference not computed"}
    ours = run_ids(run)
    same = [ours.get(f"q{i:04d}", []) == [f"d{d:08d}" for d in top] for i, top in enumerate(ref["top10"])]
    return {"identical": sum(same) / len(same), "queries": len(same)}


# -- the benchmark ----------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k,1M")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per table (median reported; >= 3)")
    ap.add_argument("--scopes", default="500x5000", help="the many-scopes collection, SCOPESxENTRIES ('' skips)")
    ap.add_argument("--rank-budget", type=float, default=10.0, help="seconds of rank_bm25 querying per run")
    ap.add_argument("--rank-bm25-max", default="100k", help="largest size rank_bm25 runs at")
    ap.add_argument("--eval-size", default="100k", help="the size `agentmemory eval` is measured at")
    ap.add_argument("--plain-python", help="use this interpreter as the plain install instead of building one")
    ap.add_argument("--quick", action="store_true", help="10k and 100k, 50 x 5,000 scopes")
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--report-only", action="store_true", help="run nothing: rewrite the README from whole.json")
    args = ap.parse_args()
    if args.report_only:
        write_readme(report(in_run_order(json.loads(RESULTS.read_text(encoding="utf-8")))))
        return
    start_launcher()
    run_whole(args)


def run_whole(args: argparse.Namespace) -> dict:
    started = _dt.datetime.now(_dt.timezone.utc)
    t_start = time.perf_counter()
    sizes_text = "10k,100k" if args.quick and args.sizes == "10k,100k,1M" else args.sizes
    scopes_text = "50x5000" if args.quick and args.scopes == "500x5000" else args.scopes
    sizes = [parse_size(s) for s in sizes_text.split(",") if s.strip()]
    plain_bin = plain_install(args.plain_python)
    plain_py = str(plain_bin / "python")
    emptied = empty_numba_cache(plain_py)
    print(f"  emptied the plain install's numba cache ({emptied} files)", flush=True)
    warmed = warm_numba_cache(plain_py)
    print(f"  compiled BM25's kernels into it (untimed: {warmed:.1f} s)", flush=True)
    ours_cmd = (
        [str(plain_bin / "agentmemory")] if (plain_bin / "agentmemory").exists() else [plain_py, "-m", "agentmemory"]
    )
    fast = has_numba(sys.executable)
    fast_env = {"PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    fast_cmd = [sys.executable, "-m", "agentmemory"]
    peers = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="whole-"))
    empty_cache = tmp / "empty-numba-cache"  # the first-run rows' numba cache: nothing compiled, nothing written
    empty_cache.mkdir()
    results: dict = {
        "sizes": {},
        "cpu": cpu(),
        "cores": os.cpu_count(),
        "rounds": args.rounds,
        "versions": versions(plain_py),
        "plain_numba": has_numba(plain_py),
    }
    rank_max = parse_size(args.rank_bm25_max)
    eval_size = parse_size(args.eval_size)
    try:
        for n in sizes:
            print(f"\n== {label(n)} entries", flush=True)
            coll = str(folder(n))
            run = {
                name: tmp / f"{label(n)}-{name}.trec" for name in ("ours", "fast", "first", "tantivy", "bm25s", "rank")
            }
            rows: dict[str, tuple[list[str], dict]] = {
                "agentmemory": (
                    [*ours_cmd, "retrieve", "--collection", coll, "--retriever", "bm25", "--k", "10"]
                    + ["--out", str(run["ours"]), "--no-progress"],
                    {},
                ),
            }
            if fast:
                rows["agentmemory, warm numba cache"] = (
                    [*fast_cmd, "retrieve", "--collection", coll, "--retriever", "bm25", "--k", "10"]
                    + ["--out", str(run["fast"]), "--no-progress"],
                    fast_env,
                )
                print("  (untimed: compiling or loading the numba kernels once)", flush=True)
                run_process(rows["agentmemory, warm numba cache"][0], {**fast_env, "AGENTMEMORY_ACCEL": "on"})
            if n >= FIRST_RUN_FROM:
                rows[FIRST_RUN] = (
                    [*ours_cmd, "retrieve", "--collection", coll, "--retriever", "bm25", "--k", "10"]
                    + ["--out", str(run["first"]), "--no-progress"],
                    {"NUMBA_CACHE_DIR": str(empty_cache), "AGENTMEMORY_ACCEL_BACKGROUND": "off"},
                )
            for name, script in (("tantivy", "tantivy"), ("bm25s", "bm25s")):
                rows[name] = ([peers, str(HERE / f"engine_whole_{script}.py"), "--collection", coll]
                              + ["--out", str(run[name])], {})  # fmt: skip
            if n <= rank_max:
                rows["rank_bm25"] = (
                    [peers, str(HERE / "engine_whole_rank_bm25.py"), "--collection", coll, "--out", str(run["rank"])]
                    + ["--budget", str(args.rank_budget)],
                    {},
                )
            if n == eval_size:
                rows["agentmemory eval"] = (
                    [*ours_cmd, "eval", "--collection", coll, "--retrievers", "bm25,tags", "--k", "10"]
                    + ["--out", str(tmp / "eval.json"), "--no-progress"],
                    {},
                )
            for mode, python in (("agentmemory", plain_py), ("orjson", peers), ("json", peers)):
                rows[f"reader: {mode}"] = (
                    [python, str(HERE / "engine_whole_reader.py"), "--mode", mode, "--collection", coll],
                    {},
                )
            got = rounds(rows, args.rounds)
            for name in list(got):
                if name.startswith("reader: ") and "last" in got[name]:
                    got[name]["seconds"] = statistics.median(json.loads(x)["seconds"] for x in got[name]["last"])
            rank = got.get("rank_bm25", {})
            if "last" in rank:
                info = [json.loads(x) for x in rank["last"]]
                rank["queries_run"] = min(i["queries_run"] for i in info)
                rank["queries_total"] = info[0]["queries_total"]
                per_query = statistics.median(i["query_s"] / i["queries_run"] for i in info)
                rank["extrapolated_s"] = rank["wall_s"] + statistics.median(
                    per_query * (i["queries_total"] - i["queries_run"]) for i in info
                )
            for row in got.values():
                row.pop("last", None)
            if run["ours"].is_file() and run["fast"].is_file():
                got["agentmemory"]["same_run_as_numba"] = run["ours"].read_bytes() == run["fast"].read_bytes()
            if FIRST_RUN in got and run["ours"].is_file() and run["first"].is_file():
                got["agentmemory"]["same_run_as_first"] = run["ours"].read_bytes() == run["first"].read_bytes()
            got["agentmemory"]["reference"] = reference_check(n, run["ours"])
            print(f"  exact reference: {got['agentmemory']['reference']}", flush=True)
            results["sizes"][label(n)] = got
        if scopes_text:
            n_scopes, per_scope = (int(x) for x in scopes_text.split("x"))
            print(f"\n== many scopes: {n_scopes} x {per_scope:,}", flush=True)
            coll = str(scoped_folder(n_scopes, per_scope))
            rows = {
                "agentmemory": (
                    [*ours_cmd, "retrieve", "--collection", coll, "--retriever", "bm25", "--k", "10"]
                    + ["--out", str(tmp / "scopes-ours.trec"), "--no-progress"],
                    {},
                ),
                "bm25s (an index per scope)": (
                    [peers, str(HERE / "engine_whole_bm25s.py"), "--collection", coll]
                    + ["--out", str(tmp / "scopes-bm25s.trec")],
                    {},
                ),
            }
            got = rounds(rows, args.rounds)
            for row in got.values():
                row.pop("last", None)
            results["scopes"] = {"scopes": n_scopes, "per_scope": per_scope, "rows": got}
        results["first_use"] = first_use(plain_py, fast)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results["elapsed_s"] = time.perf_counter() - t_start
    results["load"] = [round(x, 2) for x in LOADS]
    results["date"] = started.strftime("%Y-%m-%d %H:%M UTC")
    results["command"] = "python benchmarks/" + " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])
    text = report(results)
    print("\n" + text)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if not args.no_readme:
        write_readme(text)
    return results


FIRST_RUN = "agentmemory, first run (plain install, empty numba cache)"
"""The row of a plain install's very first run at a size where a warm install uses the kernels: numba's cache
empty (a folder of its own) and no background compile, so the NumPy path, as a fresh ``pip install`` gives it."""
FIRST_RUN_FROM = 150_000
"""The sizes from which the first-run row is measured (``ACCEL_MIN_DOCS``: below it every run takes the NumPy
path, the plain install's own row)."""

ROW_ORDER = (
    "agentmemory",
    FIRST_RUN,
    "agentmemory, warm numba cache",
    "tantivy",
    "bm25s",
    "rank_bm25",
    "agentmemory eval",
)
"""The rows of a size's table in the order a run measures them (whole.json's keys are sorted)."""


def in_run_order(results: dict) -> dict:
    """``results`` read back from whole.json with its sizes, rows and versions in the order a run makes them."""
    rank = {name: i for i, name in enumerate(ROW_ORDER)}
    order = ("python", "numpy", "numba", "tantivy", "bm25s", "rank-bm25", "orjson", "agentmemory-eval (plain)")
    results["versions"] = dict(
        sorted(results["versions"].items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order))
    )
    results["sizes"] = {
        size: dict(sorted(rows.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))
        for size, rows in sorted(results["sizes"].items(), key=lambda item: parse_size(item[0]))
    }
    results["first_use"] = dict(sorted(results.get("first_use", {}).items(), key=lambda item: parse_size(item[0])))
    return results


def write_readme(text: str) -> None:
    """Put ``text`` between the ``whole`` markers of benchmarks/README.md."""
    if README.is_file():
        readme = README.read_text(encoding="utf-8")
        if START in readme and END in readme:
            head, rest = readme.split(START, 1)
            _, tail = rest.split(END, 1)
            README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
            print(f"\nwrote the results into {README.relative_to(REPO)}")


FIRST_USE = r"""
import sys, time
t0 = time.perf_counter()
import json
from agentmemory import BM25, MemoryEntry
n = int(sys.argv[1])
entries = []
with open(sys.argv[2], encoding="utf-8") as f:
    for line, _ in zip(f, range(n)):
        obj = json.loads(line)
        entries.append(MemoryEntry(obj["_id"], obj["text"]))
t1 = time.perf_counter()
r = BM25()
r.add(entries)
r.search("the first query", 10)
t2 = time.perf_counter()
print(json.dumps({"build_and_first_search_s": t2 - t1, "numba": "numba" in sys.modules}))
"""


def first_use(plain_py: str, fast: bool) -> dict:
    """Seconds to index n entries and answer a first search in a fresh process, numba's cache empty (plain; kernels forced)."""
    corpus_path = folder(100_000) / "corpus.jsonl"
    out: dict = {}
    for n in (1_000, 10_000, 100_000):
        row = {}
        for name, python, env in (
            ("plain", plain_py, {}),
            ("kernels forced, empty cache", sys.executable if fast else None, "cold"),
        ):
            if python is None:
                continue
            walls, inner = [], []
            for _ in range(3):
                with tempfile.TemporaryDirectory() as cache:
                    # an empty cache: a fresh machine (no background compile into a folder deleted next)
                    extra = {"NUMBA_CACHE_DIR": cache, "AGENTMEMORY_ACCEL_BACKGROUND": "off"}
                    if env == "cold":  # AGENTMEMORY_ACCEL=on: the kernels at any size, compiled first
                        extra.update({"PYTHONPATH": str(REPO), "AGENTMEMORY_ACCEL": "on"})
                    res = run_process([python, "-c", FIRST_USE, str(n), str(corpus_path)], extra)
                if "error" in res:
                    row[name] = res
                    break
                walls.append(res["wall_s"])
                inner.append(json.loads(res["last"]))
            else:
                row[name] = {
                    "wall_s": statistics.median(walls),
                    "build_and_first_search_s": statistics.median(i["build_and_first_search_s"] for i in inner),
                    "numba": any(i["numba"] for i in inner),
                }
        out[label(n)] = row
    return out


def versions(plain_py: str) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "numba", "tantivy", "bm25s", "rank-bm25", "orjson"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "-"
    code = "import importlib.metadata as m; print(m.version('agentmemory-eval'), m.version('numpy'))"
    proc = subprocess.run([plain_py, "-c", code], capture_output=True, text=True)
    if proc.returncode == 0:
        am, np_version = proc.stdout.split()
        out["agentmemory-eval (plain)"] = am
        out["numpy (plain)"] = np_version
    return out


# -- the report -------------------------------------------------------------------------------------
def _wall(row: dict | None) -> float | None:
    return None if not row or "wall_s" not in row else row["wall_s"]


def _spread(row: dict) -> str:
    walls = row.get("walls") or []
    return f"{min(walls):.2f}-{max(walls):.2f}" if walls else ""


def report(results: dict) -> str:
    lines = [
        f"Measured {results['date']} by `{results['command'].strip()}` ({results['elapsed_s'] / 60:.1f} min) on "
        f"{results['cpu']}; each row a whole process (start to exit), median of {results['rounds']} rounds whose "
        f"order rotates (the {results['cores']} cores are shared with other work"
        + (
            f": 1-minute load average {min(results['load']):.1f}-{max(results['load']):.1f} at the rounds' starts"
            if results.get("load")
            else ""
        )
        + "); peak RSS of the process.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + ". "
        f"The plain install has numba: {results['plain_numba']}.",
        "",
    ]
    for size, rows in results["sizes"].items():
        ours = rows.get("agentmemory", {})
        lines += [
            f"### Whole process, {size} entries, 1,000 queries, top 10 (`retrieve`: load JSONL, index, search, write the run)",
            "",
            "| process | seconds (median) | spread | peak RSS MB | ours: time ratio | ours: memory ratio |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, row in rows.items():
            if name.startswith("reader: "):
                continue
            if "error" in row:
                lines.append(f"| {name} | {row['error']} | | | | |")
                continue
            shown = fmt(row["wall_s"])
            if "extrapolated_s" in row:
                shown += f" ({row['queries_run']:,} of {row['queries_total']:,} queries; all: {fmt(row['extrapolated_s'], 1)} extrapolated)"
            is_ours = name == "agentmemory"
            base = row.get("extrapolated_s", row["wall_s"])
            lines.append(
                f"| {name}{' (plain install)' if is_ours else ''} | {shown} | {_spread(row)} | {fmt(row['peak_mb'], 0)} | "
                f"{'' if is_ours else fmt(ratio(_wall(ours), base)) + 'x'} | "
                f"{'' if is_ours else fmt(ratio(ours.get('peak_mb'), row['peak_mb'])) + 'x'} |"
            )
        ref = ours.get("reference", {})
        notes = []
        if "identical" in ref:
            notes.append(
                f"agentmemory's top 10 identical to the exact reference on {fmt(100 * ref['identical'], 1)}% of queries"
            )
        if "same_run_as_first" in ours:
            notes.append(
                f"run files of the plain install's first and later runs byte-identical: {ours['same_run_as_first']}"
            )
        if "same_run_as_numba" in ours:
            notes.append(
                f"run files of the plain install and of the warm cache byte-identical: {ours['same_run_as_numba']}"
            )
        readers = {k[len("reader: ") :]: v for k, v in rows.items() if k.startswith("reader: ")}
        if readers:
            got = {k: v.get("seconds") for k, v in readers.items()}
            notes.append(
                f"reading the collection (in-process, imports excluded): `load_collection` {fmt(got.get('agentmemory'), 3)} s "
                f"(checked, into columns), orjson {fmt(got.get('orjson'), 3)} s and json {fmt(got.get('json'), 3)} s (dicts, "
                f"unchecked); ours / orjson {fmt(ratio(got.get('agentmemory'), got.get('orjson')))}x"
            )
        if notes:
            lines += ["", "; ".join(notes) + "."]
        lines.append("")
    sc = results.get("scopes")
    if sc:
        rows = sc["rows"]
        ours = rows.get("agentmemory", {})
        lines += [
            f"### Many scopes: {sc['scopes']} scopes x {sc['per_scope']:,} entries, one query per scope (LongMemEval-M's shape)",
            "",
            "| process | seconds (median) | spread | peak RSS MB | ours: time ratio | ours: memory ratio |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, row in rows.items():
            if "error" in row:
                lines.append(f"| {name} | {row['error']} | | | | |")
                continue
            is_ours = name == "agentmemory"
            lines.append(
                f"| {name}{' (plain install, one store)' if is_ours else ''} | {fmt(row['wall_s'])} | {_spread(row)} | "
                f"{fmt(row['peak_mb'], 0)} | {'' if is_ours else fmt(ratio(_wall(ours), row['wall_s'])) + 'x'} | "
                f"{'' if is_ours else fmt(ratio(ours.get('peak_mb'), row['peak_mb'])) + 'x'} |"
            )
        lines.append("")
    fu = results.get("first_use")
    if fu:
        lines += [
            "### First use: a fresh process indexes n entries and answers one search",
            "",
            "| entries | plain install, empty numba cache: process s (index + first search s) | "
            "kernels forced (`AGENTMEMORY_ACCEL=on`), empty cache: process s (index + first search s) |",
            "|---:|---:|---:|",
        ]
        for size, row in fu.items():
            cells = []
            for name in ("plain", "kernels forced, empty cache"):
                r = row.get(name)
                if not r:
                    cells.append("-")
                elif "error" in r:
                    cells.append(r["error"])
                else:
                    cells.append(
                        f"{fmt(r['wall_s'])} ({fmt(r['build_and_first_search_s'])}){'' if r['numba'] else ', numba not loaded'}"
                    )
            lines.append(f"| {size} | {cells[0]} | {cells[1]} |")
        lines.append("")
    lines += targets(results)
    return "\n".join(lines)


RETRIEVE_TARGETS = {"10k": 1.2}
"""Issue 23's ceilings on `retrieve`'s time over tantivy's, per size (1.0 where not listed)."""


def targets(results: dict) -> list[str]:
    out = ["### Targets (issues 13, 23 and 36)", "", "| target | measured | met |", "|---|---|---|"]

    def add(name: str, measured: str, ok: bool | None) -> None:
        out.append(f"| {name} | {measured} | {'yes' if ok else 'no' if ok is not None else 'not measured'} |")

    sizes = results["sizes"]
    for size, rows in sizes.items():
        ours, tv = rows.get("agentmemory", {}), rows.get("tantivy", {})
        r = ratio(_wall(ours), _wall(tv))
        ident = ours.get("reference", {}).get("identical")
        ceiling = RETRIEVE_TARGETS.get(size, 1.0)
        add(
            f"`retrieve` whole process <= {ceiling:.1f}x tantivy's at {size}, plain install, exact",
            f"{fmt(r)}x ({fmt(_wall(ours))} s vs {fmt(_wall(tv))} s); top 10 identical to the exact reference on "
            f"{fmt(None if ident is None else 100 * ident, 1)}% of queries",
            None if r is None else (r <= ceiling and ident == 1.0),
        )
        first = rows.get(FIRST_RUN)
        if first and "error" not in first:
            r = ratio(_wall(first), _wall(tv))
            same = ours.get("same_run_as_first")
            add(
                f"`retrieve` whole process <= {ceiling:.1f}x tantivy's at {size}, plain install's first run "
                "(empty numba cache: the NumPy path)",
                f"{fmt(r)}x ({fmt(_wall(first))} s vs {fmt(_wall(tv))} s); run file identical to the later runs': {same}",
                None if r is None else (r <= ceiling and same is True),
            )
    for size, rows in sizes.items():
        ev, ours = rows.get("agentmemory eval"), rows.get("agentmemory", {})
        if ev:
            r = ratio(_wall(ev), _wall(ours))
            add(
                f"`eval --retrievers bm25,tags` <= 1.5x `retrieve` at {size}",
                f"{fmt(r)}x ({fmt(_wall(ev))} s vs {fmt(_wall(ours))} s)",
                None if r is None else r <= 1.5,
            )
    sc = results.get("scopes")
    if sc:
        rows = sc["rows"]
        r = ratio(_wall(rows.get("agentmemory")), _wall(rows.get("bm25s (an index per scope)")))
        add(
            f"many scopes ({sc['scopes']} x {sc['per_scope']:,}) <= 1.0x bm25s building one index per scope",
            f"{fmt(r)}x",
            None if r is None else r <= 1.0,
        )
    for size, rows in sizes.items():
        got = {k[len("reader: ") :]: v.get("seconds") for k, v in rows.items() if k.startswith("reader: ")}
        r = ratio(got.get("agentmemory"), got.get("orjson"))
        if r is not None:
            add(f"JSONL reader within 1.5x of orjson at {size}", f"{fmt(r)}x", r <= 1.5)
    largest = list(sizes)[-1] if sizes else None
    if largest:
        rows = sizes[largest]
        om = rows.get("agentmemory", {}).get("peak_mb")
        tm = rows.get("tantivy", {}).get("peak_mb")
        bm = rows.get("bm25s", {}).get("peak_mb")
        rt, rb = ratio(om, tm), ratio(om, bm)
        add(
            f"peak RSS at {largest} <= 3x tantivy's and <= bm25s's",
            f"{fmt(om, 0)} MB: {fmt(rt)}x tantivy's {fmt(tm, 0)} MB, {fmt(rb)}x bm25s's {fmt(bm, 0)} MB",
            None if rt is None or rb is None else (rt <= 3.0 and rb <= 1.0),
        )
    out += memory_targets(results)
    return out


MEMORY_TARGETS = {"1M": 2.0, "100k": 2.0}
"""Issue 36's ceilings on `retrieve`'s peak RSS over tantivy's, per size."""


def memory_targets(results: dict) -> list[str]:
    """Issue 36's rows: peak memory against tantivy's (1M, 100k) and, for many scopes, against bm25s's memory and
    at most half its time."""
    out = []
    for size, ceiling in MEMORY_TARGETS.items():
        rows = results["sizes"].get(size)
        if not rows:
            continue
        tm = rows.get("tantivy", {}).get("peak_mb")
        for name, which in (("agentmemory", "plain install"), (FIRST_RUN, "plain install's first run")):
            if name not in rows:
                continue
            om = rows[name].get("peak_mb")
            r = ratio(om, tm)
            out.append(
                f"| `retrieve` peak RSS <= {ceiling:.1f}x tantivy's at {size}, {which} | {fmt(om, 0)} MB: "
                f"{fmt(r)}x tantivy's {fmt(tm, 0)} MB | {'not measured' if r is None else 'yes' if r <= ceiling else 'no'} |"
            )
    reader = results["sizes"].get("1M", {})
    got = {k[len("reader: ") :]: v.get("seconds") for k, v in reader.items() if k.startswith("reader: ")}
    r = ratio(got.get("agentmemory"), got.get("orjson"))
    if r is not None:
        out.append(
            f"| reading 1M entries in-process <= 1.3x orjson's parse of the lines | {fmt(r)}x | {'yes' if r <= 1.3 else 'no'} |"
        )
    sc = results.get("scopes")
    if sc:
        rows = sc["rows"]
        ours, peer = rows.get("agentmemory", {}), rows.get("bm25s (an index per scope)", {})
        rm, rt = ratio(ours.get("peak_mb"), peer.get("peak_mb")), ratio(_wall(ours), _wall(peer))
        ok = None if rm is None or rt is None else rm <= 1.0 and rt <= 0.5
        out.append(
            f"| many scopes ({sc['scopes']} x {sc['per_scope']:,}): peak RSS <= 1.0x bm25s's and time <= 0.5x | "
            f"{fmt(ours.get('peak_mb'), 0)} MB vs {fmt(peer.get('peak_mb'), 0)} MB ({fmt(rm)}x); {fmt(rt)}x the time | "
            f"{'not measured' if ok is None else 'yes' if ok else 'no'} |"
        )
    return out


if __name__ == "__main__":
    main()
