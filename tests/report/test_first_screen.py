"""The first screen of a report: the verdict, Figure 1, the comparison table with the best of each column in bold;
folded long tables, a table of contents and stderr folded in the HTML; numbers never shown as a misleading 0.00."""

from __future__ import annotations

import dataclasses

import nbformat
import pandas as pd
import pytest

from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.paired_matrix import MatrixCell, cell_text
from agentmemory.analysis.prose import signed, visible_decimals
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.report import first_screen
from agentmemory.report.comparison import best_cells, comparison
from agentmemory.report.display import FOLD_ROWS, Folded, Png, Table, param_text
from agentmemory.report.render import render_html


@pytest.fixture(scope="module")
def seed_stats(seed_evaluation):
    return evaluation_statistics(seed_evaluation, seed=7, baseline="bm25")


@pytest.mark.parametrize(
    "values,least,expected",
    [
        ((0.12,), 2, 2),
        ((0.0018,), 2, 3),
        ((-0.0018, -0.01, 0.0), 2, 3),
        ((0.00004,), 2, 5),
        ((0.0,), 2, 2),
        ((0.015,), 3, 3),
        ((1e-9,), 2, 6),
    ],
)
def test_visible_decimals_keep_a_non_zero_value_visible(values, least, expected):
    """The fewest decimals at which no non-zero value reads as zero, from ``least`` up to six."""
    assert visible_decimals(*values, least=least) == expected


def test_a_significant_small_difference_never_reads_zero():
    """The paired matrix's cell once read "0.00 [-0.01, 0.00] p 0.0018 *"; now its digits show the difference."""
    cell = MatrixCell(difference=-0.0042, low=-0.0071, high=-0.0013, p=0.0018, significant=True, n=1526)
    assert cell_text(cell) == "−0.004 [−0.007, −0.001] p\u00a00.0018 *"
    assert signed(-0.0042) == "0.00" and signed(-0.0042, 3) == "−0.004"


@pytest.mark.parametrize(
    "value,expected", [(0.015, "+0.015"), (-0.108, "−0.108"), (0.0, "0.000"), (0.0004, "+0.0004"), (-2e-5, "−0.00002")]
)
def test_difference_in_the_verdict(value, expected):
    """A difference to three decimals, more when three would read zero, a real minus sign, 0.000 for none."""
    assert first_screen.difference(value) == expected


def test_verdict_names_the_leader_each_difference_and_the_questions(seed_evaluation, seed_stats):
    """The seed run: the tag scorer leads on R@5; its difference from BM25 with the interval and Holm's p; then, once,
    why no difference can be significant over 5 questions."""
    text = first_screen.verdict(seed_evaluation, seed_stats).text
    tags = seed_stats.intervals["tags"]["R@5"]
    versus = next(c for c in seed_stats.versus_baseline if c.system == "tags" and c.measure == "R@5")
    ci = versus.test.effect_ci
    assert text.startswith(
        "**Verdict.** 2 systems compared on the 5 headline questions of the agentmemory assistant-notes fixture."
    )
    assert f"**Tag scorer** leads on R@5 (higher is better): {tags.mean:.3f} (the same on every question)." in text
    assert (
        f"Tag scorer {first_screen.difference(versus.test.mean_difference)} [{first_screen.difference(ci.low)}, "
        f"{first_screen.difference(ci.high)}] (p = 1.00)."
    ) in text
    assert text.endswith("No difference can be significant over 5 questions, whatever the systems do.")
    assert f"over the table's {len(seed_stats.versus_baseline)} comparisons" in text


def test_one_system_is_evaluated_not_compared(notes):
    """A report of one system (the default on a collection without tags) says its value and how to get a
    comparison, not that it "leads"; the table's note says nothing is compared (no Holm over 0 comparisons)."""
    from agentmemory import evaluate

    one = evaluate(notes, "bm25", k=5, seed=7)
    stats = evaluation_statistics(one, seed=7, baseline="bm25")
    text = first_screen.verdict(one, stats).text
    cell = stats.intervals["bm25"]["R@5"]
    assert text == (
        "**Verdict.** 1 system evaluated on the 5 headline questions of the agentmemory assistant-notes fixture. "
        f"**BM25** has R@5 (higher is better) {cell.mean:.3f} [{cell.low:.3f}, {cell.high:.3f}]. Nothing is "
        "compared: give more systems (retrievers, run files, memory systems) to rank them against it."
    )
    notation = comparison_table(one, stats).notation()
    assert notation.startswith("One system, so nothing is compared: each cell is its mean with the 95% interval.")
    assert "Holm" not in notation and "▲" not in notation


