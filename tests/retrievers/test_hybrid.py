"""The hybrid retriever: rank fusion over the union of its components' candidates."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT

from agentmemory import MemoryEntry, Query, load_collection
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int
from agentmemory.evaluation.batch import retrieve_all
from agentmemory.files.trec import read_run, trec_order, write_run
from agentmemory.records import Hit
from agentmemory.retrievers import Hybrid, make_retriever, resolve_retriever
from agentmemory.retrievers.hybrid import shared_ranks, top_with_ties

LOCOMO = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"


def fixed(name: str, scores: dict[str, float]):
    """A retriever factory whose every query gets ``scores`` (entries added and scoring > 0 only)."""

    class Fixed:
        label = name

        def __init__(self) -> None:
            self.name = name.lower()
            self._ids: set[str] = set()

        def add(self, entries) -> None:
            self._ids |= {e.id for e in entries}

        def params(self) -> dict:
            return {}

        def search(self, query, k: int) -> list[Hit]:
            k = check_positive_int("k", k)
            ranked = sorted(((s, i) for i, s in scores.items() if i in self._ids and s > 0), reverse=True)[:k]
            return [Hit(i, float(s), r) for r, (s, i) in enumerate(ranked, 1)]

    Fixed.__name__ = name
    return Fixed


ABCD = [MemoryEntry(i, f"entry {i}") for i in "abcde"]
A = fixed("A", {"a": 3.0, "b": 2.0, "c": 1.0})
B = fixed("B", {"c": 5.0, "d": 4.0})


def _fused(**params) -> list[tuple[str, float]]:
    hybrid = Hybrid(of=[A, B], **params)
    hybrid.add(ABCD)
    return [(h.entry_id, h.score) for h in hybrid.search("q", 5)]


# -- the formulas, by hand ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # RRF, k = 60: a = 1/61, b = 1/62, c = 1/63 + 1/61, d = 1/62 (B only: the union keeps it); b, d tie: d first
        ({}, [("c", 1 / 63 + 1 / 61), ("a", 1 / 61), ("d", 1 / 62), ("b", 1 / 62)]),
        ({"rrf_k": 0}, [("c", 1 / 3 + 1), ("a", 1.0), ("d", 0.5), ("b", 0.5)]),
        # convex 0.5/0.5: A normalised a 1, b 0.5, c 0; B: c 1, d 0; d fuses to 0 and is dropped; a, c tie: c first
        ({"method": "convex"}, [("c", 0.5), ("a", 0.5), ("b", 0.25)]),
        ({"method": "convex", "weights": [0.7, 0.3]}, [("a", 0.7), ("b", 0.35), ("c", 0.3)]),
        ({"method": "convex", "weights": [0.0, 1.0]}, [("c", 1.0)]),
    ],
)
def test_fusion_formulas_by_hand(params: dict, expected: list[tuple[str, float]]) -> None:
    """RRF and the convex combination give the hand-computed scores and the ranking rule's order (ties: id descending)."""
    got = _fused(**params)
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-15)


def test_a_constant_run_normalises_to_one() -> None:
    """min-max over a run whose scores are all equal gives every entry 1 (not 0, not NaN)."""
    hybrid = Hybrid(of=[fixed("Flat", {"a": 2.0, "b": 2.0}), B], method="convex")
    hybrid.add(ABCD)
    assert hybrid.score_all("q") == {"a": 0.5, "b": 0.5, "c": 0.5}


def test_tied_scores_share_their_rank_in_rrf() -> None:
    """Entries a component scores equally fuse equally (rank 1-1-3), so the id tie-break never leaks into RRF."""
    hybrid = Hybrid(of=[fixed("Tied", {"a": 2.0, "b": 2.0, "c": 1.0}), fixed("Empty", {})])
    hybrid.add(ABCD)
    hits = hybrid.search("q", 5)
    assert [(h.entry_id, h.score) for h in hits] == [("b", 1 / 61), ("a", 1 / 61), ("c", 1 / 63)]


@pytest.mark.parametrize(
    ("scores", "ranks"),
    [([3, 2, 1], [1, 2, 3]), ([2, 2, 1], [1, 1, 3]), ([2, 1, 1, 1, 0.5], [1, 2, 2, 2, 5]), ([], [])],
)
def test_shared_ranks_is_competition_ranking(scores: list[float], ranks: list[int]) -> None:
    """shared_ranks: 1 + the number of strictly higher scores."""
    run = [Hit(f"e{i}", float(s), i + 1) for i, s in enumerate(scores)]
    assert shared_ranks(run) == ranks


