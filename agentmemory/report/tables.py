"""Tables of an evaluation as pandas DataFrames: what was evaluated, the metrics, each query.

Frames (``*_frame``) hold the numbers as computed; the display functions
return :class:`~agentmemory.report.display.Table` objects whose cells are
formatted text, so what a reader sees (and what nbval compares) does not
depend on pandas' display options.  The seed's columns are formatted exactly
as ``agentmemory eval`` prints them (:func:`agentmemory.tables.seed_rows`,
``format(value, ".2f")``); the other measures get 4 decimals, as
``agentmemory score`` prints them.
"""

from __future__ import annotations

import pandas as pd

from ..evaluate import Evaluation, QueryResult
from ..tables import SEED_COLUMNS, seed_measures, seed_rows
from .display import Markdown, Table, short

__all__ = [
    "input_files_frame",
    "input_files_table",
    "metric_frame",
    "metric_table",
    "other_measures",
    "overview",
    "per_query_frame",
    "per_query_table",
]


def other_measures(evaluation: Evaluation) -> list[str]:
    """Measures shown beside the seed's columns: all but ``P@k``, ``R@k`` and ``RR`` (which those columns are)."""
    same = set(seed_measures(evaluation.k))
    return [str(m) for m in evaluation.measures if str(m) not in same]


def overview(evaluation: Evaluation, source: str) -> Markdown:
    """Section 1: the collection, its size, k, seed, retrievers with parameters, and the input digest."""
    c = evaluation.collection
    judged = c.judged_queries
    relevant = sum(len(c.relevant(q.id)) for q in judged)
    lines = [
        f"- **Collection:** `{c.name}` ({source})",
        f"- **Size:** {len(c.entries)} entries, {len(c.queries)} queries of which {len(judged)} judged, "
        f"{relevant} relevant judgments",
        f"- **Cutoff:** k = {evaluation.k}",
        f"- **Seed:** {evaluation.seed} (it names the run's event ids and timestamps and seeds the bootstrap and permutation tests; no ranking depends on it)",
    ]
    return Markdown("\n".join(lines + measure_retriever_file_lines(evaluation)))


def measure_retriever_file_lines(evaluation: Evaluation) -> list[str]:
    """Markdown bullets: the measures, each retriever with its parameters, each input file's sha256."""
    c = evaluation.collection
    lines = [f"- **Measures:** {', '.join(str(m) for m in evaluation.measures)}", "- **Retrievers:**"]
    for result in evaluation.results:
        params = ", ".join(f"{key} = {value}" for key, value in result.params.items())
        lines.append(f"  - {result.label} (`{result.name}`): {params}")
    lines.append(f"- **Input files** (sha256), digest `{c.digest}`:")
    lines += [f"  - `{name}` `{sha}`" for name, sha in c.files.items()]
    return lines


def input_files_frame(evaluation: Evaluation) -> pd.DataFrame:
    """One row per input file: its path inside the collection folder and its sha256."""
    files = evaluation.collection.files
    return pd.DataFrame({"file": list(files), "sha256": list(files.values())})


def input_files_table(evaluation: Evaluation) -> Table:
    """:func:`input_files_frame` for display."""
    return Table(input_files_frame(evaluation), "Input files (paths inside the collection folder) and their sha256")


def metric_frame(evaluation: Evaluation) -> pd.DataFrame:
    """One row per retriever: the seed's columns, then the means of the other measures (unrounded)."""
    others = other_measures(evaluation)
    rows = []
    for result in evaluation.results:
        row = result.aggregate_row()
        rows.append([row["retriever"], *(row[c] for c in SEED_COLUMNS[1:]), *(row[m] for m in others)])
    return pd.DataFrame(rows, columns=[*SEED_COLUMNS, *others])


def metric_table(evaluation: Evaluation) -> Table:
    """Section 2: the seed's table (2 decimals, as ``agentmemory eval`` prints it) with the other measures (4 decimals)."""
    others = other_measures(evaluation)
    text_rows = seed_rows(evaluation)
    for row, result in zip(text_rows, evaluation.results):
        row.extend(format(result.means[m], ".4f") for m in others)
    frame = pd.DataFrame(text_rows, columns=[*SEED_COLUMNS, *others])
    c = evaluation.collection
    (first, measure), *rest = zip(SEED_COLUMNS[1:], seed_measures(evaluation.k))
    caption = (
        f"k = {evaluation.k}, seed = {evaluation.seed}; {len(c.judged_queries)} judged queries, "
        f"{len(c.entries)} entries. {first} is the mean of {measure}, "
        + ", ".join(f"{column} of {m}" for column, m in rest)
        + "."
    )
    return Table(frame, caption)


def _labelled(ids: tuple[str, ...], evaluation: Evaluation, width: int) -> str:
    c = evaluation.collection
    return "; ".join(f"{i} ({short(c.entry(i).text, width)})" for i in ids)


def _row(q: QueryResult, k: int) -> dict:
    recall, precision, rr = seed_measures(k)
    return {
        "query": q.query_id,
        "text": q.text,
        "relevant": len(q.relevant),
        "found": q.found,
        "missed": q.missed,
        precision: q.metrics[precision],
        recall: q.metrics[recall],
        "first relevant rank": q.first_relevant_rank,
        rr: q.metrics[rr],
    }


def per_query_frame(evaluation: Evaluation, retriever: str) -> pd.DataFrame:
    """One row per judged query for ``retriever`` (a registry name), in file order.

    Columns: query, text, relevant (how many entries are judged relevant),
    found and missed (tuples of entry ids), ``P@k``, ``R@k``, first relevant
    rank (nullable ``Int64``, ``<NA>`` when no relevant entry is in the top k) and RR.
    """
    result = evaluation.result(retriever)
    return pd.DataFrame([_row(q, evaluation.k) for q in result.per_query]).astype({"first relevant rank": "Int64"})


def per_query_table(evaluation: Evaluation, retriever: str, *, width: int = 40) -> Table:
    """Section 3: :func:`per_query_frame` formatted, each found or missed id followed by a short text."""
    k = evaluation.k
    recall, precision, rr = seed_measures(k)
    result = evaluation.result(retriever)
    rows = []
    for q in result.per_query:
        rank = q.first_relevant_rank
        rows.append(
            {
                "query": q.query_id,
                "text": q.text,
                "#relevant": str(len(q.relevant)),
                "found": _labelled(q.found, evaluation, width) or "-",
                "missed": _labelled(q.missed, evaluation, width) or "-",
                precision: format(q.metrics[precision], ".2f"),
                recall: format(q.metrics[recall], ".2f"),
                "first relevant rank": "none in top k" if rank is None else str(rank),
                rr: format(q.metrics[rr], ".2f"),
            }
        )
    return Table(pd.DataFrame(rows), f"{result.label}: each judged query at k = {k}")
