"""The notebook's eval-results.json is the bytes ``agentmemory eval`` writes for the same parameters."""

from __future__ import annotations

import contextlib
import hashlib
import io

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load_collection
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.cli.app import main as cli_main
from agentmemory.report.results import artifact_summary, cli_command, write_results

GARDEN = REPO_ROOT / "tests" / "data" / "garden-notes"


def _cli(tmp_path, *args):
    out = tmp_path / "cli" / "eval-results.json"
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_main(["eval", *args, "--out", str(out), "--no-progress"]) == 0
    return out.read_bytes()


@pytest.mark.parametrize(
    "collection, k, seed, retrievers",
    [(None, 5, 7, "bm25,tags"), (GARDEN, 3, 11, "bm25,tags"), (GARDEN, 2, 7, "tags")],
)
def test_write_results_is_byte_identical_to_the_cli(tmp_path, collection, k, seed, retrievers):
    """write_results and agentmemory eval write the same bytes for the same collection, k, seed, retrievers."""
    from agentmemory.collection import default_collection_path

    loaded = load_collection(collection or default_collection_path())
    evaluation = evaluate(loaded, retrievers, k=k, seed=seed)
    shown = write_results(evaluation, tmp_path / "nb")
    assert shown.text == f"Wrote `{(tmp_path / 'nb' / 'eval-results.json').as_posix()}`."
    args = ["--seed", str(seed), "--k", str(k), "--retrievers", retrievers]
    if collection:
        args += ["--collection", str(collection)]
    assert (tmp_path / "nb" / "eval-results.json").read_bytes() == _cli(tmp_path, *args)


def test_summary_states_size_and_sha256(seed_evaluation):
    """The summary's size and sha256 are those of dumps_artifact, and it names the equivalent command."""
    data = dumps_artifact(seed_evaluation).encode()
    text = artifact_summary(seed_evaluation, "the shipped fixture").text
    assert f"{len(data)} bytes, sha256 `{hashlib.sha256(data).hexdigest()}`" in text
    assert "`agentmemory eval --seed 7 --k 5 --retrievers bm25,tags --out reports/eval-results.json`" in text


def test_cli_command_names_a_collection_given_by_path(seed_evaluation):
    assert cli_command(seed_evaluation, "tests/data/x", out="o.json") == (
        "agentmemory eval --collection tests/data/x --seed 7 --k 5 --retrievers bm25,tags --out o.json"
    )


def test_no_output_dir_writes_nothing(seed_evaluation, tmp_path, monkeypatch):
    """With output_dir empty the notebook writes nothing and says so."""
    monkeypatch.chdir(tmp_path)
    shown = write_results(seed_evaluation, None)
    assert shown.text.startswith("`eval-results.json` not written")
    assert list(tmp_path.iterdir()) == []


def test_committed_artifact_is_current():
    """reports/eval-results.json (from make report) equals what the library writes now for seed 7, k 5."""
    from agentmemory.collection import default_collection_path

    evaluation = evaluate(load_collection(default_collection_path()), k=5, seed=7)
    committed = (REPO_ROOT / "reports" / "eval-results.json").read_text(encoding="utf-8")
    assert committed == dumps_artifact(evaluation), "reports/ is stale: run make report"
