"""The LongMemEval benchmark as a :class:`~agentmemory.collection.Collection`: the ``longmemeval`` format.

LongMemEval (Wu et al., ICLR 2025; MIT; github xiaowu0162/LongMemEval) is
not ours to ship: users download ``longmemeval_s_cleaned.json``,
``longmemeval_m_cleaned.json`` or ``longmemeval_oracle.json`` (or the
original releases) themselves.  A file is a JSON list of questions, each with
its **own haystack**: ``haystack_session_ids``, ``haystack_dates`` and
``haystack_sessions`` (a list of sessions, each a list of turns ``{"role",
"content", "has_answer"?}``), plus ``question_id``, ``question_type``,
``question``, ``answer``, ``question_date`` and ``answer_session_ids``.

:func:`load_longmemeval` converts it once, question by question (the file is
parsed one question at a time), into columns of entries (a record is made when
asked; a session's date, provenance and metadata are stored once for all its
turns, the texts in one UTF-8 buffer) and typed queries, building the
entries and the judgments exactly as the official retrieval harness does
(``process_item_flat_index`` and the ``correct_docs`` line of
``src/retrieval/run_retrieval.py``, and the averaging in its ``main``, read at
commit 9e0b455).

**Queries.**  Each question is a :class:`~agentmemory.records.Query` with id
``question_id``, the question as text, no tags, ``scope`` its ``question_id``
(a question searches only its own haystack), ``group`` its ``question_type``
(:data:`QUESTION_TYPES`) and ``asked_at`` its ``question_date``.  ``metadata``
keeps ``question_type``, ``question_date``, ``answer`` and
``answer_session_ids``.

**Entries** (``granularity``):

* ``"session"`` (default): one entry per haystack session, its text the
  contents of the session's user turns joined by single spaces (the official
  text, no role prefixes); with ``all_turns`` every turn, as
  ``"<role>: <content>"`` lines joined by ``"\\n"``.  A session without user
  turns is an entry with empty text (the harness indexes it too).
* ``"turn"``: one entry per user turn (``all_turns``: per turn of either
  role), its text the turn's content.  Turns are numbered from 1 over **all**
  turns of the session, as the official code does, so the turn ids of a
  session with alternating roles are ``<session>_1``, ``<session>_3``, ...

An entry's id is ``"<question_id>/<corpus id>"`` (session ids repeat across
questions), where the corpus id is the official one: the session id, or
``<session id>_<turn number>``, **renamed** when the official harness renames
it: a session whose id contains ``answer`` but none of whose user turns has
``has_answer: true`` becomes ``noans`` in place of every ``answer`` in its id
(``answer_ab12_1 -> noans_ab12_1``), and so does each user turn of an
``answer`` session whose ``has_answer`` is false.  A turn id therefore maps
back to its (possibly renamed) session by dropping its last ``_`` part, which
is what the ``sess.`` measures do (:func:`longmemeval_session_of`, the
collection's :attr:`~agentmemory.collection.Collection.session_of`).  ``scope`` is the ``question_id``;
``created_at`` the session's date (every turn of a session shares it);
``provenance`` ``source="conversation"``, ``ref`` the session id, ``actor``
the turn's role (a session entry: ``"user"``, or ``None`` with
``all_turns``); no tags; ``metadata`` ``question_id``, ``session_id``,
``session_position`` (0-based in the haystack), ``session_date`` (raw) and,
for a turn, ``turn`` (its number) and ``role``.

**Turns of a session entry.**  At session granularity
:attr:`Collection.turns` maps each session entry's id to the turns its text
is made of (the user turns; with ``all_turns`` every turn), each exactly the
entry the turn granularity gives it (same id, renaming included, text,
role, date, scope and metadata): memory systems ingest turns whatever the
granularity (:mod:`agentmemory.systems`).  They are built on access from the
session's text and a few integers per turn kept at load time, so a session
load holds no second copy of the texts.

**Judgments.**  The gold items are the corpus ids that contain ``answer``
after the renaming (the official ``correct_docs``): the ``answer`` sessions
with a user turn marked ``has_answer: true``, or, at turn level, those user
turns; each judged relevant with grade 1.  With ``all_turns`` (not in the
official harness) a turn of either role counts, so an assistant turn marked
``has_answer`` is gold too; ``settings`` says which turns were indexed.

**Left out, and listed in** :attr:`Collection.skipped` **with the reason**
(their haystacks are not loaded):

* abstention questions, whose ``question_id`` contains ``_abs`` (the official
  test), as the official scripts leave them out;
* questions none of whose user turns (``all_turns``: turns) has
  ``has_answer: true`` anywhere in the haystack, as the official
  ``run_retrieval.py`` leaves them out of its means (upstream issue #16 counts
  51 in the cleaned S file: mostly single-session-assistant questions whose
  evidence is an assistant turn).  This applies at both granularities, as
  there;
* questions whose ``has_answer`` turns all lie in sessions whose id lacks
  ``answer``: nothing is gold.  The official script would keep them and
  average in ``recall_all = 1``, ``recall_any = ndcg_any = 0``; they are left
  out here instead (the one deliberate difference; real releases have none).

These three kinds still have an answer to score: each is also in
:attr:`Collection.left_out_queries`, as the query it would have been (an
abstention question's ``asked_at`` is its ``question_date`` when that reads,
else ``None``).  Malformed questions (below) are not: their haystacks are
not what the file says.

**Cross-check.**  The sessions judged are compared with the question's
``answer_session_ids``; every disagreement of a kept question is listed in
:attr:`Collection.notes`: an answer session that is not judged (none of its
user turns has ``has_answer``, so the harness renamed it ``noans``), a judged
session missing from ``answer_session_ids``, a session with ``has_answer``
turns whose id lacks ``answer``.  So is a date (a session's or the
question's) whose weekday is not its date's, e.g. ``2023/02/04 (Mon)`` (a
Saturday): it is read as the date it names, not a reason to leave the
question out, since the official harness never reads dates.

**Malformed questions** are skipped with every problem as the reason
(strict, the default) or, with ``repair=True``, repaired where a repair is
unambiguous, every change listed in :attr:`Collection.repairs` (and skipped
when one is not):

* the three haystack lists differ in length: cut to the shortest, as the
  official harness's ``zip`` does silently (each dropped session listed);
* a session id repeated within the haystack: a later copy with the same turns
  is dropped (its date listed); copies with different turns cannot be
  repaired;
* an ``answer_session_ids`` id not in the haystack: dropped from the
  cross-check (judgments come from the haystack);
* a date that is not :data:`DATE_FORM`, not a real date and time, or out of
  range: the session's ``created_at`` (or the question's ``asked_at``) is
  unknown, ``None``; the reason is the date parser's own
  (``is not a real date and time (day is out of range for month)``);
* a user turn of an ``answer`` session without ``has_answer`` (the official
  harness requires it there, and stops): read as ``false``;
* a corpus id, after the renaming, equal to another one of the haystack:
  cannot be repaired.

Anything else that is not LongMemEval-shaped (a wrong type, a missing field, a
role other than ``user``/``assistant``, a ``has_answer`` that is not a
boolean, an unknown ``question_type``, a repeated ``question_id``) raises
:class:`~agentmemory.errors.InputError` naming the JSON path, e.g.
``$[2].haystack_sessions[4][1].role``.

**Detection.**  Registered as the format ``longmemeval`` (:data:`FORMAT`;
options ``granularity``, ``all_turns``, ``user_turns_only``, ``repair``).
``format="auto"`` takes a file whose name ends in ``.json`` (any case) and
whose first record (the first item of the top-level list, or a top-level
object) has the keys ``question_id`` and ``haystack_sessions``, read as a
stream (:func:`~agentmemory.datasets.sniff.first_record_has_keys`) without
parsing the file.
"""

