"""Matching an answer file's records to a collection's questions: :func:`match_answers`.

A record is matched to one question of the collection by one **key**
(:data:`MATCH_KEYS`):

* ``id``: the record's ``question_id`` is the question's id (LoCoMo's
  ``conv-26/q3``; LongMemEval's ``question_id``);
* ``text``: the record's question, white space normalised (runs of white
  space made one space, ends stripped; case kept), is the text of a question
  of the record's conversation (of the whole collection when the record names
  none); the k-th record with a text in a conversation matches the k-th
  question with that text there (LoCoMo repeats a few questions);
* ``position-all``: the record's ``position`` is the question's 0-based index
  among **all** questions of the conversation, in the dataset's order;
* ``position-headline``: the same, counting only the **headline** questions:
  those whose group the collection does not leave out of its headline means
  (``Collection.headline_excludes``: LoCoMo's category 5, which most
  harnesses drop, so their positions skip it).

A record's conversation is a scope of the collection named by key
(``conv-26``) or by its 0-based index in the order the collection's
conversations come in (the file's order: the scopes of the entries, then
of the questions, in first appearance); a record without one is matched
against the whole collection by id or text, and by position only when the
collection has one conversation at most.  Within a conversation, questions are in the
dataset's order: by the number their ids end with when every id of the
conversation ends with one (LoCoMo's ``q<i>``), else in the collection's order.

**Text check.**  Whatever the key, a record that carries its question's text
must carry the text of the question it matched (normalised as above), or the
whole file is refused in one line naming the file, the record and both texts.

**key="auto"** tries ``id``, ``text``, ``position-all``, ``position-headline``
in that order and takes the first under which more than half of the records
match, none of them disagrees with its question's text, and no two match one
question; :attr:`Matched.how` says which, and why the ones before it failed.

**Refusals** (:class:`~agentmemory.errors.InputError`, one line naming the file):
a question's text that disagrees; two records matching one question; a file
more than half of whose records match nothing (a file for another dataset);
a file without records.  A file that covers part of the collection (one
conversation) is matched: :attr:`Matched.missing` lists the questions left.

**Questions the loader left out** (``Collection.skipped``: malformed
evidence, LongMemEval's abstention questions): records for them are matched,
not "unmatched": each is listed in :attr:`Matched.left_out` with
``question left out by the loader: <reason>``, and is in
:attr:`Matched.by_query` too when the collection carries those questions'
records (``Collection.left_out_queries``).  Without those records their text
and group are unknown: their ids still count for positions (a LoCoMo id
``<sample_id>/q<i>`` gives the conversation and the place), but a headline
position after one in its conversation is uncertain, and such a record is
unmatched, saying why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from agentmemory.answers.records import AnswerFile, AnswerRecord
from agentmemory.collection import Collection
from agentmemory.errors import InputError, ParameterError, quote

__all__ = ["MATCH_KEYS", "Matched", "match_answers", "normalise"]

MATCH_KEYS: tuple[str, ...] = ("auto", "id", "text", "position-all", "position-headline")
"""The keys :func:`match_answers` takes; ``auto`` tries the others in this order."""

_RULES = MATCH_KEYS[1:]
_TRAILING_NUMBER = re.compile(r"([0-9]+)$")


def normalise(text: str) -> str:
    """``text`` with every run of white space made one space and the ends stripped (case kept)."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Matched:
    """An answer file's records matched to a collection's questions (module docstring).

    Attributes:
        key: the key that matched (``"text"``; never ``"auto"``).
        by_query: question id -> its record, in the collection's question order.
        unmatched: ``(where, reason)`` of each record that matches no question.
        missing: the ids of the collection's questions (``Collection.queries``) with no record.
        keys: which key matched how many records (left-out questions included).
        left_out: ``(question id, "question left out by the loader: <reason>")`` of
            each record matched to a question the loader left out.
        how: one sentence: the key, and under ``auto`` why the keys tried before it did not fit.
    """

    key: str
    by_query: Mapping[str, AnswerRecord]
    unmatched: tuple[tuple[str, str], ...]
    missing: tuple[str, ...]
    keys: Mapping[str, int] = field(default_factory=dict)
    left_out: tuple[tuple[str, str], ...] = ()
    how: str = ""


