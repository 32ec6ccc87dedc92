"""Memory systems in a report: attribution coverage, Judged@k, the sensitivity table, unattributed examples.

Reads what :func:`agentmemory.evaluate` keeps of each memory system
(``Evaluation.systems``: :class:`~agentmemory.evaluation.system_runs.SystemRun`,
its :class:`~agentmemory.systems.attribution.AttributionReport`), so a notebook
cell only calls one function here.  The figures are defined in
:mod:`agentmemory.systems.attribution`:

* coverage = attributed returned memories / returned memories, over the
  headline queries (each query's memories counted; queries that returned
  nothing counted apart);
* Judged@k = mean over the headline queries of the share of the top k
  memories attributed to an entry judged for the query (any grade); where
  only relevant entries are judged it equals P@k under provenance, and the
  coverage table leaves it out and says so
  (:func:`~agentmemory.evaluation.system_runs.judged_at_k_note`);
* the sensitivity table: R@k and nDCG@k (provenance) re-attributed at three
  thresholds, so a reader sees how much a number rests on attribution.

A system whose coverage is below :data:`LOW_COVERAGE` is named in
:func:`systems_note`: most of what it returned counts as not relevant only
because no entry could be found for it.  Tie analysis beyond the returned
memories is not available for systems (they return no scores for what they
did not return); the note says so.

A system scored from its recorded output (the run and memories file
``agentmemory eval --system ... --runs-dir`` writes, read back as
``runs``/``memories``) has the same figures: pass the names of such runs
as ``recorded`` to :func:`attribution_reports` (the notebooks' setups
find them: :attr:`agentmemory.report.params.CollectionSetup.recorded`), and
the result as ``reports`` to the functions here.  :func:`systems_section`
is the notebooks' one call.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from agentmemory.evaluation.runner import Evaluation
from agentmemory.evaluation.system_runs import judged_at_k_note, recorded_attribution
from agentmemory.report.display import Markdown, Table, plural
from agentmemory.systems.attribution import AttributionReport

__all__ = [
    "LOW_COVERAGE",
    "NONE_RETURNED",
    "attribution_reports",
    "coverage_frame",
    "coverage_table",
    "sensitivity_frame",
    "sensitivity_table",
    "systems_markdown",
    "systems_note",
    "systems_section",
    "unattributed_frame",
    "unattributed_table",
]

Reports = Sequence[tuple[str, AttributionReport]]
"""``(label, report)`` per memory system, in the evaluation's order (:func:`attribution_reports`)."""

LOW_COVERAGE = 0.8
"""Below this attribution coverage a system is named as resting on attribution in :func:`systems_note`."""


def _k_columns(k: int) -> list[str]:
    return [
        "system",
        "attribution",
        "returned",
        "attributed",
        "coverage",
        "credited to several entries",
        "credits per memory",
        "most credits",
        f"Judged@{k}",
        "queries returning nothing",
        "failed queries",
        "unattributed (distinct)",
    ]


def attribution_reports(
    evaluation: Evaluation, recorded: Sequence[str] = ()
) -> tuple[tuple[str, AttributionReport], ...]:
    """``(label, report)`` of each memory system replayed in ``evaluation``, then of each run named in ``recorded``.

    A recorded run's report is :func:`agentmemory.evaluation.system_runs.recorded_attribution`
    with the evaluation's ``attribution`` option (the method the files were made with).
    """
    out = [(run.spec.label, run.attributed.report) for run in evaluation.systems]
    runs = {run.name: run for run in evaluation.runs}
    for name in recorded:
        out.append(
            (
                name,
                recorded_attribution(runs[name], evaluation.collection, evaluation.options.attribution, k=evaluation.k),
            )
        )
    return tuple(out)


def _given(evaluation: Evaluation, reports: Reports | None) -> Reports:
    return attribution_reports(evaluation) if reports is None else reports


def coverage_frame(evaluation: Evaluation, reports: Reports | None = None) -> pd.DataFrame:
    """One row per memory system: attribution method, memories returned and attributed, coverage, its ambiguity
    (memories credited to more than one entry, credits per attributed memory, the most credits one memory got),
    Judged@k (unrounded).

    ``reports`` defaults to :func:`attribution_reports` of the replayed systems (the same for every function here).
    """
    rows = []
    for label, r in _given(evaluation, reports):
        rows.append(
            [
                label,
                r.method,
                r.returned,
                r.attributed,
                r.coverage,
                r.ambiguous,
                r.credits_per_memory,
                r.most_credits,
                r.judged_at_k,
                len(r.empty_queries),
                len(r.failures),
                r.unattributed,
            ]
        )
    return pd.DataFrame(rows, columns=_k_columns(evaluation.k))


def sensitivity_frame(evaluation: Evaluation, reports: Reports | None = None) -> pd.DataFrame:
    """One row per system and re-attribution: its method with the threshold, R@k and nDCG@k (provenance, unrounded)."""
    k = evaluation.k
    rows = [
        [system, label, recall, ndcg]
        for system, r in _given(evaluation, reports)
        for label, recall, ndcg in r.sensitivity
    ]
    return pd.DataFrame(rows, columns=["system", "attribution", f"R@{k}", f"nDCG@{k}"])


def unattributed_frame(evaluation: Evaluation, reports: Reports | None = None) -> pd.DataFrame:
    """One row per listed unattributed memory: the system, how many it had in all, the text (shortened)."""
    rows = [
        [system, r.unattributed, text] for system, r in _given(evaluation, reports) for text in r.unattributed_texts
    ]
    return pd.DataFrame(rows, columns=["system", "unattributed (distinct)", "example"])


