"""The command line's collection options: generated from the format declarations, --format-option, one-line errors.

Everything runs ``agentmemory.cli.app.main`` in-process.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import memlist_format
import pytest

import agentmemory.cli.app as cli
from agentmemory.cli.app import main
from agentmemory.datasets import BUILTIN_FORMATS, FORMATS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BEIR = FIXTURES / "beir-sample"
LOCOMO = FIXTURES / "locomo-sample" / "locomo-sample.json"
COMMANDS = ("eval", "retrieve")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = cli._build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")]


@pytest.mark.parametrize("command", COMMANDS)
def test_flags_come_from_the_builtin_declarations(command):
    """eval and retrieve get one flag per built-in format option, named after it, its help naming each format
    that declares it with that format's own help."""
    parser = _subparsers()[command]
    helps = {s: a.help for a in parser._actions for s in a.option_strings}
    declared: dict[str, list] = {}
    for f in BUILTIN_FORMATS:
        for o in FORMATS[f].options:
            declared.setdefault(o.name, []).append((f, o))
    assert sorted(declared) == [
        "all_turns",
        "granularity",
        "include_captions",
        "repair",
        "split",
        "updates",
        "user_turns_only",
    ]
    for name, users in declared.items():
        flag = "--" + name.replace("_", "-")
        assert helps[flag].startswith("; ".join(f"{fmt} format: {option.help}" for fmt, option in users))
    assert "--format-option" in helps


