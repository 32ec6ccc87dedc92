"""dense, hybrid and recency together: the retriever contract, evaluation, scopes and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT

from agentmemory import MemoryStore, evaluate, load_collection
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.retrievers import RETRIEVERS, load_encoder
from agentmemory.testing import check_retriever

LOCOMO = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
NEW = ("dense", "hybrid", "recency")


def test_the_new_retrievers_are_registered() -> None:
    """dense, hybrid and recency are registry names beside bm25 and tags."""
    assert set(NEW) <= set(RETRIEVERS.names())


@pytest.mark.parametrize(
    "spec",
    [
        "dense",
        "hybrid",
        "hybrid[method=convex]",
        "hybrid[of=bm25[k1=0.9]+dense+tags,rrf_k=10,depth=30]",
        "hybrid[of=bm25+tags,method=convex,weights=0.3+0.7]",
        "hybrid[of=hybrid+tags,depth=50]",
        "recency",
        "recency[base=dense,decay=0.9,weights=1+3+2]",
        "recency[base=hybrid[of=bm25+tags],depth=40]",
    ],
)
def test_the_new_retrievers_keep_the_contract(spec: str) -> None:
    """Each passes agentmemory.testing.check_retriever (ranking rule, ties, k, incremental adds, capabilities)."""
    check_retriever(spec)


@pytest.fixture(scope="module")
def fixture_evaluation():
    return evaluate(load_collection(FIXTURE_DIR), "bm25,dense,hybrid,recency", k=5, seed=7)


@pytest.fixture(scope="module")
def locomo_evaluation():
    return evaluate(load(LOCOMO), "bm25,dense,hybrid,recency", k=5, seed=7)


def _means(evaluation) -> dict[str, tuple[str, str]]:
    return {r.name: (f"{r.means['R@5']:.2f}", f"{r.means['RR']:.2f}") for r in evaluation.results}


def test_the_fixture_numbers(fixture_evaluation) -> None:
    """R@5 and MRR of the four retrievers on the shipped fixture (BM25's are the seed's: 0.90 and 1.00)."""
    assert _means(fixture_evaluation) == {
        "bm25": ("0.90", "1.00"),
        "dense": ("1.00", "1.00"),
        "hybrid": ("0.90", "1.00"),
        "recency": ("0.90", "0.80"),
    }


def test_the_locomo_sample_numbers(locomo_evaluation) -> None:
    """R@5 and MRR of the four retrievers on the LoCoMo sample (headline: categories 1-4)."""
    assert _means(locomo_evaluation) == {
        "bm25": ("0.81", "0.70"),
        "dense": ("0.86", "0.59"),
        "hybrid": ("0.92", "0.70"),
        "recency": ("0.67", "0.21"),
    }


def test_bm25_is_unchanged_beside_the_new_retrievers(fixture_evaluation) -> None:
    """Adding the new retrievers to an evaluation changes nothing of BM25's."""
    alone = evaluate(load_collection(FIXTURE_DIR), "bm25", k=5, seed=7)
    assert fixture_evaluation.result("bm25").per_query == alone.result("bm25").per_query


def test_each_locomo_question_searches_its_own_conversation(locomo_evaluation) -> None:
    """Every hit of every retriever comes from the question's own conversation (a retriever per scope)."""
    for result in locomo_evaluation.results:
        for q in result.per_query:
            assert all(h.entry_id.split("/")[0] == q.query_id.split("/")[0] for h in q.hits), (result.name, q.query_id)


def test_the_artifact_records_the_new_retrievers_parameters(fixture_evaluation) -> None:
    """Each result carries JSON-ready params: the encoder and model, the fusion, the recency weights."""
    params = {r.name: r.params for r in fixture_evaluation.results}
    assert json.loads(json.dumps(params)) == params
    assert params["dense"]["encoder_params"]["model"] == "l2_supercat_256"
    assert params["hybrid"]["of"] == ["bm25", "dense"] and params["hybrid"]["method"] == "rrf"
    assert params["recency"]["weights"] == [1.0, 1.0, 1.0]


def test_a_second_evaluation_reads_the_embeddings_from_the_cache(monkeypatch, tmp_path: Path) -> None:
    """With a warm cache, an evaluation encodes only its queries, never the entries again."""
    monkeypatch.setenv("AGENTMEMORY_CACHE", str(tmp_path / "cache"))
    encoder = load_encoder("wordllama")
    sizes: list[int] = []
    real = type(encoder).encode

    def counting(self, texts):
        sizes.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(type(encoder), "encode", counting)
    collection = load(LOCOMO)
    first = evaluate(collection, "dense", k=5)
    entry_batches = [n for n in sizes if n > 1]
    assert sorted(entry_batches) == [16, 17]  # one batch per conversation
    sizes.clear()
    second = evaluate(collection, "dense", k=5)
    assert all(n == 1 for n in sizes)  # queries only
    assert first.results == second.results


def test_the_store_searches_with_every_new_retriever() -> None:
    """A MemoryStore with the new retrievers answers a scoped query with each, and logs the retrieval."""
    collection = load(LOCOMO)
    store = MemoryStore("bm25,dense,hybrid,recency")
    store.add(collection.entries)
    query = collection.queries[0]
    for name in NEW:
        hits = store.search(query, 3, retriever=name)
        assert hits and all(h.entry_id.startswith(query.scope + "/") for h in hits)
    assert [e.retriever for e in store.log if e.type == "retrieve"] == list(NEW)


@pytest.mark.parametrize("collection", ["fixture", "locomo"])
def test_the_command_line_evaluates_and_retrieves_them(tmp_path: Path, capsys, collection: str) -> None:
    """`agentmemory eval --retrievers bm25,dense,hybrid,recency --k 5` prints their rows and writes their runs;
    `agentmemory retrieve` writes the same run byte for byte."""
    extra = [] if collection == "fixture" else ["--collection", str(LOCOMO)]
    out, runs = tmp_path / "out.json", tmp_path / "runs"
    code = main(
        [
            "eval",
            *extra,
            "--retrievers",
            "bm25,dense,hybrid,recency",
            "--k",
            "5",
            "--out",
            str(out),
            "--runs-dir",
            str(runs),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    for label in (
        "| BM25 |",
        "| Dense (wordllama) |",
        "| Hybrid RRF (BM25 + Dense (wordllama)) |",
        "| Recency (BM25) |",
    ):
        assert label in printed
    qrels = ["qrels.txt"] if collection == "fixture" else ["qrels-all.txt", "qrels.txt"]  # LoCoMo: category 5 left out
    assert sorted(p.name for p in runs.iterdir()) == ["bm25.trec", "dense.trec", "hybrid.trec", *qrels, "recency.trec"]
    for name in NEW:
        single = tmp_path / f"single-{name}.trec"
        assert main(["retrieve", *extra, "--retriever", name, "--k", "5", "--out", str(single)]) == 0
        assert single.read_bytes() == (runs / f"{name}.trec").read_bytes()
    assert [r["name"] for r in json.loads(out.read_text())["params"]["retrievers"]] == ["bm25", *NEW]