from __future__ import annotations

import dataclasses
import gc
import re
from array import array
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from itertools import repeat
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from agentmemory.collection import Collection
from agentmemory.collection.columns import BufferTexts, Codes, Entries, Layered, LayeredRow
from agentmemory.datasets.base import Format, FormatOption
from agentmemory.datasets.sniff import first_record_has_keys
from agentmemory.errors import InputError, ParameterError, UnknownNameError, quote
from agentmemory.files.reading import describe_json, json_array_items, parse_json, read_json_text
from agentmemory.files.trec import TREC_ID_RULE, trec_id_problem
from agentmemory.records import LATEST, TIME_RANGE, MemoryEntry, Provenance, Query, _trusted

__all__ = [
    "DATE_FORM",
    "FORMAT",
    "GRANULARITIES",
    "QUESTION_TYPES",
    "is_abstention",
    "longmemeval_session_of",
    "load_longmemeval",
    "parse_longmemeval_date",
    "recognise",
]

#: LongMemEval's six question types (the queries' groups), as its ``print_qa_metrics.py`` lists them.
QUESTION_TYPES: tuple[str, ...] = (
    "single-session-user",
    "single-session-preference",
    "single-session-assistant",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)

#: What ``granularity`` takes: one entry per session, or per turn.
GRANULARITIES: tuple[str, ...] = ("session", "turn")

#: The one date form :func:`parse_longmemeval_date` accepts, as shown in messages.
DATE_FORM = "'YYYY/MM/DD (Ddd) HH:MM' like '2023/05/20 (Sat) 02:21'"

_DATE = re.compile(
    r"(?P<year>[0-9]{4})/(?P<month>[0-9]{2})/(?P<day>[0-9]{2})"
    r" \((?P<weekday>Mon|Tue|Wed|Thu|Fri|Sat|Sun)\) (?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})"
)
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_ROLES = ("user", "assistant")
_FIELDS = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
)


def parse_longmemeval_date(value: object) -> datetime:
    """A LongMemEval date, e.g. ``"2023/05/20 (Sat) 02:21"``, as an aware UTC datetime.

    Strict: exactly ``YYYY/MM/DD (Ddd) HH:MM`` (the form the benchmark's
    generator writes with ``%Y/%m/%d (%a) %H:%M``): a real date, the English
    weekday abbreviation of that date, a 24-hour time.  LongMemEval gives no
    time zone; the result is read as UTC.  (The loader is less strict about
    the weekday: see :func:`load_longmemeval`.)

    Raises:
        ParameterError: anything else, a date that does not exist (30
            February), or a weekday that is not the date's.
    """
    parsed, mismatch = _read_date(value)
    if mismatch is not None:
        raise ParameterError("date", value, mismatch, f"expected {DATE_FORM}")
    return parsed


def _read_date(value: object) -> tuple[datetime, str | None]:
    """``(date, mismatch)``: the date as :func:`parse_longmemeval_date` reads it, without refusing a wrong weekday.

    ``mismatch`` is ``None`` when the weekday is the date's, else what is wrong
    (``"names the weekday Mon, but that date is a Sat"``).

    Raises:
        ParameterError: not the form, not a real date and time, or out of range.
    """
    match = _DATE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ParameterError("date", value, "is not a LongMemEval date", f"expected {DATE_FORM}")
    try:
        parsed = datetime(
            int(match["year"]),
            int(match["month"]),
            int(match["day"]),
            int(match["hour"]),
            int(match["minute"]),
            tzinfo=timezone.utc,
        )
    except ValueError as err:
        raise ParameterError("date", value, f"is not a real date and time ({err})", f"expected {DATE_FORM}") from None
    if parsed >= LATEST:  # a run's event clock counts on from the newest date (see agentmemory.records.LATEST)
        raise ParameterError("date", value, "is out of range", f"expected {TIME_RANGE}")
    weekday = _WEEKDAYS[parsed.weekday()]
    if match["weekday"] != weekday:
        return parsed, f"names the weekday {match['weekday']}, but that date is a {weekday}"
    return parsed, None


