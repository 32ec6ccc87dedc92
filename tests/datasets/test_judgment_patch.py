"""Judgment patches: the authored patch of the LoCoMo sample, and one clear line for every bad line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory.datasets import load
from agentmemory.datasets.judgment_patch import read_judgment_patch
from agentmemory.errors import InputError, MissingFileError

SAMPLE = REPO_ROOT / "fixtures/locomo-sample/locomo-sample.json"
PATCH = REPO_ROOT / "fixtures/locomo-sample/qrels-patch.jsonl"


@pytest.fixture(scope="module")
def sample():
    return load(SAMPLE)


def _write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "fixes.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _fix(query: str = "conv-2/q2", entry: str = "conv-2/D2:4", grade: object = 1, reason: str = "why") -> dict:
    return {"query_id": query, "entry_id": entry, "grade": grade, "reason": reason}


def test_the_authored_patch(sample) -> None:
    """The sample's patch adds, removes and regrades one judgment each, on two queries, and nothing else."""
    patch = read_judgment_patch(PATCH, sample)
    assert patch.name == "qrels-patch.jsonl"
    assert patch.counts() == {"changed": 3, "removed": 1, "regraded": 1, "added": 1, "queries": 2}
    assert [(c.line, c.query_id, c.entry_id, c.before, c.after, c.kind) for c in patch.corrections] == [
        (1, "conv-2/q2", "conv-2/D2:4", None, 1, "added"),
        (2, "conv-2/q1", "conv-2/D3:1", 1, None, "removed"),
        (3, "conv-2/q2", "conv-2/D2:5", 1, 2, "regraded"),
    ]
    assert patch.summary() == "3 judgments changed (1 removed, 1 regraded, 1 added) on 2 queries by qrels-patch.jsonl"
    patched = patch.apply(sample)
    assert patched.judgment_patch is patch and sample.judgment_patch is None
    assert dict(patched.qrels["conv-2/q2"]) == {"conv-2/D1:1": 1, "conv-2/D2:3": 1, "conv-2/D2:5": 2, "conv-2/D2:4": 1}
    assert dict(patched.qrels["conv-2/q1"]) == {"conv-2/D1:4": 1}
    unchanged = set(sample.qrels) - {"conv-2/q1", "conv-2/q2"}
    assert all(dict(patched.qrels[q]) == dict(sample.qrels[q]) for q in unchanged)
    reverted = patch.revert(patched)
    assert {q: dict(d) for q, d in reverted.qrels.items()} == {q: dict(d) for q, d in sample.qrels.items()}
    assert reverted.judgment_patch is None


def test_removing_every_judgment_of_a_query_makes_it_unjudged(tmp_path: Path, sample) -> None:
    """A query left without judgments is unjudged (left out of every mean), and revert brings it back."""
    path = _write(tmp_path, _fix("conv-1/q0", "conv-1/D1:1", "remove"))
    patch = read_judgment_patch(path, sample)
    patched = patch.apply(sample)
    assert "conv-1/q0" in patched.unjudged_query_ids and "conv-1/q0" not in sample.unjudged_query_ids
    assert dict(patch.revert(patched).qrels["conv-1/q0"]) == {"conv-1/D1:1": 1}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['["q", "e"]'], r':1: is not a JSON object; expected \{"query_id"'),
        (
            [{**_fix(), "note": "x"}],
            r":1: has the field 'note', which a correction does not take; its fields are "
            "query_id, entry_id, grade, reason$",
        ),
        ([{"query_id": "conv-2/q2", "entry_id": "conv-2/D2:4", "grade": 1}], r":1: has no reason; a correction has"),
        ([_fix(query="conv-9/q1")], r":1: query 'conv-9/q1' is not a query of the collection 'locomo-sample'$"),
        (
            [_fix(query="conv-1/q2")],
            r":1: query 'conv-1/q2' was left out by the loader \(evidence 'D1:6; D2:3' "
            r"holds several ids in one string\); load it with --repair",
        ),
        ([_fix(entry="conv-2/D9:9")], r":1: entry 'conv-2/D9:9' is not an entry of the collection 'locomo-sample'$"),
        (
            [_fix(entry="conv-1/D1:1")],
            r":1: entry 'conv-1/D1:1' is in scope 'conv-1', outside the scope 'conv-2' "
            r"that query 'conv-2/q2' searches$",
        ),
        (
            [_fix(), _fix(grade=2)],
            r":2: corrects query 'conv-2/q2' and entry 'conv-2/D2:4' again \(first on line "
            r"1\); give each pair once$",
        ),
        (
            [_fix(grade="remove")],
            r":1: removes the judgment of query 'conv-2/q2' and entry 'conv-2/D2:4', which the "
            r"collection does not judge$",
        ),
        (
            [_fix(entry="conv-2/D2:3")],
            r":1: sets query 'conv-2/q2' and entry 'conv-2/D2:3' to grade 1, which the "
            r"collection already gives it; drop the line$",
        ),
        ([_fix(grade=True)], r':1: grade True is neither an integer nor "remove"'),
        ([_fix(grade=1.0)], r':1: grade 1\.0 is neither an integer nor "remove"'),
        ([_fix(grade="delete")], r':1: grade \'delete\' is neither an integer nor "remove"'),
        (
            [_fix(grade=32768)],
            r":1: grade 32768 is outside -32768\.\.32767, the grades trec_eval and pytrec_eval score; give a grade "
            r"such as 1 or 0$",
        ),
        ([_fix(grade=-32769)], r":1: grade -32769 is outside -32768\.\.32767, "),
        ([_fix(reason="  ")], r":1: reason '  ' is not a non-empty string; say why the judgment changes$"),
        ([_fix(query="")], r":1: query_id '' is not a non-empty string$"),
        ([_fix(), "{not json"], r":2: "),
    ],
)
def test_a_bad_line_is_one_error_naming_the_file_and_line(tmp_path: Path, sample, lines, message) -> None:
    """Each bad correction is refused with the file, its line and what is wrong (the first bad line wins)."""
    path = _write(tmp_path, *lines)
    with pytest.raises(InputError, match="^" + str(path).replace("\\", "\\\\") + message) as info:
        read_judgment_patch(path, sample)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("grade", [-32768, 32767])
def test_the_grades_at_the_ends_of_the_range_are_taken(tmp_path: Path, sample, grade: int) -> None:
    """GRADE_RANGE's ends are grades a patch may set."""
    patch = read_judgment_patch(_write(tmp_path, _fix(grade=grade)), sample)
    assert patch.apply(sample).qrels["conv-2/q2"]["conv-2/D2:4"] == grade


def test_an_empty_or_missing_patch_is_refused(tmp_path: Path, sample) -> None:
    """A patch without a correction says so; a missing file is named."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"empty\.jsonl: holds no correction; expected one JSON object per line"):
        read_judgment_patch(empty, sample)
    with pytest.raises(MissingFileError, match=r"nope\.jsonl: no such file$"):
        read_judgment_patch(tmp_path / "nope.jsonl", sample)
