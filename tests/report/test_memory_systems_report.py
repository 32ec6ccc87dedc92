"""Memory systems in the notebooks: the ``systems`` parameters, the command they reproduce, recorded output.

A memory system's recorded output (the run and memories file ``--runs-dir``
writes) read back as ``runs``/``memories`` gives the replay's attribution
figures; the committed ``fixtures/locomo-systems`` files are what the
command in their README writes (checked where node and the MCP server are
installed), and the issue's Done-when command prints one table with all five.
"""

from __future__ import annotations

import contextlib
import io
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.cli.app import main as cli_main
from agentmemory.errors import ReportParameterError
from agentmemory.evaluation.system_runs import is_system_memories
from agentmemory.report import params
from agentmemory.report.inputs import collection_command
from agentmemory.report.results import cli_command
from agentmemory.report.systems import attribution_reports, coverage_frame, sensitivity_frame, systems_section

EXAMPLE = "examples.my_memory_system:System"
SAMPLE = "fixtures/locomo-sample/locomo-sample.json"
SYSTEMS_DIR = REPO_ROOT / "fixtures" / "locomo-systems"
SERVER_MEMORY = REPO_ROOT / "agentmemory" / "systems" / "node" / "node_modules" / ".bin" / "mcp-server-memory"
needs_server_memory = pytest.mark.skipif(
    shutil.which("node") is None or not SERVER_MEMORY.exists(),
    reason="starts the reference MCP memory server: "
    + ("node is not on PATH" if shutil.which("node") is None else "run `make node-servers` to install it"),
)


def _setup(**changes):
    given = dict(collection="", format="auto", repair=False, k=5, seed=7, retrievers="bm25", output_dir="")
    return params.collection_setup(**{**given, **changes})


