"""Answer systems in a grid: ``answers = [{ name, paths, format, mapping }]`` of a collection is read as
``agentmemory eval --answers`` reads it, planned as systems of that collection, keyed by every file read, and
merged over the questions ``agentmemory eval --answers`` scores (the judged ones and those left out of
retrieval scoring), with the same numbers computed both ways."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.answers import ANSWER_FORMATS
from agentmemory.cli.app import main
from agentmemory.datasets import load
from agentmemory.errors import InputError
from agentmemory.evaluation.runner import left_out_questions
from agentmemory.experiment import run_experiment
from agentmemory.experiment.grid import parse_grid, read_grid
from agentmemory.experiment.plan import plan_experiment

LOCOMO = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
ANSWERS = REPO_ROOT / "fixtures" / "answers"
ZEP = "zep/zep_locomo_grades.json"
MEM0 = "mem0-locomo-sample.json"
# zep first: `agentmemory eval` puts answer files with retrieval before those without, so every pair of
# systems is compared in the same order both ways.
GRID = f"""
name = "answers"
relevance = "provenance"
systems = ["bm25"]

[statistics]
comparisons = "all"

[[collections]]
path = "{LOCOMO.as_posix()}"
name = "locomo"
options = {{ repair = true }}
answers = [
  {{ name = "zep", paths = ["{ZEP}"], format = "zep" }},
  {{ name = "mem0", paths = ["{MEM0}"] }},
]
"""


def _grid_folder(folder: Path) -> Path:
    """A grid file with copies of the answer files beside it (paths relative to its folder); the grid file."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ANSWERS / "zep", folder / "zep")
    shutil.copy(ANSWERS / MEM0, folder / MEM0)
    (folder / "grid.toml").write_text(GRID, encoding="utf-8")
    return folder / "grid.toml"


def outputs(folder: Path) -> dict[str, bytes]:
    files = [folder / "results.json", folder / "per_query.csv", *sorted((folder / "tables").glob("*.md"))]
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in files}


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory) -> Path:
    return _grid_folder(tmp_path_factory.mktemp("grid") / "g")


