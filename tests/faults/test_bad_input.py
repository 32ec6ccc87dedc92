"""The bad-input catalogue: every class of the "Nothing lost, nothing half-said" issue, through the command line.

Each case breaks an input (or names a bad output or parameter), runs the
command in a folder that already holds a previous run's outputs, and checks
the README's promise: exit status 2, exactly one line on stderr (the message
given here, to the letter), nothing on stdout, and every file in the folder,
old outputs and inputs alike, byte for byte as it was.

The classes (numbering as in the issue): 1 ids a TREC file cannot hold,
found at load time; 2 an output that is an input; 3 writes that fail (the
error names the destination; nothing is half-replaced); 4 values Python
cannot represent; 5 seeds; 6 long values quoted short; 7 numbers written in
ways Python reads and trec_eval does not; 9 misleading words.  Class 8 (the
records' own checks) is in ``test_records_events.py``; the killed writer of
class 3 in ``test_io.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT, replace_once

from agentmemory.cli.app import main
from agentmemory.files import atomic as amio

SAMPLE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"
LONGMEMEVAL = REPO_ROOT / "fixtures" / "longmemeval-sample" / "longmemeval-sample.json"
TREC_ID = (
    "an id must be a non-empty string without whitespace or control characters "
    "(ids are written to TREC files, whose fields whitespace separates)"
)
TIME_RANGE = "expected a time from 0001-01-01T00:00:00Z to 9998-12-31T23:59:59Z"
GRADE = "expected an integer grade such as 0, 1 or 2 (an optional sign and ASCII digits)"
SCORE = (
    "expected a number such as 12.5, -3 or 1e-05 "
    "(ASCII digits with an optional sign, decimal point and exponent, or inf)"
)
EVAL = ["eval", "--collection", "notes", "--out", "out/eval-results.json", "--runs-dir", "runs"]
EVAL_LOCOMO = ["eval", "--collection", "locomo.json", "--out", "out/eval-results.json", "--runs-dir", "runs"]
EVAL_LME = ["eval", "--collection", "lme.json", "--out", "out/eval-results.json", "--runs-dir", "runs"]
RETRIEVE = ["retrieve", "--collection", "notes", "--out", "runs/bm25.trec"]
OLD = b"the previous run's output\n"


@pytest.fixture
def world(tmp_path: Path, monkeypatch) -> Path:
    """A working folder holding a collection, a LoCoMo file, and the outputs of a previous run."""
    shutil.copytree(FIXTURE_DIR, tmp_path / "notes")
    shutil.copy(SAMPLE, tmp_path / "locomo.json")
    shutil.copy(LONGMEMEVAL, tmp_path / "lme.json")
    for name in ("out/eval-results.json", "out/table.md", "runs/bm25.trec", "runs/tags.trec", "runs/qrels.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(OLD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _snapshot(root: Path) -> dict[str, object]:
    """Every path under ``root`` and what it is: a file's bytes, a link's target, a folder, a FIFO."""
    seen: dict[str, object] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                seen[key] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[key] = "folder"
            elif path.is_file():
                seen[key] = path.read_bytes()
            else:
                seen[key] = "special"
    return seen


def _refused(world: Path, capsys, argv: list[str], message: str) -> None:
    """Exit 2, exactly ``agentmemory: error: <message>`` on stderr, nothing on stdout, nothing changed."""
    before = _snapshot(world)
    code = main(argv)
    captured = capsys.readouterr()
    assert (code, captured.out, captured.err) == (2, "", f"agentmemory: error: {message}\n")
    assert _snapshot(world) == before


def _edit(path: str, old: str, new: str) -> Callable[[Path], None]:
    return lambda root: replace_once(root / path, old, new)


def _edit_first(path: str, old: str, new: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        text = (root / path).read_text(encoding="utf-8")
        assert old in text, old
        (root / path).write_text(text.replace(old, new, 1), encoding="utf-8")

    return apply


def _locomo(mutate: Callable[[list], None], raw: dict[str, str] | None = None) -> Callable[[Path], None]:
    """Rewrite locomo.json after ``mutate``; each placeholder string in ``raw`` is replaced by raw JSON text."""

    def apply(root: Path) -> None:
        data = json.loads((root / "locomo.json").read_text(encoding="utf-8"))
        mutate(data)
        text = json.dumps(data, indent=2, ensure_ascii=False)
        for placeholder, replacement in (raw or {}).items():
            text = text.replace(json.dumps(placeholder), replacement, 1)
        (root / "locomo.json").write_text(text, encoding="utf-8")

    return apply


def _set(path: list, value: object) -> Callable[[list], None]:
    def mutate(data: list) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _line_of(root: Path, file: str, text: str) -> int:
    content = (root / file).read_text(encoding="utf-8")
    return content[: content.index(text)].count("\n") + 1


# -- 1. ids a TREC output cannot hold: refused when loaded, with file and line, before any output ------------

CLASS_1 = [
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"_id": "m16"', '"_id": "m 16"'),
        f"notes/corpus.jsonl:16: _id 'm 16' contains whitespace; {TREC_ID}",
        id="entry-id-space",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"_id": "m16"', '"_id": "m\\t16"'),
        f"notes/corpus.jsonl:16: _id 'm\\t16' contains whitespace; {TREC_ID}",
        id="entry-id-tab",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"_id": "m16"', '"_id": "m\\u000016"'),
        f"notes/corpus.jsonl:16: _id 'm\\x0016' contains the control character '\\x00'; {TREC_ID}",
        id="entry-id-nul",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"_id": "m16"', '"_id": "m\\u008516"'),
        f"notes/corpus.jsonl:16: _id 'm\\x8516' contains the control character '\\x85'; {TREC_ID}",
        id="entry-id-c1-control",
    ),
    pytest.param(
        EVAL,
        _edit("notes/queries.jsonl", '"_id": "q3"', '"_id": "q 3"'),
        f"notes/queries.jsonl:3: _id 'q 3' contains whitespace; {TREC_ID}",
        id="query-id-space",
    ),
    pytest.param(
        RETRIEVE,
        _edit("notes/corpus.jsonl", '"_id": "m16"', '"_id": "m 16"'),
        f"notes/corpus.jsonl:16: _id 'm 16' contains whitespace; {TREC_ID}",
        id="retrieve-entry-id-space",
    ),
    pytest.param(
        EVAL_LOCOMO,
        _edit("locomo.json", '"sample_id": "conv-1"', '"sample_id": "conv 1"'),
        f"locomo.json: $[0].sample_id: 'conv 1' contains whitespace; sample_ids begin ids, and {TREC_ID}",
        id="locomo-sample-id-space",
    ),
    pytest.param(
        EVAL_LOCOMO,
        _edit("locomo.json", '"sample_id": "conv-1"', '"sample_id": "conv\\n1"'),
        f"locomo.json: $[0].sample_id: 'conv\\n1' contains whitespace; sample_ids begin ids, and {TREC_ID}",
        id="locomo-sample-id-newline",
    ),
    pytest.param(
        EVAL_LME,
        _edit("lme.json", '"question_id": "e47becba"', '"question_id": "e47 becba"'),
        f"lme.json: $[0].question_id: 'e47 becba' contains whitespace; {TREC_ID}",
        id="longmemeval-question-id-space",
    ),
    pytest.param(
        EVAL_LME,
        _edit(
            "lme.json",
            '"ultrachat_559012",\n      "answer_280352e9"',
            '"ultrachat\\u0000559012",\n      "answer_280352e9"',
        ),
        f"lme.json: $[0].haystack_session_ids[1]: 'ultrachat\\x00559012' contains the control character '\\x00'; {TREC_ID}",
        id="longmemeval-session-id-nul",
    ),
]


@pytest.mark.parametrize(("argv", "breakage", "message"), CLASS_1)
def test_class_1_an_id_no_output_can_hold_is_refused_at_load_time(world: Path, capsys, argv, breakage, message) -> None:
    """An id with white space or a control character is refused with its file and line; no output is touched."""
    breakage(world)
    _refused(world, capsys, argv, message)


# -- 2. an output that is an input ----------------------------------------------------------------------------

INPUT = "write outputs elsewhere: a run never replaces what it reads"


def _alias(kind: str) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        if kind == "symlink":
            (root / "link.json").symlink_to(root / "notes" / "corpus.jsonl")
        elif kind == "symlink-table":
            (root / "table.md").symlink_to(root / "notes" / "qrels" / "test.tsv")
        elif kind == "hardlink":
            os.link(root / "notes" / "corpus.jsonl", root / "hard.json")
        elif kind == "linked-folder":
            (root / "alias").symlink_to(root / "notes", target_is_directory=True)
        elif kind == "run-file":
            (root / "run.trec").write_text("q1 Q0 m01 1 1.0 mine\n")

    return make


CLASS_2 = [
    pytest.param(
        ["eval", "--collection", "notes", "--out", "notes/corpus.jsonl"],
        None,
        f"--out: 'notes/corpus.jsonl' (str) is the input file 'notes/corpus.jsonl'; {INPUT}",
        id="out-is-the-corpus",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--out", "notes/qrels/../corpus.jsonl"],
        None,
        f"--out: 'notes/qrels/../corpus.jsonl' (str) is the input file 'notes/corpus.jsonl'; {INPUT}",
        id="dot-dot",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--out", "link.json"],
        _alias("symlink"),
        f"--out: 'link.json' (str) is the input file 'notes/corpus.jsonl'; {INPUT}",
        id="symlink-to-the-corpus",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--out", "hard.json"],
        _alias("hardlink"),
        f"--out: 'hard.json' (str) is the input file 'notes/corpus.jsonl'; {INPUT}",
        id="hard-link-to-the-corpus",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--out", "alias/queries.jsonl"],
        _alias("linked-folder"),
        f"--out: 'alias/queries.jsonl' (str) is the input file 'notes/queries.jsonl'; {INPUT}",
        id="through-a-linked-folder",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--table-out", "table.md"],
        _alias("symlink-table"),
        f"--table-out: 'table.md' (str) is the input file 'notes/qrels/test.tsv'; {INPUT}",
        id="table-out-links-to-the-qrels",
    ),
    pytest.param(
        ["eval", "--collection", "locomo.json", "--out", "./locomo.json"],
        None,
        f"--out: './locomo.json' (str) is the input file 'locomo.json'; {INPUT}",
        id="out-is-the-locomo-file",
    ),
    pytest.param(
        ["retrieve", "--collection", "notes", "--out", "notes/corpus.jsonl"],
        None,
        f"--out: 'notes/corpus.jsonl' (str) is the input file 'notes/corpus.jsonl'; {INPUT}",
        id="retrieve-out-is-the-corpus",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--run", "mine=run.trec", "--out", "run.trec"],
        _alias("run-file"),
        f"--out: 'run.trec' (str) is the input file 'run.trec'; {INPUT}",
        id="out-is-a-run-file",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--out", "runs/qrels.txt", "--runs-dir", "runs"],
        None,
        "--runs-dir: 'runs/qrels.txt' (str) is also the path of --out ('runs/qrels.txt'); give every output its own path",
        id="out-is-a-run-of-runs-dir",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--out", "out/table.md", "--table-out", "out/../out/table.md"],
        None,
        "--table-out: 'out/../out/table.md' (str) is also the path of --out ('out/table.md'); give every output its own path",
        id="table-out-is-out",
    ),
    pytest.param(
        ["eval", "--collection", "notes", "--out", "/dev/null"],
        None,
        "--out: '/dev/null' (str) is a character device; pass the path of a regular file, such as reports/eval-results.json",
        id="out-is-a-device",
    ),
]


@pytest.mark.parametrize(("argv", "setup", "message"), CLASS_2)
def test_class_2_an_output_that_is_an_input_is_refused(world: Path, capsys, argv, setup, message) -> None:
    """Any output resolving to an input (.., symlinks, hard links, a linked folder) or to another output is refused."""
    if setup is not None:
        setup(world)
    _refused(world, capsys, argv, message)


# -- 3. a write that fails: the destination is named and nothing is half-replaced --------------------------------


def _fail(function: str, target: str, errno: int, strerror: str):
    """Make ``os.<function>`` fail for paths whose text contains ``target`` (the temporary file or the destination)."""
    real = getattr(os, function)

    def failing(*args, **kwargs):
        if target in str(args[0]) or (len(args) > 1 and target in str(args[1])):
            raise OSError(errno, strerror)
        return real(*args, **kwargs)

    return failing


CLASS_3 = [
    pytest.param(
        "open", "eval-results.json", 13, "Permission denied", "out/eval-results.json", id="out-folder-read-only"
    ),
    pytest.param("open", "tags.trec", 13, "Permission denied", "runs/tags.trec", id="runs-folder-read-only"),
    pytest.param("open", "qrels.txt", 28, "No space left on device", "runs/qrels.txt", id="disk-full-on-the-last"),
    pytest.param("fsync", "", 5, "Input/output error", "out/eval-results.json", id="fsync-fails"),
    pytest.param(
        "replace", "eval-results.json", 16, "Device or resource busy", "out/eval-results.json", id="rename-fails"
    ),
]


@pytest.mark.parametrize(("function", "target", "errno", "strerror", "named"), CLASS_3)
def test_class_3_a_failed_write_names_the_destination_and_changes_nothing(
    world: Path, capsys, monkeypatch, function, target, errno, strerror, named
) -> None:
    """Whichever output fails to be written, the message names it (never a temporary file) and every old output stays."""
    monkeypatch.setattr(amio.os, function, _fail(function, target, errno, strerror))
    _refused(world, capsys, EVAL, f"{named}: cannot write ({strerror})")


def test_class_3_the_next_write_removes_stale_temporaries_of_ours(world: Path, capsys) -> None:
    """Debris a killed writer left (our name, a dead pid) goes on the next successful write into that folder."""
    import subprocess

    from conftest import PYTHON

    pid = int(subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout)
    host = amio._host()
    stale = [f".eval-results.json.{pid}-{host}-0123456789abcdef.agentmemory-tmp"]
    (world / "out" / stale[0]).write_bytes(b"half an artifact")
    (world / "runs" / f".bm25.trec.{pid}-{host}-fedcba9876543210.agentmemory-tmp").write_bytes(b"half")
    (world / "out" / ".eval-results.json.x1y2z3.tmp").write_bytes(b"not ours")
    assert main(EVAL) == 0
    capsys.readouterr()
    assert sorted(os.listdir(world / "out")) == [".eval-results.json.x1y2z3.tmp", "eval-results.json", "table.md"]
    assert sorted(os.listdir(world / "runs")) == ["bm25.trec", "qrels.txt", "tags.trec"]


# -- 4. values Python cannot represent ----------------------------------------------------------------------------

DEEP = 100_000
BIG = "7" * 5000


def _corpus_line(line: int, new_fields: str) -> Callable[[Path], None]:
    """Add raw JSON fields to the corpus line for m<line>."""
    return _edit("notes/corpus.jsonl", f'"_id": "m{line:02d}"', f'"_id": "m{line:02d}", {new_fields}')


CLASS_4 = [
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", "2026-01-09T08:40:00Z", "9999-12-31T23:00:00-05:00"),
        f"notes/corpus.jsonl:2: created_at '9999-12-31T23:00:00-05:00' is out of range; {TIME_RANGE}",
        id="year-10000-in-utc",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", "2026-01-09T08:40:00Z", "0001-01-01T00:30:00+01:00"),
        f"notes/corpus.jsonl:2: created_at '0001-01-01T00:30:00+01:00' is out of range; {TIME_RANGE}",
        id="year-0-in-utc",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", "2026-01-09T08:40:00Z", "9999-12-31T23:59:59Z"),
        f"notes/corpus.jsonl:2: created_at '9999-12-31T23:59:59Z' is out of range; {TIME_RANGE}",
        id="clock-would-step-past-9999",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", "2026-01-09T08:40:00Z", "9999-01-01T00:00:00+00:00"),
        f"notes/corpus.jsonl:2: created_at '9999-01-01T00:00:00+00:00' is out of range; {TIME_RANGE}",
        id="first-instant-refused",
    ),
    pytest.param(
        EVAL_LOCOMO,
        _edit("locomo.json", "2:15 pm on 4 March, 2023", "11:59 pm on 31 December, 9999"),
        f"locomo.json: $[0].conversation.session_1_date_time: '11:59 pm on 31 December, 9999' is out of range; {TIME_RANGE}",
        id="locomo-session-in-9999",
    ),
    pytest.param(
        EVAL,
        _corpus_line(16, '"x": ' + "[" * DEEP + "]" * DEEP),
        f"notes/corpus.jsonl:16: x[0][0][0][0][0]... is nested {DEEP + 1:,} levels deep, too deep to read",
        id="corpus-nested-100000",
    ),
    pytest.param(
        EVAL,
        _edit("notes/queries.jsonl", '"_id": "q2"', '"_id": "q2", "m": ' + '{"a": ' * DEEP + "0" + "}" * DEEP),
        f"notes/queries.jsonl:2: m.a.a.a.a.a... is nested {DEEP + 1:,} levels deep, too deep to read",
        id="queries-nested-100000",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"_id": "m16"', '"_id": ' + BIG),
        "notes/corpus.jsonl:16: _id is an integer of 5,000 digits; JSON integers here may have at most 4,300",
        id="id-of-5000-digits",
    ),
    pytest.param(
        EVAL,
        _corpus_line(5, '"x": NaN'),
        "notes/corpus.jsonl:5: x is NaN, which is not a JSON number; expected a number or a string",
        id="nan-in-metadata",
    ),
    pytest.param(
        EVAL,
        _corpus_line(5, '"note": "caf\\udce9"'),
        "notes/corpus.jsonl:5: note holds the lone surrogate '\\udce9', which UTF-8 cannot encode; expected text",
        id="lone-surrogate",
    ),
    pytest.param(
        EVAL,
        _edit("notes/qrels/test.tsv", "q2\tm13\t1", f"q2\tm13\t{BIG}"),
        f"notes/qrels/test.tsv:5: score '{'7' * 160}'... (5,000 characters) has 5,000 digits, more than 4,300; {GRADE}",
        id="grade-of-5000-digits",
    ),
    pytest.param(
        EVAL_LME,
        _edit("lme.json", '"answer": "Business Administration"', '"answer": ' + "[" * DEEP + "]" * DEEP),
        f"lme.json:6: $[0].answer[0][0][0][0]... is nested {DEEP + 2:,} levels deep, too deep to read",
        id="longmemeval-nested-100000",
    ),
    pytest.param(
        EVAL_LME,
        _edit("lme.json", '"answer": "Business Administration"', '"answer": NaN'),
        "lme.json:6: $[0].answer is NaN, which is not a JSON number; expected a number or a string",
        id="longmemeval-nan",
    ),
]


def _locomo_cases() -> list:
    session = ["conversation", "session_1"]
    return [
        pytest.param(
            EVAL_LOCOMO,
            _locomo(_set([0, *session, 0, "text"], "@DEEP@"), {"@DEEP@": "[" * DEEP + "]" * DEEP}),
            "locomo.json:{line}: $[0].conversation.session_1[0].text[0]... is nested 100,005 levels deep, too deep to read",
            "[[[[",
            id="locomo-nested-100000",
        ),
        pytest.param(
            EVAL_LOCOMO,
            _locomo(_set([0, "qa", 0, "category"], "@BIG@"), {"@BIG@": BIG}),
            "locomo.json:{line}: $[0].qa[0].category is an integer of 5,000 digits; JSON integers here may have at most 4,300",
            BIG,
            id="locomo-category-of-5000-digits",
        ),
        pytest.param(
            EVAL_LOCOMO,
            _locomo(lambda d: d[0]["conversation"].__setitem__("session_" + BIG, [])),
            f"locomo.json: $[0].conversation.'session_{'7' * 32}'... (5,008 characters): session number of 5,000 digits; "
            "expected session_1, session_2, ...",
            None,
            id="locomo-session-key-of-5000-digits",
        ),
        pytest.param(
            EVAL_LOCOMO,
            _locomo(_set([0, *session, 0, "dia_id"], f"D{BIG}:1")),
            f"locomo.json: $[0].conversation.session_1[0].dia_id: 'D{'7' * 159}'... (5,003 characters) is not in "
            "session_1; expected D1:<turn>",
            None,
            id="locomo-dia-id-of-5000-digits",
        ),
    ]


@pytest.mark.parametrize(("argv", "breakage", "message"), CLASS_4)
def test_class_4_values_python_cannot_represent_are_one_line(world: Path, capsys, argv, breakage, message) -> None:
    """Unrepresentable dates, deep nesting, huge integers, NaN, lone surrogates: one line naming file, line and field."""
    breakage(world)
    _refused(world, capsys, argv, message)


@pytest.mark.parametrize(("argv", "breakage", "message", "marker"), _locomo_cases())
def test_class_4_in_locomo_files(world: Path, capsys, argv, breakage, message, marker) -> None:
    """The same in a LoCoMo file: the JSON path of the field, and the line when the parser had to stop."""
    breakage(world)
    line = _line_of(world, "locomo.json", marker) if marker else None
    _refused(world, capsys, argv, message.format(line=line))


# -- 5. seeds -----------------------------------------------------------------------------------------------------

NEGATIVE = "--seed: -1 (int) is negative; --seed must be an integer >= 0"
NOT_A_SEED = "(str) is not an integer; --seed must be an integer >= 0 (an optional sign and ASCII digits)"

CLASS_5 = [
    pytest.param(["--seed", "-1"], NEGATIVE, id="negative"),
    pytest.param(
        ["--seed", "-7000000000000000000000"],
        "--seed: -7000000000000000000000 (int) is negative; --seed must be an integer >= 0",
        id="very-negative",
    ),
    pytest.param(["--seed", "1_0"], f"--seed: '1_0' {NOT_A_SEED}", id="underscore"),
    pytest.param(["--seed", " 7"], f"--seed: ' 7' {NOT_A_SEED}", id="space"),
    pytest.param(["--seed", "\u0667"], f"--seed: '\u0667' {NOT_A_SEED}", id="arabic-indic-digit"),
    pytest.param(["--seed", "7.0"], f"--seed: '7.0' {NOT_A_SEED}", id="decimal"),
]


@pytest.mark.parametrize(("args", "message"), CLASS_5)
def test_class_5_a_bad_seed_is_refused_before_anything_runs(world: Path, capsys, args, message) -> None:
    """--seed is checked up front (numpy would refuse a negative one only after the metrics were computed)."""
    _refused(world, capsys, [*EVAL, *args], message)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "-1"], NEGATIVE),
        (
            ["--seed", "1_0"],
            "--seed: '1_0' (str) is not an integer; --seed must be an integer (an optional sign and ASCII digits)",
        ),
        (
            ["--k", " 5"],
            "--k: ' 5' (str) is not an integer; --k must be an integer (an optional sign and ASCII digits)",
        ),
        (["--k", "0"], "--k: 0 (int) is less than 1; --k must be an integer >= 1"),
        (["--bogus"], "unrecognized arguments: --bogus (see 'python -m agentmemory.report.build --help')"),
    ],
    ids=["seed-negative", "seed-underscore", "k-space", "k-zero", "unknown-option"],
)
def test_class_5_the_report_build_refuses_bad_parameters_before_running_a_notebook(
    tmp_path: Path, monkeypatch, capsys, args, message
) -> None:
    """python -m agentmemory.report.build: one line, exit 2, no notebook run, reports/ untouched."""
    from agentmemory.report.build import main as build_main

    shutil.copytree(REPO_ROOT / "notebooks", tmp_path / "notebooks")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "eval.ipynb").write_bytes(OLD)
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    assert build_main(args) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"agentmemory.report.build: error: {message}\n")
    assert _snapshot(tmp_path) == before


def test_class_5_the_report_build_refuses_to_write_reports_over_its_notebooks(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """--reports equal to --notebooks would replace the source notebooks: refused before any notebook runs."""
    from agentmemory.report.build import main as build_main

    shutil.copytree(REPO_ROOT / "notebooks", tmp_path / "notebooks")
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    assert build_main(["--reports", "notebooks", "--notebooks", "notebooks"]) == 2
    assert capsys.readouterr().err == (
        "agentmemory.report.build: error: --reports: 'notebooks/eval.ipynb' (str) is the input file "
        "'notebooks/eval.ipynb'; write outputs elsewhere: a run never replaces what it reads\n"
    )
    assert _snapshot(tmp_path) == before


SEED_MESSAGE = "seed: -1 (int) is negative; seed must be an integer >= 0"


def _library_seed_calls() -> list:
    from agentmemory import evaluate, load_collection
    from agentmemory.analysis.statistics import evaluation_statistics
    from agentmemory.datasets.synthetic import synthetic_collection
    from agentmemory.evaluation.sweeps import k_sweep, seed_sweep
    from agentmemory.report import params

    common = {"k": 5, "retrievers": "bm25,tags", "output_dir": "", "collection": ""}
    return [
        pytest.param(lambda: evaluate(load_collection(FIXTURE_DIR), seed=-1), SEED_MESSAGE, id="evaluate"),
        pytest.param(
            lambda: evaluation_statistics(evaluate(load_collection(FIXTURE_DIR)), seed=-1),
            SEED_MESSAGE,
            id="statistics",
        ),
        pytest.param(lambda: synthetic_collection(seed=-1), SEED_MESSAGE, id="synthetic-generator"),
        pytest.param(
            lambda: seed_sweep([3, -1], [16], "bm25", 5),
            "seeds item: -1 (int) is negative; seeds item must be an integer >= 0",
            id="seed-sweep",
        ),
        pytest.param(
            lambda: k_sweep(load_collection(FIXTURE_DIR), "bm25", [1, 2], seed=-1), SEED_MESSAGE, id="k-sweep"
        ),
        pytest.param(lambda: params.eval_setup(seed=-1, **common), SEED_MESSAGE, id="eval-notebook"),
        pytest.param(
            lambda: params.collection_setup(seed=-1, format="auto", repair=False, **common),
            SEED_MESSAGE,
            id="collection-notebook",
        ),
        pytest.param(
            lambda: params.sweep_setup(
                collection="",
                k_max=3,
                k=2,
                seeds="1_0",
                sizes="16",
                queries="5",
                mismatch_rate=0.2,
                retrievers="bm25",
                progress=False,
            ),
            "seeds: '1_0' (str) is not a count or a range; pass a number of seeds such as 20 (seeds 0..19) "
            'or an inclusive range such as "100-199"',
            id="sweep-notebook-seeds",
        ),  # fmt: skip
    ]


@pytest.mark.parametrize(("call", "message"), _library_seed_calls())
def test_class_5_every_library_path_checks_the_seed_first(call, message) -> None:
    """evaluate, statistics, the synthetic generator, both sweeps and the notebooks' setups refuse a bad seed at once."""
    from agentmemory.errors import AgentMemoryError

    with pytest.raises(AgentMemoryError) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("notebook", ["eval", "collection"])