def test_headline_measure_is_recall_else_the_first_column(seed_evaluation, seed_stats):
    """R@k when the comparison table has it; else the table's first column with a value."""
    assert first_screen.headline_measure(seed_evaluation, seed_stats) == "R@5"
    narrower = dataclasses.replace(seed_stats, table_measures=("nDCG@5", "P@5"))
    assert first_screen.headline_measure(seed_evaluation, narrower) == "nDCG@5"


def test_headline_is_figure_one_then_the_table_with_the_best_in_bold(seed_evaluation, seed_stats):
    """Figure 1 draws R@5 of each system; the table under it bolds the best mean per column, none where all tie."""
    figure, table, *_ = first_screen.headline(seed_evaluation, seed_stats, number=1)
    assert isinstance(figure, Png) and figure.caption.startswith("Figure 1: R@5 of each system over the headline")
    assert isinstance(table, Table) and list(table.frame.columns) == ["System", "P@5", "R@5", "RR@5", "nDCG@5", "AP@5"]
    ct = comparison_table(seed_evaluation, seed_stats)
    means = {
        (row, column): round(ct.cells[(name, m)].interval.mean, 3)
        for row, (name, _, _) in enumerate(ct.systems)
        for column, m in enumerate(ct.measures, start=1)
    }
    expected = {
        (row, column)
        for (row, column), mean in means.items()
        if len({means[(r, column)] for r in range(len(ct.systems))}) > 1
        and mean == max(means[(r, column)] for r in range(len(ct.systems)))
    }
    assert table.bold == best_cells(ct) == frozenset(expected)
    assert (1, 2) in table.bold and not any(column == 3 for _, column in table.bold)  # RR@5: 1.000 for both
    html = table._repr_html_()
    assert html.count("<strong>") == len(expected) and "<details>" not in html
    assert "**Bold**: the best mean of each column" in comparison(seed_evaluation, seed_stats)[1].text


def test_card_line_points_to_the_full_card(seed_evaluation):
    """The card's one line, with a link to the Definitions section further down."""
    assert first_screen.card_line(seed_evaluation).text == (
        "**What the numbers are:** agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 "
        "questions (the full definitions card: [Definitions](#Definitions))."
    )


def test_long_tables_fold_and_empty_ones_show_their_caption_alone():
    """More than FOLD_ROWS rows: a <details> whose summary is the caption and the row count; no rows: no table."""
    long = Table(pd.DataFrame({"query": [f"q{i}" for i in range(FOLD_ROWS + 1)]}), "Ties")
    assert long.folded and long._repr_html_().count("<details><summary>Ties (13 rows)</summary>") == 1
    short = Table(pd.DataFrame({"query": ["q1"]}), "Ties")
    assert not short.folded and "<details>" not in short._repr_html_()
    assert Table(pd.DataFrame({"query": ["q1"]}), "Ties", fold=True).folded
    empty = Table(pd.DataFrame(columns=["query", "reason"]), "Repaired by the loader (0): nothing was changed")
    assert empty._repr_html_() == "<p><strong>Repaired by the loader (0): nothing was changed</strong></p>"
    assert "<table" not in empty._repr_html_()
    folded = Folded("The queries", "- **BM25**: q1, q2")
    assert folded._repr_html_().startswith("<details><summary>The queries</summary>")
    assert "<strong>BM25</strong>: q1, q2" in folded._repr_html_()


def test_floats_in_parameters_are_rounded():
    """A system's float parameter reads to four significant digits, never a raw repr."""
    assert param_text(0.06972477064220184) == "0.06972" and param_text(1.2) == "1.2" and param_text(True) == "True"


def test_html_has_a_table_of_contents_and_folds_stderr():
    """render_html: a line of links to every section after the title; stderr as a folded section, not a red block."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("run()")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="plugin: loading model\nplugin: done\n")]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title\n\nIntro."),
        cell,
        nbformat.v4.new_markdown_cell("## 1. First"),
        nbformat.v4.new_markdown_cell("## Definitions"),
    ]
    html = render_html(nb)
    assert (
        '<nav class="agentmemory-contents"><p><strong>Contents:</strong> <a href="#1.-First">1. First</a> · '
        '<a href="#Definitions">Definitions</a></p></nav>'
    ) in html
    assert "<details><summary>Messages written to stderr while this ran (2 lines)</summary>" in html
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html
    assert nb.cells[1].outputs[0]["output_type"] == "stream", "the notebook keeps its stderr"
