"""The BEIR-style collection folder, extended for memories: its reader, its writer and its format declaration.

A collection folder holds::

    corpus.jsonl      one memory per line: _id, text, [title], [tags], [created_at], [provenance], [scope]
    queries.jsonl     one query per line: _id, text, [tags], [scope], [group], [asked_at]
    qrels/<split>.tsv header "query-id<TAB>corpus-id<TAB>score", then one judgment per line

The format is documented in ``fixtures/README.md``.  :func:`load_collection`
converts every line into typed records once; any malformed line raises
:class:`~agentmemory.errors.InputError` naming the file and line.  What is
checked is everything any output of a run needs, so a collection that loads
can be written anywhere: every ``_id`` is a non-empty string without white
space or control characters (ids go into TREC files, whose fields white
space separates); tags are non-empty strings; timestamps are ISO 8601 with a
timezone, in :data:`agentmemory.records.TIME_RANGE`; grades are integers by
:mod:`agentmemory.files.numbers`'s rule; JSON is read strictly
(:func:`agentmemory.files.reading.parse_json`).  A judgments file with no judgment
loads (a collection to retrieve from, or to judge later); evaluating it is
refused (:func:`agentmemory.collection.require_judgments`).  Any BEIR
dataset on disk loads as it is (``title`` is joined to ``text``; other
fields become metadata).  :func:`write_collection` writes a collection back
as such a folder.

Registered as the format ``beir`` (:data:`FORMAT`): auto-detection takes a
folder holding ``corpus.jsonl``; option ``split`` picks the qrels file.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Container, Iterable, Iterator
from itertools import repeat
from operator import attrgetter, eq, itemgetter
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentmemory.collection import Collection, check_split
from agentmemory.collection import write_folder as write_collection
from agentmemory.collection.columns import Entries
from agentmemory.datasets.base import Format, FormatOption
from agentmemory.datasets.beir_columns import read_corpus_columns
from agentmemory.errors import InputError, MissingFileError, NumberTextError, quote
from agentmemory.files.fields import parse_id, parse_timestamp
from agentmemory.files.numbers import INTEGER_FORM, parse_integer
from agentmemory.files.reading import decode_utf8, gc_paused, json_lines, json_values, path_kind, read_bytes
from agentmemory.records import NO_METADATA, UNKNOWN_PROVENANCE, MemoryEntry, Provenance, Query

__all__ = ["FORMAT", "load_collection", "recognise", "write_collection"]

_CORPUS_KEYS = {"_id", "text", "title", "tags", "created_at", "provenance", "scope"}
_QUERY_KEYS = {"_id", "text", "tags", "scope", "group", "asked_at"}
_PROVENANCE_KEYS = {"source", "ref", "actor", "derived_from"}
# Field names the reader interprets: a metadata key of one of these names would not be read back as
# metadata (a "title" would be joined to the text), so the writer refuses it.


def _read(path: Path, files: dict[str, str], root: Path) -> str:
    data = read_bytes(path)
    files[path.relative_to(root).as_posix()] = hashlib.sha256(data).hexdigest()
    return decode_utf8(path, data)


_EXPECTED_LINE = "; expected one JSON object per line"


def _jsonl(path: Path, text: str) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line (:func:`json_lines`: an earlier line's bad
    field is still the error reported before a later line's bad JSON, as the caller meets it first)."""
    for number, obj in json_lines(path, text, expected=_EXPECTED_LINE):
        if not isinstance(obj, dict):
            raise InputError(path, number, f"expected a JSON object, found {type(obj).__name__}")
        yield number, obj


def _string_id(obj: dict, path: Path, line: int) -> str:
    if "_id" not in obj:
        raise InputError(path, line, "missing _id; every line needs a string _id")
    return parse_id(obj["_id"], path, line)


def _text(obj: dict, path: Path, line: int) -> str:
    value = obj.get("text")
    if not isinstance(value, str):
        raise InputError(path, line, f"text {quote(value)} is not a string; every line needs a text")
    return value


def _tags(obj: dict, path: Path, line: int) -> tuple[str, ...] | None:
    if "tags" not in obj or obj["tags"] is None:
        return None
    value = obj["tags"]
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InputError(path, line, f"tags {quote(value)} is not a list of strings")
    if "" in value:
        raise InputError(path, line, f"tags {quote(value)} holds an empty string; every tag needs a character")
    return tuple(value)


def _optional_str(obj: dict, key: str, path: Path, line: int) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(path, line, f"{key} {quote(value)} is not a string; expected a string or no {key}")
    return value


