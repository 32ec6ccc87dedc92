"""The runs ``--runs-dir`` writes: each system's rankings as deep as its measures read, so they re-score.

An evaluation keeps, per system and query, the ranking down to the deepest
hit any of its measures read (:attr:`QueryResult.ranking
<agentmemory.evaluation.runner.QueryResult>`; how deep each read is
:meth:`agentmemory.metrics.Measure.read_depth`):

* a measure of the top ``k``, or of its own rank cutoff (``R@10``), reads
  that many hits;
* LongMemEval's ``sess.*`` read down to the widened cutoff ``k'`` (the first
  depth whose turns span ``k`` sessions; the whole ranking when it never does);
* a budget measure (``R@512tok``) reads the hits within the budget and the one
  that crosses it; ``tokens@first`` down to the first relevant hit (the whole
  ranking when none is relevant);
* a memory system's run is everything it returned (it was asked only as many
  memories as the deepest measure needs), so the run and its memories file
  hold the same memories and the attribution figures re-compute from them.

So ``agentmemory eval --run NAME=<run>`` (with the system's ``--memories``)
gives every per-query value again; ``agentmemory score`` the ones it can
compute without texts or scopes.  One exception: a measure without a cutoff
(``RR``) is read at the evaluation's ``k``, which trec_eval's uncut
``recip_rank`` equals only on a run no deeper than ``k``; on a deeper run
compare ``RR@k``.

**Which queries.**  ``qrels.txt`` holds the judgments of the **headline queries** only (the queries behind
every mean of the report: the judged queries outside the collection's ``headline_excludes``, LoCoMo's
adversarial category 5 among them), so any scorer that averages over the qrels' queries (``agentmemory
score``, trec_eval, ir_measures, ranx) gives the report's means; the qrels file is the one input every such
tool reads, where a side list of query ids would be a convention each tool must learn.  When queries are left
out, ``qrels-all.txt`` beside it holds every judged query (:attr:`ExportedRuns.all_qrels`), for scoring them
too; the runs hold every judged query's ranking either way.  A ranking with no hit writes no line (a TREC run
cannot say "nothing"), so a scorer counts that query only with ``--complete`` (trec_eval ``-c``), as the
report's means do (:func:`qrels_text` says when that is needed).

``run_depth`` (:class:`~agentmemory.evaluation.options.EvalOptions`,
``--run-depth N``) writes every ranking's top ``N`` instead.  It is refused
when shallower than ``k`` or a rank cutoff; when shallower than what a
whole-ranking measure read on some query, the runs are written and
:attr:`ExportedRuns.cut` lists each ranking cut above a measure's depth
(:func:`cut_text`: one line saying which values may then not re-score).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from agentmemory.evaluation.runner import Evaluation
from agentmemory.evaluation.system_runs import memories_text

__all__ = ["ExportedRuns", "cut_text", "depth_text", "exported_runs", "qrels_text"]


@dataclass(frozen=True)
class ExportedRuns:
    """What ``--runs-dir`` writes of one evaluation.

    ``rankings`` maps each system's name to its judged queries' rankings,
    ``(entry_id, score)`` pairs rank 1 first (a query that retrieved nothing
    maps to ``[]``); ``memories`` each memory system's key to its memories
    file's text; ``cut`` lists ``(system name, query id, measures)`` for each
    ranking ``run_depth`` cut above the depth those measures read; ``depth``
    is the ``run_depth`` (``None``: as deep as the measures read); ``qrels`` the
    judgments of the headline queries (``qrels.txt``), ``all_qrels`` those of every
    judged query when some are left out of the headline (``qrels-all.txt``; ``None``
    when none is), ``excluded_groups`` the groups left out.
    """

    rankings: dict[str, dict[str, list[tuple[str, float]]]]
    memories: dict[str, str]
    cut: tuple[tuple[str, str, tuple[str, ...]], ...]
    depth: int | None
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    all_qrels: dict[str, dict[str, int]] | None = None
    excluded_groups: tuple[str, ...] = ()


def exported_runs(evaluation: Evaluation) -> ExportedRuns:
    """The runs and memories files of ``evaluation``, at its options' ``run_depth`` (see the module docstring)."""
    depth = evaluation.options.run_depth
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = {}
    cut: list[tuple[str, str, tuple[str, ...]]] = []
    unranked = {a.name for a in evaluation.answers if not a.has_retrieval}
    for result in evaluation.results:
        if result.name in unranked:  # an answer file without retrieval ranked nothing: no run to write
            continue
        rankings[result.name] = {}
        for q in result.per_query:
            ranking = q.ranking if depth is None else q.ranking[:depth]
            rankings[result.name][q.query_id] = [(h.entry_id, h.score) for h in ranking]
            deeper = tuple(m for m, read in q.reads.items() if read > len(ranking))
            if deeper:
                cut.append((result.name, q.query_id, deeper))
    attributed = [(s.spec.key, s.run.name, s.attributed) for s in evaluation.systems]
    attributed += [(a.name, a.name, a.attributed) for a in evaluation.answers if a.attributed is not None]
    memories = {}
    for key, name, what in attributed:  # a memory system's memories, or an answer file's retrieved ones
        named = None if depth is None else {doc for ranked in rankings[name].values() for doc, _ in ranked}
        memories[key] = memories_text(what, named)
    judged = {qid: dict(grades) for qid, grades in evaluation.collection.qrels.items()}
    headline = {q.query_id for q in evaluation.results[0].headline} if evaluation.results else set(judged)
    qrels = {qid: grades for qid, grades in judged.items() if qid in headline}
    left_out = qrels != judged
    return ExportedRuns(
        rankings,
        memories,
        tuple(cut),
        depth,
        qrels,
        judged if left_out else None,
        tuple(evaluation.collection.headline_excludes) if left_out else (),
    )