def test_ties_at_the_depth_cut_are_all_candidates() -> None:
    """With depth 2, entries tied with the 2nd hit are all candidates: whether one is in never depends on its id."""
    component = fixed("Cut", {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0})()
    component.add(ABCD)
    assert [h.entry_id for h in top_with_ties(component, Query("q", "q"), 2)] == ["a", "c", "b"]
    assert [h.entry_id for h in top_with_ties(component, Query("q", "q"), 3)] == ["a", "c", "b"]
    assert [h.entry_id for h in top_with_ties(component, Query("q", "q"), 1)] == ["a"]
    hybrid = Hybrid(of=[fixed("Cut", {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}), B], depth=2)
    hybrid.add(ABCD)
    assert set(hybrid.score_all("q")) == {"a", "b", "c", "d"}


def test_the_union_keeps_hits_only_one_component_finds() -> None:
    """An entry outside one component's top depth is still fused from the other (the mem0 #5742 bug class)."""
    hybrid = Hybrid(of=[A, B], depth=1)
    hybrid.add(ABCD)
    assert hybrid.score_all("q") == {"a": 1 / 61, "c": 1 / 61}


def test_search_deeper_than_depth_is_refused() -> None:
    """search(q, k) with k > depth is one ParameterError line saying to raise depth."""
    hybrid = Hybrid(of=[A, B], depth=3)
    hybrid.add(ABCD)
    assert len(hybrid.search("q", 3)) == 3
    with pytest.raises(ParameterError) as caught:
        hybrid.search("q", 4)
    assert str(caught.value) == (
        "k: 4 (int) is more than the hybrid's depth = 3; it fuses each component's top 3, so it ranks no deeper: "
        "raise depth to at least 4 (hybrid[...,depth=4]; an evaluation at cutoff k looks at k + 1 hits)"
    )


def test_an_evaluation_deeper_than_depth_is_refused_on_the_command_line(capsys, tmp_path: Path) -> None:
    """`agentmemory eval --k 5` with hybrid[depth=3] exits 2 with that one line, and writes nothing."""
    out = tmp_path / "out.json"
    code = main(["eval", "--retrievers", "hybrid[of=bm25+tags,depth=3]", "--k", "5", "--out", str(out)])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        "agentmemory: error: k: 6 (int) is more than the hybrid's depth = 3; it fuses each component's top 3, so it "
        "ranks no deeper: raise depth to at least 6 (hybrid[...,depth=6]; an evaluation at cutoff k looks at k + 1 hits)"
    ]
    assert not out.exists()


# -- against exported component runs ----------------------------------------------------


def _hand_fusion(
    runs: list[dict[str, float]], depth: int, method: str, rrf_k: float, weights: list[float]
) -> dict[str, float]:
    """An independent fusion of TREC runs read from disk: top depth (plus ties at the cut), competition ranks."""
    fused: dict[str, float] = {}
    for i, run in enumerate(runs):
        order = trec_order(run)
        if len(order) > depth:
            cut = run[order[depth - 1]]
            order = [d for j, d in enumerate(order) if j < depth or run[d] == cut]
        kept = {d: run[d] for d in order}
        for d in kept:
            fused.setdefault(d, 0.0)
        low, high = (min(kept.values()), max(kept.values())) if kept else (0.0, 0.0)
        for d, s in kept.items():
            if method == "rrf":
                rank = 1 + sum(1 for other in kept.values() if other > s)
                fused[d] += 1.0 / (rrf_k + rank)
            else:
                fused[d] += weights[i] * ((s - low) / (high - low) if high > low else 1.0)
    return fused


