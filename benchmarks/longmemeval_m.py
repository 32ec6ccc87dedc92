"""A LongMemEval-M-shaped workload: many questions, each with its own haystack, indexed per turn.

    .venv/bin/python benchmarks/longmemeval_m.py                     # 500 x 500 x 10: 2.5M entries (about 15 min)
    .venv/bin/python benchmarks/longmemeval_m.py --questions 50      # a smaller run
    .venv/bin/python benchmarks/longmemeval_m.py --no-readme         # print only

**The file** (generated once, cached in ``benchmarks/.cache``): a LongMemEval
JSON list of ``--questions`` questions, each with its own haystack of
``--sessions`` sessions of ``--turns`` turns (user and assistant alternating),
the turns 8-16 pseudo-words from the Zipf vocabulary of :mod:`corpus`
(synthetic: the real M file is not available here, and its turns are longer).
Each question has 1-3 answer sessions (``answer_...`` ids, ``has_answer`` on
their user turns, one evidence turn each holding the question's 3-5 terms)
among fillers; dates in the official form; question types in turn.

**Engines** (each in a fresh process; peak RSS over the interpreter's baseline):

* ``agentmemory``: ``load(path, granularity="turn", all_turns=True)``
  (``--turns`` entries per session, ``questions x sessions x turns`` entries in
  ``questions`` scopes), then ``evaluate(collection, "bm25", k=10, ...)``:
  one :class:`~agentmemory.store.core.MemoryStore` holding every scope's BM25 index
  at once, every question searched in its own scope, and LongMemEval's
  measures computed.  Load, index and retrieve+score are timed apart.
* ``bm25s``: what most LongMemEval harnesses do: ``json.load`` the file, then
  per question build a bm25s index (``method="lucene"``, k1 1.2, b 0.75, the
  default NumPy backend) over the turns' tokens (split on spaces: the same
  tokens), retrieve the top 10, and drop the index.

Writes the table between the ``longmemeval-m`` markers of
``benchmarks/README.md`` (unless ``--no-readme``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import MARK, emit, peak_mb, rss_mb, settle  # noqa: E402  (benchmarks/ is not a package)
from corpus import CACHE, SKIP_TOP, _cdf, words  # noqa: E402

README = HERE / "README.md"
START, END = "<!-- longmemeval-m:start -->", "<!-- longmemeval-m:end -->"
SEED = 20260601
TYPES = (
    "single-session-user",
    "single-session-preference",
    "single-session-assistant",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
_WEEK = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MEASURES = "recall_any@5,recall_all@5,ndcg_any@5,recall_any@10,sess.recall_any@5,sess.ndcg_any@5"


def _date(t: _dt.datetime) -> str:
    return t.strftime("%Y/%m/%d ") + f"({_WEEK[t.weekday()]})" + t.strftime(" %H:%M")


def generate(path: Path, questions: int, sessions: int, turns: int) -> None:
    """Write the synthetic file, one question at a time (never the whole list in memory)."""
    vocab = np.asarray(words(), dtype=object)
    cdf, rare = _cdf(), _cdf(SKIP_TOP)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.write("[\n")
        for q in range(questions):
            rng = np.random.Generator(np.random.PCG64([SEED, q]))
            lengths = rng.integers(8, 17, size=sessions * turns)
            draws = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right"), len(vocab) - 1)
            flat = vocab[draws].tolist()
            bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
            texts = [" ".join(flat[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
            terms = vocab[np.unique(np.searchsorted(rare, rng.random(int(rng.integers(3, 6))), side="right"))].tolist()
            n_answers = int(rng.integers(1, 4))
            answer_at = sorted(rng.choice(sessions, size=n_answers, replace=False).tolist())
            ids, dates, haystack = [], [], []
            start = _dt.datetime(2023, 1, 1, 9, 0) + _dt.timedelta(hours=q)
            for s in range(sessions):
                answer = s in answer_at
                sid = f"answer_{q:04d}_{answer_at.index(s) + 1}" if answer else f"fill_{q:04d}_{s:03d}"
                session = []
                for t in range(turns):
                    role = "user" if t % 2 == 0 else "assistant"
                    content = texts[s * turns + t]
                    turn = {"role": role, "content": content}
                    if answer:
                        evidence = t == 0
                        if evidence:
                            turn["content"] = " ".join(terms) + " " + content
                        turn["has_answer"] = evidence
                    session.append(turn)
                ids.append(sid)
                dates.append(_date(start + _dt.timedelta(hours=7 * s)))
                haystack.append(session)
            item = {
                "question_id": f"bench_{q:04d}",
                "question_type": TYPES[q % len(TYPES)],
                "question": "What about " + " ".join(terms) + "?",
                "answer": "synthetic",
                "question_date": _date(start + _dt.timedelta(hours=7 * sessions)),
                "haystack_dates": dates,
                "haystack_session_ids": ids,
                "haystack_sessions": haystack,
                "answer_session_ids": [i for i in ids if i.startswith("answer_")],
            }
            out.write(("" if q == 0 else ",\n") + json.dumps(item))
        out.write("\n]\n")
    tmp.replace(path)


# --- engines (each run in its own process) ------------------------------------------------------------------


def engine_agentmemory(path: Path) -> dict:
    import agentmemory
    from agentmemory.datasets import load
    from agentmemory.evaluation.runner import evaluate

    base = settle()
    t0 = time.perf_counter()
    collection = load(path, format="longmemeval", granularity="turn", all_turns=True)
    load_s = time.perf_counter() - t0
    after_load = rss_mb()
    t1 = time.perf_counter()
    ev = evaluate(collection, "bm25", k=10, measures=MEASURES, ties=False, timings=True)
    total_s = time.perf_counter() - t1
    result = ev.results[0]
    timing = result.timings
    assert timing is not None
    return {
        "engine": "agentmemory",
        "version": agentmemory.__version__,
        "entries": len(collection.entries),
        "scopes": len(collection.entries.scopes()),
        "queries": len(result.per_query),
        "load_s": load_s,
        "index_s": timing.index_seconds,
        "search_s": sum(timing.latencies),
        "other_s": total_s - timing.index_seconds - sum(timing.latencies),
        "rss_after_load_mb": after_load - base,
        "peak_rss_mb": peak_mb() - base,
        "means": {m: result.means[m] for m in MEASURES.split(",")},
        "top10": {q.query_id: [h.entry_id.split("/", 1)[1] for h in q.hits] for q in result.per_query},
    }


def engine_bm25s(path: Path) -> dict:
    import bm25s

    base = settle()
    t0 = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    load_s = time.perf_counter() - t0
    after_load = rss_mb()
    build_s = search_s = 0.0
    entries = 0
    top10 = {}
    for item in data:
        ids, tokens = [], []
        for sid, session in zip(item["haystack_session_ids"], item["haystack_sessions"]):
            for number, turn in enumerate(session, start=1):
                ids.append(f"{sid}_{number}")
                tokens.append(turn["content"].split(" "))
        entries += len(ids)
        t1 = time.perf_counter()
        retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        retriever.index(tokens, show_progress=False)
        t2 = time.perf_counter()
        docs, scores = retriever.retrieve([item["question"].rstrip("?").split(" ")], k=10, show_progress=False)
        search_s += time.perf_counter() - t2
        build_s += t2 - t1
        top10[item["question_id"]] = [ids[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]  # bm25s pads with 0
        del retriever
    return {
        "engine": "bm25s",
        "version": bm25s.__version__,
        "entries": entries,
        "scopes": len(data),
        "queries": len(data),
        "load_s": load_s,
        "index_s": build_s,
        "search_s": search_s,
        "rss_after_load_mb": after_load - base,
        "peak_rss_mb": peak_mb() - base,
        "top10": top10,
    }


ENGINES = {"agentmemory": engine_agentmemory, "bm25s": engine_bm25s}


def _run(engine: str, path: Path) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--engine", engine, "--file", str(path)], capture_output=True, text=True
    )
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            out = json.loads(line[len(MARK) :])
            out["wall_s"] = time.perf_counter() - t0
            return out
    return {"engine": engine, "error": (proc.stderr or proc.stdout).strip().splitlines()[-3:]}


def _overlap(a: dict, b: dict) -> float:
    """Mean share of b's top 10 found in a's top 10 (the official corpus ids)."""
    shares = [len(set(a[q]) & set(b[q])) / len(b[q]) for q in b if b[q]]
    return sum(shares) / len(shares) if shares else float("nan")


def _size(n: float) -> str:
    return f"{n / 1000:,.1f} GB" if n >= 1000 else f"{n:,.0f} MB"


def report(args: argparse.Namespace, file_mb: float, gen_s: float | None, ours: dict, peer: dict) -> str:
    date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    shape = f"{args.questions} questions x {args.sessions} sessions x {args.turns} turns"
    lines = [
        f"Measured {date} by `python benchmarks/longmemeval_m.py "
        + " ".join(sys.argv[1:]).strip()
        + f"` on {platform.processor() or platform.machine()} ({os.cpu_count()} logical cores), one process each.",
        "",
        f"Workload: {shape} = {ours.get('entries', 0):,} turn entries in {ours.get('scopes', 0):,} scopes "
        f"(`--granularity turn --all-turns`); the JSON file is {_size(file_mb)}"
        + (f" (generated in {gen_s:.0f} s)." if gen_s is not None else "."),
        "",
        "| engine | load s | index s | search s | store and scoring s | total s | RSS after load | peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in (ours, peer):
        if "error" in r:
            lines.append(f"| {r['engine']} | error: {' / '.join(r['error'])} | | | | | | |")
            continue
        other = r.get("other_s")
        total = r["load_s"] + r["index_s"] + r["search_s"] + (other or 0.0)
        name = (
            "agentmemory: one store holding every scope's index"
            if r["engine"] == "agentmemory"
            else "bm25s: an index per scope, built and dropped"
        )
        lines.append(
            f"| {name} | {r['load_s']:.1f} | {r['index_s']:.1f} | {r['search_s']:.2f} | "
            f"{'' if other is None else f'{other:.1f}'} | {total:.1f} | "
            f"{_size(r['rss_after_load_mb'])} | {_size(r['peak_rss_mb'])} |"
        )
    if "error" not in ours and "error" not in peer:
        means = ", ".join(f"{m} {v:.3f}" for m, v in ours["means"].items())
        lines += [
            "",
            "Load: reading and checking the JSON file (agentmemory: the `longmemeval` format, with the official ids "
            "and judgments, question by question into columns; bm25s: `json.load`, the whole document).  Index: the BM25 indexes' own build time.  Search: "
            f"the {ours['queries']} questions' top 10 ({1000 * ours['search_s'] / max(ours['queries'], 1):.2f} ms "
            "each for agentmemory).  Store and scoring: the rest of `evaluate()` (the store's bookkeeping of "
            f"{ours['entries']:,} entries and its event log, and six LongMemEval measures per question).",
            "",
            f"agentmemory's top 10 holds {_overlap(ours['top10'], peer['top10']):.3f} of bm25s's positive-score hits "
            f"(bm25s scores in float32 and orders ties its own way).  Means (BM25): {means}; the synthetic "
            "questions name their evidence's rare words, so they are easy.",
        ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite benchmarks/README.md")
    ap.add_argument("--engine", choices=sorted(ENGINES), help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine:
        emit(ENGINES[args.engine](Path(args.file)))
        return
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"longmemeval-m-{args.questions}x{args.sessions}x{args.turns}.json"
    gen_s = None
    if not path.is_file():
        print(f"generating {path.name} ...", flush=True)
        t0 = time.perf_counter()
        generate(path, args.questions, args.sessions, args.turns)
        gen_s = time.perf_counter() - t0
    file_mb = path.stat().st_size / 2**20
    results = {}
    for engine in ("agentmemory", "bm25s"):
        print(f"running {engine} ...", flush=True)
        results[engine] = _run(engine, path)
        shown = {k: v for k, v in results[engine].items() if k != "top10"}
        print("  ", json.dumps(shown), flush=True)
    text = report(args, file_mb, gen_s, results["agentmemory"], results["bm25s"])
    print()
    print(text)
    if not args.no_readme and README.is_file():
        readme = README.read_text(encoding="utf-8")
        if START in readme and END in readme:
            head, rest = readme.split(START, 1)
            _, tail = rest.split(END, 1)
            README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
            print(f"\nwrote the results into {README.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
