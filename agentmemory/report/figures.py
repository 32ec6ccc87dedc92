"""The report's plots (matplotlib, PNG) and the numbers behind each, as a table.

Every figure is drawn on a :class:`matplotlib.figure.Figure` (no pyplot,
so nothing is displayed twice and no global state is touched) in
matplotlib's default style, whatever the user's ``matplotlibrc`` says, and
saved with a fixed size and dpi and without the ``Software`` text chunk:
the PNG bytes are the same on every run with the same matplotlib and fonts.
nbval does not compare images, so each ``*_figure`` function has a
``*_numbers`` twin whose table the notebook prints beside it.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

# A fresh machine builds matplotlib's font cache on first import and says so on
# stderr; that line would land in the executed notebook and fail nbval once.
logging.getLogger("matplotlib.font_manager").addFilter(lambda record: "font cache" not in record.getMessage())

import matplotlib  # noqa: E402
import matplotlib.style  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from agentmemory.analysis.paired_matrix import PairedMatrix  # noqa: E402
from agentmemory.analysis.text_tables import lower_is_better  # noqa: E402
from agentmemory.report.display import Markdown, Png, Table, signed  # noqa: E402

__all__ = [
    "DPI",
    "comparison_heatmap",
    "cutoff_figure",
    "cutoff_numbers",
    "first_rank_figure",
    "first_rank_numbers",
    "first_relevant_figure",
    "first_relevant_numbers",
    "k_sweep_figure",
    "k_sweep_numbers",
    "per_query_figure",
    "per_query_numbers",
    "png_bytes",
    "sweep_figure",
    "sweep_numbers",
]

DPI = 100
_RC: dict[RcKeyType, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
}


def png_bytes(fig: Figure) -> bytes:
    """``fig`` as PNG: fixed dpi, no metadata text chunk (so no version string in the bytes)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _caption(number: int | None, text: str) -> str:
    """``"Figure 2: text"``, or ``"Figure: text"`` without a number (the report numbers its figures in order and
    its text refers to them by number)."""
    return f"Figure {number}: {text}" if number is not None else f"Figure: {text}"


def _behind(number: int | None, figure: str, what: str = "") -> str:
    """A numbers table's caption: ``"Numbers behind Figure 2: what"`` (or ``the <figure>`` without a number)."""
    head = f"Numbers behind {f'Figure {number}' if number is not None else figure}"
    return f"{head}: {what}" if what else head


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def _legend_above(fig: Figure, ax: Any, entries: int) -> None:
    """The legend above the axes, outside them (it never covers a bar), in rows of at most three entries."""
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", ncols=min(entries, 3), frameon=False)


def _grouped_bars(ax, frame: pd.DataFrame, column: str, retrievers: list[str], queries: list[str]) -> None:
    width = 0.8 / max(len(retrievers), 1)
    for i, label in enumerate(retrievers):
        rows = frame[frame["retriever"] == label].set_index("query")
        values = [rows.loc[q, column] for q in queries]
        xs = [j + (i - (len(retrievers) - 1) / 2) * width for j in range(len(queries))]
        ax.bar(xs, values, width, label=label, color=f"C{i}")
    ax.set_xticks(range(len(queries)), queries)


def per_query_numbers(values: pd.DataFrame, *, number: int | None = None) -> Table:
    """The numbers of :func:`per_query_figure`: one row per query, R@k then P@k per retriever, 2 decimals."""
    retrievers = list(dict.fromkeys(values["retriever"]))
    queries = list(dict.fromkeys(values["query"]))
    out = pd.DataFrame({"query": queries})
    for column in values.columns[2:]:
        for label in retrievers:
            rows = values[values["retriever"] == label].set_index("query")
            out[f"{column} {label}"] = [format(rows.loc[q, column], ".2f") for q in queries]
    return Table(out, _behind(number, "the per-query figure"))


