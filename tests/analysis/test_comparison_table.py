"""The comparison table: markers against the baseline after table-wide Holm, counts, exports."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.comparison_table import comparison_frame, comparison_table, systems_table, table_format
from agentmemory.analysis.statistics import Statistics, evaluation_statistics, holm, per_query_statistics
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.evaluation.options import EvalOptions
from agentmemory.report.comparison import comparison

CSV_FIELDS = ("mean", "low", "high", "p_holm_table", "marker", "above", "below")


@pytest.fixture(scope="module")
def large():
    """60 synthetic queries, BM25 against the tag scorer: enough queries for a difference to be significant."""
    collection = synthetic_collection(seed=3, n_entries=300, n_queries=60, mismatch_rate=0.3)
    return evaluate(collection, "bm25,tags", k=5, seed=7)


def test_markers_appear_where_the_table_wide_holm_rejects(large) -> None:
    """Against BM25 the tag scorer is significantly lower (▼) on every measure; against the tag scorer, BM25 is ▲."""
    statistics = evaluation_statistics(large, seed=7, n_resamples=2000)
    table = comparison_table(large, statistics)
    row = table.rows()[1]
    assert row[0] == "Tag scorer" and all(" ▼ +" in cell for cell in row[1:])
    flipped = comparison_table(large, evaluation_statistics(large, seed=7, n_resamples=2000, baseline="tags"))
    assert flipped.rows()[0][0] == "Tag scorer (baseline)"
    assert flipped.rows()[1][0] == "BM25" and all(" ▲ +" in cell for cell in flipped.rows()[1][1:])


def test_p_holm_table_is_holm_over_every_comparison_of_the_table(large) -> None:
    """p_holm_table is Holm's adjustment over all systems x measures together, beside the per-measure p_holm."""
    statistics = evaluation_statistics(large, seed=7, n_resamples=2000)
    cells = statistics.versus_baseline
    assert [(c.system, c.measure) for c in cells] == [("tags", m) for m in statistics.table_measures]
    expected = holm({f"{c.system} {c.measure}": c.test.p_value for c in cells})
    assert [c.p_holm_table for c in cells] == [expected[f"{c.system} {c.measure}"] for c in cells]
    data = statistics.to_dict()
    assert data["baseline"] == "bm25" and data["versus_baseline"][0]["p_holm_table"] == cells[0].p_holm_table
    assert "p_holm" in data["comparisons"]["R@5"][0] and "table_correction" in data["method"]


def test_counts_are_queries_above_and_below(large) -> None:
    """+a/−b count the headline queries on which the system scores strictly above / below the baseline."""
    statistics = evaluation_statistics(large, seed=7, n_resamples=200)
    cell = statistics.against_baseline("tags", "R@5")
    bm25 = {q.query_id: q.metrics["R@5"] for q in large.result("bm25").per_query}
    tags = {q.query_id: q.metrics["R@5"] for q in large.result("tags").per_query}
    assert cell.above == sum(tags[q] > bm25[q] for q in bm25) and cell.below == sum(tags[q] < bm25[q] for q in bm25)
    assert statistics.against_baseline("bm25", "R@5") is None


def test_renderings_hold_the_same_numbers(large) -> None:
    """CSV carries the unrounded numbers; Markdown and LaTeX the formatted cells, the caption and the notation."""
    statistics = evaluation_statistics(large, seed=7, n_resamples=2000)
    table = comparison_table(large, statistics)
    rows = list(csv.reader(io.StringIO(table.render("csv"))))
    assert rows[0][:4] == ["system", "baseline", "P@5 mean", "P@5 low"]
    assert rows[1][:2] == ["BM25", "yes"] and float(rows[1][2]) == large.result("bm25").means["P@5"]
    assert rows[2][rows[0].index("R@5 marker")] == "▼"
    markdown = table.render("markdown")
    assert markdown.startswith(table.caption() + ":\n\n| System | P@5 |") and table.notation() in markdown
    assert "\\toprule" in table.render("latex")  # the LaTeX rendering has tests of its own (test_latex_table.py)


