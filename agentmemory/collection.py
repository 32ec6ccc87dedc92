"""Collections on disk: a BEIR-style folder, extended for memories.

A collection folder holds::

    corpus.jsonl      one memory per line: _id, text, [title], [tags], [created_at], [provenance], [scope]
    queries.jsonl     one query per line: _id, text, [tags], [scope], [group]
    qrels/<split>.tsv header "query-id<TAB>corpus-id<TAB>score", then one judgment per line

The format is documented in ``fixtures/README.md``.  Loading converts every
line into typed records once; any malformed line raises
:class:`~agentmemory.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .errors import InputError, MissingFileError
from .records import MemoryEntry, Provenance, Query

__all__ = ["Collection", "default_collection_path", "load_collection", "parse_timestamp"]

_CORPUS_KEYS = {"_id", "text", "title", "tags", "created_at", "provenance", "scope"}
_QUERY_KEYS = {"_id", "text", "tags", "scope", "group"}
_PROVENANCE_KEYS = {"source", "ref", "actor", "derived_from"}


@dataclass(frozen=True)
class Collection:
    """Entries, queries and relevance judgments, plus the hashes of the files they came from.

    ``qrels[query_id][entry_id]`` is the judged relevance (an int; >= 1 is relevant).
    ``files`` maps each input file's path relative to the collection folder
    (POSIX form) to its sha256.  ``skipped`` lists ``(query_id, reason)`` for
    queries a loader left out (malformed evidence, say) and ``repairs``
    ``(query_id, what was changed)`` for those it repaired on request; both
    are reported in artifacts and reports, never dropped silently.
    ``headline_excludes`` names query groups left out of the headline means
    and shown separately (LoCoMo's adversarial category 5, as most published
    numbers do); their queries are still evaluated and appear in the group means.
    """

    name: str
    entries: tuple[MemoryEntry, ...]
    queries: tuple[Query, ...]
    qrels: Mapping[str, Mapping[str, int]]
    files: Mapping[str, str]
    skipped: tuple[tuple[str, str], ...] = ()
    repairs: tuple[tuple[str, str], ...] = ()
    headline_excludes: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        """sha256 over the sorted ``name  sha256`` lines of the input files."""
        text = "".join(f"{name}  {sha}\n" for name, sha in sorted(self.files.items()))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def judged_queries(self) -> tuple[Query, ...]:
        """Queries with at least one judgment line (in file order)."""
        return tuple(q for q in self.queries if q.id in self.qrels)

    @property
    def headline_queries(self) -> tuple[Query, ...]:
        """The judged queries behind the headline means: those whose group is not in ``headline_excludes``."""
        excluded = self.headline_excludes
        return tuple(q for q in self.judged_queries if q.group not in excluded)

    @property
    def unjudged_query_ids(self) -> tuple[str, ...]:
        """Ids of queries with no judgment at all (left out of every mean)."""
        return tuple(q.id for q in self.queries if q.id not in self.qrels)

    def relevant(self, query_id: str) -> tuple[str, ...]:
        """Ids judged relevant (grade >= 1) for ``query_id``, sorted."""
        return tuple(sorted(d for d, g in self.qrels.get(query_id, {}).items() if g >= 1))

    def entry(self, entry_id: str) -> MemoryEntry:
        return self._by_id[entry_id]

    @property
    def _by_id(self) -> dict[str, MemoryEntry]:
        cache = self.__dict__.get("_by_id_cache")
        if cache is None:
            cache = {e.id: e for e in self.entries}
            object.__setattr__(self, "_by_id_cache", cache)
        return cache


def default_collection_path() -> Path:
    """The shipped fixture of the seed evaluation, found from any working directory.

    Installed wheels carry it inside the package (``agentmemory/_fixtures``);
    a source checkout or editable install finds ``fixtures/`` beside the package.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "_fixtures" / "assistant-notes", here.parent / "fixtures" / "assistant-notes"):
        if (candidate / "corpus.jsonl").is_file():
            return candidate
    raise MissingFileError(here / "_fixtures" / "assistant-notes", "folder (the shipped fixture)")


