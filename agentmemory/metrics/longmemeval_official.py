"""LongMemEval's official retrieval measures, as its own scripts compute them (not trec_eval's).

LongMemEval (Wu et al., ICLR 2025; github xiaowu0162/LongMemEval) scores a
retriever with three numbers per question, in ``src/retrieval/eval_utils.py``
(read at commit 9e0b455): ``evaluate_retrieval`` at the index's own
granularity, and ``evaluate_retrieval_turn2session`` for the sessions of a
turn-level run.  They are six measures (registered through agentmemory.registry.BUILTINS):

=====================  ==========================================================
``recall_any@k``       1.0 if a gold item is among the top ``k``, else 0.0
``recall_all@k``       1.0 if every gold item is among the top ``k``, else 0.0
``ndcg_any@k``         binary-gain nDCG with the official discount (below)
``sess.recall_any@k``  ``recall_any`` of the run's sessions, ``k`` widened
``sess.recall_all@k``  ``recall_all`` of the run's sessions, ``k`` widened
``sess.ndcg_any@k``    ``ndcg_any`` of the turns, relevance by session, ``k`` widened
=====================  ==========================================================

**Gold items** are the ids judged relevant (grade >= 1).  The
:mod:`~agentmemory.datasets.longmemeval` loader judges exactly the ids the
official harness calls ``correct_docs`` (the corpus ids that contain
``answer``, after its ``noans`` renaming), so on a LongMemEval collection the
two agree item for item.

**The ranking** is the system's, rank 1 first.  The official harness ranks
every item of the haystack (``argsort`` of all scores, zero scores too);
agentmemory's retrievers return only entries that score above 0, and an
evaluation hands a measure the top ``k`` of its own run.  The formulas below
are applied to the ranking given: give them one deep enough (the widened
``k'`` of the ``sess.`` measures can exceed ``k``).

**The corpus** is the query's scope (``QueryContext.scope_ids``: its own
haystack), which the ideal ranking and the widening need.  Without one
(``agentmemory score`` has only a run and qrels) the corpus is taken to be the
ranked ids together with the gold ids.

Definitions, with ``top(k)`` the first ``k`` ids of the ranking (all of them
when it is shorter) and ``G`` the gold ids:

* ``recall_any@k = float(any(g in top(k) for g in G))``;
* ``recall_all@k = float(all(g in top(k) for g in G))``;
* ``ndcg_any@k = DCG(gains of top(k)) / DCG(ideal)``, gain 1 for a gold id and
  0 otherwise; ``ideal`` is the corpus's gains sorted descending and cut at
  ``k``: ``min(k, |G in corpus|)`` ones, then zeros up to ``min(k, |corpus|)``
  items; 0.0 when ``DCG(ideal) == 0``.
  ``DCG(g) = g[0] + sum(g[1:] / log2([2, 3, ..., len(g)]))`` in NumPy float64,
  the sum being :func:`numpy.sum` over the whole array, zeros included, so the
  value is the official one bit for bit.

Quirks of the official definitions, reproduced on purpose:

* **The discount.**  Rank ``r >= 2`` is divided by ``log2(r)``, so ranks 1 and
  2 both count fully (trec_eval divides rank ``r`` by ``log2(r + 1)``):
  ``ndcg_any`` is not trec_eval's ``ndcg_cut`` even with binary grades.
* **No gold item.**  ``recall_all`` is 1.0 (``all`` of nothing is true);
  ``recall_any`` and ``ndcg_any`` are 0.0.  (The loader leaves such questions
  out, as the official script does; this shows only on other collections.)
* **Any and all.**  ``recall_any`` counts one gold item as success, however many
  the question has (multi-session questions have several answer sessions).

**Session-level scores of a turn-level run** (``sess.``), in the official
order of operations:

1. ``session(id)`` is the collection's entry-to-session mapping
   (:attr:`QueryContext.session_of <agentmemory.metrics.definition.QueryContext>`,
   which an evaluation takes from
   :attr:`Collection.session_of <agentmemory.collection.Collection>`):
   for LongMemEval, and whenever none is known (``agentmemory score``, a
   collection whose format declares none), the official ``strip_turn_id``
   (:func:`session_of`): the id without its last ``_`` part
   (``"answer_ab12_1_3" -> "answer_ab12_1"``; ``""`` for an id without
   ``_``); for LoCoMo, ``<sample_id>/D<s>:<t> -> <sample_id>/S<s>``
   (:func:`agentmemory.datasets.locomo.locomo_session_of`).  It is applied to
   the gold ids (giving the gold sessions, a set) and to every corpus and
   ranked id;
2. the cutoff is widened: ``k' = k``; while ``k' <= |corpus|`` and the
   sessions of ``top(k')`` number fewer than ``k``, ``k' += 1``.  So ``k'`` is
   the first depth whose turns span ``k`` distinct sessions, and
   ``|corpus| + 1`` when the ranking never spans ``k`` (then ``top(k')`` is the
   whole ranking); ``k' = k`` when ``k > |corpus|``;
3. ``recall_any``/``recall_all`` of the gold sessions in the sessions of
   ``top(k')``, and ``ndcg_any`` at ``k'`` over the **turn** list, a turn's gain
   being 1 when its session is a gold session.

Quirks of the conversion:

* **nDCG counts turns, not sessions.**  Two turns of one gold session at ranks
  1 and 2 both gain 1, and the ideal holds one 1 per corpus turn whose session
  is gold (cut at ``k'``), so ``sess.ndcg_any@k`` is ``ndcg_any@k'`` with
  relevance by session; it rewards several turns of one session.
* **Renamed turns are another session.**  The harness renames the non-evidence
  turns of an answer session ``noans_...`` (the loader does the same), so they
  map to the session ``noans_...``: retrieving them does not recall the answer
  session, and they count as a session of their own when ``k`` is widened.
* **The widening depends on the corpus size** through its stopping rule: a
  ranking that never spans ``k`` sessions widens to ``|corpus| + 1``, where the
  ideal DCG then holds every gold turn of the haystack.
* **How deep they read.**  A ``sess.`` measure reads the top ``k'`` turns
  and nothing below (``MeasureDef.reads``): the whole ranking only when it
  never spans ``k`` sessions.  ``--runs-dir`` writes each ranking that deep,
  so the run re-scores to the same values.
* ``sess.`` on a LongMemEval session-level run strips the last ``_`` part of
  session ids (as the official function would); use the plain measures
  there.  (LoCoMo's mapping leaves a session id as it is, so there ``sess.``
  equals the plain measure.)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence, Set

import numpy as np

from agentmemory.errors import check_positive_int
from agentmemory.metrics.definition import CutoffRule, MeasureDef, QueryContext

__all__ = [
    "DEFINITIONS",
    "FAMILY",
    "SessionOf",
    "dcg",
    "gold",
    "ndcg_any",
    "recall_all",
    "recall_any",
    "session_of",
    "sessions_recall_all",
    "sessions_recall_any",
    "sessions_ndcg_any",
    "widened_cutoff",
]

SessionOf = Callable[[str], str]
"""An entry-to-session mapping: an entry id to the id of the session it belongs to."""

FAMILY = "LongMemEval"
"""How reports name the family of these measures (LongMemEval's official retrieval scripts)."""


def gold(qrels: Mapping[str, int]) -> set[str]:
    """The gold ids of one query: those judged with grade >= 1."""
    return {doc for doc, grade in qrels.items() if grade >= 1}


def session_of(item_id: str) -> str:
    """The session id of a turn id, as the official ``strip_turn_id``: the id without its last ``_`` part.

    ``"answer_ab12_1_3" -> "answer_ab12_1"``; an id without ``_`` gives ``""``.
    """
    return item_id.rpartition("_")[0]


def dcg(gains: Sequence[float]) -> float:
    """The official DCG: ``g[0] + numpy.sum(g[1:] / numpy.log2([2, 3, ..., len(g)]))`` in float64 (0.0 when empty).

    Rank 1 is undiscounted and rank ``r >= 2`` is divided by ``log2(r)``; the
    sum is NumPy's (pairwise) over the whole array, zeros included.
    """
    values = np.asarray(gains, dtype=np.float64)
    if values.size == 0:
        return 0.0
    return float(values[0] + np.sum(values[1:] / np.log2(np.arange(2, values.size + 1))))


def _ndcg(ranked_gains: list[float], relevant_in_corpus: int, corpus_size: int, k: int) -> float:
    """DCG of ``ranked_gains[:k]`` over the DCG of the ideal: ``min(k, R)`` ones then zeros to ``min(k, N)`` items."""
    ones = min(k, relevant_in_corpus)
    ideal = dcg([1.0] * ones + [0.0] * (min(k, corpus_size) - ones))
    if ideal == 0:
        return 0.0
    return dcg(ranked_gains[:k]) / ideal


def _corpus(ranking: Sequence[str], golden: Iterable[str], scope_ids: Set[str] | None) -> Collection[str]:
    """The query's corpus: its scope, or (unknown) the ranked ids with the gold ids."""
    if scope_ids is not None:
        return scope_ids
    return {*ranking, *golden}


def recall_any(ranking: Sequence[str], golden: Collection[str], k: int) -> float:
    """``1.0`` if some gold id is among the first ``k`` ranked, else ``0.0`` (also when there is no gold id)."""
    check_positive_int("k", k)
    top = set(ranking[:k])
    return float(any(doc in top for doc in golden))


def recall_all(ranking: Sequence[str], golden: Collection[str], k: int) -> float:
    """``1.0`` if every gold id is among the first ``k`` ranked, else ``0.0``; ``1.0`` when there is no gold id."""
    check_positive_int("k", k)
    top = set(ranking[:k])
    return float(all(doc in top for doc in golden))


def ndcg_any(ranking: Sequence[str], golden: Collection[str], k: int, corpus: Collection[str]) -> float:
    """Binary-gain nDCG@k with the official discount (module docstring): gold ids gain 1.

    ``corpus`` holds every id the query could retrieve (its haystack): the
    ideal ranking has ``min(k, |gold in corpus|)`` ones, then zeros up to
    ``min(k, |corpus|)`` items.
    """
    check_positive_int("k", k)
    gains = [1.0 if doc in golden else 0.0 for doc in ranking[:k]]
    relevant = sum(1 for doc in golden if doc in corpus)
    return _ndcg(gains, relevant, len(corpus), k)


def widened_cutoff(ranking: Sequence[str], k: int, corpus_size: int, sessions: SessionOf = session_of) -> int:
    """The official widened cutoff ``k'`` of a turn ranking: the first depth whose turns span ``k`` sessions.

    ``k' = k`` when the first ``k`` turns already span ``k`` sessions, or when
    ``k > corpus_size``; ``corpus_size + 1`` when the ranking never spans ``k``
    sessions (the official loop stops there).  ``sessions`` maps an id to its
    session (default :func:`session_of`, LongMemEval's rule).
    """
    check_positive_int("k", k)
    seen: set[str] = set()
    for depth, doc in enumerate(ranking, start=1):
        seen.add(sessions(doc))
        if len(seen) >= k:
            return max(k, depth)
    return k if k > corpus_size else corpus_size + 1


def _sessions(
    ranking: Sequence[str], golden: Collection[str], k: int, scope_ids: Set[str] | None, sessions: SessionOf
) -> tuple[list[str], set[str], int, Collection[str]]:
    """``(top k' turns, gold sessions, k', corpus)`` of the turn-to-session conversion."""
    corpus = _corpus(ranking, golden, scope_ids)
    widened = widened_cutoff(ranking, k, len(corpus), sessions)
    return list(ranking[:widened]), {sessions(doc) for doc in golden}, widened, corpus


def sessions_recall_any(
    ranking: Sequence[str],
    golden: Collection[str],
    k: int,
    scope_ids: Set[str] | None = None,
    sessions: SessionOf = session_of,
) -> float:
    """``1.0`` if a gold session has a turn among the first ``k'`` ranked turns (``k'`` widened), else ``0.0``.

    ``sessions`` maps an id to its session (default :func:`session_of`, LongMemEval's rule).
    """
    top, gold_sessions, _, _ = _sessions(ranking, golden, k, scope_ids, sessions)
    found = {sessions(doc) for doc in top}
    return float(any(s in found for s in gold_sessions))


def sessions_recall_all(
    ranking: Sequence[str],
    golden: Collection[str],
    k: int,
    scope_ids: Set[str] | None = None,
    sessions: SessionOf = session_of,
) -> float:
    """``1.0`` if every gold session has a turn among the first ``k'`` ranked turns; ``1.0`` with no gold id.

    ``sessions`` maps an id to its session (default :func:`session_of`, LongMemEval's rule).
    """
    top, gold_sessions, _, _ = _sessions(ranking, golden, k, scope_ids, sessions)
    found = {sessions(doc) for doc in top}
    return float(all(s in found for s in gold_sessions))


def sessions_ndcg_any(
    ranking: Sequence[str],
    golden: Collection[str],
    k: int,
    scope_ids: Set[str] | None = None,
    sessions: SessionOf = session_of,
) -> float:
    """The official session nDCG of a turn run: nDCG@k' over turns, a turn gaining 1 when its session is gold.

    The ideal holds one 1 per corpus turn whose session is gold (cut at ``k'``).  ``sessions`` maps an id to
    its session (default :func:`session_of`, LongMemEval's rule).
    """
    top, gold_sessions, widened, corpus = _sessions(ranking, golden, k, scope_ids, sessions)
    gains = [1.0 if sessions(doc) in gold_sessions else 0.0 for doc in top]
    relevant = sum(1 for doc in corpus if sessions(doc) in gold_sessions)
    return _ndcg(gains, relevant, len(corpus), widened)


def _recall_any(query: QueryContext) -> float:
    return recall_any(query.ranking, gold(query.qrels), query.cutoff)


def _recall_all(query: QueryContext) -> float:
    return recall_all(query.ranking, gold(query.qrels), query.cutoff)


def _ndcg_any(query: QueryContext) -> float:
    golden = gold(query.qrels)
    return ndcg_any(query.ranking, golden, query.cutoff, _corpus(query.ranking, golden, query.scope_ids))


def _mapping(query: QueryContext) -> SessionOf:
    """The collection's entry-to-session mapping, or LongMemEval's rule when none is known."""
    return query.session_of if query.session_of is not None else session_of


def _sess_recall_any(query: QueryContext) -> float:
    return sessions_recall_any(query.ranking, gold(query.qrels), query.cutoff, query.scope_ids, _mapping(query))


def _sess_recall_all(query: QueryContext) -> float:
    return sessions_recall_all(query.ranking, gold(query.qrels), query.cutoff, query.scope_ids, _mapping(query))


def _sess_ndcg_any(query: QueryContext) -> float:
    return sessions_ndcg_any(query.ranking, gold(query.qrels), query.cutoff, query.scope_ids, _mapping(query))


def _sess_reads(query: QueryContext) -> int:
    """How deep a ``sess.`` measure reads: the widened cutoff ``k'``, at most the whole ranking."""
    golden = gold(query.qrels)
    corpus = _corpus(query.ranking, golden, query.scope_ids)
    return min(widened_cutoff(query.ranking, query.cutoff, len(corpus), _mapping(query)), len(query.ranking))


_WIDENED = "k widened until k distinct sessions"
RECALL_ANY = MeasureDef(
    "recall_any",
    _recall_any,
    CutoffRule.REQUIRED,
    "1 if any gold item is in the top k (LongMemEval official, eval_utils.evaluate_retrieval)",
    family=FAMILY,
)

RECALL_ALL = MeasureDef(
    "recall_all",
    _recall_all,
    CutoffRule.REQUIRED,
    "1 if every gold item is in the top k, 1 with none (LongMemEval official, eval_utils.evaluate_retrieval)",
    family=FAMILY,
)

NDCG_ANY = MeasureDef(
    "ndcg_any",
    _ndcg_any,
    CutoffRule.REQUIRED,
    "binary nDCG, rank r >= 2 divided by log2(r), ideal from the haystack (LongMemEval official, eval_utils.ndcg)",
    family=FAMILY,
)

SESS_RECALL_ANY = MeasureDef(
    "sess.recall_any",
    _sess_recall_any,
    CutoffRule.REQUIRED,
    f"recall_any of a turn run's sessions, {_WIDENED} (LongMemEval official, evaluate_retrieval_turn2session)",
    family=FAMILY,
    whole_ranking=True,
    granularity="session",
    reads=_sess_reads,
)

SESS_RECALL_ALL = MeasureDef(
    "sess.recall_all",
    _sess_recall_all,
    CutoffRule.REQUIRED,
    f"recall_all of a turn run's sessions, {_WIDENED} (LongMemEval official, evaluate_retrieval_turn2session)",
    family=FAMILY,
    whole_ranking=True,
    granularity="session",
    reads=_sess_reads,
)

SESS_NDCG_ANY = MeasureDef(
    "sess.ndcg_any",
    _sess_ndcg_any,
    CutoffRule.REQUIRED,
    f"ndcg_any over turns scored by session, {_WIDENED} (LongMemEval official, evaluate_retrieval_turn2session)",
    family=FAMILY,
    whole_ranking=True,
    granularity="session",
    reads=_sess_reads,
)
DEFINITIONS: tuple[MeasureDef, ...] = (
    RECALL_ANY,
    RECALL_ALL,
    NDCG_ANY,
    SESS_RECALL_ANY,
    SESS_RECALL_ALL,
    SESS_NDCG_ANY,
)
"""The six LongMemEval measures, in the order tables show them (registered through :data:`agentmemory.registry.BUILTINS`)."""
