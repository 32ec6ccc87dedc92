"""The examples run as scripts, from any working directory, and print exactly what they promise."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import REPO_ROOT

QUICKSTART = """\
4 memories in the store

bm25: What does Maya eat for dinner?
  1. n1  score=3.8613  Maya is vegetarian and does not eat mushrooms.
     from conversation chat/2026-01-08#msg-14 by user

tags: What does Maya eat for dinner?
  1. n3  score=1.0000  Batch-cooks lentil curry on Sundays.
     from tool calendar/recurring-sunday by assistant
  2. n1  score=1.0000  Maya is vegetarian and does not eat mushrooms.
     from conversation chat/2026-01-08#msg-14 by user

event log:
  2026-03-01T09:00:00+00:00  49631b07b1767974  add      n1, n2, n3, n4
  2026-03-01T09:00:01+00:00  9d1142af804b33f4  retrieve n1
  2026-03-01T09:00:02+00:00  7cfacd5068c64077  retrieve n3, n1
"""

PROVENANCE = """\
entries:
  chat-1       conversation chat/2026-01-08#msg-14
  chat-2       conversation chat/2026-02-01#msg-3
  cal-1        tool calendar/event-team-dinner
  summary-w05  derived from chat-1, chat-2
  profile      derived from summary-w05, cal-1

search 'vegetarian profile' -> profile (score 1.8706)
traced back to its sources:
  summary-w05  derived      weekly-summary/2026-W05  (assistant)
  chat-1       conversation chat/2026-01-08#msg-14  (user)
  chat-2       conversation chat/2026-02-01#msg-3  (user)
  cal-1        tool         calendar/event-team-dinner  (assistant)

event log:
  2026-03-01T09:00:00+00:00  6a86c25aaa922558  add      chat-1, chat-2
  2026-03-01T09:00:01+00:00  6181d00c48f6a401  add      cal-1
  2026-03-01T09:00:02+00:00  228a39be1d1b4ea8  derive   summary-w05, chat-1, chat-2
  2026-03-01T09:00:03+00:00  a46ebe71c019d5b8  derive   profile, summary-w05, cal-1
  2026-03-01T09:00:04+00:00  03206c562b78ad95  retrieve profile
"""


CUSTOM_ROWS = (
    "| BM25 (baseline) | 0.280 [0.200, 0.360] | 0.900 [0.700, 1.000] | 1.000 [1.000, 1.000] (all equal) | "
    "0.891 [0.752, 0.984] | 0.833 [0.667, 0.967] |",
    "| BM25 + recency | 0.280 [0.200, 0.360] +0/−0 | 0.900 [0.700, 1.000] +0/−0 | 1.000 [1.000, 1.000] (all equal) "
    "+0/−0 | 0.882 [0.743, 0.984] +0/−1 | 0.817 [0.650, 0.967] +0/−1 |",
)
RUN_FILE_ROWS = (
    "| keywords | 0.120 [0.000, 0.280] +0/−3 | 0.400 [0.000, 0.800] +0/−3 | 0.400 [0.000, 0.800] +0/−3 | "
    "0.400 [0.000, 0.800] +1/−3 | 0.400 [0.000, 0.800] +1/−3 |",
    "keywords: run file keywords.jsonl, up to 3 hits a query",
)


PERSISTENT = """\
reopened: 5 memories, 9 events
history of p1:
  v1 add    2026-03-02 09:00  Maya is vegetarian and does not eat mushrooms.
  v2 update 2026-03-03 18:00  Maya is vegan now: no meat, dairy or eggs, and still no mushrooms.  (went vegan)
searches recorded:
  2026-03-02 09:01  dinner       p1 1.39
  2026-03-02 09:02  standup      p2 2.15, p3 1.26, p1 0.88
  2026-03-03 18:03  vegan-dinner p6 2.24, p1 1.54, p2 0.91
  2026-03-03 18:04  lena         p6 2.24, p1 2.00, p4 0.99
  2026-03-03 18:05  deploy       p3 4.12

Wrote judged: corpus.jsonl, qrels/test.tsv, queries.jsonl
Wrote judged/queries.jsonl: 5 queries
Wrote agent.trec: 5 queries, 11 hits (bm25)

