"""Every setting is declared once (``agentmemory.evaluation.settings.SETTINGS``): the command line, the notebooks
and the grid take their flags, parameters, keys and defaults from it, and these tests read the declaration to
check each surface against it (so a new setting is checked here without a new test)."""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate, load
from agentmemory.analysis.card import evaluation_card
from agentmemory.cli.app import build_parser, main
from agentmemory.cli.evaluate_cmd import eval_options
from agentmemory.errors import InputError, ParameterError
from agentmemory.evaluation.options import (
    RELEVANCE_MODES,
    EvalOptions,
    Relevance,
    default_retrievers,
    options_from_settings,
    resolve_relevance,
)
from agentmemory.evaluation.runner import Evaluation
from agentmemory.evaluation.settings import SETTINGS, Setting
from agentmemory.experiment.grid import GRID_KEYS, parse_grid
from agentmemory.metrics.token_counters import DEFAULT_TOKEN_COUNTER
from agentmemory.report.own_report import notebook_parameters
from agentmemory.systems.attribution import attribute

OPTION_SETTINGS = [s for s in SETTINGS if not s.live]
NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))


def _record_value(s: Setting) -> object:
    """What the record holds when the setting is left unset: its declared default, ``""`` read as none."""
    if s.default == "":
        return () if s.name == "measures" else None
    return s.default


@pytest.mark.parametrize("s", OPTION_SETTINGS, ids=lambda s: s.name)
def test_the_command_line_default_is_the_declared_one(s: Setting) -> None:
    """``agentmemory eval`` with no flag: every setting of its options is the declaration's default."""
    args = build_parser().parse_args(["eval"])
    options = eval_options(args)
    assert getattr(options, s.name) == _record_value(s)
    assert options.live is None


