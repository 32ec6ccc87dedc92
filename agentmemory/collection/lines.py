"""A collection as JSON lines, and as the BEIR-style folder they make: what a format reads back and a store exports.

The folder is the collection's own form on disk (``corpus.jsonl``,
``queries.jsonl``, ``qrels/<split>.tsv``; ``fixtures/README.md``):
:mod:`agentmemory.datasets.beir` reads it, and writes it through
:func:`write_folder`; :mod:`agentmemory.store` exports a store as one and
checks an entry's metadata against :func:`corpus_line`.  Here, below both,
neither imports the other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from agentmemory.collection.record import Collection
from agentmemory.errors import ParameterError, quote
from agentmemory.files.output_plan import OutputPlan
from agentmemory.records import MemoryEntry, Query

__all__ = ["RESERVED_CORPUS_KEYS", "RESERVED_QUERY_KEYS", "check_split", "corpus_line", "query_line", "write_folder"]

RESERVED_CORPUS_KEYS: tuple[str, ...] = ("_id", "text", "title", "tags", "created_at", "provenance", "scope")
"""The fields of a ``corpus.jsonl`` line the reader interprets (no metadata key may take one)."""
RESERVED_QUERY_KEYS: tuple[str, ...] = ("_id", "text", "tags", "scope", "group", "asked_at")
"""The fields of a ``queries.jsonl`` line the reader interprets (no metadata key may take one)."""


def check_split(split: object) -> None:
    """Refuse a ``split`` that cannot name a file ``qrels/<split>.tsv`` (empty, a path, hidden).

    Raises:
        ParameterError: ``split`` is not a split name.
    """
    if not isinstance(split, str) or not split or any(c in split for c in "/\\") or split.startswith("."):
        raise ParameterError(
            "split", split, "is not a split name", "a split names a file qrels/<split>.tsv, e.g. 'test' or 'dev'"
        )


def _extra(metadata: Mapping[str, Any], reserved: tuple[str, ...], what: str, item_id: str) -> dict[str, Any]:
    clash = sorted(set(metadata) & set(reserved))
    if clash:
        raise ParameterError(
            f"{what} {quote(item_id)} metadata",
            clash[0],
            "is a reserved field name",
            "rename the metadata key; reserved: " + ", ".join(reserved),
        )
    return dict(metadata)


def corpus_line(entry: MemoryEntry) -> dict[str, Any]:
    """The ``corpus.jsonl`` object for ``entry``, keys in the writer's fixed order (see :func:`write_folder`)."""
    line: dict[str, Any] = {"_id": entry.id, "text": entry.text, "tags": list(entry.tags)}
    if entry.created_at is not None:
        line["created_at"] = entry.created_at.isoformat()
    line["provenance"] = entry.provenance.to_dict()
    if entry.scope is not None:
        line["scope"] = entry.scope
    line.update(_extra(entry.metadata, RESERVED_CORPUS_KEYS, "entry", entry.id))
    return line


def query_line(query: Query) -> dict[str, Any]:
    """The ``queries.jsonl`` object for ``query``, keys in the writer's fixed order (see :func:`write_folder`)."""
    line: dict[str, Any] = {"_id": query.id, "text": query.text}
    if query.tags is not None:
        line["tags"] = list(query.tags)
    for key in ("scope", "group"):
        if getattr(query, key) is not None:
            line[key] = getattr(query, key)
    if query.asked_at is not None:
        line["asked_at"] = query.asked_at.isoformat()
    line.update(_extra(query.metadata, RESERVED_QUERY_KEYS, "query", query.id))
    return line


def write_folder(collection: Collection, folder: str | PathLike[str], *, split: str = "test") -> dict[str, str]:
    """Write ``collection`` as a BEIR-style folder that :func:`agentmemory.datasets.beir.load_collection` reads
    (there, ``write_collection``).

    Files (UTF-8, ``\\n`` line endings, one JSON object per line, keys in a
    fixed order)::

        corpus.jsonl        _id, text, tags, [created_at], provenance, [scope], metadata keys
        queries.jsonl       _id, text, [tags], [scope], [group], [asked_at], metadata keys
        qrels/<split>.tsv   "query-id<TAB>corpus-id<TAB>score", then one line per judgment

    The three files are written through one
    :class:`~agentmemory.files.output_plan.OutputPlan`: all are rendered first, then
    each is written atomically, and a failure before the last rename
    changes none of them.  Existing files of those names are replaced.  Metadata keys
    are written as top-level fields, which the loader returns as metadata.
    ``scope``, ``group`` and ``asked_at`` are written when set.  ``skipped``, ``repairs``
    and ``headline_excludes`` are not written.

    Returns:
        The written files' paths relative to ``folder`` (POSIX) -> sha256,
        sorted: what ``load_collection(folder).files`` will hold.

    Raises:
        ParameterError: a metadata key is a field name the reader interprets
            (it would not come back as metadata), or ``split`` is not a
            split name.
    """
    check_split(split)
    root = Path(folder)
    texts = {
        "corpus.jsonl": "".join(json.dumps(corpus_line(e), ensure_ascii=False) + "\n" for e in collection.entries),
        "queries.jsonl": "".join(json.dumps(query_line(q), ensure_ascii=False) + "\n" for q in collection.queries),
        f"qrels/{split}.tsv": "query-id\tcorpus-id\tscore\n"
        + "".join(
            f"{qid}\t{eid}\t{int(grade)}\n" for qid, judged in collection.qrels.items() for eid, grade in judged.items()
        ),
    }
    plan = OutputPlan()
    for name, text in texts.items():
        plan.put(plan.file("folder", root / name), text)
    plan.write()
    return {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in sorted(texts.items())}