def longmemeval_session_of(entry_id: str) -> str:
    """The session of an entry id, LongMemEval's rule (the official ``strip_turn_id``): drop its last ``_`` part.

    ``"q1/answer_ab12_1_3" -> "q1/answer_ab12_1"``; an id without ``_`` gives ``""``.  The collections this
    format loads carry it as :attr:`Collection.session_of` for the ``sess.`` measures; it is the same rule as
    :func:`agentmemory.metrics.longmemeval_official.session_of` (kept here so loading needs no NumPy).
    """
    return entry_id.rpartition("_")[0]


def is_abstention(question_id: str) -> bool:
    """Whether the official scripts treat the question as an abstention question: ``'_abs' in question_id``."""
    return "_abs" in question_id


# --- reading and shape checks (InputError) ----------------------------------------------------------


def _read_json(path: Path) -> tuple[str, str]:
    """The file's text and sha256 (:func:`agentmemory.files.reading.read_json_text`)."""
    return read_json_text(path, "LongMemEval JSON file (e.g. longmemeval_s_cleaned.json)")


def _is_question(value: object) -> bool:
    return isinstance(value, dict) and "question_id" in value and "haystack_sessions" in value


def _not_longmemeval(path: Path, found: str) -> InputError:
    return InputError(
        path,
        None,
        "is not a LongMemEval file: expected a list of questions with 'question_id' and 'haystack_sessions' "
        f"(found {found})",
    )


def _items(path: Path, text: str) -> Iterator[tuple[str, dict, float]]:
    """``(json path, question, share of the text read)`` for every question of the file's ``text``, checked for
    the top-level shape.  A list's questions are parsed one at a time
    (:func:`~agentmemory.files.reading.json_array_items`): only the question being read is held as parsed JSON,
    never the whole document."""
    streamed = json_array_items(text, path)
    if streamed is None:
        document = parse_json(text, path, root="$")
        if isinstance(document, dict):
            if not _is_question(document):
                raise _not_longmemeval(path, describe_json(document))
            yield "$", document, 1.0
            return
        if not isinstance(document, list):
            raise _not_longmemeval(path, describe_json(document))
        streamed = ((item, len(text)) for item in document)
    size = max(len(text), 1)
    index = -1
    for index, (item, end) in enumerate(streamed):
        if index == 0 and not _is_question(item):
            raise _not_longmemeval(path, f"a list whose first item is {describe_json(item)}")
        if not isinstance(item, dict):
            raise InputError(path, None, f"$[{index}]: expected a question object; found {describe_json(item)}")
        yield f"$[{index}]", item, end / size
    if index < 0:
        raise _not_longmemeval(path, "an empty list")


class _Turn(NamedTuple):
    role: str
    content: str
    has_answer: bool | None  # None: the turn has no has_answer


class _Session(NamedTuple):
    position: int  # 0-based in the haystack as given
    session_id: str
    date: str
    turns: tuple[_Turn, ...]


class _Question(NamedTuple):
    where: str
    question_id: str
    question_type: str
    question: str
    answer: object
    question_date: str
    session_ids: list[str]
    dates: list[str]
    sessions: list[tuple[_Turn, ...]]
    answer_session_ids: list[str]


def _string(path: Path, where: str, value: object, what: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value):
        raise InputError(path, None, f"{where}: expected {what}; found {describe_json(value)}")
    return value


def _id(path: Path, where: str, value: object) -> str:
    """A question or session id: a non-empty string a TREC file can hold (entry and query ids are made of them)."""
    text = _string(path, where, value, "a non-empty string")
    problem = trec_id_problem(text)
    if problem is not None:
        raise InputError(path, None, f"{where}: {quote(text)} {problem}; {TREC_ID_RULE}")
    return text


def _strings(path: Path, where: str, value: object, what: str) -> list[str]:
    if not isinstance(value, list):
        raise InputError(path, None, f"{where}: expected a list of {what}; found {describe_json(value)}")
    return [_string(path, f"{where}[{i}]", item, f"a non-empty string ({what})") for i, item in enumerate(value)]


def _turns(path: Path, where: str, value: object) -> tuple[_Turn, ...]:
    if not isinstance(value, list):
        raise InputError(path, None, f"{where}: expected a session, a list of turns; found {describe_json(value)}")
    turns = []
    for index, turn in enumerate(value):
        if isinstance(turn, dict):  # the usual turn, checked without formatting its path (2.5M turns in an M file)
            role, content, has_answer = turn.get("role"), turn.get("content"), turn.get("has_answer")
            if (
                (role == "user" or role == "assistant")
                and isinstance(content, str)
                and (isinstance(has_answer, bool) or (has_answer is None and "has_answer" not in turn))
            ):
                turns.append(_Turn(role, content, has_answer))
                continue
        at = f"{where}[{index}]"  # a turn that fails some check: the checks below name the first, with its path
        if not isinstance(turn, dict):
            raise InputError(
                path, None, f"{at}: expected a turn object with role and content; found {describe_json(turn)}"
            )
        for field in ("role", "content"):
            if field not in turn:
                raise InputError(path, None, f"{at}.{field}: missing; every turn needs a role and a content")
        role = turn["role"]
        if role not in _ROLES:
            raise InputError(path, None, f"{at}.role: expected 'user' or 'assistant'; found {describe_json(role)}")
        content = _string(path, f"{at}.content", turn["content"], "a string", empty=True)
        has_answer = turn.get("has_answer")
        if "has_answer" in turn and not isinstance(has_answer, bool):
            raise InputError(path, None, f"{at}.has_answer: expected true or false; found {describe_json(has_answer)}")
        turns.append(_Turn(role, content, has_answer))
    return tuple(turns)