def per_query_figure(values: pd.DataFrame, *, number: int | None = None) -> Png:
    """Per-query recall@k (left) and precision@k (right), a bar per retriever."""
    recall_col, precision_col = values.columns[2], values.columns[3]
    retrievers = list(dict.fromkeys(values["retriever"]))
    queries = list(dict.fromkeys(values["query"]))
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(8, 3.2)
        left, right = fig.subplots(1, 2, sharey=True)
        for ax, column in ((left, recall_col), (right, precision_col)):
            _grouped_bars(ax, values, column, retrievers, queries)
            ax.set_title(f"{column} per query")
            ax.set_ylim(0, 1.05)
            ax.set_xlabel("query")
        left.set_ylabel("value")
        _legend_above(fig, right, len(retrievers))
        data = png_bytes(fig)
    return Png(data, _caption(number, f"{recall_col} and {precision_col} per query, by system"))


def cutoff_numbers(curves: pd.DataFrame, *, number: int | None = None) -> Table:
    """The numbers of :func:`cutoff_figure`: one row per k, mean recall and precision per retriever."""
    retrievers = list(dict.fromkeys(curves["retriever"]))
    out = pd.DataFrame({"k": sorted(set(curves["k"]))})
    for label in retrievers:
        rows = curves[curves["retriever"] == label].set_index("k")
        out[f"recall {label}"] = [format(rows.loc[k, "mean_recall@k"], ".4f") for k in out["k"]]
        out[f"precision {label}"] = [format(rows.loc[k, "mean_precision@k"], ".4f") for k in out["k"]]
    out["k"] = out["k"].astype(str)
    return Table(out, _behind(number, "the cutoff curves", "mean recall@k and precision@k for each k"))


def cutoff_figure(curves: pd.DataFrame, k: int, *, number: int | None = None) -> Png:
    """Mean recall@j (left) and precision@j (right) for j = 1 .. max, a line per retriever; the run's k dashed."""
    retrievers = list(dict.fromkeys(curves["retriever"]))
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(8, 3.2)
        left, right = fig.subplots(1, 2, sharey=True)
        for ax, column, title in (
            (left, "mean_recall@k", "mean recall@k"),
            (right, "mean_precision@k", "mean precision@k"),
        ):
            for i, label in enumerate(retrievers):
                rows = curves[curves["retriever"] == label]
                ax.plot(rows["k"], rows[column], marker="o", markersize=3, label=label, color=f"C{i}")
            ax.axvline(k, color="grey", linestyle="--", linewidth=1)
            ax.set_title(f"{title} against k (dashed: k = {k})")
            ax.set_xlabel("k")
            ax.set_ylim(0, 1.05)
        left.set_ylabel("mean over queries")
        left.legend(loc="lower right")
        data = png_bytes(fig)
    top = int(curves["k"].max())
    return Png(data, _caption(number, f"mean recall@k and precision@k for k = 1..{top}, by system"))


def first_relevant_numbers(ranks: pd.DataFrame, k: int, *, number: int | None = None) -> Table:
    """The numbers of :func:`first_relevant_figure`: rank per query and retriever (``never`` when never returned)."""
    retrievers = list(dict.fromkeys(ranks["retriever"]))
    queries = list(dict.fromkeys(ranks["query"]))
    out = pd.DataFrame({"query": queries})
    for label in retrievers:
        rows = ranks[ranks["retriever"] == label].set_index("query")
        cells = []
        for q in queries:
            rank = rows.loc[q, "rank"]
            cells.append("never" if pd.isna(rank) else f"{rank}" + ("" if rank <= k else f" (> k = {k})"))
        out[label] = cells
    return Table(
        out, _behind(number, "the first-relevant figure", "rank of the first relevant hit in the full ranking")
    )


