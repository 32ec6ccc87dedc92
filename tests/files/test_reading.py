"""Reading inputs: what a path is, and JSON read strictly with the file, line and field of every problem."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from agentmemory.errors import InputError, MissingFileError
from agentmemory.files.reading import decode_utf8, json_lines, parse_json, path_kind, read_bytes


def _exact(text: str) -> str:
    return f"^{re.escape(text)}$"


# -- what a path is ---------------------------------------------------------------------------


def _make(kind: str, path: Path) -> None:
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "loop":
        path.symlink_to(path.name)
    elif kind == "dangling":
        path.symlink_to("gone.jsonl")
    elif kind == "chain-loop":
        (path.parent / "a").symlink_to("b")
        (path.parent / "b").symlink_to("a")
        path.symlink_to("a")


@pytest.mark.parametrize(
    ("kind", "described"),
    [
        ("fifo", "a named pipe (FIFO)"),
        ("loop", "a symbolic link loop"),
        ("chain-loop", "a symbolic link loop"),
        ("dangling", "a symbolic link to the missing 'gone.jsonl'"),
    ],
)
def test_path_kind_says_what_is_there(tmp_path: Path, kind: str, described: str) -> None:
    """A FIFO, a link loop and a dangling link are described, never called 'no such file'."""
    path = tmp_path / "corpus.jsonl"
    _make(kind, path)
    assert path_kind(path) == described
    with pytest.raises(InputError, match=_exact(f"{path}: is {described}; expected a file")):
        read_bytes(path)


def test_read_bytes_refuses_a_folder_and_names_a_missing_file(tmp_path: Path) -> None:
    """A folder is 'a folder'; only a path with nothing there is 'no such file'."""
    (tmp_path / "dir").mkdir()
    assert path_kind(tmp_path / "dir") is None
    with pytest.raises(InputError, match=_exact(f"{tmp_path / 'dir'}: is a folder; expected a run file")):
        read_bytes(tmp_path / "dir", "run file")
    with pytest.raises(MissingFileError, match=_exact(f"{tmp_path / 'nope'}: no such file")):
        read_bytes(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(MissingFileError, match=_exact(f"{tmp_path / 'file' / 'child'}: no such file")):
        read_bytes(tmp_path / "file" / "child")


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    """Opening a FIFO would wait for a writer forever; read_bytes refuses it from its mode alone."""
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(InputError, match="is a named pipe"):
        read_bytes(tmp_path / "pipe")  # returns at once: the test would hang otherwise


def test_decode_names_the_line_of_the_first_bad_byte(tmp_path: Path) -> None:
    """Invalid UTF-8 names its line."""
    with pytest.raises(InputError, match=_exact("f.jsonl:3: is not valid UTF-8")):
        decode_utf8("f.jsonl", b"a\nb\nc\xff\n")


# -- strict JSON --------------------------------------------------------------------------------

DEEP = 100_000


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"_id": ' + "1" * 5000 + "}", "_id is an integer of 5,000 digits; JSON integers here may have at most 4,300"),
        (
            '{"_id": "a", "meta": {"n": -' + "2" * 4301 + "}}",
            "meta.n is an integer of 4,301 digits; JSON integers here may have at most 4,300",
        ),
        ('{"_id": "a", "x": [1, NaN]}', "x[1] is NaN, which is not a JSON number; expected a number or a string"),
        ('{"s": Infinity}', "s is Infinity, which is not a JSON number; expected a number or a string"),
        (
            '{"a b": {"c": -Infinity}}',
            "['a b'].c is -Infinity, which is not a JSON number; expected a number or a string",
        ),
        (
            '{"text": ' + "[" * DEEP + "]" * DEEP + "}",
            f"text[0][0][0][0][0]... is nested {DEEP + 1:,} levels deep, too deep to read",
        ),
        ("[" * DEEP + "]" * DEEP, f"[0][0][0][0][0][0]... is nested {DEEP:,} levels deep, too deep to read"),
        (
            '{"a": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}",
            f"a.a.a.a.a.a... is nested {DEEP + 1:,} levels deep, too deep to read",
        ),
        ('{"t": "\\ud800"}', "t holds the lone surrogate '\\ud800', which UTF-8 cannot encode; expected text"),
        (
            '{"t": ["ok", "x\\udfff"]}',
            "t[1] holds the lone surrogate '\\udfff', which UTF-8 cannot encode; expected text",
        ),
        (
            '{"t": 1,}',
            "malformed JSON (Expecting property name enclosed in double quotes at column 9); expected a line",
        ),
    ],
    ids=[
        "int-5000",
        "nested-int",
        "nan",
        "infinity",
        "minus-infinity",
        "deep-list",
        "deep-top",
        "deep-object",
        "surrogate",
        "surrogate-in-list",
        "syntax",
    ],
)
def test_a_json_line_python_cannot_hold_names_line_and_field(text: str, message: str) -> None:
    """Values json.loads refuses with a traceback (or accepts though UTF-8 cannot hold them) are one-line InputErrors."""
    with pytest.raises(InputError, match=_exact(f"corpus.jsonl:7: {message}")):
        parse_json(text, "corpus.jsonl", 7, expected="; expected a line")


def test_a_whole_document_names_the_line_and_the_json_path() -> None:
    """In a whole file (LoCoMo), the line is found in the text and paths start at $."""
    doc = '[\n {"qa": [\n  {"category": ' + "7" * 4400 + "}]}]"
    with pytest.raises(
        InputError,
        match=_exact(
            "l.json:3: $[0].qa[0].category is an integer of 4,400 digits; JSON integers here may have at most 4,300"
        ),
    ):
        parse_json(doc, "l.json", root="$")
    deep = '{"conversation":\n\n {"session_1": [' + "[" * DEEP + "]" * DEEP + "]}}"
    with pytest.raises(
        InputError,
        match=_exact(
            f"l.json:3: $.conversation.session_1[0][0][0][0]... is nested {DEEP + 3:,} levels deep, too deep to read"
        ),
    ):
        parse_json(deep, "l.json", root="$")


def test_valid_json_is_read_as_json_loads_reads_it() -> None:
    """A valid surrogate pair, big-but-allowed integers and escapes read as json.loads reads them."""
    text = '{"e": "\\ud83d\\ude00", "n": ' + "9" * 4300 + ', "f": 1e400, "s": "tab\\tnul\\u0000"}'
    assert parse_json(text, "f", 1) == json.loads(text)


def test_constants_may_be_admitted_for_run_files() -> None:
    """constants=True reads NaN and Infinity as floats (a run file's own check names a NaN score)."""
    value = parse_json('{"score": NaN, "s": -Infinity}', "run.jsonl", 1, constants=True)
    assert value["s"] == float("-inf") and value["score"] != value["score"]


def test_json_lines_skips_blank_lines_and_numbers_the_rest() -> None:
    """Blank lines are skipped; line numbers are the file's."""
    assert list(json_lines("f", '{"a": 1}\n\n  \n[2]\n')) == [(1, {"a": 1}), (4, [2])]


# -- the bulk reader equals the line-by-line one ------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from agentmemory.files.reading import json_values  # noqa: E402

_JSON_LINE = st.one_of(
    st.just('{"_id": "a", "text": "x"}'),
    st.just("  {}  "),
    st.just(""),
    st.just("   "),
    st.just("[1, 2]"),
    st.just('{"a": NaN}'),
    st.just('"\\ud800"'),
    st.just('"\\ud83d\\ude00"'),
    st.just("1" * 5000),
    st.just("[" * 3000 + "]" * 3000),
    st.just('{"a": 1} x'),
    st.just("\ufeff{}"),
    st.just('{"a": "\u2028"}'),
    st.just('{"n": 18446744073709551616, "m": -9223372036854775809}'),  # beyond 64 bits: orjson would give floats
    st.just('{"a": [1E400, 2]}'),
    st.just('{"x": "' + "y" * 1200 + '"}'),  # longer than orjson's lines
    st.builds(lambda d: '{"s": "' + d + '", "v": 1.5}', st.text("0123456789", min_size=15, max_size=25)),
    st.builds(lambda n: f'{{"i": {n}}}', st.integers(min_value=-(2**70), max_value=2**70)),
    st.builds(lambda f: f"[{f!r}]", st.floats(allow_nan=False, allow_infinity=False)),
    st.builds(lambda m, e: f'{{"f": {m}e{e}}}', st.integers(-(10**20), 10**20), st.integers(-400, 400)),
    st.text(max_size=12),
    st.builds(
        json.dumps,
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
            max_leaves=6,
        ),
    ),
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_JSON_LINE, max_size=6), sep=st.sampled_from(["\n", "\r\n"]), constants=st.booleans())
def test_json_values_equals_json_lines(lines, sep, constants):
    """json_values() and json_lines() give the values and line numbers of parse_json() line by line (the
    reference), or the same error, whatever the lines."""
    text = sep.join(lines)

    def outcome(fn):
        try:
            return "ok", fn()
        except InputError as err:
            return "error", str(err)

    def reference():
        # Lines end where str.splitlines ends them, except at U+0085, U+2028 and U+2029, which JSON allows
        # unescaped inside a string (a JSON-lines writer with ensure_ascii=False leaves them so).
        ends = re.split("\r\n|[\n\r\v\f\x1c\x1d\x1e]", text)
        ends = ends[:-1] if ends and ends[-1] == "" else ends
        return [(n, parse_json(raw, "f.jsonl", n, constants=constants)) for n, raw in enumerate(ends, 1) if raw.strip()]

    expected = outcome(reference)
    bulk = outcome(lambda: json_values("f.jsonl", text, constants=constants))
    lines_ = outcome(lambda: list(json_lines("f.jsonl", text, constants=constants)))
    assert repr(lines_) == repr(expected)
    if expected[0] == "ok":
        expected = ("ok", ([n for n, _ in expected[1]], [v for _, v in expected[1]]))
    assert repr(bulk) == repr(expected)