def _question(path: Path, where: str, item: dict) -> _Question:
    """One question object, checked for its shape (types and fields)."""
    for field in _FIELDS:
        if field not in item:
            raise InputError(path, None, f"{where}.{field}: missing; every question needs " + ", ".join(_FIELDS))
    question_id = _id(path, f"{where}.question_id", item["question_id"])
    question_type = item["question_type"]
    if question_type not in QUESTION_TYPES:
        raise InputError(
            path,
            None,
            f"{where}.question_type: {quote(question_type)} is not a LongMemEval question type; expected one of "
            + ", ".join(QUESTION_TYPES),
        )
    question = _string(path, f"{where}.question", item["question"], "a non-empty string")
    question_date = _string(path, f"{where}.question_date", item["question_date"], "a date string", empty=True)
    session_ids = _strings(path, f"{where}.haystack_session_ids", item["haystack_session_ids"], "session ids")
    for index, session_id in enumerate(session_ids):  # each becomes part of entry ids, written to TREC files
        _id(path, f"{where}.haystack_session_ids[{index}]", session_id)
    dates_value = item["haystack_dates"]
    if not isinstance(dates_value, list):
        raise InputError(
            path, None, f"{where}.haystack_dates: expected a list of date strings; found {describe_json(dates_value)}"
        )
    dates = [
        _string(path, f"{where}.haystack_dates[{i}]", d, "a date string", empty=True) for i, d in enumerate(dates_value)
    ]
    sessions_value = item["haystack_sessions"]
    if not isinstance(sessions_value, list):
        raise InputError(
            path, None, f"{where}.haystack_sessions: expected a list of sessions; found {describe_json(sessions_value)}"
        )
    sessions = [_turns(path, f"{where}.haystack_sessions[{i}]", s) for i, s in enumerate(sessions_value)]
    answer_ids = _strings(path, f"{where}.answer_session_ids", item["answer_session_ids"], "session ids")
    return _Question(
        where,
        question_id,
        question_type,
        question,
        item["answer"],
        question_date,
        session_ids,
        dates,
        sessions,
        answer_ids,
    )


# --- per-question checks: malformed kinds (skip or repair) -------------------------------------------


class _Checked(NamedTuple):
    """A question after the malformed-input checks: what survives, what was changed, what is wrong."""

    sessions: list[_Session]
    answer_session_ids: list[str]
    dates: dict[int, datetime | None]  # session position -> created_at
    asked_at: datetime | None
    changes: list[str]
    problems: list[str]  # strict: every problem; repair: only those that cannot be repaired
    notes: list[str]  # what was read as it is but is worth saying (a weekday that is not the date's)


def _is_answer_session(session_id: str) -> bool:
    """The official test for an answer (evidence) session: ``'answer' in session_id``."""
    return "answer" in session_id


def _check(q: _Question, *, repair: bool, all_turns: bool) -> _Checked:
    changes: list[str] = []
    problems: list[str] = []

    def problem(text: str, fix: str | None) -> None:
        """Record ``text`` (strict), or its repair ``fix`` (repair; ``None``: it cannot be repaired)."""
        if repair and fix is not None:
            changes.append(fix)
        else:
            problems.append(text)

    n_ids, n_dates, n_sessions = len(q.session_ids), len(q.dates), len(q.sessions)
    shortest = min(n_ids, n_dates, n_sessions)
    if not n_ids == n_dates == n_sessions:
        if repair:
            for position in range(shortest, max(n_ids, n_dates, n_sessions)):
                name = quote(q.session_ids[position]) if position < n_ids else "(no id)"
                changes.append(
                    f"haystack cut to its first {shortest} sessions, as the official harness's zip does: "
                    f"session {name} at position {position} dropped"
                )
        else:
            problems.append(
                f"haystack lists differ in length: {n_ids} session ids, {n_dates} dates, {n_sessions} sessions"
            )
    sessions = [_Session(i, q.session_ids[i], q.dates[i], q.sessions[i]) for i in range(shortest)]

    # repeated session ids
    first: dict[str, _Session] = {}
    kept: list[_Session] = []
    for session in sessions:
        earlier = first.get(session.session_id)
        if earlier is None:
            first[session.session_id] = session
            kept.append(session)
            continue
        if session.turns == earlier.turns:
            problem(
                f"session id {quote(session.session_id)} is repeated (positions {earlier.position} and {session.position})",
                f"session {quote(session.session_id)} at position {session.position} (dated {quote(session.date)}) dropped: "
                f"a copy of position {earlier.position}",
            )
            if repair:
                continue
        else:
            problems.append(
                f"session id {quote(session.session_id)} names two different sessions "
                f"(positions {earlier.position} and {session.position})"
            )
        kept.append(session)
    sessions = kept

    # answer sessions that are not in the haystack (as given; after a repair's cut, as cut)
    present = {s.session_id for s in sessions} if repair else set(q.session_ids)
    answer_ids: list[str] = []
    for session_id in q.answer_session_ids:
        if session_id in present:
            answer_ids.append(session_id)
            continue
        problem(
            f"answer session {quote(session_id)} is not in the haystack",
            f"answer session {quote(session_id)} dropped from answer_session_ids: not in the haystack "
            "(judgments come from the haystack)",
        )

    # dates: the parser's own reason when unreadable; a wrong weekday is read and noted (the harness never reads dates)
    notes: list[str] = []

    def read_date(value: str, session: _Session | None) -> datetime | None:
        """The date ``value`` (of ``session``, or the question's); a problem or a note names it (messages made
        only then: a question of LongMemEval-M has 500 sessions)."""
        try:
            parsed, mismatch = _read_date(value)
        except ParameterError as err:
            what, unknown = date_words(value, session)
            problem(f"{what} {err.problem}; {err.allowed}", f"{unknown}: {what} {err.problem}")
            return None
        if mismatch is not None:
            what, _ = date_words(value, session)
            notes.append(f"{what} {mismatch}: read as the date it names (the official harness never reads dates)")
        return parsed

    def date_words(value: str, session: _Session | None) -> tuple[str, str]:
        if session is None:
            return f"question_date {quote(value)}", "the question has no known date"
        sid = quote(session.session_id)
        return f"date {quote(value)} of session {sid}", f"session {sid} has no known date"

    dates: dict[int, datetime | None] = {}
    for session in sessions:
        dates[session.position] = read_date(session.date, session)
    asked_at = read_date(q.question_date, None)

    # has_answer on the user turns of answer sessions (the official harness asserts it)
    for session in sessions:
        if not _is_answer_session(session.session_id):
            continue
        for number, turn in enumerate(session.turns, start=1):
            if turn.role == "user" and turn.has_answer is None:
                problem(
                    f"user turn {number} of answer session {quote(session.session_id)} has no has_answer "
                    "(the official harness requires it)",
                    f"user turn {number} of answer session {quote(session.session_id)} has no has_answer: read as false",
                )
    return _Checked(sessions, answer_ids, dates, asked_at, changes, problems, notes)


