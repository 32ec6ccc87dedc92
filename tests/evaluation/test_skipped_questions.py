"""A run naming questions the loader skipped (LoCoMo's malformed evidence, ``Collection.skipped``): their hits are
ignored and counted in one line, in the command's output, the report, the artifact and a grid's results, never
listed line by line as "not in the collection"; a run naming nothing else is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load
from agentmemory.cli.app import main
from agentmemory.errors import InputError
from agentmemory.evaluation.runfiles import bind_run, read_run_file
from agentmemory.experiment import run_experiment
from agentmemory.report.tables import system_line

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
KEPT = "conv-1/q0 Q0 conv-1/D1:1 1 3.0 mine\nconv-1/q0 Q0 conv-1/D2:4 2 2.0 mine\nconv-2/q1 Q0 conv-2/D1:2 1 1.5 mine\n"


def _skipped_lines() -> tuple[str, int, int]:
    """Lines for every question the sample's loader skipped: 15 turns of its conversation each, and for the first
    an entry of no conversation too (ignored all the same); the text, the questions and the hits."""
    collection = load(SAMPLE)
    lines = []
    for n, (qid, _) in enumerate(collection.skipped):
        scope = qid.split("/")[0]
        turns = [e.id for e in collection.entries if e.scope == scope][:15]
        lines += [f"{qid} Q0 {doc} {rank} {20 - rank}.0 mine\n" for rank, doc in enumerate(turns, 1)]
        if n == 0:
            lines.append(f"{qid} Q0 nowhere 16 1.0 mine\n")
    return "".join(lines), len(collection.skipped), len(lines)


def test_bind_run_ignores_and_counts_the_skipped_questions(tmp_path: Path) -> None:
    """Strict binding accepts the run: the skipped questions' hits are counted per question, nothing is dropped
    or refused, and every kept query ranks exactly as in the run without those lines."""
    text, questions, hits = _skipped_lines()
    assert (questions, hits) == (9, 136)
    sample = load(SAMPLE)
    mixed = tmp_path / "mixed.trec"
    first, rest = KEPT.split("\n", 1)
    mixed.write_text(first + "\n" + text + rest, encoding="utf-8")  # the skipped questions between kept lines
    alone = tmp_path / "alone.trec"
    alone.write_text(KEPT, encoding="utf-8")
    bound = bind_run(read_run_file(mixed, "mine"), sample)
    assert bound.dropped == ()
    assert bound.skipped_hits == tuple((qid, 16 if n == 0 else 15) for n, (qid, _) in enumerate(sample.skipped))
    assert bound.rankings == bind_run(read_run_file(alone, "mine"), sample).rankings
    assert bind_run(read_run_file(alone, "mine"), sample).skipped_hits == ()


def test_an_unknown_question_is_still_an_error_and_the_skipped_ones_are_not_listed(tmp_path: Path) -> None:
    """A query id neither in the collection nor skipped by its loader is refused as before; the skipped
    questions' lines are not among those listed."""
    run = tmp_path / "r.trec"
    run.write_text(
        KEPT + "conv-1/q2 Q0 conv-1/D1:1 1 1.0 mine\nconv-9/q0 Q0 conv-1/D1:1 1 1.0 mine\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        bind_run(read_run_file(run, "mine"), load(SAMPLE))
    assert str(caught.value) == (
        f"{run}: line 5: query 'conv-9/q0' is not in the collection; the run must name queries and entries of the "
        "collection, each entry in its query's scope (pass --lenient-run, or lenient=True, to drop such lines and "
        "list each)"
    )


def test_eval_prints_one_line_and_the_artifact_counts_them(tmp_path: Path, capsys) -> None:
    """`agentmemory eval --run` of such a run exits 0 with one line counting the ignored hits (none "not in the
    collection"); the artifact records the count; every value is the run's without those lines."""
    text, questions, hits = _skipped_lines()
    mixed = tmp_path / "mixed.trec"
    mixed.write_text(KEPT + text, encoding="utf-8")
    alone = tmp_path / "alone.trec"
    alone.write_text(KEPT, encoding="utf-8")
    for run, out in ((mixed, "mixed.json"), (alone, "alone.json")):
        code = main(
            ["eval", "--collection", str(SAMPLE), "--retrievers", "", "--run", f"mine={run}"]
            + ["--out", str(tmp_path / out), "--no-progress"]
        )
        assert code == 0
        printed = capsys.readouterr().out
        note = [line for line in printed.splitlines() if "skipped question" in line]
        if run is mixed:
            assert note == [
                f"mine: {hits} hits for {questions} skipped questions ignored (questions the loader left out, "
                "listed above)."
            ]
        else:
            assert note == []
        assert "not in the collection" not in printed
    mixed_artifact = json.loads((tmp_path / "mixed.json").read_text(encoding="utf-8"))
    alone_artifact = json.loads((tmp_path / "alone.json").read_text(encoding="utf-8"))
    assert mixed_artifact["params"]["skipped_query_hits"] == {"mine": {"questions": 9, "hits": 136}}
    assert "skipped_query_hits" not in alone_artifact["params"]
    assert [r["metrics"] for r in mixed_artifact["per_query"]] == [r["metrics"] for r in alone_artifact["per_query"]]


def test_the_report_names_the_ignored_hits(tmp_path: Path) -> None:
    """The report's system bullet carries the same count, singular when there is one."""
    run = tmp_path / "r.trec"
    run.write_text(KEPT + "conv-2/q8 Q0 conv-2/D1:1 1 1.0 mine\n", encoding="utf-8")
    result = evaluate(load(SAMPLE), None, runs=[read_run_file(run, "mine")]).result("mine")
    assert result.skipped_note == "1 hit for 1 skipped question ignored"
    assert system_line(result).endswith("; 1 hit for 1 skipped question ignored (questions the loader left out)")


@pytest.mark.parametrize("lenient", [[], ["--lenient-run"]], ids=["strict", "lenient"])
def test_a_run_of_skipped_questions_only_is_refused(tmp_path: Path, capsys, lenient: list[str]) -> None:
    """A run naming only questions the loader skipped has no query in the collection: one line, exit 2, nothing
    written, lenient or not."""
    run = tmp_path / "r.trec"
    run.write_text("conv-1/q2 Q0 conv-1/D1:1 1 1.0 x\nconv-1/q3 Q0 conv-1/D1:2 1 1.0 x\n", encoding="utf-8")
    out = tmp_path / "a.json"
    code = main(
        ["eval", "--collection", str(SAMPLE), "--retrievers", "", "--run", f"mine={run}", "--out", str(out), *lenient]
    )
    assert code == 2
    assert capsys.readouterr().err == (
        f"agentmemory: error: {run}: none of the run's queries is in the collection '{SAMPLE}': the run names only "
        "questions its loader skipped ('conv-1/q2', 'conv-1/q3'); see why in the skipped list, or evaluate a run of "
        "the questions it kept\n"
    )
    skipped_only = f"{run}: none of the run's queries is in the collection 'locomo-sample': the run names only "
    with pytest.raises(InputError, match="^" + re.escape(skipped_only + "questions its loader skipped")):
        bind_run(read_run_file(run, "mine"), load(SAMPLE), lenient=True)
    assert not out.exists()


def test_a_grid_records_the_ignored_hits(tmp_path: Path) -> None:
    """In an experiment grid the run's task succeeds and results.json records the count beside the system."""
    text, questions, hits = _skipped_lines()
    run = tmp_path / "mixed.trec"
    run.write_text(KEPT + text, encoding="utf-8")
    grid = tmp_path / "grid.toml"
    grid.write_text(
        f'systems = ["bm25"]\n[[collections]]\nname = "locomo"\npath = "{SAMPLE.as_posix()}"\n'
        f'runs = [{{ name = "mine", path = "{run.as_posix()}" }}]\n',
        encoding="utf-8",
    )
    result = run_experiment(grid, out=tmp_path / "out")
    [evaluation] = result.results["evaluations"]
    systems = {s["name"]: s for s in evaluation["systems"]}
    assert systems["mine"]["skipped_query_hits"] == {"questions": questions, "hits": hits}
    assert "skipped_query_hits" not in systems["bm25"]
