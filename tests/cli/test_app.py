"""The command line: the seed's table, TREC runs that re-score identically, and one clear line per bad input.

Most cases run ``agentmemory.cli.app.main`` in-process (fast, with capsys); a few
run real processes (``python -m agentmemory.eval``, ``python -m agentmemory``
and the ``agentmemory`` console script) to show exit status and stderr as a
user sees them.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from pathlib import Path

import pytest
import pytrec_eval
from conftest import FIXTURE_DIR, REPO_ROOT, replace_once

from agentmemory import __version__, evaluate, load_collection
from agentmemory.analysis.costs import cost_table
from agentmemory.cli.app import main
from agentmemory.metrics import ALIASES, REGISTRY
from agentmemory.retrievers import DEFAULT_RETRIEVERS, RETRIEVERS

BM25_ROW = "| BM25 | 0.90 | 0.28 | 1.00 |"
TAGS_ROW = "| Tag scorer | 1.00 | 0.32 | 1.00 |"
SEED_STDOUT = """\
Collection assistant-notes: 16 entries, 5 judged queries; k = 5, seed = 7

| Retriever | mean_recall@k | mean_precision@k | MRR |
|---|---|---|---|
| BM25 | 0.90 | 0.28 | 1.00 |
| Tag scorer | 1.00 | 0.32 | 1.00 |

Queries without judgments: none.
"""
K_RULE = "an integer >= 1 (an optional sign and ASCII digits)"
METRIC_CHOICES = ", ".join(sorted([*REGISTRY, *ALIASES]))
RETRIEVER_CHOICES = ", ".join(sorted(RETRIEVERS))


# -- eval: the seed's table -----------------------------------------------------------


CARD_HEAD = """\
Definitions (what every number below is):

agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 questions
"""
COMPARISON_STDOUT = """\
agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 questions. \
Systems against the baseline BM25, trec_eval's definitions: headline means over 5 queries at k = 5, each with its \
95% percentile-bootstrap interval:

| System | P@5 | R@5 | RR@5 | nDCG@5 | AP@5 |
|---|---|---|---|---|---|
| BM25 (baseline) | 0.280 [0.200, 0.360] | 0.900 [0.700, 1.000] | \
1.000 [1.000, 1.000] (all equal) | 0.891 [0.752, 0.984] | 0.833 [0.667, 0.967] |
| Tag scorer | 0.320 [0.240, 0.400] +1/−0 | 1.000 [1.000, 1.000] (all equal) +1/−0 | \
1.000 [1.000, 1.000] (all equal) +0/−0 | \
1.000 [1.000, 1.000] (all equal) +3/−0 | 1.000 [1.000, 1.000] (all equal) +3/−0 |