def _provenance(obj: dict, path: Path, line: int) -> Provenance:
    value = obj.get("provenance")
    if value is None:
        return UNKNOWN_PROVENANCE
    if not isinstance(value, dict):
        raise InputError(
            path, line, f"provenance {quote(value)} is not an object with source, ref, actor, derived_from"
        )
    unknown = sorted(set(value) - _PROVENANCE_KEYS)
    if unknown:
        raise InputError(
            path,
            line,
            f"provenance has unknown field {quote(unknown[0])}; allowed: {', '.join(sorted(_PROVENANCE_KEYS))}",
        )
    derived = value.get("derived_from", [])
    if not isinstance(derived, list) or not all(isinstance(d, str) for d in derived):
        raise InputError(path, line, f"provenance.derived_from {quote(derived)} is not a list of entry ids")
    for key in ("source", "ref", "actor"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise InputError(path, line, f"provenance.{key} {quote(value[key])} is not a string")
    return Provenance._trusted(
        source=value.get("source") or "unknown",
        ref=value.get("ref"),
        actor=value.get("actor"),
        derived_from=tuple(derived),
    )


_ID_TEXT = frozenset(("_id", "text"))
_DERIVED_FROM = attrgetter("provenance.derived_from")
_BAD_ID_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f]")  # ASCII white space and control characters (TREC_ID_RULE)


def _bar(path: Path) -> Any:
    from tqdm.auto import tqdm

    return tqdm(desc=f"load {path.name}", unit=" entries")


def _corpus(path: Path, text: str, progress: bool) -> tuple[list[MemoryEntry], dict[str, int]]:
    """The corpus's entries and each id's line: every line checked, in bulk when every line is ``{_id, text}``.

    The bulk path checks whole columns at once (every object a dict with
    exactly the keys ``_id`` and ``text``, string ids, none empty, none with
    white space or a control character, none repeated, string texts) and
    builds the records with :meth:`MemoryEntry._trusted_many`.  When any
    check fails, or a line has other fields, every line goes through
    :func:`_corpus_lines`, which names the first bad line.
    """
    bar = _bar(path) if progress else None
    try:
        try:
            numbers, objs = json_values(path, text, expected=_EXPECTED_LINE)
        except InputError:  # read again line by line: the first bad line, by its JSON or by its fields
            return _corpus_lines(path, json_lines(path, text, expected=_EXPECTED_LINE), bar)
        if objs and set(map(type, objs)) == {dict} and all(map(eq, map(dict.keys, objs), repeat(_ID_TEXT, len(objs)))):
            ids = list(map(itemgetter("_id"), objs))
            texts = list(map(itemgetter("text"), objs))
            if (
                set(map(type, ids)) == {str}
                and set(map(type, texts)) == {str}
                and all(ids)
                and _BAD_ID_CHAR.search("".join(ids)) is None
            ):
                first_line = dict(zip(ids, numbers))
                if len(first_line) == len(ids):
                    entries = MemoryEntry._trusted_many(len(ids), id=ids, text=texts)
                    if bar is not None:
                        bar.update(len(objs))
                    return entries, first_line
        return _corpus_lines(path, zip(numbers, objs), bar)
    finally:
        if bar is not None:
            bar.close()


def _corpus_lines(path: Path, lines: Iterable[tuple[int, Any]], bar: Any) -> tuple[list[MemoryEntry], dict[str, int]]:
    """The corpus's entries from ``(line number, object)`` pairs, line by line (any fields; the first bad line raises)."""
    entries: list[MemoryEntry] = []
    first_line: dict[str, int] = {}
    for line, obj in lines:
        if not isinstance(obj, dict):
            raise InputError(path, line, f"expected a JSON object, found {type(obj).__name__}")
        entry_id = _string_id(obj, path, line)
        if entry_id in first_line:
            raise InputError(
                path,
                line,
                f"duplicate _id {quote(entry_id)} (first on line {first_line[entry_id]}); every entry _id must be unique",
            )
        first_line[entry_id] = line
        text = _text(obj, path, line)
        title = obj.get("title")
        if title is not None and not isinstance(title, str):
            raise InputError(path, line, f"title {quote(title)} is not a string; expected a string or no title")
        if title:
            text = " ".join(part for part in (title, text) if part)
        created = obj.get("created_at")
        extra = {k: v for k, v in obj.items() if k not in _CORPUS_KEYS}
        entries.append(
            MemoryEntry._trusted(
                id=entry_id,
                text=text,
                tags=_tags(obj, path, line) or (),
                created_at=None if created is None else parse_timestamp(created, str(path), line),
                provenance=_provenance(obj, path, line),
                scope=_optional_str(obj, "scope", path, line),
                metadata=MappingProxyType(extra) if extra else NO_METADATA,
            )
        )
        if bar is not None:
            bar.update(1)
    return entries, first_line