def test_class_5_a_negative_seed_stops_the_notebook_at_its_validation_cell(notebook: str, tmp_path: Path) -> None:
    """papermill -p seed -1: the notebook stops in its first cell with the one-line message (no numpy error later)."""
    import papermill

    with pytest.raises(papermill.PapermillExecutionError) as info:
        papermill.execute_notebook(
            str(REPO_ROOT / "notebooks" / f"{notebook}.ipynb"),
            str(tmp_path / "out.ipynb"),
            parameters={"seed": -1},
            kernel_name="python3",
            cwd=str(REPO_ROOT),
            progress_bar=False,
            log_output=False,
        )
    assert (info.value.ename, info.value.evalue) == ("ReportParameterError", SEED_MESSAGE)


# -- 6. long values are quoted short ------------------------------------------------------------------------------

HUGE = "x" * 5_000_000
SHOWN = f"'{'x' * 160}'... (5,000,000 characters)"

CLASS_6 = [
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"tags": ["schedule", "work", "meetings"]', f'"tags": "{HUGE}"'),
        f"notes/corpus.jsonl:2: tags {SHOWN} is not a list of strings",
        id="tags-a-5mb-string",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"_id": "m16"', f'"_id": " {HUGE}"'),
        f"notes/corpus.jsonl:16: _id '{' ' + 'x' * 159}'... (5,000,001 characters) contains whitespace; {TREC_ID}",
        id="id-a-5mb-string",
    ),
    pytest.param(
        EVAL,
        _edit("notes/qrels/test.tsv", "q2\tm13\t1", f"q2\tm13\t{HUGE}"),
        f"notes/qrels/test.tsv:5: score {SHOWN} is not an integer; {GRADE}",
        id="grade-a-5mb-string",
    ),
    pytest.param(
        EVAL,
        _edit("notes/corpus.jsonl", '"2026-01-09T08:40:00Z"', f'"{HUGE}"'),
        f"notes/corpus.jsonl:2: created_at {SHOWN} is not ISO 8601; expected e.g. 2026-03-01T09:30:00Z",
        id="created-at-a-5mb-string",
    ),
    pytest.param(
        EVAL_LOCOMO,
        _edit_first("locomo.json", '"category": 4', f'"category": "{HUGE}"'),
        "locomo.json: $[0].qa[0].category: {shown} is not a LoCoMo category; expected one of 1 (multi-hop), "
        "2 (temporal), 3 (open-domain), 4 (single-hop), 5 (adversarial)",
        id="locomo-category-a-5mb-string",
    ),
    pytest.param(
        [*EVAL, "--k", HUGE],
        None,
        f"--k: {SHOWN} (str) is not an integer; --k must be an integer >= 1 (an optional sign and ASCII digits)",
        id="k-a-5mb-string",
    ),
]


