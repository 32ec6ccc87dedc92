"""Judgment patches: documented corrections to a collection's judgments and answer key (``--qrels-patch FILE``).

Every benchmark has label errors (LoCoMo's tracker lists some: evidence
that names the wrong turn, an answer in a turn the evidence leaves out; an
audit found 6% of its gold answers wrong).  A patch states each correction
with its reason, so a number computed under corrected judgments says which
corrections it took, and the original judgments' numbers can stand beside it.

**The file** is JSON lines, one correction per line (blank lines skipped),
each with ``query_id`` and a required ``reason``, and one of four kinds::

    {"query_id": "conv-1/q0", "entry_id": "conv-1/D1:4", "grade": 1, "reason": "the answer is in D1:4"}
    {"query_id": "conv-1/q1", "entry_id": "conv-1/D2:1", "grade": "remove", "reason": "D2:1 says nothing of it"}
    {"query_id": "conv-1/q2", "answer": "In June 2023", "reason": "D3:2 says June, not July"}
    {"query_id": "conv-1/q3", "exclude": true, "reason": "the question asks what the transcript never says"}
    {"query_id": "conv-1/q4", "evidence": ["D1:3", "D2:5"], "reason": "D1:3 and D2:5 hold the answer"}

* a **grade** (``entry_id`` and ``grade``): the new integer grade of one
  judgment (1 or more relevant, 0 or less judged not relevant; a pair the
  collection does not judge yet is added), in :data:`GRADE_RANGE` (-32768 to
  32767, a 16-bit integer, which trec_eval and pytrec_eval score at once), or
  ``"remove"`` to drop it;
* an **answer**: the question's corrected gold answer (a non-empty string),
  which replaces ``query.metadata["answer"]``;
* an **exclusion** (``"exclude": true``): the question leaves every mean
  under the corrected key: its judgments are removed (it is unjudged) and
  :attr:`Collection.excluded_query_ids` names it (for answer scores);
* an **evidence** list: the ids judged relevant instead of the question's
  judgments (each grade 1, in order).  An id is an entry id, or an id within
  the question's scope (a LoCoMo dia_id ``D1:3`` is ``<sample_id>/D1:3``), or
  a turn of an entry (at session granularity ``D1:3`` judges its session);
  an empty list leaves the question unjudged.

A judgment an exclusion or evidence line changes is also a
:class:`Correction` (with that line and reason), so the corrections list
every judgment changed whatever the line; the line itself is a
:class:`KeyCorrection`, as an answer is.  Answer and exclusion lines may
name a question the loader left out of retrieval scoring but kept for
answers (:attr:`Collection.left_out_queries`).

**locomo-audit's errata** (``errors.json`` of dial481/locomo-audit, a JSON
list) are read as they are: :mod:`agentmemory.datasets.locomo_errata` says
how each entry becomes these lines (a document whose text begins with ``[``
is read so; anything else as JSON lines).

**Checked against the collection**, before anything is evaluated, each an
:class:`~agentmemory.errors.InputError` naming the file and line: a line
that is not such an object (a missing or unknown field, fields of two kinds,
a grade that is neither an integer nor ``"remove"``, a grade outside
:data:`GRADE_RANGE`, an answer that is not
a non-empty string, an ``exclude`` that is not ``true``, an evidence that is
not a list of ids, an empty reason); a query the collection does not have
(one its loader skipped is named with the loader's reason; an answer or
exclusion may name one kept for answers); an entry or evidence id it does
not have, or one outside the query's scope (another conversation); an
evidence id given twice; the same (query, entry) pair on two lines; the
same question's answer, exclusion or evidence on two lines; an excluded
question corrected otherwise, or a question's evidence and one of its
grades both corrected; a ``"remove"`` of a pair that is not judged; a grade
the pair already has, an answer or evidence the question already has (a
correction that changes nothing is a mistake in the patch, or a patch for
another release); an answer for a question whose metadata holds none.  An
empty patch is refused too.

:meth:`JudgmentPatch.apply` gives the corrected collection (a query whose
every judgment is removed becomes unjudged, left out of every mean, as
trec_eval leaves out a query with no judgment), with the corrected answers
in its queries' metadata; it carries the patch
(:attr:`Collection.judgment_patch <agentmemory.collection.Collection>`),
from which :meth:`JudgmentPatch.revert` gives back the original judgments,
answers and order exactly: :func:`agentmemory.evaluate` scores both, and
every report shows both.

:func:`answer_key_ceiling` counts, per query group, the questions whose
original answer key a patch leaves right (the best a perfect answerer can
score under it); :func:`evidence_corrections` the evidence lines per group.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentmemory.collection import (
    ANSWER,
    EVIDENCE,
    EXCLUDE,
    KEY_KINDS,
    REMOVE,
    Collection,
    Correction,
    JudgmentPatch,
    KeyCorrection,
)
from agentmemory.datasets.locomo_errata import errata_lines, is_errata
from agentmemory.errors import InputError, quote
from agentmemory.files.reading import decode_utf8, json_lines, read_bytes
from agentmemory.records import Query

__all__ = [
    "GRADE_RANGE",
    "KEY_KINDS",
    "REMOVE",
    "Correction",
    "JudgmentPatch",
    "KeyCorrection",
    "answer_key_ceiling",
    "evidence_corrections",
    "read_judgment_patch",
]

GRADE_RANGE = (-(2**15), 2**15 - 1)
"""The lowest and highest grade a patch may set: a 16-bit signed integer (-32768..32767).