def load_collection(path: str | PathLike[str], *, split: str = "test", progress: bool = False) -> Collection:
    """Load a collection folder (see the module docstring); validate every line.

    ``split`` names the judgments file ``qrels/<split>.tsv``; ``progress``
    shows a tqdm bar over the corpus lines (off by default).

    Raises:
        ParameterError: ``split`` is not a plain file name (empty, not a
            string, with a path separator or a leading dot).
        MissingFileError: the folder or one of its files does not exist.
        InputError: the path or one of the files is not what it should be
            (a file, a FIFO, a link loop: said which); a malformed line,
            naming the file and the line (a query whose scope no entry has
            included).
    """
    check_split(split)
    root = _collection_folder(path)
    files: dict[str, str] = {}  # each file read, relative to the folder, with its sha256
    entries, first_line = _load_corpus(root, files, progress)
    queries, query_line = _load_queries(root, files)
    qrels = _load_qrels(root / "qrels" / f"{split}.tsv", root, files, query_line, first_line)
    scopes = set(entries.scopes()) if isinstance(entries, Entries) else {e.scope for e in entries}
    _check_scopes(root / "queries.jsonl", queries, query_line, scopes)
    return Collection(
        name=root.resolve().name,
        entries=entries if isinstance(entries, Entries) else tuple(entries),
        queries=tuple(queries),
        qrels=MappingProxyType({q: MappingProxyType(d) for q, d in qrels.items()}),
        files=MappingProxyType(dict(sorted(files.items()))),
        format="beir",
        format_options=MappingProxyType({"split": split}),
    )


def _collection_folder(path: str | PathLike[str]) -> Path:
    """``path`` as a folder, or the error saying what it is instead."""
    root = Path(path)
    try:
        kind = path_kind(root)
    except MissingFileError:
        raise MissingFileError(root, "collection folder") from None
    if kind is not None or not root.is_dir():
        what = "is not a folder" if kind is None else f"is {kind}, not a folder"
        raise InputError(root, None, f"{what}; a collection is a folder with corpus.jsonl, queries.jsonl, qrels/")
    return root


def _load_corpus(
    root: Path, files: dict[str, str], progress: bool
) -> tuple[Entries | list[MemoryEntry], dict[str, int] | Entries]:
    """``corpus.jsonl``'s entries and each entry's line (for columns, the columns: the judgments ask only whether
    an id is there);
    at least one entry, every ``derived_from`` known.

    The columns' bulk path first (:func:`~agentmemory.datasets.beir_columns.read_corpus_columns`);
    anything it does not take is read line by line, with the messages naming the first bad line.
    """
    corpus_path = root / "corpus.jsonl"
    bar = _bar(corpus_path) if progress else None
    try:
        columns = read_corpus_columns(corpus_path, bar)
    finally:
        if bar is not None:
            bar.close()
    if columns is not None:
        entries, sha = columns
        files[corpus_path.relative_to(root).as_posix()] = sha
        return entries, entries
    with gc_paused():
        records, first_line = _corpus(corpus_path, _read(corpus_path, files, root), progress)
    if not records:
        raise InputError(corpus_path, None, "the corpus has no entries; add at least one JSON line")
    for entry in records if any(map(_DERIVED_FROM, records)) else ():
        for source in entry.provenance.derived_from:
            if source not in first_line:
                raise InputError(
                    corpus_path,
                    first_line[entry.id],
                    f"provenance.derived_from names unknown entry {quote(source)}; derived_from may only name entries of this corpus",
                )
    return records, first_line


def _load_queries(root: Path, files: dict[str, str]) -> tuple[list[Query], dict[str, int]]:
    """``queries.jsonl``'s queries and each query's line (ids unique)."""
    queries_path = root / "queries.jsonl"
    queries: list[Query] = []
    query_line: dict[str, int] = {}
    for line, obj in _jsonl(queries_path, _read(queries_path, files, root)):
        query_id = _string_id(obj, queries_path, line)
        if query_id in query_line:
            raise InputError(
                queries_path,
                line,
                f"duplicate _id {quote(query_id)} (first on line {query_line[query_id]}); every query _id must be unique",
            )
        query_line[query_id] = line
        asked = obj.get("asked_at")
        queries.append(
            Query._trusted(
                id=query_id,
                text=_text(obj, queries_path, line),
                tags=_tags(obj, queries_path, line),
                scope=_optional_str(obj, "scope", queries_path, line),
                group=_optional_str(obj, "group", queries_path, line),
                asked_at=None if asked is None else parse_timestamp(asked, str(queries_path), line, "asked_at"),
                metadata=MappingProxyType({k: v for k, v in obj.items() if k not in _QUERY_KEYS}),
            )
        )
    return queries, query_line


