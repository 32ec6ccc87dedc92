"""BEAM's 500K chats: ``agentmemory eval`` (bm25, dense, hybrid) as a whole process, beside bm25s per chat.

    .venv/bin/python benchmarks/beam_500k.py PATH/TO/chats/500K               # writes the row to README.md
    .venv/bin/python benchmarks/beam_500k.py PATH/TO/chats/500K --no-readme   # print only

BEAM has no license file, so its chats are not in this repository: bring a
copy (``chats/500K`` of github mohammadtavakoli78/BEAM, 35 chat folders,
about 38,000 messages).  Each engine runs once, in a fresh process, timed
from start to exit, with its peak RSS (``ru_maxrss`` of that child, from
:func:`os.wait4`):

* ``agentmemory eval --collection PATH --format beam --retrievers
  bm25,dense,hybrid --metrics recall_any@10,stale@10 --k 10``: loading and
  checking every chat, one store holding every chat's indexes (BM25, the
  wordllama dense index, hybrid's fusion of both), every question searched in
  its own chat, the measures, bootstrap intervals and paired tests, the
  printed tables;
* the same ``agentmemory eval`` with ``--retrievers bm25`` only, the row to
  set beside bm25s;
* **bm25s**, as a user would script it: ``json.load`` each chat and its
  questions, the same texts (index suffix stripped,
  :func:`agentmemory.datasets.beam.strip_index_suffix`) and the same tokens
  (:func:`agentmemory.tokenize.tokenize`), one index per chat
  (``method="lucene"``, k1 1.2, b 0.75, the default NumPy backend), the top 10
  of every question with evidence, then the index dropped; it prints its
  recall_any@10 under ``--updates fresh`` judgments as a check that it did the
  same work (BM25 only: no dense model, no statistics).

Writes the table between the ``beam-500k`` markers of ``benchmarks/README.md``
(unless ``--no-readme``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
START, END = "<!-- beam-500k:start -->", "<!-- beam-500k:end -->"

BM25S_SCRIPT = r"""
import json, sys
from pathlib import Path

import bm25s
import numpy as np

from agentmemory.datasets.beam import strip_index_suffix
from agentmemory.tokenize import tokenize

def flat(x):
    if isinstance(x, int) and not isinstance(x, bool):
        return [x]
    if isinstance(x, list):
        return [z for y in x for z in flat(y)]
    if isinstance(x, dict):
        return [z for k, v in x.items() if k != "original_info" for z in flat(v)]
    return []

root = Path(sys.argv[1])
hits = questions = messages = 0
for chat in sorted((p for p in root.iterdir() if (p / "chat.json").is_file()), key=lambda p: int(p.name)):
    batches = json.loads((chat / "chat.json").read_text(encoding="utf-8"))
    probing = json.loads((chat / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
    ids, texts = [], []
    for batch in batches:
        for turn in batch["turns"]:
            for m in turn:
                ids.append(m["id"])
                texts.append(tokenize(strip_index_suffix(m["content"])[0]))
    messages += len(ids)
    vocab = {t for doc in texts for t in doc}
    index = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    index.index(texts, show_progress=False)
    for ability, items in probing.items():
        if ability == "abstention":
            continue
        for q in items:
            gold = set(flat(q.get("source_chat_ids")))
            if not gold:
                continue
            terms = [t for t in tokenize(q["question"]) if t in vocab]
            questions += 1
            if not terms:
                continue
            docs, scores = index.retrieve([terms], k=min(10, len(ids)), n_threads=1, show_progress=False)
            top = {ids[d] for d, s in zip(docs[0], scores[0]) if s > 0}
            hits += bool(top & gold)
    del index
print(f"bm25s: {messages} messages, {questions} questions, recall_any@10 {hits / questions:.3f}")
"""


def _run(argv: list[str]) -> tuple[float, float, str]:
    """``(seconds, peak RSS in MB, stdout)`` of one whole process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{argv[:4]} exited with {process.returncode}")
    return seconds, usage.ru_maxrss / 1024, out


def _version(module: str) -> str:
    from importlib.metadata import version

    return version(module)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="BEAM's chats/500K folder (35 chat folders)")
    parser.add_argument("--no-readme", action="store_true", help="print the table only")
    parser.add_argument("--eval-output", type=Path, help="also write what agentmemory eval printed to this file")
    args = parser.parse_args()
    python = sys.executable
    ours = [
        python,
        "-m",
        "agentmemory",
        "eval",
        "--collection",
        str(args.folder),
        "--format",
        "beam",
        "--retrievers",
        "bm25,dense,hybrid",
        "--metrics",
        "recall_any@10,stale@10",
        "--k",
        "10",
    ]
    loads = [os.getloadavg()[0]]
    t_ours, m_ours, out_ours = _run(ours)
    if args.eval_output is not None:
        args.eval_output.write_text(out_ours, encoding="utf-8")
    loads.append(os.getloadavg()[0])
    only_bm25 = [*ours[:9], "bm25", *ours[10:]]
    t_one, m_one, _ = _run(only_bm25)
    loads.append(os.getloadavg()[0])
    t_bm25s, m_bm25s, out_bm25s = _run([python, "-c", BM25S_SCRIPT, str(args.folder)])
    recall = next((line for line in out_ours.splitlines() if line.startswith("| BM25 (baseline)")), "")
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Measured {when} by `python benchmarks/beam_500k.py chats/500K` on {platform.machine()} "
        f"({os.cpu_count()} logical cores, shared: 1-minute load average "
        f"{', '.join(f'{x:.1f}' for x in loads)} before each process), one process each, run once.",
        "",
        f"Versions: python {platform.python_version()}, agentmemory-eval {_version('agentmemory-eval')}, "
        f"bm25s {_version('bm25s')}, numpy {_version('numpy')}, wordllama {_version('wordllama')}.",
        "",
        "| process | seconds | peak RSS MB |",
        "|---|---:|---:|",
        f"| agentmemory eval: bm25, dense, hybrid, one store, statistics and tables | {t_ours:.1f} | {m_ours:,.0f} |",
        f"| agentmemory eval: bm25 only, the same measures, statistics and tables | {t_one:.1f} | {m_one:,.0f} |",
        f"| bm25s: BM25 only, an index per chat, built and dropped | {t_bm25s:.1f} | {m_bm25s:,.0f} |",
        "",
        f"Check: {out_bm25s.strip()}; agentmemory's BM25 row: `{recall.strip()}`.",
    ]
    table = "\n".join(lines)
    print(table)
    if not args.no_readme:
        text = README.read_text(encoding="utf-8")
        head, _, rest = text.partition(START)
        _, _, tail = rest.partition(END)
        README.write_text(f"{head}{START}\n{table}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
