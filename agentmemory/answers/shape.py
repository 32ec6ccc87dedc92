"""Reading records out of any JSON shape: the engine behind the mapping files and the built-in readers.

A :class:`Shape` says where an answer file's records are and which field of
a record holds what; :func:`read_shape` walks the file once and turns every
record into an :class:`~agentmemory.answers.records.AnswerRecord`, refusing a
bad record in one line (the file, the record's place, the field, the value
and what is allowed).  The ``mapping`` format reads a :class:`Shape` from a
TOML file (:mod:`agentmemory.answers.mapping`); ``mem0`` and ``evermemos``
are shapes written in Python, and ``zep`` reads its two files with two.

**Paths.**  A path is a chain of steps: ``name`` (an object's field; ``.``
between names), ``*`` (every field of an object, in file order), ``[*]``
(every item of a list), ``[3]`` (one item), ``["a.b"]`` (a field whose name
holds a dot or a bracket).  ``detailed_results.*[*]`` is every item of every
list under ``detailed_results``; ``[*].qa[*]`` every ``qa`` item of every
conversation of a list.  The records' path must end in a wildcard (``*`` or
``[*]``), which steps over the records; the wildcard before it, if any, steps
over conversations, and what it stepped over (an object's key or a list's
index) is the record's conversation unless a field says otherwise.  In a
JSON-lines file the path starts at the list of the lines' values, so
``[*]`` is every line.

**Fields** (:data:`FIELDS`) are paths inside a record without wildcards
(``usage.prompt_tokens``); a verdict's path may end in ``.*``, one verdict
per field of that object, each judge named by its field.  A field the shape
names must be in every record (``null`` is allowed and means "not stated";
for a verdict, no verdict).  ``"@conversation"`` is the key (or index) the
conversation wildcard stepped over, and a path starting ``@conversation.``
is read in the conversation object instead of the record
(``conversation = "@conversation.sample_id"``).

**Places.**  A record's ``where`` is its path in the file (``conv-1[3]``,
``detailed_results.locomo_exp_user_0[12]``), or ``line 17`` in a JSON-lines
file (``line 17: qa[2]`` when the path goes inside the line).

**Positions.**  A record's ``position`` is its 0-based index among the
records of its conversation, in file order (the ``position`` field
overrides it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from agentmemory.answers.formats import AnswerSource
from agentmemory.answers.labels import LabelMap, label_text
from agentmemory.answers.records import AnswerRecord, ImportedMemory, Verdict
from agentmemory.errors import InputError, ParameterError, quote
from agentmemory.files.reading import describe_json

__all__ = [
    "CONVERSATION_KEY",
    "FIELDS",
    "MemoryFields",
    "Shape",
    "ShapeResult",
    "VerdictField",
    "parse_path",
    "read_shape",
]

FIELDS: Mapping[str, str] = MappingProxyType(
    {
        "question_id": "the question's id in the file (text or an integer)",
        "conversation": "the record's conversation: a sample id, or an index (see conversation_is); "
        "'@conversation' (the default when the records' path has a conversation wildcard) takes what that "
        "wildcard stepped over",
        "position": "the record's 0-based position among its conversation's records (default: its place in the file)",
        "question": "the question's text",
        "gold": "the gold answer the file carries (text or a number; checked, never scored with)",
        "category": "the question's category (text or an integer)",
        "answer": "the generated answer",
        "tokens": "the tokens of context the answering model was given (an integer)",
        "latency": "the time the harness reports for the question (a number, in latency_unit)",
    }
)
"""Every field a shape can name and what it holds (the mapping files' ``[fields]`` table)."""

CONVERSATION_KEY = "@conversation"
"""The value of ``conversation`` that takes the conversation wildcard's key or index."""

CONVERSATION_IS = ("name", "index")
LATENCY_UNITS: Mapping[str, int] = MappingProxyType({"s": 1, "ms": 1000})  # divide by this for seconds

_MISSING: Any = object()
_STEP = re.compile(r'\.?(?:\[\*\]|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|(\*)|([^.\[\]"*]+))')
_DIGITS = re.compile(r"([0-9]+)$")


class Step(NamedTuple):
    """One step of a path: ``kind`` is ``field`` (``key``), ``item`` (``index``), ``fields`` (``*``) or ``items`` (``[*]``)."""

    kind: str
    key: str | int | None = None

    @property
    def wild(self) -> bool:
        return self.kind in ("fields", "items")


def parse_path(text: str, what: str = "path") -> tuple[Step, ...]:
    """The steps of a path (module docstring).

    Raises:
        ParameterError: ``text`` is not a path; ``what`` names it.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(what, text, "is not a path", "write e.g. 'detailed_results.*[*]' or 'qa[*]'")
    steps: list[Step] = []
    position = 0
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None or (match.group().startswith(".") and position == 0):
            raise ParameterError(
                what,
                text,
                f"is not a path (at character {position + 1})",
                "write steps like name, *, [*], [3] or [\"a.b\"] joined by '.', e.g. 'detailed_results.*[*]'",
            )
        index, quoted, star, name = match.group(1), match.group(2), match.group(3), match.group(4)
        if match.group().lstrip(".") == "[*]":
            steps.append(Step("items"))
        elif index is not None:
            steps.append(Step("item", int(index)))
        elif star is not None:
            steps.append(Step("fields"))
        else:
            key = name if name is not None else re.sub(r"\\(.)", r"\1", quoted)
            steps.append(Step("field", key.strip()))
        position = match.end()
    return tuple(steps)


def render(steps: Sequence[Step]) -> str:
    """A visited path as text: ``detailed_results.locomo_exp_user_0[12]``, ``'0'[3]`` for a key that is a number."""
    out = ""
    for step in steps:
        if step.kind in ("item", "items"):
            out += f"[{step.key}]"
        elif isinstance(step.key, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", step.key):
            out += f".{step.key}" if out else step.key
        else:
            out += f"[{quote(step.key, 60)}]"
    return out


@dataclass(frozen=True)
class VerdictField:
    """Where one judge's verdict is (``field``, a path that may end in ``.*``) and how its labels map.

    ``judge`` names the judge (default: the field's last name; with ``.*``
    each field's own name); ``meaning`` replaces the label map's words in
    :attr:`AnswerFile.judges <agentmemory.answers.records.AnswerFile.judges>`;
    ``optional`` lets a record lack the field (no verdict); ``judge_field``
    is a path in the record whose text names the judge (LongMemEval's
    ``autoeval_label.model``), ``judge`` (or the field's name) when a record
    lacks it.
    """

    field: str
    labels: LabelMap
    judge: str | None = None
    meaning: str | None = None
    optional: bool = False
    judge_field: str | None = None

    def __post_init__(self) -> None:
        steps = self.steps
        _plain(steps[:-1] if self.every else steps, "verdict field", self.field)
        if self.judge_field is not None:
            _plain(parse_path(self.judge_field, "judge_field"), "judge_field", self.judge_field)
        if self.every and (self.judge is not None or self.judge_field is not None):
            raise ParameterError(
                "judge",
                self.judge,
                f"names one judge for {quote(self.field)}, which holds several",
                "leave it out: each field names its judge",
            )

    @property
    def steps(self) -> tuple[Step, ...]:
        return parse_path(self.field, "verdict field")

    @property
    def every(self) -> bool:
        """Whether the field ends in ``.*`` (one verdict per field of an object)."""
        return self.steps[-1].kind == "fields"


@dataclass(frozen=True)
class MemoryFields:
    """Where a record's retrieved memories are: ``field`` (a list; a text is one memory), and in each item
    the paths of its ``text`` (``None``: the item is the text), ``id`` and ``score``."""

    field: str
    text: str | None = None
    id: str | None = None
    score: str | None = None

    def __post_init__(self) -> None:
        for name in ("field", "text", "id", "score"):
            path = getattr(self, name)
            if path is not None:
                _plain(parse_path(path, f"memories {name}"), f"memories {name}", path)


@dataclass(frozen=True)
class Shape:
    """Where an answer file's records are and what their fields hold (module docstring).

    Attributes:
        records: the path to the records, ending in a wildcard.
        lines: the file is JSON lines (the path starts at the list of the lines' values).
        fields: :data:`FIELDS` name -> path in a record.
        conversation_is: ``"name"`` (the conversation is a sample id, as
            text) or ``"index"`` (its 0-based index in the dataset: an
            integer, or the last run of digits of a text, ``locomo_exp_user_3``
            -> 3); ``None``: ``index`` when the conversation is the index of
            a list the conversation wildcard steps over, ``name`` otherwise.
        latency_unit: ``"s"`` or ``"ms"``.
        extra: paths of numbers kept in :attr:`AnswerRecord.extra` (a missing or null one is left out).
        verdicts: the judges, in order.
        memories: where the retrieved memories are, or ``None``.
    """

    records: str
    lines: bool = False
    fields: Mapping[str, str] = field(default_factory=dict)
    conversation_is: str | None = None
    latency_unit: str = "s"
    extra: tuple[str, ...] = ()
    verdicts: tuple[VerdictField, ...] = ()
    memories: MemoryFields | None = None

    def __post_init__(self) -> None:
        steps = parse_path(self.records, "records")
        if not steps[-1].wild:
            raise ParameterError(
                "records", self.records, "does not end in * or [*]", "end the path with the step over the records"
            )
        unknown = [name for name in self.fields if name not in FIELDS]
        if unknown:
            raise ParameterError("fields", unknown[0], "is not a field", "name any of: " + ", ".join(FIELDS))
        for name, path in self.fields.items():
            if not (name == "conversation" and path == CONVERSATION_KEY):
                _plain(parse_path(path, f"fields {name}"), f"fields {name}", path)
        uses = [(n, p) for n, p in self.fields.items() if p == CONVERSATION_KEY or p.startswith(CONVERSATION_KEY + ".")]
        if uses and not self.has_conversation_wildcard:
            raise ParameterError(
                f"fields {uses[0][0]}",
                uses[0][1],
                "reads the conversation, but the records' path has no wildcard before the records' own",
                "step over conversations first, e.g. records = '*.qa[*]' or '[*].items[*]'",
            )
        if self.conversation_is is not None and self.conversation_is not in CONVERSATION_IS:
            raise ParameterError(
                "conversation_is", self.conversation_is, "is not a way to read a conversation", "choose name or index"
            )
        if self.latency_unit not in LATENCY_UNITS:
            raise ParameterError("latency_unit", self.latency_unit, "is not a unit", "choose s or ms")
        for path in self.extra:
            _plain(parse_path(path, "extra"), "extra", path)

    @property
    def record_steps(self) -> tuple[Step, ...]:
        return parse_path(self.records, "records")

    @property
    def has_conversation_wildcard(self) -> bool:
        return sum(step.wild for step in self.record_steps) >= 2


def _plain(steps: Sequence[Step], what: str, text: str) -> None:
    if any(step.wild for step in steps):
        raise ParameterError(what, text, "holds a wildcard", "name one field (a verdict's path may end in .*)")


@dataclass(frozen=True)
class ShapeResult:
    """What :func:`read_shape` read: the records, each judge's words, and notes for the card."""

    records: tuple[AnswerRecord, ...]
    judges: Mapping[str, str]
    notes: tuple[str, ...]


class _Found(NamedTuple):
    """A record found by the walk: its value, the steps taken, the conversation key (or ``_MISSING``)."""

    value: Any
    trail: tuple[Step, ...]
    conversation: Any
    holder: Any  # the value the conversation wildcard stepped onto (``_MISSING`` without one)


class _File(NamedTuple):
    """The file a shape walks: its path, for messages, and each line's number in a JSON-lines file (else ``None``)."""

    path: Path
    numbers: tuple[int, ...] | None


def _walk(
    source: _File,
    value: Any,
    steps: Sequence[Step],
    trail: tuple[Step, ...],
    conversation: tuple[Any, Any],
    wild: int,
) -> Iterator[_Found]:
    """Every value at the end of ``steps``; ``wild`` counts the wildcards left (the last one steps over records)."""
    if not steps:
        yield _Found(value, trail, conversation[0], conversation[1])
        return
    step, rest = steps[0], steps[1:]
    if step.kind in ("field", "fields") and not isinstance(value, dict):
        raise _shape_error(source, trail, f"expected an object; found {describe_json(value)}")
    if step.kind in ("item", "items") and not isinstance(value, list):
        raise _shape_error(source, trail, f"expected a list; found {describe_json(value)}")
    if step.kind == "field":
        if step.key not in value:
            raise _shape_error(source, trail, f"has no field {quote(step.key)}; expected the path to the records")
        yield from _walk(source, value[step.key], rest, (*trail, step), conversation, wild)
    elif step.kind == "item":
        if not isinstance(step.key, int) or step.key >= len(value):
            raise _shape_error(source, trail, f"has {len(value)} items, no item [{step.key}]")
        yield from _walk(source, value[step.key], rest, (*trail, step), conversation, wild)
    else:
        pairs = value.items() if step.kind == "fields" else enumerate(value)
        kind = "field" if step.kind == "fields" else "item"
        for key, inner in pairs:
            here = (
                (key, inner) if wild == 2 else conversation
            )  # the wildcard before the records' steps over conversations
            yield from _walk(source, inner, rest, (*trail, Step(kind, key)), here, wild - 1)


def _shape_error(source: _File, trail: Sequence[Step], problem: str) -> InputError:
    line, inner = _place(source, trail)
    return InputError(source.path, line, f"{inner or ('the line' if line else '$')}: {problem}")


def _place(source: _File, trail: Sequence[Step]) -> tuple[int | None, str]:
    """``(line, path inside it)`` of a trail: the file line in a JSON-lines file (``None`` in a JSON file)."""
    if source.numbers is not None and trail and isinstance(trail[0].key, int):
        return source.numbers[trail[0].key], render(trail[1:])
    return None, render(trail)


class _Record:
    """One record being read: its value, its place (for messages) and the getters of its fields."""

    def __init__(
        self,
        source: _File,
        value: Any,
        line: int | None,
        inner: str,
        conversation: Any = _MISSING,
        holder: Any = _MISSING,
    ) -> None:
        self.source = source
        self.value = value
        self.line = line
        self.inner = inner
        self.conversation_key = conversation
        self.holder = holder
        if line is None:
            self.where = inner
        else:
            self.where = f"line {line}" + (f": {inner}" if inner else "")

    @classmethod
    def found(cls, source: _File, found: _Found) -> _Record:
        line, inner = _place(source, found.trail)
        return cls(source, found.value, line, inner, found.conversation, found.holder)

    def inside(self, path: str, value: Any) -> _Record:
        """The value at ``path`` inside this record, as a record of its own (for a memory's fields)."""
        return _Record(self.source, value, self.line, f"{self.inner}.{path}" if self.inner else path)

    def error(self, name: str, problem: str) -> InputError:
        prefix = f"{self.inner}." if self.inner else ""
        return InputError(self.source.path, self.line, f"{prefix}{name}: {problem}")

    def get(self, path: str, what: str, *, required: bool = True) -> Any:
        """The value at ``path`` (``_MISSING`` when absent and not ``required``); a path that starts with
        ``@conversation.`` is read in the conversation the record is under."""
        value, inside = self.value, path
        if path.startswith(CONVERSATION_KEY + "."):
            value, inside = self.holder, path[len(CONVERSATION_KEY) + 1 :]
            if value is _MISSING:
                raise self.error(path, "names the conversation, but the records' path has no conversation wildcard")
        for step in parse_path(inside):
            if step.kind == "field" and isinstance(value, dict) and step.key in value:
                value = value[step.key]
            elif (
                step.kind == "item" and isinstance(value, list) and isinstance(step.key, int) and step.key < len(value)
            ):
                value = value[step.key]
            elif required:
                raise self.error(path, f"missing; the shape reads {what} from it")
            else:
                return _MISSING
        return value


def read_shape(shape: Shape, source: AnswerSource, index: int = 0) -> ShapeResult:
    """Every record of ``source``'s file ``index`` (the first by default), read as ``shape`` says (module docstring).

    Raises:
        InputError: the file is not JSON (JSON lines with ``lines``), the
            records' path is not in it, or a record is bad: one line naming
            the file, the record's place, the field and what is allowed.
    """
    if shape.lines:
        pairs = source.json_lines(index)
        file = _File(source.paths[index], tuple(number for number, _ in pairs))
        document: Any = [value for _, value in pairs]
    else:
        file = _File(source.paths[index], None)
        document = source.json(index)
    steps = shape.record_steps
    wild = sum(step.wild for step in steps)
    if not isinstance(document, (dict, list)):
        raise _shape_error(file, (), f"expected an object or a list; found {describe_json(document)}")
    reader = _Reader(shape)
    records = [
        reader.record(_Record.found(file, found))
        for found in _walk(file, document, steps, (), (_MISSING, _MISSING), wild)
    ]
    return ShapeResult(tuple(records), MappingProxyType(dict(reader.judges)), reader.notes())


class _Reader:
    """Turns found records into :class:`AnswerRecord`\\ s, keeping each judge's words and the null verdicts."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.judges: dict[str, str] = {}
        self.nulls: dict[str, int] = {}
        self.counts: dict[object, int] = {}
        self.fields = dict(shape.fields)
        if "conversation" not in self.fields and shape.has_conversation_wildcard:
            self.fields["conversation"] = CONVERSATION_KEY
        over_list = [step for step in shape.record_steps if step.wild][-2:-1] == [Step("items")]
        by_index = self.fields.get("conversation") == CONVERSATION_KEY and over_list
        self.conversation_is = shape.conversation_is or ("index" if by_index else "name")

    def notes(self) -> tuple[str, ...]:
        return tuple(
            f"{judge}: {n} record{'s' if n != 1 else ''} without a verdict (null: a failed judge call, not a wrong answer)"
            for judge, n in self.nulls.items()
        )

    def record(self, rec: _Record) -> AnswerRecord:
        if not isinstance(rec.value, dict):
            raise InputError(
                rec.source.path,
                rec.line,
                f"{rec.inner or 'the line'}: expected a record object; found {describe_json(rec.value)}",
            )
        conversation = self._conversation(rec)
        position = self._position(rec, conversation)
        shape = self.shape
        return AnswerRecord(
            where=rec.where,
            question_id=self._id(rec),
            conversation=conversation,
            position=position,
            question=self._text(rec, "question"),
            gold=self._text(rec, "gold", numbers=True),
            category=self._category(rec),
            answer=self._text(rec, "answer", numbers=True),
            verdicts=tuple(v for verdict in shape.verdicts for v in self._verdicts(rec, verdict)),
            memories=self._memories(rec),
            tokens=self._tokens(rec),
            latency=self._latency(rec),
            extra=MappingProxyType(self._extra(rec)),
        )

    def _conversation(self, rec: _Record) -> str | int | None:
        path = self.fields.get("conversation")
        if path is None:
            return None
        raw = rec.conversation_key if path == CONVERSATION_KEY else rec.get(path, "the conversation")
        if raw is None or raw is _MISSING:
            return None
        name = "conversation" if path == CONVERSATION_KEY else path
        if self.conversation_is == "index":
            if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
                return raw
            digits = _DIGITS.search(raw) if isinstance(raw, str) else None
            if digits is None:
                raise rec.error(
                    name, f"{quote(raw)} holds no conversation index; expected an integer or a text ending in one"
                )
            return int(digits[1])
        if isinstance(raw, str) and raw:
            return raw
        raise rec.error(
            name, f"{quote(raw)} is not a conversation's name; expected its sample id (or read it as an index)"
        )

    def _position(self, rec: _Record, conversation: object) -> int:
        path = self.fields.get("position")
        if path is None:
            count = self.counts.get(conversation, 0)
            self.counts[conversation] = count + 1
            return count
        raw = rec.get(path, "the position")
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
            raise rec.error(path, f"{quote(raw)} is not a position; expected an integer >= 0")
        return raw

    def _id(self, rec: _Record) -> str | None:
        path = self.fields.get("question_id")
        raw = None if path is None else rec.get(path, "the question id")
        if raw is None:
            return None
        if isinstance(raw, int) and not isinstance(raw, bool):
            return str(raw)
        if isinstance(raw, str) and raw:
            return raw
        raise rec.error(str(path), f"{quote(raw)} is not a question id; expected a non-empty text or an integer")

    def _text(self, rec: _Record, name: str, *, numbers: bool = False) -> str | None:
        path = self.fields.get(name)
        raw = None if path is None else rec.get(path, f"the {name}")
        if raw is None or isinstance(raw, str):
            return raw
        if numbers and isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return label_text(raw)
        allowed = "text or a number" if numbers else "text"
        raise rec.error(str(path), f"{describe_json(raw)} is not the {name}; expected {allowed} (or null)")

    def _category(self, rec: _Record) -> str | int | None:
        path = self.fields.get("category")
        raw = None if path is None else rec.get(path, "the category")
        if raw is None or isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)):
            return raw
        raise rec.error(str(path), f"{describe_json(raw)} is not a category; expected text or an integer (or null)")

    def _tokens(self, rec: _Record) -> int | None:
        path = self.fields.get("tokens")
        raw = None if path is None else rec.get(path, "the tokens")
        if raw is None:
            return None
        if not isinstance(raw, bool) and isinstance(raw, (int, float)) and float(raw).is_integer() and raw >= 0:
            return int(raw)
        raise rec.error(str(path), f"{describe_json(raw)} is not a token count; expected an integer >= 0 (or null)")

    def _latency(self, rec: _Record) -> float | None:
        path = self.fields.get("latency")
        raw = None if path is None else rec.get(path, "the latency")
        if raw is None:
            return None
        if not isinstance(raw, bool) and isinstance(raw, (int, float)) and math.isfinite(raw) and raw >= 0:
            return float(raw) / LATENCY_UNITS[self.shape.latency_unit]
        raise rec.error(
            str(path), f"{describe_json(raw)} is not a latency; expected a number >= 0 in {self.shape.latency_unit}"
        )

    def _extra(self, rec: _Record) -> dict[str, float]:
        kept: dict[str, float] = {}
        for path in self.shape.extra:
            raw = rec.get(path, "an extra number", required=False)
            if raw is _MISSING or raw is None:
                continue
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
                raise rec.error(path, f"{describe_json(raw)} is not a number; extra fields hold numbers (or null)")
            kept[path] = float(raw)
        return kept

    def _verdicts(self, rec: _Record, spec: VerdictField) -> list[Verdict]:
        steps = spec.steps
        if spec.every:
            prefix = spec.field.rsplit(".", 1)[0] if "." in spec.field else ""
            holder = rec.value if not prefix else rec.get(prefix, "the verdicts", required=not spec.optional)
            if holder is _MISSING:
                return []
            if not isinstance(holder, dict):
                raise rec.error(prefix or "record", f"expected an object of verdicts; found {describe_json(holder)}")
            pairs = [(str(key), f"{prefix}.{key}" if prefix else str(key), raw) for key, raw in holder.items()]
        else:
            raw = rec.get(spec.field, "a verdict", required=not spec.optional)
            if raw is _MISSING:
                return []
            pairs = [(self._judge(rec, spec, str(steps[-1].key)), spec.field, raw)]
        out = []
        for judge, path, raw in pairs:
            self.judges.setdefault(judge, spec.meaning or spec.labels.words())
            if raw is None:
                self.nulls[judge] = self.nulls.get(judge, 0) + 1
                continue
            try:
                value = spec.labels.value(raw)
            except ValueError as err:
                raise rec.error(path, str(err)) from None
            out.append(Verdict(judge, value, label_text(raw)))
        return out

    @staticmethod
    def _judge(rec: _Record, spec: VerdictField, last: str) -> str:
        """The judge's name: the record's ``judge_field`` when it has one, else ``judge``, else the field's name."""
        named = _MISSING if spec.judge_field is None else rec.get(spec.judge_field, "the judge", required=False)
        if named is _MISSING or named is None:
            return spec.judge or last
        if not isinstance(named, str) or not named.strip():
            raise rec.error(str(spec.judge_field), f"{describe_json(named)} is not a judge's name; expected text")
        return named

    def _memories(self, rec: _Record) -> tuple[ImportedMemory, ...] | None:
        spec = self.shape.memories
        if spec is None:
            return None
        raw = rec.get(spec.field, "the memories")
        if raw is None:
            return None
        if isinstance(raw, str):
            return (ImportedMemory(raw),)
        if not isinstance(raw, list):
            raise rec.error(spec.field, f"expected a list of memories (or one text); found {describe_json(raw)}")
        return tuple(_memory(rec, spec, f"{spec.field}[{i}]", item) for i, item in enumerate(raw))


def _memory(rec: _Record, spec: MemoryFields, where: str, item: Any) -> ImportedMemory:
    if spec.text is None:
        if not isinstance(item, str):
            raise rec.error(where, f"expected a memory's text; found {describe_json(item)}")
        return ImportedMemory(item)
    if not isinstance(item, dict):
        raise rec.error(where, f"expected a memory object with {quote(spec.text)}; found {describe_json(item)}")
    inner = rec.inside(where, item)
    text = inner.get(spec.text, "the memory's text")
    if not isinstance(text, str):
        raise inner.error(spec.text, f"{describe_json(text)} is not a memory's text; expected text")
    ident = None if spec.id is None else inner.get(spec.id, "the memory's id")
    if isinstance(ident, int) and not isinstance(ident, bool):
        ident = str(ident)
    if ident is not None and (not isinstance(ident, str) or not ident):
        raise inner.error(str(spec.id), f"{describe_json(ident)} is not a memory id; expected non-empty text (or null)")
    score = None if spec.score is None else inner.get(spec.score, "the memory's score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score)
    ):
        raise inner.error(str(spec.score), f"{describe_json(score)} is not a score; expected a number (or null)")
    return ImportedMemory(text, ident, None if score is None else float(score))
