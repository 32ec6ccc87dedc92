"""The artifact eval-results.json: byte-identical across runs, hash seeds and working directories; its keys; atomic writing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import EVAL_RUN_SETTINGS, REPO_ROOT

from agentmemory.analysis.artifact import SCHEMA_VERSION, dumps_artifact, write_artifact


@pytest.fixture(scope="module")
def artifact_bytes(eval_runs) -> bytes:
    """The artifact written by the first subprocess run (which must have succeeded)."""
    for proc, out in eval_runs:
        assert (proc.returncode, proc.stderr) == (0, "")
        assert out.is_file()
    return eval_runs[0][1].read_bytes()


@pytest.fixture(scope="module")
def artifact(artifact_bytes: bytes) -> dict:
    return json.loads(artifact_bytes)


def test_byte_identical_across_hash_seeds_and_working_directories(eval_runs, artifact_bytes: bytes) -> None:
    """Runs from the repo root, a sub-folder and an outside folder, with PYTHONHASHSEED 0, 12345 and random, write the same bytes."""
    assert [where for where, _ in EVAL_RUN_SETTINGS] == ["root", "tests", "outside"]
    assert len({seed for _, seed in EVAL_RUN_SETTINGS}) == 3
    for _, out in eval_runs[1:]:
        assert out.read_bytes() == artifact_bytes


def test_subprocess_artifact_equals_the_library_artifact(seed_evaluation, artifact_bytes: bytes) -> None:
    """The command line's artifact is exactly dumps_artifact(evaluate(...)) of the library, UTF-8."""
    assert artifact_bytes == dumps_artifact(seed_evaluation).encode("utf-8")


def test_text_form(artifact_bytes: bytes) -> None:
    """2-space indented JSON, LF line endings, one trailing newline, no NaN or Infinity."""
    text = artifact_bytes.decode("utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert "\r" not in text
    assert text.startswith('{\n  "schema_version": 3,\n  "card": {\n')
    assert not re.search(r"\b(NaN|Infinity)\b", text)


def test_top_level_keys(artifact: dict) -> None:
    """The artifact has the documented top-level keys, schema_version first and the core ones in this order.

    (Other modules add sections such as groups or statistics; only the core is pinned here.)
    """
    keys = list(artifact)
    core = ["schema_version", "card", "params", "collection", "aggregate", "unjudged_queries", "per_query", "events"]
    assert [k for k in keys if k in core] == core
    assert keys[0] == "schema_version"
    assert artifact["schema_version"] == SCHEMA_VERSION == 3
    assert "judgment_patch" not in keys and "claims" not in keys  # only with a patch, with claims
    assert artifact["unjudged_queries"] == []


def test_params(artifact: dict) -> None:
    """params carry the seed, k, the measures and each retriever with its parameters."""
    params = artifact["params"]
    assert (params["seed"], params["k"]) == (7, 5)
    assert params["measures"] == ["P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5"]
    assert [(r["name"], r["label"]) for r in params["retrievers"]] == [("bm25", "BM25"), ("tags", "Tag scorer")]
    bm25 = params["retrievers"][0]["params"]
    assert (bm25["k1"], bm25["b"]) == (1.2, 0.75)


def test_collection_names_files_by_relative_path_with_sha256(artifact: dict, fixture_dir: Path) -> None:
    """The collection block names the collection and gives each input file's sha256, keyed by relative path."""
    coll = artifact["collection"]
    assert coll["name"] == "assistant-notes"
    assert (coll["entries"], coll["queries"], coll["judged_queries"], coll["judgments"]) == (16, 5, 5, 8)
    assert coll["files"] == {
        name: hashlib.sha256((fixture_dir / name).read_bytes()).hexdigest()
        for name in ("corpus.jsonl", "qrels/test.tsv", "queries.jsonl")
    }


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, {"retriever": "BM25", "mean_recall@k": 0.9, "mean_precision@k": 0.28, "MRR": 1.0}),
        (1, {"retriever": "Tag scorer", "mean_recall@k": 1.0, "mean_precision@k": 0.32, "MRR": 1.0}),
    ],
)
def test_aggregate_rows(artifact: dict, index: int, expected: dict) -> None:
    """Each aggregate row has retriever, mean_recall@k, mean_precision@k and MRR with the seed's values."""
    row = artifact["aggregate"][index]
    assert list(row)[:4] == ["retriever", "mean_recall@k", "mean_precision@k", "MRR"]
    assert row["retriever"] == expected["retriever"]
    for key in ("mean_recall@k", "mean_precision@k", "MRR"):
        assert row[key] == pytest.approx(expected[key], abs=1e-12)
    assert {"P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5"} <= set(row)


