"""The format registry and load(): declarations, detection, option checks, run-time and entry-point formats."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import memlist_format
import pytest

from agentmemory import MemoryEntry, load
from agentmemory.datasets import (
    BUILTIN_FORMATS,
    FORMATS,
    Format,
    FormatOption,
    detect_format,
    register_format,
)
from agentmemory.datasets.locomo import load_locomo
from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BEIR = FIXTURES / "beir-sample"
LOCOMO = FIXTURES / "locomo-sample" / "locomo-sample.json"
BEIR_RULE = "beir: a folder holding corpus.jsonl"
LOCOMO_RULE = "locomo: a .json file whose top-level object, or first list item, has the keys 'conversation' and 'qa'"
LONGMEMEVAL_RULE = (
    "longmemeval: a .json file whose first list item, or top-level object, has the keys 'question_id' and "
    "'haystack_sessions'"
)
LONGMEMEVAL = FIXTURES / "longmemeval-sample" / "longmemeval-sample.json"
NAMES = ", ".join(sorted(FORMATS.names()))
"""The registered formats, as every list of them in a message reads: from the registry, never by hand."""
BEAM_RULE = (
    "beam: a folder holding chat.json and probing_questions/probing_questions.json, or one of whose subfolders does"
)


@pytest.fixture
def memlist(tmp_path: Path):
    """The memlist format (tests/datasets/memlist_format.py) registered for one test, and a file of it."""
    with memlist_format.registered(tmp_path) as path:
        yield path


# -- the built-in declarations ------------------------------------------------------------------------


def test_builtin_declarations():
    """beir declares split; locomo repair, include_captions and granularity; longmemeval granularity, all_turns,
    user_turns_only and repair; all in detection order, with rules."""
    assert BUILTIN_FORMATS == ("beir", "locomo", "longmemeval", "beam")
    assert FORMATS.names() == sorted(BUILTIN_FORMATS)
    assert FORMATS["beir"].options == (
        FormatOption("split", str, "test", "the judgments file to read, qrels/<split>.tsv"),
    )
    assert FORMATS["locomo"].options == (
        FormatOption("repair", bool, False, "split and normalise malformed evidence ids, listing every change"),
        FormatOption("include_captions", bool, False, "append each turn's image caption to its text"),
        FormatOption(
            "granularity",
            str,
            "turn",
            "one entry per turn (the default) or per session, its turns joined: turn or session",
        ),
    )
    assert FORMATS["longmemeval"].options == (
        FormatOption(
            "granularity", str, "session", "one entry per haystack session (the default) or per turn: session or turn"
        ),
        FormatOption(
            "all_turns", bool, False, "index the assistant's turns too (the official harness indexes the user's)"
        ),
        FormatOption("user_turns_only", bool, False, "index the user's turns only (the default, stated explicitly)"),
        FormatOption("repair", bool, False, "repair malformed questions where unambiguous, listing every change"),
    )
    assert [f"{n}: {FORMATS[n].rule}" for n in BUILTIN_FORMATS] == [BEIR_RULE, LOCOMO_RULE, LONGMEMEVAL_RULE, BEAM_RULE]
    assert FORMATS["beir"].takes_progress and FORMATS["locomo"].takes_progress
    assert FORMATS["longmemeval"].takes_progress


# -- detection -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path,expected",
    [(BEIR, "beir"), (LOCOMO, "locomo"), (FIXTURES / "assistant-notes", "beir"), (LONGMEMEVAL, "longmemeval")],
)
def test_detect_builtin(path, expected):
    """A folder holding corpus.jsonl is beir; the LoCoMo sample is locomo; the LongMemEval sample is longmemeval."""
    assert detect_format(path) == expected


def test_detect_json_suffix_any_case(tmp_path):
    """The .json suffix is matched case-insensitively."""
    path = tmp_path / "LOCOMO10.JSON"
    shutil.copy(LOCOMO, path)
    assert detect_format(path) == "locomo"
    assert len(load(path).entries) == 33


CONVERSATION = {"sample_id": "s1", "conversation": {}, "qa": []}


@pytest.mark.parametrize(
    "text,is_locomo",
    [
        (json.dumps([CONVERSATION]), True),
        (json.dumps(CONVERSATION), True),  # one conversation object
        (json.dumps({"qa": [{"conversation": 1}] * 50, "x": "}]", "conversation": {}}), True),  # keys after values
        ("\ufeff" + json.dumps([CONVERSATION]), True),  # a byte-order mark
        ('[{"q\\u0061": [], "conversation": {}}]', True),  # an escaped key
        (json.dumps([{"question_id": "q1", "haystack_sessions": [], "question": "?"}]), "longmemeval"),
        (json.dumps({"haystack_sessions": [[{"qa": 1}]] * 30, "question_id": "q1"}), "longmemeval"),  # one object
        (json.dumps([{"question_id": "q1", "haystack": []}]), False),  # not the LongMemEval keys
        (json.dumps([{"x": {"conversation": {}, "qa": []}}]), False),  # the keys one level too deep
        (json.dumps([{"qa": []}, CONVERSATION]), False),  # only the first record counts
        (json.dumps([[CONVERSATION]]), False),
        (json.dumps(["conversation", "qa"]), False),
        (json.dumps({"conversation": {}}), False),
        ("[]", False),
        ("", False),
        ('[{"conversation": {}, "qa', False),  # cut off inside a key
        ("not json at all", False),
    ],
)
def test_locomo_recogniser_reads_the_first_record(tmp_path, text, is_locomo):
    """locomo (and longmemeval) are detected from the keys of the file's first record, not from the suffix alone."""
    path = tmp_path / "data.json"
    path.write_text(text, encoding="utf-8")
    if is_locomo:
        assert detect_format(path) == ("locomo" if is_locomo is True else is_locomo)
    else:
        with pytest.raises(ParameterError, match="cannot tell the format"):
            detect_format(path)


