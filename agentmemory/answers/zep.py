"""Zep's LoCoMo results (the ``zep`` answer format): a grades file and its responses file, read as one.

getzep/zep-papers (``kg_architecture_agent_memory/locomo_eval``) writes three
files, each one JSON object keyed by ``locomo_experiment_user_<n>`` (``n``
the conversation's 0-based index in ``locomo10.json``), each value the
conversation's questions, category 5 left out, in the dataset's order:

* ``zep_locomo_grades.json``: ``{"question", "answer", "golden_answer", "grade", "category"}``:
  ``grade`` is the judge's verdict (``true`` correct, ``false`` wrong; Zep's
  judge is gpt-4o-mini asked for CORRECT or WRONG); any other label is refused;
* ``zep_locomo_responses.json``: ``{"question", "answer", "golden_answer", "duration_ms"}``
  (the time to generate the answer), and the retrieved ``context`` when a
  responses file carries it;
* ``zep_locomo_search_results.json`` (optional): ``{"context", "duration_ms"}`` per
  question, the retrieved context and the time of the search.

The reader takes the grades and responses paths (and the search results'),
or one of the first two and finds the others beside it by name (``grades``
<-> ``responses`` -> ``search_results`` in the file name); the grades and
responses are required, and must agree record by record (same conversations,
counts, questions and answers), or the pair is refused.  A record is the
grade's (``question``, ``gold``, ``answer``, ``category``, the verdict of the
judge ``grade``), with ``latency`` the response's ``duration_ms`` in seconds
(answering only) and ``extra`` ``search_ms`` (the search's ``duration_ms``)
when the search results are read.

**Memories.**  The context is split by the rule of Zep's template
(``compose_search_context``): every line that starts with ``- `` (after
indentation) between ``<FACTS>`` and ``</FACTS>``, then between
``<ENTITIES>`` and ``</ENTITIES>``, is one memory, its text the line without
the dash and without a fact's trailing `` (event_time: ...)``, in order (facts first: the edges, ranked by Zep's cross-encoder,
then the entity summaries); a context without those tags is one memory with
the whole context.  Without any context ``memories`` is ``None``.

Recognised by: a JSON object of lists whose first record has ``golden_answer``
with ``grade`` (grades) or ``duration_ms`` (responses).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from agentmemory.answers.formats import AnswerFormat, AnswerSource
from agentmemory.answers.labels import LabelMap
from agentmemory.answers.mem0 import first_list_record
from agentmemory.answers.records import AnswerFile, AnswerRecord, ImportedMemory
from agentmemory.answers.shape import Shape, VerdictField, read_shape
from agentmemory.errors import InputError, MissingFileError, quote
from agentmemory.files.reading import describe_json

__all__ = ["FORMAT", "read", "recognise", "split_context"]

GRADES = Shape(
    records="*[*]",
    conversation_is="index",
    fields={"question": "question", "gold": "golden_answer", "answer": "answer", "category": "category"},
    verdicts=(
        VerdictField(
            "grade",
            LabelMap("boolean"),
            meaning="true correct, false wrong (Zep's gpt-4o-mini judge: CORRECT or WRONG)",
        ),
    ),
)
RESPONSES = Shape(
    records="*[*]",
    conversation_is="index",
    fields={"question": "question", "answer": "answer", "latency": "duration_ms"},
    latency_unit="ms",
)
_ROLES = ("grades", "responses", "search_results")
_SECTIONS = (re.compile(r"<FACTS>(.*?)</FACTS>", re.DOTALL), re.compile(r"<ENTITIES>(.*?)</ENTITIES>", re.DOTALL))
_ITEM = re.compile(r"^\s*- (.*)$")
_EVENT_TIME = re.compile(r"\s*\(event_time: [^()]*\)\s*$")


def _role(source: AnswerSource, index: int) -> str | None:
    """``grades`` or ``responses`` for a Zep file of that kind, else ``None``."""
    record = first_list_record(source, index)
    if record is None or "golden_answer" not in record:
        return None
    if "grade" in record:
        return "grades"
    return "responses" if "duration_ms" in record else None


def recognise(source: AnswerSource) -> bool:
    """True when every given file is a Zep grades or responses file (a search results file may come third)."""
    if not 1 <= len(source.paths) <= 3:
        return False
    roles = [_role(source, i) for i in range(len(source.paths))]
    known = [r for r in roles if r is not None]
    return bool(known) and len(set(known)) == len(known) and roles.count(None) <= (1 if len(roles) == 3 else 0)


def _sibling(path: Path, role: str) -> Path:
    for other in _ROLES:
        if other in path.name:
            return path.with_name(path.name.replace(other, role))
    return path.with_name(f"zep_locomo_{role}.json")


def _files(source: AnswerSource) -> dict[str, Path]:
    """The grades, responses and (when there) search results paths, given or found beside the given ones."""
    files: dict[str, Path] = {}
    for i, path in enumerate(source.paths):
        role = _role(source, i) or "search_results"
        if role in files:
            raise InputError(
                path, None, f"is a second Zep {role} file ({files[role].as_posix()} is the first); pass one of each"
            )
        files[role] = path
    anchor = files.get("grades") or files.get("responses") or source.path
    for role in _ROLES:
        if role not in files:
            found = _sibling(anchor, role)
            if found.is_file():
                files[role] = found
            elif role != "search_results":
                raise MissingFileError(
                    found, f"Zep {role} file beside {anchor.name} (pass both the grades and the responses)"
                )
    return files


def split_context(context: str) -> tuple[ImportedMemory, ...]:
    """The memories of a Zep context (module docstring): the ``- `` lines of <FACTS>, then <ENTITIES>; a context
    without those tags is one memory."""
    sections = [pattern.search(context) for pattern in _SECTIONS]
    if not any(sections):
        return (ImportedMemory(context),)
    texts = [
        _EVENT_TIME.sub("", item[1]).strip()
        for section in sections
        if section is not None
        for line in section[1].splitlines()
        if (item := _ITEM.match(line)) is not None
    ]
    return tuple(ImportedMemory(text) for text in texts)


def _fields(source: AnswerSource, index: int, key: str) -> dict[tuple[Any, int], Any]:
    """``(conversation key, index) -> the record's field`` of a JSON object of lists (``context``, ``duration_ms``)."""
    document = source.json(index)
    out: dict[tuple[Any, int], Any] = {}
    if not isinstance(document, dict):
        raise InputError(source.paths[index], None, f"$: expected an object of lists; found {describe_json(document)}")
    for conv, items in document.items():
        if not isinstance(items, list):
            raise InputError(source.paths[index], None, f"{conv}: expected a list; found {describe_json(items)}")
        for i, item in enumerate(items):
            if isinstance(item, dict) and key in item:
                out[(conv, i)] = item[key]
    return out