@pytest.fixture(scope="module")
def serial(grid_file, tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("serial") / "out"
    result = run_experiment(grid_file, out=out)
    assert result.ok and (result.tasks, result.computed) == (3, 3)
    return outputs(out)


@pytest.fixture(scope="module")
def artifact(grid_file, tmp_path_factory) -> dict:
    """`agentmemory eval --answers` on the same inputs: its eval-results.json."""
    out = tmp_path_factory.mktemp("eval") / "eval.json"
    folder = grid_file.parent
    args = ["eval", "--collection", str(LOCOMO), "--repair", "--retrievers", "bm25", "--relevance", "provenance"]
    args += ["--answers", f"zep={folder / ZEP}", "--answers-format", "zep=zep", "--answers", f"mem0={folder / MEM0}"]
    assert main([*args, "--out", str(out), "--table-out", str(out.with_suffix(".md"))]) == 0
    return {**json.loads(out.read_text(encoding="utf-8")), "table": out.with_suffix(".md").read_text(encoding="utf-8")}


def _evaluation(results: bytes) -> dict:
    [evaluation] = json.loads(results)["evaluations"]
    return evaluation


def _short(text: str) -> str:
    """A grid's labels name every parameter (``BM25 (k1=1.2, b=0.75)``) where ``agentmemory eval`` says ``BM25``:
    the grid's text with the full label made eval's, so the rest is compared as it is."""
    return text.replace("BM25 (k1=1.2, b=0.75)", "BM25")


def test_answer_systems_have_the_means_of_agentmemory_eval(serial, artifact) -> None:
    """Every system's mean of every measure, group means, tie-aware means and statistics (intervals, paired tests
    of every pair, Holm) in results.json are those of `agentmemory eval --answers` on the same inputs."""
    evaluation = _evaluation(serial["results.json"])
    names = {_short(s["label"]): s["name"] for s in evaluation["systems"]}
    assert [(s["name"], s["kind"]) for s in evaluation["systems"]] == [
        ("bm25", "retriever"),
        ("zep", "answers"),
        ("mem0", "answers"),
    ]
    assert evaluation["measures"] == artifact["statistics"]["measures"]
    ours = {row["system"]: row for row in evaluation["aggregate"]}
    for row in artifact["aggregate"]:
        name = names[row["retriever"]]
        assert ours[name] == {"system": name, **{m: row[m] for m in evaluation["measures"]}}, name
    assert ours["zep"]["Judge"] is not None and ours["mem0"]["F1"] is not None  # numbers, not two Nones
    assert ours["mem0"]["R@5"] is None and ours["mem0"]["answer_in_context@5"] is None  # no retrieval: no value
    assert ours["zep"]["R@5"] is not None  # its retrieved memories, attributed
    assert evaluation["groups"] == artifact["groups"]
    assert evaluation["tie_aware"] == artifact["tie_aware"]
    assert json.loads(_short(json.dumps(evaluation["statistics"]))) == artifact["statistics"]


def test_the_table_is_eval_s(serial, artifact) -> None:
    """tables/<collection>.md holds, under its k and seed, the comparison table `agentmemory eval --table-out`
    writes for the same inputs (the answer systems' cells, n/a where there is no retrieval, included)."""
    table = _short(serial["tables/locomo.md"].decode("utf-8"))
    assert table.startswith("# locomo: comparison tables\n\n## k = 5, seed = 7\n\n")
    assert artifact["table"] in table and "| mem0 | n/a |" in artifact["table"]


def test_the_rows_are_every_question_eval_scores(serial, artifact) -> None:
    """per_query.csv holds each system's value on the judged questions and on those left out of retrieval
    scoring (LoCoMo's unusable evidence), as the artifact's per-query values; no value is an empty cell."""
    rows = list(csv.DictReader(io.StringIO(serial["per_query.csv"].decode("utf-8"))))
    mine = {(r["system"], r["query_id"], r["measure"]): None if r["value"] == "" else float(r["value"]) for r in rows}
    expected = {(q["retriever"], q["query_id"], m): v for q in artifact["per_query"] for m, v in q["metrics"].items()}
    assert mine == expected
    collection = load(LOCOMO, repair=True)
    left_out = {q.id for q in left_out_questions(collection)}
    assert left_out  # the repaired sample still leaves questions out
    questions = {qid for system, qid, _ in mine if system == "mem0"}
    assert questions == {q.id for q in collection.judged_queries} | left_out
    assert all(mine[("bm25", qid, "R@5")] is None for qid in left_out)
    assert any(mine[("zep", qid, "Judge")] is not None for qid in left_out)


def test_results_name_no_folder(serial, grid_file) -> None:
    """results.json states each answer file by its name and sha256, never by a folder."""
    text = serial["results.json"].decode("utf-8")
    assert str(grid_file.parent) not in text  # where the answer files are (the collection's path is as written)
    zep = next(s for s in _evaluation(serial["results.json"])["systems"] if s["name"] == "zep")
    assert [f["path"] for f in zep["params"]["files"]] == [
        "zep_locomo_grades.json",
        "zep_locomo_responses.json",
        "zep_locomo_search_results.json",
    ]


def test_a_process_pool_writes_the_serial_bytes(grid_file, serial, tmp_path: Path) -> None:
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        result = run_experiment(grid_file, pool, out=tmp_path / "out")
    assert result.ok and result.computed == 3
    assert outputs(tmp_path / "out") == serial


def _keys(grid: Path) -> dict[str, str]:
    """Each system's task key, as the grid plans it now."""
    return {t.system: t.key for t in plan_experiment(read_grid(grid)).tasks}


def test_resume_recomputes_an_answer_system_whose_file_changed(tmp_path: Path) -> None:
    """A rerun reuses every task; after an answer file changes (a file its reader found beside the given one
    too), only that system's task is computed again, and its numbers are the new file's."""
    grid = _grid_folder(tmp_path / "g")
    out = tmp_path / "out"
    assert run_experiment(grid, out=out).computed == 3
    again = run_experiment(grid, out=out)
    assert (again.reused, again.computed) == (3, 0)

    before = _keys(grid)
    search = tmp_path / "g" / "zep" / "zep_locomo_search_results.json"  # a companion of the file the grid names
    search.write_text(json.dumps(json.loads(search.read_text(encoding="utf-8")), indent=1), encoding="utf-8")
    after = _keys(grid)
    assert [name for name in after if after[name] != before[name]] == ["zep"]
    touched = run_experiment(grid, out=out)
    assert (touched.reused, touched.computed) == (2, 1)

    mem0 = tmp_path / "g" / MEM0
    data = json.loads(mem0.read_text(encoding="utf-8"))
    first = data[sorted(data, key=int)[0]][0]
    first["llm_score"] = 1 - first["llm_score"]
    mem0.write_text(json.dumps(data), encoding="utf-8")
    changed = run_experiment(grid, out=out)
    assert (changed.reused, changed.computed) == (2, 1)
    verdicts = [r["llm_score"] for key in sorted(data, key=int) for r in data[key]]
    [evaluation] = changed.results["evaluations"]
    judge = next(row for row in evaluation["aggregate"] if row["system"] == "mem0")["Judge"]
    assert judge == pytest.approx(math.fsum(verdicts) / len(verdicts))


def test_a_file_changed_after_planning_fails_its_task(tmp_path: Path) -> None:
    """The worker reads the files again; one that differs from what was planned fails that task in one line, and
    the other tasks complete."""
    grid = _grid_folder(tmp_path / "g")
    plan = plan_experiment(read_grid(grid))
    mem0 = tmp_path / "g" / MEM0
    mem0.write_text(mem0.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = run_experiment(plan, out=tmp_path / "out")
    assert [(f.task.system, f.error) for f in result.failures] == [
        (
            "mem0",
            f"{mem0.resolve()}: has changed, or a file read with it has, since the experiment was planned; run it "
            "again",
        )
    ]
    assert result.computed == 2


def test_a_task_may_name_an_answer_system(tmp_path: Path) -> None:
    """[[tasks]] names an answer system of its collection as it names a run: one task more, at its own k."""
    grid = _grid_folder(tmp_path / "g")
    text = grid.read_text(encoding="utf-8").replace('systems = ["bm25"]', "systems = []")
    text += '[[tasks]]\ncollection = "locomo"\nsystem = "zep"\nk = 3\nseed = 7\n'
    grid.write_text(text, encoding="utf-8")
    tasks = plan_experiment(read_grid(grid)).tasks
    assert [(t.system, t.k, t.job.system.kind) for t in tasks] == [
        ("zep", 5, "answers"),
        ("mem0", 5, "answers"),
        ("zep", 3, "answers"),
    ]
    assert "answer_in_context@3" in tasks[2].job.measures


FORMATS = ", ".join(sorted(["auto", *ANSWER_FORMATS.names()]))


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (
            '[{ name = "zep", path = "zep.json" }]',
            "unknown key 'path' in collections[1] answers[1]; allowed: format, mapping, name, paths",
        ),
        (
            '{ name = "zep", paths = ["zep.json"] }',
            'collections[1] answers: write answers = [{ name = "zep", paths = ["zep_locomo_grades.json"] }]',
        ),
        (
            '[{ name = "zep" }]',
            "collections[1] answers[1]: the answer system 'zep' has no paths; write paths = [\"zep.json\"]",
        ),
        (
            '[{ name = "zep", paths = "zep.json" }]',
            "collections[1] answers[1] paths: 'zep.json' (str) is not a non-empty list; write paths = [\"...\"]",
        ),
        (
            '[{ name = "zep", paths = ["nope.json"] }]',
            "collections[1] answers[1] paths: 'nope.json' does not exist (looked for '{base}/nope.json': a relative "
            "path is read from the grid file's folder); point it at the answer file",
        ),
        (
            f'[{{ name = "mem0", paths = ["{MEM0}", "{MEM0}"] }}]',
            f"collections[1] answers[1] paths: ['{MEM0}', '{MEM0}'] lists a file twice; list each seed's file once",
        ),
        (
            f'[{{ name = "my zep", paths = ["{ZEP}"] }}]',
            "collections[1] answers[1] name: 'my zep' has a space, comma, bracket or '='; name the system without them",
        ),
        (
            f'[{{ name = "zep", paths = ["{ZEP}"], format = "zepp" }}]',
            f"collections[1] answers[1] format: 'zepp' (str) is not a known name; choose from: {FORMATS}",
        ),
        (
            f'[{{ name = "zep", paths = ["{ZEP}"], format = "zep", mapping = "{ZEP}" }}]',
            "collections[1] answers[1] mapping: the zep answer format takes no mapping file; leave mapping out, or "
            'write format = "mapping"',
        ),
    ],
)
def test_a_bad_answers_table_is_refused_in_one_line(answers: str, message: str, tmp_path: Path) -> None:
    """Each bad value of an answers table is one InputError naming the grid file, its line, the table and the
    key."""
    grid = _grid_folder(tmp_path / "g")
    text = f'systems = ["bm25"]\n[[collections]]\npath = "{LOCOMO.as_posix()}"\nanswers = {answers}\n'
    grid.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_grid(grid)
    base = grid.parent.resolve().as_posix()
    assert str(info.value) == f"{grid}:4: " + message.replace("{base}", base)


