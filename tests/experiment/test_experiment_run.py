"""run_experiment and `agentmemory experiment`: byte-identical on any executor and completion order, resumable,
failures reported with their spec, statistics equal to `agentmemory eval`'s, bad input refused before writing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, PYTHON, REPO_ROOT

from agentmemory import evaluate, load
from agentmemory.analysis.comparison_table import comparison_table
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.cli.app import main
from agentmemory.evaluation.runfiles import read_run_file
from agentmemory.experiment import run_experiment
from agentmemory.experiment.grid import GRID_KEYS
from agentmemory.experiment.task import forget_collections
from agentmemory.retrievers import full_label, resolve_retriever

HERE = Path(__file__).resolve().parent
EXAMPLE = REPO_ROOT / "examples" / "grid.toml"
NOTES = FIXTURE_DIR.as_posix()
LOCOMO = (REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json").as_posix()


def outputs(folder: Path) -> dict[str, bytes]:
    """Every file of an experiment's results (not the task cache), by its path in the folder."""
    files = [folder / "results.json", folder / "per_query.csv", *sorted((folder / "tables").glob("*.md"))]
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in files}


def write_grid(folder: Path, text: str, name: str = "grid.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def serial_example(tmp_path_factory) -> dict[str, bytes]:
    """examples/grid.toml run serially once: the bytes every other executor must write."""
    out = tmp_path_factory.mktemp("serial") / "out"
    result = run_experiment(EXAMPLE, out=out)
    assert result.ok and (result.tasks, result.computed) == (27, 27)
    return outputs(out)


class ShuffledExecutor(Executor):
    """Threads that start each task after a random pause: tasks finish in an order unrelated to the plan."""

    def __init__(self, seed: int) -> None:
        self._pool = ThreadPoolExecutor(4)
        self._random = random.Random(seed)
        self.finished: list[str] = []

    def submit(self, fn, /, *args, **kwargs) -> Future:
        pause = self._random.random() * 0.03

        def later():
            time.sleep(pause)
            result = fn(*args, **kwargs)
            self.finished.extend(f"{job.system.name}@{job.k}" for job in args[0])  # a batch of tasks
            return result

        return self._pool.submit(later)

    def shutdown(self, wait: bool = True, **kwargs) -> None:
        self._pool.shutdown(wait)


def test_a_process_pool_writes_the_serial_bytes(serial_example, tmp_path: Path):
    """Two worker processes give results.json, per_query.csv and every table byte for byte as the serial run."""
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        result = run_experiment(EXAMPLE, pool, out=tmp_path / "out")
    assert result.ok
    assert outputs(tmp_path / "out") == serial_example


def test_any_completion_order_writes_the_serial_bytes(serial_example, tmp_path: Path):
    """Tasks finishing in two different shuffled orders still give the serial run's bytes."""
    orders = []
    for seed in (1, 2):
        executor = ShuffledExecutor(seed)
        with executor:
            run_experiment(EXAMPLE, executor, out=tmp_path / f"out{seed}")
        assert outputs(tmp_path / f"out{seed}") == serial_example
        orders.append(executor.finished)
    assert orders[0] != orders[1] and sorted(orders[0]) == sorted(orders[1])


def test_a_rerun_reuses_every_task_and_no_resume_recomputes_them(tmp_path: Path, serial_example):
    """A second run computes nothing and writes the same bytes; --no-resume computes every task again."""
    out = tmp_path / "out"
    grid = EXAMPLE
    first = run_experiment(grid, out=out)
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "tasks").iterdir()}
    again = run_experiment(grid, out=out)
    assert (again.reused, again.computed) == (27, 0)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "tasks").iterdir()} == stamps
    assert outputs(out) == serial_example == outputs(first.out)
    fresh = run_experiment(grid, out=out, resume=False)
    assert (fresh.reused, fresh.computed) == (0, 27)
    assert outputs(out) == serial_example


