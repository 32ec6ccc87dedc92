"""As-of evaluation: an agent cannot remember the future."""

from __future__ import annotations

from datetime import datetime, timezone
from types import MappingProxyType

import pytest

from agentmemory import Collection, MemoryEntry, Query, evaluate
from agentmemory.errors import InputError
from agentmemory.evaluation.runfiles import RunFile


def _at(day: int) -> datetime:
    return datetime(2026, 3, day, 12, tzinfo=timezone.utc)


ENTRIES = (
    MemoryEntry("e1", "Maya likes lentil curry", created_at=_at(1)),
    MemoryEntry("e2", "Maya now prefers lentil soup", created_at=_at(5)),
    MemoryEntry("e3", "Maya stopped eating lentils", created_at=_at(9)),
    MemoryEntry("e0", "a lentil note with no date"),
)
QUERIES = (
    Query("early", "what lentil dish does Maya like", asked_at=_at(2)),
    Query("middle", "what lentil dish does Maya like", asked_at=_at(6)),
    Query("late", "what lentil dish does Maya like"),  # no asked_at: sees everything
)
QRELS = {"early": {"e1": 1}, "middle": {"e2": 1}, "late": {"e3": 1}}


def _collection() -> Collection:
    return Collection(
        "timeline",
        ENTRIES,
        QUERIES,
        MappingProxyType({q: MappingProxyType(d) for q, d in QRELS.items()}),
        MappingProxyType({"corpus": "0" * 64}),
    )


def test_each_query_sees_only_what_existed_when_it_was_asked() -> None:
    """Hits come only from entries created at or before asked_at; undated entries are always visible."""
    evaluation = evaluate(_collection(), "bm25", k=5, as_of=True)
    by_query = {q.query_id: q for q in evaluation.results[0].per_query}
    assert {h.entry_id for h in by_query["early"].hits} <= {"e1", "e0"}
    assert {h.entry_id for h in by_query["middle"].hits} <= {"e1", "e2", "e0"}
    assert "e3" in {h.entry_id for h in by_query["late"].hits}
    assert [by_query[q].visible for q in ("early", "middle", "late")] == [2, 3, 4]
    plain = evaluate(_collection(), "bm25", k=5)
    assert all(q.visible is None for q in plain.results[0].per_query)


def test_scores_are_those_of_an_index_built_at_that_moment() -> None:
    """A query's scores equal a fresh evaluation over only the entries it could see (BM25's IDF included)."""
    evaluation = evaluate(_collection(), "bm25", k=5, as_of=True)
    early = next(q for q in evaluation.results[0].per_query if q.query_id == "early")
    then = Collection(
        "then",
        (ENTRIES[0], ENTRIES[3]),
        (QUERIES[0],),
        MappingProxyType({"early": MappingProxyType(QRELS["early"])}),
        MappingProxyType({"corpus": "1" * 64}),
    )
    alone = evaluate(then, "bm25", k=5).results[0].per_query[0]
    assert [(h.entry_id, h.score) for h in early.hits] == [(h.entry_id, h.score) for h in alone.hits]


def test_a_run_cannot_retrieve_the_future() -> None:
    """Under as-of, a run's hit created after its question is an error; lenient drops and lists it."""
    run = RunFile("mine", "mine.trec", "0" * 64, "trec", {"early": (("e1", 2.0, 1), ("e3", 1.0, 2))})
    with pytest.raises(InputError, match=r"line 2: entry 'e3' was created at 2026-03-09T12:00:00\+00:00, after query"):
        evaluate(_collection(), [], runs=[run], k=5, as_of=True)
    evaluation = evaluate(_collection(), [], runs=[run], k=5, as_of=True, lenient_run=True)
    assert [h.entry_id for h in evaluation.results[0].per_query[0].hits] == ["e1"]
    assert evaluation.results[0].dropped[0][0] == 2
    assert evaluate(_collection(), [], runs=[run], k=5).results[0].per_query[0].hits[1].entry_id == "e3"


