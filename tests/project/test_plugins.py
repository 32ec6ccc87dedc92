"""An installed plugin package extends all three registries, and the CLI and the notebooks use its names.

The plugin is a real package built from its own pyproject.toml (entry-point
groups ``agentmemory.retrievers``, ``agentmemory.measures`` and
``agentmemory.formats``) and installed with ``pip install --no-deps`` into a
fresh virtual environment holding the project's wheel: nothing is
downloaded, nothing is registered by hand, and the notebook kernel started
from that environment sees it too.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat
import pytest
from conftest import REPO_ROOT, FreshVenv

from agentmemory.datasets import FORMATS
from agentmemory.metrics import ALIASES, REGISTRY
from agentmemory.retrievers import RETRIEVERS

PLUGIN = '''
"""A plugin for agentmemory: a retriever, a measure and a format, found through entry points."""

import hashlib
import json
from types import MappingProxyType

from agentmemory import Collection, Hit, MemoryEntry, Query
from agentmemory.datasets import Format
from agentmemory.datasets.sniff import first_record_has_keys
from agentmemory.metrics import CutoffRule, MeasureDef
from agentmemory.retrievers.base import as_query
from agentmemory.tokenize import tokenize


class Overlap:
    """score = number of distinct query words the entry contains; ranking rule: score, then id, descending."""

    name = "overlap"
    label = "Word overlap"

    def __init__(self, min_len: int = 1):
        self.min_len = min_len
        self._words = {}

    def add(self, entries):
        for entry in entries:
            self._words[entry.id] = {t for t in tokenize(entry.text) if len(t) >= self.min_len}

    def search(self, query, k):
        if k < 1:
            raise ValueError("k must be an integer >= 1")
        words = set(tokenize(as_query(query).text))
        scored = sorted(((len(words & ws), i) for i, ws in self._words.items() if words & ws), reverse=True)
        return [Hit(i, float(s), r) for r, (s, i) in enumerate(scored[:k], start=1)]

    def params(self):
        return {"min_len": self.min_len}


def _hits(query):
    return float(sum(1 for d in query.ranking[: query.cutoff] if query.qrels.get(d, 0) >= 1))


HITS = MeasureDef("Hits", _hits, CutoffRule.REQUIRED, "relevant entries in the top k, a count (no trec_eval equivalent)")


def _read(path):
    data = path.read_bytes()
    doc = json.loads(data)
    entries = tuple(MemoryEntry(i, t) for i, t in doc["memories"].items())
    queries = tuple(Query(q, spec["text"]) for q, spec in doc["questions"].items())
    qrels = {q: MappingProxyType({e: 1 for e in spec["relevant"]}) for q, spec in doc["questions"].items()}
    return Collection(path.stem, entries, queries, MappingProxyType(qrels), MappingProxyType({path.name: hashlib.sha256(data).hexdigest()}))


MEMLIST = Format(
    "memlist",
    lambda p: p.is_file() and p.suffix == ".json" and first_record_has_keys(p, ("memories", "questions")),
    _read,
    description="a JSON file of memories and questions",
    rule="a .json file with 'memories' and 'questions'",
)
'''

PYPROJECT = """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "am-demo-plugin"
version = "1.0"

[project.entry-points."agentmemory.retrievers"]
overlap = "am_demo_plugin:Overlap"

[project.entry-points."agentmemory.measures"]
Hits = "am_demo_plugin:HITS"

[project.entry-points."agentmemory.formats"]
memlist = "am_demo_plugin:MEMLIST"

