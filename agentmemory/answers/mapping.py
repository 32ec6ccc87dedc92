"""Mapping files (the ``mapping`` answer format): any JSON or JSON-lines answer file, described in TOML, read without code.

``read_answers("results.json", format="mapping", mapping="results.toml")``
(or ``mapping=`` alone) reads ``results.json`` as the mapping file says: a
:class:`~agentmemory.answers.shape.Shape` written in TOML.  A complete example
(every key; only ``records`` is required)::

    records = "runs.*.items[*]"   # where the records are (see the path rules below)
    lines = false                 # true: the file is JSON lines; the path starts at the list of lines
    conversation_is = "name"      # name: a sample id (conv-26); index: the conversation's 0-based index
                                  #   (an integer, or a text's last digits: locomo_exp_user_3 -> 3)
    latency_unit = "ms"           # s or ms
    extra = ["scores.f1"]         # numbers kept beside each answer (shown, never scored)
    name = "my-harness"           # the system's label in tables (default: the file's stem)

    [fields]                      # a path inside each record for each (every one optional)
    question_id = "qid"
    conversation = "@conversation" # the key (or index) the wildcard before the records stepped over;
                                   #   "@conversation.sample_id": a field of the conversation object
    position = "n"                 # default: the record's place among its conversation's records
    question = "q"
    gold = "gold"
    category = "cat"
    answer = "prediction"
    tokens = "usage.context_tokens"
    latency = "timing.total"

    [[verdicts]]                  # one table per judge, in order
    field = "grade"               # a path in the record; "judgments.*": one judge per field of that object
    labels = "named"              # boolean | binary | graded | named
    map = { CORRECT = 1, WRONG = 0, PARTIAL = 0.5 }   # named: each label's value in [0, 1]
    ignore_case = false           # named: compare labels ignoring case
    judge = "gpt-4o-mini"         # the judge's name (default: the field's name)
    judge_field = "judge.model"   # a field naming the judge per record (default: judge)
    meaning = "..."               # the words the card shows (default: the label map in words)
    optional = false              # true: a record may lack the field (no verdict)

    [[verdicts]]
    field = "rating"
    labels = "graded"
    min = 1                       # graded: (label - min) / (max - min); min defaults to 0
    max = 5

    [memories]                    # the retrieved memories, best first
    field = "retrieved"           # a list (a text is one memory); null: no retrieval for the record
    text = "content"              # each item's text (leave out when the items are texts)
    id = "turn"                   # each item's id (optional)
    score = "score"               # each item's score (optional)

**Paths** (:mod:`agentmemory.answers.shape`): steps ``name``, ``*`` (every
field of an object), ``[*]`` (every item of a list), ``[3]``, ``["a.b"]``,
joined by ``.``; the records' path ends in a wildcard over the records, and
the wildcard before it (if any) steps over conversations:
``"*.qa[*]"`` is every ``qa`` item of every conversation of an object keyed by
conversation, ``"[*].qa[*]"`` the same in a list of conversations.

**Labels** (:mod:`agentmemory.answers.labels`): a label outside the judge's
kind or map is refused, never guessed; ``null`` is no verdict.

A key the mapping does not know, a value of the wrong type, or a field that
is not in a record is refused in one line naming the file and the line (the
mapping's) or the record (the answer file's).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentmemory.answers.formats import AnswerFormat, AnswerSource
from agentmemory.answers.labels import LabelMap
from agentmemory.answers.records import AnswerFile
from agentmemory.answers.shape import FIELDS, MemoryFields, Shape, VerdictField, read_shape
from agentmemory.datasets import FormatOption
from agentmemory.errors import InputError, ParameterError, quote
from agentmemory.files.reading import decode_utf8, read_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - python 3.10
    import tomli as tomllib

__all__ = ["FORMAT", "MAPPING_KEYS", "MEMORY_KEYS", "VERDICT_KEYS", "read", "read_mapping"]

MAPPING_KEYS: Mapping[str, str] = {
    "records": "required: the path to the records, ending in * or [*]",
    "lines": "true: the file is JSON lines (default false)",
    "conversation_is": "name (a sample id) or index (the conversation's 0-based index)",
    "latency_unit": "s (default) or ms",
    "extra": "paths of numbers kept beside each answer",
    "name": "the system's label in tables",
    "fields": "a table: a path in the record for each of " + ", ".join(FIELDS),
    "verdicts": "an array of tables, one per judge",
    "memories": "a table: where the retrieved memories are",
}
"""The top-level keys of a mapping file and what each holds."""

VERDICT_KEYS: Mapping[str, str] = {
    "field": "required: the verdict's path in the record (ending in .* for one judge per field)",
    "labels": "required: boolean, binary, graded or named",
    "map": "named: each label's value in [0, 1]",
    "ignore_case": "named: compare labels ignoring case",
    "min": "graded: the lowest grade (default 0)",
    "max": "graded: the highest grade",
    "judge": "the judge's name (default: the field's name)",
    "judge_field": "a path naming the judge per record",
    "meaning": "the labels' meaning in words",
    "optional": "true: a record may lack the field",
}
"""The keys of a ``[[verdicts]]`` table."""

MEMORY_KEYS: Mapping[str, str] = {
    "field": "required: the path of the memory list in the record",
    "text": "each memory's text (leave out when the items are texts)",
    "id": "each memory's id",
    "score": "each memory's score",
}
"""The keys of the ``[memories]`` table."""

_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


class _Mapping:
    """A mapping file being read: its path, its text (for line numbers) and its document."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = read_bytes(path, "mapping file")
        self.text = decode_utf8(path, self.data)
        try:
            self.document = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as err:
            found = _TOML_LINE.search(str(err))
            problem = _TOML_LINE.sub("", str(err)).strip()
            raise InputError(path, int(found[1]) if found else None, f"is not TOML: {problem}") from None
        self.lines = self.text.splitlines()

    def line_of(self, key: str, table: str | None = None, index: int = 0) -> int | None:
        """Best effort: the line of ``key =`` (in the ``index``-th ``[table]``/``[[table]]`` when given)."""
        start, stop = 0, len(self.lines)
        if table is not None:
            header = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?")
            heads = [i for i, line in enumerate(self.lines) if header.match(line)]
            if index < len(heads):
                start = heads[index] + 1
                stop = next((i for i in range(start, len(self.lines)) if self.lines[i].lstrip().startswith("[")), stop)
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        found = next((i + 1 for i in range(start, stop) if pattern.match(self.lines[i])), None)
        if found is None and table is not None and index < len(heads):
            return heads[index] + 1
        return found

    def fail(self, problem: str, key: str | None = None, table: str | None = None, index: int = 0) -> InputError:
        line = None if key is None else self.line_of(key, table, index)
        return InputError(self.path, line, problem)