@pytest.mark.parametrize(("argv", "breakage", "message"), CLASS_6)
def test_class_6_a_long_value_is_quoted_short(world: Path, capsys, argv, breakage, message) -> None:
    """A 5 MB value is quoted as its first 160 characters and its length: a line of a few hundred characters."""
    if breakage is not None:
        breakage(world)
    _refused(world, capsys, argv, message.replace("{shown}", SHOWN))


# -- 7. numbers Python reads and trec_eval does not ----------------------------------------------------------------

CLASS_7_GRADES = ["1_0", "\uff11", "\u0663", "+", "0x1", "1.0", "1e0", "\u00b2", "-"]


@pytest.mark.parametrize("grade", CLASS_7_GRADES)
def test_class_7_a_grade_must_be_a_sign_and_ascii_digits(world: Path, capsys, grade: str) -> None:
    """A qrels grade Python's int() reads (1_0 -> 10, a fullwidth one -> 1) or nothing reads is refused by the rule."""
    replace_once(world / "notes" / "qrels" / "test.tsv", "q2\tm13\t1", f"q2\tm13\t{grade}")
    _refused(world, capsys, EVAL, f"notes/qrels/test.tsv:5: score {grade!r} is not an integer; {GRADE}")


CLASS_7_SCORES = ["1_000", "\uff11.5", "\u0663.\u0665", "0x1p3", "nan", "1,5", "infinit", "1.5f"]