def test_artifact_says_how_many_entries_each_query_saw() -> None:
    """The artifact records as_of and, per query, the entries of its scope it could see."""
    from agentmemory.analysis.artifact import artifact_dict

    data = artifact_dict(evaluate(_collection(), "bm25", k=5, as_of=True))
    assert data["params"]["as_of"] is True
    assert [row["visible_entries"] for row in data["per_query"]] == [2, 3, 4]


def _write_timeline(folder, asked_middle: str = "2026-03-06T12:00:00Z"):
    """The timeline above as a BEIR-style folder, asked_at in queries.jsonl."""
    import json

    folder.mkdir()
    (folder / "qrels").mkdir()
    corpus = [
        {"_id": e.id, "text": e.text} | ({"created_at": e.created_at.isoformat()} if e.created_at else {})
        for e in ENTRIES
    ]
    queries = [
        {"_id": "early", "text": QUERIES[0].text, "asked_at": "2026-03-02T12:00:00Z"},
        {"_id": "middle", "text": QUERIES[1].text, "asked_at": asked_middle},
        {"_id": "late", "text": QUERIES[2].text},
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(o) + "\n" for o in corpus), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(o) + "\n" for o in queries), encoding="utf-8")
    rows = "".join(f"{q}\t{e}\t{g}\n" for q, judged in QRELS.items() for e, g in judged.items())
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows, encoding="utf-8")
    return folder


