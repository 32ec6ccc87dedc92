"""The sweep notebook's helpers: metrics as functions of k, and how much a small evaluation moves across seeds.

* :func:`k_curves`: :func:`agentmemory.evaluation.sweeps.k_sweep` for ``k = 1 .. k_max``
  on one collection.
* :func:`seed_rows`: :func:`agentmemory.evaluation.sweeps.seed_sweep` for every
  collection shape (entries x queries) of the setup, rows in shape order.
* :func:`summaries`: :func:`agentmemory.evaluation.sweeps.summarize_sweep` per shape
  (quantiles with numpy's linear interpolation).
* :func:`quantile_table` and :func:`spread_statement`: those quantiles as a
  table, and in words: the 5%-95% range of each retriever's mean at the
  first shape (the fixture's) against the others, and how often each
  retriever comes out ahead.
* :func:`parameter_grid`: BM25 over :data:`BM25_GRID` (``k1`` x ``b``, 20 settings) on one synthetic
  collection of the last shape, against default BM25; the report draws it with
  :func:`agentmemory.report.grids.heatmap_figure`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from agentmemory.analysis.parameter_grid import ParameterGrid, headline_measure, parameter_grids, value_text
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.analysis.text_tables import seed_measures
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError
from agentmemory.evaluation.options import EvalOptions
from agentmemory.evaluation.runner import evaluate
from agentmemory.evaluation.sweeps import QUANTILES, k_sweep, seed_sweep, summarize_sweep
from agentmemory.report.display import Markdown, Table
from agentmemory.report.params import SweepSetup
from agentmemory.retrievers import full_label

__all__ = [
    "BM25_GRID",
    "grid_specs",
    "head_to_head",
    "k_curves",
    "measure_names",
    "parameter_grid",
    "quantile_table",
    "seed_rows",
    "spread_statement",
    "summaries",
    "sweep_measures",
    "sweep_overview",
    "verdict",
]


BM25_GRID: dict[str, tuple[float, ...]] = {"k1": (0.6, 0.9, 1.2, 1.5, 2.0), "b": (0.25, 0.5, 0.75, 1.0)}
"""The parameter grid of the report: BM25's ``k1`` and ``b`` (20 settings, default ``k1 = 1.2, b = 0.75`` among them)."""


def grid_specs(grid: dict[str, tuple[float, ...]] = BM25_GRID) -> list[str]:
    """The BM25 specs of ``grid``, ``k1`` outer: ``bm25[k1=0.6,b=0.25]``, ``bm25[k1=0.6,b=0.5]``, ..."""
    return [f"bm25[k1={k1},b={b}]" for k1 in grid["k1"] for b in grid["b"]]


def sweep_measures(k: int) -> list[str]:
    """The seed sweep's measures: ``R@k``, ``P@k`` and ``RR`` (RR over the top k, whose mean is MRR).

    They are :func:`agentmemory.analysis.text_tables.seed_measures`, the columns of
    :func:`agentmemory.evaluation.sweeps.seed_sweep`'s rows.
    """
    return list(seed_measures(k))


def measure_names(k: int) -> dict[str, str]:
    """How the report names them: ``recall@k``, ``precision@k``, ``MRR``."""
    return dict(zip(seed_measures(k), (f"recall@{k}", f"precision@{k}", "MRR")))


def _shape(n_entries: int, queries: int) -> str:
    return f"{n_entries} entries and {queries} queries"