# --- entries and judgments -----------------------------------------------------------------------------


class _ById(Mapping[str, MemoryEntry]):
    """Entry id -> the entry (a record made when asked) of a collection's columns."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Entries) -> None:
        self._entries = entries

    def __getitem__(self, entry_id: str) -> MemoryEntry:
        return self._entries[self._entries.positions[entry_id]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries.ids)

    def __len__(self) -> int:
        return len(self._entries)


def _renamed(corpus_id: str) -> str:
    """The official renaming of a non-evidence item of an answer session: ``answer`` -> ``noans``."""
    return corpus_id.replace("answer", "noans")


class _SessionTurns(Mapping[str, tuple[MemoryEntry, ...]]):
    """Session entry id -> its turns as entries, built on access from the entry's text and the turns' spans.

    ``spans[entry_id]`` holds four integers per indexed turn: its number, the
    start and end of its content in the session text, and flags
    (2: an assistant turn, 1: ``has_answer`` true).
    """

    def __init__(self, entries: Mapping[str, MemoryEntry], spans: Mapping[str, array]) -> None:
        self._entries = entries
        self._spans = spans

    def __getitem__(self, entry_id: str) -> tuple[MemoryEntry, ...]:
        spans = self._spans[entry_id]
        session = self._entries[entry_id]
        sid = session.metadata["session_id"]
        prefix = session.metadata["question_id"] + "/"
        answer_named = _is_answer_session(sid)
        turns = []
        for at in range(0, len(spans), 4):
            number, start, end, flags = spans[at : at + 4]
            role = "assistant" if flags & 2 else "user"
            corpus_id = f"{sid}_{number}"
            if answer_named and not flags & 1:
                corpus_id = _renamed(corpus_id)
            turns.append(
                MemoryEntry._trusted(  # the fields of the checked session entry and turn
                    id=prefix + corpus_id,
                    text=session.text[start:end],
                    created_at=session.created_at,
                    provenance=Provenance(source="conversation", ref=sid, actor=role),
                    scope=session.scope,
                    metadata=LayeredRow(session.metadata, {"turn": number, "role": role}),
                )
            )
        return tuple(turns)

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)


class _Rows:
    """Entries as columns, appended session by session: no record per entry (a LongMemEval-M collection at turn
    level has millions).  A session's fields are stored once: its date, its provenance per role and its
    metadata mapping are values of the session's code (``created_at``, ``provenance`` and the metadata's base
    are :class:`~agentmemory.collection.columns.Codes`); a turn adds only its number and role."""

    __slots__ = ("ascii", "buf", "dates", "ends", "ids", "metas", "prov_codes", "provs", "role_codes", "scope_codes",
                 "scopes", "session_codes", "starts", "texts", "turn_level", "turns")  # fmt: skip

    def __init__(self, turn_level: bool) -> None:
        self.turn_level = turn_level
        self.ids: list[str] = []
        self.texts: list[str] = []  # a question's texts, until extend() moves them into the buffer
        self.buf = bytearray()  # every text's UTF-8, one after the other (BufferTexts)
        self.starts = array("q")
        self.ends = array("q")
        self.ascii = array("b")
        self.session_codes = array("i")  # row -> its session (date, metadata)
        self.dates: list[datetime | None] = []
        self.metas: list[Mapping[str, Any]] = []
        self.prov_codes = array("i")  # row -> its provenance
        self.provs: list[Provenance] = []
        self.scope_codes = array("i")
        self.scopes: list[str] = []
        self.turns = array("i")  # turn level: each row's turn number and role (0 user, 1 assistant)
        self.role_codes = array("b")

    def extend(self, other: _Rows) -> None:
        """Append ``other``'s rows (a question's), its codes moved past this one's values, its texts encoded into
        the buffer."""
        self.ids.extend(other.ids)
        self._encode(other.texts)
        coded: tuple[tuple[array, list[Any], array, list[Any]], ...] = (
            (self.session_codes, self.dates, other.session_codes, other.dates),
            (self.prov_codes, self.provs, other.prov_codes, other.provs),
            (self.scope_codes, self.scopes, other.scope_codes, other.scopes),
        )
        for codes, values, more_codes, more_values in coded:
            shift = len(values)
            codes.extend(more_codes if not shift else array("i", [c + shift for c in more_codes]))
            values.extend(more_values)
        self.metas.extend(other.metas)
        self.turns.extend(other.turns)
        self.role_codes.extend(other.role_codes)

    def _encode(self, texts: list[str]) -> None:
        """Append ``texts``' UTF-8 to the buffer, with their spans and ASCII flags."""
        joined = "".join(texts)
        if joined.isascii():  # one encode; a text's bytes are its characters
            data = joined.encode("ascii")
            widths: Any = map(len, texts)
            self.ascii.extend(bytes([1]) * len(texts))
        else:
            encoded = [t.encode("utf-8") for t in texts]
            data = b"".join(encoded)
            widths = map(len, encoded)
            self.ascii.extend(map(str.isascii, texts))
        at = len(self.buf)
        for width in widths:
            self.starts.append(at)
            at += width
            self.ends.append(at)
        self.buf += data

    def entries(self) -> Entries:
        """The rows as :class:`~agentmemory.collection.columns.Entries` (the columns every reader makes, the
        records made when asked)."""
        import numpy as np

        def codes(values: array) -> np.ndarray:
            return np.frombuffer(values, dtype=np.int32).copy() if len(values) else np.empty(0, dtype=np.int32)

        if self.texts:  # rows appended directly, not through extend()
            self._encode(self.texts)
            self.texts = []
        sessions = codes(self.session_codes)
        columns: dict[str, Any] = {}
        if any(d is not None for d in self.dates):
            columns["created_at"] = Codes(sessions, self.dates)
        if self.ids:
            columns["provenance"] = Codes(codes(self.prov_codes), self.provs)
            columns["scope"] = Codes(codes(self.scope_codes), self.scopes)
            own: dict[str, Codes] = {}
            if self.turn_level:
                turns = codes(self.turns)
                own["turn"] = Codes(turns, range(int(turns.max()) + 1))
                own["role"] = Codes(np.frombuffer(self.role_codes, dtype=np.int8).astype(np.int32), _ROLES)
            columns["metadata"] = Layered(Codes(sessions, self.metas), own)
        texts = BufferTexts(
            self.buf,
            np.frombuffer(self.starts, dtype=np.int64).copy(),
            np.frombuffer(self.ends, dtype=np.int64).copy(),
            np.frombuffer(self.ascii, dtype=np.int8).astype(bool),
        )
        return Entries(self.ids, texts, **columns)


