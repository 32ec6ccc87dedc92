"""Plain-text tables for the command line and reports (no pandas needed).

:func:`seed_table` prints the seed write-up's table: columns ``Retriever``,
``mean_recall@k``, ``mean_precision@k``, ``MRR``, values rounded to 2
decimals with Python's ``format(value, ".2f")`` (round-half-even on the
binary value), as a Markdown table.

The rows of the interval tables (:func:`interval_rows`, :func:`group_rows`,
cells by :func:`interval_cell`) are the ones the reports show
(:mod:`agentmemory.report.stats` puts the same rows in DataFrames), so
``agentmemory eval`` and a report never format a mean differently.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentmemory.analysis.paired_matrix import PairedMatrix, matrix_caption, matrix_summary, paired_matrix
from agentmemory.analysis.statistics import (
    Interval,
    Statistics,
    bootstrap_ci,
)
from agentmemory.evaluation.runner import Evaluation, seed_measures
from agentmemory.metrics import parse_measure
from agentmemory.metrics.scoring import default_measures

__all__ = [
    "SEED_COLUMNS",
    "collection_notes",
    "column_name",
    "cutoff_note",
    "full_report",
    "group_rows",
    "group_table",
    "interval_cell",
    "interval_rows",
    "interval_table",
    "lower_is_better",
    "markdown_table",
    "matrix_table",
    "may_be_undefined",
    "sample_cell",
    "seed_measures",
    "seed_rows",
    "seed_table",
    "system_notes",
    "timing_rows",
    "timings_table",
    "unjudged_note",
]

SEED_COLUMNS = ("Retriever", "mean_recall@k", "mean_precision@k", "MRR")


def lower_is_better(measure: str) -> bool:
    """Whether the measure written ``measure`` (``"stale@10"``) declares that lower values are better
    (``MeasureDef.direction``)."""
    return parse_measure(measure).definition.direction == "lower"


def may_be_undefined(measure: str) -> bool:
    """Whether the measure written ``measure`` (``"tokens@first"``) may have no value on a query
    (``MeasureDef.undefined_when``): its cells then say over how many queries the mean is."""
    return parse_measure(measure).definition.undefined_when is not None


def column_name(measure: str) -> str:
    """A table column's header for ``measure``: its text, then ``(lower is better)`` when it is."""
    return f"{measure} (lower is better)" if lower_is_better(measure) else measure


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table with ``|`` separators and a ``|---|`` rule."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def seed_rows(evaluation: Evaluation) -> list[list[str]]:
    """One row per retriever: label and the three seed metrics to 2 decimals."""
    rows = []
    for result in evaluation.results:
        row = result.aggregate_row()
        rows.append([row["retriever"]] + ["-" if row[c] is None else format(row[c], ".2f") for c in SEED_COLUMNS[1:]])
    return rows


def unjudged_note(evaluation: Evaluation) -> str:
    """One line saying which queries had no judgments (left out of every mean)."""
    ids = evaluation.unjudged_query_ids
    if not ids:
        return "Queries without judgments: none."
    return f"Queries without judgments, left out of the means ({len(ids)}): {', '.join(ids)}."


def cutoff_note(evaluation: Evaluation) -> str | None:
    """A line when ``k`` is larger than every scope (a LoCoMo conversation, a LongMemEval haystack, or the whole
    collection when it has no scopes), else ``None``.

    Not an error (P@100 over scopes of 17 entries is defined), but no ranking
    can fill the top ``k``: P@k is at most the largest scope's size over ``k``,
    and the top ``k`` is the whole ranking.
    """
    sizes: dict[str | None, int] = {}
    for entry in evaluation.collection.entries:
        sizes[entry.scope] = sizes.get(entry.scope, 0) + 1
    largest = max(sizes.values(), default=0)
    k = evaluation.k
    if k <= largest:
        return None
    where = "every scope (the largest holds" if len(sizes) > 1 else "the collection (it holds"
    return (
        f"k = {k} is larger than {where} {largest} {'entry' if largest == 1 else 'entries'}): no ranking can fill "
        f"the top {k}, so P@{k} is at most {largest}/{k} = {largest / k:.2f} and every measure at {k} sees whole "
        "rankings."
    )


def seed_table(evaluation: Evaluation) -> str:
    """The seed's metric table, a line naming what it was computed on, and the unjudged note."""
    c = evaluation.collection
    head = (
        f"Collection {c.name}: {len(c.entries)} entries, {len(c.judged_queries)} judged queries; "
        f"k = {evaluation.k}, seed = {evaluation.seed}"
    )
    if c.headline_excludes:
        n = len(c.headline_queries)
        head += f"\nHeadline means over {n} queries; shown by group only: {', '.join(c.headline_excludes)}"
    return "\n".join([head, "", markdown_table(SEED_COLUMNS, seed_rows(evaluation)), "", unjudged_note(evaluation)])


