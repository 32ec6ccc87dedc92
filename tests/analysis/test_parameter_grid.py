"""Parameter grids: the settings of one retriever over its parameters, the heat maps' data, the best setting."""

from __future__ import annotations

import pytest

from agentmemory.analysis.parameter_grid import headline_measure, parameter_grids
from agentmemory.analysis.statistics import per_query_statistics

QUERIES = [("q1", None), ("q2", None), ("q3", None), ("q4", None)]
# nDCG@5 per query of each setting of a 2 x 2 grid over k1 and b (bm25 is the default: k1 = 1.2, b = 0.75),
# and of a system outside the grid.
VALUES = {
    "bm25[k1=0.9,b=0.4]": [0.5, 0.5, 0.5, 0.5],  # 0.5
    "bm25[k1=0.9]": [1.0, 0.5, 0.5, 0.5],  # 0.625, the best
    "bm25[b=0.4]": [0.0, 0.5, 0.5, 0.5],  # 0.375
    "bm25": [0.5, 0.5, 0.5, 0.25],  # 0.4375
    "tags": [0.0, 0.0, 0.0, 0.0],
}
PARAMS = {
    "bm25[k1=0.9,b=0.4]": {"k1": 0.9, "b": 0.4, "variant": "lucene"},
    "bm25[k1=0.9]": {"k1": 0.9, "b": 0.75, "variant": "lucene"},
    "bm25[b=0.4]": {"k1": 1.2, "b": 0.4, "variant": "lucene"},
    "bm25": {"k1": 1.2, "b": 0.75, "variant": "lucene"},
    "tags": {},
}
LABELS = {
    "bm25[k1=0.9,b=0.4]": "BM25 (k1=0.9, b=0.4)",
    "bm25[k1=0.9]": "BM25 (k1=0.9, b=0.75)",
    "bm25[b=0.4]": "BM25 (k1=1.2, b=0.4)",
    "bm25": "BM25 (k1=1.2, b=0.75)",
    "tags": "Tag scorer",
}


def _grid(order=tuple(VALUES), baseline="bm25", values=VALUES, params=PARAMS):
    statistics = per_query_statistics(
        {name: {q: {"nDCG@5": v} for (q, _), v in zip(QUERIES, values[name])} for name in order},
        labels={name: LABELS[name] for name in order},
        queries=QUERIES,
        measures=["nDCG@5"],
        seed=7,
        n_resamples=200,
        baseline=baseline,
        pairs=False,
    )
    systems = [(name, LABELS[name], "retriever", params[name]) for name in order]
    return parameter_grids(systems, statistics, "nDCG@5")


def test_a_two_parameter_grid_gives_one_heat_map_of_its_means() -> None:
    """k1 across (ascending), b down (ascending), each cell the one setting with those values; the tag scorer and
    the constant variant are not axes."""
    [grid] = _grid()
    assert (grid.retriever, grid.name, grid.measure) == ("bm25", "BM25", "nDCG@5")
    assert grid.axes == (("k1", (0.9, 1.2)), ("b", (0.4, 0.75)))
    [heat] = grid.heat_maps()
    assert (heat.x, heat.y, heat.xs, heat.ys, dict(heat.fixed)) == ("k1", "b", (0.9, 1.2), (0.4, 0.75), {})
    assert [[cell.name for cell in row] for row in heat.cells] == [
        ["bm25[k1=0.9,b=0.4]", "bm25[b=0.4]"],
        ["bm25[k1=0.9]", "bm25"],
    ]
    assert heat.values() == [[0.5, 0.375], [0.625, 0.4375]]
    assert grid.best().name == "bm25[k1=0.9]" and grid.default.name == "bm25"
    header, rows = grid.rows(heat)
    assert header == ["b \\ k1", "0.9", "1.2"]
    assert rows == [["0.4", "0.500", "0.375"], ["0.75", "0.625 (best)", "0.438 (default)"]]