def _unknown(m: _Mapping, table: Mapping[str, Any], known: Mapping[str, str], where: str, index: int = 0) -> None:
    header = None if where == "the top level" else where.strip("[]")
    for key in table:
        if key not in known:
            raise m.fail(
                f"{where} has the key {quote(key)}, which a mapping file does not take there; keys: {', '.join(known)}",
                key,
                header,
                index,
            )


def _typed(
    m: _Mapping,
    table: Mapping[str, Any],
    key: str,
    kinds: type | tuple[type, ...],
    what: str,
    header: str | None = None,
    index: int = 0,
) -> Any:
    """``table[key]`` when it is of ``kinds`` (a bool only where ``bool`` is named), ``None`` when absent."""
    value = table.get(key)
    if value is None:
        return None
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        where = f"[{header}] " if header else ""
        raise m.fail(f"{where}{key}: {quote(value)} is not {what}", key, header, index)
    return value


def _verdict(m: _Mapping, index: int, table: object) -> VerdictField:
    if not isinstance(table, dict):
        raise m.fail("verdicts: is not an array of tables; write one [[verdicts]] table per judge", "verdicts")
    _unknown(m, table, VERDICT_KEYS, "[[verdicts]]", index)
    for key in ("field", "labels"):
        if key not in table:
            raise m.fail(f"[[verdicts]] number {index + 1} has no {key}; {VERDICT_KEYS[key]}", None)
    strings = {
        k: _typed(m, table, k, str, "text", "verdicts", index)
        for k in ("field", "labels", "judge", "judge_field", "meaning")
    }
    names = _typed(m, table, "map", dict, "a table of labels and values", "verdicts", index)
    try:
        labels = LabelMap(
            strings["labels"],
            low=_typed(m, table, "min", (int, float), "a number", "verdicts", index) or 0.0,
            high=_typed(m, table, "max", (int, float), "a number", "verdicts", index),
            names=dict(names or {}),
            ignore_case=bool(_typed(m, table, "ignore_case", bool, "true or false", "verdicts", index)),
        )
        return VerdictField(
            strings["field"],
            labels,
            judge=strings["judge"],
            meaning=strings["meaning"],
            optional=bool(_typed(m, table, "optional", bool, "true or false", "verdicts", index)),
            judge_field=strings["judge_field"],
        )
    except ParameterError as err:
        raise m.fail(f"[[verdicts]] number {index + 1}: {err}", err.name.split()[-1], "verdicts", index) from None


