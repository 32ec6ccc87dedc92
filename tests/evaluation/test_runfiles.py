"""Run files as systems: reading, binding to a collection, scoring as trec_eval does, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import pytrec_eval

from agentmemory import evaluate, load
from agentmemory.cli.app import main
from agentmemory.errors import InputError
from agentmemory.evaluation.runfiles import bind_run, read_run_file
from agentmemory.files.trec import write_qrels, write_run

SAMPLE = "fixtures/locomo-sample/locomo-sample.json"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_trec_and_jsonl_read_alike(tmp_path: Path, notes) -> None:
    """The two formats give the same ranking: scores re-sorted, ties by id descending, the rank column ignored."""
    trec = _write(tmp_path / "r.trec", "q1 Q0 m01 1 1.0 x\nq1 Q0 m03 2 2.0 x\nq1 Q0 m02 3 1.0 x\n")
    jsonl = _write(
        tmp_path / "r.jsonl",
        '{"query_id": "q1", "hits": [{"entry_id": "m01", "score": 1}, {"entry_id": "m03", "score": 2.0},'
        ' {"entry_id": "m02", "score": 1.0}]}\n',
    )
    for path, fmt in ((trec, "trec"), (jsonl, "jsonl")):
        run = read_run_file(path, "mine")
        assert run.format == fmt
        ranked = bind_run(run, notes).rankings["q1"]
        assert [(h.entry_id, h.score, h.rank) for h in ranked] == [("m03", 2.0, 1), ("m02", 1.0, 2), ("m01", 1.0, 3)]
        assert bind_run(run, notes).rankings["q2"] == ()  # a judged query the run does not mention retrieved nothing


RULE = "(ASCII digits with an optional sign, decimal point and exponent, or inf)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "q1 Q0 m01 1 1.0\n",
            "r.trec:1: found 5 fields; expected 6 whitespace-separated fields: query_id Q0 entry_id rank score tag",
        ),
        (
            "q1 Q0 m01 1 nan x\n",
            "r.trec:1: score 'nan' is not a number; expected a number such as 12.5, -3 or 1e-05 " + RULE,
        ),
        (
            "q1 Q0 m01 1 1_0 x\n",
            "r.trec:1: score '1_0' is not a number; expected a number such as 12.5, -3 or 1e-05 " + RULE,
        ),
        (
            "q1 Q0 m01 1 1 x\nq1 Q0 m01 2 2 x\n",
            "r.trec:2: entry 'm01' appears twice for query 'q1' (first on line 1); list each entry once per query",
        ),
        (
            '{"query_id": "q1"}\n',
            'r.trec:1: expected an object with exactly the keys query_id and hits, e.g. {"query_id": "q1", "hits": [{"entry_id": "m3", "score": 2.5}]}',
        ),
        (
            '{"query_id": "q1", "hits": []}\n{"query_id": "q1", "hits": []}\n',
            "r.trec:2: query 'q1' appears again (first on line 1); list each query on one line",
        ),
        (
            '{"query_id": "q1", "hits": [{"entry_id": "m1", "score": NaN}]}\n',
            "r.trec:1: score of entry 'm1' is NaN; every score must be a number that can be ranked",
        ),
        (
            '{"query_id": "q1", "hits": [{"entry_id": "m1", "score": true}]}\n',
            "r.trec:1: score True of entry 'm1' is not a number; expected e.g. 12.5",
        ),
    ],
    ids=["fields", "nan", "underscore", "duplicate", "jsonl-keys", "jsonl-query-twice", "jsonl-nan", "jsonl-bool"],
)
def test_malformed_runs_name_file_and_line(tmp_path: Path, monkeypatch, text: str, message: str) -> None:
    """A malformed line is one InputError naming the file and the line."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "r.trec", text)
    with pytest.raises(InputError) as caught:
        read_run_file("r.trec", "mine")
    assert str(caught.value) == message


def test_unknown_ids_and_hits_out_of_scope_are_listed(tmp_path: Path, monkeypatch, repo_root: Path) -> None:
    """Strict: one error listing every bad line; lenient: those lines dropped, each listed with its reason."""
    sample = load(repo_root / SAMPLE)
    monkeypatch.chdir(tmp_path)
    _write(
        tmp_path / "r.trec",
        "conv-1/q0 Q0 conv-1/D1:1 1 3 x\n"
        "conv-1/q0 Q0 conv-2/D1:1 2 2 x\n"  # another conversation's turn
        "conv-1/q0 Q0 nowhere 3 1 x\n"
        "conv-9/q0 Q0 conv-1/D1:1 1 1 x\n",
    )
    run = read_run_file("r.trec", "mine")
    with pytest.raises(InputError) as caught:
        bind_run(run, sample)
    assert str(caught.value) == (
        "r.trec: line 2: entry 'conv-2/D1:1' is in scope 'conv-2', outside query 'conv-1/q0''s scope 'conv-1'; "
        "line 3: entry 'nowhere' (query 'conv-1/q0') is not in the collection; "
        "line 4: query 'conv-9/q0' is not in the collection; the run must name queries and entries of the "
        "collection, each entry in its query's scope (pass --lenient-run, or lenient=True, to drop such lines and list each)"
    )
    bound = bind_run(run, sample, lenient=True)
    assert [line for line, _ in bound.dropped] == [2, 3, 4]
    assert [h.entry_id for h in bound.rankings["conv-1/q0"]] == ["conv-1/D1:1"]


