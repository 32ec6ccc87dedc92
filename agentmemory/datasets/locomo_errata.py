"""locomo-audit's errata of LoCoMo's answer key (its ``errors.json``), read as it is into judgment-patch lines.

dial481/locomo-audit audited LoCoMo's 1,540 questions of categories 1-4
against the transcripts and lists every issue it found in ``errors.json``
(156 at commit 9493fb4): a JSON list of entries, each::

    {"question_id": "locomo_0_qa1", "question": "When did ...?", "golden_answer": "2022", "category": 2,
     "error_type": "WRONG_CITATION", "cited_evidence": ["D1:12"], "correct_evidence": ["D1:14"],
     "reasoning": "D1:12 (cited) says ...", "correct_answer": "2022"}

``agentmemory eval --qrels-patch errors.json`` reads it as it is
(:func:`~agentmemory.datasets.judgment_patch.read_judgment_patch` tells it
from a JSON-lines patch by :func:`is_errata`), each entry becoming the lines
of a judgment patch (:func:`errata_lines`), checked as every patch line is.

**Keys.**  ``locomo_<c>_qa<i>`` is question ``i`` of conversation ``c``,
both 0-based: conversations in file order, questions counting **every** qa
item of the conversation, category 5 included (the audit's per-conversation
file of conv-30 numbers its category 1-4 questions ``qa78``, ``qa80``,
``qa81`` around an adversarial ``qa79``), so the key is the query id
``<sample_id>/q<i>``.  The conversations' order is the collection's (its
entries' scopes in order): load the whole file (no ``conversations=``
subset); every entry's question, golden answer, category and cited
evidence are compared with the collection's, so a wrong mapping or another
release is an error, not a silent mismatch.

**What an entry becomes**, with the reason ``"<question_id> <error_type>:
<reasoning>"``:

* ``WRONG_CITATION`` (the golden answer is right, the evidence wrong): an
  evidence line with ``correct_evidence``; its ``correct_answer`` is not
  read (it holds the golden answer, often with a remark such as ``"(answer
  is correct, citation is wrong)"``);
* every other type (:data:`ERROR_TYPES`: the audit's score-corrupting
  errors, ``AMBIGUOUS`` included, as its ceiling counts it): an answer line
  with ``correct_answer``, and an evidence line with ``correct_evidence``
  when that differs from the judgments.

An evidence line whose evidence the collection already judges (every entry
carries ``correct_evidence``, most often unchanged) is left out, not an
error; one for a question the loader left out of retrieval scoring
(malformed evidence; :attr:`Collection.left_out_queries`) is recorded and
judges nothing (load with ``repair`` to judge it).  An empty
``correct_evidence`` leaves the question unjudged.

**Checked**, each problem an :class:`~agentmemory.errors.InputError` naming
the file, the line the entry starts on and the entry (``errors.json:5: entry
1 (locomo_0_qa1): ...``): a collection not read as LoCoMo; a document that
is not a list of such objects; a missing or unknown field, or one of the
wrong type; a key not of the form above, naming a conversation or question
the collection does not have, or given twice; a question, golden answer
(compared as text: LoCoMo gives a few answers as numbers), category or
cited evidence that is not the collection's; an unknown ``error_type``; a
``correct_answer`` that is the golden answer where the answer is said to be
wrong; and whatever the patch's own checks refuse (an evidence id naming no
turn of the conversation, an empty reason).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from agentmemory.collection import ANSWER, EVIDENCE, Collection
from agentmemory.errors import InputError, quote
from agentmemory.files.reading import describe_json, parse_json
from agentmemory.records import Query

__all__ = ["CITATION_ONLY", "ERROR_TYPES", "FIELDS", "ErrataLine", "errata_lines", "is_errata"]

CITATION_ONLY = "WRONG_CITATION"
"""The ``error_type`` of an entry whose golden answer is right and whose evidence is wrong."""

ERROR_TYPES: tuple[str, ...] = (
    "HALLUCINATION",
    "TEMPORAL_ERROR",
    "ATTRIBUTION_ERROR",
    "AMBIGUOUS",
    "INCOMPLETE",
    CITATION_ONLY,
)
"""The ``error_type`` values of locomo-audit's taxonomy: five say the golden answer is wrong, one the evidence."""

