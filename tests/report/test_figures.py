"""Plots and the numbers behind them: the curves equal a fresh evaluation at each k; PNGs are byte-deterministic."""

from __future__ import annotations

import struct
import zlib

import pandas as pd
import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load_collection
from agentmemory.report import curves, figures
from agentmemory.report.display import Markdown, Png, signed

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"


@pytest.fixture(scope="module")
def garden3():
    return evaluate(load_collection(GARDEN), ("bm25", "tags"), k=3, seed=7)


@pytest.mark.parametrize("which", ["seed", "garden"])
def test_cutoff_curves_equal_evaluate_at_each_k(which, notes, seed_evaluation, garden3):
    """recall@j and precision@j from one deep run equal evaluate(k=j) for every j = 1 .. collection size."""
    evaluation = seed_evaluation if which == "seed" else garden3
    collection = notes if which == "seed" else garden3.collection
    curve = curves.cutoff_curves(curves.deep_evaluation(evaluation))
    n = len(collection.entries)
    assert sorted(set(curve["k"])) == list(range(1, n + 1))
    for j in range(1, n + 1):
        fresh = evaluate(collection, ("bm25", "tags"), k=j, seed=7)
        for result in fresh.results:
            row = curve[(curve["retriever"] == result.label) & (curve["k"] == j)].iloc[0]
            assert row["mean_recall@k"] == result.means[f"R@{j}"]
            assert row["mean_precision@k"] == result.means[f"P@{j}"]


def test_deep_run_agrees_with_the_run_at_k(seed_evaluation):
    """The curve at the run's own k equals the run's own means (the table and the plot agree)."""
    curve = curves.cutoff_curves(curves.deep_evaluation(seed_evaluation))
    for result in seed_evaluation.results:
        row = curve[(curve["retriever"] == result.label) & (curve["k"] == 5)].iloc[0]
        assert (row["mean_recall@k"], row["mean_precision@k"]) == (result.means["R@5"], result.means["P@5"])


def test_first_relevant_frame(garden3):
    """Ranks of the first relevant hit in the full ranking; 'never' when no relevant entry is ever returned."""
    deep = curves.deep_evaluation(garden3)
    ranks = curves.first_relevant_frame(garden3, deep)
    got = {(r.retriever, r.query): (None if pd.isna(r.rank) else int(r.rank)) for r in ranks.itertuples()}
    assert got[("BM25", "t1")] == 2 and got[("Tag scorer", "t2")] == 2 and got[("Tag scorer", "t3")] is None
    for result in garden3.results:
        for q in result.per_query:
            assert got[(result.label, q.query_id)] == q.first_relevant_rank or q.first_relevant_rank is None
    numbers = repr(figures.first_relevant_numbers(ranks, 3))
    assert "t3    1      never" in numbers


def test_per_query_values_and_numbers(seed_evaluation):
    """The per-query figure's numbers are each query's R@k and P@k, recall first."""
    values = curves.per_query_values(seed_evaluation)
    assert list(values.columns) == ["retriever", "query", "R@5", "P@5"]
    table = figures.per_query_numbers(values).frame
    assert list(table.columns) == ["query", "R@5 BM25", "R@5 Tag scorer", "P@5 BM25", "P@5 Tag scorer"]
    assert table.iloc[0].tolist() == ["q1", "0.50", "1.00", "0.20", "0.40"]


def test_cutoff_numbers_are_printed_for_every_k(seed_evaluation):
    """The cutoff figure's numbers list every k with 4 decimals."""
    curve = curves.cutoff_curves(curves.deep_evaluation(seed_evaluation))
    table = figures.cutoff_numbers(curve).frame
    assert len(table) == 16
    assert table.iloc[4].tolist() == ["5", "0.9000", "0.2800", "1.0000", "0.3200"]


def _chunks(png: bytes):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, out = 8, []
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        data = png[pos + 8 : pos + 8 + length]
        assert zlib.crc32(kind + data) == struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])[0]
        out.append((kind, data))
        pos += 12 + length
    return out


def _all_figures(evaluation):
    values = curves.per_query_values(evaluation)
    deep = curves.deep_evaluation(evaluation)
    curve = curves.cutoff_curves(deep)
    ranks = curves.first_relevant_frame(evaluation, deep)
    drawn = [
        figures.per_query_figure(values),
        figures.cutoff_figure(curve, evaluation.k),
        figures.first_relevant_figure(ranks, evaluation.k),
    ]
    return [f for f in drawn if isinstance(f, Png)]