def interval_cell(interval: Interval | None, decimals: int = 2, *, of: int | None = None) -> str:
    """One mean with its interval, to ``decimals`` (2) decimals, as the command line and the reports show it.

    ``"0.81 [0.58, 1.00]"``; ``"1.00 [1.00, 1.00] (all equal)"`` when every
    query has the same value (a degenerate interval says nothing about
    uncertainty); ``"0.50 (one query)"`` (no interval) for a single query;
    ``"n/a"`` for none (``None``: no query to average).

    ``of`` is given for a measure that may have no value on a query
    (:func:`may_be_undefined`): the number of queries counted, so the cell
    says over how many of them the mean is, ``"41.7 [26.3, 59.0] (5 of 6)"``,
    and ``"n/a (0 of 6)"`` when none has a value.
    """
    share = "" if of is None else f" ({0 if interval is None else interval.n} of {of})"
    if interval is None:
        return "n/a" + share
    d = decimals
    if interval.n == 1:
        return f"{interval.mean:.{d}f}" + (share or " (one query)")
    text = f"{interval.mean:.{d}f} [{interval.low:.{d}f}, {interval.high:.{d}f}]"
    return (text + " (all equal)" if interval.degenerate else text) + share


def sample_cell(values: Sequence[float | None], statistics: Statistics, measure: str) -> str:
    """:func:`interval_cell` of the mean of ``values`` (one per query, ``None`` where ``measure`` has no value),
    with :func:`~agentmemory.analysis.statistics.bootstrap_ci` as ``statistics`` computed its intervals;
    ``"n/a"`` over no query."""
    present = [v for v in values if v is not None]
    interval = (
        bootstrap_ci(
            present, seed=statistics.seed, confidence=statistics.confidence, n_resamples=statistics.n_resamples
        )
        if present
        else None
    )
    if not values:
        return "n/a"
    return interval_cell(interval, of=_of(measure, len(values), interval))


def interval_rows(
    evaluation: Evaluation, statistics: Statistics, measures: Sequence[str] | None = None
) -> list[list[str]]:
    """One row per retriever: its label, then :func:`interval_cell` of each headline mean.

    ``measures`` defaults to ``statistics.measures``; one it lacks shows ``n/a``.
    """
    chosen = statistics.measures if measures is None else measures
    return [
        [r.label, *(_cell(statistics.intervals[r.name].get(m), m, statistics.queries) for m in chosen)]
        for r in evaluation.results
    ]


def _cell(interval: Interval | None, measure: str, queries: int) -> str:
    return interval_cell(interval, of=_of(measure, queries, interval))


def _of(measure: str, queries: int, interval: Interval | None = None) -> int | None:
    """``queries`` for a measure that may have no value on a query (its cells count them), or whose ``interval``
    is over fewer of them (a retrieval measure beside answer files, which add questions left out of retrieval
    scoring), else ``None``."""
    if may_be_undefined(measure) or (interval is not None and interval.n < queries):
        return queries
    return None


def group_rows(
    evaluation: Evaluation,
    statistics: Statistics,
    measures: Sequence[str] | None = None,
    *,
    in_headline: bool | None = None,
) -> list[list[str]]:
    """One row per query group and retriever: group, its number of queries, label, then each :func:`interval_cell`.

    Groups sorted, retrievers in the evaluation's order; ``in_headline``
    True or False keeps only the groups in (or left out of) the headline
    means, ``None`` all of them.  ``measures`` as in :func:`interval_rows`.
    """
    chosen = statistics.measures if measures is None else measures
    return [
        [
            group.name,
            str(group.queries),
            r.label,
            *(_cell(group.intervals[r.name].get(m), m, group.queries) for m in chosen),
        ]
        for group in statistics.groups.values()
        if in_headline is None or group.in_headline == in_headline
        for r in evaluation.results
    ]


def interval_table(evaluation: Evaluation, statistics: Statistics) -> str:
    """The seed's three measures per retriever with their bootstrap intervals (:func:`interval_rows`).

    ``statistics`` is :func:`agentmemory.analysis.statistics.evaluation_statistics` of the evaluation.
    """
    names = seed_measures(evaluation.k)
    pct = round(statistics.confidence * 100)
    head = (
        f"{pct}% percentile-bootstrap intervals over {statistics.queries} queries "
        f"({statistics.n_resamples} resamples, seed {statistics.seed})"
    )
    if statistics.excluded_groups:
        head += "; left out of these means and shown by group: " + ", ".join(statistics.excluded_groups)
    return head + ":\n\n" + markdown_table(["System", *names], interval_rows(evaluation, statistics, names))


def group_table(evaluation: Evaluation, statistics: Statistics) -> str:
    """Per query group (:func:`group_rows`): number of queries, then each retriever's seed measures with
    intervals, then every measure asked for beyond the defaults (``--metrics``: LongMemEval's per question type)."""
    names = list(seed_measures(evaluation.k))
    defaults = {str(m) for m in default_measures(evaluation.k)}
    names += [m for m in statistics.measures if m not in defaults and m not in names]
    rows = group_rows(evaluation, statistics, names)
    return "By query group:\n\n" + markdown_table(["Group", "Queries", "System", *map(column_name, names)], rows)


TIMING_COLUMNS = ("System", "search p50 (ms)", "search p95 (ms)", "index build (s)", "entries", "index size")


