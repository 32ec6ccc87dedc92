"""Hypothesis strategies shared by the test modules.

Document ids come from a small pool so that rankings and judgments overlap
often; the pool mixes case and non-ASCII ids so that tie-breaking by id is
exercised on more than ASCII.  Scores come from a handful of values so that
ties are common.
"""

from __future__ import annotations

import json as _json

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


#: Measures that read the query (its metadata), which a ranking and qrels alone do not give: they raise without it
#: (tests/metrics/test_stale.py checks stale@k with queries).
NEEDS_QUERY = ("stale",)


@st.composite
def measures(draw: st.DrawFn, family: str | None = None) -> Measure:
    """Any valid :class:`Measure` from the registry (of one ``family`` when given) computable from a ranking and
    qrels alone (not :data:`NEEDS_QUERY`, nor one that reads the hits' token lengths: tests/metrics/test_budget.py,
    nor an answer measure, which reads the system's answer: tests/metrics/test_answers.py),
    with a rank cutoff where it may take one."""
    names = (
        n
        for n, d in REGISTRY.registered().items()
        if family in (None, d.family) and n not in NEEDS_QUERY and not d.reads_lengths and not d.reads_answer
    )
    name = draw(st.sampled_from(sorted(names)))
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


# -- answers, for the answer-text scores (tests/metrics/test_answer_text.py) ------------------------------------------

#: Words of answers: articles and "and" in several cases, words that stem alike, punctuation glued and alone,
#: numbers with commas and points, accents composed and decomposed, Unicode punctuation, other scripts, the
#: category-5 phrases, commas and semicolons (category 1 and 3 separators).
ANSWER_WORDS = (
    "the", "The", "a", "A", "an", "and", "AND", "Andrew", "running", "runs", "run", "ran", "Paris", "paris",
    "London", "New", "York", "Yorkshire", "don't", "Dr.", "U.S.", "A-Team", "1,000", "1000", "3.5", "?", "!",
    ",", ";", ".", "café", "cafe\u0301", "cafe", "the\u0301", "the\u2019s", "x\u00b2", "\u5317\u4eac",
    "\u041c\u043e\u0441\u043a\u0432\u0430", "Stra\u00dfe", "\u212a", "co\u00adop", "not mentioned",
    "No information available", "generously", "universities",
)  # fmt: skip

#: An answer: up to six words, joined by a space (or nothing, so words run together).
answers = st.lists(st.sampled_from(ANSWER_WORDS), max_size=6).map(" ".join) | st.lists(
    st.sampled_from(ANSWER_WORDS), max_size=4
).map("".join)

#: Categories of LoCoMo questions, or None for no category rule.
answer_categories = st.sampled_from((None, 1, 2, 3, 4, 5))


# -- hostile input files, for the loaders' fuzz test (tests/faults/test_fuzz_loaders.py) ----------------------------------
#
# Each strategy draws the *bytes* of one input file.  Most examples are near
# misses of a valid file (a valid record whose field got a random JSON value,
# a line with an edge-case id, number or timestamp); some are random bytes;
# a few carry what Python cannot hold (JSON nested thousands deep, an integer
# of 5,000 digits, NaN, a lone surrogate escape), spliced in as raw text.


#: Text the loaders must refuse or read correctly: spaces and controls in ids, numbers Python reads loosely, ...
EDGE_TEXT = (
    "", " ", "m 1", "m\t1", "m\x001", "m\x85", "\u00a0", "1_0", "\uff11", "\u0663", "nan", "inf", "-0", "+1", "0x1",
    "1e5", "2026-03-01T09:30:00Z", "9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59Z",
    "2026-03-01T09:30:00", "D1:1", "D01:1", "D1:01", "D:1:1", "D1:1; D1:2", "session_1", "conv 1", "x" * 300,
    "1:56 pm on 8 May, 2023", "11:59 pm on 31 December, 9999", "12:00 am on 30 February, 2024", "\ufeff",
)  # fmt: skip
#: Raw JSON text json.dumps would never write: what a careless script or a hostile file holds.
RAW_JSON = ("NaN", "-Infinity", "7" * 5000, "-" + "1" * 4301, '"\\ud800"', '"a\\udfffb"', "[" * 3000 + "]" * 3000)

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(EDGE_TEXT),
    st.text(max_size=8),
)
#: Any JSON value json.dumps writes, small.
json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(EDGE_TEXT) | st.text(max_size=5), inner, max_size=4),
    ),
    max_leaves=8,
)


@st.composite
def _mutated_record(draw: st.DrawFn, record: dict) -> dict:
    """``record`` with a field removed, replaced by a random value, or by the placeholder ``"@RAW@"``."""
    record = dict(record)
    key = draw(st.sampled_from(sorted(record) + ["extra"]))
    action = draw(st.sampled_from(["keep", "drop", "value", "value", "raw"]))
    if action == "drop":
        record.pop(key, None)
    elif action == "value":
        record[key] = draw(json_values)
    elif action == "raw":
        record[key] = "@RAW@"
    return record


def _dumps_with_raw(draw: st.DrawFn, value: object) -> str:
    """``value`` as JSON, each ``"@RAW@"`` spliced with raw text of RAW_JSON."""
    text = _json.dumps(value, ensure_ascii=draw(st.booleans()))
    while '"@RAW@"' in text:
        text = text.replace('"@RAW@"', draw(st.sampled_from(RAW_JSON)), 1)
    return text


@st.composite
def _mutated(draw: st.DrawFn, record: dict) -> str:
    """``record`` as one JSON line, with a field removed, replaced by a random value, or by raw text."""
    return _dumps_with_raw(draw, draw(_mutated_record(record)))