def test_first_relevant_ranks_all_at_one_are_said_not_drawn(seed_evaluation, garden3):
    """The seed's two systems rank a relevant hit first on all 5 queries: a sentence, not bars all at 1; the
    garden's ranks differ, so they are drawn."""
    ranks = curves.first_relevant_frame(seed_evaluation, curves.deep_evaluation(seed_evaluation))
    assert set(ranks["rank"]) == {1}
    said = figures.first_relevant_figure(ranks, seed_evaluation.k, number=4)
    assert isinstance(said, Markdown)
    assert said.text == (
        "Figure 4: rank of the first relevant hit per query, by system: not drawn, since each of the 2 systems "
        "ranks a relevant hit first on every one of the 5 queries (every bar would stand at 1)."
    )
    garden = curves.first_relevant_frame(garden3, curves.deep_evaluation(garden3))
    assert set(garden["rank"].dropna()) != {1}
    assert isinstance(figures.first_relevant_figure(garden, garden3.k), Png)


@pytest.mark.parametrize("which", ["seed", "garden"])
def test_pngs_are_byte_deterministic_and_carry_no_software_chunk(which, seed_evaluation, garden3):
    """Drawing twice gives the same bytes; no text chunk (version string, date) is embedded."""
    evaluation = seed_evaluation if which == "seed" else garden3
    first, second = _all_figures(evaluation), _all_figures(evaluation)
    for a, b in zip(first, second):
        assert a.data == b.data
        kinds = [kind for kind, _ in _chunks(a.data)]
        assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
        assert not {b"tEXt", b"iTXt", b"zTXt", b"tIME"} & set(kinds)
        width, height = struct.unpack(">II", _chunks(a.data)[0][1][:8])
        assert (width, height) == (800, 320)
        assert repr(a).startswith("Figure: ")
        assert f"<figcaption>{repr(a)}</figcaption>" in a._repr_html_() and "data:image/png;base64," in a._repr_html_()


def test_figures_ignore_the_users_matplotlibrc(seed_evaluation):
    """A changed rcParam in the caller's session does not change the PNG bytes."""
    import matplotlib

    before = _all_figures(seed_evaluation)[0].data
    with matplotlib.rc_context({"axes.facecolor": "black", "lines.linewidth": 7}):
        during = _all_figures(seed_evaluation)[0].data
    assert before == during


def _drawn(monkeypatch) -> list:
    """Every matplotlib Figure the report's figure functions draw from now on (png_bytes records them)."""
    drawn: list = []
    real = figures.png_bytes

    def record(fig):
        drawn.append(fig)
        return real(fig)

    monkeypatch.setattr(figures, "png_bytes", record)
    return drawn


def test_figures_are_numbered_when_asked(seed_evaluation):
    """number=N makes the caption 'Figure N: ...' (the report's text refers to figures by number)."""
    values = curves.per_query_values(seed_evaluation)
    assert repr(figures.per_query_figure(values, number=3)).startswith("Figure 3: R@5 and P@5 per query")
    assert repr(figures.per_query_figure(values)).startswith("Figure: ")


def test_first_rank_legend_covers_no_bar_and_ticks_do_not_collide(monkeypatch):
    """At k = 10 with five systems (the LoCoMo sample): the legend sits above the axes, outside them, so no bar is
    under it, and no two tick labels overlap ('10' and 'not found in top 10' used to run together)."""
    from agentmemory import load
    from agentmemory.report import ranks

    sample = load(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json")
    evaluation = evaluate(sample, "bm25,tags,hybrid,recency,bm25[k1=0.9,b=0.4]", k=10, seed=7)
    drawn = _drawn(monkeypatch)
    figures.first_rank_figure(ranks.first_rank_frame(evaluation), 10, number=2)
    [fig] = drawn
    [ax] = fig.axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    [legend] = fig.legends
    assert legend.get_window_extent(renderer).y0 >= ax.get_window_extent(renderer).y1 - 1e-6
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert labels[-1].get_text() == "not found\nin top 10"
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:]))


def test_comparison_heatmap(monkeypatch, seed_evaluation):
    """A cell per pair and measure, coloured on a scale symmetric around 0, labelled with the difference; the
    caption is numbered; the same bytes twice."""
    from agentmemory.report import stats

    statistics = stats.run_statistics(seed_evaluation)
    matrix = stats.pairs_matrix(seed_evaluation, statistics)
    drawn = _drawn(monkeypatch)
    png = figures.comparison_heatmap(matrix, number=4)
    assert png.data == figures.comparison_heatmap(matrix, number=4).data
    assert repr(png) == (
        "Figure 4: mean paired difference of each pair of systems on each measure over 5 headline queries (first "
        "minus second; * significant at 0.05)"
    )
    ax = drawn[0].axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts == [signed(matrix.cells[(0, m)].difference) for m in matrix.measures]
    [image] = ax.get_images()
    low, high = image.get_clim()
    assert low == -high == -max(abs(matrix.cells[(0, m)].difference) for m in matrix.measures)