def _check_scopes(path: Path, queries: list[Query], query_line: dict[str, int], scopes: set[str | None]) -> None:
    """Refuse a query whose scope no entry has (it could find nothing), naming its line."""
    for query in queries:
        if query.scope is not None and query.scope not in scopes:
            raise InputError(
                path,
                query_line[query.id],
                f"scope {quote(query.scope)} is the scope of no entry in corpus.jsonl; a query finds only the "
                "entries of its own scope (leave scope out for the entries without one)",
            )


def _load_qrels(
    qrels_path: Path,
    root: Path,
    files: dict[str, str],
    query_line: dict[str, int],
    first_line: dict[str, int] | Entries,
) -> dict[str, dict[str, int]]:
    """The judgments file's grades, ``qrels[query_id][entry_id]``: known queries and entries, each pair once."""
    qrels: dict[str, dict[str, int]] = {}
    qrels_line: dict[tuple[str, str], int] = {}
    lines = _read(qrels_path, files, root).splitlines()
    known: Container[str]
    if not isinstance(first_line, Entries):
        known = first_line
    else:  # the judged ids looked up in one pass over the corpus's ids
        known = first_line.membership(f[1].strip() for f in (raw.split("\t") for raw in lines) if len(f) == 3)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        fields = raw.split("\t")
        if number == 1 and [f.strip() for f in fields] == ["query-id", "corpus-id", "score"]:
            continue
        query_id, entry_id, grade = _qrels_line(qrels_path, number, fields)
        if query_id not in query_line:
            raise InputError(
                qrels_path,
                number,
                f"unknown query {quote(query_id)} (not in queries.jsonl); judge only queries of queries.jsonl",
            )
        if entry_id not in known:
            raise InputError(
                qrels_path,
                number,
                f"unknown entry {quote(entry_id)} (not in corpus.jsonl); judge only entries of corpus.jsonl",
            )
        if (query_id, entry_id) in qrels_line:
            raise InputError(
                qrels_path,
                number,
                f"query {quote(query_id)} judges entry {quote(entry_id)} twice (first on line {qrels_line[query_id, entry_id]}); judge each pair once",
            )
        qrels_line[query_id, entry_id] = number
        qrels.setdefault(query_id, {})[entry_id] = grade
    return qrels


def _qrels_line(qrels_path: Path, number: int, fields: list[str]) -> tuple[str, str, int]:
    """``(query_id, entry_id, grade)`` of one judgments line's tab-separated fields."""
    if len(fields) != 3:
        raise InputError(
            qrels_path,
            number,
            f"expected 3 tab-separated fields query-id, corpus-id, score; found {len(fields)}",
        )
    query_id, entry_id, grade_text = (f.strip() for f in fields)
    try:
        grade = parse_integer(grade_text)
    except NumberTextError as err:
        raise InputError(
            qrels_path,
            number,
            f"score {quote(grade_text)} {err.problem}; expected an integer grade such as 0, 1 or 2 ({INTEGER_FORM})",
        ) from None
    return query_id, entry_id, grade


def recognise(path: Path) -> bool:
    """True for a folder holding ``corpus.jsonl`` (the rule ``format="auto"`` applies).

    Whatever ``corpus.jsonl`` is (a file, or a folder, a FIFO, a broken link
    by mistake), the folder is taken as BEIR, so the reader can say what is
    wrong with it instead of "cannot tell the format".
    """
    return path.is_dir() and os.path.lexists(path / "corpus.jsonl")


def read(path: Path, *, split: str, progress: bool) -> Collection:
    """The ``beir`` format's reader: :func:`load_collection`."""
    return load_collection(path, split=split, progress=progress)


FORMAT = Format(
    name="beir",
    recognise=recognise,
    read=read,
    options=(FormatOption("split", str, "test", "the judgments file to read, qrels/<split>.tsv"),),
    description="a BEIR-style folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv",
    rule="a folder holding corpus.jsonl",
)
"""The ``beir`` format's declaration, registered by :mod:`agentmemory.datasets`."""