@dataclass(frozen=True)
class _Question:
    """A question a record can match: kept (``left_out is None``) or left out by the loader."""

    id: str
    scope: str | None
    text: str | None  # None: unknown (a left-out question without its record)
    headline: bool | None  # None: unknown
    left_out: str | None = None
    known: bool = True  # the collection carries its Query record


class _Questions:
    """The collection's questions, kept and left out, indexed for every key."""

    def __init__(self, collection: Collection) -> None:
        excluded = set(collection.headline_excludes)
        reasons = dict(collection.skipped)
        kept = [_Question(q.id, q.scope, q.text, q.group not in excluded) for q in collection.queries]
        records = collection.left_out_queries  # the loader's records of what it left out, where it keeps them
        left = [
            _Question(q.id, q.scope, q.text, q.group not in excluded, reasons.get(q.id, "left out")) for q in records
        ]
        carried = {q.id for q in records}
        left += [  # left out without a record (a format that keeps none): the id and reason alone
            _Question(qid, qid.rsplit("/", 1)[0] if "/" in qid else qid, None, None, reason, known=False)
            for qid, reason in collection.skipped
            if qid not in carried
        ]
        questions = kept + left
        self.by_id = {q.id: q for q in questions}
        order = [e.scope for e in collection.entries] + [q.scope for q in questions]
        self.scopes: list[str | None] = [s for s in dict.fromkeys(order) if s is not None]
        grouped: dict[str | None, list[_Question]] = {}
        for q in questions:
            grouped.setdefault(q.scope, []).append(q)
        self.in_scope = {scope: _ordered(items) for scope, items in grouped.items()}
        self.everything = [q for scope in [*self.scopes, None] for q in self.in_scope.get(scope, [])]
        self.kept_ids = [q.id for q in collection.queries]
        self._texts: dict[tuple[str | None, bool], dict[str, list[_Question]]] = {}

    def questions(self, scope: str | None, whole: bool) -> list[_Question]:
        return self.everything if whole else self.in_scope.get(scope, [])

    def with_text(self, scope: str | None, whole: bool, text: str) -> list[_Question]:
        """The questions of the scope (or of the whole collection) whose normalised text is ``text``, in order."""
        key = (None if whole else scope, whole)
        if key not in self._texts:
            index: dict[str, list[_Question]] = {}
            for q in self.questions(scope, whole):
                if q.text is not None:
                    index.setdefault(normalise(q.text), []).append(q)
            self._texts[key] = index
        return self._texts[key].get(text, [])

    def scope_of(self, record: AnswerRecord) -> tuple[str | None, bool, str | None]:
        """``(scope, whole collection?, reason it names none)`` of a record's conversation."""
        conv = record.conversation
        if conv is None:
            return None, True, None
        if isinstance(conv, int):
            if conv < len(self.scopes):
                return self.scopes[conv], False, None
            return None, False, f"conversation {conv} is beyond the collection's {len(self.scopes)} conversations"
        if conv in self.in_scope:
            return conv, False, None
        return None, False, f"conversation {quote(conv)} is not one of the collection's"


def _ordered(questions: list[_Question]) -> list[_Question]:
    """The dataset's order: by the ids' trailing numbers when every id has one, else as given."""
    numbers = [_TRAILING_NUMBER.search(q.id) for q in questions]
    if all(numbers):
        return [q for _, q in sorted(zip((int(n[1]) for n in numbers if n), questions), key=lambda p: p[0])]
    return list(questions)


@dataclass
class _Attempt:
    """What one key made of the records: matches, and each kind of failure."""

    rule: str
    matched: list[tuple[AnswerRecord, _Question]] = field(default_factory=list)
    unmatched: list[tuple[str, str]] = field(default_factory=list)
    disagree: list[tuple[AnswerRecord, _Question]] = field(default_factory=list)
    twice: list[tuple[AnswerRecord, AnswerRecord, _Question]] = field(default_factory=list)
    applicable: bool = True

    def fits(self, total: int) -> bool:
        return self.applicable and 2 * len(self.matched) > total and not self.disagree and not self.twice


