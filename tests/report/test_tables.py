"""The report's tables: the seed's columns exactly as ``agentmemory eval`` prints them, and each query."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load_collection
from agentmemory.analysis.text_tables import SEED_COLUMNS, seed_rows
from agentmemory.report import tables
from agentmemory.report.display import Markdown, Png, Table, ordinal, param_text, short
from agentmemory.report.tables import system_line

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"


@pytest.fixture(scope="module")
def garden3():
    return evaluate(load_collection(GARDEN), ("bm25", "tags"), k=3, seed=7)


def test_metric_table_is_the_seed_table(seed_evaluation):
    """The seed's four columns hold the seed write-up's numbers, as agentmemory eval formats them."""
    frame = tables.metric_table(seed_evaluation).frame
    assert list(frame.columns[:4]) == list(SEED_COLUMNS)
    assert frame.iloc[:, :4].values.tolist() == [
        ["BM25", "0.90", "0.28", "1.00"],
        ["Tag scorer", "1.00", "0.32", "1.00"],
    ]
    assert frame.iloc[:, :4].values.tolist() == seed_rows(seed_evaluation)


def test_metric_table_other_measures_alongside(seed_evaluation):
    """Besides the seed's columns: every other measure, 4 decimals, P@k/R@k/RR not repeated."""
    frame = tables.metric_table(seed_evaluation).frame
    assert list(frame.columns[4:]) == ["RR@5", "nDCG@5", "AP@5"]
    bm25 = seed_evaluation.result("bm25").means
    assert frame.iloc[0, 4:].tolist() == [format(bm25[m], ".4f") for m in ("RR@5", "nDCG@5", "AP@5")]
    assert frame.iloc[0, 5] == "0.8905"


def test_metric_frame_holds_unrounded_means(garden3):
    """metric_frame carries the library's means unrounded, one row per retriever."""
    frame = tables.metric_frame(garden3)
    for row, result in zip(frame.itertuples(index=False), garden3.results):
        agg = result.aggregate_row()
        assert row[0] == agg["retriever"]
        assert list(row[1:4]) == [agg["mean_recall@k"], agg["mean_precision@k"], agg["MRR"]]
    assert frame.loc[1, "MRR"] == 0.625


def test_per_query_frame_matches_query_results(garden3):
    """Every cell of the per-query frame comes from the library's QueryResult."""
    for result in garden3.results:
        frame = tables.per_query_frame(garden3, result.name)
        assert list(frame["query"]) == [q.query_id for q in result.per_query]
        for row, q in zip(frame.to_dict("records"), result.per_query):
            assert row["relevant"] == len(q.relevant)
            assert row["found"] == q.found and row["missed"] == q.missed
            assert row["P@3"] == q.metrics["P@3"] and row["R@3"] == q.metrics["R@3"] and row["RR"] == q.metrics["RR"]
            expected = q.first_relevant_rank
            assert pd.isna(row["first relevant rank"]) if expected is None else row["first relevant rank"] == expected


def test_per_query_table_formats_ids_with_short_text(garden3):
    """Found and missed ids are followed by a short text; no relevant hit reads 'none in top k'."""
    frame = tables.per_query_table(garden3, "tags").frame
    t3 = frame[frame["query"] == "t3"].iloc[0]
    assert t3["found"] == "-"
    assert t3["missed"] == "g09 (Volunteer meeting every Thursday at 6…)"
    assert t3["first relevant rank"] == "none in top k"
    assert t3["RR"] == "0.00"
    t2 = frame[frame["query"] == "t2"].iloc[0]
    assert (t2["first relevant rank"], t2["RR"], t2["P@3"]) == ("2", "0.50", "0.33")