def parse_timestamp(value: object, path: str, line: int, field: str = "created_at") -> datetime:
    """An ISO 8601 timestamp with a timezone (``Z`` allowed), as an aware datetime in UTC."""
    if not isinstance(value, str):
        raise InputError(path, line, f"{field} {value!r} is not a string; expected ISO 8601 like 2026-03-01T09:30:00Z")
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            path, line, f"{field} {value!r} is not ISO 8601; expected e.g. 2026-03-01T09:30:00Z"
        ) from None
    if parsed.tzinfo is None:
        raise InputError(
            path, line, f"{field} {value!r} has no timezone; add one, e.g. 2026-03-01T09:30:00Z"
        )
    return parsed.astimezone(timezone.utc)


def _read(path: Path, files: dict[str, str], root: Path) -> str:
    if not path.is_file():
        raise MissingFileError(path)
    data = path.read_bytes()
    files[path.relative_to(root).as_posix()] = hashlib.sha256(data).hexdigest()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(path, line, "is not valid UTF-8") from None


def _jsonl(path: Path, text: str):
    """Yield (line number, object) for each non-blank line."""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as err:
            raise InputError(path, number, f"malformed JSON ({err.msg} at column {err.colno}); expected one JSON object per line") from None
        if not isinstance(obj, dict):
            raise InputError(path, number, f"expected a JSON object, found {type(obj).__name__}")
        yield number, obj


def _string_id(obj: dict, path: Path, line: int) -> str:
    if "_id" not in obj:
        raise InputError(path, line, "missing _id; every line needs a string _id")
    value = obj["_id"]
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise InputError(path, line, f"_id {value!r} is not a non-empty string; every line needs a string _id")
    return str(value)


def _text(obj: dict, path: Path, line: int) -> str:
    value = obj.get("text")
    if not isinstance(value, str):
        raise InputError(path, line, f"text {value!r} is not a string; every line needs a text")
    return value


def _tags(obj: dict, path: Path, line: int) -> tuple[str, ...] | None:
    if "tags" not in obj or obj["tags"] is None:
        return None
    value = obj["tags"]
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InputError(path, line, f"tags {value!r} is not a list of strings")
    return tuple(value)


def _optional_str(obj: dict, key: str, path: Path, line: int) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(path, line, f"{key} {value!r} is not a string; expected a string or no {key}")
    return value