@pytest.mark.parametrize("name", ["data.txt", "folder"])
def test_unrecognised_path_lists_every_rule(tmp_path, name):
    """A path no format recognises (a .txt file, a folder without corpus.jsonl) gets one line with every rule."""
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    else:
        path.write_text("hello", encoding="utf-8")
    expected = (
        f"format: 'auto' (str) cannot tell the format of {str(path)!r}; "
        f"{BEIR_RULE}; {LOCOMO_RULE}; {LONGMEMEVAL_RULE}; {BEAM_RULE}; pass format= one of: {NAMES}"
    )
    with pytest.raises(ParameterError) as info:
        load(path)
    assert str(info.value) == expected


def test_a_folder_holding_one_json_collection_names_the_file(tmp_path, capsys):
    """A folder holding one .json file a format recognises (the LoCoMo sample's folder): the message names the file
    to pass, in the caller's words (path= in Python, --collection on the command line, collection = in a notebook);
    a format error on the command line names --format."""
    from agentmemory.cli.app import main

    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "conv.json").write_bytes(LOCOMO.read_bytes())
    with pytest.raises(ParameterError) as info:
        detect_format(folder)
    assert str(info.value) == (
        f"path: {str(folder)!r} (str) is a folder holding one .json file, 'conv.json', which is a locomo collection; "
        f"pass the file: path={(folder / 'conv.json').as_posix()!r}"
    )
    assert main(["eval", "--collection", str(folder)]) == 2
    assert capsys.readouterr().err == (
        f"agentmemory: error: --collection: {str(folder)!r} (str) is a folder holding one .json file, 'conv.json', "
        f"which is a locomo collection; pass the file: --collection {(folder / 'conv.json').as_posix()}\n"
    )
    (folder / "other.json").write_text("{}", encoding="utf-8")  # two .json files: no guess
    assert main(["eval", "--collection", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agentmemory: error: --format: 'auto' (str) cannot tell the format of {str(folder)!r}; ")
    assert err.endswith(f"; pass --format one of: {NAMES}\n") and "format=" not in err


def test_missing_path(tmp_path):
    """A missing path raises MissingFileError naming it."""
    path = tmp_path / "nowhere"
    with pytest.raises(MissingFileError, match=f"^{re.escape(f'{path}: no such collection file or folder')}$"):
        load(path)


@pytest.mark.parametrize("value", ["trec", "BEIR", "", None])
def test_unknown_format(value):
    """An unknown format names the value, its type and every valid choice."""
    expected = f"format: {value!r} ({type(value).__name__}) is not a known name; choose from: auto, {NAMES}"
    with pytest.raises(UnknownNameError) as info:
        load(BEIR, format=value)
    assert str(info.value) == expected


def test_explicit_format_mismatch():
    """Forcing a format on the wrong kind of path fails in that format's reader, naming the path."""
    with pytest.raises(InputError, match=re.escape(f"{LOCOMO}: is not a folder;")):
        load(LOCOMO, format="beir")
    with pytest.raises(
        InputError, match=re.escape(f"{BEIR}: is a folder; expected a LoCoMo JSON file (e.g. locomo10.json)")
    ):
        load(BEIR, format="locomo")


def test_load_locomo_dispatch_matches_load_locomo():
    """load() on the LoCoMo file gives exactly what load_locomo gives, options passed through."""
    for options in ({}, {"repair": True}, {"include_captions": True}):
        assert load(LOCOMO, **options) == load_locomo(LOCOMO, **options)
    assert load(LOCOMO, "locomo", repair=True) == load_locomo(LOCOMO, repair=True)


# -- options against the declaration -------------------------------------------------------------------


@pytest.mark.parametrize(
    "path,options,message",
    [
        (
            BEIR,
            {"repair": True},
            "repair: True (bool) is not an option of the beir format; "
            "the beir format takes: split (repair is an option of: beam, locomo, longmemeval)",
        ),
        (
            BEIR,
            {"include_captions": False},  # even at the other format's default
            "include_captions: False (bool) is not an option of the beir format; "
            "the beir format takes: split (include_captions is an option of: locomo)",
        ),
        (
            LOCOMO,
            {"split": "test"},
            "split: 'test' (str) is not an option of the locomo format; "
            "the locomo format takes: repair, include_captions, granularity (split is an option of: beir)",
        ),
        (
            LOCOMO,
            {"repiar": True},
            "repiar: True (bool) is not an option of the locomo format; the locomo format takes: repair, "
            "include_captions, granularity",
        ),
        (BEIR, {"split": 1}, "split: 1 (int) is not a string; pass a string, e.g. split='test'"),
        (LOCOMO, {"repair": "yes"}, "repair: 'yes' (str) is not a bool; pass repair=True or repair=False"),
        (
            LOCOMO,
            {"include_captions": 1},
            "include_captions: 1 (int) is not a bool; pass include_captions=True or include_captions=False",
        ),
        (
            BEIR,
            {"split": "../test"},
            "split: '../test' (str) is not a split name; a split names a file qrels/<split>.tsv, e.g. 'test' or 'dev'",
        ),
        (
            BEIR,
            {"split": ""},
            "split: '' (str) is not a split name; a split names a file qrels/<split>.tsv, e.g. 'test' or 'dev'",
        ),
        (BEIR, {"progress": "yes"}, "progress: 'yes' (str) is not a bool; pass progress=True or progress=False"),
    ],
)
def test_options_are_checked_against_the_declaration(path, options, message):
    """An option the format does not declare, or a value of the wrong type, is refused with one exact message."""
    with pytest.raises(ParameterError) as info:
        load(path, **options)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "option,value,expected",
    [
        (FormatOption("n", int, 0, "h"), 3, 3),
        (FormatOption("x", float, 0.5, "h"), 2, 2.0),
        (FormatOption("x", float, 0.5, "h"), 0.25, 0.25),
        (FormatOption("s", str, "a", "h"), "b", "b"),
        (FormatOption("b", bool, False, "h"), True, True),
    ],
)
def test_option_check_accepts(option, value, expected):
    """Values of the declared type pass (an int where a float is declared becomes a float)."""
    checked = option.check(value)
    assert checked == expected and type(checked) is type(expected)


@pytest.mark.parametrize(
    "option,value,message",
    [
        (FormatOption("n", int, 0, "h"), True, "n: True (bool) is not an integer; pass an integer, e.g. n=0"),
        (FormatOption("n", int, 0, "h"), 1.5, "n: 1.5 (float) is not an integer; pass an integer, e.g. n=0"),
        (FormatOption("x", float, 0.5, "h"), False, "x: False (bool) is not a number; pass a number, e.g. x=0.5"),
        (FormatOption("x", float, 0.5, "h"), "1", "x: '1' (str) is not a number; pass a number, e.g. x=0.5"),
    ],
)
def test_option_check_refuses(option, value, message):
    """A bool is never an int or a float option's value; text is never a number."""
    with pytest.raises(ParameterError) as info:
        option.check(value)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "option,text,expected",
    [
        (FormatOption("b", bool, False, "h"), "true", True),
        (FormatOption("b", bool, False, "h"), "Yes", True),
        (FormatOption("b", bool, False, "h"), "on", True),
        (FormatOption("b", bool, False, "h"), "1", True),
        (FormatOption("b", bool, True, "h"), "FALSE", False),
        (FormatOption("b", bool, True, "h"), "no", False),
        (FormatOption("b", bool, True, "h"), "off", False),
        (FormatOption("b", bool, True, "h"), "0", False),
        (FormatOption("n", int, 0, "h"), "12", 12),
        (FormatOption("n", int, 0, "h"), "-12", -12),
        (FormatOption("x", float, 0.0, "h"), "1e-3", 0.001),
        (FormatOption("s", str, "", "h"), " keep spaces ", " keep spaces "),
    ],
)
def test_option_parse_reads_text_with_the_declared_type(option, text, expected):
    """Command-line text becomes a value of the declared type."""
    assert option.parse(text) == expected