def test_per_query_rows(artifact: dict) -> None:
    """per_query has one row per retriever and judged query, with relevant ids, ranked hits and metrics."""
    rows = artifact["per_query"]
    assert [(r["retriever"], r["query_id"]) for r in rows] == [
        (n, f"q{i}") for n in ("bm25", "tags") for i in range(1, 6)
    ]
    for row in rows:
        assert list(row)[:7] == ["retriever", "query_id", "text", "relevant", "hits", "metrics", "tie_at_cutoff"]
        assert [h["rank"] for h in row["hits"]] == list(range(1, len(row["hits"]) + 1))
        assert all(set(h) == {"entry_id", "score", "rank"} for h in row["hits"])
    assert rows[0]["relevant"] == ["m01", "m10"]
    assert [h["entry_id"] for h in rows[0]["hits"]] == ["m01", "m13", "m12", "m16", "m07"]


def test_events_have_ids_and_timestamps(artifact: dict) -> None:
    """events is the run's log: each with a 16-hex event_id and a UTC ISO 8601 timestamp, in time order."""
    events = artifact["events"]
    assert len(events) == 11
    assert len({e["event_id"] for e in events}) == 11
    for event in events:
        assert re.fullmatch(r"[0-9a-f]{16}", event["event_id"])
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", event["timestamp"])
    stamps = [datetime.fromisoformat(e["timestamp"]) for e in events]
    assert stamps == sorted(stamps)
    assert stamps[0] == datetime(2026, 3, 2, 15, 30, tzinfo=timezone.utc)


def test_no_path_time_or_environment_inside(eval_runs, artifact_bytes: bytes) -> None:
    """No absolute path (repo, output folders, home), no wall-clock date, no interpreter detail in the artifact."""
    text = artifact_bytes.decode("utf-8")
    forbidden = {str(REPO_ROOT), str(Path.home()), os.getcwd(), str(Path(sys.executable).parent)}
    forbidden |= {str(out.parent) for _, out in eval_runs}
    for value in forbidden:
        assert value not in text, value
    assert datetime.now(timezone.utc).date().isoformat() not in text
    assert "/tmp" not in text and "site-packages" not in text


# -- atomic writing -----------------------------------------------------------------


def _raise(*args, **kwargs):
    raise OSError(28, "No space left on device (simulated)")


@pytest.mark.parametrize(
    "failing",
    [
        "agentmemory.analysis.artifact.dumps_indented",
        "agentmemory.files.atomic.os.fsync",
        "agentmemory.files.atomic.os.replace",
    ],
)
@pytest.mark.parametrize("existed", [True, False])
def test_failed_write_leaves_destination_unchanged_and_no_temp_file(
    tmp_path: Path, monkeypatch, seed_evaluation, failing: str, existed: bool
) -> None:
    """If serialising, flushing or renaming fails, the old file is untouched (or still absent) and no temp file remains."""
    dest = tmp_path / "eval-results.json"
    if existed:
        dest.write_text("previous artifact\n")
    monkeypatch.setattr(failing, _raise)
    with pytest.raises(OSError, match=re.escape("No space left on device (simulated)")):
        write_artifact(seed_evaluation, dest)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == (["eval-results.json"] if existed else [])
    if existed:
        assert dest.read_text() == "previous artifact\n"


def test_write_replaces_an_old_artifact(tmp_path: Path, seed_evaluation) -> None:
    """A successful write replaces the destination and leaves only it in the folder."""
    dest = tmp_path / "sub" / "eval-results.json"
    dest.parent.mkdir()
    dest.write_text("old\n")
    write_artifact(seed_evaluation, dest)
    assert dest.read_text(encoding="utf-8") == dumps_artifact(seed_evaluation)
    assert [p.name for p in dest.parent.iterdir()] == ["eval-results.json"]


def test_atomic_write_gives_the_file_the_mode_open_would(tmp_path):
    """Atomic writes respect the umask like open() does, instead of mkstemp's owner-only 0600."""
    import os

    from agentmemory.files.atomic import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "x.json", "{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    "committed, collection",
    [
        ("reports/eval-results.json", "fixtures/assistant-notes"),
        ("reports/collection/eval-results.json", "fixtures/locomo-sample/locomo-sample.json"),
    ],
    ids=["seed", "locomo"],
)
def test_statistics_record_round_trips_the_committed_artifact(committed: str, collection: str) -> None:
    """Statistics.to_dict() is the committed artifact's `statistics`, to the byte; from_dict reads it back to an equal record."""
    from agentmemory.analysis.statistics import Statistics, evaluation_statistics
    from agentmemory.datasets import load
    from agentmemory.evaluation.runner import evaluate

    saved = json.loads((REPO_ROOT / committed).read_text(encoding="utf-8"))
    params = saved["params"]
    evaluation = evaluate(
        load(REPO_ROOT / collection),
        [r["name"] for r in params["retrievers"]],
        k=params["k"],
        seed=params["seed"],
    )
    record = evaluation_statistics(evaluation, seed=params["seed"])
    assert isinstance(record, Statistics)
    assert record.to_dict() == saved["statistics"]
    dumped = json.dumps(record.to_dict(), indent=2, ensure_ascii=False)
    assert dumped == json.dumps(saved["statistics"], indent=2, ensure_ascii=False)
    assert Statistics.from_dict(saved["statistics"]) == record
    assert Statistics.from_dict(saved["statistics"]).to_dict() == saved["statistics"]