def test_a_task_file_for_other_inputs_or_unreadable_is_computed_again(tmp_path: Path):
    """A task file that is not JSON, or whose recorded task differs, is not trusted: that task runs again."""
    grid = write_grid(tmp_path, f'systems = ["bm25", "tags"]\n[[collections]]\npath = "{NOTES}"\n')
    out = tmp_path / "out"
    run_experiment(grid, out=out)
    before = outputs(out)
    bm25, tags = sorted((out / "tasks").iterdir(), key=lambda p: json.loads(p.read_text())["task"]["system"]["key"])
    bm25.write_text("{not json", encoding="utf-8")
    data = json.loads(tags.read_text())
    data["task"]["k"] = 6
    tags.write_text(json.dumps(data), encoding="utf-8")
    again = run_experiment(grid, out=out)
    assert (again.reused, again.computed) == (0, 2)
    assert outputs(out) == before


def test_loaded_once_in_a_serial_run(tmp_path: Path, monkeypatch):
    """Each collection is loaded once (when planned) however many tasks use it: tasks find it in the cache;
    a second run of the grid in this process reads none (its files are unchanged)."""
    import agentmemory.datasets as datasets

    forget_collections()
    loads: list[str] = []
    real = datasets.load

    def counting(path, *args, **kwargs):
        loads.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(datasets, "load", counting)
    result = run_experiment(EXAMPLE, out=tmp_path / "out")
    assert result.tasks == 27
    assert sorted(loads) == ["assistant-notes", "beir-sample", "locomo-sample.json"]
    again = run_experiment(EXAMPLE, out=tmp_path / "again")
    assert again.computed == 27
    assert len(loads) == 3


def test_results_are_agentmemory_evals_numbers(tmp_path: Path):
    """With comparisons = "all", an evaluation's means, statistics and table equal evaluate + evaluation_statistics
    on the same systems labelled as grids label them (every parameter named: full_label), although each system ran
    as its own task."""
    run = REPO_ROOT / "examples" / "runs" / "notes-keyword.trec"
    grid = write_grid(
        tmp_path,
        f'k = 5\nseeds = 3\nsystems = ["bm25", "tags", "bm25[k1=0.9,b=0.4]"]\n[statistics]\ncomparisons = "all"\n'
        f'[[collections]]\npath = "{NOTES}"\nruns = [{{ name = "keyword", path = "{run.as_posix()}" }}]\n',
    )
    result = run_experiment(grid, out=tmp_path / "out")
    [evaluation] = result.results["evaluations"]
    specs = [replace(resolve_retriever(s), label=full_label(s)) for s in ("bm25", "tags", "bm25[k1=0.9,b=0.4]")]
    assert [s.label for s in specs] == ["BM25 (k1=1.2, b=0.75)", "Tag scorer", "BM25 (k1=0.9, b=0.4)"]
    expected = evaluate(
        load(FIXTURE_DIR),
        specs,
        runs=[read_run_file(run, "keyword")],
        k=5,
        seed=3,
    )
    statistics = evaluation_statistics(expected, seed=3)
    assert evaluation["statistics"] == json.loads(json.dumps(statistics.to_dict()))
    assert [row["system"] for row in evaluation["aggregate"]] == [r.name for r in expected.results]
    for row, res in zip(evaluation["aggregate"], expected.results):
        assert {m: row[m] for m in res.means} == res.means
    table = (tmp_path / "out" / "tables" / "assistant-notes.md").read_text(encoding="utf-8")
    assert comparison_table(expected, statistics).render("markdown") in table
    assert evaluation["tie_aware"]["bm25"] == json.loads(json.dumps(expected.result("bm25").tie_means()))