def test_help_lists_every_collection_option(capsys):
    """`agentmemory eval --help` shows every generated flag with its format, and --format-option."""
    with pytest.raises(SystemExit) as info:
        main(["eval", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for piece in (
        "--split SPLIT beir format: the judgments file to read, qrels/<split>.tsv (default test)",
        "--repair locomo format: split and normalise malformed evidence ids, listing every change; "
        "longmemeval format: repair malformed questions where unambiguous, listing every change",
        "--granularity GRANULARITY locomo format: one entry per turn (the default) or per session, its turns joined: "
        "turn or session; longmemeval format: one entry per haystack session (the default) or per turn: session or "
        "turn --all-turns",
        "--all-turns longmemeval format: index the assistant's turns too (the official harness indexes the user's)",
        "--user-turns-only longmemeval format: index the user's turns only (the default, stated explicitly)",
        "--include-captions locomo format: append each turn's image caption to its text",
        "--format-option KEY=VALUE an option of the chosen format",
        "--format NAME collection format: auto (default) or one of " + ", ".join(sorted(FORMATS.names())),
    ):
        assert piece in text


def test_module_usage_lists_every_option():
    """The usage in agentmemory.cli.app's docstring names every option of every subcommand."""
    usage = cli.__doc__
    missing = {name: [o for o in _options(p) if o not in usage] for name, p in _subparsers().items()}
    assert missing == {name: [] for name in missing}
    assert "--version" in usage


def _eval(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "out" / "eval-results.json"
    assert main(["eval", "--out", str(out), *args]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_runtime_format_is_detected_by_eval(tmp_path, capsys):
    """A format registered at run time, recognised inside a .json file, is loaded by `eval --collection`."""
    with memlist_format.registered(tmp_path) as path:
        artifact = _eval(tmp_path, "--collection", str(path), "--k", "2", "--retrievers", "bm25")
        assert (artifact["collection"]["name"], artifact["collection"]["entries"]) == ("notes", 3)
        assert "Collection notes: 3 entries, 1 judged queries; k = 2, seed = 7" in capsys.readouterr().out
        args = ("--format-option", "limit=2", "--format-option", "lowercase=yes")
        artifact = _eval(tmp_path, "--collection", str(path), "--retrievers", "bm25", *args)
        assert artifact["collection"]["entries"] == 2


def test_a_flag_and_format_option_are_the_same(tmp_path):
    """`--split dev` and `--format-option split=dev` write the same artifact, unlike the default split."""
    by_flag = _eval(tmp_path, "--collection", str(BEIR), "--split", "dev")
    by_option = _eval(tmp_path, "--collection", str(BEIR), "--format-option", "split=dev")
    default = _eval(tmp_path, "--collection", str(BEIR))
    assert by_flag == by_option != default
    assert sorted(by_flag["collection"]["files"]) == ["corpus.jsonl", "qrels/dev.tsv", "queries.jsonl"]


def test_retrieve_takes_every_locomo_option(tmp_path, capsys):
    """retrieve has --include-captions too (its options are generated, not hand-listed)."""
    out = tmp_path / "run.trec"
    args = ["retrieve", "--collection", str(LOCOMO), "--repair", "--include-captions", "--out", str(out)]
    assert main(args) == 0
    assert capsys.readouterr().out.startswith(f"Wrote {out}: 14 queries")


SPLIT_TAKEN = "the beir format takes: split"
ERRORS = [
    pytest.param(
        ["--format-option", "split"],
        "--format-option: 'split' (str) is not KEY=VALUE; write e.g. --format-option split=test "
        "(the beir format takes: split)",
        id="no-equals",
    ),
    pytest.param(
        ["--format-option", "=dev"],
        "--format-option: '=dev' (str) is not KEY=VALUE; write e.g. --format-option split=test "
        "(the beir format takes: split)",
        id="no-key",
    ),
    pytest.param(
        ["--collection", str(LOCOMO), "--format-option", "repair"],
        "--format-option: 'repair' (str) is not KEY=VALUE; write e.g. --format-option repair=true "
        "(the locomo format takes: repair, include_captions, granularity)",
        id="no-equals-locomo",
    ),
    pytest.param(
        ["--collection", str(LOCOMO), "--format-option", "repair=maybe"],
        "--format-option repair: 'maybe' (str) is not a bool; write true or false (or yes/no, on/off, 1/0)",
        id="not-a-bool",
    ),
    pytest.param(
        ["--format-option", "colour=red"],
        f"colour: 'red' (str) is not an option of the beir format; {SPLIT_TAKEN}",
        id="unknown-key",
    ),
    pytest.param(
        ["--format-option", "repair=true"],  # the text as given: beir declares no type for it
        f"repair: 'true' (str) is not an option of the beir format; {SPLIT_TAKEN} (repair is an option of: beam, locomo, longmemeval)",
        id="option-of-another-format",
    ),
    pytest.param(
        ["--split", "dev", "--format-option", "split=test"],
        "--format-option: 'split=test' (str) sets split a second time; give each option of the beir format once",
        id="flag-and-option",
    ),
    pytest.param(
        ["--format-option", "split=a", "--format-option", "split=b"],
        "--format-option: 'split=b' (str) sets split a second time; give each option of the beir format once",
        id="option-twice",
    ),
    pytest.param(
        ["--repair"],
        f"repair: True (bool) is not an option of the beir format; {SPLIT_TAKEN} (repair is an option of: beam, locomo, longmemeval)",
        id="flag-of-another-format",
    ),
    pytest.param(
        ["--collection", str(LOCOMO), "--split", "dev"],
        "split: 'dev' (str) is not an option of the locomo format; the locomo format takes: repair, "
        "include_captions, granularity (split is an option of: beir)",
        id="split-on-locomo",
    ),
    pytest.param(
        ["--split", "../x"],
        "split: '../x' (str) is not a split name; a split names a file qrels/<split>.tsv, e.g. 'test' or 'dev'",
        id="bad-split",
    ),
    pytest.param(
        ["--format", "csv"],
        "--format: 'csv' (str) is not a known name; choose from: auto, " + ", ".join(sorted(FORMATS.names())),
        id="unknown-format",
    ),
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("args", "message"), ERRORS)
def test_collection_option_errors(tmp_path, monkeypatch, capsys, command, args, message):
    """A bad format or format option: exit 2, one stderr line, nothing on stdout, no output file."""
    monkeypatch.chdir(tmp_path)
    assert main([command, "--out", "x.out", *args]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"agentmemory: error: {message}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--format-option", "limit=two"],
            "--format-option limit: 'two' (str) is not an integer; write an integer (an optional sign and ASCII digits), e.g. 0",
        ),
        (
            ["--format-option", "lowercase=2"],
            "--format-option lowercase: '2' (str) is not a bool; write true or false (or yes/no, on/off, 1/0)",
        ),
        (
            ["--split", "dev"],
            "split: 'dev' (str) is not an option of the memlist format; the memlist format takes: lowercase, limit (split is an option of: beir)",
        ),
    ],
)
def test_runtime_format_option_errors(tmp_path, capsys, args, message):
    """A run-time format's options are read with its own declared types."""
    with memlist_format.registered(tmp_path) as path:
        out = tmp_path / "out.json"
        assert main(["eval", "--collection", str(path), "--out", str(out), *args]) == 2
    assert capsys.readouterr().err == f"agentmemory: error: {message}\n"
    assert not out.exists()


def test_locomo_session_granularity_from_the_command_line(tmp_path, capsys):
    """`agentmemory eval --granularity session` on LoCoMo: session entries and gold, recorded in the artifact."""
    out = tmp_path / "eval.json"
    argv = ["eval", "--collection", str(LOCOMO), "--granularity", "session", "--retrievers", "bm25"]
    assert main([*argv, "--metrics", "sess.recall_any@2", "--out", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["collection"]["settings"] == {"granularity": "session"}
    assert data["collection"]["entries"] == 6 and data["collection"]["judged_queries"] == 8
    capsys.readouterr()
    assert main(["eval", "--collection", str(LOCOMO), "--granularity", "sentence"]) == 2
    assert capsys.readouterr().err == (
        "agentmemory: error: granularity: 'sentence' (str) is not a known name; choose from: session, turn\n"
    )
