"""Run files as systems: another memory system's rankings, evaluated beside ours.

A user's own pipeline (mem0, Zep, Letta, a home-grown store) writes what it
retrieved for each question; :func:`read_run_file` reads it and
:func:`bind_run` checks it against the collection it was made for.  Two
formats, told apart by the first non-blank character:

* TREC run (``query_id Q0 entry_id rank score tag``): as trec_eval reads it
  (see :mod:`agentmemory.trec`: the rank column is ignored);
* JSON lines: ``{"query_id": "q1", "hits": [{"entry_id": "m3", "score": 2.5}, ...]}``,
  one query per line.

Either way each query's hits are ranked as trec_eval ranks them: score
descending, then entry id descending (:func:`agentmemory.trec.trec_order`),
whatever order or rank numbers the file has.  A run holds no scores below
its depth: tie analysis stops at its last hit, and "why not retrieved"
cannot be answered for it.

Checks, each naming the file and line: a malformed line, a score that is
not a number (NaN is refused; so are TREC scores trec_eval cannot read),
an entry listed twice for one query, a JSON query listed on two lines.  Against the collection (:func:`bind_run`): a query id the
collection lacks, an entry id it lacks, and a hit outside the query's
scope are errors listing every such line; ``lenient=True`` drops those
lines instead and lists every one in :attr:`BoundRun.dropped`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from .collection import Collection
from .errors import InputError, MissingFileError, ParameterError, shorten
from .records import Hit
from .trec import trec_order

__all__ = ["BoundRun", "RunFile", "bind_run", "parse_run_option", "read_run_file"]

_LISTED = 5  # lines quoted in one error message before "... (N lines in all)"


@dataclass(frozen=True)
class RunFile:
    """A run file as read: per query, ``(entry_id, score, line)`` in file order.

    ``name`` is the system's name (``--run NAME=PATH``), ``path`` the path as
    given, ``sha256`` the file's digest, ``format`` ``"trec"`` or ``"jsonl"``.
    """

    name: str
    path: str
    sha256: str
    format: str
    hits: Mapping[str, tuple[tuple[str, float, int], ...]]


@dataclass(frozen=True)
class BoundRun:
    """A run checked against its collection: each judged query's ranking (trec_eval's order).

    ``rankings[query_id]`` holds every hit of the run for that query, ranked;
    a judged query the run does not mention has an empty ranking (it
    retrieved nothing, as ``trec_eval -c`` counts it).  ``dropped`` lists
    ``(line, reason)`` for every line ``lenient=True`` left out.
    """

    run: RunFile
    rankings: Mapping[str, tuple[Hit, ...]]
    dropped: tuple[tuple[int, str], ...] = field(default=())

    @property
    def name(self) -> str:
        return self.run.name


def parse_run_option(text: str, option: str = "--run") -> tuple[str, str]:
    """``"NAME=PATH"`` -> ``(NAME, PATH)``; NAME non-empty, without ``=``, ``,`` or white space.

    Raises:
        ParameterError: no ``=``, an empty name or path, or a bad name.
    """
    name, equals, path = text.partition("=")
    name = name.strip()
    if not equals or not name or not path.strip() or any(c in name for c in ",[] \t"):
        raise ParameterError(
            option,
            text,
            "is not NAME=PATH",
            f"write {option} mine=runs/mine.trec (a name without spaces or commas, '=', a path)",
        )
    return name, path.strip()


def _score(value: object, path: Path, line: int, doc: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(
            path, line, f"score {shorten(repr(value))} of entry {doc!r} is not a number; expected e.g. 12.5"
        )
    score = float(value)
    if math.isnan(score):
        raise InputError(path, line, f"score of entry {doc!r} is NaN; every score must be a number that can be ranked")
    return score


def _read_jsonl(path: Path, text: str) -> dict[str, list[tuple[str, float, int]]]:
    out: dict[str, list[tuple[str, float, int]]] = {}
    first: dict[str, int] = {}
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw, parse_constant=lambda c: math.nan)
        except (json.JSONDecodeError, RecursionError) as err:
            where = (
                f" ({err.msg} at column {err.colno})"
                if isinstance(err, json.JSONDecodeError)
                else " (nested too deeply)"
            )
            raise InputError(
                path, line, f'malformed JSON{where}; expected {{"query_id": ..., "hits": [...]}}'
            ) from None
        if not isinstance(obj, dict) or set(obj) != {"query_id", "hits"}:
            raise InputError(
                path,
                line,
                "expected an object with exactly the keys query_id and hits, e.g. "
                '{"query_id": "q1", "hits": [{"entry_id": "m3", "score": 2.5}]}',
            )
        qid = obj["query_id"]
        if not isinstance(qid, str) or not qid:
            raise InputError(path, line, f"query_id {shorten(repr(qid))} is not a non-empty string")
        if qid in first:
            raise InputError(
                path, line, f"query {qid!r} appears again (first on line {first[qid]}); list each query on one line"
            )
        first[qid] = line
        if not isinstance(obj["hits"], list):
            raise InputError(path, line, 'hits is not a list of {"entry_id": ..., "score": ...} objects')
        seen: set[str] = set()
        hits = out.setdefault(qid, [])
        for hit in obj["hits"]:
            if not isinstance(hit, dict) or set(hit) != {"entry_id", "score"}:
                raise InputError(path, line, "a hit is not an object with exactly the keys entry_id and score")
            doc = hit["entry_id"]
            if not isinstance(doc, str) or not doc:
                raise InputError(path, line, f"entry_id {shorten(repr(doc))} is not a non-empty string")
            if doc in seen:
                raise InputError(
                    path, line, f"entry {doc!r} appears twice for query {qid!r}; list each entry once per query"
                )
            seen.add(doc)
            hits.append((doc, _score(hit["score"], path, line, doc), line))
    return out


def _read_trec(path: Path, text: str) -> dict[str, list[tuple[str, float, int]]]:
    out: dict[str, list[tuple[str, float, int]]] = {}
    first: dict[tuple[str, str], int] = {}
    for line, raw in enumerate(text.split("\n"), start=1):
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise InputError(
                path,
                line,
                f"found {len(fields)} fields; expected 6 whitespace-separated fields: query_id Q0 entry_id rank score tag",
            )
        qid, _, doc, _, score_text, _ = fields
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if math.isnan(score) or "_" in score_text:
            raise InputError(
                path,
                line,
                f"score {shorten(score_text)!r} is not a number; expected a number such as 12.5, -3 or 1e-05",
            )
        key = (qid, doc)
        if key in first:
            raise InputError(
                path,
                line,
                f"entry {doc!r} appears twice for query {qid!r} (first on line {first[key]}); list each entry once per query",
            )
        first[key] = line
        out.setdefault(qid, []).append((doc, score, line))
    return out


def read_run_file(path: str | PathLike[str], name: str) -> RunFile:
    """Read a TREC or JSON-lines run file (see the module docstring) as the system ``name``.

    Raises:
        MissingFileError: no such file.
        InputError: the file is not valid UTF-8, or a line is malformed (file and line named).
    """
    target = Path(path)
    if not target.exists():
        raise MissingFileError(target, "run file")
    if target.is_dir():
        raise InputError(target, None, "is a folder; expected a run file (TREC or JSON lines)")
    data = target.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(target, data[: err.start].count(b"\n") + 1, "is not valid UTF-8") from None
    stripped = text.lstrip()
    fmt = "jsonl" if stripped.startswith("{") else "trec"
    read = _read_jsonl(target, text) if fmt == "jsonl" else _read_trec(target, text)
    return RunFile(
        name=name,
        path=str(path),
        sha256=hashlib.sha256(data).hexdigest(),
        format=fmt,
        hits={q: tuple(h) for q, h in read.items()},
    )


def bind_run(run: RunFile, collection: Collection, *, lenient: bool = False) -> BoundRun:
    """Check ``run`` against ``collection`` and rank each judged query's hits (trec_eval's order).

    A line naming a query or entry the collection lacks, or an entry outside
    the query's scope, is an error listing every such line; with
    ``lenient=True`` those lines are dropped and listed in
    :attr:`BoundRun.dropped`.  Queries of the run that the collection has
    but did not judge are ignored (as trec_eval ignores them).

    Raises:
        InputError: such lines, when not lenient (names the file, the lines,
            and ``--lenient-run``).
    """
    queries = {q.id: q for q in collection.queries}
    scope_of = {e.id: e.scope for e in collection.entries}
    problems: list[tuple[int, str]] = []
    kept: dict[str, dict[str, float]] = {}
    for qid, hits in run.hits.items():
        query = queries.get(qid)
        if query is None:
            lines = sorted({line for _, _, line in hits})
            problems.extend((line, f"query {qid!r} is not in the collection") for line in lines)
            continue
        ranked = kept.setdefault(qid, {})
        for doc, score, line in hits:
            if doc not in scope_of:
                problems.append((line, f"entry {doc!r} (query {qid!r}) is not in the collection"))
            elif scope_of[doc] != query.scope:
                problems.append(
                    (
                        line,
                        f"entry {doc!r} is in scope {scope_of[doc]!r}, outside query {qid!r}'s scope {query.scope!r}",
                    )
                )
            else:
                ranked[doc] = score
    problems.sort()
    if problems and not lenient:
        shown = "; ".join(f"line {line}: {why}" for line, why in problems[:_LISTED])
        more = f" ... ({len(problems)} lines in all)" if len(problems) > _LISTED else ""
        raise InputError(
            run.path,
            None,
            f"{shown}{more}; the run must name queries and entries of the collection, each entry in its query's scope "
            "(pass --lenient-run, or lenient=True, to drop such lines and list each)",
        )
    rankings = {
        q.id: tuple(
            Hit(doc, kept.get(q.id, {})[doc], rank) for rank, doc in enumerate(trec_order(kept.get(q.id, {})), 1)
        )
        for q in collection.judged_queries
    }
    return BoundRun(run, rankings, tuple(problems))
