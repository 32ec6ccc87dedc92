"""Run files as systems: another memory system's rankings, evaluated beside ours.

A user's own pipeline (mem0, Zep, Letta, a home-grown store) writes what it
retrieved for each question; :func:`read_run_file` reads it and
:func:`bind_run` checks it against the collection it was made for.  Two
formats, told apart by the first non-blank character:

* TREC run (``query_id Q0 entry_id rank score tag``): as trec_eval reads it
  (see :mod:`agentmemory.files.trec`: the rank column is ignored);
* JSON lines: ``{"query_id": "q1", "hits": [{"entry_id": "m3", "score": 2.5}, ...]}``,
  one query per line.

Either way each query's hits are ranked as trec_eval ranks them: score
descending, then entry id descending (:func:`agentmemory.files.trec.trec_order`),
whatever order or rank numbers the file has.  A run holds no scores below
its depth: tie analysis stops at its last hit, and "why not retrieved"
cannot be answered for it.

Checks, each naming the file and line: a malformed line, a score that is
not a number (NaN is refused; so are TREC scores trec_eval cannot read),
an entry listed twice for one query, a JSON query listed on two lines.  Against the collection (:func:`bind_run`): a query id the
collection lacks, an entry id it lacks, and a hit outside the query's
scope are errors listing every such line; ``lenient=True`` drops those
lines instead and lists every one in :attr:`BoundRun.dropped`.  Lines naming
a question the loader skipped (``Collection.skipped``: LoCoMo's malformed
evidence) are no error: they are ignored and counted
(:attr:`BoundRun.skipped_hits`), in one note rather than line by line.  A run
none of whose queries is in the collection (skipped questions do not count)
is refused in both modes, in one line naming the collection
(:func:`check_run_queries`): it was made for another one, or names only
questions the loader left out.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path

from agentmemory.collection import Collection
from agentmemory.errors import InputError, MissingFileError, NumberTextError, ParameterError, quote
from agentmemory.files.numbers import NUMBER_FORM, parse_number
from agentmemory.files.reading import decode_utf8, json_lines, read_bytes
from agentmemory.files.trec import TREC_ID_RULE, trec_id_problem, trec_order
from agentmemory.records import Hit, MemoryEntry, Provenance, id_problem

__all__ = [
    "BoundRun",
    "RunFile",
    "bind_run",
    "check_run_queries",
    "parse_run_option",
    "read_memories",
    "read_run_file",
]

_LISTED = 5  # lines quoted in one error message before "... (N lines in all)"


@dataclass(frozen=True)
class RunFile:
    """A run file as read: per query, ``(entry_id, score, line)`` in file order.

    ``name`` is the system's name (``--run NAME=PATH``), ``path`` the path as
    given, ``sha256`` the file's digest, ``format`` ``"trec"`` or ``"jsonl"``.
    ``stand_ins`` (a replayed memory system under ``direct`` relevance), per
    query, maps an entry id of the ranking to the id of the memory standing
    in for it, whose own text is what the system returned at that rank.
    """

    name: str
    path: str
    sha256: str
    format: str
    hits: Mapping[str, tuple[tuple[str, float, int], ...]]
    memories: tuple[MemoryEntry, ...] = ()
    memories_path: str | None = None
    memories_sha256: str | None = None
    stand_ins: Mapping[str, Mapping[str, str]] = field(default_factory=dict, repr=False)

    def summary(self) -> dict[str, object]:
        """What the artifact records of the run: file names (never a folder), digests, format, depth."""
        out: dict[str, object] = {
            "run": Path(self.path).name,
            "sha256": self.sha256,
            "format": self.format,
            "queries": len(self.hits),
            "depth": max((len(h) for h in self.hits.values()), default=0),
        }
        if self.memories_path is not None:
            out["memories"] = Path(self.memories_path).name
            out["memories_sha256"] = self.memories_sha256
            out["memories_entries"] = len(self.memories)
        return out


@dataclass(frozen=True)
class BoundRun:
    """A run checked against its collection: each judged query's ranking (trec_eval's order).

    ``rankings[query_id]`` holds every hit of the run for that query, ranked;
    a judged query the run does not mention has an empty ranking (it
    retrieved nothing, as ``trec_eval -c`` counts it).  ``dropped`` lists
    ``(line, reason)`` for every line ``lenient=True`` left out;
    ``skipped_hits`` ``(query_id, hits)`` for every question of the run the
    loader skipped (its hits ignored), in the run's order.
    """

    run: RunFile
    rankings: Mapping[str, tuple[Hit, ...]]
    dropped: tuple[tuple[int, str], ...] = field(default=())
    entries: Mapping[str, MemoryEntry] = field(default_factory=dict)
    skipped_hits: tuple[tuple[str, int], ...] = ()

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
        raise InputError(path, line, f"score {quote(value)} of entry {quote(doc)} is not a number; expected e.g. 12.5")
    score = float(value)
    if math.isnan(score):
        raise InputError(
            path, line, f"score of entry {quote(doc)} is NaN; every score must be a number that can be ranked"
        )
    return score


def _check_id(path: Path, line: int, name: str, value: str) -> None:
    """An id of a run names a query or entry of a collection, so it follows the same rule (no white space or control characters)."""
    problem = trec_id_problem(value)
    if problem is not None:
        raise InputError(path, line, f"{name} {quote(value)} {problem}; {TREC_ID_RULE}")


def _read_jsonl(path: Path, text: str) -> dict[str, list[tuple[str, float, int]]]:
    out: dict[str, list[tuple[str, float, int]]] = {}
    first: dict[str, int] = {}
    # NaN and Infinity are read (JSON has neither): _score names a NaN score; an infinite one ranks.
    for line, obj in json_lines(path, text, constants=True, expected='; expected {"query_id": ..., "hits": [...]}'):
        if not isinstance(obj, dict) or set(obj) != {"query_id", "hits"}:
            raise InputError(
                path,
                line,
                "expected an object with exactly the keys query_id and hits, e.g. "
                '{"query_id": "q1", "hits": [{"entry_id": "m3", "score": 2.5}]}',
            )
        qid = obj["query_id"]
        if not isinstance(qid, str) or not qid:
            raise InputError(path, line, f"query_id {quote(qid)} is not a non-empty string")
        _check_id(path, line, "query_id", qid)
        if qid in first:
            raise InputError(
                path,
                line,
                f"query {quote(qid)} appears again (first on line {first[qid]}); list each query on one line",
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
                raise InputError(path, line, f"entry_id {quote(doc)} is not a non-empty string")
            _check_id(path, line, "entry_id", doc)
            if doc in seen:
                raise InputError(
                    path,
                    line,
                    f"entry {quote(doc)} appears twice for query {quote(qid)}; list each entry once per query",
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
        _check_id(path, line, "query_id", qid)
        _check_id(path, line, "entry_id", doc)
        try:
            score = parse_number(score_text)
        except NumberTextError as err:
            raise InputError(
                path,
                line,
                f"score {quote(score_text)} {err.problem}; expected a number such as 12.5, -3 or 1e-05 ({NUMBER_FORM})",
            ) from None
        key = (qid, doc)
        if key in first:
            raise InputError(
                path,
                line,
                f"entry {quote(doc)} appears twice for query {quote(qid)} (first on line {first[key]}); list each entry once per query",
            )
        first[key] = line
        out.setdefault(qid, []).append((doc, score, line))
    return out


def read_memories(path: str | PathLike[str]) -> tuple[tuple[MemoryEntry, ...], str]:
    """A run's companion ``memories.jsonl``: the memories an external system stored, and the file's sha256.

    One JSON object per line: ``_id`` and ``text`` (strings), optional
    ``derived_from`` (a list of entry ids: of the collection, or of this
    file), ``scope``, ``tags``, ``attribution`` and ``turns`` (how a memory
    system's memory was attributed, and to which turns when entries are
    coarser, :mod:`agentmemory.systems.attribution`; not read).  A memory without ``scope`` takes the one
    scope its ``derived_from`` sources share (checked in :func:`bind_run`).

    Raises:
        MissingFileError, InputError: no such file; a malformed line (file and line named).
    """
    target = Path(path)
    try:
        data = read_bytes(target, "memories file")
    except MissingFileError:
        raise MissingFileError(target, "memories file") from None
    text = decode_utf8(target, data)
    out: list[MemoryEntry] = []
    seen: dict[str, int] = {}
    allowed = {"_id", "text", "derived_from", "scope", "tags", "attribution", "turns"}  # a system's, not read
    for line, obj in json_lines(target, text, expected="; expected one object per line with _id and text"):
        if not isinstance(obj, dict):
            raise InputError(target, line, "expected a JSON object with _id and text")
        unknown = sorted(set(obj) - allowed)
        if unknown:
            raise InputError(target, line, f"unknown field {quote(unknown[0])}; allowed: {', '.join(sorted(allowed))}")
        entry_id, body = obj.get("_id"), obj.get("text")
        if (
            not isinstance(entry_id, str)
            or not entry_id
            or any(c.isspace() for c in entry_id)
            or id_problem(entry_id) is not None
        ):
            raise InputError(
                target,
                line,
                f"_id {quote(entry_id)} is not a non-empty string without white space or control characters",
            )
        if entry_id in seen:
            raise InputError(target, line, f"duplicate _id {quote(entry_id)} (first on line {seen[entry_id]})")
        seen[entry_id] = line
        if not isinstance(body, str):
            raise InputError(target, line, f"text {quote(body)} is not a string")
        derived = obj.get("derived_from", [])
        if not isinstance(derived, list) or not all(isinstance(d, str) and id_problem(d) is None for d in derived):
            raise InputError(target, line, f"derived_from {quote(derived)} is not a list of entry ids")
        scope = obj.get("scope")
        if scope is not None and not isinstance(scope, str):
            raise InputError(target, line, f"scope {quote(scope)} is not a string")
        tags = obj.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            raise InputError(target, line, f"tags {quote(tags)} is not a list of strings")
        out.append(
            MemoryEntry(
                entry_id,
                body,
                tags=tuple(tags),
                provenance=Provenance(source="derived", ref=f"{target.name}:{line}", derived_from=tuple(derived)),
                scope=scope,
            )
        )
    return tuple(out), hashlib.sha256(data).hexdigest()


def read_run_file(path: str | PathLike[str], name: str, *, memories: str | PathLike[str] | None = None) -> RunFile:
    """Read a TREC or JSON-lines run file (see the module docstring) as the system ``name``.

    ``memories`` names the run's companion ``memories.jsonl`` (:func:`read_memories`):
    the entries its hits may name beside the collection's, for this run only.

    Raises:
        MissingFileError: no such file.
        InputError: the file is not valid UTF-8, or a line is malformed (file and line named).
    """
    target = Path(path)
    try:
        data = read_bytes(target, "run file (TREC or JSON lines)")
    except MissingFileError:
        raise MissingFileError(target, "run file") from None
    text = decode_utf8(target, data)
    stripped = text.lstrip()
    fmt = "jsonl" if stripped.startswith("{") else "trec"
    read = _read_jsonl(target, text) if fmt == "jsonl" else _read_trec(target, text)
    extra, extra_sha = read_memories(memories) if memories is not None else ((), None)
    return RunFile(
        name=name,
        path=str(path),
        sha256=hashlib.sha256(data).hexdigest(),
        format=fmt,
        hits={q: tuple(h) for q, h in read.items()},
        memories=extra,
        memories_path=None if memories is None else str(memories),
        memories_sha256=extra_sha,
    )


def check_run_queries(run: RunFile, collection: Collection, described: str | None = None) -> None:
    """Refuse ``run`` when none of its queries is in ``collection``, lenient or not: it was made for another one.

    ``described`` is how the message names the collection (default ``the
    collection 'NAME'``); the command line says which file, or that it is the
    shipped fixture because ``--collection`` was not given.  A run with no
    line at all is left to the caller.

    A run whose every query is one the collection's loader skipped
    (``Collection.skipped``) is refused too, saying so: its hits would all be
    ignored (:func:`bind_run`), leaving nothing to score.

    Raises:
        InputError: one line naming the run file, the collection, some of the run's query ids and some of the
            collection's (or that the run names only skipped questions).
    """
    known = {q.id for q in collection.queries}
    if not run.hits or any(qid in known for qid in run.hits):
        return
    where = described or f"the collection {quote(collection.name)}"

    def some(ids: list[str]) -> str:
        shown = ", ".join(quote(i, 40) for i in ids[:3])
        return shown + (f" ... ({len(ids)} in all)" if len(ids) > 3 else "")

    skipped = {qid for qid, _ in collection.skipped}
    if all(qid in skipped for qid in run.hits):
        raise InputError(
            run.path,
            None,
            f"none of the run's queries is in {where}: the run names only questions its loader skipped "
            f"({some(list(run.hits))}); see why in the skipped list, or evaluate a run of the questions it kept",
        )
    raise InputError(
        run.path,
        None,
        f"none of the run's queries is in {where}: the run names {some(list(run.hits))}, the collection has "
        f"{some([q.id for q in collection.queries])}; evaluate the run against the collection it was made for",
    )


def bind_run(run: RunFile, collection: Collection, *, lenient: bool = False, as_of: bool = False) -> BoundRun:
    """Check ``run`` against ``collection`` and rank each judged query's hits (trec_eval's order).

    A line naming a query or entry the collection lacks, or an entry outside
    the query's scope, is an error listing every such line; with
    ``lenient=True`` those lines are dropped and listed in
    :attr:`BoundRun.dropped`.  Queries of the run that the collection has
    but did not judge are ignored (as trec_eval ignores them), and so are
    those it skipped (``collection.skipped``), counted in
    :attr:`BoundRun.skipped_hits` (a run naming only those is refused by
    :func:`check_run_queries`).  With
    ``as_of``, a hit on an entry created after its query was asked
    (``created_at > asked_at``) is such a line too: an agent cannot have
    retrieved a memory it did not have yet.

    Raises:
        InputError: such lines, when not lenient (names the file, the lines,
            and ``--lenient-run``); no query of the run in the collection, even
            when lenient (:func:`check_run_queries`).
    """
    check_run_queries(run, collection)
    queries = {q.id: q for q in collection.queries}
    skipped = {qid for qid, _ in collection.skipped}
    ignored: dict[str, int] = {}
    scope_of = {e.id: e.scope for e in collection.entries}
    entries = _join_memories(run, collection, scope_of)
    created = {e.id: e.created_at for e in collection.entries} if as_of else {}
    problems: list[tuple[int, str]] = []
    kept: dict[str, dict[str, float]] = {}
    for qid, hits in run.hits.items():
        query = queries.get(qid)
        if query is None and qid in skipped:  # left out by the loader, with its reason: not the run's fault
            ignored[qid] = len(hits)
            continue
        if query is None:
            lines = sorted({line for _, _, line in hits})
            problems.extend((line, f"query {quote(qid)} is not in the collection") for line in lines)
            continue
        ranked = kept.setdefault(qid, {})
        for doc, score, line in hits:
            if doc not in scope_of:
                problems.append((line, f"entry {quote(doc)} (query {quote(qid)}) is not in the collection"))
            elif scope_of[doc] != query.scope:
                problems.append(
                    (
                        line,
                        f"entry {quote(doc)} is in scope {quote(scope_of[doc])}, outside query {quote(qid)}'s scope {quote(query.scope)}",
                    )
                )
            elif (
                as_of
                and query.asked_at is not None
                and (made := created.get(doc)) is not None
                and made > query.asked_at
            ):
                problems.append(
                    (
                        line,
                        f"entry {doc!r} was created at {made.isoformat()}, after query {qid!r} was asked at "
                        f"{query.asked_at.isoformat()}",
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
    return BoundRun(run, rankings, tuple(problems), entries, tuple(ignored.items()))


def _join_memories(run: RunFile, collection: Collection, scope_of: dict[str, str | None]) -> dict[str, MemoryEntry]:
    """The run's memories with their scopes settled, added to ``scope_of``; errors name the memories file."""
    where = run.memories_path or run.path
    known = set(scope_of)
    mine = {m.id: m for m in run.memories}
    for memory in run.memories:
        if memory.id in known:
            raise InputError(
                where, None, f"memory {quote(memory.id)} has the id of an entry of the collection; use new ids"
            )
        for source in memory.provenance.derived_from:
            if source not in known and source not in mine:
                raise InputError(
                    where,
                    None,
                    f"memory {quote(memory.id)} is derived from {quote(source)}, which is neither in the collection nor in this file",
                )
    settled: dict[str, MemoryEntry] = {}
    pending = list(run.memories)
    while pending:  # a memory's scope may come from memories it was derived from: settle in dependency order
        progressed = False
        for memory in list(pending):
            sources = memory.provenance.derived_from
            if any(s in mine and s not in settled for s in sources):
                continue
            scopes = {scope_of[s] if s in scope_of else settled[s].scope for s in sources}
            scope = memory.scope
            if scope is None and len(scopes) == 1:
                scope = scopes.pop()
            elif scope is None and len(scopes) > 1:
                raise InputError(
                    where, None, f"memory {quote(memory.id)} is derived from entries of several scopes; give it a scope"
                )
            settled[memory.id] = replace(memory, scope=scope)
            scope_of[memory.id] = scope
            pending.remove(memory)
            progressed = True
        if not progressed:
            names = ", ".join(repr(m.id) for m in pending[:5])
            raise InputError(where, None, f"memories {names} are derived from each other in a cycle")
    return settled