def test_an_answer_system_named_as_a_retriever_is_refused() -> None:
    """An answer system's name is a system name of its collection: it may not be a retriever's key or label."""
    text = GRID.replace('name = "zep"', 'name = "bm25"')
    with pytest.raises(InputError) as info:
        parse_grid(text, source="grid.toml", base=ANSWERS)
    assert str(info.value) == (
        "grid.toml:9: collection 'locomo': the system 'bm25' is 'bm25', which is already a system of it; give each "
        "system once (a run's or an answer system's name must differ from every other system's)"
    )


def test_an_answer_file_of_another_dataset_stops_the_plan(tmp_path: Path) -> None:
    """Reading and matching happen when the grid is planned: a file that answers another collection's questions
    is refused before any task runs, naming the grid file's line, the collection and the answer system."""
    grid = _grid_folder(tmp_path / "g")
    lme = "longmemeval-sample.jsonl.eval-results-authored-judge-1"
    shutil.copy(ANSWERS / lme, grid.parent / lme)
    grid.write_text(GRID.replace(f'paths = ["{MEM0}"]', f'paths = ["{lme}"]'), encoding="utf-8")
    found = rf"^{re.escape(str(grid))}:13: collection 'locomo' answers 'mem0': {re.escape(str(grid.parent / lme))}: "
    with pytest.raises(InputError, match=found + "most records match no question of 'locomo-sample' by any key"):
        plan_experiment(read_grid(grid))
    assert not (tmp_path / "out").exists()