def test_a_failing_task_is_reported_with_its_spec_and_the_others_complete(tmp_path: Path, capsys):
    """A run file naming an unknown query fails its tasks (exit 1, one line each with the spec); every other
    task completes and is written; results.json lists the failures; a rerun tries only the failed ones again."""
    runs = tmp_path / "bad.trec"
    runs.write_text("q1 Q0 m01 1 2.0 x\nq99 Q0 m02 1 1.0 x\n", encoding="utf-8")
    grid = write_grid(
        tmp_path,
        f'k = [3, 5]\nsystems = ["bm25", "tags"]\n[[collections]]\nname = "notes"\npath = "{NOTES}"\n'
        f'runs = [{{ name = "bad", path = "{runs.as_posix()}" }}]\n',
    )
    out = tmp_path / "out"
    assert main(["experiment", str(grid), "--out", str(out), "--no-progress"]) == 1
    captured = capsys.readouterr()
    reason = (
        f"{runs}: line 2: query 'q99' is not in the collection; the run must name queries and entries of the "
        "collection, each entry in its query's scope (pass --lenient-run, or lenient=True, to drop such lines and "
        "list each)"
    )
    assert captured.err.splitlines() == [
        f"agentmemory: task failed: collection notes, system bad, k 3, seed 7: {reason}",
        f"agentmemory: task failed: collection notes, system bad, k 5, seed 7: {reason}",
    ]
    assert "Experiment grid: 6 tasks: 0 reused, 4 computed, 2 failed; 2 evaluations." in captured.out
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [(f["system"], f["k"], f["error"]) for f in results["failures"]] == [("bad", 3, reason), ("bad", 5, reason)]
    assert results["tasks"] == {"total": 6, "succeeded": 4, "failed": 2}
    assert [e["not_evaluated"] for e in results["evaluations"]] == [["bad"], ["bad"]]
    assert len(list((out / "tasks").glob("*.json"))) == 4
    assert "Not evaluated (the task failed): bad." in (out / "tables" / "notes.md").read_text(encoding="utf-8")
    assert main(["experiment", str(grid), "--out", str(out), "--no-progress"]) == 1
    assert "6 tasks: 4 reused, 0 computed, 2 failed" in capsys.readouterr().out


SLOW_TASKS = 6


def _slow_grid(folder: Path) -> Path:
    """SLOW_TASKS tasks on the seed fixture, each about 0.4 s (a slow BM25 per variant)."""
    variants = list(range(1, SLOW_TASKS + 1))
    return write_grid(
        folder,
        f'systems = [{{ retriever = "slow_retriever:Slow", params = {{ delay = 0.06 }}, grid = {{ variant = {variants} }} }}]\n'
        f'[[collections]]\nname = "notes"\npath = "{NOTES}"\n',
    )


