"""The sweep notebook's helpers: parameters, the k and seed sweeps, quantiles, and the statement on how much a
small evaluation moves across seeds."""

from __future__ import annotations

import pytest

from agentmemory.errors import ReportParameterError
from agentmemory.evaluation.sweeps import k_sweep, seed_sweep, summarize_sweep
from agentmemory.report import figures
from agentmemory.report import sweep_notebook as sweeps
from agentmemory.report.params import SweepConfig, parse_seeds, sweep_setup

GOOD = {
    "collection": "",
    "k_max": 16,
    "k": 5,
    "seeds": "20",
    "sizes": "16,200",
    "queries": "5,50",
    "mismatch_rate": 0.2,
    "retrievers": "bm25,tags",
    "progress": False,
}


def _setup(**changes):
    return sweep_setup(**{**GOOD, **changes})


@pytest.mark.parametrize(
    "value, seeds",
    [(3, (0, 1, 2)), ("3", (0, 1, 2)), ("2", (0, 1)), ("100-102", (100, 101, 102)), ("7-7", (7,))],
)
def test_parse_seeds(value, seeds):
    """A count N means 0..N-1; "a-b" is inclusive."""
    assert parse_seeds(value) == seeds


def test_defaults():
    """20 seeds, shapes 16 x 5 and 200 x 50, k = 1..16 on the shipped fixture, no progress bars."""
    setup = _setup()
    assert setup.seeds == tuple(range(20)) and setup.ks == tuple(range(1, 17)) and setup.k == 5
    assert setup.configs == (SweepConfig(16, 5), SweepConfig(200, 50))
    assert str(setup.configs[0]) == "16 entries, 5 queries"
    assert (setup.collection.name, setup.source, setup.progress, setup.seed) == (
        "assistant-notes",
        "the shipped fixture",
        False,
        7,
    )
    assert _setup(queries=5).configs == (SweepConfig(16, 5), SweepConfig(200, 5))
    assert sweeps.sweep_overview(setup).text == (
        "- **k sweep:** `assistant-notes` (the shipped fixture), 16 entries, 5 judged queries; k = 1..16\n"
        "- **Seed sweep:** 20 seeds (0..19) of `agentmemory.datasets.synthetic.synthetic_collection`, vocabulary mismatch "
        "rate 0.2, cutoff k = 5, for each shape: 16 entries and 5 queries; 200 entries and 50 queries\n"
        "- **Retrievers:** bm25, tags\n"
        "- **Parameter grid:** BM25 with k1 in 0.6, 0.9, 1.2, 1.5, 2.0 x b in 0.25, 0.5, 0.75, 1.0 (20 settings) on "
        "the synthetic collection of seed 0 with 200 entries and 50 queries, cutoff k = 5, against default BM25"
    )


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"seeds": "abc"},
            "seeds: 'abc' (str) is not a count or a range; pass a number of seeds such as 20 (seeds 0..19) or an "
            'inclusive range such as "100-199"',
        ),
        ({"seeds": "5-2"}, "seeds: '5-2' (str) is an empty range; the range's start must not exceed its end"),
        ({"seeds": 0}, "seeds: 0 (int) is less than 1; seeds must be an integer >= 1"),
        ({"sizes": "16,x"}, "sizes: '16,x' (str) is not a comma-separated list of integers; pass e.g. '16,200'"),
        (
            {"queries": "5,5,5"},
            "queries: '5,5,5' (str) names 3 counts for 2 sizes; give one number of queries for every size, or one "
            "per size",
        ),
        (
            {"sizes": "16,16", "queries": "5"},
            "sizes: '16,16' (str) repeats the collection shape (16 entries, 5 queries); list each size and query "
            "count once",
        ),
        (
            {"sizes": "16", "queries": "10"},
            "sizes: '16' (str) cannot hold 10 queries in 16 entries; use n_entries >= 20, or fewer queries or "
            "relevant entries",
        ),
        ({"mismatch_rate": 1.5}, "mismatch_rate: 1.5 (float) is not a probability; use a number in [0, 1], e.g. 0.2"),
        ({"progress": "no"}, "progress: 'no' (str) is not a bool; pass True or False"),
        ({"k_max": 0}, "k_max: 0 (int) is less than 1; k_max must be an integer >= 1"),
        (
            {"retrievers": "bm99"},
            "retriever: 'bm99' (str) is not a known name; choose from: bm25, dense, hybrid, recency, tags",
        ),
    ],
    ids=[
        "seeds-text",
        "seeds-empty",
        "seeds-0",
        "sizes",
        "queries-count",
        "repeated",
        "too-small",
        "rate",
        "progress",
        "k_max",
        "retriever",
    ],
)
def test_bad_parameters_give_one_message(changes, message):
    """Each bad value stops the notebook with one line, to the letter."""
    with pytest.raises(ReportParameterError) as info:
        _setup(**changes)
    assert str(info.value) == message