def qrels_text(runs: ExportedRuns, folder: str = "DIR") -> str | None:
    """One line saying which queries ``qrels.txt`` holds and how to re-score the report's means, or ``None`` when it
    holds every judged query and every ranking has a hit (then ``agentmemory score`` needs nothing more).

    ``qrels.txt holds the judgments of the 6 headline queries (the means above); qrels-all.txt all 8 judged
    (groups left out of the headline: 5). 1 ranking has no hit and writes no line: agentmemory score
    DIR/qrels.txt --run ... --complete (trec_eval -c) counts it as 0, as the means do.``
    """
    empty = sum(
        1 for per_query in runs.rankings.values() for qid, r in per_query.items() if not r and qid in runs.qrels
    )
    parts = []
    if runs.all_qrels is not None:
        groups = ", ".join(runs.excluded_groups) or "none"
        parts.append(
            f"{folder}/qrels.txt holds the judgments of the {len(runs.qrels)} headline queries (the means above); "
            f"{folder}/qrels-all.txt all {len(runs.all_qrels)} judged (groups left out of the headline: {groups})."
        )
    if empty:
        rankings = f"{empty} ranking{'s' if empty > 1 else ''} of a headline query {'have' if empty > 1 else 'has'}"
        parts.append(
            f"{rankings} no hit and write{'' if empty > 1 else 's'} no line: agentmemory score {folder}/qrels.txt "
            "--run ... --complete (trec_eval -c) counts such a query as 0, as the means do."
        )
    return " ".join(parts) or None


def cut_text(runs: ExportedRuns, flag: str = "--run-depth") -> str | None:
    """One line naming the rankings ``run_depth`` cut above what a measure read, or ``None`` when none was.

    ``--run-depth 6 cut 2 of 14 rankings above what a measure read on them (bm25 2; sess.recall_any@5 on 2): ...``
    """
    if not runs.cut:
        return None
    total = sum(len(per_query) for per_query in runs.rankings.values())
    systems = Counter(name for name, _, _ in runs.cut)
    measures = Counter(m for _, _, deeper in runs.cut for m in deeper)
    by_system = ", ".join(f"{name} {n}" for name, n in systems.items())
    by_measure = ", ".join(f"{m} on {n}" for m, n in measures.items())
    return (
        f"{flag} {runs.depth} cut {len(runs.cut)} of {total} rankings above what a measure read on them "
        f"({by_system}; {by_measure}): those values may not re-score from the runs (leave {flag} out to write "
        "each ranking as deep as its measures read)"
    )


def depth_text(runs: ExportedRuns, k: int) -> str | None:
    """One line saying the runs go below the top ``k`` and why, or ``None`` when every ranking stops at ``k``."""
    if runs.depth is not None:
        return f"The runs hold each ranking's top {runs.depth} (--run-depth)."
    deepest = max((len(r) for per_query in runs.rankings.values() for r in per_query.values()), default=0)
    if deepest <= k:
        return None
    return (
        f"The runs hold each ranking as deep as its measures read on it (up to {deepest} hits, below the top {k}), "
        "so they re-score to the same values."
    )
