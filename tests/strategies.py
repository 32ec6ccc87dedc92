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
def measures(draw: st.DrawFn, family: str | None = None) -> Measure:
    """Any valid :class:`Measure` from the registry (of one ``family`` when given), with a cutoff where it may take one."""
    name = draw(st.sampled_from(sorted(n for n, d in REGISTRY.registered().items() if family in (None, d.family))))
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


# --- LongMemEval -------------------------------------------------------------------------------------------

#: Parts of LongMemEval-like session ids: answer sessions (``answer`` in the id), fillers, and ids that
#: already contain ``noans`` or end in a number, so that stripping the last ``_`` part is exercised.
SESSION_ID_PARTS = ("answer", "noans", "sharegpt", "ultrachat", "ab12", "7", "x")


@st.composite
def turn_corpora(draw: st.DrawFn) -> tuple[list[str], set[str]]:
    """A haystack's turn ids (distinct, ``<session>_<turn number>``, numbered with gaps as the official code
    numbers user turns among all turns) and a random subset of them as gold (possibly empty or all)."""
    n_sessions = draw(st.integers(min_value=1, max_value=6))
    sessions = draw(
        st.lists(
            st.lists(st.sampled_from(SESSION_ID_PARTS), min_size=1, max_size=3).map("_".join),
            min_size=n_sessions,
            max_size=n_sessions,
            unique=True,
        )
    )
    corpus: list[str] = []
    for session in sessions:
        numbers = draw(st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=5, unique=True))
        corpus += [f"{session}_{n}" for n in sorted(numbers)]
    corpus = list(dict.fromkeys(corpus))  # "a" turn 7 and "a_7"... cannot collide, but stay safe
    gold = draw(st.sets(st.sampled_from(corpus)))
    return corpus, gold


@st.composite
def rankings_of(draw: st.DrawFn, corpus: list[str]) -> list[str]:
    """A ranking over ``corpus``: a permutation of all of it (as the official harness ranks) or of a part."""
    order = draw(st.permutations(corpus))
    return order[: draw(st.integers(min_value=0, max_value=len(order)))] if draw(st.booleans()) else order


_CONTENT = st.sampled_from(("I bought a kayak.", "Which trail is best?", "ok", "", "Thanks!"))


@st.composite
def longmemeval_questions(draw: st.DrawFn, question_id: str = "q1") -> dict:
    """One well-formed LongMemEval question: distinct session ids, a date per session, turns of both roles;
    every user turn of an ``answer`` session carries ``has_answer`` (as the official harness requires), the
    turns of other sessions carry it or not at random.  Session ids never turn into one another by the
    official ``answer`` -> ``noans`` renaming."""
    n = draw(st.integers(min_value=0, max_value=5))
    ids = draw(
        st.lists(
            st.tuples(st.sampled_from(("answer_", "", "noans_", "s_answer_")), st.sampled_from(("a1", "b2_1", "c3_2"))),
            min_size=n,
            max_size=n,
            unique_by=lambda t: t[1],  # distinct suffixes: no id is another's rename
        ).map(lambda pairs: [p + s for p, s in pairs])
    )
    sessions = []
    for sid in ids:
        turns = []
        for _ in range(draw(st.integers(min_value=0, max_value=5))):
            role = draw(st.sampled_from(("user", "assistant")))
            turn = {"role": role, "content": draw(_CONTENT)}
            if ("answer" in sid and role == "user") or draw(st.booleans()):
                turn["has_answer"] = draw(st.booleans())
            turns.append(turn)
        sessions.append(turns)
    return {
        "question_id": question_id,
        "question_type": draw(st.sampled_from(("single-session-user", "multi-session", "knowledge-update"))),
        "question": "Which trail did I like?",
        "answer": "the ridge trail",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ids,
        "haystack_dates": ["2023/05/20 (Sat) 02:21"] * n,
        "haystack_sessions": sessions,
        "answer_session_ids": [sid for sid in ids if "answer" in sid],
    }