def test_k_curves_are_k_sweep():
    """k_curves is agentmemory.evaluation.sweeps.k_sweep over 1..k_max on the setup's collection."""
    setup = _setup(k_max=4)
    assert sweeps.k_curves(setup) == k_sweep(setup.collection, ("bm25", "tags"), [1, 2, 3, 4], seed=7)


def test_seed_rows_run_seed_sweep_per_shape():
    """Rows come shape by shape, each the library's seed_sweep with that shape's number of queries."""
    setup = _setup(seeds="2", sizes="16,40", queries="5,10", k=3)
    rows = sweeps.seed_rows(setup)
    assert rows == (
        seed_sweep([0, 1], [16], ("bm25", "tags"), 3, n_queries=5, mismatch_rate=0.2)
        + seed_sweep([0, 1], [40], ("bm25", "tags"), 3, n_queries=10, mismatch_rate=0.2)
    )
    summary = sweeps.summaries(rows)
    assert [(s["n_entries"], s["queries"], s["retriever"], s["seeds"]) for s in summary] == [
        (16, 5, "bm25", 2),
        (16, 5, "tags", 2),
        (40, 10, "bm25", 2),
        (40, 10, "tags", 2),
    ]
    assert summary[0]["R@3"] == summarize_sweep(rows[:4])[0]["R@3"]


def _rows():
    """Hand-made sweep rows: 5 seeds, shapes 16 x 5 and 200 x 50, retrievers a and b, one value for all measures."""
    spread = {16: [0.0, 0.25, 0.5, 0.75, 1.0], 200: [0.4, 0.45, 0.5, 0.55, 0.6]}
    flat = {16: 0.5, 200: 0.1}
    rows = []
    for n, q in ((16, 5), (200, 50)):
        for seed in range(5):
            for name, value in (("a", spread[n][seed]), ("b", flat[n])):
                rows.append(
                    {
                        "seed": seed,
                        "n_entries": n,
                        "retriever": name,
                        "label": name.upper(),
                        "digest": "-",
                        "queries": q,
                        "R@5": value,
                        "P@5": value,
                        "RR": value,
                    }
                )
    return rows


def test_head_to_head_counts_above_level_below():
    """Per shape: seeds where a's mean is above, equal to, below b's."""
    assert sweeps.head_to_head(_rows(), "RR", "a", "b") == {(16, 5): (2, 1, 2), (200, 50): (5, 0, 0)}


def test_quantile_table():
    """5 values 0, .25, .5, .75, 1: linear quantiles 5% = 0.05 and 95% = 0.95, range 0.90."""
    table = sweeps.quantile_table(sweeps.summaries(_rows()), 5)
    assert table.frame.iloc[2].tolist() == [
        "16",
        "5",
        "A",
        "MRR",
        "0.00",
        "0.05",
        "0.25",
        "0.50",
        "0.75",
        "0.95",
        "1.00",
        "0.90",
    ]
    assert table.frame.iloc[8].tolist()[4:] == ["0.40", "0.41", "0.45", "0.50", "0.55", "0.59", "0.60", "0.18"]