"""

# The comparison table `agentmemory eval` prints (its layout is eval's): each system's P@3, R@3, RR values.
PERSISTENT_MEANS = {"BM25 (baseline)": ["0.400", "0.800", "0.800"], "agent": ["0.467", "1.000", "1.000"]}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, python_run) -> dict[str, tuple]:
    """Each example run once as a script from an empty, unrelated folder: (process, folder)."""
    runs = {}
    for script in ("quickstart.py", "provenance.py", "custom_retriever.py", "run_file.py", "persistent.py"):
        cwd = tmp_path_factory.mktemp(script.removesuffix(".py"))
        proc = python_run([str(REPO_ROOT / "examples" / script)], cwd=cwd, env={"PYTHONHASHSEED": "random"})
        runs[script] = (proc, cwd)
    return runs


@pytest.mark.parametrize(("script", "expected"), [("quickstart.py", QUICKSTART), ("provenance.py", PROVENANCE)])
def test_example_prints_expected_output(outputs, script: str, expected: str) -> None:
    """Each example runs as a script from an unrelated folder, prints exactly the expected text and writes nothing."""
    proc, cwd = outputs[script]
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == expected
    assert list(cwd.iterdir()) == []


def test_persistent_records_reopens_exports_and_evaluates(outputs) -> None:
    """persistent.py: two sessions written to a store, reopened in a new process, exported, and the agent's
    searches evaluated by `agentmemory eval --run` against its judgments; it leaves no file behind."""
    proc, cwd = outputs["persistent.py"]
    assert (proc.returncode, proc.stderr) == (0, "")
    head, _, table = proc.stdout.partition("| System |")
    assert head == PERSISTENT
    rows = {
        cells[0]: [c.split()[0] for c in cells[1:4]]
        for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()[2:])
    }
    assert rows == PERSISTENT_MEANS
    assert list(cwd.iterdir()) == []


def test_quickstart_shows_the_tie_rule(outputs) -> None:
    """In the quickstart's tag ranking n3 and n1 tie at 1.0, and n3 comes first (id descending)."""
    lines = outputs["quickstart.py"][0].stdout.splitlines()
    tags = lines[lines.index("tags: What does Maya eat for dinner?") + 1 :]
    ranked = [line.split()[1] for line in tags if "score=" in line]
    assert ranked == ["n3", "n1"]
    assert all("score=1.0000" in line for line in tags if "score=" in line)


def test_provenance_trace_reaches_the_original_sources(outputs) -> None:
    """The found profile is traced through the summary to the chat messages and the calendar event."""
    out = outputs["provenance.py"][0].stdout
    trace = out.split("traced back to its sources:\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[:2] for line in trace] == [
        ["summary-w05", "derived"],
        ["chat-1", "conversation"],
        ["chat-2", "conversation"],
        ["cal-1", "tool"],
    ]


@pytest.mark.parametrize(
    ("script", "first", "rows"),
    [
        ("custom_retriever.py", "RecentBM25 keeps the retriever contract.", CUSTOM_ROWS),
        (
            "run_file.py",
            "agentmemory assistant-notes fixture, entries, trec_eval P/R/RR/nDCG/AP, 5 of 5 questions. "
            "Systems against the baseline BM25, trec_eval's definitions",
            RUN_FILE_ROWS,
        ),
    ],
)
def test_your_own_system_beside_the_built_ins(outputs, script: str, first: str, rows: tuple[str, ...]) -> None:
    """A user-written retriever and an external run file each get a row of the comparison table, computed here."""
    proc, cwd = outputs[script]
    assert (proc.returncode, proc.stderr) == (0, "")
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(first)
    for row in rows:
        assert row in lines, row
    assert list(cwd.iterdir()) == []


def _experiment_outputs(folder) -> dict[str, bytes]:
    files = [folder / "results.json", folder / "per_query.csv", *sorted((folder / "tables").glob("*.md"))]
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in files}


@pytest.fixture(scope="module")
def grid_runs(tmp_path_factory, python_run) -> dict[str, tuple]:
    """`agentmemory experiment examples/grid.toml` run as a command from an unrelated folder: serially, and on the
    local Dask cluster the command starts itself when dask is installed: (process, output folder)."""
    runs = {}
    executors = ["serial"] + (["dask"] if importlib.util.find_spec("distributed") is not None else [])
    for executor in executors:
        cwd = tmp_path_factory.mktemp(f"grid-{executor}")
        args = ["-m", "agentmemory", "experiment", str(REPO_ROOT / "examples" / "grid.toml"), "--out", "out"]
        args += ["--executor", executor] + (["--workers", "2"] if executor == "dask" else [])
        runs[executor] = (python_run(args, cwd=cwd), cwd / "out")
    return runs


def test_grid_example_runs(grid_runs) -> None:
    """examples/grid.toml runs: 27 tasks over three collections, seven comparison tables in three files."""
    proc, out = grid_runs["serial"]
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == (
        "Experiment example: 27 tasks: 0 reused, 27 computed, 0 failed; 7 evaluations.\n"
        "Wrote out/: results.json, per_query.csv, tables/\n"
    )
    assert sorted(p.name for p in (out / "tables").iterdir()) == ["garden.md", "locomo.md", "notes.md"]
    assert len(list((out / "tasks").glob("*.json"))) == 27


def test_grid_example_on_a_local_dask_cluster_writes_the_serial_bytes(grid_runs) -> None:
    """`--executor dask` starts a local cluster and writes results byte-identical to `--executor serial`."""
    if "dask" not in grid_runs:
        pytest.skip("dask is not installed (the dask extra)")
    proc, out = grid_runs["dask"]
    assert (proc.returncode, proc.stderr) == (0, "")
    assert _experiment_outputs(out) == _experiment_outputs(grid_runs["serial"][1])