def first_relevant_figure(ranks: pd.DataFrame, k: int, *, number: int | None = None) -> Png | Markdown:
    """Rank of each query's first relevant hit in the full ranking, a bar per retriever; k dashed; ``never`` marked.

    When every system ranks a relevant hit first on every query, a sentence says so instead of a figure whose bars
    would all stand at 1."""
    retrievers = list(dict.fromkeys(ranks["retriever"]))
    queries = list(dict.fromkeys(ranks["query"]))
    known = [int(r) for r in ranks["rank"] if not pd.isna(r)]
    if queries and len(known) == len(ranks) and set(known) == {1}:
        systems = "the system" if len(retrievers) == 1 else f"each of the {len(retrievers)} systems"
        return Markdown(
            f"{_caption(number, 'rank of the first relevant hit per query, by system')}: not drawn, since {systems} "
            f"ranks a relevant hit first on every one of the {len(queries)} queries (every bar would stand at 1)."
        )
    top = max([k, *known]) + 1
    width = 0.8 / max(len(retrievers), 1)
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(8, 3.2)
        ax = fig.subplots()
        for i, label in enumerate(retrievers):
            rows = ranks[ranks["retriever"] == label].set_index("query")
            labelled = False
            for j, q in enumerate(queries):
                x = j + (i - (len(retrievers) - 1) / 2) * width
                rank = rows.loc[q, "rank"]
                if pd.isna(rank):
                    ax.text(x, 0.1, "never", rotation=90, ha="center", va="bottom", fontsize=7, color=f"C{i}")
                else:
                    ax.bar(x, int(rank), width, color=f"C{i}", label=None if labelled else label)
                    labelled = True
            if not labelled:
                ax.bar([], [], color=f"C{i}", label=label)
        ax.axhline(k + 0.5, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(queries)), queries)
        ax.set_ylim(0, top + 0.5)
        ax.set_xlabel("query")
        ax.set_ylabel("rank (1 = first)")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"Rank of the first relevant hit (dashed: cutoff k = {k}; lower is better)")
        _legend_above(fig, ax, len(retrievers))
        data = png_bytes(fig)
    return Png(data, _caption(number, f"rank of the first relevant hit per query, by system (cutoff k = {k})"))


def first_rank_numbers(frame: pd.DataFrame, *, number: int | None = None) -> Table:
    """The numbers of :func:`first_rank_figure`: one row per bin, per retriever the queries in it and their share."""
    retrievers = list(dict.fromkeys(frame["retriever"]))
    bins = list(dict.fromkeys(frame["bin"]))
    out = pd.DataFrame({"first relevant rank": bins})
    for label in retrievers:
        rows = frame[frame["retriever"] == label].set_index("bin")
        out[label] = [f"{int(rows.loc[b, 'queries'])} ({rows.loc[b, 'share']:.0%})" for b in bins]
    return Table(out, _behind(number, "the first-rank figure", "headline queries per bin (share of them)"), fold=True)


def first_rank_figure(frame: pd.DataFrame, k: int, *, number: int | None = None) -> Png:
    """Bars: how many headline queries have their first relevant hit at each rank, and how many none in the top k."""
    retrievers = list(dict.fromkeys(frame["retriever"]))
    bins = list(dict.fromkeys(frame["bin"]))
    width = 0.8 / max(len(retrievers), 1)
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(8, 3.2)
        ax = fig.subplots()
        for i, label in enumerate(retrievers):
            rows = frame[frame["retriever"] == label].set_index("bin")
            xs = [j + (i - (len(retrievers) - 1) / 2) * width for j in range(len(bins))]
            ax.bar(xs, [int(rows.loc[b, "queries"]) for b in bins], width, label=label, color=f"C{i}")
        # "not found in top 10" on two lines, so it cannot run into the "10" beside it
        ticks = [b.replace(" in top ", "\nin top ") if not b.isdigit() else b for b in bins]
        ax.set_xticks(range(len(bins)), ticks, rotation=90 if len(bins) > 16 else 0)
        ax.set_xlabel("rank of the first relevant hit")
        ax.set_ylabel("headline queries")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"Where the first relevant hit ranks (k = {k})")
        _legend_above(fig, ax, len(retrievers))
        data = png_bytes(fig)
    return Png(data, _caption(number, f"headline queries by rank of the first relevant hit, by system (k = {k})"))