@pytest.mark.parametrize("score", CLASS_7_SCORES)
def test_class_7_a_run_score_must_be_what_atof_reads_the_same(world: Path, capsys, score: str) -> None:
    """agentmemory score: a run score in any other spelling (underscores, other scripts' digits, hex, NaN) is refused."""
    (world / "qrels.txt").write_text("q1 0 m01 1\n")
    (world / "run.trec").write_text(f"q1 Q0 m01 1 2.5 t\nq1 Q0 m02 2 {score} t\n")
    _refused(world, capsys, ["score", "qrels.txt", "run.trec"], f"run.trec:2: score {score!r} is not a number; {SCORE}")


@pytest.mark.parametrize(
    ("grade", "shown"),
    [("1_0", "'1_0'"), ("\uff11", "'\uff11'"), ("+", "'+'"), ("1.5", "'1.5'")],
)
def test_class_7_trec_qrels_relevance_by_the_same_rule(world: Path, capsys, grade: str, shown: str) -> None:
    """agentmemory score: TREC qrels relevance follows the same integer rule as the collection's grades."""
    (world / "qrels.txt").write_text(f"q1 0 m01 {grade}\n")
    (world / "run.trec").write_text("q1 Q0 m01 1 2.5 t\n")
    _refused(
        world, capsys, ["score", "qrels.txt", "run.trec"], f"qrels.txt:1: relevance {shown} is not an integer; {GRADE}"
    )


