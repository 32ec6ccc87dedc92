"""``agentmemory eval --qrels-patch FILE --claims FILE``: both tables and the claims printed, the same artifact as the
library, and one line with exit status 2 (nothing written) for a bad patch or claim."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.evaluation.options import EvalOptions

SAMPLE = "fixtures/locomo-sample/locomo-sample.json"
PATCH = "fixtures/locomo-sample/qrels-patch.jsonl"
CLAIMS = "fixtures/claims/claims.toml"
BASE = ["eval", "--collection", SAMPLE, "--retrievers", "bm25,dense,hybrid"]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch) -> None:
    monkeypatch.chdir(REPO_ROOT)


def test_both_tables_the_claims_and_the_librarys_artifact(tmp_path: Path, capsys) -> None:
    """The card, the comparison table, the original → patched table with the corrections, then the claims;
    the artifact is the library's evaluation of the patched collection with the claims, byte for byte."""
    out = tmp_path / "eval-results.json"
    assert main([*BASE, "--qrels-patch", PATCH, "--claims", CLAIMS, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    order = [
        "Definitions (what every number below is):",
        "- Judgments: patched: 3 judgments changed (1 removed, 1 regraded, 1 added) on 2 queries by qrels-patch.jsonl",
        "agentmemory LoCoMo sample, turns, trec_eval P/R/RR/nDCG/AP/Success + LongMemEval recall_any/sess.recall_any, "
        "patched judgments, 6 of 17 questions. Systems against the baseline BM25",
        "Headline means under the original judgments → under the patched ones",
        "Corrections in `qrels-patch.jsonl`",
        "Claims from `claims.toml`",
        "- line 33: bm25: R@5 = 0.8 on agentmemory LoCoMo sample, turn granularity, 6 questions;",
        "Collection locomo-sample: 33 entries, 8 judged queries; k = 5, seed = 7",
    ]
    positions = [printed.index(piece) for piece in order]
    assert positions == sorted(positions)
    assert "**" not in printed
    collection = load(SAMPLE)
    patched = read_judgment_patch(PATCH, collection).apply(collection)
    library = evaluate(patched, "bm25,dense,hybrid", options=EvalOptions(claims=CLAIMS))
    assert out.read_bytes() == dumps_artifact(library).encode("utf-8")
    assert str(REPO_ROOT) not in out.read_text(encoding="utf-8")


def test_claims_alone_add_their_measures_and_keep_the_judgments(tmp_path: Path, capsys) -> None:
    """Without a patch there is no original table; the claims' measures are columns of the comparison table."""
    out = tmp_path / "e.json"
    assert main([*BASE, "--claims", CLAIMS, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Headline means under the original judgments" not in printed
    assert "| sess.recall_any@5 |" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert "judgment_patch" not in data and data["card"]["judgments"] == "the collection's own"
    assert data["params"]["measures"][-4:] == ["recall_any@5", "recall_any@10", "sess.recall_any@5", "Success@5"]


def _bad(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("flag", "name", "text", "message"),
    [
        (
            "--qrels-patch",
            "fix.jsonl",
            '{"query_id": "conv-2/q2", "entry_id": "conv-2/D2:4", "grade": 1, "reason": "a"}\n'
            '{"query_id": "conv-2/q2", "entry_id": "conv-2/D2:4", "grade": 0, "reason": "b"}\n',
            "fix.jsonl:2: corrects query 'conv-2/q2' and entry 'conv-2/D2:4' again (first on line 1); give each "
            "pair once",
        ),
        (
            "--qrels-patch",
            "fix.jsonl",
            '{"query_id": "conv-7/q1", "entry_id": "conv-2/D2:4", "grade": 1, "reason": "a"}\n',
            "fix.jsonl:1: query 'conv-7/q1' is not a query of the collection 'locomo-sample'",
        ),
        (
            "--qrels-patch",
            "fix.jsonl",
            '{"query_id": "conv-2/q2", "entry_id": "conv-2/D7:1", "grade": 1, "reason": "a"}\n',
            "fix.jsonl:1: entry 'conv-2/D7:1' is not an entry of the collection 'locomo-sample'",
        ),
        (
            "--claims",
            "c.toml",
            '\n[[claim]]\nsystem = "bm25"\ncollection = "x"\nmeasure = "R@512"\ngranularity = "turn"\nvalue = 1\n'
            'citation = "illustrative"\n',
            "c.toml:2: claim: measure 'R@512' carries a cutoff; write the name alone and the cutoff as k or budget",
        ),
        (
            "--claims",
            "c.toml",
            '[[claim]]\nsystem = "bm25"\ncollection = "x"\nmeasure = "recall_some"\nk = 5\ngranularity = "turn"\n'
            'value = 1\ncitation = "illustrative"\n',
            "c.toml:1: claim: measure 'recall_some@5' is not a measure we have: is not a known name; choose from: AP, ",
        ),
    ],
)
def test_a_bad_patch_or_claim_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys, flag: str, name: str, text: str, message: str
) -> None:
    """Exit 2, one line on stderr naming the file and line, no traceback, and neither --out nor --table-out written."""
    path = _bad(tmp_path, name, text)
    out, table = tmp_path / "e.json", tmp_path / "t.md"
    assert main([*BASE, flag, str(path), "--out", str(out), "--table-out", str(table)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"agentmemory: error: {path.parent}/{message}")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert not out.exists() and not table.exists()


def test_an_output_may_not_overwrite_the_patch_or_the_claims(tmp_path: Path, capsys) -> None:
    """--out naming the patch file (or the claims file) is refused before anything runs; the input is unchanged."""
    for flag, source in (("--qrels-patch", PATCH), ("--claims", CLAIMS)):
        copy = tmp_path / Path(source).name
        shutil.copyfile(REPO_ROOT / source, copy)
        before = copy.read_bytes()
        assert main([*BASE, flag, str(copy), "--out", str(copy)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("agentmemory: error: --out: ") and "input" in err
        assert copy.read_bytes() == before


def test_the_printed_table_and_the_table_file_carry_the_published_rows(tmp_path: Path, capsys) -> None:
    """The printed comparison table ends with the claims' published rows and their notes; --table-label renames a
    system in the --table-out file only."""
    table = tmp_path / "t.md"
    argv = [*BASE, "--claims", CLAIMS, "--table-metrics", "R@5,recall_any@10", "--table-out", str(table)]
    assert main([*argv, "--table-label", "hybrid=Hybrid", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| hebb-mind (published, note 1) |  | 0.9575 |" in printed
    assert "\n1. hebb-mind (hebb-mind, prod-mirror + rerank" in printed
    assert "| Hybrid RRF (BM25 + Dense (wordllama)) | " in printed
    written = table.read_text(encoding="utf-8")
    assert "\n| Hybrid | " in written and "Hybrid RRF (BM25" not in written
    assert "| bm25 (illustrative, note 2) | 0.800 |  |" in written


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("hybrid", "--table-label: 'hybrid' (str) is not SYSTEM=LABEL; give e.g. --table-label hybrid=Hybrid"),
        (
            "mem0=Mem0",
            "--table-label: 'mem0' (str) names no evaluated system; choose a key or label from: bm25, BM25, dense, ",
        ),
    ],
)
def test_a_bad_table_label_is_one_line(tmp_path: Path, capsys, value: str, message: str) -> None:
    """--table-label that is not SYSTEM=LABEL, or names no system, is refused before anything runs."""
    table = tmp_path / "t.tex"
    assert main([*BASE, "--table-out", str(table), "--table-label", value]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agentmemory: error: {message}") and err.count("\n") == 1
    assert not table.exists()
