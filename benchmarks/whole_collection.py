"""The whole-process benchmark's collections: BEIR folders written from :mod:`corpus`, cached.

``folder(n)`` is ``benchmarks/.cache/whole/<n>/`` holding

* ``corpus.jsonl``: entry ``i`` of the benchmark corpus as ``{"_id": "d%08d", "text": "..."}``
  (its tokens joined by single spaces), one line each, in id order;
* ``queries.jsonl``: the 1,000 benchmark queries as ``{"_id": "q%04d", "text": "..."}``;
* ``qrels/test.tsv``: per query, up to 3 entries containing the query's rarest
  term (by corpus frequency; the lowest entry numbers), grade 1.  The judgments
  only give ``agentmemory eval`` something to score: they are not a test of
  ranking quality.

``scoped_folder(scopes, per_scope)`` is the many-scopes collection shaped like
LongMemEval-M: ``scopes`` scopes of ``per_scope`` entries each (entry ``j`` of
scope ``s`` has the text of corpus entry ``(s * per_scope + j) % 1,000,000``
and the id ``s%03d-%05d``), and one query per scope (query ``s`` of the
benchmark queries, cycling), with the entry containing its rarest term judged
as above within the scope.

Files are written once (atomically: a ``.tmp`` folder renamed into place) and
reused; ``python benchmarks/whole_collection.py 10k 100k`` writes them.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
from corpus import CACHE, corpus, queries

WHOLE = CACHE / "whole"
JUDGED = 3
CORPUS_MAX = 1_000_000


def _write(dest: Path, corpus_lines, query_lines: list[str], qrels: list[tuple[str, str]]) -> Path:
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "qrels").mkdir(parents=True)
    with open(tmp / "corpus.jsonl", "w", encoding="utf-8") as out:
        for chunk in corpus_lines:
            out.write(chunk)
    (tmp / "queries.jsonl").write_text("".join(query_lines), encoding="utf-8")
    (tmp / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in qrels), encoding="utf-8"
    )
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def _judged(tokens: np.ndarray, offsets: np.ndarray, terms: list[int]) -> list[list[int]]:
    """Per query term, the first ``JUDGED`` entry numbers containing it."""
    doc_of = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    out = []
    for t in terms:
        docs = np.unique(doc_of[tokens == t])
        out.append(docs[:JUDGED].tolist())
    return out


def _rarest(tokens: np.ndarray, qs: list[list[str]], vocab: list[str]) -> list[int]:
    number = {w: i for i, w in enumerate(vocab)}
    freq = np.bincount(tokens, minlength=len(vocab))
    out = []
    for q in qs:
        present = [number[w] for w in q if freq[number[w]] > 0] or [number[q[0]]]
        out.append(min(present, key=lambda t: (freq[t], t)))
    return out


def folder(n: int) -> Path:
    """The collection of the corpus's first ``n`` entries (written when missing)."""
    dest = WHOLE / str(n)
    if (dest / "corpus.jsonl").is_file():
        return dest
    c = corpus(n)
    qs = queries()

    def lines():
        for start in range(0, n, 50_000):
            stop = min(n, start + 50_000)
            yield "".join(
                json.dumps({"_id": i, "text": t}) + "\n" for i, t in zip(c.ids(start, stop), c.texts(start, stop))
            )

    query_lines = [json.dumps({"_id": f"q{i:04d}", "text": " ".join(q)}) + "\n" for i, q in enumerate(qs)]
    rare = _rarest(c.tokens, qs, c.words)
    judged = _judged(c.tokens, c.offsets, rare)
    qrels = [(f"q{i:04d}", f"d{d:08d}") for i, docs in enumerate(judged) for d in docs]
    return _write(dest, lines(), query_lines, qrels)


def scoped_folder(scopes: int, per_scope: int) -> Path:
    """The many-scopes collection (see the module docstring), written when missing."""
    dest = WHOLE / f"scopes-{scopes}x{per_scope}"
    if (dest / "corpus.jsonl").is_file():
        return dest
    c = corpus(min(CORPUS_MAX, scopes * per_scope))
    size = len(c)
    qs = queries()
    vocab = c.words
    number = {w: i for i, w in enumerate(vocab)}

    def lines():
        for s in range(scopes):
            a = (s * per_scope) % size
            picks = [(a + j) % size for j in range(per_scope)]
            lo, hi = min(picks), max(picks) + 1
            texts = c.texts(lo, hi)
            yield "".join(
                json.dumps({"_id": f"s{s:03d}-{j:05d}", "text": texts[p - lo], "scope": f"s{s:03d}"}) + "\n"
                for j, p in enumerate(picks)
            )

    query_lines = []
    qrels = []
    for s in range(scopes):
        q = qs[s % len(qs)]
        query_lines.append(json.dumps({"_id": f"q{s:04d}", "text": " ".join(q), "scope": f"s{s:03d}"}) + "\n")
        a = (s * per_scope) % size
        picks = [(a + j) % size for j in range(per_scope)]
        terms = {number[w] for w in q}
        for j, p in enumerate(picks):
            toks = c.tokens[c.offsets[p] : c.offsets[p + 1]]
            if terms.intersection(toks.tolist()):
                qrels.append((f"q{s:04d}", f"s{s:03d}-{j:05d}"))
                if sum(1 for qq, _ in qrels if qq == f"q{s:04d}") >= JUDGED:
                    break
        if not any(qq == f"q{s:04d}" for qq, _ in qrels):
            qrels.append((f"q{s:04d}", f"s{s:03d}-00000"))
    return _write(dest, lines(), query_lines, qrels)


if __name__ == "__main__":
    from run import parse_size

    for arg in sys.argv[1:] or ["10k"]:
        if "x" in arg:
            a, b = arg.split("x")
            print(scoped_folder(int(a), int(b)))
        else:
            print(folder(parse_size(arg)))