def sweep_overview(setup: SweepSetup) -> Markdown:
    """What the two sweeps run: the k sweep's collection and cutoffs, the seed sweep's seeds, shapes and generator."""
    seeds = setup.seeds
    seed_text = f"{seeds[0]}..{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])
    c = setup.collection
    last = setup.configs[-1]
    grid = " x ".join(f"{name} in {', '.join(value_text(v) for v in values)}" for name, values in BM25_GRID.items())
    lines = [
        f"- **k sweep:** `{c.name}` ({setup.source}), {len(c.entries)} entries, {len(c.judged_queries)} judged "
        f"queries; k = 1..{max(setup.ks)}",
        f"- **Seed sweep:** {len(seeds)} seeds ({seed_text}) of `agentmemory.datasets.synthetic.synthetic_collection`, "
        f"vocabulary mismatch rate {setup.mismatch_rate:g}, cutoff k = {setup.k}, for each shape: "
        + "; ".join(_shape(n, q) for n, q in setup.configs),
        f"- **Retrievers:** {', '.join(s.key for s in setup.retrievers)}",
        f"- **Parameter grid:** BM25 with {grid} ({len(grid_specs())} settings) on the synthetic collection of seed "
        f"{setup.seeds[0]} with {_shape(last.n_entries, last.n_queries)}, cutoff k = {setup.k}, against default BM25",
    ]
    return Markdown("\n".join(lines))


def k_curves(setup: SweepSetup) -> dict[str, Any]:
    """:func:`agentmemory.evaluation.sweeps.k_sweep` of the setup's collection and retrievers for ``k = 1 .. k_max``."""
    return k_sweep(setup.collection, setup.retrievers, setup.ks, seed=setup.seed, progress=setup.progress)


def seed_rows(setup: SweepSetup) -> list[dict[str, Any]]:
    """:func:`agentmemory.evaluation.sweeps.seed_sweep` for each shape of the setup, concatenated (shape, then seed, then retriever)."""
    rows: list[dict[str, Any]] = []
    for config in setup.configs:
        rows += seed_sweep(
            setup.seeds,
            [config.n_entries],
            setup.retrievers,
            setup.k,
            progress=setup.progress,
            n_queries=config.n_queries,
            mismatch_rate=setup.mismatch_rate,
        )
    return rows


