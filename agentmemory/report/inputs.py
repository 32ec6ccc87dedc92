"""What a collection report evaluated: the loaded collection, its scopes and groups, and what the loader left out.

Used by ``collection.ipynb`` (section 1).  Everything comes from the
:class:`~agentmemory.collection.Collection` the loader built: its
``skipped`` queries with their reasons and its ``repairs``, listed in full,
never summarised away.
"""

from __future__ import annotations

import pandas as pd

from agentmemory.evaluation.runner import Evaluation
from agentmemory.report.display import Markdown, Table, plural
from agentmemory.report.params import CollectionSetup
from agentmemory.report.results import cli_command
from agentmemory.report.tables import measure_system_lines

__all__ = [
    "collection_command",
    "collection_overview",
    "groups_table",
    "headline_note",
    "loader_tables",
    "notes_table",
    "repairs_table",
    "scopes_table",
    "skipped_table",
]


def collection_command(setup: CollectionSetup, evaluation: Evaluation) -> str:
    """The ``agentmemory eval`` command, run from the repository root, that writes the same artifact.

    ``--format`` is given when the notebook's was not ``auto``; ``--repair``
    when repair was on, and each of ``format_options`` as its own flag or
    ``--format-option``; ``--out`` is ``<output_dir>/eval-results.json``
    (``eval-results.json`` when no output folder was given).
    """
    out = "eval-results.json" if setup.output_dir is None else f"{setup.output_dir.as_posix()}/eval-results.json"
    options = {**setup.format_options, **({"repair": True} if setup.repair else {})}
    return cli_command(
        evaluation,
        setup.cli_path,
        format=setup.format_given,
        options=options,
        out=out,
        inputs=setup.inputs,
        table=setup.table,
    )


def collection_overview(evaluation: Evaluation, setup: CollectionSetup) -> Markdown:
    """Section 1: name, source, format, entries and scopes, queries evaluated / in the headline / skipped / repaired, run parameters, files."""
    c = evaluation.collection
    judged = c.judged_queries
    headline = c.headline_queries
    excluded = len(judged) - len(headline)
    scopes = {e.scope for e in c.entries}
    relevant = sum(len(c.relevant(q.id)) for q in judged)
    queries = (
        f"- **Queries:** {len(judged)} evaluated, {relevant} relevant judgments; {len(headline)} in the headline means"
    )
    if excluded:
        queries += f", {excluded} in groups shown separately ({', '.join(c.headline_excludes)})"
    queries += (
        f"; {plural(len(c.skipped), 'query', 'queries')} skipped by the loader and "
        f"{plural(len(c.repairs), 'repair', 'repairs')} (both listed below)"
    )
    if c.unjudged_query_ids:
        queries += f"; {len(c.unjudged_query_ids)} without judgments, not run"
    how = f"read as `{setup.format}`"
    if setup.repair:
        how += ", malformed evidence repaired on request (every change listed below)"
    elif setup.format == "locomo":
        how += ", strict: a question with malformed evidence is skipped, never guessed"
    elif setup.format == "longmemeval":
        how += ", strict: a question with a malformed haystack or date is skipped, never guessed"
    if c.settings:
        how += "; " + ", ".join(f"{key} = {value}" for key, value in c.settings.items())
    lines = [
        f"- **Collection:** `{c.name}` ({setup.source}), {how}",
        f"- **Memories:** {len(c.entries)} entries in "
        + (plural(len(scopes), "scope", "scopes") if scopes != {None} else "one unscoped store")
        + (" (a query searches only its own scope's entries)" if scopes != {None} else ""),
        queries,
        f"- **Cutoff:** k = {evaluation.k}; **seed:** {evaluation.seed} (event ids, timestamps, and the bootstrap "
        "and permutation resampling)",
    ]
    return Markdown("\n".join(lines + measure_system_lines(evaluation)))