def test_overview_names_sizes_params_and_the_appendix_the_hashes(seed_evaluation, notes):
    """Section 1 lists the collection, its size, k, seed, how hits are judged and each system's parameters;
    the appendix every file's sha256 and the event log in numbers."""
    text = tables.overview(seed_evaluation, "the shipped fixture").text
    assert "`assistant-notes` (the shipped fixture)" in text
    assert "16 entries, 5 queries of which 5 judged, 8 relevant judgments" in text
    assert "k = 5" in text and "**Seed:** 7" in text
    assert "- **Relevance:** direct: a hit counts when it is judged relevant (trec_eval's definitions)" in text
    assert "BM25 (`bm25`): k1 = 1.2, b = 0.75" in text
    assert notes.digest not in text
    appendix = tables.appendix(seed_evaluation).text
    assert notes.digest in appendix
    for name, sha in notes.files.items():
        assert f"`{name}` `{sha}`" in appendix
    assert (
        "- **Event log:** 11 events (1 add, 10 retrieve), from 2026-03-02T15:30:00+00:00 to 2026-03-02T15:30:10+00:00"
        in appendix
    )


def test_input_files_frame(notes, seed_evaluation):
    """One row per input file with its sha256."""
    frame = tables.input_files_frame(seed_evaluation)
    assert dict(zip(frame["file"], frame["sha256"])) == dict(notes.files)


@pytest.mark.parametrize(
    "text, width, expected",
    [
        ("short text", 60, "short text"),
        ("  spaced \n text  ", 60, "spaced text"),
        ("Maya is vegetarian and does not eat mushrooms", 20, "Maya is vegetarian…"),
        ("abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi…"),
        ("one, two, three, four", 12, "one, two…"),
    ],
)
def test_short(text, width, expected):
    """short() keeps one line, cuts at a word boundary when it can, and marks the cut."""
    assert short(text, width) == expected
    assert len(short(text, width)) <= width


@pytest.mark.parametrize(
    "n, expected",
    [
        (1, "1st"),
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (21, "21st"),
        (22, "22nd"),
        (101, "101st"),
        (111, "111th"),
    ],
)
def test_ordinal(n, expected):
    assert ordinal(n) == expected


def test_display_objects_have_deterministic_plain_text():
    """The plain forms nbval compares carry no memory address; the HTML carries no random id."""
    table = Table(pd.DataFrame({"a": ["x<y"], "b": ["1"]}), "cap & tion")
    assert repr(table) == "cap & tion\n  a b\nx<y 1"
    html = table._repr_html_()
    assert "x&lt;y" in html and "<caption>cap &amp; tion</caption>" in html
    assert html == Table(pd.DataFrame({"a": ["x<y"], "b": ["1"]}), "cap & tion")._repr_html_()
    assert " at 0x" not in repr(Markdown("m")) + repr(Png(b"png", "Figure: x")) + repr(table)
    assert repr(Png(b"png", "Figure: x")) == "Figure: x"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("lucene", "lucene"),
        (1.2, "1.2"),
        (["bm25", "dense"], "[bm25, dense]"),
        ({"model": "m", "pooling": "mean"}, "(model = m, pooling = mean)"),
        ([], "none"),
        ({}, "none"),
        (
            [
                {"key": "bm25", "label": "BM25", "params": {"k1": 1.2}},
                {"key": "tags", "label": "Tag scorer", "params": {}},
            ],
            "[BM25 (k1 = 1.2); Tag scorer]",
        ),
    ],
)
def test_param_text_is_never_a_repr(value, text) -> None:
    """Parameters read as `key = value` text: no quotes, brackets of dicts or Python reprs."""
    assert param_text(value) == text


def test_system_bullets_show_parameters_as_text(notes) -> None:
    """The hybrid's bullet shows its parts as text (it showed ['bm25', 'tags'] and a list of dicts)."""
    evaluation = evaluate(notes, "hybrid[of=bm25+tags]", k=5, seed=7)
    line = system_line(evaluation.results[0])
    assert line.startswith(
        "  - Hybrid RRF (BM25 + Tag scorer) (`hybrid[of=bm25+tags]`): of = [bm25, tags], method = rrf"
    )
    assert "components = [BM25 (k1 = 1.2, b = 0.75, variant = lucene); Tag scorer" in line
    assert "'" not in line and "{" not in line