def summaries(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`agentmemory.evaluation.sweeps.summarize_sweep` per shape (entries, queries), shapes in order of appearance.

    Each summary also carries ``queries``, the shape's number of queries.

    Raises:
        ParameterError: ``rows`` is empty.
    """
    if not rows:
        raise ParameterError("rows", list(rows), "is empty", "pass the rows of seed_rows or seed_sweep")
    shapes = list(dict.fromkeys((r["n_entries"], r["queries"]) for r in rows))
    out = []
    for n, q in shapes:
        for summary in summarize_sweep([r for r in rows if (r["n_entries"], r["queries"]) == (n, q)]):
            out.append({"n_entries": n, "queries": q, **{k: v for k, v in summary.items() if k != "n_entries"}})
    return out


def quantile_table(summary: Sequence[Mapping[str, Any]], k: int) -> Table:
    """One row per shape x retriever x measure: min, 5%, 25%, median, 75%, 95%, max and the 5%-95% range (2 decimals)."""
    names = measure_names(k)
    rows = []
    for s in summary:
        for m in sweep_measures(k):
            q = s[m]
            rows.append(
                [str(s["n_entries"]), str(s["queries"]), s["label"], names[m]]
                + [format(q[key], ".2f") for key, _ in QUANTILES]
                + [format(q["p95"] - q["p05"], ".2f")]
            )
    columns = [
        "entries",
        "queries",
        "Retriever",
        "measure",
        "min",
        "5%",
        "25%",
        "median",
        "75%",
        "95%",
        "max",
        "5%-95% range",
    ]
    seeds = summary[0]["seeds"] if summary else 0
    return Table(
        pd.DataFrame(rows, columns=columns),
        f"Each retriever's mean across {seeds} seeds per collection shape (numpy linear quantiles; the box "
        "plot's box is 25%-75%, its whiskers 5%-95%)",
    )


def head_to_head(
    rows: Sequence[Mapping[str, Any]], measure: str, a: str, b: str
) -> dict[tuple[int, int], tuple[int, int, int]]:
    """Per shape (entries, queries): on how many seeds retriever ``a`` is above, level with, below ``b`` on ``measure``.

    ``a`` and ``b`` are retriever names; means are compared exactly.
    """
    by_key = {(r["n_entries"], r["queries"], r["seed"], r["retriever"]): r[measure] for r in rows}
    out: dict[tuple[int, int], list[int]] = {}
    for n, q, seed, name in by_key:
        if name != a or (n, q, seed, b) not in by_key:
            continue
        diff = by_key[(n, q, seed, a)] - by_key[(n, q, seed, b)]
        counts = out.setdefault((n, q), [0, 0, 0])
        counts[0 if diff > 0 else 1 if diff == 0 else 2] += 1
    return {shape: (c[0], c[1], c[2]) for shape, c in out.items()}


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ratio(base: float, other: float) -> str:
    if other == base:
        return "the same range"
    if other == 0:
        return "no spread at all"
    if other < base:
        return f"{base / other:.1f} times narrower"
    return f"{other / base:.1f} times wider" if base > 0 else "wider"


def spread_statement(summary: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], k: int) -> Markdown:
    """How much an evaluation of the first shape (the fixture's) moves across seeds, against the other shapes.

    For every measure and retriever: the 5%-95% range of the mean at the
    first shape, and at each other shape with how many times narrower (or
    wider) it is.  Then, for each pair of retrievers and each measure, on
    how many seeds the first is above, level with and below the second, per
    shape; and a closing sentence on the first shape: the 5%-95% range of
    the first retriever's MRR, and on which measures the retriever ahead
    changed from seed to seed (first pair of retrievers).
    """
    if not summary:
        raise ParameterError("summary", list(summary), "is empty", "pass the summaries of the seed sweep's rows")
    names = measure_names(k)
    shapes = list(dict.fromkeys((s["n_entries"], s["queries"]) for s in summary))
    base = shapes[0]
    cells = {(s["n_entries"], s["queries"], s["retriever"]): s for s in summary}
    retrievers = list(dict.fromkeys(s["retriever"] for s in summary))
    labels = {s["retriever"]: s["label"] for s in summary}
    seeds = summary[0]["seeds"]
    lines = [
        f"**How much a {base[0]}-entry, {base[1]}-query evaluation moves across seeds.** Each of the {seeds} seeds "
        "draws a new synthetic collection of each shape and evaluates it at the same k; the 5%-95% range is the "
        "band the middle 90% of those means fall in.",
        "",
    ]
    for m in sweep_measures(k):
        for name in retrievers:
            first = cells[(*base, name)][m]
            text = (
                f"- **{names[m]}, {labels[name]}:** {first['p05']:.2f} to {first['p95']:.2f} at "
                f"{_shape(*base)} (range {first['p95'] - first['p05']:.2f})"
            )
            for shape in shapes[1:]:
                other = cells[(*shape, name)][m]
                width = other["p95"] - other["p05"]
                text += (
                    f"; {other['p05']:.2f} to {other['p95']:.2f} at {_shape(*shape)} (range {width:.2f}, "
                    f"{_ratio(first['p95'] - first['p05'], width)})"
                )
            lines.append(text + ".")
    pairs = [(retrievers[i], retrievers[j]) for i in range(len(retrievers)) for j in range(i + 1, len(retrievers))]
    for a, b in pairs:
        for m in sweep_measures(k):
            counts = head_to_head(rows, m, a, b)
            parts = [
                f"above on {up}, level on {level}, below on {down} of the {up + level + down} collections of "
                f"{_shape(*shape)}"
                for shape in shapes
                for up, level, down in [counts[shape]]
            ]
            lines.append(f"- **{labels[a]} against {labels[b]} on {names[m]}:** " + "; ".join(parts) + ".")
    if pairs:
        a, b = pairs[0]
        first = cells[(*base, a)][seed_measures(k)[2]]
        split = []
        for m in sweep_measures(k):
            up, level, down = head_to_head(rows, m, a, b)[base]
            if up and down:
                split.append(f"{names[m]} ({labels[a]} ahead on {up} seeds, {labels[b]} on {down})")
        if split:
            verdict = f"which of {labels[a]} and {labels[b]} comes out ahead changes from seed to seed on " + _join(
                split
            )
        else:
            verdict = (
                f"the order of {labels[a]} and {labels[b]} did not flip on any measure across these {seeds} seeds "
                "(more seeds may show flips)"
            )
        lines += [
            "",
            f"So one {base[0]}-entry, {base[1]}-query table is a single draw: on another collection of that shape, "
            f"{labels[a]}'s MRR could as well be anywhere from {first['p05']:.2f} to {first['p95']:.2f} "
            f"(the middle 90% of {seeds} seeds), and {verdict}.",
        ]
    return Markdown("\n".join(lines))


def parameter_grid(setup: SweepSetup) -> ParameterGrid:
    """BM25 over :data:`BM25_GRID` on the synthetic collection of the setup's first seed and last shape, at its
    cutoff k: the :class:`~agentmemory.analysis.parameter_grid.ParameterGrid` of ``nDCG@k``, every label naming
    ``k1`` and ``b``, tested against default BM25 (the comparison table's baseline; tests against it only, Holm
    over every other setting x measure, 10,000 resamples, the run seed)."""
    last = setup.configs[-1]
    collection = synthetic_collection(
        seed=setup.seeds[0], n_entries=last.n_entries, n_queries=last.n_queries, mismatch_rate=setup.mismatch_rate
    )
    evaluation = evaluate(collection, grid_specs(), options=EvalOptions(k=setup.k, seed=setup.seed))
    statistics = evaluation_statistics(evaluation, seed=setup.seed, baseline="bm25", pairs=False)
    systems = [(r.name, full_label(r.name), r.kind, r.params) for r in evaluation.results]
    measure = headline_measure(list(statistics.shown_measures), setup.k)
    [grid] = parameter_grids(systems, statistics, measure)
    return grid


def verdict(
    summary: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], grid: ParameterGrid, k: int
) -> Markdown:
    """The paragraph the sweep report opens with: on the largest shape, each retriever's median nDCG@k across the
    seeds with its 5%-95% range and how often the first retriever is ahead of each other; how much wider the band
    of the first shape (the fixture's) is; and the best BM25 setting of the grid against the default."""
    if not summary:
        raise ParameterError("summary", list(summary), "is empty", "pass the summaries of the seed sweep's rows")
    measure = sweep_measures(k)[-1]
    name = measure_names(k).get(measure, measure)
    shapes = list(dict.fromkeys((s["n_entries"], s["queries"]) for s in summary))
    cells = {(s["n_entries"], s["queries"], s["retriever"]): s for s in summary}
    retrievers = list(dict.fromkeys(s["retriever"] for s in summary))
    labels = {s["retriever"]: s["label"] for s in summary}
    seeds = summary[0]["seeds"]
    last, first = shapes[-1], shapes[0]
    medians = {r: cells[(*last, r)][measure] for r in retrievers}
    leader = max(retrievers, key=lambda r: medians[r]["median"])
    text = [
        f"**Verdict.** Over {seeds} synthetic collections of {_shape(*last)}, **{labels[leader]}** has the highest "
        f"median {name}: "
        + "; ".join(
            f"{labels[r]} {medians[r]['median']:.2f} (5%-95%: {medians[r]['p05']:.2f} to {medians[r]['p95']:.2f})"
            for r in retrievers
        )
        + "."
    ]
    for other in retrievers:
        if other == leader:
            continue
        up, level, down = head_to_head(rows, measure, leader, other)[last]
        text.append(
            f"{labels[leader]} is ahead of {labels[other]} on {up} of the {up + level + down} collections (level on {level})."
        )
    if first != last:
        base = cells[(*first, leader)][measure]
        width = base["p95"] - base["p05"]
        wide = medians[leader]["p95"] - medians[leader]["p05"]
        text.append(
            f"At {_shape(*first)} (the fixture's size) {labels[leader]}'s {name} spans {base['p05']:.2f} to "
            f"{base['p95']:.2f}, {_ratio(wide, width)} than at the largest shape: one small table is a single draw."
        )
    text.append(grid.best_text())
    return Markdown(" ".join(text))