def test_json_lines_yields_the_lines_before_a_bad_one() -> None:
    """A caller checking each value meets line 1 before line 2's bad JSON is raised (as reading line by line)."""
    lines = json_lines("f.jsonl", '{"a": 1}\n{"a": ')
    assert next(lines) == (1, {"a": 1})
    with pytest.raises(InputError, match=_exact("f.jsonl:2: malformed JSON (Expecting value at column 7)")):
        next(lines)


# --- a JSON array's items one at a time (json_array_items) ---------------------------------------------------------

from agentmemory.files.reading import json_array_items  # noqa: E402

ARRAYS = [
    '[{"a": 1}, {"b": [1, 2, {"c": "x"}]}, 3, "s", null]',
    " \n[ ]\n ",
    '[\n  {"q": "\\u00e9t\\u00e9", "n": -1.5e3},\n  {"q": "\\ud83d\\ude00"}\n]\n',
    "[1]",
]


@pytest.mark.parametrize("text", ARRAYS)
def test_array_items_are_the_whole_parse_item_by_item(text, tmp_path) -> None:
    """Each item streamed is the item json.loads gives, with the offset just after it; an empty array has none."""
    streamed = json_array_items(text, tmp_path / "f.json")
    assert streamed is not None
    pairs = list(streamed)
    assert [item for item, _ in pairs] == json.loads(text)
    for i, (_, end) in enumerate(pairs):  # the offset is just after the item: the text up to it closes as a list
        assert json.loads(text[:end] + "]") == json.loads(text)[: i + 1]