def _provenance(obj: dict, path: Path, line: int) -> Provenance:
    value = obj.get("provenance")
    if value is None:
        return Provenance()
    if not isinstance(value, dict):
        raise InputError(path, line, f"provenance {value!r} is not an object with source, ref, actor, derived_from")
    unknown = sorted(set(value) - _PROVENANCE_KEYS)
    if unknown:
        raise InputError(
            path, line, f"provenance has unknown field {unknown[0]!r}; allowed: {', '.join(sorted(_PROVENANCE_KEYS))}"
        )
    derived = value.get("derived_from", [])
    if not isinstance(derived, list) or not all(isinstance(d, str) for d in derived):
        raise InputError(path, line, f"provenance.derived_from {derived!r} is not a list of entry ids")
    for key in ("source", "ref", "actor"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise InputError(path, line, f"provenance.{key} {value[key]!r} is not a string")
    return Provenance(
        source=value.get("source") or "unknown",
        ref=value.get("ref"),
        actor=value.get("actor"),
        derived_from=tuple(derived),
    )


def load_collection(path: str | PathLike[str], *, split: str = "test", progress: bool = False) -> Collection:
    """Load a collection folder (see the module docstring); validate every line.

    ``progress`` shows a tqdm bar over the corpus lines (off by default).
    """
    root = Path(path)
    if not root.exists():
        raise MissingFileError(root, "collection folder")
    if not root.is_dir():
        raise InputError(root, None, "is not a folder; a collection is a folder with corpus.jsonl, queries.jsonl, qrels/")
    files: dict[str, str] = {}

    corpus_path = root / "corpus.jsonl"
    entries: list[MemoryEntry] = []
    first_line: dict[str, int] = {}
    lines = _jsonl(corpus_path, _read(corpus_path, files, root))
    if progress:
        from tqdm.auto import tqdm

        lines = tqdm(lines, desc=f"load {corpus_path.name}", unit=" entries")
    for line, obj in lines:
        entry_id = _string_id(obj, corpus_path, line)
        if entry_id in first_line:
            raise InputError(
                corpus_path, line,
                f"duplicate _id {entry_id!r} (first on line {first_line[entry_id]}); every entry _id must be unique",
            )
        first_line[entry_id] = line
        text = _text(obj, corpus_path, line)
        title = obj.get("title")
        if title is not None and not isinstance(title, str):
            raise InputError(corpus_path, line, f"title {title!r} is not a string; expected a string or no title")
        if title:
            text = " ".join(part for part in (title, text) if part)
        created = obj.get("created_at")
        entries.append(
            MemoryEntry(
                id=entry_id,
                text=text,
                tags=_tags(obj, corpus_path, line) or (),
                created_at=None if created is None else parse_timestamp(created, str(corpus_path), line),
                provenance=_provenance(obj, corpus_path, line),
                scope=_optional_str(obj, "scope", corpus_path, line),
                metadata=MappingProxyType({k: v for k, v in obj.items() if k not in _CORPUS_KEYS}),
            )
        )
    if not entries:
        raise InputError(corpus_path, None, "the corpus has no entries; add at least one JSON line")
    for entry in entries:
        for source in entry.provenance.derived_from:
            if source not in first_line:
                raise InputError(
                    corpus_path, first_line[entry.id], f"provenance.derived_from names unknown entry {source!r}; derived_from may only name entries of this corpus"
                )

    queries_path = root / "queries.jsonl"
    queries: list[Query] = []
    query_line: dict[str, int] = {}
    for line, obj in _jsonl(queries_path, _read(queries_path, files, root)):
        query_id = _string_id(obj, queries_path, line)
        if query_id in query_line:
            raise InputError(
                queries_path, line,
                f"duplicate _id {query_id!r} (first on line {query_line[query_id]}); every query _id must be unique",
            )
        query_line[query_id] = line
        queries.append(
            Query(
                id=query_id,
                text=_text(obj, queries_path, line),
                tags=_tags(obj, queries_path, line),
                scope=_optional_str(obj, "scope", queries_path, line),
                group=_optional_str(obj, "group", queries_path, line),
                metadata=MappingProxyType({k: v for k, v in obj.items() if k not in _QUERY_KEYS}),
            )
        )

    qrels_path = root / "qrels" / f"{split}.tsv"
    qrels: dict[str, dict[str, int]] = {}
    qrels_line: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(_read(qrels_path, files, root).splitlines(), start=1):
        if not raw.strip():
            continue
        fields = raw.split("\t")
        if number == 1 and [f.strip() for f in fields] == ["query-id", "corpus-id", "score"]:
            continue
        if len(fields) != 3:
            raise InputError(
                qrels_path, number,
                f"expected 3 tab-separated fields query-id, corpus-id, score; found {len(fields)}",
            )
        query_id, entry_id, grade_text = (f.strip() for f in fields)
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(qrels_path, number, f"score {grade_text!r} is not an integer; expected an integer grade such as 0, 1 or 2") from None
        if query_id not in query_line:
            raise InputError(qrels_path, number, f"unknown query {query_id!r} (not in queries.jsonl); judge only queries of queries.jsonl")
        if entry_id not in first_line:
            raise InputError(qrels_path, number, f"unknown entry {entry_id!r} (not in corpus.jsonl); judge only entries of corpus.jsonl")
        if (query_id, entry_id) in qrels_line:
            raise InputError(
                qrels_path, number,
                f"query {query_id!r} judges entry {entry_id!r} twice (first on line {qrels_line[query_id, entry_id]}); judge each pair once",
            )
        qrels_line[query_id, entry_id] = number
        qrels.setdefault(query_id, {})[entry_id] = grade

    return Collection(
        name=root.resolve().name,
        entries=tuple(entries),
        queries=tuple(queries),
        qrels=MappingProxyType({q: MappingProxyType(d) for q, d in qrels.items()}),
        files=MappingProxyType(dict(sorted(files.items()))),
    )


def collection_summary(collection: Collection) -> dict[str, Any]:
    """Name, sizes and file hashes, JSON-ready (for artifacts and reports)."""
    return {
        "name": collection.name,
        "entries": len(collection.entries),
        "queries": len(collection.queries),
        "judged_queries": len(collection.judged_queries),
        "judgments": sum(len(d) for d in collection.qrels.values()),
        "files": dict(collection.files),
        "skipped_queries": [{"query_id": q, "reason": r} for q, r in collection.skipped],
        "repairs": [{"query_id": q, "change": r} for q, r in collection.repairs],
        "headline_excludes": list(collection.headline_excludes),
    }