class _Built(NamedTuple):
    rows: _Rows  # the question's entries, as columns
    spans: dict[str, array]  # session granularity: entry id -> its turns' spans (see _SessionTurns)
    gold: list[str]  # entry ids
    judged_sessions: list[str]  # session ids with a gold item, in haystack order
    collisions: list[str]


class _Item(NamedTuple):
    """One entry-to-be of a session: its corpus id, text, turn number (0: the whole session), role (``None``:
    several) and judgment."""

    corpus_id: str
    text: str
    turn: int
    role: str | None
    evidence: bool
    renamed: bool


def _session_item(session: Any, answer_named: bool, all_turns: bool) -> tuple[_Item, array]:
    """A session as one entry (its text per the official join) and its turns' spans in that text.

    The spans are four integers per indexed turn: its number, where its content starts and ends in the
    session text, and ``2 * (assistant) + has_answer`` (``systems.turns`` cuts the turns out of the text).
    """
    parts = array("q")
    offset = 0  # where the next turn's line or content starts in the session text
    for number, turn in enumerate(session.turns, start=1):
        if all_turns or turn.role == "user":
            start = offset + (len(turn.role) + 2 if all_turns else 0)  # all_turns: "<role>: " first
            end = start + len(turn.content)
            parts.extend((number, start, end, 2 * (turn.role == "assistant") + bool(turn.has_answer)))
            offset = end + 1  # the joining space or newline
    evidence = answer_named and any(t.has_answer for t in session.turns if all_turns or t.role == "user")
    renamed = answer_named and not evidence
    if all_turns:
        text = "\n".join(f"{t.role}: {t.content}" for t in session.turns)
    else:
        text = " ".join(t.content for t in session.turns if t.role == "user")
    corpus_id = _renamed(session.session_id) if renamed else session.session_id
    return _Item(corpus_id, text, 0, None if all_turns else "user", evidence, renamed), parts


def _turn_items(session: Any, answer_named: bool, all_turns: bool) -> list[_Item]:
    """A session's indexed turns as entries ``<session_id>_<n>`` (numbered over all turns), renamed as officially."""
    items = []
    sid = session.session_id
    for number, turn in enumerate(session.turns, start=1):
        if not (all_turns or turn.role == "user"):
            continue
        evidence = answer_named and bool(turn.has_answer)
        renamed = answer_named and not evidence
        corpus_id = _renamed(f"{sid}_{number}") if renamed else f"{sid}_{number}"
        items.append(_Item(corpus_id, turn.content, number, turn.role, evidence, renamed))
    return items