@pytest.mark.parametrize(
    "option,text,message",
    [
        (
            FormatOption("b", bool, False, "h"),
            "maybe",
            "b: 'maybe' (str) is not a bool; write true or false (or yes/no, on/off, 1/0)",
        ),
        *(
            (
                FormatOption("n", int, 0, "h"),
                text,
                f"n: {text!r} (str) is not an integer; write an integer (an optional sign and ASCII digits), e.g. 0",
            )
            for text in ("2.5", " 12 ", "1_0", "\uff11", "\u0663", "+", "0x10", "")
        ),
        *(
            (
                FormatOption("x", float, 0.5, "h"),
                text,
                f"x: {text!r} (str) is not a number; write a number (ASCII digits with an optional sign, "
                "decimal point and exponent, or inf), e.g. 0.5",
            )
            for text in ("half", "1_0.5", "\uff11.5", " 0.5", "nan", "0x1p3", "1e")
        ),
    ],
)
def test_option_parse_refuses(option, text, message):
    """Text that is not a value of the declared type is refused naming the option."""
    with pytest.raises(ParameterError) as info:
        option.parse(text)
    assert str(info.value) == message


# -- a format registered at run time -------------------------------------------------------------------


def test_runtime_format_is_detected_inside_a_json_file_and_loaded(memlist):
    """A run-time format whose recogniser looks inside a .json file is detected by auto and loaded by load."""
    assert detect_format(memlist) == "memlist"
    assert detect_format(LOCOMO) == "locomo"  # both are .json files: their first records tell them apart
    collection = load(memlist)
    assert [e.id for e in collection.entries] == ["m1", "m2", "m3"]
    assert collection.entry("m2").text == "Maya swims at the LAKE on Sundays"
    assert load(memlist, lowercase=True, limit=2).entries == (
        MemoryEntry("m1", "maya is vegetarian"),
        MemoryEntry("m2", "maya swims at the lake on sundays"),
    )


