"""TREC run and qrels files, read and written exactly as trec_eval sees them.

File formats (fields separated by ASCII whitespace, one record per line,
blank lines ignored, UTF-8):

* qrels: ``query_id iteration doc_id relevance`` -- 4 fields; ``iteration``
  is ignored (written as ``0``); ``relevance`` is an integer grade (0 and
  negative grades are allowed and mean "not relevant").
* run: ``query_id Q0 doc_id rank score run_tag`` -- 6 fields; the ``Q0`` and
  ``run_tag`` columns are ignored, and so is ``rank``, as trec_eval does: the
  order comes from the scores alone, with :func:`trec_order`'s tie rule.

Reading is strict where trec_eval is strict or silently wrong: a wrong
number of fields, a score that is not a number by the rule of
:mod:`agentmemory.files.numbers` (NaN included: it cannot be ranked; ``1_0``,
``１`` and other spellings Python reads but ``atof`` does not), a relevance
that is not an integer by that module's rule (trec_eval would truncate
``1.5`` to 1 without a word), an id holding a control character (C reads
``"a\0b"`` as ``"a"``), and the same document twice for one query
(trec_eval stops) are all :class:`~agentmemory.errors.InputError` naming the
file and line.  An empty run file (or one with only blank lines) is valid
and holds no query; an empty qrels file is refused (``holds no judgments``),
as the collection loaders refuse an empty judgments file: nothing could be
scored against it.

:func:`format_run` and :func:`format_qrels` render a file's exact text
(checking every id, score and grade); :func:`write_run` and
:func:`write_qrels` write that text through
:func:`agentmemory.files.atomic.atomic_write_text`, so a failed write leaves no
partial file.  Scores are written as ``repr(float(score))``,
the shortest text that parses back to the same double, so trec_eval ranks
the file exactly as the scores in memory: no ties are created or broken by
rounding.  A score of plus or minus infinity (which ranks first or last) is
written ``inf`` / ``-inf``, which trec_eval's ``atof`` reads and
:func:`read_run` reads back; NaN, which cannot be ranked, is refused both ways.  (Current trec_eval keeps scores as doubles, as we do.  Older
releases that stored them as 32-bit floats, and the copy of trec_eval inside
pytrec_eval-terrier 0.5.x, see scores that differ only beyond float32
precision as ties and break them by document id.)
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Mapping
from os import PathLike

from agentmemory.errors import InputError, NumberTextError, ParameterError, quote
from agentmemory.files.atomic import atomic_write_text
from agentmemory.files.numbers import INTEGER_FORM, NUMBER_FORM, parse_integer, parse_number
from agentmemory.files.reading import read_bytes
from agentmemory.records import Hit, id_problem

__all__ = [
    "NO_JUDGMENTS",
    "TREC_ID_RULE",
    "format_qrels",
    "format_run",
    "hits_to_run",
    "read_qrels",
    "read_run",
    "trec_id_problem",
    "trec_order",
    "write_qrels",
    "write_run",
]

_ASCII_WHITESPACE = frozenset(" \t\n\r\x0b\x0c")  # what bytes.split() splits on
_RUN_FIELDS = "query_id Q0 doc_id rank score run_tag"
_QRELS_FIELDS = "query_id iteration doc_id relevance"

TREC_ID_RULE = (
    "an id must be a non-empty string without whitespace or control characters "
    "(ids are written to TREC files, whose fields whitespace separates)"
)
"""What an id a TREC file can hold is, as loaders' messages end."""


def trec_id_problem(value: object) -> str | None:
    """What keeps ``value`` out of a TREC file as an id, in a message's words, or ``None``.

    An id of a TREC file is a non-empty string without ASCII white space
    (trec_eval splits lines on it) and without control characters (C reads
    ``"a\\0b"`` as ``"a"``); see :func:`agentmemory.records.id_problem`.
    """
    if isinstance(value, str) and not _ASCII_WHITESPACE.isdisjoint(value):
        return "contains whitespace"
    return id_problem(value)


NO_JUDGMENTS = "holds no judgments"
"""How every reader of judgments (TREC qrels, a BEIR collection's ``qrels/<split>.tsv``) says a file is empty."""