def _rounded(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    shown = frame.copy()
    for column in columns:
        shown[column] = [format(float(v), ".3f") for v in frame[column]]
    return shown


def _judged(evaluation: Evaluation) -> tuple[bool, str | None]:
    """Whether Judged@k is shown, and the note saying what it equals (:func:`~agentmemory.evaluation.system_runs.judged_at_k_note`)."""
    return judged_at_k_note(evaluation.collection, evaluation.k, evaluation.relevance)


NONE_RETURNED = "none returned"
"""What a ratio over the memories a system returned shows when it returned none (never ``0.000``)."""


def coverage_table(evaluation: Evaluation, reports: Reports | None = None) -> Table:
    """:func:`coverage_frame` with 3 decimals and a caption defining coverage and Judged@k.

    Where Judged@k equals P@k (only relevant entries judged, under provenance:
    :func:`~agentmemory.evaluation.system_runs.judged_at_k_note`) its column is left out and the caption says
    what it equals; where it only counts memories attributed to a relevant entry the caption says so.
    """
    k = evaluation.k
    shown, note = _judged(evaluation)
    raw = coverage_frame(evaluation, reports)
    frame = _rounded(raw, ["coverage", "credits per memory", f"Judged@{k}"])
    nothing = raw["returned"] == 0
    frame.loc[nothing, ["coverage", "credits per memory", f"Judged@{k}"]] = NONE_RETURNED
    caption = (
        "Memory systems: coverage = attributed / returned memories; credited to several entries, credits per "
        "memory and most credits = how ambiguous the attribution is (memories given to more than one entry, the "
        "mean number of entries an attributed memory is credited to, the largest)"
    )
    if shown:
        caption += f"; Judged@{k} = share of the top {k} attributed to a judged entry"
    else:
        frame = frame.drop(columns=[f"Judged@{k}"])
    caption += " (headline queries)"
    if note:
        caption += ". " + note.rstrip(".")
    return Table(frame, caption)


def sensitivity_table(evaluation: Evaluation, reports: Reports | None = None) -> Table:
    """:func:`sensitivity_frame` with 3 decimals: how each system's R@k and nDCG@k move with the attribution."""
    k = evaluation.k
    frame = _rounded(sensitivity_frame(evaluation, reports), [f"R@{k}", f"nDCG@{k}"])
    return Table(frame, f"Sensitivity to attribution: R@{k} and nDCG@{k} (provenance) re-attributed")


def unattributed_table(evaluation: Evaluation, reports: Reports | None = None) -> Table:
    """:func:`unattributed_frame` with a caption (unattributed memories count as not relevant)."""
    return Table(
        unattributed_frame(evaluation, reports), "Unattributed memories (not relevant), the first few of each system"
    )


def systems_note(evaluation: Evaluation, reports: Reports | None = None) -> Markdown:
    """What a reader must know of the systems' numbers, in words: attribution, low coverage, failures, ties."""
    given = _given(evaluation, reports)
    if not given:
        return Markdown("No memory system in this evaluation.")
    lines = []
    for label, r in given:
        line = (
            f"- **{label}**: attributed by `{r.method}`; {r.attributed} of "
            f"{plural(r.returned, 'returned memory', 'returned memories')} attributed (coverage {r.coverage:.3f})"
        )
        if r.returned and r.coverage < LOW_COVERAGE:
            line += f", below {LOW_COVERAGE:g}: its numbers rest on attribution (see the sensitivity table)"
        if r.empty_queries:
            line += f"; {plural(len(r.empty_queries), 'query', 'queries')} returned nothing"
        if r.failures:
            line += f"; {plural(len(r.failures), 'query', 'queries')} recorded as empty after a failure"
        lines.append(line + ".")
    lines.append(
        "- Tie analysis beyond the returned memories is not available for systems; an unattributed memory is not "
        "relevant."
    )
    return Markdown("\n".join(lines))


def _markdown_table(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def systems_markdown(evaluation: Evaluation, reports: Reports | None = None) -> Markdown:
    """Everything above as one Markdown text: the note, the coverage and sensitivity tables, unattributed examples."""
    given = _given(evaluation, reports)
    parts = [systems_note(evaluation, given).text]
    if given:
        for table in (
            coverage_table(evaluation, given),
            sensitivity_table(evaluation, given),
            unattributed_table(evaluation, given),
        ):
            if len(table.frame):
                parts += [f"**{table.caption}**", _markdown_table(table.frame)]
    return Markdown("\n\n".join(parts))


def systems_section(evaluation: Evaluation, recorded: Sequence[str] = ()) -> list[Markdown | Table]:
    """The notebooks' memory-system section: a heading, :func:`systems_note`, the coverage, sensitivity and
    unattributed tables (the last only when a memory went unattributed); nothing when there is no memory system
    (replayed or ``recorded``), so a report without one shows nothing of it."""
    reports = attribution_reports(evaluation, recorded)
    if not reports:
        return []
    k = evaluation.k
    judged = f"the share of the top {k} attributed to a judged entry (Judged@{k}), " if _judged(evaluation)[0] else ""
    shown: list[Markdown | Table] = [
        Markdown(
            f"## Memory systems: attribution\n\nWhat each memory system returned, attributed to the collection's "
            f"entries: the share attributed (coverage), {judged}and R@{k} and nDCG@{k} re-attributed at three "
            "thresholds (how much a number rests on attribution)."
        ),
        systems_note(evaluation, reports),
        coverage_table(evaluation, reports),
        sensitivity_table(evaluation, reports),
    ]
    unattributed = unattributed_table(evaluation, reports)
    if len(unattributed.frame):
        shown.append(unattributed)
    return shown
