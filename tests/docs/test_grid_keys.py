"""The grid keys are declared once (``agentmemory.experiment.grid.GRID_KEYS``): the documentation's table of
grid keys is generated from that declaration, and these tests check that the reader accepts exactly it."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import REPO_ROOT

from agentmemory.errors import InputError
from agentmemory.evaluation.settings import SETTINGS
from agentmemory.experiment.grid import GRID_KEYS, GRID_TABLES, parse_grid


def test_every_declared_key_belongs_to_a_table_and_says_what_it_does():
    """Each key names a table of GRID_TABLES, once per table, with a type and a help text."""
    seen = set()
    for key in GRID_KEYS:
        assert key.table in GRID_TABLES, key
        assert (key.table, key.name) not in seen, key
        seen.add((key.table, key.name))
        assert key.type and key.help, key
    assert {table for table, _ in seen} == set(GRID_TABLES)


def test_grid_reader_accepts_exactly_the_declared_keys(tmp_path):
    """GRID_KEYS is what the reader checks: each table's unknown-key error lists that table's declared names,
    sorted, and a grid using every declared key of the top level, a collection, a run and an answer system is
    read."""
    (tmp_path / "notes").mkdir()
    shutil.copytree(REPO_ROOT / "fixtures" / "assistant-notes", tmp_path / "notes", dirs_exist_ok=True)
    (tmp_path / "mine.trec").write_text("q1 Q0 m1 1 1.0 mine\n", encoding="utf-8")
    (tmp_path / "mine.jsonl").write_text('{"_id": "m1", "text": "x", "derived_from": []}\n', encoding="utf-8")
    every = (
        'name = "all-keys"\nk = 5\nseeds = 7\nmeasures = ["Success@1"]\nrelevance = "direct"\nsystems = ["bm25"]\n'
        '[statistics]\nbaseline = "bm25"\ncomparisons = "all"\nconfidence = 0.9\nalpha = 0.1\nn_resamples = 100\n'
        '[[collections]]\npath = "notes"\nname = "notes"\nformat = "auto"\noptions = {}\nrelevance = "direct"\n'
        'systems = [{ retriever = "bm25", params = { b = 0.5 }, grid = { k1 = [0.9, 1.2] } }]\n'
        'runs = [{ name = "mine", path = "mine.trec", memories = "mine.jsonl", lenient = true }]\n'
        'answers = [{ name = "theirs", paths = ["theirs.jsonl"], format = "mapping", mapping = "theirs.toml" }]\n'
        '[[tasks]]\ncollection = "notes"\nsystem = "mine"\nk = 3\nseed = 7\n'
    )
    (tmp_path / "theirs.jsonl").write_text("{}\n", encoding="utf-8")  # read when planned, not here
    (tmp_path / "theirs.toml").write_text('records = "[*]"\n', encoding="utf-8")
    grid = parse_grid(every, source="grid.toml", base=tmp_path)
    assert [s.text for s in grid.collections[0].systems] == ["bm25[b=0.5,k1=0.9]", "bm25[b=0.5,k1=1.2]"]
    used = {
        "grid": ["name", "k", "seeds", "measures", "relevance", "systems", "statistics", "collections", "tasks"]
        + [s.grid for s in SETTINGS if s.grid not in ("k", "seeds", "measures", "relevance") and "." not in s.grid],
        "statistics": ["baseline", "comparisons", "confidence", "alpha", "n_resamples"],
        "collections": ["path", "name", "format", "options", "relevance", "systems", "runs", "answers"],
        "runs": ["name", "path", "memories", "lenient"],
        "answers": ["name", "paths", "format", "mapping"],
        "systems": ["retriever", "params", "grid"],
        "tasks": ["collection", "system", "k", "seed"],
    }
    for table, keys in used.items():
        assert sorted(keys) == sorted(k.name for k in GRID_KEYS if k.table == table), table
    cases = {
        "grid": ('bogus = 1\n[[collections]]\npath = "notes"\n', "the grid"),
        "statistics": ('[statistics]\nbogus = 1\n[[collections]]\npath = "notes"\n', "[statistics]"),
        "collections": ('[[collections]]\npath = "notes"\nbogus = 1\n', "collections[1]"),
        "runs": (
            '[[collections]]\npath = "notes"\nruns = [{ name = "m", path = "mine.trec", bogus = 1 }]\n',
            "collections[1] runs",
        ),
        "answers": (
            '[[collections]]\npath = "notes"\nanswers = [{ name = "m", paths = ["mine.jsonl"], bogus = 1 }]\n',
            "collections[1] answers[1]",
        ),
        "systems": (
            'systems = [{ retriever = "bm25", bogus = 1 }]\n[[collections]]\npath = "notes"\n',
            "a system table of systems",
        ),
        "tasks": ('[[collections]]\npath = "notes"\n[[tasks]]\nbogus = 1\n', "tasks[1]"),
    }
    for table, (text, what) in cases.items():
        allowed = ", ".join(sorted(k.name for k in GRID_KEYS if k.table == table))
        with pytest.raises(InputError, match=re.escape(f"unknown key 'bogus' in {what}; allowed: {allowed}")):
            parse_grid(text, source="grid.toml", base=tmp_path)