@pytest.mark.parametrize("collection", ["fixture", "locomo"])
@pytest.mark.parametrize(
    "spec",
    [
        "hybrid[depth=4]",
        "hybrid[of=bm25+dense+tags,depth=6,rrf_k=10]",
        "hybrid[method=convex,depth=5]",
        "hybrid[of=bm25+dense,method=convex,weights=0.3+0.7,depth=8]",
    ],
)
def test_hybrid_equals_a_hand_fusion_of_exported_runs(tmp_path: Path, collection: str, spec: str) -> None:
    """Each component's full run, written as a TREC file and read back, fused by hand, gives hybrid's scores and order."""
    data = load_collection(FIXTURE_DIR) if collection == "fixture" else load(LOCOMO)
    hybrid = resolve_retriever(spec)
    params = make_retriever(spec).params()
    depth = params["depth"]
    runs = []
    for key in params["of"]:
        path = tmp_path / f"{key}.trec"
        write_run(
            path,
            {
                q: [(h.entry_id, h.score) for h in hits]
                for q, hits in retrieve_all(data, key, len(data.entries)).items()
            },
        )
        runs.append(read_run(path))
    got = retrieve_all(data, hybrid, depth)
    for query in data.queries:
        by_hand = _hand_fusion(
            [r.get(query.id, {}) for r in runs],
            depth,
            params["method"],
            params.get("rrf_k", 60),
            params.get("weights", []),
        )
        expected = [(d, by_hand[d]) for d in trec_order(by_hand) if by_hand[d] > 0][:depth]
        hits = got[query.id]
        assert [h.entry_id for h in hits] == [d for d, _ in expected], query.id
        assert [h.score for h in hits] == pytest.approx([s for _, s in expected], rel=1e-12, abs=1e-15)


# -- parameters, labels, explain --------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        (
            "hybrid[of=bm25]",
            ParameterError,
            "hybrid of: 'bm25' (str) names fewer than two retrievers; fuse two or more, joined by '+': hybrid[of=bm25+dense]",
        ),
        (
            "hybrid[of=bm25+nope]",
            UnknownNameError,
            "hybrid component: 'nope' (str) is not a known name; choose from: bm25, dense",
        ),
        (
            "hybrid[of=bm25+bm25]",
            ParameterError,
            "hybrid of: ['bm25', 'bm25'] (list) names 'bm25' twice; fuse different retrievers",
        ),
        (
            "hybrid[method=mean]",
            UnknownNameError,
            "hybrid method: 'mean' (str) is not a known name; choose from: convex, rrf",
        ),
        (
            "hybrid[weights=0.5+0.5]",
            ParameterError,
            "hybrid weights: [0.5, 0.5] (list) are given with method=rrf; weights apply to method=convex; drop them for RRF",
        ),
        (
            "hybrid[method=convex,weights=0.5]",
            ParameterError,
            "hybrid weights: 0.5 (float) are not 2 numbers; give one finite weight per component (2), joined by '+'",
        ),
        (
            "hybrid[method=convex,weights=0.5+0.5+0.5]",
            ParameterError,
            "hybrid weights: [0.5, 0.5, 0.5] (list) are not 2 numbers",
        ),
        ("hybrid[method=convex,weights=0.5+x]", ParameterError, "hybrid weights: [0.5, 'x'] (list) are not 2 numbers"),
        (
            "hybrid[method=convex,weights=0.6+0.6]",
            ParameterError,
            "hybrid weights: [0.6, 0.6] (list) are not a convex combination; give weights >= 0 that sum to 1, e.g. 0.7+0.3",
        ),
        (
            "hybrid[method=convex,weights=1.5+-0.5]",
            ParameterError,
            "hybrid weights: [1.5, -0.5] (list) are not a convex combination",
        ),
        (
            "hybrid[rrf_k=-1]",
            ParameterError,
            "hybrid rrf_k: -1 (int) is not a number >= 0; RRF adds 1 / (rrf_k + rank)",
        ),
        ("hybrid[method=convex,rrf_k=10]", ParameterError, "hybrid rrf_k: 10 (int) is given with method=convex"),
        (
            "hybrid[depth=0]",
            ParameterError,
            "hybrid depth: 0 (int) is less than 1; hybrid depth must be an integer >= 1",
        ),
        ("hybrid[depth=2.5]", ParameterError, "hybrid depth: 2.5 (float) is not an integer"),
    ],
)
def test_bad_hybrid_parameters_are_one_clear_error(spec: str, error: type, message: str) -> None:
    """Fewer than two components, an unknown one, a bad method, bad weights, rrf_k or depth: one ParameterError line."""
    with pytest.raises(error) as caught:
        make_retriever(spec)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_an_instance_component_is_refused() -> None:
    """Components are made per hybrid (one hybrid per scope): an instance cannot be shared, and the error says so."""
    from agentmemory import BM25

    with pytest.raises(ParameterError, match=re.escape("hybrid component: 'bm25' (str) is a retriever instance")):
        Hybrid(of=[BM25(), "tags"])