The corrected judgments are scored beside trec_eval's and exported as a qrels file (``--runs-dir``), so a
grade must be one the TREC tools score.  pytrec_eval reads a grade into a C ``int`` (2**40 wraps to 0) and its
nDCG builds tables over the grade levels: one query judged 32767 scores in 0.45 s, 100000 in 2.6 s, 10**6 in
about six minutes, and 2**31 - 1 crashes the process (pytrec_eval-terrier 0.5.11, this machine).  A grade of more digits
cannot even be a float (nDCG's gain).  Real collections grade 0 to 4."""

GRADE = "grade"
_FIELDS = ("query_id", "entry_id", "grade", "reason")
_KEY_FIELDS = {kind: ("query_id", kind, "reason") for kind in KEY_KINDS}
_MARKS = ((GRADE, ("entry_id", "grade")), (ANSWER, (ANSWER,)), (EXCLUDE, (EXCLUDE,)), (EVIDENCE, (EVIDENCE,)))
_NAMES = {GRADE: "a correction", ANSWER: "an answer correction", EXCLUDE: "an exclusion", EVIDENCE: "an evidence line"}
_WHY = {
    GRADE: "say why the judgment changes",
    ANSWER: "say why the answer changes",
    EXCLUDE: "say why the question is excluded",
    EVIDENCE: "say why the evidence changes",
}
_DOES = {
    GRADE: "corrects a judgment of {q}",
    ANSWER: "replaces the answer of {q}",
    EXCLUDE: "excludes {q}",
    EVIDENCE: "replaces the evidence of {q}",
}
_CLASH = {
    GRADE: (EVIDENCE, EXCLUDE),
    ANSWER: (EXCLUDE,),
    EXCLUDE: (GRADE, ANSWER, EVIDENCE),
    EVIDENCE: (GRADE, EXCLUDE),
}
"""The kinds of line that contradict each kind on the same question."""
_EXAMPLE = '{"query_id": "q1", "entry_id": "m3", "grade": 1, "reason": "m3 holds the answer"}'
_KINDS_SAID = (
    "entry_id and grade (a judgment), answer (the gold answer), exclude (true: out of every mean) or evidence "
    "(the ids judged relevant)"
)


def read_judgment_patch(path: str | PathLike[str], collection: Collection) -> JudgmentPatch:
    """Read the patch at ``path`` and check every line against ``collection`` (see the module docstring).

    ``path`` is JSON lines, or locomo-audit's ``errors.json`` read as it is
    (a JSON list: :mod:`agentmemory.datasets.locomo_errata`).

    Raises:
        MissingFileError: no such file.
        InputError: the first bad line, naming the file and the line; or a patch without a correction.
    """
    source = Path(path)
    data = read_bytes(source, "judgment patch")
    text = decode_utf8(source, data)
    checker = _Checker(source, collection)
    if is_errata(text):
        for line, label, obj in errata_lines(source, text, collection):
            checker.take(line, obj, label=f"{label}: ", errata=True)
    else:
        expected = f"; expected one correction per line, e.g. {_EXAMPLE}"
        for line, obj in json_lines(source, text, expected=expected):
            checker.take(line, obj)
    if not checker.corrections and not checker.key:
        raise InputError(source, None, f"holds no correction; expected one JSON object per line, e.g. {_EXAMPLE}")
    return JudgmentPatch(
        source.name,
        hashlib.sha256(data).hexdigest(),
        tuple(checker.corrections),
        tuple(checker.key),
        MappingProxyType(checker.originals),
    )


class _Checker:
    """Checks each line of one patch against one collection (and the lines before it)."""

    def __init__(self, path: Path, collection: Collection) -> None:
        self.path = path
        self.collection = collection
        self.queries = {q.id: q for q in collection.queries}
        self.left_out = {q.id: q for q in collection.left_out_queries}
        self.skipped = dict(collection.skipped)
        self.entries = {e.id: e for e in collection.entries}
        self.positions = {q: i for i, q in enumerate(collection.qrels)}
        self.turn_entries: dict[str, str] | None = None  # a turn's id -> the id of the entry holding it, when needed
        self.seen: dict[tuple[str, str], int] = {}
        self.touched: dict[str, dict[str, int]] = {}  # query id -> {kind of line: its first line}
        self.corrections: list[Correction] = []
        self.key: list[KeyCorrection] = []
        self.originals: dict[str, tuple[int | None, Mapping[str, int]]] = {}
        self.label = ""

    def fail(self, line: int, problem: str) -> InputError:
        return InputError(self.path, line, self.label + problem)

    def take(self, line: int, obj: object, *, label: str = "", errata: bool = False) -> None:
        """Check one line and keep what it corrects (``label`` begins its messages; ``errata``: an errata entry's)."""
        self.label = label
        kind, obj = self.kind(line, obj)
        if kind == GRADE:
            self.corrections.append(self.correction(line, obj))
            return
        fields = self.fields(line, obj, _KEY_FIELDS[kind], _NAMES[kind])
        query = self.question(line, fields["query_id"], kind, errata)
        reason = self.reason(line, fields["reason"], kind)
        self.claim(line, query.id, kind)
        if kind == ANSWER:
            self.key.append(self.answer(line, query, fields[ANSWER], reason))
        elif kind == EXCLUDE:
            self.exclude(line, query, fields[EXCLUDE], reason)
        else:
            self.evidence(line, query, fields[EVIDENCE], reason, errata)

    def kind(self, line: int, obj: object) -> tuple[str, dict[str, Any]]:
        """The kind of correction the line ``obj`` makes, and ``obj`` (a JSON object)."""
        if not isinstance(obj, dict):
            raise self.fail(line, f"is not a JSON object; expected {_EXAMPLE}")
        kinds = [(kind, next(m for m in marks if m in obj)) for kind, marks in _MARKS if any(m in obj for m in marks)]
        if not kinds:
            raise self.fail(line, f"corrects nothing: a line has query_id, reason and {_KINDS_SAID}")
        if len(kinds) > 1:
            (_, first), (_, second) = kinds[:2]
            raise self.fail(
                line,
                f"has the fields {quote(first)} and {quote(second)} of two kinds of correction; give each on its own line",
            )
        return kinds[0][0], obj

    def correction(self, line: int, obj: dict) -> Correction:
        fields = self.fields(line, obj, _FIELDS, "a correction")
        query_id, entry_id = self.pair(line, fields["query_id"], fields["entry_id"])
        self.claim(line, query_id, GRADE)
        before = self.collection.qrels.get(query_id, {}).get(entry_id)
        after = self.grade(line, fields["grade"], query_id, entry_id, before)
        reason = self.reason(line, fields["reason"], GRADE)
        self.original(query_id)
        return Correction(line, query_id, entry_id, before, after, reason)

    def fields(self, line: int, obj: dict, names: tuple[str, ...], what: str) -> Mapping[str, Any]:
        unknown = [key for key in obj if key not in names]
        if unknown:
            raise self.fail(
                line,
                f"has the field {quote(unknown[0])}, which {what} does not take; its fields are " + ", ".join(names),
            )
        missing = [key for key in names if key not in obj]
        if missing:
            raise self.fail(line, f"has no {missing[0]}; {what} has the fields {', '.join(names)}")
        return obj

    def reason(self, line: int, reason: object, kind: str) -> str:
        if not isinstance(reason, str) or not reason.strip():
            raise self.fail(line, f"reason {quote(reason)} is not a non-empty string; {_WHY[kind]}")
        return reason

    def claim(self, line: int, query_id: str, kind: str) -> None:
        """Record that ``line`` corrects ``query_id`` by ``kind``; refuse what contradicts an earlier line."""
        lines = self.touched.setdefault(query_id, {})
        does = _DOES[kind].format(q=f"query {quote(query_id)}")
        if kind != GRADE and kind in lines:
            raise self.fail(line, f"{does} again (first on line {lines[kind]}); give each correction once")
        other = next((k for k in _CLASH[kind] if k in lines), None)
        if other is not None:
            raise self.fail(
                line,
                f"{does}, and line {lines[other]} {_DOES[other].format(q='it')}; an excluded question takes no other "
                "correction, and an evidence line replaces every judgment of its question: drop one of the two lines",
            )
        lines.setdefault(kind, line)

    def original(self, query_id: str) -> None:
        """Keep the judgments of ``query_id`` as read (and its place among the judged questions), for revert."""
        if query_id not in self.originals:
            judged = self.collection.qrels.get(query_id)
            self.originals[query_id] = (
                self.positions.get(query_id),
                MappingProxyType({}) if judged is None else judged,
            )

    def question(self, line: int, query_id: object, kind: str, errata: bool) -> Query:
        """The question a key line names: judged, or (not for evidence, except from errata) left out by the loader."""
        if not isinstance(query_id, str) or not query_id:
            raise self.fail(line, f"query_id {quote(query_id)} is not a non-empty string")
        query = self.queries.get(query_id)
        if query is not None:
            return query
        query = self.left_out.get(query_id)
        if query is not None and (kind != EVIDENCE or errata):
            return query
        if query is not None or query_id in self.skipped:
            if kind == EVIDENCE:
                raise self.left_out_error(line, query_id)
            raise self.fail(
                line,
                f"query {quote(query_id)} was left out by the loader ({self.skipped[query_id]}) and not kept for "
                "answers; drop the line",
            )
        raise self.fail(line, f"query {quote(query_id)} is not a query of the collection {quote(self.collection.name)}")

    def left_out_error(self, line: int, query_id: str) -> InputError:
        return self.fail(
            line,
            f"query {quote(query_id)} was left out by the loader ({self.skipped.get(query_id, 'no reason given')}); "
            "load it with --repair where its format repairs it, or drop the line",
        )

    def answer(self, line: int, query: Query, answer: object, reason: str) -> KeyCorrection:
        if ANSWER not in query.metadata:
            raise self.fail(
                line, f"query {quote(query.id)} has no answer in its metadata to replace; exclude it, or drop the line"
            )
        if not isinstance(answer, str) or not answer.strip():
            raise self.fail(
                line, f"answer {quote(answer)} is not a non-empty string; give the corrected answer as text"
            )
        before = query.metadata[ANSWER]
        if str(before) == answer:
            raise self.fail(
                line, f"gives query {quote(query.id)} the answer {quote(answer)}, which it has already; drop the line"
            )
        return KeyCorrection(line, query.id, ANSWER, before, answer, reason)

    def exclude(self, line: int, query: Query, value: object, reason: str) -> None:
        if value is not True:
            raise self.fail(line, f'exclude {quote(value)} is not true; exclude a question with "exclude": true')
        judged = self.collection.qrels.get(query.id, {})
        if query.id in self.queries:
            self.original(query.id)
        self.corrections += [Correction(line, query.id, e, g, None, reason) for e, g in judged.items()]
        self.key.append(KeyCorrection(line, query.id, EXCLUDE, None, None, reason))

    def evidence(self, line: int, query: Query, items: object, reason: str, errata: bool) -> None:
        after = self.resolve(line, query, items)
        if query.id not in self.queries:  # left out by the loader, from an errata file: recorded, judges nothing
            self.key.append(KeyCorrection(line, query.id, EVIDENCE, None, tuple(after.items()), reason))
            return
        judged = self.collection.qrels.get(query.id, {})
        if dict(judged) == after:
            if errata:
                return
            raise self.fail(
                line,
                f"gives query {quote(query.id)} the evidence it has already ({', '.join(after) or 'none'}); "
                "drop the line",
            )
        self.original(query.id)
        self.corrections += [
            Correction(line, query.id, e, g, None, reason) for e, g in judged.items() if e not in after
        ]
        self.corrections += [
            Correction(line, query.id, e, judged.get(e), 1, reason) for e in after if judged.get(e) != 1
        ]
        self.key.append(KeyCorrection(line, query.id, EVIDENCE, tuple(judged.items()), tuple(after.items()), reason))

    def resolve(self, line: int, query: Query, items: object) -> dict[str, int]:
        """The judgments an evidence list gives: each id (an entry id, or one of the query's scope such as a LoCoMo
        dia_id, or a turn of an entry) judged 1, each entry once, in order."""
        if not isinstance(items, list):
            raise self.fail(
                line, f'evidence {quote(items)} is not a list of ids; give the ids judged relevant, e.g. ["D1:3"]'
            )
        judged: dict[str, int] = {}
        given: set[str] = set()
        for item in items:
            if not isinstance(item, str) or not item:
                raise self.fail(line, f"evidence holds {quote(item)}, which is not a non-empty string")
            if item in given:
                raise self.fail(line, f"evidence lists {quote(item)} twice; give each id once")
            given.add(item)
            judged[self.entry_of(line, query, item)] = 1
        return judged

    def entry_of(self, line: int, query: Query, item: str) -> str:
        names = [item] if query.scope is None else [item, f"{query.scope}/{item}"]
        found = next((n for n in names if n in self.entries), None)
        if found is None:
            turns = self.turns()
            found = next((turns[n] for n in names if n in turns), None)
        if found is None:
            raise self.fail(
                line,
                f"evidence {quote(item)} names no entry of the collection {quote(self.collection.name)} (no entry or "
                f"turn {' or '.join(quote(n) for n in names)})",
            )
        scope = self.entries[found].scope
        if query.scope is not None and scope != query.scope:
            raise self.fail(
                line,
                f"evidence {quote(item)} is in scope {quote(scope)}, outside the scope {quote(query.scope)} that query "
                f"{quote(query.id)} searches",
            )
        return found

    def turns(self) -> dict[str, str]:
        """A turn's id -> the id of the entry holding it (entries coarser than turns), built on first need."""
        if self.turn_entries is None:
            self.turn_entries = {t.id: e for e, turns in self.collection.turns.items() for t in turns}
        return self.turn_entries

    def pair(self, line: int, query_id: object, entry_id: object) -> tuple[str, str]:
        if not isinstance(query_id, str) or not query_id:
            raise self.fail(line, f"query_id {quote(query_id)} is not a non-empty string")
        if not isinstance(entry_id, str) or not entry_id:
            raise self.fail(line, f"entry_id {quote(entry_id)} is not a non-empty string")
        name = quote(self.collection.name)
        query = self.queries.get(query_id)
        if query is None:
            if query_id in self.skipped:
                raise self.left_out_error(line, query_id)
            raise self.fail(line, f"query {quote(query_id)} is not a query of the collection {name}")
        entry = self.entries.get(entry_id)
        if entry is None:
            raise self.fail(line, f"entry {quote(entry_id)} is not an entry of the collection {name}")
        if query.scope is not None and entry.scope != query.scope:
            raise self.fail(
                line,
                f"entry {quote(entry_id)} is in scope {quote(entry.scope)}, outside the scope {quote(query.scope)} "
                f"that query {quote(query_id)} searches",
            )
        first = self.seen.setdefault((query_id, entry_id), line)
        if first != line:
            raise self.fail(
                line,
                f"corrects query {quote(query_id)} and entry {quote(entry_id)} again (first on line {first}); "
                "give each pair once",
            )
        return query_id, entry_id

    def grade(self, line: int, grade: object, query_id: str, entry_id: str, before: int | None) -> int | None:
        pair = f"query {quote(query_id)} and entry {quote(entry_id)}"
        if grade == REMOVE:
            if before is None:
                raise self.fail(line, f"removes the judgment of {pair}, which the collection does not judge")
            return None
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise self.fail(
                line, f'grade {quote(grade)} is neither an integer nor "remove"; give the new grade, e.g. 1 or 0'
            )
        low, high = GRADE_RANGE
        if not low <= grade <= high:
            raise self.fail(
                line,
                f"grade {quote(grade)} is outside {low}..{high}, the grades trec_eval and pytrec_eval score; "
                "give a grade such as 1 or 0",
            )
        if grade == before:
            raise self.fail(line, f"sets {pair} to grade {grade}, which the collection already gives it; drop the line")
        return grade


# -- what a patch says about the answer key, per query group


def _groups(collection: Collection) -> dict[str, str | None]:
    """Every question of ``collection`` an answer can be scored on (the judged ones and those the loader left out),
    id -> group."""
    return {q.id: q.group for q in (*collection.queries, *collection.left_out_queries)}


def _in_order(counts: Mapping[str | None, list[int]]) -> dict[str | None, tuple[int, int]]:
    """``counts`` by group name (``None``, questions without a group, last), each as a pair."""
    order = sorted(counts, key=lambda group: (group is None, group or ""))
    return {group: (counts[group][0], counts[group][1]) for group in order}


def answer_key_ceiling(patch: JudgmentPatch, collection: Collection) -> dict[str | None, tuple[int, int]]:
    """``{group: (right, total)}``: per query group, how many of its questions the patch leaves the answer key of right.

    ``total`` counts the group's questions (``collection.queries`` and
    ``collection.left_out_queries``: every question an answer can be scored
    on), ``right`` those whose gold answer the patch neither replaces nor
    excludes, so ``right / total`` is the best a perfect answerer can score
    under the original key (locomo-audit's "ceiling").  Evidence corrections
    change no answer (:func:`evidence_corrections` counts them).  Groups by
    name (``None``, questions without a group, last).  ``collection`` is the
    one the patch was read against, or the patched one.
    """
    wrong = {k.query_id for k in patch.answer_key if k.kind in (ANSWER, EXCLUDE)}
    counts: dict[str | None, list[int]] = {}
    for query_id, group in _groups(collection).items():
        tally = counts.setdefault(group, [0, 0])
        tally[0] += query_id not in wrong
        tally[1] += 1
    return _in_order(counts)


def evidence_corrections(patch: JudgmentPatch, collection: Collection) -> dict[str | None, tuple[int, int]]:
    """``{group: (judged, corrected)}``: per query group with an evidence line, the questions whose evidence the patch
    replaces (``corrected``) and how many of those it changes the judgments of (``judged``; the others are questions
    the loader left out of retrieval scoring, from an errata file).  Groups as in :func:`answer_key_ceiling`."""
    groups = _groups(collection)
    counts: dict[str | None, list[int]] = {}
    for k in patch.answer_key:
        if k.kind == EVIDENCE:
            tally = counts.setdefault(groups[k.query_id], [0, 0])
            tally[0] += k.before is not None
            tally[1] += 1
    return _in_order(counts)