def test_spread_statement_quantifies_how_much_a_small_evaluation_moves():
    """Ranges at the first shape against the others, head-to-head counts, and a closing sentence, all computed."""
    rows = _rows()
    text = sweeps.spread_statement(sweeps.summaries(rows), rows, 5).text
    assert text == (
        "**How much a 16-entry, 5-query evaluation moves across seeds.** Each of the 5 seeds draws a new synthetic "
        "collection of each shape and evaluates it at the same k; the 5%-95% range is the band the middle 90% of "
        "those means fall in.\n\n"
        "- **recall@5, A:** 0.05 to 0.95 at 16 entries and 5 queries (range 0.90); 0.41 to 0.59 at 200 entries and "
        "50 queries (range 0.18, 5.0 times narrower).\n"
        "- **recall@5, B:** 0.50 to 0.50 at 16 entries and 5 queries (range 0.00); 0.10 to 0.10 at 200 entries and "
        "50 queries (range 0.00, the same range).\n"
        "- **precision@5, A:** 0.05 to 0.95 at 16 entries and 5 queries (range 0.90); 0.41 to 0.59 at 200 entries "
        "and 50 queries (range 0.18, 5.0 times narrower).\n"
        "- **precision@5, B:** 0.50 to 0.50 at 16 entries and 5 queries (range 0.00); 0.10 to 0.10 at 200 entries "
        "and 50 queries (range 0.00, the same range).\n"
        "- **MRR, A:** 0.05 to 0.95 at 16 entries and 5 queries (range 0.90); 0.41 to 0.59 at 200 entries and 50 "
        "queries (range 0.18, 5.0 times narrower).\n"
        "- **MRR, B:** 0.50 to 0.50 at 16 entries and 5 queries (range 0.00); 0.10 to 0.10 at 200 entries and 50 "
        "queries (range 0.00, the same range).\n"
        "- **A against B on recall@5:** above on 2, level on 1, below on 2 of the 5 collections of 16 entries and "
        "5 queries; above on 5, level on 0, below on 0 of the 5 collections of 200 entries and 50 queries.\n"
        "- **A against B on precision@5:** above on 2, level on 1, below on 2 of the 5 collections of 16 entries "
        "and 5 queries; above on 5, level on 0, below on 0 of the 5 collections of 200 entries and 50 queries.\n"
        "- **A against B on MRR:** above on 2, level on 1, below on 2 of the 5 collections of 16 entries and 5 "
        "queries; above on 5, level on 0, below on 0 of the 5 collections of 200 entries and 50 queries.\n\n"
        "So one 16-entry, 5-query table is a single draw: on another collection of that shape, A's MRR could as "
        "well be anywhere from 0.05 to 0.95 (the middle 90% of 5 seeds), and which of A and B comes out ahead "
        "changes from seed to seed on recall@5 (A ahead on 2 seeds, B on 2), precision@5 (A ahead on 2 seeds, B on "
        "2) and MRR (A ahead on 2 seeds, B on 2)."
    )


def test_spread_statement_when_the_order_never_flips():
    """No flip at the first shape: the closing sentence says so and does not generalise from it."""
    rows = [r for r in _rows() if r["n_entries"] == 200]
    text = sweeps.spread_statement(sweeps.summaries(rows), rows, 5).text
    assert text.endswith(
        "and the order of A and B did not flip on any measure across these 5 seeds (more seeds may show flips)."
    )
    assert text.startswith("**How much a 200-entry, 50-query evaluation moves across seeds.**")


def test_statement_and_summaries_refuse_empty_input():
    """No rows: a ParameterError, not an IndexError."""
    with pytest.raises(ValueError, match=r"^rows: \[\] \(list\) is empty"):
        sweeps.summaries([])
    with pytest.raises(ValueError, match=r"^summary: \[\] \(list\) is empty"):
        sweeps.spread_statement([], [], 5)


def test_sweep_figures_and_their_numbers():
    """The seed-sweep and k-sweep figures are byte-stable; their numbers are every seed's and every k's values."""
    rows = _rows()
    measures = sweeps.sweep_measures(5)
    assert measures == ["R@5", "P@5", "RR"] and sweeps.measure_names(5)["RR"] == "MRR"
    numbers = figures.sweep_numbers(rows, measures).frame
    assert list(numbers.columns)[:4] == ["seed", "R@5 A 16x5", "P@5 A 16x5", "RR A 16x5"]
    assert numbers["RR A 16x5"].tolist() == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    one, two = (
        figures.sweep_figure(rows, measures, sweeps.measure_names(5)),
        figures.sweep_figure(rows, measures, sweeps.measure_names(5)),
    )
    assert (
        one.data == two.data
        and repr(one) == "Figure: recall@5, precision@5, MRR across 5 seeds, by collection shape and retriever"
    )
    curves = sweeps.k_curves(_setup(k_max=3))
    table = figures.k_sweep_numbers(curves).frame
    assert table.columns.tolist() == [
        "k",
        "R@k BM25",
        "P@k BM25",
        "nDCG@k BM25",
        "R@k Tag scorer",
        "P@k Tag scorer",
        "nDCG@k Tag scorer",
    ]
    assert table.iloc[0].tolist() == ["1", "0.7000", "1.0000", "1.0000", "0.7000", "1.0000", "1.0000"]
    assert figures.k_sweep_figure(curves).data == figures.k_sweep_figure(curves).data