CLASS_7_INTEGERS = ["\uff15", " 5", "5 ", "1_0", "5.0", "\u0665", "0x5", "+", "5e0"]


@pytest.mark.parametrize("command", ["eval", "retrieve", "score"])
@pytest.mark.parametrize("text", CLASS_7_INTEGERS)
def test_class_7_command_line_integers_by_the_rule(world: Path, capsys, command: str, text: str) -> None:
    """--k of every command: what int() reads (' 5', '1_0', a fullwidth 5) is not an integer here."""
    argv = {"eval": EVAL, "retrieve": RETRIEVE, "score": ["score", "runs/qrels.txt", "runs/bm25.trec"]}[command]
    _refused(
        world,
        capsys,
        [*argv, "--k", text],
        f"--k: {text!r} (str) is not an integer; --k must be an integer >= 1 (an optional sign and ASCII digits)",
    )


# -- 9. misleading words: say what a path is; refuse empty judgments the same way everywhere ------------------------


def _kind(path: str, kind: str) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        target = root / path
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        if kind == "folder":
            target.mkdir()
        elif kind == "fifo":
            os.mkfifo(target)
        elif kind == "loop":
            target.symlink_to(target.name)
        elif kind == "dangling":
            target.symlink_to("gone")

    return make


CLASS_9 = [
    pytest.param(
        EVAL,
        _kind("notes/corpus.jsonl", "folder"),
        "notes/corpus.jsonl: is a folder; expected a file",
        id="corpus-a-folder",
    ),
    pytest.param(
        EVAL,
        _kind("notes/corpus.jsonl", "fifo"),
        "notes/corpus.jsonl: is a named pipe (FIFO); expected a file",
        id="corpus-a-fifo",
    ),
    pytest.param(
        EVAL,
        _kind("notes/corpus.jsonl", "loop"),
        "notes/corpus.jsonl: is a symbolic link loop; expected a file",
        id="corpus-a-link-loop",
    ),
    pytest.param(
        EVAL,
        _kind("notes/queries.jsonl", "dangling"),
        "notes/queries.jsonl: is a symbolic link to the missing 'gone'; expected a file",
        id="queries-a-dangling-link",
    ),
    pytest.param(
        EVAL,
        _kind("notes/qrels/test.tsv", "fifo"),
        "notes/qrels/test.tsv: is a named pipe (FIFO); expected a file",
        id="qrels-a-fifo",
    ),
    pytest.param(
        [*EVAL[:2], "fifo", *EVAL[3:]],
        _kind("fifo", "fifo"),
        "fifo: is a named pipe (FIFO); expected a collection file or folder",
        id="collection-a-fifo",
    ),
    pytest.param(
        [*EVAL[:2], "loop", *EVAL[3:]],
        _kind("loop", "loop"),
        "loop: is a symbolic link loop; expected a collection file or folder",
        id="collection-a-link-loop",
    ),
    pytest.param(
        [*EVAL_LOCOMO, "--format", "locomo"],
        _kind("locomo.json", "fifo"),
        "locomo.json: is a named pipe (FIFO); expected a LoCoMo JSON file (e.g. locomo10.json)",
        id="locomo-file-a-fifo",
    ),
    pytest.param(
        [*EVAL_LME, "--format", "longmemeval"],
        _kind("lme.json", "loop"),
        "lme.json: is a symbolic link loop; expected a LongMemEval JSON file (e.g. longmemeval_s_cleaned.json)",
        id="longmemeval-file-a-link-loop",
    ),
    pytest.param(
        [*EVAL, "--format", "beir"],
        _kind("notes", "fifo"),
        "notes: is a named pipe (FIFO), not a folder; a collection is a folder with corpus.jsonl, queries.jsonl, qrels/",
        id="beir-folder-a-fifo",
    ),
    pytest.param(
        EVAL,
        lambda root: (root / "notes" / "qrels" / "test.tsv").write_text(""),
        "notes/qrels/test.tsv: holds no judgments; expected at least one line query-id<TAB>corpus-id<TAB>score",
        id="eval-empty-qrels",
    ),
    pytest.param(
        EVAL,
        lambda root: (root / "notes" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n\n"),
        "notes/qrels/test.tsv: holds no judgments; expected at least one line query-id<TAB>corpus-id<TAB>score",
        id="eval-header-only-qrels",
    ),
    pytest.param(
        ["score", "qrels.txt", "runs/bm25.trec"],
        lambda root: (root / "qrels.txt").write_text("\n  \n"),
        "qrels.txt: holds no judgments; expected at least one line query_id iteration doc_id relevance",
        id="score-empty-qrels",
    ),
    pytest.param(
        ["score", "qrels.txt", "run"],
        lambda root: (_kind("run", "fifo")(root), (root / "qrels.txt").write_text("q1 0 m01 1\n")),
        "run: is a named pipe (FIFO); expected a file",
        id="score-run-a-fifo",
    ),
]


@pytest.mark.parametrize(("argv", "breakage", "message"), CLASS_9)
def test_class_9_say_what_a_path_is_and_refuse_empty_judgments(world: Path, capsys, argv, breakage, message) -> None:
    """A folder, FIFO or link loop is called what it is (never 'no such file'); empty qrels are refused by eval and score alike."""
    breakage(world)
    _refused(world, capsys, argv, message)


def test_class_9_a_collection_whose_questions_were_all_left_out_is_refused(world: Path, capsys) -> None:
    """A LoCoMo file whose every question is skipped would evaluate to means of 0.00 over no query: refused."""

    def no_evidence(data: list) -> None:
        for sample in data:
            for item in sample["qa"]:
                item["evidence"] = []

    _locomo(no_evidence)(world)
    count = sum(len(s["qa"]) for s in json.loads((world / "locomo.json").read_text()))
    _refused(
        world,
        capsys,
        EVAL_LOCOMO,
        f"collection: 'locomo' (str) has no judged query; all {count} questions were left out ({count} for: no "
        "evidence); see why each was left out in the collection's skipped list (Collection.skipped; skipped_queries "
        "in the artifact), load it with --repair (repair=True) where its format repairs malformed questions, or "
        "evaluate a collection with judgments",
    )


@pytest.mark.parametrize("repair", [False, True], ids=["strict", "repair"])
def test_class_4_evidence_of_thousands_of_digits_is_a_reason_not_a_crash(world: Path, repair: bool) -> None:
    """Evidence 'D1:<5,000 digits>' used to reach int(); now the question is skipped (or repaired) with a short reason."""
    from agentmemory.datasets import load

    _locomo(_set([0, "qa", 0, "evidence"], [f"D1:{BIG}", f"D0{BIG}:1"]))(world)
    collection = load(world / "locomo.json", repair=repair)
    reasons = [r for q, r in (*collection.skipped, *collection.repairs) if q == "conv-1/q0"]
    assert reasons and all(len(r) < 1000 for r in reasons)  # two bad strings, each quoted short
    assert "(5,003 characters)" in reasons[0] and "conv-1/q0" not in {q.id for q in collection.queries}


def test_class_2_a_notebook_refuses_an_output_dir_whose_artifact_is_its_collection(world: Path) -> None:
    """eval.ipynb / collection.ipynb: output_dir/eval-results.json may not be the collection file they read."""
    from agentmemory.report import params

    shutil.copy(world / "locomo.json", world / "out" / "eval-results.json")
    before = _snapshot(world)
    message = (
        "output_dir: 'out/eval-results.json' (str) is the input file 'out/eval-results.json'; "
        "write outputs elsewhere: a run never replaces what it reads"
    )
    common = {"seed": 7, "k": 5, "retrievers": "bm25", "output_dir": "out", "collection": "out/eval-results.json"}
    for setup in (
        lambda: params.eval_setup(**common),
        lambda: params.collection_setup(format="auto", repair=False, **common),
    ):
        with pytest.raises(params.ReportParameterError) as info:
            setup()
        assert str(info.value) == message
    assert _snapshot(world) == before


def test_class_9_a_line_break_in_a_path_stays_on_one_line(world: Path, capsys) -> None:
    """A path holding a line break is shown with \\n: the error is still exactly one line."""
    _refused(world, capsys, ["eval", "--collection", "no\nsuch"], "no\\nsuch: no such collection file or folder")


STORE_CASES = [
    pytest.param(
        "mem.db",
        ["store", "export-run", "mem.db", "--retriever", "bm25", "--out", "mem.db"],
        f"--out: 'mem.db' (str) is the input file 'mem.db'; {INPUT}",
        id="export-run-over-the-store",
    ),
    pytest.param(
        "mem.db",
        ["store", "export-queries", "mem.db", "--out", "./mem.db-wal"],
        f"--out: './mem.db-wal' (str) is the input file 'mem.db-wal'; {INPUT}",
        id="export-queries-over-the-store-journal",
    ),
    pytest.param(
        "corpus.jsonl",
        ["store", "export", "corpus.jsonl", "."],
        f"COLLECTION_DIR: 'corpus.jsonl' (str) is the input file 'corpus.jsonl'; {INPUT}",
        id="export-a-folder-over-the-store",
    ),
    pytest.param(
        "mem.db",
        ["store", "import", "notes/corpus.jsonl", "notes"],
        f"STORE: 'notes/corpus.jsonl' (str) is the input file 'notes/corpus.jsonl'; {INPUT}",
        id="import-into-a-collection-file",
    ),
    pytest.param(
        "mem.db",
        ["store", "import", "new.db", "notes", "--timeout", "1_0"],
        "--timeout: '1_0' (str) is not a number; give seconds, e.g. 5 or 0.5",
        id="timeout-underscore",
    ),
]


@pytest.mark.parametrize(("store", "argv", "message"), STORE_CASES)
def test_class_2_and_7_the_store_commands_refuse_outputs_over_their_inputs(
    world: Path, capsys, store: str, argv: list[str], message: str
) -> None:
    """agentmemory store: an export may not replace the store it reads (or its journal), nor an import a collection file."""
    assert main(["store", "import", store, "notes"]) == 0
    (world / f"{store}-wal").touch()
    capsys.readouterr()
    _refused(world, capsys, argv, message)