def test_runtime_format_options_and_names(memlist):
    """Its own declaration checks its options; every message lists the live names."""
    with pytest.raises(ParameterError) as info:
        load(memlist, limit="2")
    assert str(info.value) == "limit: '2' (str) is not an integer; pass an integer, e.g. limit=0"
    with pytest.raises(ParameterError) as info:
        load(memlist, split="dev")
    assert str(info.value) == (
        "split: 'dev' (str) is not an option of the memlist format; "
        "the memlist format takes: lowercase, limit (split is an option of: beir)"
    )
    with pytest.raises(UnknownNameError) as info:
        load(memlist, format="mem")
    with_memlist = ", ".join(sorted(FORMATS.names()))  # memlist registered by the fixture
    assert "memlist" in with_memlist
    assert str(info.value) == f"format: 'mem' (str) is not a known name; choose from: auto, {with_memlist}"
    path = memlist.with_suffix(".txt")
    path.write_text("x")
    with pytest.raises(ParameterError) as info:
        load(path)
    assert str(info.value).endswith(
        f"; {BEIR_RULE}; {LOCOMO_RULE}; {LONGMEMEVAL_RULE}; {BEAM_RULE}; memlist: {memlist_format.RULE}; "
        f"pass format= one of: {with_memlist}"
    )