@pytest.mark.parametrize("s", OPTION_SETTINGS, ids=lambda s: s.name)
def test_the_grid_default_is_the_declared_one(tmp_path: Path, s: Setting) -> None:
    """A grid that sets nothing evaluates with the declared defaults, and its key's documented default is the
    declaration's."""
    grid = parse_grid('systems = ["bm25"]\n[[collections]]\npath = "."\n', base=tmp_path)
    assert grid.settings == ()
    options = options_from_settings({"relevance": grid.relevance}, "grid")
    if s.name != "relevance":  # the grid resolves relevance per collection (its own, else the grid's)
        assert getattr(options, s.name) == _record_value(s)
    [key] = [key for key in GRID_KEYS if f"{key.table}.{key.name}" in (s.grid, f"grid.{s.grid}")]
    if s.name not in ("k", "seed", "measures", "relevance", "baseline"):
        assert key.default == ("" if s.default == "" else json.dumps(s.default).replace("300.0", "300.0"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_parameter_defaults_to_the_declared_value(notebook: Path) -> None:
    """Every setting a shipped notebook declares in its parameters cell has the declaration's default."""
    declared = notebook_parameters(notebook)
    for s in SETTINGS:
        if s.parameter in declared:
            assert declared[s.parameter].default == s.default, (notebook.name, s.parameter)


def test_the_record_defaults_are_the_declared_ones() -> None:
    """``EvalOptions()`` from Python holds the declared defaults (relevance: ``direct``, the record's own, where
    the declaration leaves it to be resolved from what is evaluated); the token counter's is the registry's."""
    made = EvalOptions()
    for s in OPTION_SETTINGS:
        expected = "direct" if s.name == "relevance" else _record_value(s)
        assert getattr(made, s.name) == expected, s.name
    assert next(s for s in SETTINGS if s.name == "tokenizer").default == DEFAULT_TOKEN_COUNTER


def test_every_setting_is_a_flag_a_parameter_and_a_grid_key() -> None:
    """Each declared setting has an ``eval`` flag the parser takes, and a top-level grid key the reader lists."""
    flags = {o for a in build_parser()._subparsers._group_actions[0].choices["eval"]._actions for o in a.option_strings}  # type: ignore[union-attr]
    keys = {f"{key.table}.{key.name}" for key in GRID_KEYS}
    for s in SETTINGS:
        assert s.flag in flags, s.flag
        assert (s.grid if "." in s.grid else f"grid.{s.grid}") in keys, s.grid


_GRID_VALUES = {
    "int": 6,
    "seconds": 30.5,
    "bool": True,
    "name": None,  # per setting below
    "text": None,
    "measures": ["nDCG@10"],
    "specs": ["openai[model=m]"],
}
_NAMED = {"relevance": '"provenance"', "baseline": '"bm25"', "attribution": '"exact"', "tokenizer": '"llama2"'}
_NAMED |= {"clock": '"conversation"'}


def _toml(s: Setting) -> str:
    if s.name in _NAMED:
        return _NAMED[s.name]
    value = _GRID_VALUES[s.kind]
    return json.dumps(value) if not isinstance(value, bool) else "true"


@pytest.mark.parametrize("s", [s for s in SETTINGS if s.kind != "path"], ids=lambda s: s.name)
def test_the_grid_accepts_every_setting_the_command_line_accepts(tmp_path: Path, s: Setting) -> None:
    """Generated from the declaration: a grid file setting any one setting at the top level is read, and the value
    reaches every task's options (the list-valued axes k, seeds and measures as the grid's own)."""
    reader = 'readers = ["openai[model=m]"]\n' if s.live and s.name != "readers" else ""  # the live ones need one
    table, _, key = s.grid.rpartition(".")
    line = f"{key} = {_toml(s)}\n"
    text = f'{reader}systems = ["bm25"]\n' + (f"[{table}]\n{line}" if table else line) + '[[collections]]\npath = "."\n'
    grid = parse_grid(text, base=tmp_path)
    if table:
        assert getattr(grid, table).to_dict()[key] == json.loads(_toml(s))
    elif s.grid in ("k", "seeds", "measures", "relevance"):
        assert getattr(grid, s.grid) not in ((5,), (7,), (), "direct")
    else:
        assert s.name in [name for name, _ in grid.settings]


@pytest.mark.parametrize("s", [s for s in SETTINGS if s.kind == "path"], ids=lambda s: s.name)
def test_a_grid_path_setting_is_found_from_the_grid_file(tmp_path: Path, s: Setting) -> None:
    """A path setting is read from the grid file's folder: a missing file is one line naming the key and line."""
    text = f'{s.grid} = "missing.txt"\nsystems = ["bm25"]\n[[collections]]\npath = "."\n'
    with pytest.raises(InputError, match=rf"^grid\.toml:1: {s.grid}: 'missing\.txt' does not exist"):
        parse_grid(text, base=tmp_path, source="grid.toml")


def test_relevance_is_a_value_with_its_modes_written_by_name() -> None:
    """``Relevance`` members are the modes; their text (str, f-string, JSON) is the mode's name, so every file
    that wrote ``"provenance"`` writes the same bytes."""
    assert [m.value for m in Relevance] == list(RELEVANCE_MODES) == ["direct", "provenance"]
    mode = EvalOptions(relevance="provenance").relevance
    assert mode is Relevance.PROVENANCE
    assert (str(mode), f"{mode}", json.dumps({"relevance": mode})) == (
        "provenance",
        "provenance",
        '{"relevance": "provenance"}',
    )


@pytest.mark.parametrize(
    ("given", "attributed", "expected"),
    [
        (None, True, Relevance.PROVENANCE),
        (None, False, Relevance.DIRECT),
        ("direct", True, Relevance.DIRECT),
        (Relevance.PROVENANCE, False, Relevance.PROVENANCE),
    ],
)
def test_the_relevance_default_is_resolved_in_one_function(given, attributed, expected) -> None:
    """Unset, relevance is provenance when memories are attributed, else direct; given, it is kept."""
    assert resolve_relevance(given, attributed=attributed) is expected


def test_direct_relevance_with_overlap_is_refused_by_the_record_naming_its_flags() -> None:
    """The record, which knows both settings, refuses an attribution that never makes a memory one entry under
    direct relevance, naming them as the surface does (here the command line's flags)."""
    names = {"attribution": "--attribution", "relevance": "--relevance"}
    with pytest.raises(ParameterError, match=r"^--attribution: 'overlap' \(str\) never makes a memory one entry"):
        EvalOptions(relevance="direct", attribution="overlap", names=names)


def test_lower_layers_are_told_what_a_mode_needs_not_its_name() -> None:
    """Attribution takes ``ranks_entries``, not a relevance mode, and no module below the evaluation compares a
    value with a mode's name."""
    assert "relevance" not in inspect.signature(attribute).parameters
    below = [REPO_ROOT / "agentmemory" / name for name in ("systems", "metrics", "datasets", "store", "retrievers")]
    for folder in below:
        for path in folder.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"[=!]= \"(direct|provenance)\"", text), path


def test_an_evaluation_keeps_its_options_once() -> None:
    """``Evaluation`` reads k, seed, relevance, lenient_run and as_of from its options (no field of their own)."""
    assert {"k", "seed", "relevance", "lenient_run", "as_of"}.isdisjoint(f.name for f in fields(Evaluation))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("fixtures/assistant-notes", "bm25,tags"),
        ("fixtures/beir-sample", "bm25"),
        ("fixtures/locomo-sample/locomo-sample.json", "bm25"),
        ("fixtures/longmemeval-sample/longmemeval-sample.json", "bm25"),
        ("fixtures/beam-sample", "bm25"),
    ],
)
def test_the_default_retrievers_fit_the_collection(path: str, expected: str) -> None:
    """The tag scorer is a default only where the queries carry tags (the shipped fixture); LoCoMo, LongMemEval,
    BEAM and a BEIR folder without query tags get bm25 alone, and the reason is the card's line."""
    collection = load(REPO_ROOT / path)
    names, why = default_retrievers(collection)
    assert names == expected
    assert why.startswith(f"retrievers {expected} (")
    evaluation = evaluate(collection, k=5)
    assert [r.name for r in evaluation.results] == expected.split(",")
    assert evaluation_card(evaluation)["defaults"] == [why]