def test_memories_join_the_collection_for_their_run(tmp_path: Path, repo_root: Path) -> None:
    """A run's memories take their sources' scope; ids clashing with the collection or unknown sources are refused."""
    sample = load(repo_root / SAMPLE)
    run_path = _write(tmp_path / "r.trec", "conv-1/q0 Q0 s1 1 1 x\n")
    memories = _write(tmp_path / "m.jsonl", '{"_id": "s1", "text": "pottery", "derived_from": ["conv-1/D1:1"]}\n')
    bound = bind_run(read_run_file(run_path, "mine", memories=memories), sample)
    assert bound.entries["s1"].scope == "conv-1"
    _write(memories, '{"_id": "conv-1/D1:1", "text": "clash"}\n')
    with pytest.raises(InputError, match="has the id of an entry of the collection"):
        bind_run(read_run_file(run_path, "mine", memories=memories), sample)
    _write(memories, '{"_id": "s1", "text": "x", "derived_from": ["zz"]}\n')
    with pytest.raises(
        InputError, match="memory 's1' is derived from 'zz', which is neither in the collection nor in this file"
    ):
        bind_run(read_run_file(run_path, "mine", memories=memories), sample)


@pytest.fixture(scope="module")
def exported(tmp_path_factory, notes) -> tuple[Path, Path, dict]:
    """BM25's top 5 on the seed fixture written as a TREC run, the qrels beside it, and trec_eval's -c values."""
    folder = tmp_path_factory.mktemp("exported")
    evaluation = evaluate(notes, "bm25", k=5, seed=7)
    run = {q.query_id: [(h.entry_id, h.score) for h in q.hits] for q in evaluation.results[0].per_query}
    run.pop("q5")  # the run says nothing for q5: it retrieved nothing (trec_eval -c counts it as 0)
    write_run(folder / "bm25.trec", run)
    write_qrels(folder / "qrels.txt", {q: dict(d) for q, d in notes.qrels.items()})
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(d) for q, d in notes.qrels.items()}, {"P_5", "recall_5", "recip_rank", "ndcg_cut_5", "map_cut_5"}
    )
    values = evaluator.evaluate({q: dict(docs) for q, docs in run.items()})
    return folder / "bm25.trec", folder / "qrels.txt", values


def test_a_run_scores_what_trec_eval_gives(exported, notes) -> None:
    """Every per-query value of a run system equals trec_eval's; the query it omits scores 0 (trec_eval -c)."""
    path, _, values = exported
    evaluation = evaluate(notes, "bm25,tags", runs=[("mine", str(path))], k=5, seed=7)
    mine = evaluation.result("mine")
    assert mine.kind == "run" and mine.capabilities == frozenset()
    names = {"P@5": "P_5", "R@5": "recall_5", "RR": "recip_rank", "nDCG@5": "ndcg_cut_5", "AP@5": "map_cut_5"}
    for q in mine.per_query:
        for ours, theirs in names.items():
            expected = values[q.query_id][theirs] if q.query_id in values else 0.0
            assert q.metrics[ours] == pytest.approx(expected, abs=1e-12), (q.query_id, ours)
    assert mine.params["run"] == "bm25.trec" and "/" not in json.dumps(mine.params)  # no folder in the artifact