def test_asked_at_from_queries_jsonl_on_the_command_line(tmp_path, capsys) -> None:
    """queries.jsonl's asked_at is read (and written back); eval --as-of on the folder gives the library's as-of
    numbers, and a bad asked_at is one line naming the file and line, exit 2, nothing written."""
    import json

    from agentmemory import load
    from agentmemory.cli.app import main
    from agentmemory.datasets.beir import write_collection

    folder = _write_timeline(tmp_path / "timeline")
    loaded = load(folder)
    assert [q.asked_at for q in loaded.queries] == [_at(2), _at(6), None]
    write_collection(loaded, tmp_path / "again")
    assert load(tmp_path / "again").queries == loaded.queries
    out = tmp_path / "as-of.json"
    assert main(["eval", "--collection", str(folder), "--retrievers", "bm25", "--as-of", "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [row["visible_entries"] for row in written["per_query"]] == [2, 3, 4]
    expected = evaluate(loaded, "bm25", k=5, as_of=True, seed=7).results[0]
    assert [[h["entry_id"] for h in row["hits"]] for row in written["per_query"]] == [
        [h.entry_id for h in q.hits] for q in expected.per_query
    ]
    bad = _write_timeline(tmp_path / "bad", asked_middle="March 6th")
    capsys.readouterr()
    assert main(["eval", "--collection", str(bad), "--as-of", "--out", str(tmp_path / "bad.json")]) == 2
    assert capsys.readouterr().err == (
        f"agentmemory: error: {bad / 'queries.jsonl'}:2: asked_at 'March 6th' is not ISO 8601; "
        "expected e.g. 2026-03-01T09:30:00Z\n"
    )
    assert not (tmp_path / "bad.json").exists()


def test_locomo_questions_are_asked_after_the_whole_conversation() -> None:
    """LoCoMo items carry no date: asked_at is the conversation's last turn, so --as-of hides no turn from them."""
    from conftest import REPO_ROOT

    from agentmemory import load

    sample = load(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json")
    latest: dict[str | None, datetime] = {}
    for e in sample.entries:
        assert e.created_at is not None
        latest[e.scope] = max(latest.get(e.scope, e.created_at), e.created_at)
    assert {q.asked_at for q in sample.queries} == set(latest.values()) and len(latest) > 1
    assert all(q.asked_at == latest[q.scope] for q in sample.queries)
    as_of = evaluate(sample, "bm25", k=5, as_of=True).results[0].per_query
    plain = evaluate(sample, "bm25", k=5).results[0].per_query
    assert [q.hits for q in as_of] == [q.hits for q in plain]
    scopes = {q.id: q.scope for q in sample.queries}
    assert all(r.visible == sum(e.scope == scopes[r.query_id] for e in sample.entries) for r in as_of)


# -- a derived entry without a date, from a dated source ---------------------------------------------------

DERIVED_CORPUS = [
    {
        "_id": "d1",
        "text": "summary: Maya likes lentil curry",
        "provenance": {"source": "derived", "derived_from": ["m1"]},
    },
    {"_id": "m1", "text": "Maya likes lentil curry", "created_at": "2026-03-05T12:00:00Z"},
    {"_id": "m0", "text": "an undated lentil note"},
    {"_id": "d2", "text": "summary of the summary", "provenance": {"source": "derived", "derived_from": ["d1", "m0"]}},
]


def _derived_folder(root, asked: bool):
    """A valid collection: d1 (no created_at, never hidden) is derived from m1 (dated), listed before it."""
    import json

    queries = [{"_id": "q1", "text": "what lentil dish"}, {"_id": "q2", "text": "lentil summary"}]
    if asked:
        queries[0]["asked_at"] = "2026-03-02T12:00:00Z"  # before m1 exists
        queries[1]["asked_at"] = "2026-03-09T12:00:00Z"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(o) + "\n" for o in DERIVED_CORPUS), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(o) + "\n" for o in queries), encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tm1\t1\nq2\td1\t1\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("asked", [False, True], ids=["no-asked_at", "asked_at"])
def test_an_undated_derived_entry_comes_with_its_dated_source(tmp_path, asked) -> None:
    """--as-of used to fail ("derived_from 'm1' is not in the store") when a derived entry had no created_at and
    its source had one, even with no asked_at at all: undated entries were added before dated ones.  An entry now
    exists once it and its sources exist: d1 and d2 come with m1, so a query asked before m1 sees m0 only."""
    from agentmemory import load

    collection = load(_derived_folder(tmp_path / "c", asked))
    per_query = evaluate(collection, "bm25", k=5, as_of=True).results[0].per_query
    visible = {r.query_id: r.visible for r in per_query}
    assert visible == ({"q1": 1, "q2": 4} if asked else {"q1": 4, "q2": 4})
    if asked:
        assert [h.entry_id for h in per_query[0].hits] == ["m0"]
    else:
        plain = evaluate(collection, "bm25", k=5).results[0].per_query
        assert [r.hits for r in per_query] == [r.hits for r in plain]


def test_an_undated_derived_entry_evaluates_as_of_from_the_command_line(tmp_path, capsys) -> None:
    """The same collection through ``agentmemory eval --as-of``: exit 0 and the library's visible counts."""
    import json

    from agentmemory.cli.app import main

    folder = _derived_folder(tmp_path / "c", asked=True)
    out = tmp_path / "as-of.json"
    assert main(["eval", "--collection", str(folder), "--retrievers", "bm25", "--as-of", "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [row["visible_entries"] for row in written["per_query"]] == [1, 4]


def test_an_undated_derived_entry_evaluates_as_of_in_the_eval_notebook(tmp_path) -> None:
    """The eval notebook with as_of=True on the same collection runs to its end (it used to stop in the
    evaluation cell)."""
    import papermill
    from conftest import REPO_ROOT

    folder = _derived_folder(tmp_path / "c", asked=True)
    papermill.execute_notebook(
        str(REPO_ROOT / "notebooks" / "eval.ipynb"),
        str(tmp_path / "out.ipynb"),
        parameters={"collection": str(folder), "retrievers": "bm25", "as_of": True, "k": 3},
        kernel_name="python3",
        cwd=str(REPO_ROOT),
        progress_bar=False,
        log_output=False,
    )