FIELDS: tuple[str, ...] = (
    "question_id",
    "question",
    "golden_answer",
    "category",
    "error_type",
    "cited_evidence",
    "correct_evidence",
    "reasoning",
    "correct_answer",
)
"""The fields of an entry, every one required."""

_KEY = re.compile(r"locomo_(0|[1-9][0-9]{0,8})_qa(0|[1-9][0-9]{0,8})")
_KEY_FORM = "locomo_<conversation>_qa<question>, e.g. locomo_0_qa1"
_SPACE = re.compile(r"[\s,]*")


class ErrataLine(NamedTuple):
    """One patch line made from an entry: the entry's first line, its label for messages, the line's object."""

    line: int
    label: str
    obj: dict[str, Any]


def is_errata(text: str) -> bool:
    """Whether ``text`` is a JSON document that is a list (an errata file) rather than JSON lines.

    A text beginning with ``[`` is a document when it spans several non-blank
    lines, or when its one line is a list whose first item is an object (a
    one-line list of strings stays a JSON-lines patch, whose line is then
    refused as not an object).
    """
    stripped = text.lstrip()
    if not stripped.startswith("["):
        return False
    if sum(1 for line in stripped.splitlines() if line.strip()) > 1:
        return True
    try:
        value = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(value, list) and bool(value) and isinstance(value[0], dict)


def errata_lines(path: Path, text: str, collection: Collection) -> Iterator[ErrataLine]:
    """The patch lines of the errata file ``path`` (its ``text``) for ``collection``, entry by entry (see the module).

    Raises:
        InputError: the first problem, naming the file, the entry's line and the entry.
    """
    if collection.format != "locomo":
        raise InputError(
            path,
            None,
            f"is locomo-audit's errata of LoCoMo, which correct a LoCoMo collection; the collection "
            f"{quote(collection.name)} is read as {quote(collection.format)}: evaluate locomo10.json",
        )
    document = parse_json(text, path, root="$")  # a list: is_errata said so
    reader = _Reader(path, collection)
    for number, (line, entry) in enumerate(zip(_starts(text), document, strict=True), start=1):
        yield from reader.entry(line, number, entry)


def _starts(text: str) -> Iterator[int]:
    """The line each item of the top-level list in ``text`` starts on (``text`` parsed as a list already)."""
    decoder = json.JSONDecoder()
    at = text.index("[") + 1
    line = 1 + text.count("\n", 0, at)
    while True:
        start = _SPACE.match(text, at).end()  # type: ignore[union-attr]  # matches the empty string at least
        if text[start] == "]":
            return
        line += text.count("\n", at, start)
        yield line
        _, end = decoder.raw_decode(text, start)
        line += text.count("\n", start, end)
        at = end


