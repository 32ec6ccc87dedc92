"""`agentmemory eval --metrics R@512tok,nDCG@512tok,tokens@first,sess.recall_any@5` on the LoCoMo and LongMemEval
samples: the columns with intervals and markers, and every budget value equal to a hand computation from the
texts (counted with the tokenizers library directly) and the ranking."""

from __future__ import annotations

import json
import math
import re
from importlib.metadata import distribution
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from tokenizers import Tokenizer

from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.metrics.token_counters import LLAMA2_FILE

SAMPLES = {
    "locomo": REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json",
    "longmemeval": REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json",
}
METRICS = "R@512tok,nDCG@512tok,tokens@first,sess.recall_any@5"
CELL = r"\d+\.\d{3} \[\d+\.\d{3}, \d+\.\d{3}\]( \(all equal\))?"


def _eval(capsys, sample: str, out: Path, *extra: str) -> str:
    code = main(["eval", "--collection", str(SAMPLES[sample]), "--retrievers", "bm25,dense", "--out", str(out), *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_budget_columns_with_intervals_and_markers(capsys, tmp_path, sample):
    """The Done-when command prints the four columns, each cell a mean with its interval, the other system's with
    its marker and +a/−b counts; tokens@first is lower-is-better and counts its queries; the notation says what
    budget measures are and that they have no tie-aware value; the artifact names the tokenizer."""
    out = _eval(capsys, sample, tmp_path / "a.json", "--metrics", METRICS)
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| System |"))  # after the definitions card
    table = [lines[start], *lines[start + 2 : start + 4]]
    header, baseline, other = (line.strip("|").split(" | ") for line in table)
    columns = ["R@512tok", "nDCG@512tok", "tokens@first (lower is better)", "sess.recall_any@5"]
    assert [c.strip() for c in header[-4:]] == columns
    assert baseline[0].strip() == "BM25 (baseline)" and other[0].strip() == "Dense (wordllama)"
    for base_cell, other_cell, column in zip(baseline[-4:], other[-4:], columns):
        found = r" \(\d+ of \d+\)" if column.startswith("tokens") else ""
        assert re.fullmatch(CELL + found, base_cell.strip()), base_cell
        assert re.fullmatch(CELL + found + r"( [▲▼])? \+\d+/−\d+", other_cell.strip()), other_cell
    assert "agentmemory's context-budget definitions with the llama2 token counter (R@512tok, nDCG@512tok, " in out
    assert "R@512tok, nDCG@512tok, tokens@first have no tie-aware value" in out
    assert "For tokens@first lower is better: ▲ marks a significantly lower value" in out
    artifact = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert artifact["params"]["tokenizer"]["name"] == "llama2"
    assert artifact["params"]["measures"][-4:] == METRICS.split(",")


def _hand(ranking: list[str], relevant: dict[str, int], lengths: list[int], budget: int) -> dict[str, float | None]:
    """The budget measures written out: read while the running total stays within the budget, stop at the first
    hit that would cross it; recall, precision, success, nDCG with the whole ideal; tokens to the first relevant."""
    read, total = [], 0
    for doc, n in zip(ranking, lengths):
        if total + n > budget:
            break
        total += n
        read.append(doc)
    hits = [d for d in read if relevant.get(d, 0) >= 1]
    positive = sorted((g for g in relevant.values() if g > 0), reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(positive))
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(read) if relevant.get(d, 0) > 0)
    first, running = None, 0
    for doc, n in zip(ranking, lengths):
        running += n
        if relevant.get(doc, 0) >= 1:
            first = float(running)
            break
    return {
        f"R@{budget}tok": len(hits) / len(positive) if positive else 0.0,
        f"P@{budget}tok": len(hits) / len(read) if read else 0.0,
        f"Success@{budget}tok": 1.0 if hits else 0.0,
        f"nDCG@{budget}tok": dcg / idcg if read and idcg else 0.0,
        "tokens@first": first,
    }


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_budget_values_equal_a_hand_computation(capsys, tmp_path, sample):
    """Every query's budget values, at 512 tokens and at 64 (where hits cross the budget), equal the hand
    computation over the whole ranking (the artifact's hits at --k 40, deeper than any scope) with each text counted
    by the tokenizers library itself; the values do not depend on --k."""
    metrics = METRICS + ",P@512tok,Success@512tok,R@64tok,P@64tok,Success@64tok,nDCG@64tok"
    _eval(capsys, sample, tmp_path / "deep.json", "--metrics", metrics, "--k", "40")
    _eval(capsys, sample, tmp_path / "top5.json", "--metrics", metrics)
    deep = json.loads((tmp_path / "deep.json").read_text(encoding="utf-8"))
    top5 = json.loads((tmp_path / "top5.json").read_text(encoding="utf-8"))
    collection = load(SAMPLES[sample])
    tokenizer = Tokenizer.from_file(str(distribution("wordllama").locate_file(LLAMA2_FILE)))
    crossed = 0
    for row, shallow in zip(deep["per_query"], top5["per_query"], strict=True):
        ranking = [h["entry_id"] for h in row["hits"]]
        assert len(ranking) < 40  # the whole ranking
        lengths = [len(tokenizer.encode(collection.entry(e).text, add_special_tokens=False).ids) for e in ranking]
        relevant = dict(collection.qrels[row["query_id"]])
        crossed += sum(lengths) > 64
        for budget in (512, 64):
            for name, value in _hand(ranking, relevant, lengths, budget).items():
                assert row["metrics"][name] == pytest.approx(value, abs=1e-12), (row["query_id"], name)
                assert shallow["metrics"][name] == row["metrics"][name], (row["query_id"], name)
    assert crossed > 0  # the 64-token budget is crossed on some queries: the rule is exercised
