"""Grid files: what they expand to, the order and keys of their tasks, and every bad input to the letter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT

from agentmemory.errors import InputError, MissingFileError
from agentmemory.experiment import parse_grid, plan_experiment, read_grid
from agentmemory.experiment.grid import GRID_KEYS
from agentmemory.experiment.task import task_key

TOP_KEYS = ", ".join(sorted(k.name for k in GRID_KEYS if k.table == "grid"))  # from the declaration

NOTES = FIXTURE_DIR.as_posix()
LOCOMO = (REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json").as_posix()


def _grid(text: str, base: Path = REPO_ROOT):
    return parse_grid(text, source="grid.toml", base=base)


def test_system_tables_expand_to_the_cross_product_of_their_values():
    """{retriever, params, grid} gives one spec per combination, in the order written, with the fixed params."""
    grid = _grid(
        'systems = ["tags", { retriever = "bm25", params = { b = 0.4 }, grid = { k1 = [0.9, 1.2, 1.5] } }]\n'
        f'[[collections]]\npath = "{NOTES}"\n'
    )
    assert [s.text for s in grid.systems] == ["tags", "bm25[b=0.4,k1=0.9]", "bm25[b=0.4,k1=1.2]", "bm25[b=0.4,k1=1.5]"]
    assert [s.key for s in grid.systems] == ["tags", "bm25[b=0.4,k1=0.9]", "bm25[b=0.4]", "bm25[b=0.4,k1=1.5]"]
    assert grid.systems[2].label == "BM25 (b=0.4)"


def test_defaults():
    """Without k, seeds, measures or statistics: k 5, seed 7, the default measures, tests against the first system."""
    grid = _grid(f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n')
    assert (grid.name, grid.k, grid.seeds, grid.measures, grid.relevance) == ("grid", (5,), (7,), (), "direct")
    assert grid.statistics.to_dict() == {
        "baseline": None,
        "comparisons": "baseline",
        "confidence": 0.95,
        "alpha": 0.05,
        "n_resamples": 10000,
    }
    [collection] = grid.collections
    assert (collection.name, collection.format, collection.systems) == ("assistant-notes", "auto", None)


def test_tasks_are_ordered_by_the_plan_and_listed_tasks_come_last():
    """Collections, then k, then seeds, then systems (retrievers, then runs); [[tasks]] after; a repeat is one task."""
    grid = _grid(
        f'k = [5, 3]\nseeds = [2, 1]\nsystems = ["tags", "bm25"]\n'
        f'[[collections]]\nname = "notes"\npath = "{NOTES}"\n'
        f'[[collections]]\nname = "locomo"\npath = "{LOCOMO}"\nsystems = ["bm25"]\n'
        f'[[tasks]]\ncollection = "notes"\nsystem = "bm25[k1=2]"\nk = 10\nseed = 7\n'
        f'[[tasks]]\ncollection = "notes"\nsystem = "tags"\nk = 5\nseed = 2\n'
    )
    plan = plan_experiment(grid)
    assert [(t.collection, t.k, t.seed, t.system) for t in plan.tasks] == [
        ("notes", 5, 2, "tags"),
        ("notes", 5, 2, "bm25"),
        ("notes", 5, 1, "tags"),
        ("notes", 5, 1, "bm25"),
        ("notes", 3, 2, "tags"),
        ("notes", 3, 2, "bm25"),
        ("notes", 3, 1, "tags"),
        ("notes", 3, 1, "bm25"),
        ("notes", 10, 7, "bm25[k1=2]"),
        ("locomo", 5, 2, "bm25"),
        ("locomo", 5, 1, "bm25"),
        ("locomo", 3, 2, "bm25"),
        ("locomo", 3, 1, "bm25"),
    ]
    assert len({t.key for t in plan.tasks}) == len(plan.tasks)
    assert plan.tasks[0].job.measures == ("P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5")


def _key(text: str, base: Path = REPO_ROOT) -> str:
    [task] = plan_experiment(_grid(text, base)).tasks
    return task.key


@pytest.mark.parametrize(
    "changed",
    [
        'k = 3\nsystems = ["bm25"]',
        'seeds = 8\nsystems = ["bm25"]',
        'systems = ["bm25[k1=0.9]"]',
        'measures = ["Success@1"]\nsystems = ["bm25"]',
        'relevance = "provenance"\nsystems = ["bm25"]',
    ],
)
def test_the_key_changes_with_every_input(changed: str):
    """k, seed, the system, the measures and the relevance mode are each part of a task's key."""
    base = _key(f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n')
    assert _key(f'{changed}\n[[collections]]\npath = "{NOTES}"\n') != base


def test_the_key_follows_the_content_not_the_name_or_the_spelling(tmp_path: Path):
    """Another name, another path to equal files and another spelling of the same spec give the same key;
    a changed file or a format option (LoCoMo's repair, which changes no file) gives another."""
    base = _key(f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n')
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("corpus.jsonl", "queries.jsonl"):
        (copy / name).write_bytes((FIXTURE_DIR / name).read_bytes())
    (copy / "qrels").mkdir()
    (copy / "qrels" / "test.tsv").write_bytes((FIXTURE_DIR / "qrels" / "test.tsv").read_bytes())
    assert _key(f'systems = ["bm25[k1=1.2,b=0.75]"]\n[[collections]]\nname = "x"\npath = "{copy.as_posix()}"\n') == base
    with (copy / "qrels" / "test.tsv").open("a", encoding="utf-8") as handle:
        handle.write("q5\tm01\t1\n")
    assert _key(f'systems = ["bm25"]\n[[collections]]\npath = "{copy.as_posix()}"\n') != base
    plain = _key(f'systems = ["bm25"]\n[[collections]]\npath = "{LOCOMO}"\n')
    repaired = _key(f'systems = ["bm25"]\n[[collections]]\npath = "{LOCOMO}"\noptions = {{ repair = true }}\n')
    assert plain != repaired


def test_a_key_is_the_hash_of_its_identity():
    """task_key is the sha256 of the canonical JSON of what the task depends on, the package version included."""
    [task] = plan_experiment(_grid(f'systems = ["bm25"]\n[[collections]]\npath = "{NOTES}"\n')).tasks
    identity = task.job.identity()
    assert sorted(identity) == ["agentmemory", "collection", "k", "measures", "relevance", "seed", "system"]
    assert identity["system"] == {"kind": "retriever", "key": "bm25", "label": "BM25"}
    assert task_key(task.job) == task.key and len(task.key) == 64


def test_read_grid_reads_relative_paths_from_the_files_folder(tmp_path: Path, monkeypatch):
    """A grid file's relative paths are read from its folder, whatever the working directory."""
    shutil.copytree(FIXTURE_DIR, tmp_path / "notes")
    (tmp_path / "grids").mkdir()
    (tmp_path / "grids" / "mine.toml").write_text(
        'systems = ["bm25"]\n[[collections]]\npath = "../notes"\n', encoding="utf-8"
    )
    monkeypatch.chdir(REPO_ROOT)
    grid = read_grid(tmp_path / "grids" / "mine.toml")
    [collection] = grid.collections
    assert (grid.name, collection.name, collection.given) == ("mine", "notes", "../notes")
    assert collection.path.resolve() == (tmp_path / "notes").resolve()


def test_read_grid_missing_file(tmp_path: Path):
    """A grid file that does not exist is a MissingFileError naming it."""
    with pytest.raises(MissingFileError, match=r"nope\.toml: no such grid file$"):
        read_grid(tmp_path / "nope.toml")


OK_COLLECTION = f'[[collections]]\npath = "{NOTES}"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'systems = ["bm25"]\nk = \n',
            "grid.toml:2: not valid TOML: Invalid value (column 5)",
        ),
        (
            'systems = ["bm25"]\ncolections = []\n' + OK_COLLECTION,
            f"grid.toml:2: unknown key 'colections' in the grid; allowed: {TOP_KEYS}",
        ),
        (
            'systems = ["bm25"]\n[[collections]]\npath = "' + NOTES + '"\nfromat = "beir"\n',
            "grid.toml:4: unknown key 'fromat' in collections[1]; allowed: answers, format, name, options, path, "
            "relevance, runs, systems",
        ),
        (
            'systems = ["bm25"]\n[statistics]\nbaseline = "bm25"\npairs = "all"\n' + OK_COLLECTION,
            "grid.toml:4: unknown key 'pairs' in [statistics]; allowed: alpha, baseline, comparisons, confidence, "
            "n_resamples",
        ),
        (
            'k = []\nsystems = ["bm25"]\n' + OK_COLLECTION,
            "grid.toml:1: the cross product is empty: k = []; list at least one value",
        ),
        (
            OK_COLLECTION,
            'grid.toml: the cross product is empty: no collection has a system; write systems = ["bm25", ...] '
            "or give a collection its runs",
        ),
        (
            'systems = ["bm25"]\n',
            "grid.toml: the grid is empty: it names no collection; add a [[collections]] table with a path",
        ),
        (
            'systems = ["bm25"]\n[[collections]]\npath = "no/such/folder"\n',
            "grid.toml:3: collections[1] path: 'no/such/folder' does not exist (looked for '{base}/no/such/folder': "
            "a relative path is read from the grid file's folder); point it at the collection's folder or file",
        ),
        (
            'k = [5, "10"]\nsystems = ["bm25"]\n' + OK_COLLECTION,
            "grid.toml:1: k: '10' (str) is not an integer >= 1; write an integer >= 1 or a list of them",
        ),
        (
            'seeds = -1\nsystems = ["bm25"]\n' + OK_COLLECTION,
            "grid.toml:1: seeds: -1 (int) is not an integer >= 0; write an integer >= 0 or a list of them",
        ),
        (
            'systems = ["bm25[k9=1]"]\n' + OK_COLLECTION,
            "grid.toml:1: systems bm25 parameter: 'k9' (str) is not a known name; choose from: b, k1",
        ),
        (
            'measures = ["P@x"]\nsystems = ["bm25"]\n' + OK_COLLECTION,
            "grid.toml:1: measures: ",
        ),
        (
            'systems = ["bm25", "bm25[k1=1.2]"]\n' + OK_COLLECTION,
            "grid.toml:2: collection 'assistant-notes': the system 'bm25[k1=1.2]' is 'BM25', which is already a "
            "system of it; give each system once (a run's or an answer system's name must differ from every other "
            "system's)",
        ),
        (
            'systems = ["bm25"]\n[statistics]\nbaseline = "dense"\n' + OK_COLLECTION,
            "grid.toml:3: statistics baseline: 'dense' is not a system of the grid; name a retriever spec, its label, "
            "a run's or an answer system's name",
        ),
        (
            'systems = ["bm25"]\n[statistics]\ncomparisons = "some"\n' + OK_COLLECTION,
            "grid.toml:3: statistics comparisons: 'some' is not one of: baseline, all; baseline tests each system "
            "against the baseline, all also every pair",
        ),
        (
            'systems = ["bm25"]\n'
            + OK_COLLECTION
            + '[[tasks]]\ncollection = "other"\nsystem = "bm25"\nk = 5\nseed = 7\n',
            "grid.toml:4: tasks[1] collection: 'other' is not a collection of the grid; choose from: assistant-notes",
        ),
        (
            'systems = ["bm25"]\n' + OK_COLLECTION + '[[tasks]]\ncollection = "assistant-notes"\nsystem = "bm25"\n',
            "grid.toml:4: tasks[1]: missing k, seed; a task names collection, system, k and seed",
        ),
        (
            'systems = ["bm25"]\n[[collections]]\npath = "' + NOTES + '"\nrelevance = "judged"\n',
            "grid.toml:4: collections[1] relevance: 'judged' (str) is not a known name; choose from: direct, "
            "provenance",
        ),
        (
            'systems = ["bm25"]\n[[collections]]\npath = "' + NOTES + '"\nname = "my notes"\n',
            "grid.toml:4: collections[1] name: 'my notes' is not usable as a file name; use letters, digits, '.', "
            "'_' and '-'",
        ),
    ],
)
def test_bad_grids(text: str, message: str):
    """Each problem is one InputError naming the grid file and, where it can be found, the line."""
    with pytest.raises(InputError) as info:
        _grid(text)
    expected = message.replace("{base}", REPO_ROOT.as_posix())
    if expected.endswith(": "):
        assert str(info.value).startswith(expected)
    else:
        assert str(info.value) == expected


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "options = { repair = 1 }",
            "grid.toml:1: collection 'locomo-sample': repair: 1 (int) is not a bool; pass repair=True or repair=False",
        ),
        (
            "options = { split = 'dev' }",
            "grid.toml:1: collection 'locomo-sample': split: 'dev' (str) is not an option of the locomo format; the "
            "locomo format takes: repair, include_captions, granularity (split is an option of: beir)",
        ),
    ],
)
def test_bad_format_options_are_reported_when_the_collection_is_planned(options: str, message: str):
    """A format option is checked against the format's declaration when the collection is loaded."""
    grid = _grid(f'[[collections]]\npath = "{LOCOMO}"\n{options}\nsystems = ["bm25"]\n')
    with pytest.raises(InputError) as info:
        plan_experiment(grid)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\nk = [1,\n', "grid.toml:2: not valid TOML: Invalid value (at the end of the file)"),
        ('name = "x"\nname = "y"\n', "grid.toml:2: not valid TOML: Cannot overwrite a value (column 11)"),
    ],
)
def test_toml_errors_name_line_and_column(text: str, message: str):
    """tomllib's position becomes the message's line (and column, or the end of the file)."""
    with pytest.raises(InputError) as info:
        _grid(text)
    assert str(info.value) == message