def scopes_table(evaluation: Evaluation) -> Table:
    """One row per scope (LoCoMo: conversation) in order of first entry: entries, judged queries, time span."""
    c = evaluation.collection
    rows: dict[str | None, dict] = {}
    for e in c.entries:
        row = rows.setdefault(e.scope, {"entries": 0, "queries": 0, "stamps": []})
        row["entries"] += 1
        if e.created_at is not None:
            row["stamps"].append(e.created_at)
    for q in c.judged_queries:
        rows.setdefault(q.scope, {"entries": 0, "queries": 0, "stamps": []})["queries"] += 1
    frame = pd.DataFrame(
        [
            {
                "scope": "(none)" if scope is None else scope,
                "entries": str(row["entries"]),
                "judged queries": str(row["queries"]),
                "created": f"{min(row['stamps']).isoformat()} .. {max(row['stamps']).isoformat()}"
                if row["stamps"]
                else "unknown",
            }
            for scope, row in rows.items()
        ]
    )
    what = SCOPE_WORDS.get(evaluation.collection.format or "", "each question searches only its own scope")
    return Table(frame, f"Scopes ({what}): entries, judged queries and when the entries were created")


SCOPE_WORDS = {
    "locomo": "LoCoMo: one per conversation, which its questions search",
    "longmemeval": "LongMemEval: one per question, its haystack",
    "beam": "BEAM: one per chat, which its questions search",
}
"""What a scope is in each format's words (any other format: each question searches only its own scope)."""


def groups_table(evaluation: Evaluation) -> Table:
    """One row per query group (sorted): judged queries, relevant judgments, and whether it is in the headline means."""
    c = evaluation.collection
    groups: dict[str, list] = {}
    for q in c.judged_queries:
        groups.setdefault("(none)" if q.group is None else q.group, []).append(q)
    frame = pd.DataFrame(
        [
            {
                "group": group,
                "judged queries": str(len(queries)),
                "relevant judgments": str(sum(len(c.relevant(q.id)) for q in queries)),
                "in the headline means": "no, shown separately" if group in c.headline_excludes else "yes",
            }
            for group, queries in sorted(groups.items())
        ]
    )
    noun = {"locomo": "category", "longmemeval": "question type", "beam": "ability"}.get(c.format or "", "group")
    return Table(frame, f"Queries per {noun}")


def skipped_table(evaluation: Evaluation) -> Table:
    """Every query the loader skipped, one row per reason (in order of first appearance): the reason, how many
    questions, their ids (left out of every number; folded when long)."""
    skipped = evaluation.collection.skipped
    reasons: dict[str, list[str]] = {}
    for qid, reason in skipped:
        reasons.setdefault(reason, []).append(qid)
    frame = pd.DataFrame(
        [[reason, str(len(ids)), ", ".join(ids)] for reason, ids in reasons.items()],
        columns=["reason", "questions", "queries"],
    )
    return Table(frame, f"Skipped by the loader ({len(skipped)}), left out of every number")


def loader_tables(evaluation: Evaluation) -> list[Table]:
    """What the loader left out, changed and noticed: :func:`skipped_table`, :func:`repairs_table`, and
    :func:`notes_table` when the loader noted anything."""
    tables = [skipped_table(evaluation), repairs_table(evaluation)]
    if evaluation.collection.notes:
        tables.append(notes_table(evaluation))
    return tables


def notes_table(evaluation: Evaluation) -> Table:
    """What the loader noticed without changing anything (LongMemEval: judgments that disagree with
    ``answer_session_ids``), one row each."""
    notes = evaluation.collection.notes
    frame = pd.DataFrame(list(notes), columns=["query", "note"])
    return Table(frame, f"Noted by the loader ({len(notes)}), nothing changed")


def repairs_table(evaluation: Evaluation) -> Table:
    """Every change the loader made on request (``repair=True``), one row each."""
    repairs = evaluation.collection.repairs
    frame = pd.DataFrame(list(repairs), columns=["query", "change"])
    caption = f"Repaired by the loader ({len(repairs)})"
    if not repairs:
        caption += ": nothing was changed"
    return Table(frame, caption)


def headline_note(evaluation: Evaluation) -> Markdown:
    """Which queries the headline means are over, and which groups are left out and where they are shown."""
    c = evaluation.collection
    judged = c.judged_queries
    headline = c.headline_queries
    left = len(judged) - len(headline)
    if not left:
        return Markdown(f"The headline means are over all {len(judged)} judged queries; no group is left out.")
    return Markdown(
        f"The headline means are over {len(headline)} of the {len(judged)} judged queries: "
        f"{', '.join(c.headline_excludes)} ({plural(left, 'query', 'queries')}) is left out, as most "
        "published numbers do, and shown separately in section 2."
    )