def _build(q: _Question, checked: _Checked, *, granularity: str, all_turns: bool) -> _Built:
    rows = _Rows(granularity == "turn")
    gold: list[str] = []
    judged: list[str] = []
    taken: dict[str, str] = {}
    collisions: list[str] = []
    spans: dict[str, array] = {}
    prefix = q.question_id + "/"
    rows.scopes.append(q.question_id)  # every row's scope: code 0
    for session in checked.sessions:
        sid = session.session_id
        answer_named = _is_answer_session(sid)
        meta: Mapping[str, Any] = MappingProxyType(
            {
                "question_id": q.question_id,
                "session_id": sid,
                "session_position": session.position,
                "session_date": session.date,
            }
        )
        parts = array("q")
        if granularity == "session":
            item, parts = _session_item(session, answer_named, all_turns)
            items = [item]
        else:
            items = _turn_items(session, answer_named, all_turns)
        code = len(rows.metas)  # the session's date and metadata
        rows.metas.append(meta)
        rows.dates.append(checked.dates[session.position])
        provenance: dict[str | None, int] = {}  # role -> the code of its provenance
        for role in dict.fromkeys(i.role for i in items):
            provenance[role] = len(rows.provs)
            # every field checked above (the session id, the role): no check again
            rows.provs.append(_trusted(Provenance, {"source": "conversation", "ref": sid, "actor": role}))
        kept = []
        for item in items:
            if item.corpus_id in taken:
                collisions.append(
                    f"corpus id {quote(item.corpus_id)} of session {quote(sid)} is also the id of an item of session "
                    f"{quote(taken[item.corpus_id])}"
                    + (" (after the official renaming to noans)" if item.renamed else "")
                )
                continue
            taken[item.corpus_id] = sid
            kept.append(item)
        # the session's rows at once (every field checked above, with its JSON path)
        ids = [prefix + item.corpus_id for item in kept]
        rows.ids += ids
        rows.texts += [item.text for item in kept]
        rows.session_codes.extend(repeat(code, len(kept)))
        rows.prov_codes.extend([provenance[item.role] for item in kept])
        rows.scope_codes.extend(repeat(0, len(kept)))
        if rows.turn_level:
            rows.turns.extend([item.turn for item in kept])
            rows.role_codes.extend([item.role == "assistant" for item in kept])
        evidence = [entry_id for entry_id, item in zip(ids, kept) if item.evidence]
        if evidence:
            gold += evidence
            judged.append(sid)
        if granularity == "session":
            spans.update(dict.fromkeys(ids, parts))
    return _Built(rows, spans, gold, judged, collisions)


def _has_target(sessions: list[_Session], all_turns: bool) -> bool:
    """The official test for a question with targets: some user turn (``all_turns``: turn) has ``has_answer`` true."""
    return any(t.has_answer for s in sessions for t in s.turns if all_turns or t.role == "user")


def _cross_check(checked: _Checked, built: _Built, all_turns: bool) -> list[str]:
    """Every disagreement between the judged sessions and ``answer_session_ids``."""
    listed = set(checked.answer_session_ids)
    judged = set(built.judged_sessions)
    which = "turns" if all_turns else "user turns"
    notes = []
    for session in checked.sessions:
        sid = session.session_id
        marked = any(t.has_answer for t in session.turns if all_turns or t.role == "user")
        if sid in listed and sid not in judged:
            if not _is_answer_session(sid):
                notes.append(f"answer session {quote(sid)} is not judged: its id does not contain 'answer'")
            else:
                notes.append(
                    f"answer session {quote(sid)} is not judged: none of its {which} has has_answer: true, so the official "
                    f"harness renames it {quote(_renamed(sid))}"
                )
        elif sid in judged and sid not in listed:
            notes.append(f"session {quote(sid)} is judged (its id contains 'answer') but is not in answer_session_ids")
        elif marked and sid not in judged and sid not in listed:
            notes.append(
                f"session {quote(sid)} has {which} with has_answer: true but is not judged: its id lacks 'answer'"
            )
    return notes


def load_longmemeval(
    path: str | PathLike[str],
    *,
    granularity: str = "session",
    all_turns: bool = False,
    user_turns_only: bool = False,
    repair: bool = False,
    progress: bool = False,
) -> Collection:
    """Load a LongMemEval file (a list of questions, or one question object) as a collection.

    See the module docstring for the exact mapping.  ``granularity`` is
    ``"session"`` or ``"turn"``; ``all_turns`` indexes the assistant's turns
    too (not the official setting); ``user_turns_only`` states the default
    (user turns only) explicitly and cannot be combined with ``all_turns``;
    ``repair`` repairs malformed questions where a repair is unambiguous
    (every change in ``repairs``) instead of skipping them; ``progress``
    shows a bar over the questions.

    The collection's ``name`` is the file's stem, ``files`` maps the file's
    name to its sha256, ``settings`` records ``granularity`` and
    ``indexed_turns`` (``"user"`` or ``"all"``), ``skipped`` every question
    left out with its reason, ``repairs`` every change and ``notes`` every
    disagreement with ``answer_session_ids`` and every date whose weekday is not its date's.

    Raises:
        MissingFileError: ``path`` does not exist.
        InputError: the file is not UTF-8 JSON (with the line) or not
            LongMemEval-shaped (with the JSON path of the first wrong field).
        UnknownNameError: ``granularity`` is not ``session`` or ``turn``.
        ParameterError: ``all_turns`` and ``user_turns_only`` are both set.
    """
    if granularity not in GRANULARITIES:
        raise UnknownNameError("granularity", granularity, GRANULARITIES)
    if all_turns and user_turns_only:
        raise ParameterError(
            "all_turns",
            all_turns,
            "contradicts user_turns_only=True",
            "index the user's turns only (the official setting, the default) or all turns, not both",
        )
    source = Path(path)
    collecting = gc.isenabled()
    gc.disable()  # millions of acyclic objects: the cyclic collector would only rescan them (half the load time)
    try:
        collection = _load(source, granularity=granularity, all_turns=all_turns, repair=repair, progress=progress)
    finally:
        if collecting:
            gc.enable()
    read_with = {
        "granularity": granularity,
        "all_turns": all_turns,
        "user_turns_only": user_turns_only,
        "repair": repair,
    }
    return dataclasses.replace(collection, format="longmemeval", format_options=MappingProxyType(read_with))


