"""Tables of an evaluation as pandas DataFrames: what was evaluated, the metrics, each query.

Frames (``*_frame``) hold the numbers as computed; the display functions
return :class:`~agentmemory.report.display.Table` objects whose cells are
formatted text, so what a reader sees (and what nbval compares) does not
depend on pandas' display options.  The seed's columns are formatted exactly
as ``agentmemory eval`` prints them (:func:`agentmemory.analysis.text_tables.seed_rows`,
``format(value, ".2f")``); the other measures get 4 decimals, as
``agentmemory score`` prints them.
"""

from __future__ import annotations

import pandas as pd

from agentmemory.analysis.text_tables import SEED_COLUMNS, TIMING_COLUMNS, seed_measures, seed_rows, timing_rows
from agentmemory.evaluation.runner import Evaluation, QueryResult, RetrieverResult
from agentmemory.evaluation.system_runs import SYSTEM_TIMING_COLUMNS, system_timing_cells
from agentmemory.report.display import Markdown, Table, params_text, short

__all__ = [
    "appendix",
    "input_files_frame",
    "input_files_table",
    "metric_frame",
    "metric_table",
    "other_measures",
    "overview",
    "per_query_frame",
    "per_query_table",
    "relevance_line",
    "system_line",
    "timings",
]


def other_measures(evaluation: Evaluation) -> list[str]:
    """Measures shown beside the seed's columns: all but ``P@k``, ``R@k`` and ``RR`` (which those columns are)."""
    same = set(seed_measures(evaluation.k))
    return [str(m) for m in evaluation.measures if str(m) not in same]


def overview(evaluation: Evaluation, source: str) -> Markdown:
    """Section 1: the collection, its size, k, seed, the systems with their parameters, and how they are judged."""
    c = evaluation.collection
    judged = c.judged_queries
    relevant = sum(len(c.relevant(q.id)) for q in judged)
    lines = [
        f"- **Collection:** `{c.name}` ({source})",
        f"- **Size:** {len(c.entries)} entries, {len(c.queries)} queries of which {len(judged)} judged, "
        f"{relevant} relevant judgments",
        f"- **Cutoff:** k = {evaluation.k}",
        f"- **Seed:** {evaluation.seed} (it names the run's event ids and timestamps and seeds the bootstrap and "
        "permutation tests; no ranking depends on it)",
    ]
    return Markdown("\n".join(lines + measure_system_lines(evaluation)))


def relevance_line(evaluation: Evaluation) -> str:
    """How hits are judged (``direct`` or ``provenance``), in one bullet."""
    if evaluation.relevance == "provenance":
        text = (
            "provenance: a hit counts through the judged sources its `derived_from` chain reaches, each source "
            "credited once (evidence-level numbers; no trec_eval equivalent)"
        )
        if evaluation.unscored:
            text += f"; not computed, having no provenance definition: {', '.join(evaluation.unscored)}"
    else:
        text = "direct: a hit counts when it is judged relevant (trec_eval's definitions)"
    return f"- **Relevance:** {text}"


def system_line(result: RetrieverResult) -> str:
    """One system as a bullet: label, key, parameters; a run file's name, format, queries and depth."""
    if result.kind == "run":
        p = result.params
        text = (
            f"  - {result.label}: run file `{p['run']}` ({p['format']}, {p['queries']} queries, up to {p['depth']} "
            "hits each; it holds no scores below that depth)"
        )
        if "memories" in p:
            text += f", with {p['memories_entries']} memories of its own (`{p['memories']}`)"
        if result.skipped_note is not None:
            text += f"; {result.skipped_note} (questions the loader left out)"
        if result.dropped:
            text += f"; {len(result.dropped)} lines dropped (listed in the appendix)"
        return text
    return f"  - {result.label} (`{result.name}`): {params_text(result.params)}"


def measure_system_lines(evaluation: Evaluation) -> list[str]:
    """Markdown bullets: the measures, how hits are judged, each system with its parameters."""
    lines = [f"- **Measures:** {', '.join(str(m) for m in evaluation.measures)}", relevance_line(evaluation)]
    lines.append("- **Systems:**")
    lines += [system_line(r) for r in evaluation.results]
    return lines