def trec_order(doc_scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval's rank order.

    Score descending, then, among equal scores, document id *descending*
    (trec_eval compares the ids with ``strcmp``, byte-wise on their UTF-8
    bytes; Python's code-point order on ``str`` gives the same order).  So
    ``{"a": 1.0, "b": 1.0, "c": 2.0}`` ranks ``c, b, a``.  ``0.0`` and
    ``-0.0`` are equal scores.

    Raises:
        ParameterError: a score is NaN, which has no place in an order.
    """
    for doc, score in doc_scores.items():
        if score != score:  # NaN; cheaper than math.isnan on a non-float
            raise ParameterError(
                f"score of document {quote(doc)}",
                score,
                "is not a number",
                "every score must be a comparable number (NaN cannot be ranked)",
            )
    return sorted(doc_scores, key=lambda doc: (doc_scores[doc], doc), reverse=True)


def _read_records(path: str | PathLike[str], expected: int, fields_text: str) -> Iterable[tuple[int, list[str]]]:
    """``(line number, fields)`` of every non-blank line, with ``expected`` fields each."""
    data = read_bytes(path)
    for line_no, raw in enumerate(data.split(b"\n"), start=1):
        raw_fields = raw.split()  # ASCII whitespace only, as trec_eval
        if not raw_fields:
            continue
        try:
            fields = [field.decode("utf-8") for field in raw_fields]
        except UnicodeDecodeError as err:
            raise InputError(path, line_no, f"is not valid UTF-8 ({err.reason}); expected UTF-8 text") from None
        if len(fields) != expected:
            raise InputError(
                path,
                line_no,
                f"found {len(fields)} field{'s' if len(fields) != 1 else ''}; "
                f"expected {expected} whitespace-separated fields: {fields_text}",
            )
        yield line_no, fields


def read_qrels(path: str | PathLike[str]) -> dict[str, dict[str, int]]:
    """Read a qrels file: ``{query_id: {doc_id: relevance}}``, queries in file order.

    Lines are ``query_id iteration doc_id relevance``; see the module docs.

    Raises:
        MissingFileError: ``path`` does not exist.
        InputError: ``path`` is not a regular file; the file holds no
            judgment; a line has other than 4 fields, an id with a control
            character, or a relevance that is not an integer (an optional
            sign and ASCII digits, see :mod:`agentmemory.files.numbers`); or a
            document is judged twice for one query.
    """
    qrels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for line_no, (qid, _iteration, doc, rel_text) in _read_records(path, 4, _QRELS_FIELDS):
        _check_ids(path, line_no, qid, doc)
        try:
            grade = parse_integer(rel_text)
        except NumberTextError as err:
            raise InputError(
                path,
                line_no,
                f"relevance {quote(rel_text)} {err.problem}; expected an integer grade such as 0, 1 or 2 ({INTEGER_FORM})",
            ) from None
        _check_new(path, line_no, qid, doc, first_line)
        qrels.setdefault(qid, {})[doc] = grade
    if not qrels:
        raise InputError(path, None, f"{NO_JUDGMENTS}; expected at least one line {_QRELS_FIELDS}")
    return qrels


def read_run(path: str | PathLike[str]) -> dict[str, dict[str, float]]:
    """Read a run file: ``{query_id: {doc_id: score}}``, queries in file order.

    Lines are ``query_id Q0 doc_id rank score run_tag``; the rank column is
    ignored (rank with :func:`trec_order`).  Scores are decimal or exponent
    notation in ASCII, or ``inf``/``-inf`` (:func:`agentmemory.files.numbers.parse_number`);
    not ``nan``, not digit-group underscores, not other scripts' digits.

    Raises:
        MissingFileError: ``path`` does not exist.
        InputError: ``path`` is not a regular file; a line has other than 6
            fields, an id with a control character, or a score that is not
            a number; or a document appears twice for one query.
    """
    run: dict[str, dict[str, float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for line_no, (qid, _q0, doc, _rank, score_text, _tag) in _read_records(path, 6, _RUN_FIELDS):
        _check_ids(path, line_no, qid, doc)
        try:
            score = parse_number(score_text)
        except NumberTextError as err:
            raise InputError(
                path,
                line_no,
                f"score {quote(score_text)} {err.problem}; expected a number such as 12.5, -3 or 1e-05 ({NUMBER_FORM})",
            ) from None
        _check_new(path, line_no, qid, doc, first_line)
        run.setdefault(qid, {})[doc] = score
    return run


def _check_ids(path: str | PathLike[str], line_no: int, qid: str, doc: str) -> None:
    for name, value in (("query_id", qid), ("doc_id", doc)):
        problem = id_problem(value)
        if problem is not None:
            raise InputError(path, line_no, f"{name} {quote(value)} {problem}; expected printable text")


def _check_new(
    path: str | PathLike[str], line_no: int, qid: str, doc: str, first_line: dict[tuple[str, str], int]
) -> None:
    first = first_line.setdefault((qid, doc), line_no)
    if first != line_no:
        raise InputError(
            path,
            line_no,
            f"document {quote(doc)} appears twice for query {quote(qid)} (first on line {first}); "
            "expected each document at most once per query",
        )


def _check_field(name: str, value: object) -> str:
    """A value about to become one field of a TREC line: non-empty text without whitespace or control characters."""
    if not isinstance(value, str):
        raise ParameterError(name, value, "is not a str", f"{name} must be text")
    if not value:
        raise ParameterError(name, value, "is empty", f"every {name} in a TREC file needs at least one character")
    if not _ASCII_WHITESPACE.isdisjoint(value):
        raise ParameterError(
            name,
            value,
            "contains whitespace",
            f"TREC files separate fields by whitespace, so no {name} may contain any",
        )
    problem = id_problem(value)
    if problem is not None:
        raise ParameterError(name, value, problem, f"no {name} in a TREC file may hold one")
    return value


_BAD_FIELD_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f]")  # white space (ASCII) or a control character
_FLOAT = frozenset((float,))


def _fields_ok(values: list[object]) -> bool:
    """True when every value passes :func:`_check_field`, checked for all at once (False: check each)."""
    return set(map(type, values)) <= {str} and all(values) and _BAD_FIELD_CHAR.search("".join(values)) is None  # type: ignore[arg-type]


def _scores(qid: str, pairs: list[tuple[str, float]], checked: bool) -> dict[str, float]:
    """One query's ``doc_id -> float(score)``; a bad id or score, or a document listed twice, raises, named."""
    if checked and set(map(type, (score for _, score in pairs))) <= _FLOAT:
        scores = dict(pairs)
        if len(scores) == len(pairs):
            return scores
    scores = {}
    for doc, score in pairs:
        _check_field("document id", doc)
        if doc in scores:
            raise ParameterError(
                f"documents of query {quote(qid)}", doc, "appears twice", "list each document once per query"
            )
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise ParameterError(
                f"score of document {quote(doc)}", score, "is not a number", "scores must be real numbers"
            )
        scores[doc] = float(score)
    return scores


def hits_to_run(hits_by_query: Mapping[str, Iterable[Hit]]) -> dict[str, dict[str, float]]:
    """``{query_id: {entry_id: score}}`` from each query's :class:`~agentmemory.records.Hit` list.

    Raises:
        ParameterError: an entry id appears twice in one query's hits.
    """
    run: dict[str, dict[str, float]] = {}
    for qid, hits in hits_by_query.items():
        scores: dict[str, float] = {}
        for hit in hits:
            if hit.entry_id in scores:
                raise ParameterError(
                    f"hits of query {quote(qid)}", hit.entry_id, "appears twice", "a ranking lists each entry once"
                )
            scores[hit.entry_id] = hit.score
        run[qid] = scores
    return run


def format_run(
    run: Mapping[str, Mapping[str, float] | Iterable[tuple[str, float]]],
    tag: str = "agentmemory",
) -> str:
    """The text of a run file that trec_eval ranks exactly as ``run``.

    ``run`` maps each query id to its documents, either as ``(doc_id, score)``
    pairs (e.g. ``[(h.entry_id, h.score) for h in hits]``) or as a mapping
    ``doc_id -> score`` (what :func:`read_run` returns).  Queries are written
    sorted by id; each query's documents in :func:`trec_order` with ranks
    ``1, 2, ...``; scores as ``repr(float(score))``.  A query with no document
    writes no line, so it is absent when the file is read back.

    Raises:
        ParameterError: an id or ``tag`` is empty or contains whitespace or
            a control character, a document appears twice for one query, or
            a score is not a number (NaN included).
    """
    _check_field("tag", tag)
    for qid in run:
        _check_field("query id", qid)
    given = {qid: list(docs.items()) if isinstance(docs, Mapping) else list(docs) for qid, docs in run.items()}
    checked = _fields_ok([doc for pairs in given.values() for doc, _ in pairs])  # every document id at once
    lines: list[str] = []
    for qid in sorted(given):
        scores = _scores(qid, given[qid], checked)
        for rank, doc in enumerate(trec_order(scores), start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {scores[doc]!r} {tag}\n")
    return "".join(lines)


def write_run(
    path: str | PathLike[str],
    run: Mapping[str, Mapping[str, float] | Iterable[tuple[str, float]]],
    tag: str = "agentmemory",
) -> None:
    """Write :func:`format_run`'s text to ``path`` atomically (the file is untouched when a check fails).

    Raises:
        ParameterError: as :func:`format_run`.
        OutputError: the file cannot be written.
    """
    atomic_write_text(path, format_run(run, tag))


def format_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """The text of a qrels file: sorted by query id, then document id; iteration column ``0``.

    Raises:
        ParameterError: an id is empty or contains whitespace or a control
            character, or a grade is not an integer.
    """
    for qid, judged in qrels.items():
        _check_field("query id", qid)
        for doc in judged:
            _check_field("document id", doc)
    lines: list[str] = []
    for qid in sorted(qrels):
        judged = qrels[qid]
        for doc in sorted(judged):
            rel = judged[doc]
            if isinstance(rel, bool) or not isinstance(rel, int):
                raise ParameterError(
                    f"relevance of document {quote(doc)} for query {quote(qid)}",
                    rel,
                    "is not an integer",
                    "grades are integers",
                )
            lines.append(f"{qid} 0 {doc} {rel}\n")
    return "".join(lines)


def write_qrels(path: str | PathLike[str], qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write :func:`format_qrels`'s text to ``path`` atomically (the file is untouched when a check fails).

    Raises:
        ParameterError: as :func:`format_qrels`.
        OutputError: the file cannot be written.
    """
    atomic_write_text(path, format_qrels(qrels))