def test_a_grid_loads_locomo_by_session():
    """options = { granularity = "session" } plans the LoCoMo sample by session: its summary says so."""
    grid = _grid(f'[[collections]]\npath = "{LOCOMO}"\noptions = {{ granularity = "session" }}\nsystems = ["bm25"]\n')
    summary = plan_experiment(grid).collections[0].summary
    assert summary["settings"] == {"granularity": "session"}
    assert summary["entries"] == 6 and summary["judged_queries"] == 8


def test_relevance_is_set_per_collection():
    """A collection's relevance replaces the grid's for its tasks (their keys differ), its comparison table's
    caption and the notebook its report renders; the others keep the grid's."""
    derived = (REPO_ROOT / "fixtures" / "locomo-derived").as_posix()
    grid = _grid(
        f'systems = ["bm25"]\n[[collections]]\nname = "notes"\npath = "{NOTES}"\n'
        f'[[collections]]\nname = "sample"\npath = "{LOCOMO}"\nrelevance = "provenance"\n'
        f'runs = [{{ name = "derived", path = "{derived}/derived.trec", memories = "{derived}/memories.jsonl" }}]\n'
    )
    assert (grid.relevance, grid.relevance_of("notes"), grid.relevance_of("sample")) == (
        "direct",
        "direct",
        "provenance",
    )
    plan = plan_experiment(grid)
    assert {(t.collection, t.job.relevance) for t in plan.tasks} == {
        ("notes", "direct"),
        ("sample", "provenance"),
    }
