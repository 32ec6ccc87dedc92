"""Fuzzing the loaders: random bytes and random JSON shapes give a usable collection or one AgentMemoryError naming the file.

Hypothesis writes BEIR folders (corpus, queries, qrels), LoCoMo and LongMemEval files, TREC
runs and qrels, and JSON-lines runs (strategies in ``strategies.py``: mostly
near misses of a valid file, some random bytes, some of what Python cannot
hold) and reads them with every loader.  The property, for every example:

* either the loader returns, and what it returned is usable by everything
  downstream: every record passes its public constructor's checks (the
  loaders build them unchecked), every id fits a TREC file, every text
  encodes as UTF-8, and a collection with judgments evaluates and renders
  its TREC run and qrels;
* or it raises an :class:`~agentmemory.errors.AgentMemoryError` whose one-line
  message names the file;
* never any other exception (no ``RecursionError``, ``OverflowError``,
  ``ValueError`` from Python's own limits, ``UnicodeError``, ``TypeError``...).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import (
    corpus_files,
    jsonl_runs,
    locomo_files,
    longmemeval_hostile_files,
    qrels_files,
    query_files,
    trec_files,
)

from agentmemory.collection import Collection
from agentmemory.datasets import load
from agentmemory.errors import AgentMemoryError
from agentmemory.evaluation.runfiles import read_memories, read_run_file
from agentmemory.evaluation.runner import evaluate
from agentmemory.files.trec import format_qrels, format_run, read_qrels, read_run, trec_id_problem
from agentmemory.records import Hit, MemoryEntry, Provenance, Query

EXAMPLES = int(os.environ.get("AGENTMEMORY_FUZZ_EXAMPLES", "150"))  # per test (seven); raise it for a longer hunt
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _refused_or(result: Callable[[], Any], named: list[Path]) -> Any:
    """``result()``, or ``None`` when it raised an AgentMemoryError that names one of ``named`` on one line."""
    try:
        return result()
    except AgentMemoryError as err:
        message = str(err)
        assert "\n" not in message and len(message) < 2000, message[:300]
        assert any(str(path) in message for path in named), message[:300]
        return None


def _rebuilt(record: Any) -> Any:
    """``record`` built again through its public constructor (which checks every field)."""
    return type(record)(**{f.name: getattr(record, f.name) for f in dataclasses.fields(record)})


def _usable(collection: Collection) -> None:
    """What a loaded collection promises: records that pass their checks, TREC-safe ids, UTF-8 text, outputs that render."""
    for entry in collection.entries:
        assert _rebuilt(entry) == entry and _rebuilt(entry.provenance) == entry.provenance
        assert trec_id_problem(entry.id) is None
        entry.text.encode("utf-8")
    for query in collection.queries:
        assert _rebuilt(query) == query
        assert trec_id_problem(query.id) is None
        query.text.encode("utf-8")
    if collection.judged_queries:
        evaluation = evaluate(collection, "bm25,tags", k=3, ties=True)
        for result in evaluation.results:
            format_run({q.query_id: [(h.entry_id, h.score) for h in q.hits] for q in result.per_query}, result.name)
        format_qrels(collection.qrels)


def _write(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


VALID_CORPUS = b'{"_id": "m1", "text": "Maya eats lentils", "tags": ["diet"]}\n{"_id": "m2", "text": "soup"}\n'
VALID_QUERIES = b'{"_id": "q1", "text": "what does Maya eat"}\n'
VALID_QRELS = b"query-id\tcorpus-id\tscore\nq1\tm1\t1\n"


@FUZZ
@given(
    corpus=st.one_of(st.just(VALID_CORPUS), corpus_files),
    queries=st.one_of(st.just(VALID_QUERIES), query_files),
    qrels=st.one_of(st.just(VALID_QRELS), qrels_files.map(lambda b: b"query-id\tcorpus-id\tscore\n" + b)),
)
def test_beir_folders(corpus: bytes, queries: bytes, qrels: bytes) -> None:
    """Any corpus, queries and qrels: a usable collection or one AgentMemoryError naming the file at fault."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        _write(root, {"corpus.jsonl": corpus, "queries.jsonl": queries, "qrels/test.tsv": qrels})
        named = [root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / "test.tsv"]
        collection = _refused_or(lambda: load(root), named)
        if collection is not None:
            _usable(collection)


@FUZZ
@given(document=locomo_files(), repair=st.booleans())
def test_locomo_files(document: bytes, repair: bool) -> None:
    """Any LoCoMo-like file, strict or repairing: a usable collection or one AgentMemoryError naming the file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "locomo.json"
        path.write_bytes(document)
        collection = _refused_or(lambda: load(path, format="locomo", repair=repair), [path])
        if collection is not None:
            _usable(collection)


@FUZZ
@given(document=longmemeval_hostile_files(), repair=st.booleans(), granularity=st.sampled_from(["session", "turn"]))
def test_longmemeval_files(document: bytes, repair: bool, granularity: str) -> None:
    """Any LongMemEval-like file, at either granularity: a usable collection or one AgentMemoryError naming the file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lme.json"
        path.write_bytes(document)
        collection = _refused_or(
            lambda: load(path, format="longmemeval", repair=repair, granularity=granularity), [path]
        )
        if collection is not None:
            _usable(collection)


@FUZZ
@given(data=trec_files)
def test_trec_runs_and_qrels(data: bytes) -> None:
    """Any bytes as a TREC run and as qrels: dicts of strings to numbers, or one AgentMemoryError naming the file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "file.trec"
        path.write_bytes(data)
        run = _refused_or(lambda: read_run(path), [path])
        if run is not None:
            assert all(trec_id_problem(q) is None for q in run)
            format_run(run)
        qrels = _refused_or(lambda: read_qrels(path), [path])
        if qrels is not None:
            assert qrels and all(type(g) is int for judged in qrels.values() for g in judged.values())
            format_qrels(qrels)


@FUZZ
@given(data=st.one_of(trec_files, jsonl_runs))
def test_run_files(data: bytes) -> None:
    """read_run_file (TREC or JSON lines): hits of strings and non-NaN floats, or one AgentMemoryError naming the file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mine.run"
        path.write_bytes(data)
        run = _refused_or(lambda: read_run_file(path, "mine"), [path])
        if run is not None:
            for hits in run.hits.values():
                for doc, score, _line in hits:
                    assert isinstance(doc, str) and doc and score == score
                    Hit(doc, score, 1)


@FUZZ
@given(data=corpus_files)
def test_run_memories(data: bytes) -> None:
    """read_memories (a run's own memories.jsonl): checked records, or one AgentMemoryError naming the file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memories.jsonl"
        path.write_bytes(data)
        found = _refused_or(lambda: read_memories(path), [path])
        if found is not None:
            for memory in found[0]:
                assert isinstance(memory, MemoryEntry) and _rebuilt(memory) == memory


def test_the_strategies_reach_valid_and_refused_outcomes() -> None:
    """Sanity of the fuzzing itself: the valid seeds load, and Query/Provenance records rebuild equal."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        _write(root, {"corpus.jsonl": VALID_CORPUS, "queries.jsonl": VALID_QUERIES, "qrels/test.tsv": VALID_QRELS})
        collection = load(root)
        _usable(collection)
        assert _rebuilt(Query("q", "t", tags=("a",))) == Query("q", "t", tags=("a",))
        assert _rebuilt(Provenance("s", derived_from=("m",))) == Provenance("s", derived_from=("m",))
