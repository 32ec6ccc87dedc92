"""The notebooks' definitions card, the original judgments and the claims beside the comparison, and their
parameters ``qrels_patch`` and ``claims``."""

from __future__ import annotations

import contextlib
import io
import shlex
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.cli.app import main as cli_main
from agentmemory.errors import ReportParameterError
from agentmemory.report import comparable, inputs, params
from agentmemory.report.display import Folded, Markdown, Table

PATCH = "fixtures/locomo-sample/qrels-patch.jsonl"
CLAIMS = "fixtures/claims/claims.toml"
COMMON = {"k": 5, "seed": 7, "output_dir": "", "format": "auto", "repair": False}


def _setup(**changes):
    return params.collection_setup(**{"collection": "", "retrievers": "bm25,dense,hybrid", **COMMON, **changes})


@pytest.fixture(scope="module")
def patched_setup():
    return _setup(qrels_patch=PATCH, claims=CLAIMS)


def test_the_parameters_patch_the_collection_and_carry_the_claims(patched_setup) -> None:
    """qrels_patch is applied to the loaded collection, claims are read into the options, both named as given."""
    assert patched_setup.collection.judgment_patch is not None
    assert patched_setup.options.claims is not None and patched_setup.options.claims.name == "claims.toml"
    assert dict(patched_setup.inputs) == {"qrels_patch": PATCH, "claims": CLAIMS}
    assert dict(_setup().inputs) == {} and _setup().collection.judgment_patch is None


def test_the_notebook_and_its_command_write_the_same_bytes(patched_setup, tmp_path: Path, monkeypatch) -> None:
    """The command the report prints (--qrels-patch, --claims) writes the notebook's artifact, byte for byte."""
    evaluation = patched_setup.evaluate()
    statistics = patched_setup.statistics(evaluation)
    command = inputs.collection_command(patched_setup, evaluation)
    assert f"--qrels-patch {PATCH} --claims {CLAIMS} --out eval-results.json" in command
    assert "--metrics" not in command  # the claims' measures come with --claims
    args = shlex.split(command)[2:-2] + ["--out", str(tmp_path / "cli.json"), "--no-progress"]
    monkeypatch.chdir(REPO_ROOT)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_main(["eval", *args]) == 0
    assert (tmp_path / "cli.json").read_bytes() == dumps_artifact(evaluation, statistics).encode("utf-8")


def test_the_card_and_what_stands_beside_the_comparison(patched_setup) -> None:
    """card() is the definitions card; beside() is the original → patched table, the corrections, the claims."""
    evaluation = patched_setup.evaluate()
    statistics = patched_setup.statistics(evaluation)
    shown = comparable.card(evaluation)
    assert isinstance(shown, Markdown) and shown.text.startswith("**agentmemory LoCoMo sample, turns, ")
    table, corrections, claims = comparable.beside(evaluation, statistics)
    assert isinstance(table, Table) and table.caption.startswith("Headline means under the original judgments")
    assert list(table.frame.columns)[:3] == ["System", "P@5", "R@5"] and len(table.frame) == 3
    assert corrections.text.startswith("Corrections in `qrels-patch.jsonl` (sha256 `")
    assert isinstance(claims, Folded)  # the claims are the table's published rows; each check in detail is folded
    assert claims.summary.startswith("Claims from claims.toml (sha256 ") and claims.summary.endswith(", in detail)")
    assert claims.text.startswith("- line ")
    plain = _setup()
    evaluation = plain.evaluate()
    assert comparable.beside(evaluation, plain.statistics(evaluation)) == ()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"qrels_patch": 5}, 'qrels_patch: 5 (int) is not a path; pass a file such as "fixes.jsonl", or ""'),
        ({"claims": ["a.toml"]}, "claims: ['a.toml'] (list) is not a path; pass a file such as \"claims.toml\""),
        ({"qrels_patch": "fixtures/claims/nope.jsonl"}, "fixtures/claims/nope.jsonl: no such file"),
        ({"claims": PATCH}, "qrels-patch.jsonl:1: is not TOML: "),
    ],
)
def test_bad_parameters_stop_with_the_librarys_line(changes, message) -> None:
    """A bad qrels_patch or claims parameter is one ReportParameterError with the library's message."""
    with pytest.raises(ReportParameterError) as info:
        _setup(**changes)
    assert message in str(info.value)


def test_a_patch_line_the_collection_refuses(tmp_path: Path) -> None:
    """The patch is checked against the loaded collection: its first bad line is the notebook's error."""
    bad = tmp_path / "fix.jsonl"
    bad.write_text('{"query_id": "conv-1/q0", "entry_id": "conv-1/D1:1", "grade": 1, "reason": "x"}\n', "utf-8")
    with pytest.raises(
        ReportParameterError,
        match=r"fix\.jsonl:1: sets query 'conv-1/q0' and entry 'conv-1/D1:1' to "
        r"grade 1, which the collection already gives it; drop the line$",
    ):
        _setup(qrels_patch=str(bad))


def test_eval_setup_takes_them_too(tmp_path: Path) -> None:
    """eval.ipynb's setup reads the same two parameters, and its command names them."""
    setup = params.eval_setup(
        seed=7,
        k=5,
        collection=str(REPO_ROOT / "fixtures/locomo-sample/locomo-sample.json"),
        retrievers="bm25",
        output_dir="",
        qrels_patch=PATCH,
        claims=CLAIMS,
    )
    evaluation = setup.evaluate()
    assert evaluation.original is not None
    assert setup.command(evaluation).endswith(
        f"--qrels-patch {PATCH} --claims {CLAIMS} --out reports/eval-results.json"
    )


def test_the_explore_and_sweep_cards() -> None:
    """The explore report's card states the data and no measure; the sweep's, its measures and synthetic data."""
    explore = params.explore_setup(collection="", query="vegetarian food", query_tags="", k=5, explain_entry="")
    text = comparable.explore_card(explore.collection).text
    assert text.startswith("**agentmemory assistant-notes fixture, entries, 5 of 5 questions**")
    assert text.endswith("- **Measures**: none: this report ranks one query of your own")
    sweep = params.sweep_setup(
        collection="",
        k_max=8,
        k=5,
        seeds="3",
        sizes="16",
        queries="5",
        mismatch_rate=0.2,
        retrievers="bm25",
        progress=False,
    )
    text = comparable.sweep_card(sweep).text
    assert text.startswith("**agentmemory assistant-notes fixture, entries, trec_eval R/P/nDCG/RR, 5 of 5 questions**")
    assert "- **k sweep**: R, P, nDCG at every k from 1 to 8" in text
    assert (
        "- **Seed sweep**: synthetic collections (agentmemory.datasets.synthetic, no file: no release), seeds 0..2"
        in text
    )
    assert "| R@8 | trec_eval | higher |" in text and "| RR | trec_eval | higher |" in text
