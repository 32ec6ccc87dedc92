"""Hypothesis strategies shared by the test modules.

Document ids come from a small pool so that rankings and judgments overlap
often; the pool mixes case and non-ASCII ids so that tie-breaking by id is
exercised on more than ASCII.  Scores come from a handful of values so that
ties are common.
"""

from __future__ import annotations

from hypothesis import strategies as st

from agentmemory.metrics import REGISTRY, CutoffRule, Measure

DOC_POOL = ("a", "b", "c", "d", "e", "f", "g", "h", "A", "B", "d10", "d2", "é", "z", "ä", "日本", "doc-1", "doc_1")
QUERY_POOL = ("q1", "q2", "q3", "q4", "q10", "Q1")
TIED_SCORES = (-1.0, -0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 1e-300, 1e300)

doc_ids = st.sampled_from(DOC_POOL)
query_ids = st.sampled_from(QUERY_POOL)
grades = st.integers(min_value=-1, max_value=3)
cutoffs = st.integers(min_value=1, max_value=20)

#: Judgments of one query: doc id -> grade in -1..3 (0 and -1 are not relevant).
qrels_of_query = st.dictionaries(doc_ids, grades, max_size=10)

#: A ranking: distinct doc ids, rank 1 first (may be empty, may be shorter than any cutoff).
rankings = st.lists(doc_ids, unique=True, max_size=14)

#: A score: mostly values that tie with each other, sometimes any finite float.
scores = st.one_of(
    st.sampled_from(TIED_SCORES),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)

#: One query's scored documents: doc id -> score, with frequent ties.
doc_scores = st.dictionaries(doc_ids, scores, max_size=14)

#: A run: query id -> (doc id -> score).
runs = st.dictionaries(query_ids, doc_scores, max_size=5)

#: Qrels: query id -> (doc id -> grade); every query has at least one judgment.
qrels_sets = st.dictionaries(query_ids, st.dictionaries(doc_ids, grades, min_size=1, max_size=10), max_size=5)


@st.composite
def measures(draw: st.DrawFn) -> Measure:
    """Any valid :class:`Measure` from the registry, with a cutoff where it may take one."""
    name = draw(st.sampled_from(sorted(REGISTRY)))
    rule = REGISTRY[name].cutoff
    if rule is CutoffRule.FORBIDDEN:
        return Measure(name)
    if rule is CutoffRule.OPTIONAL and draw(st.booleans()):
        return Measure(name)
    return Measure(name, draw(cutoffs))


@st.composite
def rankings_with_first_relevant(draw: st.DrawFn) -> tuple[list[str], dict[str, int]]:
    """A non-empty ranking and judgments in which its first document is relevant (grade >= 1)."""
    ranking = draw(st.lists(doc_ids, unique=True, min_size=1, max_size=14))
    qrels = draw(qrels_of_query)
    qrels[ranking[0]] = draw(st.integers(min_value=1, max_value=3))
    return ranking, qrels