▲/▼: significantly higher/lower than BM25 at α = 0.05 (two-sided paired permutation test, Holm's correction over \
the 5 comparisons of this table); +a/−b: the headline queries on which the system scores above/below BM25. With 5 \
queries the smallest attainable p-value is 0.0625, so no marker can appear, whatever the systems do. RR is RR@5 \
here (each ranking is cut at k = 5), the same measure under two names: shown once and counted once.
"""


@functools.cache
def _costs() -> str:
    """The cost table `agentmemory eval --seed 7 --k 5` prints under the comparison table (its numbers are
    agentmemory.analysis.costs' to test)."""
    return cost_table(evaluate(load_collection(FIXTURE_DIR), k=5, seed=7)).render()


def _assert_seed_stdout(stdout: str, last_line: str) -> None:
    """The output opens with the definitions card, then the comparison table, then exactly the seed's block, and
    ends with `last_line`.

    What is printed in between (the card's body, groups, comparisons) belongs to other modules' tests.
    """
    assert stdout.startswith(CARD_HEAD)
    card, _, rest = stdout.partition("\n\n" + COMPARISON_STDOUT)
    assert "| Measure | Family | Better | Definition |" in card
    assert rest.startswith("\n" + _costs() + "\n\n" + SEED_STDOUT + "\n")
    assert stdout.endswith("\n" + last_line + "\n")
    assert stdout.count(last_line) == 1


def test_eval_prints_the_seed_table_and_writes_the_artifact(tmp_path: Path, capsys) -> None:
    """`agentmemory eval --seed 7 --k 5` prints exactly the seed's table and says where it wrote the artifact."""
    out = tmp_path / "eval-results.json"
    assert main(["eval", "--seed", "7", "--k", "5", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    _assert_seed_stdout(captured.out, f"Wrote {out}")
    assert captured.err == ""
    assert json.loads(out.read_text())["params"]["k"] == 5


def test_python_m_agentmemory_eval_prints_the_seed_table(eval_runs) -> None:
    """`python -m agentmemory.eval --seed 7 --k 5` (real processes, three working directories) prints the seed's rows."""
    for proc, out in eval_runs:
        assert (proc.returncode, proc.stderr) == (0, "")
        lines = proc.stdout.splitlines()
        assert BM25_ROW in lines
        assert TAGS_ROW in lines
        _assert_seed_stdout(proc.stdout, f"Wrote {out} and TREC runs in {out.parent / 'runs'}")


@pytest.mark.parametrize("launcher", ["python -m agentmemory", "console script"])
def test_other_launchers_print_the_same(tmp_path: Path, python_run, console_script: Path, launcher: str) -> None:
    """`python -m agentmemory eval` and the `agentmemory` console script print what `python -m agentmemory.eval` prints."""
    args = ["eval", "--seed", "7", "--k", "5", "--out", "results.json"]
    if launcher == "console script":
        proc = python_run(args, cwd=tmp_path, executable=str(console_script))
    else:
        proc = python_run(["-m", "agentmemory", *args], cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    _assert_seed_stdout(proc.stdout, "Wrote results.json")
    assert (tmp_path / "results.json").is_file()


SEED_COMPARISONS = """\
Paired differences over 5 headline queries: mean difference [95% bootstrap interval], p of the one pair; * \
significant at 0.05.

| Pair (first − second) | P@5 | R@5 | RR@5 | nDCG@5 | AP@5 |
|---|---|---|---|---|---|
| BM25 − Tag scorer | −0.04 [−0.12, 0.00] p\u00a01.00 | −0.10 [−0.30, 0.00] p\u00a01.00 | 0.00 all equal \
p\u00a01.00 | −0.11 [−0.25, −0.02] p\u00a00.25 | −0.17 [−0.33, −0.03] p\u00a00.25 |

5 paired comparisons (1 pair of systems x 5 measures) over 5 headline queries, each a two-sided paired permutation \
test (one pair, no correction). With 5 queries no p-value can fall below 0.0625, so none of them can be significant \
at 0.05, whatever the systems do: the matrix describes these queries, nothing more. The largest difference is \
BM25 − Tag scorer on AP@5, −0.17 (interval [−0.33, −0.03]). The measures are read on the same \
queries and move together, so several significant measures of one pair are one finding, not several; a difference \
that is not significant is not evidence that there is none.
"""


def test_eval_prints_each_comparison_once_with_its_caveat_said_once(tmp_path: Path, capsys) -> None:
    """Under the seed's block comes the paired-comparison matrix (every pair on the comparison table's measures, as
    the reports show it), then a few sentences; what 5 queries can show is said once under it, not per cell."""
    assert main(["eval", "--seed", "7", "--k", "5", "--out", str(tmp_path / "e.json")]) == 0
    stdout = capsys.readouterr().out
    assert (COMPARISON_STDOUT + "\n" + _costs() + "\n\n" + SEED_STDOUT + "\n" + SEED_COMPARISONS) in stdout
    assert stdout.count("smallest attainable") == 1  # under the comparison table
    assert stdout.count("no p-value can fall below 0.0625") == 1  # under the matrix


def test_version(capsys) -> None:
    """`agentmemory --version` prints the package version."""
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"agentmemory {__version__}\n"


def test_eval_from_another_working_directory(tmp_path: Path, monkeypatch, capsys) -> None:
    """The default collection is found from any working directory; a relative --out is relative to it."""
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--out", "r/e.json"]) == 0
    _assert_seed_stdout(capsys.readouterr().out, "Wrote r/e.json")
    assert (tmp_path / "r" / "e.json").is_file()


def test_eval_reports_unjudged_queries_under_the_table(notes_copy: Path, tmp_path: Path, capsys) -> None:
    """A query without judgments is named under the printed table and left out of the means."""
    with (notes_copy / "queries.jsonl").open("a") as f:
        f.write('{"_id": "q6", "text": "Which editor?"}\n{"_id": "q7", "text": "Which bike?"}\n')
    assert main(["eval", "--collection", str(notes_copy), "--out", str(tmp_path / "e.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Collection notes: 16 entries, 5 judged queries; k = 5, seed = 7" in lines
    assert BM25_ROW in lines and TAGS_ROW in lines
    assert "Queries without judgments, left out of the means (2): q6, q7." in lines
    assert json.loads((tmp_path / "e.json").read_text())["unjudged_queries"] == ["q6", "q7"]


# -- --runs-dir and score -------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs_dir(eval_runs) -> Path:
    """The runs folder written by the first `python -m agentmemory.eval --runs-dir` run."""
    proc, out = eval_runs[0]
    assert proc.returncode == 0
    return out.parent / "runs"


@pytest.fixture(scope="module")
def artifact(eval_runs) -> dict:
    return json.loads(eval_runs[0][1].read_text(encoding="utf-8"))


def test_runs_dir_holds_runs_and_qrels(runs_dir: Path) -> None:
    """--runs-dir writes one TREC run per retriever plus the qrels, nothing else."""
    assert sorted(p.name for p in runs_dir.iterdir()) == ["bm25.trec", "qrels.txt", "tags.trec"]
    assert (runs_dir / "qrels.txt").read_text().splitlines()[:2] == ["q1 0 m01 1", "q1 0 m10 1"]
    assert (runs_dir / "tags.trec").read_text().splitlines()[:2] == ["q1 Q0 m10 1 2.0 tags", "q1 Q0 m01 2 2.0 tags"]
    assert len((runs_dir / "bm25.trec").read_text().splitlines()) == 25


@pytest.mark.parametrize(("run", "row"), [("bm25.trec", 0), ("tags.trec", 1)])
def test_score_of_exported_runs_equals_the_artifact(runs_dir: Path, artifact: dict, capsys, run: str, row: int) -> None:
    """`agentmemory score qrels.txt <run> --k 5 --output-format json` gives exactly the artifact's means,
    as {"mean", "per_query", "queries"} with each query's values equal to the artifact's."""
    assert main(["score", str(runs_dir / "qrels.txt"), str(runs_dir / run), "--k", "5", "--output-format", "json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    aggregate = artifact["aggregate"][row]
    assert scored["queries"] == 5
    assert list(scored) == ["mean", "per_query", "queries"]
    name = ("bm25", "tags")[row]
    per_query = {q["query_id"]: q["metrics"] for q in artifact["per_query"] if q["retriever"] == name}
    assert scored["per_query"] == per_query
    assert scored["mean"] == {m: aggregate[m] for m in ("P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5")}
    assert (scored["mean"]["R@5"], scored["mean"]["P@5"], scored["mean"]["RR"]) == (
        aggregate["mean_recall@k"],
        aggregate["mean_precision@k"],
        aggregate["MRR"],
    )


def _read_trec(path: Path, fields: int) -> list[list[str]]:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    assert all(len(r) == fields for r in rows)
    return rows


@pytest.mark.parametrize(("run", "row"), [("bm25.trec", 0), ("tags.trec", 1)])
def test_exported_runs_score_the_same_in_pytrec_eval(runs_dir: Path, artifact: dict, run: str, row: int) -> None:
    """trec_eval (through pytrec_eval) scores the exported files as the artifact reports, to 1e-12."""
    qrels: dict[str, dict[str, int]] = {}
    for qid, _, doc, rel in _read_trec(runs_dir / "qrels.txt", 4):
        qrels.setdefault(qid, {})[doc] = int(rel)
    scores: dict[str, dict[str, float]] = {}
    for qid, _, doc, _, score, _ in _read_trec(runs_dir / run, 6):
        scores.setdefault(qid, {})[doc] = float(score)
    names = {"P_5": "P@5", "recall_5": "R@5", "recip_rank": "RR", "ndcg_cut_5": "nDCG@5", "map_cut_5": "AP@5"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(scores)
    assert sorted(per_query) == ["q1", "q2", "q3", "q4", "q5"]
    for trec_name, ours in names.items():
        trec_mean = sum(v[trec_name] for v in per_query.values()) / len(per_query)
        assert trec_mean == pytest.approx(artifact["aggregate"][row][ours], abs=1e-12), trec_name


def test_score_through_the_console_script(
    runs_dir: Path, artifact: dict, python_run, console_script: Path, tmp_path: Path
) -> None:
    """The console script's `score` prints the same JSON means in a real process."""
    proc = python_run(
        ["score", "qrels.txt", "bm25.trec", "--k", "5", "--output-format", "json"],
        cwd=runs_dir,
        executable=str(console_script),
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout)["mean"]["R@5"] == artifact["aggregate"][0]["mean_recall@k"]


# -- bad input to eval -------------------------------------------------------------------------


def _edit(file: str, old: str, new: str):
    def apply(root: Path) -> None:
        replace_once(root / file, old, new)

    return apply


def _write(file: str, text: str):
    def apply(root: Path) -> None:
        (root / file).write_text(text)

    return apply


def _delete(file: str):
    def apply(root: Path) -> None:
        (root / file).unlink()

    return apply


COLLECTION_ERRORS = [
    pytest.param(
        _edit("corpus.jsonl", '"_id": "m03", ', '"_id": "m03" '),
        "corpus.jsonl:3: malformed JSON (Expecting ',' delimiter at column 15); expected one JSON object per line",
        id="malformed-json-line",
    ),
    pytest.param(
        _edit("corpus.jsonl", '"_id": "m04", ', ""),
        "corpus.jsonl:4: missing _id; every line needs a string _id",
        id="missing-id",
    ),
    pytest.param(
        _edit("corpus.jsonl", '"_id": "m04"', '"_id": "m02"'),
        "corpus.jsonl:4: duplicate _id 'm02' (first on line 2); every entry _id must be unique",
        id="duplicate-entry-id",
    ),
    pytest.param(
        _edit("queries.jsonl", '"_id": "q3"', '"_id": "q1"'),
        "queries.jsonl:3: duplicate _id 'q1' (first on line 1); every query _id must be unique",
        id="duplicate-query-id",
    ),
    pytest.param(
        _edit("qrels/test.tsv", "q2\tm13\t1", "q2\tm99\t1"),
        "qrels/test.tsv:5: unknown entry 'm99' (not in corpus.jsonl); judge only entries of corpus.jsonl",
        id="qrels-unknown-entry",
    ),
    pytest.param(
        _edit("qrels/test.tsv", "q5\tm05\t1", "q9\tm05\t1"),
        "qrels/test.tsv:9: unknown query 'q9' (not in queries.jsonl); judge only queries of queries.jsonl",
        id="qrels-unknown-query",
    ),
    pytest.param(
        _write("corpus.jsonl", ""),
        "corpus.jsonl: the corpus has no entries; add at least one JSON line",
        id="empty-corpus",
    ),
    pytest.param(
        _delete("queries.jsonl"),
        "queries.jsonl: no such file",
        id="missing-file",
    ),
    pytest.param(
        _edit("corpus.jsonl", "2026-01-09T08:40:00Z", "2026-01-09T08:40:00"),
        "corpus.jsonl:2: created_at '2026-01-09T08:40:00' has no timezone; add one, e.g. 2026-03-01T09:30:00Z",
        id="created-at-without-timezone",
    ),
    pytest.param(
        _edit("corpus.jsonl", '"_id": "m16"', '"_id": "m 16"'),
        "corpus.jsonl:16: _id 'm 16' contains whitespace; an id must be a non-empty string without whitespace "
        "or control characters (ids are written to TREC files, whose fields whitespace separates)",
        id="id-a-trec-file-cannot-hold",
    ),
]


def _assert_failed(code: int, captured, expected_line: str, tmp_path: Path) -> None:
    assert code == 2
    assert captured.out == ""
    assert captured.err == f"agentmemory: error: {expected_line}\n"
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("breakage", "message"), COLLECTION_ERRORS)
def test_eval_bad_collection(notes_copy: Path, tmp_path: Path, capsys, breakage, message) -> None:
    """A bad collection file gives exit 2, one stderr line with file, line and fix, and no output file."""
    breakage(notes_copy)
    message = f"{notes_copy}/{message}"
    out = tmp_path / "out" / "eval-results.json"
    code = main(["eval", "--collection", str(notes_copy), "--out", str(out), "--runs-dir", str(tmp_path / "runs")])
    _assert_failed(code, capsys.readouterr(), message, tmp_path)


PARAMETER_ERRORS = [
    pytest.param(["--k", "abc"], f"--k: 'abc' (str) is not an integer; --k must be {K_RULE}", id="k-not-integer"),
    pytest.param(["--k", "2.5"], f"--k: '2.5' (str) is not an integer; --k must be {K_RULE}", id="k-float"),
    pytest.param(["--k", "0"], "--k: 0 (int) is less than 1; --k must be an integer >= 1", id="k-zero"),
    pytest.param(["--k", "-3"], "--k: -3 (int) is less than 1; --k must be an integer >= 1", id="k-negative"),
    pytest.param(
        ["--seed", "seven"],
        "--seed: 'seven' (str) is not an integer; --seed must be an integer >= 0 (an optional sign and ASCII digits)",
        id="seed",
    ),
    pytest.param(["--seed", "-1"], "--seed: -1 (int) is negative; --seed must be an integer >= 0", id="seed-negative"),
    pytest.param(
        ["--retrievers", "bm25,splade"],
        f"--retrievers: 'splade' (str) is not a known name; choose from: {RETRIEVER_CHOICES}",
        id="unknown-retriever",
    ),
    pytest.param(
        ["--retrievers", "BM25"],
        "--retrievers: 'BM25' (str) is the label tables show for bm25, not its name; write bm25",
        id="retriever-by-label",
    ),
    pytest.param(
        ["--retrievers", "bm25,Hybrid[of=bm25+tags]"],
        "--retrievers: 'Hybrid' (str) is hybrid in other letters (names are case-sensitive); write hybrid",
        id="retriever-in-other-letters",
    ),
    pytest.param(
        ["--retrievers", "bm25,,tags"],
        "--retrievers: 'bm25,,tags' (str) has an empty item; separate specs by single commas, e.g. 'bm25,bm25[k1=0.9]'",
        id="empty-retriever-name",
    ),
    pytest.param(
        ["--metrics", "P@5,XX@3"],
        f"metric: 'XX@3' (str) is not a known name; choose from: {METRIC_CHOICES}",
        id="unknown-metric",
    ),
    pytest.param(
        ["--metrics", "P"],
        "metric: 'P' (str) has no cutoff; P needs a cutoff k, an integer >= 1: write P@k, e.g. P@10, "
        "or a token budget: P@<T>tok, e.g. P@512tok",
        id="metric-without-cutoff",
    ),
    pytest.param(["--bogus"], "unrecognized arguments: --bogus (see 'agentmemory eval --help')", id="unknown-option"),
    pytest.param(
        ["--runs", "x=y"],
        "unrecognized arguments: --runs x=y; did you mean --run? (see 'agentmemory eval --help')",
        id="did-you-mean",
    ),
]


@pytest.mark.parametrize(("args", "message"), PARAMETER_ERRORS)
def test_eval_bad_parameter(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    """A bad parameter gives exit 2, one stderr line naming it, its value and what is allowed, and no output file."""
    out = tmp_path / "out" / "eval-results.json"
    code = main(["eval", "--out", str(out), "--runs-dir", str(tmp_path / "runs"), *args])
    _assert_failed(code, capsys.readouterr(), message, tmp_path)


def test_eval_missing_collection_folder(tmp_path: Path, capsys) -> None:
    """--collection naming no folder gives exit 2 and names the path."""
    code = main(["eval", "--collection", str(tmp_path / "nope"), "--out", str(tmp_path / "out" / "e.json")])
    _assert_failed(code, capsys.readouterr(), f"{tmp_path / 'nope'}: no such collection file or folder", tmp_path)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--out", ".", "--out: '.' (str) is a folder; pass a file path such as reports/eval-results.json"),
        (
            "--out",
            "afile/e.json",
            "--out: 'afile/e.json' (str) needs 'afile' to be a folder, but it is a file; choose a path inside a folder",
        ),
        ("--runs-dir", "afile", "--runs-dir: 'afile' (str) is a file; pass a folder path (it is created if missing)"),
        (
            "--runs-dir",
            "afile/runs",
            "--runs-dir: 'afile/runs' (str) needs 'afile' to be a folder, but it is a file; choose a path inside a folder",
        ),
    ],
)
def test_eval_unwritable_output_paths(
    tmp_path: Path, monkeypatch, capsys, option: str, value: str, message: str
) -> None:
    """Output paths that cannot be written are refused before anything is computed or written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("a file\n")
    args = {"--out": "e.json", "--runs-dir": None} | {option: value}
    argv = ["eval", "--out", args["--out"]] + (["--runs-dir", args["--runs-dir"]] if args["--runs-dir"] else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"agentmemory: error: {message}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert (tmp_path / "afile").read_text() == "a file\n"


# -- bad input to score ------------------------------------------------------------------------


@pytest.fixture
def score_files(runs_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the exported qrels and BM25 run, free to edit."""
    for name in ("qrels.txt", "bm25.trec"):
        shutil.copy(runs_dir / name, tmp_path / name)
    return tmp_path


SCORE_ERRORS = [
    pytest.param(
        "bm25.trec",
        "q1 Q0 m02 6\n",
        [],
        "bm25.trec:26: found 4 fields; expected 6 whitespace-separated fields: query_id Q0 doc_id rank score run_tag",
        id="run-malformed-line",
    ),
    pytest.param(
        "bm25.trec",
        "q1 Q0 m01 6 0.5 bm25\n",
        [],
        "bm25.trec:26: document 'm01' appears twice for query 'q1' (first on line 1); "
        "expected each document at most once per query",
        id="run-same-document-twice",
    ),
    pytest.param(
        "bm25.trec",
        "q1 Q0 m02 6 high bm25\n",
        [],
        "bm25.trec:26: score 'high' is not a number; expected a number such as 12.5, -3 or 1e-05 "
        "(ASCII digits with an optional sign, decimal point and exponent, or inf)",
        id="run-score-not-a-number",
    ),
    pytest.param(
        "qrels.txt",
        "q1 0 m02\n",
        [],
        "qrels.txt:9: found 3 fields; expected 4 whitespace-separated fields: query_id iteration doc_id relevance",
        id="qrels-malformed-line",
    ),
    pytest.param(None, None, ["--k", "0"], "--k: 0 (int) is less than 1; --k must be an integer >= 1", id="k-zero"),
    pytest.param(
        None, None, ["--k", "x"], f"--k: 'x' (str) is not an integer; --k must be {K_RULE}", id="k-not-integer"
    ),
    pytest.param(
        None,
        None,
        ["--metrics", "P@5,Recall@5,nDGC@5"],
        f"metric: 'nDGC@5' (str) is not a known name; choose from: {METRIC_CHOICES}",
        id="unknown-metric",
    ),
    pytest.param(
        None,
        None,
        ["--output-format", "xml"],
        "--output-format: 'xml' (str) is not a known name; choose from: json, table",
        id="unknown-format",
    ),
]


@pytest.mark.parametrize("old", [["--format", "json"], ["--format=table"]])
def test_score_refuses_format_naming_output_format(score_files: Path, capsys, old: list[str]) -> None:
    """`--format` is a collection format everywhere; score's old spelling of --output-format is refused in one line."""
    assert main(["score", str(score_files / "qrels.txt"), str(score_files / "bm25.trec"), *old]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "agentmemory: error: agentmemory score --format is now --output-format (--format names a collection format, "
        "in eval and retrieve); write --output-format json or table\n"
    )


@pytest.mark.parametrize(("file", "append", "args", "message"), SCORE_ERRORS)
def test_score_bad_input(score_files: Path, capsys, file, append, args, message: str) -> None:
    """A malformed run or qrels line, a document twice, or a bad parameter: exit 2 and one exact stderr line."""
    if file is not None:
        with (score_files / file).open("a") as f:
            f.write(append)
        message = f"{score_files}/{message}"
    code = main(["score", str(score_files / "qrels.txt"), str(score_files / "bm25.trec"), *args])
    captured = capsys.readouterr()
    assert (code, captured.out, captured.err) == (2, "", f"agentmemory: error: {message}\n")


@pytest.mark.parametrize("missing", ["qrels.txt", "bm25.trec"])
def test_score_missing_file(score_files: Path, capsys, missing: str) -> None:
    """A missing qrels or run file is named; exit 2."""
    (score_files / missing).unlink()
    code = main(["score", str(score_files / "qrels.txt"), str(score_files / "bm25.trec")])
    captured = capsys.readouterr()
    assert (code, captured.out, captured.err) == (2, "", f"agentmemory: error: {score_files / missing}: no such file\n")


def test_no_command(capsys) -> None:
    """Running with no subcommand names what is missing; exit 2."""
    assert main([]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: the following arguments are required: command (see 'agentmemory --help')\n"
    )


# -- the same, in real processes -----------------------------------------------------------------


def test_bad_collection_in_a_real_process(tmp_path: Path, python_run) -> None:
    """`python -m agentmemory.eval` on a malformed collection: exit 2, one stderr line, no traceback, no file."""
    root = tmp_path / "c"
    shutil.copytree(FIXTURE_DIR, root)
    replace_once(root / "qrels" / "test.tsv", "q4\tm12\t1", "q4\tm12\tyes")
    proc = python_run(["-m", "agentmemory.eval", "--collection", "c", "--out", "out/e.json"], cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "agentmemory: error: c/qrels/test.tsv:8: score 'yes' is not an integer; expected an integer grade "
        "such as 0, 1 or 2 (an optional sign and ASCII digits)\n"
    )
    assert not (tmp_path / "out").exists()


def test_bad_k_through_python_m_agentmemory(tmp_path: Path, python_run) -> None:
    """`python -m agentmemory eval --k 0`: exit 2 and one line, in a real process."""
    proc = python_run(["-m", "agentmemory", "eval", "--k", "0", "--out", "e.json"], cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "agentmemory: error: --k: 0 (int) is less than 1; --k must be an integer >= 1\n"
    assert list(tmp_path.iterdir()) == []


def test_duplicate_document_through_the_console_script(
    tmp_path: Path, runs_dir: Path, python_run, console_script: Path
) -> None:
    """`agentmemory score` on a run with a document twice: exit 2 and one line, in a real process."""
    shutil.copy(runs_dir / "qrels.txt", tmp_path / "qrels.txt")
    (tmp_path / "run.trec").write_text("q1 Q0 m01 1 2.0 x\nq1 Q0 m01 2 1.0 x\n")
    proc = python_run(["score", "qrels.txt", "run.trec"], cwd=tmp_path, executable=str(console_script))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "agentmemory: error: run.trec:2: document 'm01' appears twice for query 'q1' (first on line 1); "
        "expected each document at most once per query\n"
    )


def test_repo_root_is_where_the_fixture_is() -> None:
    """The tests' idea of the repository root holds the fixture (guards every path above)."""
    assert (REPO_ROOT / "fixtures" / "assistant-notes" / "corpus.jsonl").is_file()
    assert re.search(r"assistant-notes$", str(FIXTURE_DIR))


@pytest.mark.parametrize("retriever", DEFAULT_RETRIEVERS)
def test_retrieve_writes_the_same_run_as_eval(runs_dir: Path, tmp_path: Path, capsys, retriever: str) -> None:
    """`agentmemory retrieve --k 5` writes, byte for byte, the run file `eval --runs-dir` wrote at k = 5.

    (The runs are eval's default retrievers; tests/evaluation/test_baselines.py checks dense, hybrid and recency the same way.)
    """
    out = tmp_path / f"{retriever}.trec"
    assert main(["retrieve", "--retriever", retriever, "--k", "5", "--out", str(out)]) == 0
    assert out.read_bytes() == (runs_dir / f"{retriever}.trec").read_bytes()
    assert capsys.readouterr().out.startswith(f"Wrote {out}: 5 queries, ")


def test_retrieve_searches_each_locomo_question_in_its_own_conversation(tmp_path: Path, capsys) -> None:
    """Every hit of a LoCoMo question comes from that question's own conversation."""
    out = tmp_path / "run.trec"
    sample = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
    assert main(["retrieve", "--collection", str(sample), "--repair", "--k", "3", "--out", str(out)]) == 0
    lines = [line.split() for line in out.read_text().splitlines()]
    assert lines
    assert all(qid.split("/")[0] == doc.split("/")[0] for qid, _, doc, *_ in lines)


@pytest.mark.parametrize(
    "argv,line",
    [
        (
            ["retrieve", "--out", "x.trec", "--retriever", "splade"],
            "agentmemory: error: --retriever: 'splade' (str) is not a known name; choose from: bm25, dense, hybrid, recency, tags",
        ),
        (
            ["retrieve", "--out", "x.trec", "--k", "0"],
            "agentmemory: error: --k: 0 (int) is less than 1; --k must be an integer >= 1",
        ),
    ],
)
def test_retrieve_rejects_bad_parameters(tmp_path: Path, monkeypatch, capsys, argv: list[str], line: str) -> None:
    """Bad retrieve parameters give exit 2, one stderr line, and no run file."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [line]
    assert not (tmp_path / "x.trec").exists()


# -- start-up: no entry-point scan unless help is shown -------------------------------------------


def test_format_help_lists_plugins_and_a_plain_command_reads_no_entry_points(tmp_path, monkeypatch, capsys):
    """--format's help names an installed plugin format; retrieve without --help never reads entry points."""
    import importlib.metadata

    from plugins import install

    (tmp_path / "site").mkdir()
    install(
        tmp_path / "site",
        monkeypatch,
        {"agentmemory.formats": {"zzplugfmt": "zz_plug_fmt:FORMAT"}},
        {"zz_plug_fmt": "FORMAT = None\n"},
    )
    with pytest.raises(SystemExit) as done:
        main(["retrieve", "--help"])
    assert done.value.code == 0
    assert "zzplugfmt" in capsys.readouterr().out.replace("\n", " ")

    def no_scan(*args, **kwargs):
        raise AssertionError("entry points read without --help")

    monkeypatch.setattr(importlib.metadata, "entry_points", no_scan)
    out = tmp_path / "run.trec"
    assert main(["retrieve", "--retriever", "bm25", "--k", "3", "--out", str(out), "--no-progress"]) == 0
    assert out.read_text().count("\n") > 0


def test_an_eval_resolves_its_retrievers_once(capsys) -> None:
    """`agentmemory eval` turns --retrievers into specs once; evaluate and the store keep the resolved specs."""
    from unittest import mock

    import agentmemory.cli.evaluate_cmd as evaluate_cmd
    import agentmemory.evaluation.runner as runner
    import agentmemory.store.core as core
    from agentmemory.retrievers import resolve_retrievers

    calls = []

    def counting(items, **named):
        calls.append(items)
        return resolve_retrievers(items, **named)

    with (
        mock.patch.object(evaluate_cmd, "resolve_retrievers", counting),
        mock.patch.object(runner, "resolve_retrievers", counting),
        mock.patch.object(core, "resolve_retrievers", counting),
    ):
        assert main(["eval", "--seed", "7", "--k", "5", "--no-progress"]) == 0
    assert calls == ["bm25,tags"]
    assert "| BM25 | 0.90 | 0.28 | 1.00 |" in capsys.readouterr().out


PLUGIN = """
from agentmemory import BM25


class Mine(BM25):
    name = "mine"
    label = "Mine"
"""


@pytest.mark.parametrize("launcher", ["console script", "python -m"])
def test_a_module_in_the_working_folder_is_a_plugin_for_both_launchers(
    tmp_path: Path, python_run, console_script: Path, launcher: str
) -> None:
    """`agentmemory eval --retrievers bm25,my_plugin:Mine` run in the folder holding my_plugin.py works from the
    console script as from `python -m agentmemory` (the working folder is importable in both)."""
    (tmp_path / "my_plugin.py").write_text(PLUGIN, encoding="utf-8")
    args = ["eval", "--retrievers", "bm25,my_plugin:Mine", "--no-progress"]
    if launcher == "console script":
        proc = python_run(args, cwd=tmp_path, executable=str(console_script))
    else:
        proc = python_run(["-m", "agentmemory", *args], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "| Mine | " in proc.stdout


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["eval", "--retriever", "bm25"],
            "unrecognized arguments: --retriever bm25; did you mean --retrievers? (see 'agentmemory eval --help')",
        ),
        (
            ["retrieve", "--out", "x", "--retrievers", "bm25"],
            "unrecognized arguments: --retrievers bm25; did you mean --retriever? (see 'agentmemory retrieve --help')",
        ),
        (
            ["score", "q", "--per-querry"],
            "unrecognized arguments: --per-querry; did you mean --per-query? (see 'agentmemory score --help')",
        ),
        (
            ["store", "stats", "s.db", "--output-formt", "json"],
            "unrecognized arguments: --output-formt json; did you mean --output-format? (see 'agentmemory store stats --help')",
        ),
        (["eval", "--zzz"], "unrecognized arguments: --zzz (see 'agentmemory eval --help')"),
    ],
)
def test_unknown_options_get_the_nearest_option_of_their_command(tmp_path: Path, capsys, argv, line) -> None:
    """An unknown option names the closest option of the command it was given to (none when nothing is close)."""
    assert main(argv) == 2
    assert capsys.readouterr().err == f"agentmemory: error: {line}\n"


def test_progress_covers_loading_and_statistics(tmp_path: Path, capsys, repo_root: Path) -> None:
    """--progress shows bars while loading a LoCoMo file (its conversations), during the queries and during the
    statistics (each group, then the headline); the artifact is the same bytes as without them."""
    sample = str(repo_root / "fixtures" / "locomo-sample" / "locomo-sample.json")
    with_bars, without = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["eval", "--collection", sample, "--progress", "--out", str(with_bars)]) == 0
    err = capsys.readouterr().err
    assert "load locomo-sample.json: 100%" in err and "2/2" in err
    assert "BM25: 100%" in err
    assert "statistics: 100%|██████████| 5/5" in err  # 4 query groups, then the headline
    assert main(["eval", "--collection", sample, "--no-progress", "--out", str(without)]) == 0
    assert capsys.readouterr().err == ""
    assert with_bars.read_bytes() == without.read_bytes()