def _lines_file(lines: st.SearchStrategy[str], min_size: int = 0) -> st.SearchStrategy[bytes]:
    """A file of ``lines`` (one in eight examples: random bytes instead)."""
    as_text = st.lists(lines, min_size=min_size, max_size=5).map(
        lambda rows: "".join(r + "\n" for r in rows).encode("utf-8", "surrogatepass")
    )
    return st.integers(0, 7).flatmap(lambda n: st.binary(max_size=200) if n == 0 else as_text)


_entry = {"_id": "m1", "text": "Maya eats lentils", "tags": ["diet"], "created_at": "2026-03-01T09:30:00Z",
          "provenance": {"source": "chat", "actor": "user", "derived_from": []}, "scope": "s"}  # fmt: skip
_query = {"_id": "q1", "text": "what does Maya eat", "tags": ["diet"], "scope": "s", "group": "g"}


@st.composite
def _records_file(draw: st.DrawFn, template: dict, prefix: str) -> bytes:
    """Lines of ``template`` with ids prefix1, prefix2, ...; each line gone wrong with probability 1/3."""
    if draw(st.integers(0, 7)) == 0:
        return draw(st.binary(max_size=200))
    lines = []
    for number in range(1, draw(st.integers(1, 4)) + 1):
        record = {**template, "_id": f"{prefix}{number}"}
        lines.append(draw(_mutated(record)) if draw(st.integers(0, 2)) == 0 else _json.dumps(record))
    return "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")


#: A corpus.jsonl: lines m1, m2, ... of which some have a field gone wrong; or random bytes.
corpus_files = _records_file(_entry, "m")
#: A queries.jsonl, likewise (q1, q2, ...).
query_files = _records_file(_query, "q")
_qrels_field = st.sampled_from(("q1", "q2", "m1", "m2", "m3", "0", "1", "2", "-1", *EDGE_TEXT))
#: A qrels/<split>.tsv body (no header): mostly "q<i> TAB m<j> TAB grade" lines, some with an edge-case field.
qrels_files = _lines_file(
    st.one_of(
        st.tuples(
            st.sampled_from(("q1", "q2")), st.sampled_from(("m1", "m2", "m3")), st.sampled_from(("0", "1", "2", "-1"))
        ).map("\t".join),
        st.lists(_qrels_field, min_size=2, max_size=4).map("\t".join),
    ),
    min_size=1,
)
#: A TREC run or qrels: lines of whitespace-separated fields, some numbers, some not.
trec_files = _lines_file(
    st.lists(
        st.sampled_from(("q1", "Q0", "m1", "m2", "1", "2.5", "0", "-3e2", *EDGE_TEXT)), min_size=3, max_size=7
    ).map(" ".join)
)


@st.composite
def _run_line(draw: st.DrawFn) -> str:
    hit = draw(_mutated_record({"entry_id": "m1", "score": 2.5}))
    return _dumps_with_raw(draw, draw(_mutated_record({"query_id": "q1", "hits": [hit]})))


#: A JSON-lines run: {"query_id": ..., "hits": [...]} with a field (of the line or of a hit) gone wrong.
jsonl_runs = _lines_file(_run_line())

_turn = {"speaker": "Priya", "dia_id": "D1:1", "text": "hello", "blip_caption": "a cup", "img_url": ["u"]}
_qa = {"question": "who?", "answer": "Priya", "evidence": ["D1:1"], "category": 1}


@st.composite
def locomo_files(draw: st.DrawFn) -> bytes:
    """A LoCoMo JSON file: one valid conversation with fields (anywhere) replaced, or random bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=200))
    turn = draw(_mutated_record(_turn)) if draw(st.booleans()) else dict(_turn)
    qa = draw(_mutated_record(_qa)) if draw(st.booleans()) else dict(_qa)
    sample = {
        "sample_id": draw(st.sampled_from(("conv-1", "conv 1", "", "c\x00", "conv-1"))),
        "conversation": {"session_1_date_time": draw(st.sampled_from(EDGE_TEXT[-4:])), "session_1": [turn]},
        "qa": [qa],
    }
    if draw(st.booleans()):
        sample = draw(_mutated_record(sample))
    document: object = [sample] if draw(st.booleans()) else sample
    return _dumps_with_raw(draw, document).encode("utf-8", "surrogatepass")


_lme_turn = {"role": "user", "content": "I graduated in Business Administration.", "has_answer": True}
_lme_question = {
    "question_id": "q1",
    "question_type": "single-session-user",
    "question": "What degree did I graduate with?",
    "answer": "Business Administration",
    "question_date": "2023/05/15 (Mon) 03:57",
    "haystack_dates": ["2023/05/02 (Tue) 09:15", "2023/05/04 (Thu) 12:22"],
    "haystack_session_ids": ["sharegpt_a", "answer_b"],
    "haystack_sessions": [[{"role": "user", "content": "hi"}], [dict(_lme_turn)]],
    "answer_session_ids": ["answer_b"],
}


@st.composite
def longmemeval_hostile_files(draw: st.DrawFn) -> bytes:
    """A LongMemEval JSON file: one valid question with fields (of the question or a turn) replaced, or random bytes."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=200))
    question = _json.loads(_json.dumps(_lme_question))
    if draw(st.booleans()):
        question["haystack_sessions"][1][0] = draw(_mutated_record(_lme_turn))
    if draw(st.booleans()):
        question = draw(_mutated_record(question))
    if draw(st.booleans()):
        key = draw(st.sampled_from(["haystack_dates", "haystack_session_ids", "answer_session_ids"]))
        if isinstance(question.get(key), list) and question[key]:
            question[key][0] = draw(st.sampled_from(EDGE_TEXT) | json_values)
    document: object = [question] if draw(st.booleans()) else question
    return _dumps_with_raw(draw, document).encode("utf-8", "surrogatepass")


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
