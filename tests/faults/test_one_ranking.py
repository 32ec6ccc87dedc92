"""One ranking: for any plugin, the evaluation's per-query values are trec_eval's on the run it exports.

A Hypothesis plugin gives each entry a drawn score (ties, 0, negatives and
infinities included) and lists its hits either in the ranking rule's order
or in a drawn order.  Either the boundary refuses it (exactly when the list
breaks the rule) or every per-query value equals pytrec_eval's on the TREC
run written from the same hits and read back.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agentmemory import evaluate
from agentmemory.errors import PluginError
from agentmemory.files.trec import format_run, read_run
from agentmemory.records import Hit
from agentmemory.retrievers import BM25

MEASURES = {"RR": "recip_rank", "P@5": "P_5", "R@5": "recall_5", "nDCG@5": "ndcg_cut_5", "AP@5": "map_cut_5"}
SCORES = st.sampled_from([3.0, 2.0, 2.0, 1.0, 0.5, 0.0, -1.0, math.inf, -math.inf])


def _plugin(scores: dict[str, float], ordered: bool, shuffle: int) -> type:
    """A plugin class (defined here, outside agentmemory: guarded) ranking BM25's matches with the drawn scores."""

    class Drawn(BM25):
        name = "drawn"
        label = "Drawn"

        def search(self, query: Any, k: int) -> list[Hit]:
            found = [(scores.get(h.entry_id, 1.0), h.entry_id) for h in BM25.search(self, query, 1000)]
            if ordered:
                found.sort(reverse=True)
            else:
                found = found[shuffle % max(len(found), 1) :] + found[: shuffle % max(len(found), 1)]
                found.reverse()
            return [Hit(i, s, r) for r, (s, i) in enumerate(found[:k], start=1)]

    return Drawn


def _follows_rule(evaluation_hits: list[tuple[float, str]]) -> bool:
    return all(a >= b for a, b in zip(evaluation_hits, evaluation_hits[1:]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    drawn=st.dictionaries(st.sampled_from([f"m{i:02d}" for i in range(1, 17)]), SCORES, max_size=16),
    ordered=st.booleans(),
    shuffle=st.integers(0, 30),
)
def test_any_plugin_is_refused_or_agrees_with_trec_eval_on_its_exported_run(notes, drawn, ordered, shuffle) -> None:
    plugin = _plugin(drawn, ordered, shuffle)
    try:
        evaluation = evaluate(notes, [plugin], k=5, seed=7)
    except PluginError as err:
        assert not ordered, err  # a list in the rule's order is never refused
        assert "returned hits out of order" in str(err)
        event("refused: out of order")
        return
    event("accepted")
    [result] = evaluation.results
    run = {q.query_id: [(h.entry_id, h.score) for h in q.hits] for q in result.per_query}
    assert all(_follows_rule([(s, i) for i, s in hits]) for hits in run.values())
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.trec"
        path.write_text(format_run(run, tag="drawn"), encoding="utf-8")
        exported = read_run(path)
    qrels = {q: dict(d) for q, d in notes.qrels.items()}
    official = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES.values())).evaluate(exported)
    for q in result.per_query:
        theirs = official.get(q.query_id, {})
        for ours, measure in MEASURES.items():
            assert q.metrics[ours] == pytest.approx(theirs.get(measure, 0.0), abs=1e-12), (q.query_id, ours)