def test_rr_and_rr_at_k_are_one_column_and_one_comparison(large) -> None:
    """RR sees the top k in an evaluation at k, so it equals RR@k on every query: the table shows RR@5 once, and
    Holm's family (and the legend's count) holds one comparison per system for it, not two."""
    for result in large.results:
        assert all(q.metrics["RR"] == q.metrics["RR@5"] for q in result.per_query)
    statistics = evaluation_statistics(large, seed=7, n_resamples=2000)
    assert statistics.measures == ("P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5")  # every measure stays computed
    assert statistics.table_measures == ("P@5", "R@5", "RR@5", "nDCG@5", "AP@5")
    assert set(statistics.intervals["tags"]) == set(statistics.measures)
    table = comparison_table(large, statistics)
    assert table.header() == ["System", "P@5", "R@5", "RR@5", "nDCG@5", "AP@5"] and table.comparisons == 5
    assert "Holm's correction over the 5 comparisons of this table" in table.notation()
    assert "RR is RR@5 here (each ranking is cut at k = 5), the same measure under two names" in table.notation()
    expected = holm({c.measure: c.test.p_value for c in statistics.versus_baseline})
    assert len(expected) == 5 and all(c.p_holm_table == expected[c.measure] for c in statistics.versus_baseline)


def test_table_measures_choose_the_columns_and_holm_family(large) -> None:
    """table= picks the comparison table's columns in the given order; Holm runs over those comparisons only;
    CSV and Markdown follow; the intervals and the pairwise comparisons keep every measure."""
    statistics = evaluation_statistics(large, seed=7, n_resamples=2000, table="nDCG@5,P@5")
    assert statistics.table_measures == ("nDCG@5", "P@5")
    assert [c.measure for c in statistics.versus_baseline] == ["nDCG@5", "P@5"]
    assert set(statistics.comparisons) == set(statistics.intervals["bm25"]) == set(statistics.measures)
    table = comparison_table(large, statistics)
    assert table.header() == ["System", "nDCG@5", "P@5"] and "over the 2 comparisons" in table.notation()
    assert "RR is RR@5" not in table.notation()
    header = next(csv.reader(io.StringIO(table.render("csv"))))
    assert header[2:] == [f"{m} {f}" for m in ("nDCG@5", "P@5") for f in CSV_FIELDS]
    assert "| System | nDCG@5 | P@5 |" in table.render("markdown")
    with pytest.raises(
        UnknownNameError, match=r"^--table-metrics: 'P@10' \(str\) is not a known name; choose from: AP@5, P@5, "
    ):
        evaluation_statistics(large, seed=7, table="P@10", table_name="--table-metrics")


def test_evaluation_exports_frames(large) -> None:
    """to_frame is long (system, query, group, measure, value); comparison_frame is the comparison table's numbers."""
    long = large.to_frame()
    assert list(long.columns) == ["system", "query", "group", "measure", "value"]
    assert len(long) == 2 * 60 * 6
    assert long[(long.system == "BM25") & (long.measure == "R@5")].value.mean() == pytest.approx(
        large.result("bm25").means["R@5"]
    )
    frame = comparison_frame(large)
    assert list(frame.index) == ["BM25", "Tag scorer"]
    assert frame.loc["Tag scorer", ("R@5", "marker")] == "▼"
    assert pd.isna(frame.loc["BM25", ("R@5", "p_holm_table")])


@pytest.mark.parametrize(
    ("path", "kind"), [("t.csv", "csv"), ("t.md", "markdown"), ("T.TEX", "latex"), ("out/t.txt", "text")]
)
def test_table_format_by_suffix(path: str, kind: str) -> None:
    """--table-out picks the format by the file's suffix, case ignored."""
    assert table_format(path) == kind


def test_table_format_refuses_other_suffixes() -> None:
    with pytest.raises(ParameterError, match=r"^--table-out: 't\.json' \(str\) has no known suffix; end the file"):
        table_format("t.json")


def test_baseline_must_name_a_system(large) -> None:
    """An unknown baseline lists the systems."""
    with pytest.raises(
        UnknownNameError, match=r"^baseline: 'dense' \(str\) is not a known name; choose from: bm25, tags"
    ):
        evaluation_statistics(large, seed=7, baseline="dense")