def test_cli_puts_the_run_beside_the_retrievers(exported, tmp_path: Path, capsys) -> None:
    """agentmemory eval --retrievers bm25,tags --run mine=PATH --baseline bm25: a row in the table, the artifact."""
    path, _, _ = exported
    out = tmp_path / "e.json"
    code = main(["eval", "--retrievers", "bm25,tags", "--run", f"mine={path}", "--baseline", "bm25", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| mine | " in printed and printed.index("| BM25 (baseline) |") < printed.index("| mine | ")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [r["name"] for r in data["params"]["retrievers"]] == ["bm25", "tags", "mine"]
    assert data["params"]["retrievers"][2]["kind"] == "run"


def test_cli_strict_run_stops_lenient_run_lists(tmp_path: Path, capsys) -> None:
    """A run naming an unknown entry: exit 2 with one line; --lenient-run drops the line and says so."""
    run = _write(tmp_path / "r.trec", "q1 Q0 m01 1 2 x\nq1 Q0 m99 2 1 x\n")
    assert main(["eval", "--run", f"mine={run}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agentmemory: error: {run}: line 2: entry 'm99' (query 'q1') is not in the collection;")
    assert len(err.splitlines()) == 1
    assert main(["eval", "--run", f"mine={run}", "--lenient-run"]) == 0
    assert (
        "mine: 1 run line(s) dropped (--lenient-run):\n  line 2: entry 'm99' (query 'q1') is not in the collection"
        in (capsys.readouterr().out)
    )


@pytest.mark.parametrize("lenient", [[], ["--lenient-run"]])
def test_a_run_for_another_collection_is_refused_naming_the_collection(
    tmp_path: Path, capsys, repo_root: Path, lenient: list[str]
) -> None:
    """A run none of whose queries is in the collection: exit 2, one line naming the collection it was checked
    against (the shipped fixture when --collection was not given), with --lenient-run too; nothing written."""
    run = _write(tmp_path / "r.trec", "".join(f"conv-1/q{i} Q0 conv-1/D1:1 1 1 x\n" for i in range(5)))
    out = tmp_path / "e.json"
    assert main(["eval", "--run", f"mine={run}", "--out", str(out), *lenient]) == 2
    assert capsys.readouterr().err == (
        f"agentmemory: error: {run}: none of the run's queries is in the shipped fixture 'assistant-notes', since "
        "--collection was not given: the run names 'conv-1/q0', 'conv-1/q1', 'conv-1/q2' ... (5 in all), the "
        "collection has 'q1', 'q2', 'q3' ... (5 in all); evaluate the run against the collection it was made for\n"
    )
    notes = repo_root / "fixtures" / "assistant-notes"
    assert main(["eval", "--collection", str(notes), "--run", f"mine={run}", "--out", str(out), *lenient]) == 2
    assert f"none of the run's queries is in the collection '{notes}': " in capsys.readouterr().err
    assert not out.exists()


def test_bind_run_refuses_a_run_without_a_query_of_the_collection(tmp_path: Path, notes) -> None:
    """The library refuses it too, lenient or not, naming the collection by its name."""
    run = read_run_file(_write(tmp_path / "r.trec", "x1 Q0 m01 1 1 x\n"), "mine")
    for lenient in (False, True):
        with pytest.raises(InputError, match=r": none of the run's queries is in the collection 'assistant-notes': "):
            bind_run(run, notes, lenient=lenient)


def test_score_takes_several_runs_side_by_side(exported, tmp_path: Path, capsys) -> None:
    """agentmemory score QRELS --run a=PATH --run b=PATH: one column per run, trec_eval's means."""
    path, qrels, values = exported
    assert main(["score", str(qrels), "--run", f"a={path}", "--run", f"b={path}", "--k", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["measure", "a", "b"]
    p5 = sum(v["P_5"] for v in values.values()) / len(values)
    assert lines[1].split() == ["P@5", f"{p5:.4f}", f"{p5:.4f}"]


def test_abbreviated_options_are_not_taken(tmp_path: Path, capsys, monkeypatch) -> None:
    """--runs bad=PATH is not silently --runs-dir: abbreviations are off, the option is unknown."""
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--runs", "bad=x"]) == 2
    assert "unrecognized arguments: --runs bad=x" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_eval_without_out_writes_nothing(tmp_path: Path, capsys, monkeypatch) -> None:
    """Without --out nothing is written in the working directory, and the output says so."""
    monkeypatch.chdir(tmp_path)
    assert main(["eval"]) == 0
    assert capsys.readouterr().out.endswith("\nNo file written (--out FILE writes the artifact).\n")
    assert list(tmp_path.iterdir()) == []


def test_a_closed_pipe_ends_quietly(repo_root: Path) -> None:
    """agentmemory score ... | head: no 'Broken pipe' error line, as Unix tools behave."""
    script = (
        f"{sys.executable} -m agentmemory eval --retrievers bm25,tags,bm25[k1=0.5],bm25[k1=2] --metrics "
        "Success@1,Success@2,Success@3,Rprec | head -n 1"
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=repo_root, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout == "Definitions (what every number below is):\n"  # the card's first line
    assert "Broken pipe" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--run", "bm25={run}"],
            "agentmemory: error: systems: ['bm25', 'tags', 'bm25'] (list) name the system 'bm25' twice; give every "
            "retriever and run its own name (labels must be unique)",
        ),
        (
            ["--relevance", "graded"],
            "agentmemory: error: --relevance: 'graded' (str) is not a known name; choose from: direct, provenance",
        ),
        (
            ["--run", "mine"],
            "agentmemory: error: --run: 'mine' (str) is not NAME=PATH; write --run mine=runs/mine.trec (a name "
            "without spaces or commas, '=', a path)",
        ),
    ],
    ids=["same-name", "relevance", "no-path"],
)
def test_bad_system_options_are_one_line(tmp_path: Path, capsys, args: list[str], line: str) -> None:
    """Two systems with one name, an unknown relevance mode, a --run without a path: one line, exit 2, no file."""
    run = _write(tmp_path / "r.trec", "q1 Q0 m01 1 2 x\n")
    out = tmp_path / "e.json"
    assert main(["eval", *[a.format(run=run) for a in args], "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [line]
    assert not out.exists()