def _cli(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main([*args, "--no-progress"]) == 0
    return out.getvalue()


def test_systems_parameter_resolves_specs_and_relevance_defaults_to_provenance():
    setup = _setup(systems=f"{EXAMPLE}, retriever[of=bm25]")
    assert [s.key for s in setup.memory_systems] == [EXAMPLE, "retriever[of=bm25]"]
    assert setup.options.relevance == "provenance"
    assert _setup().options.relevance == "direct"
    assert _setup(systems=EXAMPLE, relevance="direct", attribution="exact").options.relevance == "direct"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"systems": 3}, "systems: 3 (int) is not text"),
        ({"systems": "nosuchsystem"}, "nosuchsystem"),
        ({"systems": EXAMPLE, "attribution": "fuzzy"}, "fuzzy"),
        ({"systems": EXAMPLE, "system_timeout": 0}, "system_timeout: 0 (int) is not a number > 0"),
        ({"systems": EXAMPLE, "system_timeout": "5"}, "system_timeout: '5' (str) is not a number"),
        ({"systems": EXAMPLE, "lenient_system": "yes"}, "lenient_system: 'yes' (str) is not a bool"),
        ({"systems": EXAMPLE, "baseline": "nobody"}, "nobody"),
        ({"systems": EXAMPLE, "workers": 0}, "workers: 0 (int) is less than 1; workers must be an integer >= 1"),
        ({"systems": EXAMPLE, "workers": "2"}, "workers: '2' (str) is not an integer; workers must be an integer >= 1"),
    ],
)
def test_bad_system_parameters_raise_the_library_message(changes, message):
    with pytest.raises(ReportParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _setup(**changes)


def test_the_notebook_command_writes_the_notebook_artifact_with_system_flags(tmp_path):
    """cli_command names each system with --system (and the non-default options); running it gives the same bytes."""
    setup = _setup(systems=EXAMPLE, attribution="overlap[threshold=0.3]", system_timeout=60.0, lenient_system=True)
    evaluation = setup.evaluate()
    command = collection_command(setup, evaluation)
    args = shlex.split(command)
    assert args[args.index("--system") + 1] == EXAMPLE
    assert args[args.index("--attribution") + 1] == "overlap[threshold=0.3]"
    assert args[args.index("--system-timeout") + 1] == "60.0" and "--lenient-system" in args
    assert "--relevance" not in args  # provenance: --system's default
    out = tmp_path / "cli.json"
    args[args.index("--out") + 1] = str(out)
    args[args.index("--collection") + 1] = str(REPO_ROOT / SAMPLE)
    _cli(*args[1:])
    assert out.read_text(encoding="utf-8") == dumps_artifact(evaluation, setup.statistics(evaluation))


def test_a_setting_cli_command_has_no_rule_for_comes_from_its_declaration(tmp_path):
    """clock, which cli_command writes by no rule of its own, reaches the artifact's command from its declaration
    when it is not its default, and the command writes the same bytes (run_depth, which changes only the runs
    --runs-dir writes, is declared as never in the artifact)."""
    setup = _setup(systems=EXAMPLE, clock="conversation")
    evaluation = setup.evaluate()
    args = shlex.split(collection_command(setup, evaluation))
    assert args[-4:-2] == ["--clock", "conversation"]
    assert "--clock" not in shlex.split(cli_command(_setup(systems=EXAMPLE).evaluate(), SAMPLE))  # the default
    out = tmp_path / "cli.json"
    args[args.index("--out") + 1] = str(out)
    args[args.index("--collection") + 1] = str(REPO_ROOT / SAMPLE)
    _cli(*args[1:])
    assert out.read_text(encoding="utf-8") == dumps_artifact(evaluation, setup.statistics(evaluation))


def test_direct_relevance_with_systems_is_spelled_out():
    evaluation = _setup(systems=EXAMPLE, relevance="direct", attribution="exact").evaluate()
    args = shlex.split(cli_command(evaluation, SAMPLE))
    assert args[args.index("--relevance") + 1] == "direct"


def test_no_memory_system_shows_nothing():
    setup = _setup()
    assert setup.recorded == () and systems_section(setup.evaluate(), setup.recorded) == []


def test_recorded_output_gives_the_replays_attribution_figures(tmp_path):
    """--runs-dir output read back as runs with memories: coverage, Judged@k, sensitivity as the live replay's."""
    runs = tmp_path / "runs"
    _cli(
        "eval",
        "--collection",
        str(REPO_ROOT / SAMPLE),
        "--system",
        EXAMPLE,
        "--retrievers",
        "",
        "--runs-dir",
        str(runs),
    )
    stem = "examples.my_memory_system-System"
    assert is_system_memories((runs / f"{stem}.memories.jsonl").read_text(encoding="utf-8"))
    live = _setup(systems=EXAMPLE).evaluate()
    recorded = _setup(
        runs=f"ex={runs / stem}.trec", memories=f"ex={runs / stem}.memories.jsonl", relevance="provenance"
    )
    assert recorded.recorded == ("ex",)
    evaluation = recorded.evaluate()
    (_, mine), (_, theirs) = attribution_reports(evaluation, recorded.recorded)[0], attribution_reports(live)[0]
    assert mine == theirs
    assert coverage_frame(evaluation, attribution_reports(evaluation, recorded.recorded)).iloc[0]["system"] == "ex"
    assert len(sensitivity_frame(live)) == 3
    shown = systems_section(evaluation, recorded.recorded)
    assert shown[0].text.startswith("## Memory systems: attribution")
    # and the run scores as the system did
    by_name = {r.name: r for r in evaluation.results}
    assert by_name["ex"].means == {r.name: r for r in live.results}[EXAMPLE].means


def test_a_hand_written_memories_file_is_not_a_system():
    assert not is_system_memories('{"_id": "m1", "text": "x", "derived_from": ["a"]}\n')
    assert is_system_memories("")  # a system that returned nothing writes an empty file
    assert not is_system_memories("not json\n")


@needs_server_memory
def test_the_committed_system_runs_are_what_their_readme_command_writes(tmp_path):
    """fixtures/locomo-systems: the command of its README writes every file again, byte for byte."""
    readme = (SYSTEMS_DIR / "README.md").read_text(encoding="utf-8")
    block = readme.split("```\n")[1].replace("\\\n", " ")
    args = shlex.split(block)
    assert args[:3] == ["python", "-m", "agentmemory"]
    args[args.index("--runs-dir") + 1] = str(tmp_path / "out")
    args[args.index("--collection") + 1] = str(REPO_ROOT / SAMPLE)
    done = subprocess.run([sys.executable, *args[1:]], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in (tmp_path / "out").iterdir())
    committed = sorted(p.name for p in SYSTEMS_DIR.iterdir() if p.name != "README.md")
    assert made == committed
    for name in made:
        assert (tmp_path / "out" / name).read_bytes() == (SYSTEMS_DIR / name).read_bytes(), name


@needs_server_memory
def test_the_issues_done_when_command_prints_one_table_with_all_five():
    command = (
        f"eval --collection {SAMPLE} --system mcp[profile=server-memory] --system agentrecall --system {EXAMPLE} "
        "--retrievers bm25,hybrid --relevance provenance --attribution auto --k 5"
    )
    done = subprocess.run(
        [sys.executable, "-m", "agentmemory", *command.split()], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    table = next(block for block in done.stdout.split("\n\n") if block.startswith("| System |"))  # after the card
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| System")]
    labels = [row.split(" | ")[0][2:] for row in rows]
    assert labels == [
        "BM25 (baseline)",
        "Hybrid RRF (BM25 + Dense (wordllama))",
        "MCP server-memory",
        "agentrecall-db",
        "Fact extractor (example)",
    ]
    assert (
        "| system | attribution | returned | coverage | ambiguous | credits (mean) | credits (most) | "
        "queries returning nothing |" in done.stdout
    )
    assert "Judged@5 equals P@5 here (so it is not shown): only relevant entries are judged" in done.stdout
    assert "Sensitivity to attribution (R@5, nDCG@5, provenance):" in done.stdout


def test_evaluate_replays_on_an_executor_with_the_same_results():
    """evaluate(executor=...) replays the scopes on a process pool; values and memories as without one."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from agentmemory import evaluate, load
    from agentmemory.evaluation.system_runs import memories_text

    collection = load(REPO_ROOT / SAMPLE)
    alone = evaluate(collection, None, systems=[EXAMPLE, "agentrecall"], k=5)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        pooled = evaluate(collection, None, systems=[EXAMPLE, "agentrecall"], k=5, executor=pool)
    assert [r.per_query for r in pooled.results] == [r.per_query for r in alone.results]
    assert [memories_text(s.attributed) for s in pooled.systems] == [memories_text(s.attributed) for s in alone.systems]


def test_the_workers_parameter_replays_in_processes_with_the_same_artifact():
    """The notebooks' ``workers`` parameter replays the memory systems' conversations in that many processes; the
    artifact is the one of ``workers = 1`` byte for byte."""
    one = _setup(systems=EXAMPLE, retrievers="bm25")
    two = _setup(systems=EXAMPLE, retrievers="bm25", workers=2)
    assert (one.workers, two.workers) == (1, 2)
    texts = []
    for setup in (one, two):
        evaluation = setup.evaluate()
        texts.append(dumps_artifact(evaluation, setup.statistics(evaluation)))
    assert texts[0] == texts[1] and "Fact extractor" in texts[0]