def _load(source: Path, *, granularity: str, all_turns: bool, repair: bool, progress: bool) -> Collection:
    text, sha = _read_json(source)
    rows = _Rows(granularity == "turn")
    queries: list[Query] = []
    qrels: dict[str, Mapping[str, int]] = {}
    skipped: list[tuple[str, str]] = []
    repairs: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    spans: dict[str, array] = {}
    which = "turn" if all_turns else "user turn"
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(text), desc=f"load {source.name}", unit=" chars", unit_scale=True)
    left_out: list[Query] = []
    seen: dict[str, str] = {}
    # each question is parsed, checked and turned into entries before the next is parsed: never the whole
    # document's objects at once
    for where, item, share in _items(source, text):
        q = _question(source, where, item)
        del item
        if bar is not None:
            bar.update(round(share * len(text)) - bar.n)
        qid = q.question_id
        if qid in seen:
            raise InputError(source, None, f"{where}.question_id: {quote(qid)} repeats the question_id of {seen[qid]}")
        seen[qid] = where
        if is_abstention(qid):
            skipped.append(
                (qid, "abstention question ('_abs' in its id): the official retrieval scripts leave these out")
            )
            left_out.append(_query(q, _question_date(q.question_date)))
            continue
        checked = _check(q, repair=repair, all_turns=all_turns)
        if checked.problems:
            skipped.append((qid, "; ".join(checked.problems)))
            continue
        built = _build(q, checked, granularity=granularity, all_turns=all_turns)
        if built.collisions:
            skipped.append((qid, "; ".join(built.collisions)))
            continue
        if not _has_target(checked.sessions, all_turns):
            skipped.append(
                (
                    qid,
                    f"no {which} has has_answer: true (no target turns): the official run_retrieval.py leaves "
                    "such questions out of its means",
                )
            )
            left_out.append(_query(q, checked.asked_at))
            continue
        if not built.gold:
            skipped.append(
                (
                    qid,
                    f"nothing to judge: every {which} with has_answer: true is in a session whose id lacks 'answer' "
                    "(the official harness would average in recall_all 1, recall_any 0, ndcg_any 0)",
                )
            )
            left_out.append(_query(q, checked.asked_at))
            continue
        repairs.extend((qid, change) for change in checked.changes)
        notes.extend((qid, note) for note in [*checked.notes, *_cross_check(checked, built, all_turns)])
        rows.extend(built.rows)
        spans.update(built.spans)
        queries.append(_query(q, checked.asked_at))
        qrels[qid] = MappingProxyType(dict.fromkeys(built.gold, 1))

    if bar is not None:
        bar.update(bar.total - bar.n)  # the text after the last question (the closing bracket) read too
        bar.close()
    del text
    entries = rows.entries()
    del rows
    return Collection(
        name=source.stem,
        entries=entries,
        queries=tuple(queries),
        qrels=MappingProxyType(qrels),
        files=MappingProxyType({source.name: sha}),
        skipped=tuple(skipped),
        repairs=tuple(repairs),
        notes=tuple(notes),
        settings=MappingProxyType({"granularity": granularity, "indexed_turns": "all" if all_turns else "user"}),
        granularity=granularity,
        turns=_SessionTurns(_ById(entries), spans) if spans else {},
        session_of=longmemeval_session_of,
        left_out_queries=tuple(left_out),
    )


def _query(q: _Question, asked_at: datetime | None) -> Query:
    """The query of question ``q``, asked at ``asked_at`` (see the module docstring)."""
    return Query._trusted(
        id=q.question_id,
        text=q.question,
        tags=None,
        scope=q.question_id,
        group=q.question_type,
        asked_at=asked_at,
        metadata=MappingProxyType(
            {
                "question_type": q.question_type,
                "question_date": q.question_date,
                "answer": q.answer,
                "answer_session_ids": tuple(q.answer_session_ids),
            }
        ),
    )


def _question_date(value: str) -> datetime | None:
    """A question's date as :func:`_read_date` reads it, ``None`` when it cannot (an abstention question is not
    checked further: its haystack is not loaded)."""
    try:
        return _read_date(value)[0]
    except ParameterError:
        return None


_KEYS = ("question_id", "haystack_sessions")


def recognise(path: Path) -> bool:
    """True for a ``.json`` file whose first record has the keys ``question_id`` and ``haystack_sessions``."""
    return path.is_file() and path.suffix.lower() == ".json" and first_record_has_keys(path, _KEYS)


def read(
    path: Path, *, granularity: str, all_turns: bool, user_turns_only: bool, repair: bool, progress: bool
) -> Collection:
    """The ``longmemeval`` format's reader: :func:`load_longmemeval`."""
    return load_longmemeval(
        path,
        granularity=granularity,
        all_turns=all_turns,
        user_turns_only=user_turns_only,
        repair=repair,
        progress=progress,
    )


FORMAT = Format(
    name="longmemeval",
    recognise=recognise,
    read=read,
    options=(
        FormatOption(
            "granularity", str, "session", "one entry per haystack session (the default) or per turn: session or turn"
        ),
        FormatOption(
            "all_turns", bool, False, "index the assistant's turns too (the official harness indexes the user's)"
        ),
        FormatOption("user_turns_only", bool, False, "index the user's turns only (the default, stated explicitly)"),
        FormatOption("repair", bool, False, "repair malformed questions where unambiguous, listing every change"),
    ),
    description="a LongMemEval JSON file: longmemeval_s/m/oracle (cleaned or original), or one question object",
    rule="a .json file whose first list item, or top-level object, has the keys 'question_id' and 'haystack_sessions'",
)
"""The ``longmemeval`` format's declaration, registered by :mod:`agentmemory.datasets`."""