def test_registering_a_taken_name_needs_replace(memlist):
    """A taken name is refused unless replace=True; the replacement is what load then uses."""
    with pytest.raises(ParameterError) as info:
        register_format("memlist", None, memlist_format.read, memlist_format.OPTIONS, description="again")
    assert str(info.value) == (
        "format name: 'memlist' (str) is already registered; "
        "pass replace=True to replace the registered format, or choose another name"
    )
    with pytest.raises(ParameterError, match="^format name: 'beir' \\(str\\) is already registered"):
        register_format("beir", None, memlist_format.read, description="not beir")
    replaced = register_format(
        "memlist", None, memlist_format.read, memlist_format.OPTIONS, description="by name only", replace=True
    )
    assert FORMATS["memlist"] is replaced and replaced.recognise is None
    with pytest.raises(ParameterError, match="memlist: never detected, choose it by name; pass format="):
        detect_format(memlist)
    assert len(load(memlist, "memlist").entries) == 3


def test_a_format_without_options_says_so(tmp_path):
    """A format that declares no option says it takes none."""
    register_format("bare", None, lambda path: memlist_format.read(path, lowercase=False, limit=0), description="bare")
    try:
        path = tmp_path / "x.json"
        path.write_text(json.dumps(memlist_format.DOCUMENT))
        assert len(load(path, "bare").entries) == 3
        with pytest.raises(ParameterError) as info:
            load(path, "bare", limit=1)
        assert str(info.value) == "limit: 1 (int) is not an option of the bare format; the bare format takes no options"
    finally:
        FORMATS.unregister("bare")


def test_progress_reaches_only_readers_that_take_it(tmp_path):
    """load passes progress to read only when read has a parameter of that name."""
    seen = []

    def read(path, *, progress):
        seen.append(progress)
        return memlist_format.read(path, lowercase=False, limit=0)

    register_format("withbar", None, read, description="reads with a bar")
    try:
        path = tmp_path / "x.json"
        path.write_text(json.dumps(memlist_format.DOCUMENT))
        load(path, "withbar", progress=True)
        load(path, "withbar")
        assert seen == [True, False]
    finally:
        FORMATS.unregister("withbar")


def test_read_must_return_a_collection(tmp_path):
    """A reader returning anything but a Collection is an error naming the format."""
    register_format("broken", None, lambda path: {"entries": []}, description="returns a dict")
    try:
        with pytest.raises(ParameterError) as info:
            load(tmp_path, "broken")
        assert str(info.value) == (
            "format: 'broken' (str) has a read function that returned dict, not a Collection; "
            "a format's read must return an agentmemory.Collection"
        )
    finally:
        FORMATS.unregister("broken")


def _fmt(**changes) -> Format:
    fields = {
        "name": "x",
        "recognise": None,
        "read": memlist_format.read,
        "options": (),
        "description": "d",
        "rule": None,
    }
    return Format(**{**fields, **changes})