def _check_pair(grades: AnswerRecord, response: AnswerRecord, paths: dict[str, Path]) -> None:
    for name in ("conversation", "position", "question", "answer"):
        if getattr(grades, name) != getattr(response, name):
            raise InputError(
                paths["responses"],
                None,
                f"{response.where}: {name} {quote(getattr(response, name))} differs from the grades' "
                f"{quote(getattr(grades, name))} at {grades.where} of {paths['grades'].name}; "
                "expected the responses the grades were made from",
            )


def _context_memories(where: str, path: Path, raw: Any) -> tuple[ImportedMemory, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InputError(path, None, f"{where}.context: expected the context's text; found {describe_json(raw)}")
    return split_context(raw)


def read(source: AnswerSource) -> AnswerFile:
    """The ``zep`` reader (module docstring)."""
    files = _files(source)
    pair = AnswerSource([files[role] for role in _ROLES if role in files])
    graded = read_shape(GRADES, pair, 0)
    responses = read_shape(RESPONSES, pair, 1).records
    if len(graded.records) != len(responses):
        raise InputError(
            files["responses"],
            None,
            f"holds {len(responses)} records, {files['grades'].name} {len(graded.records)}; "
            "expected one response per grade",
        )
    keys = [(conv, i) for conv, items in pair.json(1).items() for i in range(len(items))]
    contexts = {key: (files["responses"], raw) for key, raw in _fields(pair, 1, "context").items()}
    search_ms: dict[tuple[Any, int], Any] = {}
    if "search_results" in files:
        for key, raw in _fields(pair, 2, "context").items():
            contexts.setdefault(key, (files["search_results"], raw))
        search_ms = _fields(pair, 2, "duration_ms")
    records = []
    for grade, response, key in zip(graded.records, responses, keys):
        _check_pair(grade, response, files)
        path, raw = contexts.get(key, (files["responses"], None))
        ms = search_ms.get(key)
        records.append(
            dataclasses.replace(
                grade,
                memories=_context_memories(response.where, path, raw),
                latency=response.latency,
                extra={"search_ms": float(ms)} if isinstance(ms, (int, float)) and not isinstance(ms, bool) else {},
            )
        )
    name = files["grades"].stem.replace("_grades", "") or "zep"
    return pair.answer_file("zep", records, name=name, judges=graded.judges, notes=graded.notes)


FORMAT = AnswerFormat(
    name="zep",
    recognise=recognise,
    read=read,
    description="Zep's LoCoMo grades and responses (zep-papers): the pair read as one, with the search results if beside them",
    rule="JSON objects of lists whose first record has golden_answer with grade (grades) or duration_ms (responses)",
)