def test_the_command_line_says_which_defaults_it_chose(capsys) -> None:
    """``agentmemory eval`` on the LoCoMo sample without --retrievers evaluates bm25 alone and says so on the card;
    naming the retrievers chooses nothing, and the card says nothing."""
    sample = str(REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json")
    assert main(["eval", "--collection", sample, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "- Defaults chosen: retrievers bm25 (the queries carry no tags, so the tag scorer is left out)\n" in out
    assert "| Tags" not in out
    assert main(["eval", "--collection", sample, "--retrievers", "bm25,tags", "--no-progress"]) == 0
    assert "Defaults chosen" not in capsys.readouterr().out


def test_a_grid_task_with_live_readers_fails_in_one_line(tmp_path: Path, capsys) -> None:
    """The grid reads the live settings, but a task evaluates one system: a task with readers fails in one line
    saying where live readers run, and the other outputs are written."""
    notes = (REPO_ROOT / "fixtures" / "assistant-notes").as_posix()
    grid = tmp_path / "grid.toml"
    grid.write_text(f'readers = ["openai[model=m]"]\nsystems = ["bm25"]\n[[collections]]\npath = "{notes}"\n')
    main(["experiment", str(grid), "--out", str(tmp_path / "out"), "--no-progress"])
    assert (
        "agentmemory: task failed: collection assistant-notes, system bm25, k 5, seed 7: grid: readers: a task "
        "evaluates one system, so live readers run with agentmemory eval --reader\n"
    ) in capsys.readouterr().err