def _attempt(rule: str, records: Sequence[AnswerRecord], qs: _Questions) -> _Attempt:
    attempt = _Attempt(rule)
    taken: dict[str, AnswerRecord] = {}
    seen: dict[tuple[str | None, bool, str], int] = {}
    for record in records:
        found = _find(rule, record, qs, seen)
        if isinstance(found, str):
            attempt.unmatched.append((record.where, found))
            continue
        if found.id in taken:
            attempt.twice.append((taken[found.id], record, found))
            continue
        taken[found.id] = record
        if record.question is not None and found.text is not None:
            if normalise(record.question) != normalise(found.text):
                attempt.disagree.append((record, found))
        attempt.matched.append((record, found))
    if rule == "id":
        attempt.applicable = any(r.question_id is not None for r in records)
    elif rule == "text":
        attempt.applicable = any(r.question is not None for r in records)
    return attempt


def _find(
    rule: str, record: AnswerRecord, qs: _Questions, seen: dict[tuple[str | None, bool, str], int]
) -> _Question | str:
    """The question ``record`` matches under ``rule``, or why it matches none."""
    if rule == "id":
        if record.question_id is None:
            return "carries no question id"
        found = qs.by_id.get(record.question_id)
        return found if found is not None else f"no question has the id {quote(record.question_id)}"
    scope, whole, problem = qs.scope_of(record)
    if problem is not None:
        return problem
    pool = qs.questions(scope, whole)
    where = "the collection" if whole else str(scope)
    if rule == "text":
        if record.question is None:
            return "carries no question text"
        text = normalise(record.question)
        same = qs.with_text(scope, whole, text)
        k = seen.get((scope, whole, text), 0)
        seen[(scope, whole, text)] = k + 1
        if not same:
            unknown = sum(q.text is None for q in pool)
            if unknown:
                were = "question of it was" if unknown == 1 else "questions of it were"
                return f"no question of {where} has this text; {unknown} {were} left out by the loader, text unknown"
            return f"no question of {where} has this text"
        return same[min(k, len(same) - 1)]  # one more record than questions: the last is taken twice (refused)
    if record.position is None:
        return "carries no position"
    if whole and len(qs.scopes) > 1:
        return (
            f"carries no conversation; a position counts within one of the collection's {len(qs.scopes)} conversations"
        )
    if rule == "position-all":
        if record.position >= len(pool):
            return f"position {record.position} is beyond the {len(pool)} questions of {where}"
        return pool[record.position]
    return _headline(record.position, pool, where)


def _headline(position: int, pool: Sequence[_Question], where: str) -> _Question | str:
    count = -1
    for q in pool:
        if q.headline is None:
            return (
                f"its headline position is uncertain: {q.id}, before it in {where}, was left out by the loader "
                "and its group is unknown"
            )
        if q.headline:
            count += 1
            if count == position:
                return q
    return f"position {position} is beyond the {count + 1} headline questions of {where}"


def _refusal(path: str, attempt: _Attempt, collection: Collection, total: int) -> InputError | None:
    """The one-line refusal a key's attempt calls for (``None`` when it fits)."""
    if attempt.disagree:
        record, question = attempt.disagree[0]
        return InputError(
            path,
            None,
            f"{record.where}: the question {quote(record.question)} is not the collection's {question.id}, "
            f"{quote(question.text)} (matched by {attempt.rule}); the texts must agree once white space is "
            "normalised: is the file made from another version of the dataset, or matched by the wrong key?",
        )
    if attempt.twice:
        first, second, question = attempt.twice[0]
        return InputError(
            path,
            None,
            f"{first.where} and {second.where} both match {question.id} (by {attempt.rule}); each question takes one record",
        )
    if 2 * len(attempt.unmatched) > total:
        where, reason = attempt.unmatched[0]
        return InputError(
            path,
            None,
            f"{len(attempt.unmatched):,} of {total:,} records match no question of {quote(collection.name)} "
            f"(by {attempt.rule}; e.g. {where}: {reason}): the file answers another dataset's questions; "
            "match it to the collection it was made for",
        )
    return None