def appendix(evaluation: Evaluation) -> Markdown:
    """The inputs (each file's sha256, the collection's digest; each run file's), lines a lenient run dropped,
    and the event log in numbers (events by type, first and last timestamp)."""
    c = evaluation.collection
    lines = [f"- **Collection files** (sha256), digest `{c.digest}`:"]
    lines += [f"  - `{name}` `{sha}`" for name, sha in c.files.items()]
    for r in evaluation.results:
        if r.kind == "run":
            p = r.params
            lines.append(f"- **Run {r.label}:** `{p['run']}` `{p['sha256']}`")
            if "memories" in p:
                lines.append(f"  - memories `{p['memories']}` `{p['memories_sha256']}`")
            lines += [f"  - dropped line {line}: {why}" for line, why in r.dropped]
    events = evaluation.events
    if events:
        counts: dict[str, int] = {}
        for event in events:
            counts[event.type] = counts.get(event.type, 0) + 1
        kinds = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        lines.append(
            f"- **Event log:** {len(events)} events ({kinds}), from {events[0].timestamp.isoformat()} to "
            f"{events[-1].timestamp.isoformat()}; ids and timestamps derive from the collection digest and the seed"
        )
    else:
        lines.append("- **Event log:** empty (no retriever ran: run files only)")
    return Markdown("\n".join(lines))


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
    """Section 2: the seed's table (2 decimals, as ``agentmemory eval`` prints it) with the other measures (4 decimals),
    folded in the HTML report (the comparison table already shows these means, with their intervals)."""
    others = other_measures(evaluation)
    text_rows = seed_rows(evaluation)
    for row, result in zip(text_rows, evaluation.results):
        row.extend("n/a" if result.means[m] is None else format(result.means[m], ".4f") for m in others)
    frame = pd.DataFrame(text_rows, columns=[*SEED_COLUMNS, *others])
    c = evaluation.collection
    (first, measure), *rest = zip(SEED_COLUMNS[1:], seed_measures(evaluation.k))
    headline = len(c.headline_queries)
    left_out = f" ({', '.join(c.headline_excludes)} left out)" if c.headline_excludes else ""
    caption = (
        f"k = {evaluation.k}, seed = {evaluation.seed}; means over {headline} headline "
        f"{'query' if headline == 1 else 'queries'}{left_out}, {len(c.entries)} entries. {first} is the mean of "
        f"{measure}, " + ", ".join(f"{column} of {m}" for column, m in rest) + "."
    )
    return Table(frame, caption, fold=True)


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


def timings(evaluation: Evaluation) -> Markdown | Table:
    """Each retriever's search latency (p50, p95 in ms), index build time and size, when the run measured them;
    each memory system's search latency, turns ingested, and its replay's total and per-conversation wall time.

    Wall-clock figures of one machine and run: shown here, never written into
    ``eval-results.json``.  Without ``timings=True`` it says how to get them.
    """
    replays = {s.spec.key: s.replay for s in evaluation.systems} if evaluation.options.timings else {}
    if all(r.timings is None for r in evaluation.results) and not replays:
        return Markdown(
            "Not measured in this run (`timings = False`): wall-clock figures differ from run to run, so the "
            "committed report leaves them out. Pass `-p timings True` (or `agentmemory eval --timings`)."
        )
    rows = timing_rows(evaluation)
    extra = list(SYSTEM_TIMING_COLUMNS[:4])
    for row, result in zip(rows, evaluation.results):
        replayed = replays.get(result.name)
        if replayed is None:
            row += ["-"] * len(extra)
            continue
        row += system_timing_cells(replayed.timings)[: len(extra)]
    columns = [*TIMING_COLUMNS, *(f"replay {c}" if c.startswith("total") else c for c in extra)]
    n = len(evaluation.results[0].per_query)
    return Table(
        pd.DataFrame(rows, columns=columns),
        f"Search latency over the {n} judged queries, index build and memory systems' replays, wall clock on this "
        "machine (not in the artifact)",
    )