def test_cli_writes_the_table_and_refuses_a_bad_baseline(tmp_path: Path, capsys) -> None:
    """--table-out writes the same table eval prints first; --baseline names the comparison's reference."""
    out = tmp_path / "table.md"
    assert main(["eval", "--baseline", "tags", "--table-out", str(out), "--out", str(tmp_path / "e.json")]) == 0
    printed = capsys.readouterr().out
    written = out.read_text(encoding="utf-8")
    assert printed.startswith("Definitions (what every number below is):\n")  # the card, then the table
    assert "\n\n" + written in printed
    assert "| Tag scorer (baseline) |" in written
    assert json.loads((tmp_path / "e.json").read_text())["statistics"]["baseline"] == "tags"
    assert main(["eval", "--baseline", "dense", "--table-out", str(tmp_path / "x.md")]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: --baseline: 'dense' (str) is not a known name; choose from: bm25, tags\n"
    )
    assert not (tmp_path / "x.md").exists()


def test_cli_timings_are_printed_never_written(tmp_path: Path, capsys) -> None:
    """--timings prints latency and index figures; the artifact is byte-identical to a run without them."""
    with_timings, without = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["eval", "--timings", "--out", str(with_timings)]) == 0
    printed = capsys.readouterr().out
    assert "Timings (wall clock on this machine; not in the artifact):" in printed
    assert "| System | search p50 (ms) | search p95 (ms) | index build (s) | entries | index size |" in printed
    assert main(["eval", "--out", str(without)]) == 0
    assert with_timings.read_bytes() == without.read_bytes()