_CURVE_TITLES = {"R": "mean recall@k", "P": "mean precision@k", "nDCG": "mean nDCG@k"}


def k_sweep_numbers(sweep: dict, *, number: int | None = None) -> Table:
    """The numbers of :func:`k_sweep_figure`: one row per k, each retriever's mean R@k, P@k and nDCG@k (4 decimals)."""
    out = pd.DataFrame({"k": [str(k) for k in sweep["ks"]]})
    for row in sweep["retrievers"].values():
        for name in sweep["measures"]:
            out[f"{name}@k {row['label']}"] = [format(v, ".4f") for v in row[name]]
    return Table(out, _behind(number, "the k sweep", f"means over {sweep['queries']} queries of {sweep['collection']}"))


def k_sweep_figure(sweep: dict, *, number: int | None = None) -> Png:
    """Mean R@k, P@k and nDCG@k against k (one panel each), a line per retriever."""
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(9, 3.0)
        axes = fig.subplots(1, len(sweep["measures"]), sharey=True)
        for ax, name in zip(axes, sweep["measures"]):
            for i, row in enumerate(sweep["retrievers"].values()):
                ax.plot(sweep["ks"], row[name], marker="o", markersize=3, label=row["label"], color=f"C{i}")
            ax.set_title(_CURVE_TITLES.get(name, name))
            ax.set_xlabel("k")
            ax.set_ylim(0, 1.05)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0].set_ylabel("mean over queries")
        axes[0].legend(loc="lower right")
        data = png_bytes(fig)
    top = max(sweep["ks"])
    return Png(
        data, _caption(number, f"mean recall@k, precision@k and nDCG@k for k = 1..{top} on {sweep['collection']}")
    )


def _jitter(count: int) -> list[float]:
    """Fixed horizontal offsets for ``count`` strip points (golden-ratio spread in [-0.15, 0.15]; no randomness)."""
    return [((i * 0.6180339887) % 1.0 - 0.5) * 0.3 for i in range(count)]


def sweep_numbers(rows: list[dict], measures: list[str], *, number: int | None = None) -> Table:
    """The points of :func:`sweep_figure`: one row per seed, each shape x retriever x measure's mean (2 decimals)."""
    shapes = list(dict.fromkeys((r["n_entries"], r["queries"]) for r in rows))
    labels = list(dict.fromkeys(r["label"] for r in rows))
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    cell = {(r["seed"], r["n_entries"], r["queries"], r["label"]): r for r in rows}
    out = pd.DataFrame({"seed": [str(s) for s in seeds]})
    for n, q in shapes:
        for label in labels:
            for m in measures:
                out[f"{m} {label} {n}x{q}"] = [format(cell[(s, n, q, label)][m], ".2f") for s in seeds]
    return Table(
        out,
        _behind(number, "the seed-sweep figure", "each seed's means (column: measure, retriever, entries x queries)"),
    )


