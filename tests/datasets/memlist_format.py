"""A small format the tests register at run time: a JSON file of memories and questions.

``{"memories": {id: text}, "questions": {id: {"text": ..., "relevant": [ids]}}}``,
recognised by the keys of its first record, as a plugin for LongMemEval-like
JSON files would be; options ``lowercase`` (bool) and ``limit`` (int).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType

from agentmemory import Collection, MemoryEntry, Query
from agentmemory.datasets import FORMATS, FormatOption, register_format
from agentmemory.datasets.sniff import first_record_has_keys

OPTIONS = (
    FormatOption("lowercase", bool, False, "lower-case every memory's text"),
    FormatOption("limit", int, 0, "keep the first N memories (0: all)"),
)
RULE = "a .json file with 'memories' and 'questions'"
DOCUMENT = {
    "questions": {"q1": {"text": "Where does Maya swim?", "relevant": ["m2"]}},
    "memories": {"m1": "Maya is vegetarian", "m2": "Maya swims at the LAKE on Sundays", "m3": "Lena likes tea"},
}


def read(path: Path, *, lowercase: bool, limit: int) -> Collection:
    """The file as a Collection (the file's sha256 under its name, as every reader records)."""
    data = path.read_bytes()
    document = json.loads(data)
    memories = list(document["memories"].items())[: limit or None]
    entries = tuple(MemoryEntry(i, t.lower() if lowercase else t) for i, t in memories)
    queries = tuple(Query(q, spec["text"]) for q, spec in document["questions"].items())
    qrels = {q: MappingProxyType({e: 1 for e in spec["relevant"]}) for q, spec in document["questions"].items()}
    files = MappingProxyType({path.name: hashlib.sha256(data).hexdigest()})
    return Collection(path.stem, entries, queries, MappingProxyType(qrels), files)


def recognise(path: Path) -> bool:
    """A .json file whose first record has the keys memories and questions."""
    return path.is_file() and path.suffix == ".json" and first_record_has_keys(path, ("memories", "questions"))


@contextmanager
def registered(folder: Path) -> Iterator[Path]:
    """Register the format as ``memlist`` for the block, write a file of it in ``folder``, and yield its path."""
    register_format("memlist", recognise, read, OPTIONS, description="a JSON file of memories and questions", rule=RULE)
    path = folder / "notes.json"
    path.write_text(json.dumps(DOCUMENT), encoding="utf-8")
    try:
        yield path
    finally:
        FORMATS.unregister("memlist")