def read_mapping(path: str | Path) -> tuple[Shape, str | None, str]:
    """The :class:`~agentmemory.answers.shape.Shape` a mapping file describes, its ``name`` (or ``None``) and its sha256.

    Raises:
        MissingFileError: no such file.
        InputError: not TOML, or a key or value the mapping does not take, naming the file and line.
    """
    m = _Mapping(Path(path))
    doc = m.document
    _unknown(m, doc, MAPPING_KEYS, "the top level")
    if "records" not in doc:
        raise m.fail('has no records; say where the records are, e.g. records = "detailed_results.*[*]"')
    fields = _typed(m, doc, "fields", dict, "a table", None) or {}
    _unknown(m, fields, FIELDS, "[fields]")
    for key in fields:
        _typed(m, fields, key, str, "a path (text)", "fields")
    extra = _typed(m, doc, "extra", list, "a list of paths", None) or []
    if not all(isinstance(p, str) for p in extra):
        raise m.fail(f"extra: {quote(extra)} is not a list of paths (texts)", "extra")
    verdicts = doc.get("verdicts", [])
    if not isinstance(verdicts, list):
        raise m.fail("verdicts: is not an array of tables; write one [[verdicts]] table per judge", "verdicts")
    memories = _typed(m, doc, "memories", dict, "a table", None)
    memory_fields = None
    if memories is not None:
        _unknown(m, memories, MEMORY_KEYS, "[memories]")
        if "field" not in memories:
            raise m.fail(f"[memories] has no field; {MEMORY_KEYS['field']}", None)
        given = {k: _typed(m, memories, k, str, "a path (text)", "memories") for k in MEMORY_KEYS}
        memory_fields = MemoryFields(given["field"], given["text"], given["id"], given["score"])
    try:
        shape = Shape(
            records=_typed(m, doc, "records", str, "a path (text)"),
            lines=bool(_typed(m, doc, "lines", bool, "true or false")),
            fields=dict(fields),
            conversation_is=_typed(m, doc, "conversation_is", str, "name or index"),
            latency_unit=_typed(m, doc, "latency_unit", str, "s or ms") or "s",
            extra=tuple(extra),
            verdicts=tuple(_verdict(m, i, t) for i, t in enumerate(verdicts)),
            memories=memory_fields,
        )
    except ParameterError as err:
        parts = err.name.split()
        if parts[0] in ("fields", "memories") and len(parts) > 1:
            raise m.fail(str(err), parts[1], parts[0]) from None
        raise m.fail(str(err), parts[0]) from None
    name = _typed(m, doc, "name", str, "text")
    return shape, name, hashlib.sha256(m.data).hexdigest()


def read(source: AnswerSource, *, mapping: str) -> AnswerFile:
    """The ``mapping`` reader: ``source`` read as the mapping file ``mapping`` says (module docstring)."""
    if not mapping:
        raise ParameterError(
            "mapping", mapping, "is empty", "pass mapping='FILE.toml', the mapping file describing the answer file"
        )
    if len(source.paths) != 1:
        raise ParameterError(
            "path",
            [p.as_posix() for p in source.paths],
            "names several files",
            "a mapping file describes one answer file",
        )
    shape, name, sha = read_mapping(mapping)
    result = read_shape(shape, source)
    params = {"mapping": Path(mapping).name, "mapping_sha256": sha}
    return source.answer_file(
        "mapping", result.records, name=name, judges=result.judges, notes=result.notes, params=params
    )


FORMAT = AnswerFormat(
    name="mapping",
    recognise=None,
    read=read,
    options=(
        FormatOption("mapping", str, "", "the TOML mapping file that says where the records and their fields are"),
    ),
    description="any JSON or JSON-lines answer file, described by a TOML mapping file (mapping=FILE.toml)",
)