def sweep_figure(rows: list[dict], measures: list[str], names: dict[str, str], *, number: int | None = None) -> Png:
    """Box (5%, 25%, 50%, 75%, 95%) and strip (every seed) per collection shape and retriever, a panel per measure.

    ``names`` maps each measure to its panel title (``{"RR": "MRR"}``).
    Whiskers end at the 5% and 95% quantiles (numpy's linear
    interpolation, the same as :func:`agentmemory.evaluation.sweeps.summarize_sweep`).
    """
    shapes = list(dict.fromkeys((r["n_entries"], r["queries"]) for r in rows))
    labels = list(dict.fromkeys(r["label"] for r in rows))
    step = len(labels) + 1
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(9, 3.4)
        axes = fig.subplots(1, len(measures), sharey=True)
        for ax, m in zip(axes, measures):
            for s, (n, q) in enumerate(shapes):
                for i, label in enumerate(labels):
                    values = [r[m] for r in rows if (r["n_entries"], r["queries"], r["label"]) == (n, q, label)]
                    x = s * step + i
                    box = ax.boxplot(
                        [values], positions=[x], widths=0.6, whis=(5, 95), showfliers=False, patch_artist=True
                    )
                    for patch in box["boxes"]:
                        patch.set(facecolor="none", edgecolor=f"C{i}")
                    for key in ("whiskers", "caps", "medians"):
                        for line in box[key]:
                            line.set(color=f"C{i}")
                    ax.scatter(
                        [x + d for d in _jitter(len(values))],
                        values,
                        s=6,
                        color=f"C{i}",
                        alpha=0.6,
                        label=label if s == 0 else None,
                    )
            ax.set_xticks(
                [s * step + (len(labels) - 1) / 2 for s in range(len(shapes))],
                [f"{n} entries\n{q} queries" for n, q in shapes],
            )
            ax.set_title(names.get(m, m))
            ax.set_ylim(-0.05, 1.05)
        axes[0].set_ylabel("mean over the collection's queries")
        axes[0].legend(loc="lower left")
        data = png_bytes(fig)
    seeds = len({r["seed"] for r in rows})
    return Png(
        data,
        _caption(
            number,
            f"{', '.join(names.get(m, m) for m in measures)} across {seeds} seeds, by collection shape and retriever",
        ),
    )


def comparison_heatmap(matrix: PairedMatrix, *, number: int | None = None) -> Png | Markdown:
    """The paired matrix as a heat map: a row per pair of systems (first minus second), a column per measure, each
    cell coloured by the mean paired difference (blue: the first system higher; red: lower; the scale symmetric
    around 0) and labelled with it, ``*`` where significant; a pair not compared on a measure (no query where both
    have a value) is a blank cell marked ``–``.  :func:`agentmemory.report.stats.comparison_matrix` is
    the table of the same numbers.  With nothing to compare (one system, no headline query) it says so instead."""
    if not matrix.cells:
        return Markdown(f"{_caption(number, 'no paired comparison')}: fewer than two systems, or no headline query.")
    rows, measures = len(matrix.rows), list(matrix.measures)
    nan = float("nan")  # a pair not compared on a measure: a blank cell
    values = [[_difference(matrix, r, m, nan) for m in measures] for r in range(rows)]
    reach = max((abs(c.difference) for c in matrix.cells.values()), default=0.0) or 1.0
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(9, max(2.4, 1.3 + 0.32 * rows))  # room for the colour bar's label with one pair too
        ax = fig.subplots()
        image = ax.imshow(values, cmap="RdBu", vmin=-reach, vmax=reach, aspect="auto")
        for r in range(rows):
            for c, m in enumerate(measures):
                cell = matrix.cells.get((r, m))
                if cell is None:
                    ax.text(c, r, "–", ha="center", va="center", fontsize=8, color="grey")
                    continue
                shade = abs(cell.difference) / reach > 0.6
                text = signed(cell.difference) + ("*" if cell.significant else "")
                ax.text(c, r, text, ha="center", va="center", fontsize=8, color="white" if shade else "black")
        ax.set_xticks(
            range(len(measures)), [m + (" (lower is better)" if lower_is_better(m) else "") for m in measures]
        )
        ax.set_yticks(range(rows), [matrix.row_label(r) for r in range(rows)])
        ax.xaxis.tick_top()
        ax.tick_params(length=0, labelsize=8)
        bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
        bar.set_label("first − second")
        data = png_bytes(fig)
    return Png(
        data,
        _caption(
            number,
            f"mean paired difference of each pair of systems on each measure over {matrix.queries} headline queries "
            f"(first minus second; * significant at {matrix.alpha:g})",
        ),
    )


def _difference(matrix: PairedMatrix, row: int, measure: str, missing: float) -> float:
    """The mean paired difference of a matrix cell, ``missing`` where the pair was not compared on ``measure``."""
    cell = matrix.cells.get((row, measure))
    return missing if cell is None else cell.difference