@pytest.mark.parametrize("text", ['{"a": 1}', '"x"', "3", '[{"a": "\\ud800 lone"}]'])
def test_anything_but_an_array_or_a_lone_surrogate_escape_is_not_streamed(text, tmp_path) -> None:
    assert json_array_items(text, tmp_path / "f.json") is None


@pytest.mark.parametrize(
    "text",
    [
        '[{"a": 1},\n {"b": 2}\n {"c": 3}]',  # a missing comma on line 3
        '[{"a": 1},\n {"b": NaN}]',  # a constant strict JSON has not
        '[{"a": 1}] extra',  # text after the array
        '[{"a": 1},\n]',  # a trailing comma
        '[{"a": 1}',  # the array never closed
        "[" + "[" * 100_000 + "]" * 100_000 + "]",  # nesting deeper than the parser goes
    ],
)
def test_a_streamed_array_stops_with_the_error_of_a_whole_parse(text, tmp_path) -> None:
    """Whatever parse_json refuses, the items stop at it with parse_json's own message (file, line, field)."""
    path = tmp_path / "f.json"
    with pytest.raises(InputError) as whole:
        parse_json(text, path, root="$")
    streamed = json_array_items(text, path)
    assert streamed is not None
    with pytest.raises(InputError) as caught:
        list(streamed)
    assert str(caught.value) == str(whole.value)