def test_a_client_killed_mid_run_resumes_with_only_the_missing_tasks(tmp_path: Path, capsys):
    """SIGKILL the command while it runs; the rerun computes only the tasks with no file (counted) and writes
    exactly the bytes of an uninterrupted run."""
    grid = _slow_grid(tmp_path)
    out = tmp_path / "out"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    command = [PYTHON, "-m", "agentmemory", "experiment", str(grid), "--out", str(out), "--no-progress"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        while len(list((out / "tasks").glob("*.json"))) < 2:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "no task finished in 60 s"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
        if process.stderr:
            process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    done = {p.name: p.stat().st_mtime_ns for p in (out / "tasks").glob("*.json")}
    assert 2 <= len(done) < SLOW_TASKS and not (out / "results.json").exists()

    assert main(["experiment", str(grid), "--out", str(out), "--no-progress"]) == 0
    missing = SLOW_TASKS - len(done)
    assert f"{SLOW_TASKS} tasks: {len(done)} reused, {missing} computed, 0 failed" in capsys.readouterr().out
    assert {name: (out / "tasks" / name).stat().st_mtime_ns for name in done} == done
    reference = tmp_path / "uninterrupted"
    assert main(["experiment", str(grid), "--out", str(reference), "--no-progress"]) == 0
    assert outputs(out) == outputs(reference)


def test_parquet_holds_the_csv_rows(tmp_path: Path):
    """--parquet writes per_query.parquet with the rows of per_query.csv, the same bytes on a process pool."""
    pandas = pytest.importorskip("pandas")
    grid = write_grid(tmp_path, f'k = [3, 5]\nsystems = ["bm25", "tags"]\n[[collections]]\npath = "{LOCOMO}"\n')
    run_experiment(grid, out=tmp_path / "serial", parquet=True)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        run_experiment(grid, pool, out=tmp_path / "pool", parquet=True)
    data = (tmp_path / "serial" / "per_query.parquet").read_bytes()
    assert data == (tmp_path / "pool" / "per_query.parquet").read_bytes()
    frame = pandas.read_parquet(tmp_path / "serial" / "per_query.parquet")
    csv = pandas.read_csv(tmp_path / "serial" / "per_query.csv", keep_default_na=False)
    assert list(frame.columns) == ["collection", "k", "seed", "system", "query_id", "group", "measure", "value"]
    assert frame.astype(str).values.tolist() == csv.astype(str).values.tolist()
    assert sorted(set(frame["group"]))[0] == "1 multi-hop"


def test_reports_render_one_notebook_per_collection_on_processes(tmp_path: Path, capsys):
    """--reports renders notebooks/collection.ipynb for each collection (on the process pool), each in its own
    folder, and its artifact is what `agentmemory eval` writes for the same parameters; the grid's own report beside
    them."""
    pytest.importorskip("papermill")
    grid = write_grid(
        tmp_path,
        f'k = [3, 5]\nseeds = 7\nsystems = ["bm25", "tags"]\n[[collections]]\nname = "notes"\npath = "{NOTES}"\n',
    )
    out = tmp_path / "out"
    argv = ["experiment", str(grid), "--out", str(out), "--executor", "processes", "--workers", "2", "--reports"]
    assert main([*argv, "--no-progress"]) == 0
    folder = out / "reports" / "notes"
    assert sorted(p.name for p in folder.iterdir()) == ["collection.html", "collection.ipynb", "eval-results.json"]
    assert sorted(p.name for p in (out / "reports").iterdir()) == ["grid.html", "grid.ipynb", "notes"]  # the grid's own
    assert "<html" in (folder / "collection.html").read_text(encoding="utf-8")
    argv = ["eval", "--collection", NOTES, "--retrievers", "bm25,tags", "--k", "3", "--seed", "7"]  # the grid's
    assert main([*argv, "--out", str(tmp_path / "a.json")]) == 0
    assert (tmp_path / "a.json").read_bytes() == (folder / "eval-results.json").read_bytes()
    assert "reports/" in capsys.readouterr().out


def test_report_parameters_carry_format_options_and_runs(tmp_path: Path):
    """A collection's format options (but repair, the notebook's own switch) and its run files reach the report's
    parameters, and the notebook's setup reads them back to the same collection and systems."""
    from agentmemory.experiment.grid import read_grid
    from agentmemory.experiment.plan import plan_experiment
    from agentmemory.experiment.reports import report_parameters
    from agentmemory.report.params import collection_setup

    lme = (REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json").as_posix()
    run = REPO_ROOT / "examples" / "runs" / "notes-keyword.trec"
    grid = write_grid(
        tmp_path,
        f'systems = ["bm25"]\n[[collections]]\npath = "{lme}"\noptions = {{ granularity = "turn", all_turns = true }}\n'
        f'[[collections]]\nname = "notes"\npath = "{NOTES}"\nruns = [{{ name = "kw", path = "{run.as_posix()}" }}]\n',
    )
    planned = plan_experiment(read_grid(grid))
    longmemeval, notes = planned.collections
    parameters = report_parameters(
        collection=longmemeval.source.path,
        format=longmemeval.source.format,
        options=dict(longmemeval.source.options),
        k=5,
        seed=7,
        retrievers=["bm25"],
        metrics=[],
    )
    assert parameters["format_options"] == "granularity=turn,all_turns=true,user_turns_only=false"
    assert parameters["repair"] is False and "runs" not in parameters
    setup = collection_setup(output_dir="", **parameters)
    assert setup.collection == load(lme, granularity="turn", all_turns=True)
    with_run = report_parameters(
        collection=notes.source.path,
        format=notes.source.format,
        options=dict(notes.source.options),
        k=5,
        seed=7,
        retrievers=["bm25"],
        metrics=[],
        runs=notes.definition.runs,
    )
    assert (with_run["runs"], with_run["memories"], with_run["lenient_run"]) == (f"kw={run.as_posix()}", "", False)
    assert [r.name for r in collection_setup(output_dir="", **with_run).systems.runs] == ["kw"]


def test_progress_bar_only_when_asked(tmp_path: Path, capsys):
    """--progress draws the bar on stderr; --no-progress (and a stderr that is no terminal) leaves stderr empty."""
    grid = write_grid(tmp_path, f'systems = ["bm25", "tags"]\n[[collections]]\npath = "{NOTES}"\n')
    assert main(["experiment", str(grid), "--out", str(tmp_path / "a"), "--progress"]) == 0
    assert "tasks: 100%" in capsys.readouterr().err
    assert main(["experiment", str(grid), "--out", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().err == ""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("grid_text", "args", "message"),
    [
        ('k = 5\nsystems = ["bm25",\nname = "x"\n', [], "{grid}:3: not valid TOML: Invalid value (column 1)"),
        (
            f'sytems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            [],
            "{grid}:1: unknown key 'sytems' in the grid; allowed: "
            + ", ".join(sorted(k.name for k in GRID_KEYS if k.table == "grid")),
        ),
        (
            f'seeds = []\nsystems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            [],
            "{grid}:1: the cross product is empty: seeds = []; list at least one value",
        ),
        (
            'systems = ["bm25"]\n[[collections]]\npath = "/no/such/collection"\n',
            [],
            "{grid}:3: collections[1] path: '/no/such/collection' does not exist (looked for '/no/such/collection': a "
            "relative path is read from the grid file's folder); point it at the collection's folder or file",
        ),
        (
            f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            ["--workers", "0"],
            "--workers: 0 (int) is less than 1; --workers must be an integer >= 1",
        ),
        (
            f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            ["--workers", "2"],
            "--workers: 2 (int) does not apply to --executor serial; use --executor processes or dask",
        ),
        (
            f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            ["--executor", "dask", "--connect-timeout", "0"],
            "--connect-timeout: '0' (str) is not a number of seconds > 0; e.g. 10",
        ),
        (
            f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            ["--executor", "threads"],
            "--executor: 'threads' (str) is not a known name; choose from: dask, processes, serial",
        ),
        (
            f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            ["--scheduler", "tcp://127.0.0.1:8786"],
            "--scheduler: 'tcp://127.0.0.1:8786' (str) needs --executor dask, not serial; add --executor dask",
        ),
        (
            f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n',
            ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:{port}", "--connect-timeout", "0.5"],
            "--scheduler: 'tcp://127.0.0.1:{port}' (str) does not answer within 0.5 s (OSError); start one with "
            "`dask scheduler` (it prints its address) and workers with `dask worker ADDRESS`",
        ),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys, grid_text: str, args: list[str], message: str
):
    """Each bad input is one line on stderr, exit status 2, and no --out folder."""
    if "--scheduler" in args and "dask" in args:
        pytest.importorskip("distributed")
    port = _free_port()
    grid = write_grid(tmp_path, grid_text)
    out = tmp_path / "out"
    argv = ["experiment", str(grid), "--out", str(out), "--no-progress", *(a.format(port=port) for a in args)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == f"agentmemory: error: {message.format(grid=grid, port=port)}\n"
    assert captured.out == ""
    assert not out.exists()


def test_run_experiment_takes_a_dask_client_or_refuses_other_objects(tmp_path: Path):
    """Anything but an Executor or a Dask client is refused, naming what it takes."""
    grid = write_grid(tmp_path, f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n')
    with pytest.raises(ValueError, match=r"^executor: 'pool' \(str\) is not an executor; pass a concurrent"):
        run_experiment(grid, "pool", out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_import_agentmemory_loads_no_dask():
    """Neither `import agentmemory` nor `import agentmemory.experiment` imports dask or distributed."""
    code = (
        "import sys, agentmemory, agentmemory.experiment, agentmemory.cli.app; "
        "print(sorted(m for m in ('dask', 'distributed', 'pandas', 'papermill') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_threads_of_one_worker_load_a_collection_once(tmp_path: Path, monkeypatch):
    """Tasks running at once in threads of one process (a Dask worker's) wait for one load instead of loading twice."""
    import agentmemory.datasets as datasets
    from agentmemory.experiment import task as task_module

    grid = write_grid(tmp_path, f'systems = ["bm25", "tags", "bm25[k1=0.5]"]\n[[collections]]\npath = "{NOTES}"\n')
    from agentmemory.experiment import plan_experiment, read_grid

    plan = plan_experiment(read_grid(grid))
    monkeypatch.setattr(task_module, "_CACHE", type(task_module._CACHE)())
    loads = []
    real = datasets.load

    def slow_load(*args, **kwargs):
        loads.append(threading.get_ident())
        time.sleep(0.1)
        return real(*args, **kwargs)

    monkeypatch.setattr(datasets, "load", slow_load)
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(task_module.execute_task, [t.job for t in plan.tasks]))
    assert all("error" not in r for r in results)
    assert len(loads) == 1


def test_budget_measures_in_a_grid(tmp_path: Path):
    """A grid with budget measures: the tokenizer in results.json, tokens@first's missing values as empty CSV cells
    and left out of the means, and the merged statistics equal to `agentmemory eval`'s."""
    sample = (REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json").as_posix()
    grid = write_grid(
        tmp_path,
        f'name = "budget"\nk = [5]\nseeds = [7]\nmeasures = ["R@64tok", "tokens@first"]\n'
        f'[[collections]]\nname = "lme"\npath = "{sample}"\n[[systems]]\nretriever = "bm25"\n[[systems]]\nretriever = "tags"\n',
    )
    result = run_experiment(grid, out=tmp_path / "out")
    assert result.ok
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    [entry] = results["evaluations"]
    assert entry["tokenizer"]["name"] == "llama2"
    aggregate = {row["system"]: row for row in entry["aggregate"]}
    assert aggregate["tags"]["tokens@first"] is None  # the tag scorer finds nothing on this sample
    rows = (tmp_path / "out" / "per_query.csv").read_text(encoding="utf-8").splitlines()
    tags = [line for line in rows if line.startswith("lme,5,7,tags,") and ",tokens@first," in line]
    assert tags and all(line.endswith(",tokens@first,") for line in tags)
    direct = evaluate(load(sample), "bm25,tags", k=5, seed=7, measures="R@64tok,tokens@first")
    expected = evaluation_statistics(direct, seed=7).to_dict()
    assert entry["statistics"]["intervals"] == expected["intervals"]
    assert entry["statistics"]["versus_baseline"] == expected["versus_baseline"]


def test_a_collections_own_relevance_reaches_its_results_table_and_report_parameters(tmp_path: Path):
    """relevance = "provenance" on one collection: its results entry says so, its comparison table's caption names
    provenance judgments, its tasks equal `agentmemory eval --relevance provenance`; the grid's other collection
    stays direct; the report parameters carry the collection's mode."""
    from agentmemory.experiment.reports import report_parameters

    derived = (REPO_ROOT / "fixtures" / "locomo-derived").as_posix()
    grid = write_grid(
        tmp_path,
        f'systems = ["bm25"]\nk = 5\n[statistics]\nn_resamples = 200\n'
        f'[[collections]]\nname = "notes"\npath = "{NOTES}"\n'
        f'[[collections]]\nname = "sample"\npath = "{LOCOMO}"\nrelevance = "provenance"\n'
        f'runs = [{{ name = "derived", path = "{derived}/derived.trec", memories = "{derived}/memories.jsonl" }}]\n',
    )
    out = tmp_path / "out"
    run_experiment(grid, out=out)
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [(c["name"], c["relevance"]) for c in results["collections"]] == [
        ("notes", "direct"),
        ("sample", "provenance"),
    ]
    assert "judgments through provenance" in (out / "tables" / "sample.md").read_text(encoding="utf-8")
    assert "trec_eval's definitions" in (out / "tables" / "notes.md").read_text(encoding="utf-8")
    sample = next(e for e in results["evaluations"] if e["collection"] == "sample")
    expected = evaluate(
        load(LOCOMO),
        "bm25",
        runs=[read_run_file(f"{derived}/derived.trec", "derived", memories=f"{derived}/memories.jsonl")],
        k=5,
        seed=7,
        relevance="provenance",
    )
    assert sample["aggregate"][1]["R@5"] == expected.result("derived").means["R@5"]
    parameters = report_parameters(
        collection=LOCOMO,
        format="auto",
        options={},
        k=5,
        seed=7,
        retrievers=["bm25"],
        metrics=[],
        relevance="provenance",
    )
    assert parameters["relevance"] == "provenance"
