"""`agentmemory eval --runs-dir`: each ranking written as deep as its measures read, so the runs re-score to the
same values (`eval --run`, and `score` for what it can compute); `--run-depth N` and its refusals."""

from __future__ import annotations

import json
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
    "locomo": (REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json", ()),
    "locomo-sessions": (REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json", ("--granularity", "session")),
    "longmemeval": (
        REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json",
        ("--granularity", "turn"),
    ),
}
RETRIEVERS = ("bm25", "dense", "hybrid")
METRICS = (
    "sess.recall_any@5,sess.recall_all@5,sess.ndcg_any@5,R@512tok,nDCG@512tok,P@64tok,Success@64tok,R@64tok,"
    "tokens@first,R@10"
)


def _eval(sample: str, *args: str, metrics: str = METRICS) -> None:
    path, options = SAMPLES[sample]
    code = main(["eval", "--collection", str(path), *options, "--metrics", metrics, "--no-progress", *args])
    assert code == 0


def _per_query(artifact: Path) -> dict[tuple[str, str], dict[str, float | None]]:
    data = json.loads(artifact.read_text(encoding="utf-8"))
    return {(row["retriever"], row["query_id"]): row["metrics"] for row in data["per_query"]}


def _rankings(run: Path) -> dict[str, list[str]]:
    """A run file's entry ids per query, in the file's order (format_run writes trec_eval's order)."""
    out: dict[str, list[str]] = {}
    for line in run.read_text(encoding="utf-8").splitlines():
        qid, _, doc, _, _, _ = line.split()
        out.setdefault(qid, []).append(doc)
    return out


def _rescored(sample: str, runs: Path, out: Path, names=RETRIEVERS) -> dict[tuple[str, str], dict[str, float | None]]:
    args = [arg for name in names for arg in ("--run", f"{name}={runs / (name + '.trec')}")]
    _eval(sample, "--retrievers", "", *args, "--out", str(out))
    return _per_query(out)


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def exported(request, tmp_path_factory) -> tuple[str, Path, Path]:
    """``(sample, runs folder, artifact)`` of bm25, dense and hybrid with every whole-ranking measure."""
    folder = tmp_path_factory.mktemp(request.param)
    _eval(
        request.param,
        "--retrievers",
        ",".join(RETRIEVERS),
        "--runs-dir",
        str(folder / "runs"),
        "--out",
        str(folder / "a.json"),
    )
    return request.param, folder / "runs", folder / "a.json"


def test_exported_runs_re_score_to_every_value(exported, tmp_path):
    """`eval --run` of the exported runs gives every per-query value of every measure again, bit for bit; cut to the
    top k (what --runs-dir wrote before) they would not: the deeper rankings are what makes them reproducible.  (At
    session granularity the sample's conversations have fewer than 5 sessions: every ranking ends above k.)"""
    sample, runs, artifact = exported
    original = _per_query(artifact)
    again = _rescored(sample, runs, tmp_path / "again.json")
    assert again.keys() == original.keys()
    for key, values in original.items():
        assert again[key] == values, key
    top = tmp_path / "top"
    top.mkdir()
    for name in RETRIEVERS:
        lines = (runs / f"{name}.trec").read_text(encoding="utf-8").splitlines(keepends=True)
        (top / f"{name}.trec").write_text(
            "".join(line for line in lines if int(line.split()[3]) <= 5), encoding="utf-8"
        )
    cut = _rescored(sample, top, tmp_path / "cut.json")
    deeper = any(len(r) > 5 for name in RETRIEVERS for r in _rankings(runs / f"{name}.trec").values())
    assert deeper == (sample != "locomo-sessions")
    assert any(cut[key] != values for key, values in original.items()) == deeper


def _session(sample: str, entry_id: str) -> str:
    """The entry-to-session mapping, by hand: LoCoMo's D<s>:<t> -> S<s>, LongMemEval's last '_' part dropped."""
    if sample.startswith("locomo"):
        return re.sub(r"/D(\d+):\d+$", r"/S\1", entry_id)
    return entry_id.rpartition("_")[0]


def _crossing(lengths: list[int], budget: int) -> int:
    """The rank of the hit whose tokens cross the budget, or the ranking's length when none does."""
    total = 0
    for rank, n in enumerate(lengths, start=1):
        total += n
        if total > budget:
            return rank
    return len(lengths)


def test_each_ranking_is_as_deep_as_its_deepest_measure_reads(exported, tmp_path):
    """Per query, the exported ranking's length is by hand the deepest of: the top k = 5, R@10's top 10, the first
    depth spanning 5 sessions (sess.*), the hit crossing 512 and 64 tokens (counted with the tokenizers library
    itself), and the first relevant hit (tokens@first); each at most the whole ranking, which --run-depth 1000 writes."""
    sample, runs, _ = exported
    whole_dir = tmp_path / "whole"
    _eval(sample, "--retrievers", ",".join(RETRIEVERS), "--runs-dir", str(whole_dir), "--run-depth", "1000")
    path, options = SAMPLES[sample]
    collection = load(path, **({"granularity": options[1]} if options else {}))
    tokenizer = Tokenizer.from_file(str(distribution("wordllama").locate_file(LLAMA2_FILE)))
    deeper_than_k = 0
    for name in RETRIEVERS:
        written = _rankings(runs / f"{name}.trec")
        for qid, ranking in _rankings(whole_dir / f"{name}.trec").items():
            assert written[qid] == ranking[: len(written[qid])]
            lengths = [len(tokenizer.encode(collection.entry(e).text, add_special_tokens=False).ids) for e in ranking]
            sessions: set[str] = set()
            spans = len(ranking)
            for rank, doc in enumerate(ranking, start=1):
                sessions.add(_session(sample, doc))
                if len(sessions) >= 5:
                    spans = max(rank, 5)
                    break
            relevant = {doc for doc, grade in collection.qrels[qid].items() if grade >= 1}
            first = next((rank for rank, doc in enumerate(ranking, 1) if doc in relevant), len(ranking))
            depth = max(5, 10, spans, _crossing(lengths, 512), _crossing(lengths, 64), first)
            assert len(written[qid]) == min(depth, len(ranking)), (name, qid)
            deeper_than_k += len(written[qid]) > 10
    # the whole-ranking measures read below every rank cutoff somewhere (not by session: 4 sessions at most)
    assert (deeper_than_k > 0) == (sample != "locomo-sessions")


def test_score_reproduces_what_it_can_compute(tmp_path, capsys):
    """On the LongMemEval sample, `agentmemory score --complete` of the exported runs gives the artifact's means of
    the sess.* recalls (no scope or text needed) and of R@5 and RR@5; RR, read at k, would need RR@k on a deeper run."""
    runs, artifact = tmp_path / "runs", tmp_path / "a.json"
    _eval("longmemeval", "--retrievers", ",".join(RETRIEVERS), "--runs-dir", str(runs), "--out", str(artifact))
    capsys.readouterr()
    measures = "sess.recall_any@5,sess.recall_all@5,R@5,RR@5,P@5"
    aggregate = {row["retriever"]: row for row in json.loads(artifact.read_text(encoding="utf-8"))["aggregate"]}
    labels = {"bm25": "BM25", "dense": "Dense (wordllama)", "hybrid": "Hybrid RRF (BM25 + Dense (wordllama))"}
    for name in RETRIEVERS:
        code = main(
            ["score", str(runs / "qrels.txt"), str(runs / f"{name}.trec"), "--metrics", measures, "--complete"]
            + ["--output-format", "json"]
        )
        assert code == 0
        means = json.loads(capsys.readouterr().out)["mean"]
        for measure in measures.split(","):
            assert means[measure] == aggregate[labels[name]][measure], (name, measure)


def test_the_runs_go_below_k_and_the_output_says_so(tmp_path, capsys):
    """The command says the runs hold each ranking as deep as its measures read, and how deep; with only the
    default measures it says nothing more and writes the top k (the committed reports' runs do not change)."""
    _eval("longmemeval", "--retrievers", "bm25", "--runs-dir", str(tmp_path / "deep"))
    out = capsys.readouterr().out
    deepest = max(len(r) for r in _rankings(tmp_path / "deep" / "bm25.trec").values())
    assert deepest > 10
    assert (
        f"The runs hold each ranking as deep as its measures read on it (up to {deepest} hits, below the top 5), "
        "so they re-score to the same values." in out.splitlines()
    )
    path, options = SAMPLES["longmemeval"]
    assert (
        main(["eval", "--collection", str(path), *options, "--retrievers", "bm25", "--runs-dir", str(tmp_path / "top")])
        == 0
    )
    out = capsys.readouterr().out
    assert "The runs hold" not in out
    assert max(len(r) for r in _rankings(tmp_path / "top" / "bm25.trec").values()) == 5


def test_run_depth_writes_each_rankings_top_n(tmp_path, capsys):
    """--run-depth 12 writes each ranking's top 12 (the whole ranking when shorter), deeper than R@10 needs; a
    shallow --run-depth 6 (without R@10) writes the top 6 and names, in one line, the rankings cut above what a
    measure read: exactly those whose default export is deeper than 6."""
    default, deep, shallow = tmp_path / "default", tmp_path / "deep", tmp_path / "shallow"
    metrics = METRICS.removesuffix(",R@10")
    _eval("longmemeval", "--retrievers", "bm25,hybrid", "--runs-dir", str(default), "--run-depth", "1000")
    _eval("longmemeval", "--retrievers", "bm25,hybrid", "--runs-dir", str(deep), "--run-depth", "12")
    capsys.readouterr()
    for name in ("bm25", "hybrid"):
        whole = _rankings(default / f"{name}.trec")
        assert _rankings(deep / f"{name}.trec") == {q: r[:12] for q, r in whole.items()}
    measured = tmp_path / "measured"
    _eval("longmemeval", "--retrievers", "bm25,hybrid", "--runs-dir", str(measured), metrics=metrics)
    _eval("longmemeval", "--retrievers", "bm25,hybrid", "--runs-dir", str(shallow), "--run-depth", "6", metrics=metrics)
    out = capsys.readouterr().out.splitlines()
    cut = {name: sum(len(r) > 6 for r in _rankings(measured / f"{name}.trec").values()) for name in ("bm25", "hybrid")}
    assert cut["bm25"] > 0 and cut["hybrid"] > 0
    [line] = [line for line in out if line.startswith("--run-depth 6 cut")]
    assert line.startswith(f"--run-depth 6 cut {cut['bm25'] + cut['hybrid']} of 14 rankings above what a measure read ")
    assert f"(bm25 {cut['bm25']}, hybrid {cut['hybrid']}; " in line
    assert line.endswith(
        "those values may not re-score from the runs (leave --run-depth out to write each ranking as deep as "
        "its measures read)"
    )
    assert "The runs hold each ranking's top 6 (--run-depth)." in out
    for name in ("bm25", "hybrid"):
        assert max(len(r) for r in _rankings(shallow / f"{name}.trec").values()) == 6


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--run-depth", "0"],
            "--run-depth: 0 (int) is less than 1; --run-depth must be an integer >= 1",
        ),
        (
            ["--run-depth", "abc"],
            "--run-depth: 'abc' (str) is not an integer; --run-depth must be an integer >= 1 (an optional sign and "
            "ASCII digits)",
        ),
        (
            ["--run-depth", "4"],
            "--run-depth: 4 (int) is shallower than the top 5 that the measures at --k 5 read, so the runs could not "
            "reproduce it; give 5 or more, or leave it out to write each ranking as deep as its measures read",
        ),
        (
            ["--run-depth", "9", "--metrics", "sess.recall_any@5,R@10"],
            "--run-depth: 9 (int) is shallower than the top 10 that R@10 reads, so the runs could not reproduce it; "
            "give 10 or more, or leave it out to write each ranking as deep as its measures read",
        ),
    ],
    ids=["zero", "not-a-number", "above-k", "above-a-cutoff"],
)
def test_bad_run_depth_is_one_line_and_nothing_is_written(tmp_path, capsys, args, message):
    """A --run-depth that is not an integer >= 1, or shallower than k or a rank cutoff: one line naming the flag,
    the value and what is allowed; exit 2; neither the runs folder nor the artifact is written."""
    path = SAMPLES["longmemeval"][0]
    out, runs = tmp_path / "a.json", tmp_path / "runs"
    code = main(
        ["eval", "--collection", str(path), "--retrievers", "bm25", "--runs-dir", str(runs), "--out", str(out), *args]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err == f"agentmemory: error: {message}\n"
    assert not out.exists() and not runs.exists()


def test_run_depth_without_runs_dir_is_refused(tmp_path, capsys):
    """--run-depth sets the depth of the runs --runs-dir writes: without it, one line and exit 2, nothing written."""
    out = tmp_path / "a.json"
    code = main(["eval", "--collection", str(SAMPLES["longmemeval"][0]), "--run-depth", "5", "--out", str(out)])
    assert code == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: --run-depth: '5' (str) is given without --runs-dir; it sets the depth of the runs "
        "--runs-dir writes\n"
    )
    assert not out.exists()