def test_a_setting_missing_from_the_grid_is_an_empty_cell() -> None:
    """Three of the four settings: the missing one is None in the data and — in the numbers."""
    [grid] = _grid(order=("bm25[k1=0.9,b=0.4]", "bm25[k1=0.9]", "bm25"))
    [heat] = grid.heat_maps()
    assert heat.values() == [[0.5, None], [0.625, 0.4375]]
    assert grid.rows(heat)[1][0] == ["0.4", "0.500", "—"]


def test_three_parameters_give_a_heat_map_per_pair_the_third_at_the_best_setting() -> None:
    """Each pair of varying parameters gets a heat map; the third is held at the best setting's value."""
    params = {name: {**p, "depth": 10} for name, p in PARAMS.items()}
    params["bm25[k1=0.9]"] = {**params["bm25[k1=0.9]"], "depth": 20}
    [grid] = _grid(params=params)
    assert [name for name, _ in grid.axes] == ["k1", "b", "depth"]
    heats = grid.heat_maps()
    assert [(h.x, h.y, dict(h.fixed)) for h in heats] == [
        ("k1", "b", {"depth": 20}),
        ("k1", "depth", {"b": 0.75}),
        ("b", "depth", {"k1": 0.9}),
    ]
    assert heats[0].values() == [[None, None], [0.625, None]]  # only the best setting has depth = 20
    assert heats[1].values() == [[None, 0.4375], [0.625, None]]


def test_one_parameter_gives_one_row() -> None:
    params = {name: {"k1": p.get("k1")} for name, p in PARAMS.items()}
    [grid] = _grid(order=("bm25[k1=0.9]", "bm25"), params=params)
    [heat] = grid.heat_maps()
    assert (heat.x, heat.y, heat.ys, heat.values()) == ("k1", None, (None,), [[0.625, 0.4375]])
    assert grid.rows(heat) == (["k1", "0.9", "1.2"], [["", "0.625 (best)", "0.438 (default)"]])


def test_the_best_setting_is_compared_with_default_bm25() -> None:
    """The best, its difference from the default (the baseline) and the test, which 4 queries cannot make
    significant; and the caution that a best of several settings is optimistic."""
    [grid] = _grid()
    assert grid.best_text() == (
        "**Best setting on nDCG@5** (highest headline mean of 4 settings): BM25 (k1=0.9, b=0.75), 0.625, +0.188 "
        "against default BM25 (BM25 (k1=1.2, b=0.75), 0.438, the comparison table's baseline) (better on 2 queries, "
        "worse on 0); it cannot be shown significant here. With 4 queries the smallest attainable p-value is 0.12, "
        "so no marker can appear, whatever the systems do. It is the best of 4 settings measured on the same "
        "queries it was picked on, so its lead is an optimistic estimate: confirm it on other queries."
    )


def test_the_best_text_when_the_default_is_best_missing_or_not_the_baseline() -> None:
    values = {**VALUES, "bm25": [1.0, 1.0, 1.0, 1.0]}
    [grid] = _grid(values=values)
    assert grid.best_text() == (
        "**Best setting on nDCG@5** (highest headline mean of 4 settings): the default, BM25 (k1=1.2, b=0.75), "
        "1.000; no other setting does better."
    )
    [grid] = _grid(order=("bm25[k1=0.9,b=0.4]", "bm25[k1=0.9]", "bm25[b=0.4]"), baseline=None)
    assert grid.best_text().endswith(
        "The grid holds no default BM25 (bm25 with every parameter at its default), so there is no default to "
        "compare it with."
    )
    [grid] = _grid(baseline="tags")
    assert "; not tested against it (the comparison table's baseline is Tag scorer). It is the best" in grid.best_text()


def test_no_grid_without_two_settings_that_differ() -> None:
    assert _grid(order=("bm25", "tags")) == ()


@pytest.mark.parametrize(
    ("measures", "k", "chosen"),
    [(["P@5", "nDCG@5"], 5, "nDCG@5"), (["P@5", "R@5"], 5, "P@5"), (["nDCG@3"], 5, "nDCG@3")],
)
def test_headline_measure(measures, k, chosen) -> None:
    """nDCG@k when computed, else the first measure."""
    assert headline_measure(measures, k) == chosen
