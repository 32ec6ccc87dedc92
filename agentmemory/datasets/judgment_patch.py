"""Judgment patches: documented corrections to a collection's judgments (``agentmemory eval --qrels-patch FILE``).

Every benchmark has label errors (LoCoMo's tracker lists some: evidence
that names the wrong turn, an answer in a turn the evidence leaves out).  A
patch states each correction with its reason, so a number computed under
corrected judgments says which corrections it took, and the original
judgments' numbers can stand beside it.

**The file** is JSON lines, one correction per line (blank lines skipped)::

    {"query_id": "conv-1/q0", "entry_id": "conv-1/D1:4", "grade": 1, "reason": "the answer is in D1:4"}
    {"query_id": "conv-1/q1", "entry_id": "conv-1/D2:1", "grade": "remove", "reason": "D2:1 says nothing of it"}

``grade`` is the new integer grade (1 or more relevant, 0 or less judged not
relevant; a pair the collection does not judge yet is added), in
:data:`GRADE_RANGE` (-32768 to 32767, a 16-bit integer, which trec_eval and
pytrec_eval score at once), or ``"remove"`` to drop the judgment.  ``reason`` is required.

**Checked against the collection**, before anything is evaluated, each an
:class:`~agentmemory.errors.InputError` naming the file and line: a line
that is not such an object (a missing or unknown field, a grade that is
neither an integer nor ``"remove"``, a grade outside :data:`GRADE_RANGE`, an
empty reason); a query the
collection does not have (one its loader skipped is named with the
loader's reason); an entry it does not have, or one outside the query's
scope (another conversation); the same (query, entry) pair on two lines; a
``"remove"`` of a pair that is not judged; a grade the pair already has (a
correction that changes nothing is a mistake in the patch, or a patch for
another release).  An empty patch is refused too.

:meth:`JudgmentPatch.apply` gives the corrected collection (a query whose
every judgment is removed becomes unjudged, left out of every mean, as
trec_eval leaves out a query with no judgment); it carries the patch
(:attr:`Collection.judgment_patch <agentmemory.datasets.collection.Collection>`),
from which :meth:`JudgmentPatch.revert` gives back the original judgments:
:func:`agentmemory.evaluate` scores both, and every report shows both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from agentmemory.datasets.collection import REMOVE, Collection, Correction, JudgmentPatch
from agentmemory.errors import InputError, quote
from agentmemory.files.reading import decode_utf8, json_lines, read_bytes

__all__ = ["GRADE_RANGE", "REMOVE", "Correction", "JudgmentPatch", "read_judgment_patch"]

GRADE_RANGE = (-(2**15), 2**15 - 1)
"""The lowest and highest grade a patch may set: a 16-bit signed integer (-32768..32767).

The corrected judgments are scored beside trec_eval's and exported as a qrels file (``--runs-dir``), so a
grade must be one the TREC tools score.  pytrec_eval reads a grade into a C ``int`` (2**40 wraps to 0) and its
nDCG builds tables over the grade levels: one query judged 32767 scores in 0.45 s, 100000 in 2.6 s, 10**6 in
about six minutes, and 2**31 - 1 crashes the process (pytrec_eval-terrier 0.5.11, this machine).  A grade of more digits
cannot even be a float (nDCG's gain).  Real collections grade 0 to 4."""

_FIELDS = ("query_id", "entry_id", "grade", "reason")
_EXAMPLE = '{"query_id": "q1", "entry_id": "m3", "grade": 1, "reason": "m3 holds the answer"}'


def read_judgment_patch(path: str | PathLike[str], collection: Collection) -> JudgmentPatch:
    """Read the patch at ``path`` and check every line against ``collection`` (see the module docstring).

    Raises:
        MissingFileError: no such file.
        InputError: the first bad line, naming the file and the line; or a patch without a correction.
    """
    source = Path(path)
    data = read_bytes(source, "judgment patch")
    text = decode_utf8(source, data)
    checker = _Checker(source, collection)
    corrections = [
        checker.correction(line, obj)
        for line, obj in json_lines(source, text, expected=f"; expected one correction per line, e.g. {_EXAMPLE}")
    ]
    if not corrections:
        raise InputError(source, None, f"holds no correction; expected one JSON object per line, e.g. {_EXAMPLE}")
    return JudgmentPatch(source.name, hashlib.sha256(data).hexdigest(), tuple(corrections))


class _Checker:
    """Checks each line of one patch against one collection (and the lines before it)."""

    def __init__(self, path: Path, collection: Collection) -> None:
        self.path = path
        self.collection = collection
        self.queries = {q.id: q for q in collection.queries}
        self.skipped = dict(collection.skipped)
        self.entries = {e.id: e for e in collection.entries}
        self.seen: dict[tuple[str, str], int] = {}

    def fail(self, line: int, problem: str) -> InputError:
        return InputError(self.path, line, problem)

    def correction(self, line: int, obj: object) -> Correction:
        fields = self.fields(line, obj)
        query_id, entry_id = self.pair(line, fields["query_id"], fields["entry_id"])
        before = self.collection.qrels.get(query_id, {}).get(entry_id)
        after = self.grade(line, fields["grade"], query_id, entry_id, before)
        reason = fields["reason"]
        if not isinstance(reason, str) or not reason.strip():
            raise self.fail(line, f"reason {quote(reason)} is not a non-empty string; say why the judgment changes")
        return Correction(line, query_id, entry_id, before, after, reason)

    def fields(self, line: int, obj: object) -> Mapping[str, Any]:
        if not isinstance(obj, dict):
            raise self.fail(line, f"is not a JSON object; expected {_EXAMPLE}")
        unknown = [key for key in obj if key not in _FIELDS]
        if unknown:
            raise self.fail(
                line,
                f"has the field {quote(unknown[0])}, which a correction does not take; its fields are "
                + ", ".join(_FIELDS),
            )
        missing = [key for key in _FIELDS if key not in obj]
        if missing:
            raise self.fail(line, f"has no {missing[0]}; a correction has the fields {', '.join(_FIELDS)}")
        return obj

    def pair(self, line: int, query_id: object, entry_id: object) -> tuple[str, str]:
        if not isinstance(query_id, str) or not query_id:
            raise self.fail(line, f"query_id {quote(query_id)} is not a non-empty string")
        if not isinstance(entry_id, str) or not entry_id:
            raise self.fail(line, f"entry_id {quote(entry_id)} is not a non-empty string")
        name = quote(self.collection.name)
        query = self.queries.get(query_id)
        if query is None:
            if query_id in self.skipped:
                raise self.fail(
                    line,
                    f"query {quote(query_id)} was left out by the loader ({self.skipped[query_id]}); load it with "
                    "--repair where its format repairs it, or drop the line",
                )
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