@pytest.mark.parametrize(
    "name,obj,message",
    [
        (
            "x",
            {"read": 1},
            "format 'x': {'read': 1} (dict) is not a Format record; register a agentmemory.datasets.Format, or call register_format(name, recognise, read, options, ...)",
        ),
        (
            "auto",
            _fmt(name="auto"),
            "format name: 'auto' (str) is reserved; 'auto' asks for detection; choose another name",
        ),
        ("x", _fmt(name="y"), "format 'x' name: 'y' (str) differs from the name it is registered under; name it 'x'"),
        (
            "x",
            _fmt(recognise=3),
            "format 'x' recognise: 3 (int) is not callable; pass a function path -> bool, or None",
        ),
        ("x", _fmt(read=None), "format 'x' read: None (NoneType) is not callable; pass a function path -> Collection"),
        (
            "x",
            _fmt(options="split"),
            "format 'x' options: 'split' (str) is not a sequence; pass a tuple of FormatOption records",
        ),
        (
            "x",
            _fmt(options=({"name": "n"},)),
            "format 'x' option: {'name': 'n'} (dict) is not a FormatOption; declare each option as FormatOption(name, type, default, help)",
        ),
        (
            "x",
            _fmt(options=(("progress", bool, False, "h"),)),
            "format 'x' option name: 'progress' (str) is not a usable keyword; use a Python identifier other than format, path, progress",
        ),
        (
            "x",
            _fmt(options=(("max-len", int, 0, "h"),)),
            "format 'x' option name: 'max-len' (str) is not a usable keyword; use a Python identifier other than format, path, progress",
        ),
        (
            "x",
            _fmt(options=(("n", list, [], "h"),)),
            "format 'x' option n type: <class 'list'> (type) is not a supported option type; declare one of: bool, int, float, str",
        ),
        (
            "x",
            _fmt(options=(("n", int, "0", "h"),)),
            "format 'x' option n default: '0' (str) is not an integer; declare a default of the option's type, int",
        ),
        (
            "x",
            _fmt(options=(("n", int, 0, ""),)),
            "format 'x' option n help: '' (str) is not one line of text; give the help as a non-empty one-line string",
        ),
        (
            "x",
            _fmt(options=(("n", int, 0, "h"), ("n", int, 1, "h"))),
            "format 'x' options: 'n' (str) is declared twice; declare each option once",
        ),
        (
            "x",
            _fmt(description=""),
            "format 'x' description: '' (str) is not one line of text; give the description as a non-empty one-line string",
        ),
        (
            "x",
            _fmt(recognise=memlist_format.recognise),
            "format 'x' rule: None (NoneType) is not one line of text; give the rule recognise applies (e.g. 'a folder holding corpus.jsonl') as a non-empty one-line string",
        ),
        (
            "x",
            _fmt(recognise=memlist_format.recognise, rule="two\nlines"),
            "format 'x' rule: 'two\\nlines' (str) is not one line of text; give the rule recognise applies (e.g. 'a folder holding corpus.jsonl') as a non-empty one-line string",
        ),
        (
            "x y",
            _fmt(name="x y"),
            "format name: 'x y' (str) is not a valid name; use letters, digits, '_', '.', '+' and '-' (no brackets, commas, colons, '=' or spaces), starting with a letter, a digit or '_'",
        ),
    ],
)
def test_incomplete_declarations_are_refused(name, obj, message):
    """Registering a format checks the whole declaration; nothing half-declared reaches the registry."""
    with pytest.raises(ParameterError) as info:
        FORMATS.register(name, obj)
    assert str(info.value) == message
    assert name not in FORMATS.registered()


def test_option_tuples_become_records():
    """Options may be declared as (name, type, default, help) tuples; the registry stores FormatOption records."""
    stored = FORMATS.register("tuples", _fmt(name="tuples", options=(("n", int, 0, "how many"),)))
    try:
        assert stored.options == (FormatOption("n", int, 0, "how many"),)
    finally:
        FORMATS.unregister("tuples")


# -- a format from an installed package (entry point) ---------------------------------------------------


class _EntryPoint:
    def __init__(self, name: str, value: str, obj: object) -> None:
        self.name, self.value, self._obj = name, value, obj
        self.loads = 0

    def load(self) -> object:
        self.loads += 1
        return self._obj


def test_entry_point_format_is_detected_after_the_registered_ones(monkeypatch, tmp_path):
    """An installed format is listed without loading, loaded only when nothing registered recognises the path."""
    import importlib.metadata

    record = Format(
        "memlist-ep",
        memlist_format.recognise,
        memlist_format.read,
        memlist_format.OPTIONS,
        "a JSON file of memories and questions",
        "a .json file with 'memories' and 'questions'",
    )
    point = _EntryPoint("memlist-ep", "memlist_pkg:FORMAT", record)
    real = importlib.metadata.entry_points

    def entry_points(**kwargs):
        return [point] if kwargs.get("group") == "agentmemory.formats" else real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    try:
        assert FORMATS.names() == sorted([*BUILTIN_FORMATS, "memlist-ep"])
        assert detect_format(LOCOMO) == "locomo" and point.loads == 0
        path = tmp_path / "notes.json"
        path.write_text(json.dumps(memlist_format.DOCUMENT))
        assert detect_format(path) == "memlist-ep" and point.loads == 1
        assert len(load(path, limit=2).entries) == 2
    finally:
        if "memlist-ep" in FORMATS.registered():
            FORMATS.unregister("memlist-ep")