[tool.hatch.build.targets.wheel]
packages = ["am_demo_plugin"]
"""

NOTES = {
    "memories": {
        "m1": "Maya is vegetarian and loves lentil curry",
        "m2": "Maya swims at the lake on Sundays",
        "m3": "Lena likes green tea",
        "m4": "The lake cabin is booked for Sunday",
    },
    "questions": {
        "q1": {"text": "Where does Maya swim on Sundays?", "relevant": ["m2"]},
        "q2": {"text": "What does Lena drink?", "relevant": ["m3"]},
    },
}


@pytest.fixture(scope="module")
def plugged(tmp_path_factory, fresh_venv_factory) -> tuple[FreshVenv, Path]:
    """A fresh venv with the wheel and the plugin installed, and a memlist file in its working folder."""
    venv = fresh_venv_factory("plugin-venv")
    source = tmp_path_factory.mktemp("plugin-source")
    (source / "am_demo_plugin").mkdir()
    (source / "am_demo_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    (source / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    venv.pip_install("--no-build-isolation", source)
    notes = venv.cwd / "notes.json"
    notes.write_text(json.dumps(NOTES), encoding="utf-8")
    return venv, notes


def test_eval_uses_the_plugin_retriever_measure_and_format_by_name(plugged) -> None:
    """agentmemory eval detects the plugin format, runs its retriever beside BM25 and reports its measure."""
    venv, notes = plugged
    out = venv.cwd / "out.json"
    proc = venv.run(
        [
            "agentmemory",
            "eval",
            "--collection",
            notes,
            "--retrievers",
            "bm25,overlap[min_len=2]",
            "--metrics",
            "Hits@3",
            "--out",
            out,
            "--no-progress",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert "| Word overlap (min_len=2) |" in proc.stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["collection"]["name"] == "notes"
    assert data["params"]["measures"][-1] == "Hits@3"
    assert [r["name"] for r in data["params"]["retrievers"]] == ["bm25", "overlap[min_len=2]"]
    overlap = {
        q["query_id"]: [(h["entry_id"], h["score"]) for h in q["hits"]]
        for q in data["per_query"]
        if q["retriever"] == "overlap[min_len=2]"
    }
    # q1 shares maya, on, sundays with m2 and maya with m1; q2 shares lena with m3 (hand-computed).
    assert overlap == {"q1": [("m2", 3.0), ("m1", 1.0)], "q2": [("m3", 1.0)]}
    assert [row["Hits@3"] for row in data["aggregate"]] == [1.0, 1.0]


def test_unknown_names_list_the_plugin_names(plugged) -> None:
    """Every list of valid choices reads the live registries, installed entry points included."""
    venv, notes = plugged
    # The built-in names are read from this process's registries (the same agentmemory, without the plugin).
    retrievers = ", ".join(sorted([*RETRIEVERS.names(), "overlap"]))
    measures = ", ".join(sorted([*REGISTRY.names(), *ALIASES, "Hits"]))
    formats = ", ".join(sorted(["auto", *FORMATS.names(), "memlist"]))
    cases = [
        (["--retrievers", "nope"], f"--retrievers: 'nope' (str) is not a known name; choose from: {retrievers}\n"),
        (["--metrics", "Nope@3"], f"choose from: {measures}\n"),
        (["--format", "nope"], f"choose from: {formats}\n"),
    ]
    for args, expected in cases:
        proc = venv.run(["agentmemory", "eval", "--collection", notes, *args, "--out", venv.cwd / "x.json"])
        assert proc.returncode == 2 and expected in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and not (venv.cwd / "x.json").exists()


def test_the_plugin_retriever_passes_the_contract_test_by_name(plugged) -> None:
    """agentmemory.testing.check_retriever resolves the entry-point name and the retriever keeps the contract."""
    venv, _ = plugged
    proc = venv.run(
        ["python", "-c", "from agentmemory.testing import check_retriever; check_retriever('overlap'); print('ok')"]
    )
    assert (proc.returncode, proc.stdout.strip()) == (0, "ok"), proc.stderr


def test_eval_notebook_uses_the_plugin_names(plugged, tmp_path: Path) -> None:
    """notebooks/eval.ipynb, run by papermill from the plugin's venv, shows its retriever and measure in the metric table."""
    venv, notes = plugged
    out = tmp_path / "out.ipynb"
    proc = venv.run(
        [
            "python",
            "-m",
            "papermill",
            "-k",
            "python3",
            REPO_ROOT / "notebooks" / "eval.ipynb",
            out,
            "-p",
            "collection",
            str(notes),
            "-p",
            "retrievers",
            "bm25,overlap",
            "-p",
            "metrics",
            "Hits@3",
            "--no-progress-bar",
        ]
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    nb = nbformat.read(out, as_version=4)
    metric_cell = next(c for c in nb.cells if c.cell_type == "code" and "tables.metric_table(evaluation)" in c.source)
    table = metric_cell.outputs[0]["data"]["text/plain"]
    assert "Word overlap" in table and "Hits@3" in table
    header, bm25_row, overlap_row = table.splitlines()[1:4]
    assert header.split()[-1] == "Hits@3" and overlap_row.split()[-1] == "1.0000", table