def timing_rows(evaluation: Evaluation) -> list[list[str]]:
    """Per system: search latency p50 and p95 (ms), index build (s), entries and index size; ``-`` where not measured.

    A memory system's row gives its search calls' latency as its replay timed them, and the turns it ingested.
    """
    rows = []
    replays = {s.spec.key: s.replay.timings for s in evaluation.systems}
    for r in evaluation.results:
        t = r.timings
        replayed = replays.get(r.name)
        if replayed is not None and r.kind == "system":  # its search calls, timed by the replay
            p = replayed.percentile
            p50, p95 = 1000 * p(replayed.search, 50), 1000 * p(replayed.search, 95)
            rows.append([r.label, f"{p50:.3f}", f"{p95:.3f}", "-", f"{replayed.turns} turns", "a memory system"])
            continue
        if t is None:
            rows.append([r.label, "-", "-", "-", "-", "a run file" if r.kind == "run" else "-"])
            continue
        size = "-" if t.index_bytes is None else _size(t.index_bytes)
        p50, p95 = t.percentile(50) * 1e3, t.percentile(95) * 1e3
        rows.append([r.label, f"{p50:.3f}", f"{p95:.3f}", f"{t.index_seconds:.3f}", str(t.entries), size])
    return rows


def _size(n: int) -> str:
    """Bytes as kB below a megabyte, else MB (one decimal)."""
    return f"{n / 1e3:.1f} kB" if n < 1e6 else f"{n / 1e6:.1f} MB"


def timings_table(evaluation: Evaluation) -> str:
    """:func:`timing_rows` as the command line prints them (wall clock: never written into the artifact)."""
    return "Timings (wall clock on this machine; not in the artifact):\n\n" + markdown_table(
        TIMING_COLUMNS, timing_rows(evaluation)
    )


def system_notes(evaluation: Evaluation) -> list[str]:
    """What the systems could not show: unscored measures, a run's hits on skipped questions, run lines dropped,
    a k no scope fills, runs' limits."""
    lines = []
    if evaluation.unscored:
        lines.append(
            f"Not computed under relevance = provenance (no provenance definition): {', '.join(evaluation.unscored)}."
        )
    for r in evaluation.results:
        if r.skipped_note is not None:
            lines.append(f"{r.label}: {r.skipped_note} (questions the loader left out, listed above).")
        if r.dropped:
            lines.append(f"{r.label}: {len(r.dropped)} run line(s) dropped (--lenient-run):")
            lines += [f"  line {line}: {why}" for line, why in r.dropped]
    note = cutoff_note(evaluation)
    if note:
        lines.append(note)
    runs = [r.label for r in evaluation.results if r.kind == "run"]
    if runs:
        lines.append(
            f"{', '.join(runs)}: a run holds no scores below its depth, so ties past its last hit and why an entry "
            "was not retrieved cannot be shown for it."
        )
    return lines


def collection_notes(evaluation: Evaluation) -> list[str]:
    """How the loader built the collection (its settings), then every query it skipped, repaired or noted
    something about, one line each, with the reason."""
    c = evaluation.collection
    lines = []
    if c.settings:
        lines.append("Loaded with " + ", ".join(f"{key} = {value}" for key, value in c.settings.items()) + ".")
    if c.skipped:
        scope = "every retrieval number (their answers are scored)" if evaluation.answers else "every number"
        lines.append(f"Skipped queries ({len(c.skipped)}), left out of {scope}:")
        lines += [f"  {q}: {why}" for q, why in c.skipped]
    if c.repairs:
        lines.append(f"Repairs ({len(c.repairs)}):")
        lines += [f"  {q}: {what}" for q, what in c.repairs]
    if c.notes:
        lines.append(f"Notes ({len(c.notes)}), nothing changed:")
        lines += [f"  {q}: {note}" for q, note in c.notes]
    return lines


def matrix_table(matrix: PairedMatrix) -> str:
    """Every pair of systems (rows, first minus second) on every measure of the comparison table (columns), as a
    Markdown table under its caption: what the reports show as a table and a heat map."""
    lower = [m for m in matrix.measures if lower_is_better(m)]
    rows = [[matrix.row_label(row), *(matrix.text(row, m) for m in matrix.measures)] for row in range(len(matrix.rows))]
    header = ["Pair (first − second)", *(column_name(m) for m in matrix.measures)]
    return matrix_caption(matrix, lower) + ".\n\n" + markdown_table(header, rows)


def full_report(evaluation: Evaluation, statistics: Statistics) -> str:
    """What ``agentmemory eval`` prints after the comparison table: the seed table, groups, the paired
    comparisons (:func:`matrix_table` and its summary), notes."""
    ranked = any(m in evaluation.results[0].means for m in seed_measures(evaluation.k))
    parts = [seed_table(evaluation)] if ranked else []  # answer files alone: no ranking, no seed columns
    if statistics.groups:
        parts.append(group_table(evaluation, statistics))
    matrix = paired_matrix(statistics, {r.name: r.label for r in evaluation.results})
    if matrix.cells:
        parts.append(matrix_table(matrix) + "\n\n" + matrix_summary(matrix))
    notes = collection_notes(evaluation) + system_notes(evaluation)
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts)
