"""Metrics over a synthetic run: 10,000 queries x 100 ranked documents, against pytrec_eval and ranx.

The run has distinct scores per query (ranx keeps insertion order on ties and
trec_eval sorts them by id, so ties would measure tie rules, not speed); each
query has 1..20 judged documents with grades 0..3, half of them retrieved.
Measures: P@10, R@10, RR, nDCG@10, AP@100 (pytrec_eval P_10, recall_10,
recip_rank, ndcg_cut_10, map_cut_100; ranx precision@10, recall@10, mrr,
ndcg@10, map@100).  ``--engine`` picks one library per process; "cold" is
the first evaluation in the process (imports done; ranx's numba JIT or cache
load included), "warm" the median of the following passes.  Each reports
its per-measure means; the runner compares them.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import emit

MEASURES = ["P@10", "R@10", "RR", "nDCG@10", "AP@100"]
PYTREC = {"P@10": "P_10", "R@10": "recall_10", "RR": "recip_rank", "nDCG@10": "ndcg_cut_10", "AP@100": "map_cut_100"}
RANX = {"P@10": "precision@10", "R@10": "recall@10", "RR": "mrr", "nDCG@10": "ndcg@10", "AP@100": "map@100"}


def data(n_queries: int = 10_000, depth: int = 100, seed: int = 7):
    rng = np.random.default_rng(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = rng.choice(5000, size=depth, replace=False)
        scores = np.sort(rng.random(depth))[::-1] * 10 + np.arange(depth)[::-1] * 1e-6
        run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
        n_rel = int(rng.integers(1, 21))
        hits = rng.choice(docs, size=n_rel // 2, replace=False)
        misses = rng.choice(np.setdiff1d(np.arange(5000), docs), size=n_rel - len(hits), replace=False)
        judged = np.concatenate([hits, misses])
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(judged, rng.integers(0, 4, size=len(judged)))}
    return run, qrels


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", choices=["agentmemory", "pytrec_eval", "ranx"], required=True)
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_args()
    run, qrels = data()
    if args.engine == "agentmemory":
        from agentmemory.metrics.scoring import score_run

        def evaluate():
            return score_run(qrels, run, ",".join(MEASURES)).mean

    elif args.engine == "pytrec_eval":
        import pytrec_eval

        def evaluate():
            evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC.values()))
            per_query = evaluator.evaluate(run)
            return {m: statistics.fmean(v[PYTREC[m]] for v in per_query.values()) for m in MEASURES}

    else:
        from ranx import Qrels, Run
        from ranx import evaluate as ranx_evaluate

        def evaluate():
            scores = ranx_evaluate(Qrels(qrels), Run(run), [RANX[m] for m in MEASURES])
            return {m: float(scores[RANX[m]]) for m in MEASURES}

    t0 = time.perf_counter()
    means = evaluate()
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(args.passes):
        t0 = time.perf_counter()
        evaluate()
        warm.append(time.perf_counter() - t0)
    emit(
        {"engine": args.engine, "cold_s": cold, "warm_s": statistics.median(warm), "warm_passes": warm, "means": means}
    )


if __name__ == "__main__":
    main()