def test_a_memory_systems_run_holds_everything_it_returned(tmp_path, capsys):
    """A memory system asked for 513 memories (R@512tok) is written whole, its memories file naming exactly the
    run's memories, and both re-score to its values; --run-depth 5 writes its top 5 and only those memories."""
    path = SAMPLES["locomo"][0]
    spec, stem = "examples.my_memory_system:System", "examples.my_memory_system-System"
    metrics = "R@512tok,tokens@first"
    for folder, extra in (("whole", []), ("top", ["--run-depth", "5"])):
        runs = tmp_path / folder
        code = main(
            ["eval", "--collection", str(path), "--system", spec, "--retrievers", "", "--metrics", metrics]
            + ["--runs-dir", str(runs), "--out", str(tmp_path / f"{folder}.json"), *extra]
        )
        assert code == 0
        named = {doc for ranking in _rankings(runs / f"{stem}.trec").values() for doc in ranking}
        memories = [
            json.loads(line) for line in (runs / f"{stem}.memories.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        assert {m["_id"] for m in memories} == named
        depth = max(len(r) for r in _rankings(runs / f"{stem}.trec").values())
        assert depth > 5 if folder == "whole" else depth == 5
    capsys.readouterr()
    again = tmp_path / "again.json"
    code = main(
        ["eval", "--collection", str(path), "--retrievers", "", "--relevance", "provenance", "--metrics", metrics]
        + ["--run", f"{spec}={tmp_path / 'whole' / (stem + '.trec')}"]
        + ["--memories", str(tmp_path / "whole" / f"{stem}.memories.jsonl"), "--out", str(again)]
    )
    assert code == 0
    assert _per_query(again) == _per_query(tmp_path / "whole.json")


def test_provenance_runs_re_score(tmp_path, capsys):
    """Under provenance (a run of derived memories with its memories file, beside bm25), the budget measures and
    tokens@first read through credits: the exported runs still re-score to every value."""
    path = SAMPLES["locomo"][0]
    derived = REPO_ROOT / "fixtures" / "locomo-derived"
    common = ["--relevance", "provenance", "--metrics", "R@64tok,nDCG@512tok,tokens@first", "--no-progress"]
    runs = tmp_path / "runs"
    code = main(
        ["eval", "--collection", str(path), "--retrievers", "bm25", "--run", f"derived={derived / 'derived.trec'}"]
        + [
            "--memories",
            str(derived / "memories.jsonl"),
            *common,
            "--runs-dir",
            str(runs),
            "--out",
            str(tmp_path / "a.json"),
        ]
    )
    assert code == 0
    assert max(len(r) for r in _rankings(runs / "bm25.trec").values()) > 5
    code = main(
        ["eval", "--collection", str(path), "--retrievers", "", "--run", f"bm25={runs / 'bm25.trec'}"]
        + ["--run", f"derived={runs / 'derived.trec'}", "--memories", str(derived / "memories.jsonl"), *common]
        + ["--out", str(tmp_path / "again.json")]
    )
    assert code == 0
    capsys.readouterr()
    assert _per_query(tmp_path / "again.json") == _per_query(tmp_path / "a.json")