def test_cli_table_metrics_choose_the_table_only(tmp_path: Path, capsys) -> None:
    """--table-metrics P@5,R@5,nDCG@5: the printed table and --table-out show those columns (a measure not computed
    otherwise, P@10, is computed for it), the artifact keeps every measure's numbers; a bad list is one line."""
    out, table = tmp_path / "e.json", tmp_path / "t.csv"
    argv = ["eval", "--table-metrics", "P@5,R@5,P@10", "--out", str(out), "--table-out", str(table)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| System | P@5 | R@5 | P@10 |\n" in printed and "over the 3 comparisons of this table" in printed
    assert next(csv.reader(io.StringIO(table.read_text(encoding="utf-8"))))[2] == "P@5 mean"
    artifact = json.loads(out.read_text(encoding="utf-8"))
    assert artifact["params"]["measures"] == ["P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5", "P@10"]
    assert artifact["statistics"]["table_measures"] == ["P@5", "R@5", "P@10"]
    assert set(artifact["statistics"]["intervals"]["bm25"]) == set(artifact["params"]["measures"])
    assert main(["eval", "--table-metrics", "P@5,,R@5", "--table-out", str(tmp_path / "x.md")]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: --table-metrics: 'P@5,,R@5' (str) has an empty item; separate measures by single "
        "commas, e.g. 'P@5,RR'\n"
    )
    assert not (tmp_path / "x.md").exists()


def test_tokens_at_first_is_compared_on_the_queries_both_have_a_value() -> None:
    """Each mean of tokens@first is over the queries where its system has a value; the comparison is over those
    where both have one, and the table says so with both means there.

    BM25 (the baseline) has values 100, 200, 300, 400 on q1 to q4 (none on q5): mean 250.  Hybrid has 50, 150, 30 on
    q1, q3, q5: mean 230 / 3.  Both have a value on q1 and q3 only: Hybrid's mean there is (50 + 150) / 2 = 100 and
    BM25's (100 + 300) / 2 = 200; Hybrid is lower (better) on both.  R@5 has a value everywhere: no such note.
    """
    tokens = {"bm25": [100.0, 200.0, 300.0, 400.0, None], "hybrid": [50.0, None, 150.0, None, 30.0]}
    recall = {"bm25": [1.0, 0.0, 0.5, 1.0, 0.0], "hybrid": [1.0, 0.5, 0.5, 0.0, 1.0]}
    ids = [f"q{i}" for i in range(1, 6)]
    values = {
        name: {q: {"R@5": recall[name][i], "tokens@first": tokens[name][i]} for i, q in enumerate(ids)}
        for name in tokens
    }
    labels = {"bm25": "BM25", "hybrid": "Hybrid"}
    statistics = per_query_statistics(
        values, labels=labels, queries=[(q, None) for q in ids], measures=["R@5", "tokens@first"], seed=7
    )
    cell = statistics.against_baseline("hybrid", "tokens@first")
    assert cell is not None and cell.test.n == 2 and cell.shared == (100.0, 200.0)
    assert statistics.intervals["hybrid"]["tokens@first"].mean == 230 / 3  # type: ignore[union-attr]
    assert statistics.against_baseline("hybrid", "R@5").shared is None  # type: ignore[union-attr]
    table = systems_table([(n, label, "retriever") for n, label in labels.items()], statistics, k=5)
    text = table.cell_text("hybrid", "tokens@first")
    assert text.startswith(f"{230 / 3:.3f} [")
    assert text.endswith("(3 of 5) +2/−0; on the 2 queries both have a value, 100.000 against BM25's 200.000")
    assert "on the" not in table.cell_text("hybrid", "R@5") and "on the" not in table.cell_text("bm25", "tokens@first")
    assert table.shared_measures() == ("tokens@first",)
    assert (
        "each system is compared with BM25 on the N queries both have a value (its test and +a/−b), and its cell "
        "ends with both means over those N queries where they are not both systems' own."
    ) in table.notation()
    rows = list(csv.reader(io.StringIO(table.render("csv"))))
    shared = [rows[0].index(f"tokens@first (lower is better) {f}") for f in ("shared_n", "shared_mean")]
    assert [rows[2][i] for i in shared] == ["2", "100.0"] and [rows[1][i] for i in shared] == ["", ""]
    assert "R@5 shared_n" not in rows[0]
    data = statistics.to_dict()["versus_baseline"]
    assert data[1]["shared_means"] == {"system": 100.0, "baseline": 200.0} and "shared_means" not in data[0]
    assert Statistics.from_dict(statistics.to_dict()) == statistics


def test_claims_are_published_rows_below_ours(tmp_path: Path) -> None:
    """Each claim whose measure is a column is a row below our systems, marked published or illustrative, its
    figure in its column as stated, no interval; the notes say where from and what differs, in the text, the CSV
    and the report's table; a claim about a system we did not evaluate is there too."""
    claims = REPO_ROOT / "fixtures/claims/claims.toml"
    evaluation = evaluate(
        load(REPO_ROOT / "fixtures/locomo-sample/locomo-sample.json"), "bm25", options=EvalOptions(claims=claims)
    )
    statistics = evaluation_statistics(evaluation, seed=7, table="R@5,recall_any@10")
    table = comparison_table(evaluation, statistics)
    rows = table.rows()
    assert [r[0] for r in rows] == ["BM25 (baseline)", "hebb-mind (published, note 1)", "bm25 (illustrative, note 2)"]
    assert rows[1][1:] == ["", "0.9575"] and rows[2][1:] == ["0.800", ""]
    notes = table.published_notes().splitlines()
    assert notes[0].startswith("Published rows (claims.toml): each figure as its source states it")
    assert notes[1].startswith("1. hebb-mind (hebb-mind, prod-mirror + rerank (bge-large-1024, bge-reranker-base)): ")
    assert "Release: the claim's is snap-research/locomo, which is LoCoMo (original = mem0 copy); ours is" in notes[1]
    assert notes[2].endswith("No difference from our definition that we can detect.")
    assert notes[3] == (
        "Claims whose measure is not a column of this table, so not shown: bm25 (recall_any@5), "
        "hybrid (sess.recall_any@5), dense (recall_any@5), bm25 (Success@5)."
    )
    assert table.render().endswith("\n\n" + table.published_notes() + "\n")
    data = list(csv.reader(io.StringIO(table.render("csv"))))
    assert data[2][:2] == ["hebb-mind (published, note 1)", "published"]
    assert data[2][data[0].index("recall_any@10 mean")] == "0.9575" and data[2][data[0].index("R@5 mean")] == ""
    shown = comparison(evaluation, statistics)
    assert list(shown[0].frame.iloc[1]) == rows[1]
    assert shown[2].text.startswith("Published rows (claims.toml)")