def _summary(attempt: _Attempt, total: int) -> str:
    if not attempt.applicable:
        return f"{attempt.rule}: no record carries " + ("an id" if attempt.rule == "id" else "a question text")
    if attempt.disagree:
        record, question = attempt.disagree[0]
        return f"{attempt.rule}: {len(attempt.disagree):,} disagree with their question's text (first {record.where} vs {question.id})"
    if attempt.twice:
        first, second, question = attempt.twice[0]
        return f"{attempt.rule}: {first.where} and {second.where} both match {question.id}"
    return f"{attempt.rule}: {len(attempt.matched):,} of {total:,} records match"


def _result(attempt: _Attempt, qs: _Questions, how: str) -> Matched:
    by_found = {q.id: (r, q) for r, q in attempt.matched}
    order = [q.id for q in qs.everything if q.id in by_found]
    by_query = {qid: by_found[qid][0] for qid in order if by_found[qid][1].known}
    left_out = tuple(
        (qid, f"question left out by the loader: {by_found[qid][1].left_out}")
        for qid in order
        if by_found[qid][1].left_out is not None
    )
    missing = tuple(qid for qid in qs.kept_ids if qid not in by_found)
    return Matched(
        key=attempt.rule,
        by_query=MappingProxyType(by_query),
        unmatched=tuple(attempt.unmatched),
        missing=missing,
        keys=MappingProxyType({attempt.rule: len(attempt.matched)}),
        left_out=left_out,
        how=how,
    )


def match_answers(answers: AnswerFile, collection: Collection, *, key: str = "auto") -> Matched:
    """Match ``answers``' records to ``collection``'s questions (module docstring).

    Args:
        answers: the records, from :func:`~agentmemory.answers.formats.read_answers`.
        collection: the collection the file was made for.
        key: one of :data:`MATCH_KEYS`.

    Raises:
        ParameterError: ``key`` is not one of :data:`MATCH_KEYS`.
        InputError: a question's text disagrees, two records match one
            question, more than half of the records match nothing (under
            ``auto``: under every key), or the file holds no records.
    """
    if key not in MATCH_KEYS:
        raise ParameterError("key", key, "is not a matching key", "choose from: " + ", ".join(MATCH_KEYS))
    path = answers.paths[0] if answers.paths else answers.name
    records = answers.records
    if not records:
        raise InputError(path, None, "holds no answer records; nothing to match")
    qs = _Questions(collection)
    total = len(records)
    if key != "auto":
        attempt = _attempt(key, records, qs)
        refusal = _refusal(path, attempt, collection, total)
        if refusal is not None:
            raise refusal
        return _result(attempt, qs, f"matched {len(attempt.matched):,} of {total:,} records by {key}")
    tried: list[_Attempt] = []
    for rule in _RULES:
        attempt = _attempt(rule, records, qs)
        if attempt.fits(total):
            before = "; ".join(_summary(a, total) for a in tried)
            how = f"matched {len(attempt.matched):,} of {total:,} records by {rule}" + (
                f" (auto: {before})" if before else " (auto: the first key tried)"
            )
            if not any(r.question is not None for r in records):
                how += "; no record carries its question's text, so no match was checked against it"
            return _result(attempt, qs, how)
        tried.append(attempt)
    for attempt in tried:  # the first key that matched most records says why it was refused
        if attempt.applicable and 2 * len(attempt.matched) > total:
            refusal = _refusal(path, attempt, collection, total)
            if refusal is not None:
                raise refusal
    best = max((a for a in tried if a.applicable), key=lambda a: len(a.matched), default=tried[0])
    where, reason = best.unmatched[0] if best.unmatched else ("", "")
    raise InputError(
        path,
        None,
        f"most records match no question of {quote(collection.name)} by any key ("
        + "; ".join(_summary(a, total) for a in tried)
        + (f"; e.g. {where} by {best.rule}: {reason}" if where else "")
        + "): the file answers another dataset's questions; match it to the collection it was made for",
    )
