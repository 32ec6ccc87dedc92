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

``run_depth`` (:class:`~agentmemory.evaluation.options.EvalOptions`,
``--run-depth N``) writes every ranking's top ``N`` instead.  It is refused
when shallower than ``k`` or a rank cutoff; when shallower than what a
whole-ranking measure read on some query, the runs are written and
:attr:`ExportedRuns.cut` lists each ranking cut above a measure's depth
(:func:`cut_text`: one line saying which values may then not re-score).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from agentmemory.evaluation.runner import Evaluation
from agentmemory.evaluation.system_runs import memories_text

__all__ = ["ExportedRuns", "cut_text", "depth_text", "exported_runs"]


@dataclass(frozen=True)
class ExportedRuns:
    """What ``--runs-dir`` writes of one evaluation.

    ``rankings`` maps each system's name to its judged queries' rankings,
    ``(entry_id, score)`` pairs rank 1 first (a query that retrieved nothing
    maps to ``[]``); ``memories`` each memory system's key to its memories
    file's text; ``cut`` lists ``(system name, query id, measures)`` for each
    ranking ``run_depth`` cut above the depth those measures read; ``depth``
    is the ``run_depth`` (``None``: as deep as the measures read).
    """

    rankings: dict[str, dict[str, list[tuple[str, float]]]]
    memories: dict[str, str]
    cut: tuple[tuple[str, str, tuple[str, ...]], ...]
    depth: int | None


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
    memories = {}
    for system in evaluation.systems:
        named = None
        if depth is not None:
            named = {doc for ranked in rankings[system.run.name].values() for doc, _ in ranked}
        memories[system.spec.key] = memories_text(system.attributed, named)
    for answered in evaluation.answers:  # an answer file's retrieved memories, as a memory system's
        if answered.attributed is not None:
            named = None
            if depth is not None:
                named = {doc for ranked in rankings[answered.name].values() for doc, _ in ranked}
            memories[answered.name] = memories_text(answered.attributed, named)
    return ExportedRuns(rankings, memories, tuple(cut), depth)


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