@pytest.mark.parametrize(
    ("spec", "key", "label"),
    [
        ("hybrid", "hybrid", "Hybrid RRF (BM25 + Dense (wordllama))"),
        ("hybrid[of=bm25+dense,method=rrf,rrf_k=60,depth=100]", "hybrid", "Hybrid RRF (BM25 + Dense (wordllama))"),
        ("hybrid[method=convex]", "hybrid[method=convex]", "Hybrid convex (BM25 + Dense (wordllama))"),
        (
            "hybrid[of=bm25[k1=0.9]+dense]",
            "hybrid[of=bm25[k1=0.9]+dense]",
            "Hybrid RRF (BM25 (k1=0.9) + Dense (wordllama))",
        ),
        (
            "hybrid[of=bm25+tags,rrf_k=30,depth=50]",
            "hybrid[of=bm25+tags,rrf_k=30,depth=50]",
            "Hybrid RRF (BM25 + Tag scorer; rrf_k=30, depth=50)",
        ),
        (
            "hybrid[method=convex,weights=0.7+0.3]",
            "hybrid[method=convex,weights=0.7+0.3]",
            "Hybrid convex (BM25 + Dense (wordllama); weights=0.7+0.3)",
        ),
    ],
)
def test_keys_and_labels(spec: str, key: str, label: str) -> None:
    """A spec's key drops default parameters; its label names the method, the components and what differs."""
    resolved = resolve_retriever(spec)
    assert (resolved.key, resolved.label) == (key, label)
    assert make_retriever(spec).label == label


def test_params_are_json_ready_and_carry_each_component() -> None:
    """params() lists the components by key with their own parameters (nested brackets reach the component)."""
    params = make_retriever("hybrid[of=bm25[k1=0.9]+tags]").params()
    assert json.loads(json.dumps(params)) == params
    assert params["of"] == ["bm25[k1=0.9]", "tags"] and params["rrf_k"] == 60 and params["depth"] == 100
    assert params["components"][0]["params"] == {"k1": 0.9, "b": 0.75, "variant": "lucene"}


def test_explain_gives_each_component_rank_and_contribution() -> None:
    """explain's contributions sum to the fused score; matched/missing name the components that rank it or not."""
    hybrid = Hybrid(of=[A, B])
    hybrid.add(ABCD)
    why = hybrid.explain("q", "c")
    assert [(p.label, p.rank, p.score, p.contribution) for p in why.parts] == [
        ("A", 3, 1.0, 1 / 63),
        ("B", 1, 5.0, 1 / 61),
    ]
    assert why.score == hybrid.score_all("q")["c"]
    assert why.matched == ("A", "B") and why.missing == ()
    assert (
        why.hit_reason()
        == "A ranks it 3rd (score 1, adds 0.0159); B ranks it 1st (score 5, adds 0.0164): fused RRF score 0.0323"
    )
    only_b = hybrid.explain("q", "d")
    assert only_b.matched == ("B",) and only_b.missing == ("A",)
    assert only_b.miss_reason().endswith("; not in the top 100 of A: fused RRF score 0.0161")
    nowhere = hybrid.explain("q", "e")
    assert nowhere.score == 0.0
    assert nowhere.miss_reason() == "none of A, B ranks it in its top 100, so its fused score is 0"
    with pytest.raises(ParameterError, match=re.escape("entry_id: 'zz' (str) is not indexed")):
        hybrid.explain("q", "zz")


def test_a_failed_add_changes_no_component() -> None:
    """A batch with a repeated id is refused before any component indexes it."""
    hybrid = make_retriever("hybrid[of=bm25+tags]")
    hybrid.add([MemoryEntry("a", "lentil soup")])
    with pytest.raises(ParameterError, match="is already indexed"):
        hybrid.add([MemoryEntry("b", "soup"), MemoryEntry("a", "again")])
    assert [h.entry_id for h in hybrid.search("soup", 5)] == ["a"]