class _Reader:
    """Checks each entry against one LoCoMo collection and turns it into patch lines."""

    def __init__(self, path: Path, collection: Collection) -> None:
        self.path = path
        self.collection = collection
        self.questions: Mapping[str, Query] = {q.id: q for q in (*collection.queries, *collection.left_out_queries)}
        self.skipped = dict(collection.skipped)
        scopes = [e.scope for e in collection.entries] + [q.scope for q in self.questions.values()]
        self.conversations = [s for s in dict.fromkeys(scopes) if s is not None]
        self.seen: dict[str, int] = {}

    def fail(self, line: int, label: str, problem: str) -> InputError:
        return InputError(self.path, line, f"{label}: {problem}")

    def entry(self, line: int, number: int, entry: object) -> Iterator[ErrataLine]:
        label = f"entry {number}"
        if not isinstance(entry, dict):
            raise self.fail(line, label, f"is {describe_json(entry)}; expected an object with {', '.join(FIELDS)}")
        key = entry.get("question_id")
        if isinstance(key, str):
            label = f"entry {number} ({quote(key)})"
        self.fields(line, label, entry)
        query = self.query(line, label, entry["question_id"])
        self.matches(line, label, entry, query)
        reason = f"{key} {entry['error_type']}: {entry['reasoning']}"
        if entry["error_type"] != CITATION_ONLY:
            if str(entry["correct_answer"]) == str(entry["golden_answer"]):
                raise self.fail(
                    line,
                    label,
                    f"error_type {quote(entry['error_type'])} says the golden answer is wrong, but correct_answer "
                    "is the golden answer",
                )
            yield ErrataLine(line, label, {"query_id": query.id, ANSWER: entry["correct_answer"], "reason": reason})
        if entry["error_type"] == CITATION_ONLY or entry["correct_evidence"] != entry["cited_evidence"]:
            yield ErrataLine(line, label, {"query_id": query.id, EVIDENCE: entry["correct_evidence"], "reason": reason})

    def fields(self, line: int, label: str, entry: dict) -> None:
        unknown = [k for k in entry if k not in FIELDS]
        if unknown:
            raise self.fail(
                line,
                label,
                f"has the field {quote(unknown[0])}, which an entry does not take; its fields are " + ", ".join(FIELDS),
            )
        missing = [k for k in FIELDS if k not in entry]
        if missing:
            raise self.fail(line, label, f"has no {missing[0]}; an entry has the fields {', '.join(FIELDS)}")
        for name in ("question_id", "question", "golden_answer", "error_type", "reasoning", "correct_answer"):
            if not isinstance(entry[name], str):
                raise self.fail(line, label, f"{name} is {describe_json(entry[name])}; expected a string")
        for name in ("cited_evidence", "correct_evidence"):
            value = entry[name]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise self.fail(
                    line, label, f"{name} is {describe_json(value)}; expected a list of dialogue ids like 'D3:7'"
                )
        if entry["error_type"] not in ERROR_TYPES:
            raise self.fail(
                line,
                label,
                f"error_type {quote(entry['error_type'])} is not one of locomo-audit's: " + ", ".join(ERROR_TYPES),
            )

    def query(self, line: int, label: str, key: str) -> Query:
        match = _KEY.fullmatch(key)
        if match is None:
            raise self.fail(line, label, f"question_id {quote(key)} is not {_KEY_FORM}")
        first = self.seen.setdefault(key, line)
        if first != line:
            raise self.fail(line, label, f"question_id {quote(key)} is given again (first on line {first})")
        conversation, index = int(match[1]), int(match[2])
        if conversation >= len(self.conversations):
            raise self.fail(
                line,
                label,
                f"names conversation {conversation}, but the collection {quote(self.collection.name)} has "
                f"{len(self.conversations)} (locomo_0 .. locomo_{len(self.conversations) - 1})",
            )
        query_id = f"{self.conversations[conversation]}/q{index}"
        query = self.questions.get(query_id)
        if query is None:
            left = self.skipped.get(query_id)
            why = f" (left out by the loader: {left}, and not kept for answers)" if left is not None else ""
            raise self.fail(
                line,
                label,
                f"names {quote(query_id)}, which is not a question of the collection "
                f"{quote(self.collection.name)}{why}",
            )
        return query

    def matches(self, line: int, label: str, entry: dict, query: Query) -> None:
        """The entry's question, golden answer, category and cited evidence are those of ``query``."""
        metadata = query.metadata
        given = (
            ("question", entry["question"], query.text),
            ("golden_answer", entry["golden_answer"], _text(metadata.get("answer"))),
            ("category", entry["category"], metadata.get("category")),
            ("cited_evidence", entry["cited_evidence"], metadata.get("evidence")),
        )
        for name, value, ours in given:
            if value != ours:
                raise self.fail(
                    line,
                    label,
                    f"{name} {quote(value)} is not that of {quote(query.id)} ({quote(ours)}): errata of another "
                    "release, or a collection that is not the whole file",
                )


def _text(answer: object) -> object:
    """A gold answer as the errata give it: text (LoCoMo gives a few as numbers, e.g. 2022)."""
    return str(answer) if isinstance(answer, int | float) and not isinstance(answer, bool) else answer
