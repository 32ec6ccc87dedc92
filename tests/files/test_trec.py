"""TREC run and qrels files: order, reading, writing, and every input error."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import doc_scores, qrels_sets, runs

from agentmemory.errors import InputError, MissingFileError, ParameterError
from agentmemory.files.trec import hits_to_run, read_qrels, read_run, trec_order, write_qrels, write_run
from agentmemory.records import Hit


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _exact(message: str) -> str:
    return f"^{re.escape(message)}$"


# ---------------------------------------------------------------- trec_order


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ({"a": 1.0, "b": 1.0, "c": 2.0}, ["c", "b", "a"]),
        ({"d1": 0.5, "d2": 0.7, "d3": 0.6}, ["d2", "d3", "d1"]),
        ({"d10": 1.0, "d2": 1.0, "d9": 1.0}, ["d9", "d2", "d10"]),  # byte-wise, not numeric
        ({"B": 1.0, "a": 1.0, "b": 1.0}, ["b", "a", "B"]),  # upper case sorts before lower case
        ({"a": 0.0, "b": -0.0}, ["b", "a"]),  # 0.0 and -0.0 tie
        ({"é": 1.0, "z": 1.0, "日本": 1.0, "e": 1.0}, ["日本", "é", "z", "e"]),
        ({"x": float("-inf"), "y": float("inf"), "z": 1e308}, ["y", "z", "x"]),
        ({}, []),
    ],
)
def test_trec_order(scores, expected):
    """trec_order ranks by score descending, then document id descending (byte-wise)."""
    assert trec_order(scores) == expected


@given(doc_scores)
def test_trec_order_matches_utf8_byte_order(scores):
    """Ties are broken exactly as trec_eval's strcmp on the UTF-8 bytes of the ids, in descending order."""
    expected = sorted(scores, key=lambda doc: (scores[doc], doc.encode("utf-8")), reverse=True)
    assert trec_order(scores) == expected


def test_trec_order_rejects_nan():
    """A NaN score cannot be ranked and is reported with its document."""
    message = "score of document 'b': nan (float) is not a number; every score must be a comparable number (NaN cannot be ranked)"
    with pytest.raises(ParameterError, match=_exact(message)):
        trec_order({"a": 1.0, "b": float("nan")})


# ---------------------------------------------------------------- reading


def test_read_qrels(tmp_path):
    """Qrels lines become {query: {doc: grade}}; blank lines, tabs and CRLF are fine; grades keep their sign."""
    path = _write(tmp_path, "qrels", "q1 0 d1 1\r\n\nq1\t0\td2\t0\n  \nq2 1 d1 -1\nq1 0 d3 +2\n")
    assert read_qrels(path) == {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": -1}}


def test_read_run_ignores_rank_column(tmp_path):
    """Run lines become {query: {doc: score}}; the rank, Q0 and tag columns are ignored."""
    path = _write(tmp_path, "run", "q1 Q0 d1 1 0.5 tagA\n\nq1 Q0 d2 1 1.5e0 tagB\nq2 x d1 7 -3 t\nq2 Q0 d2 0 inf t\n")
    assert read_run(path) == {"q1": {"d1": 0.5, "d2": 1.5}, "q2": {"d1": -3.0, "d2": float("inf")}}


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_run_holds_no_query_and_empty_qrels_are_refused(tmp_path, text):
    """An empty run file (or only blank lines) is valid and holds no query; empty qrels are refused: nothing could be scored."""
    assert read_run(_write(tmp_path, "run", text)) == {}
    path = _write(tmp_path, "qrels", text)
    message = f"{path}: holds no judgments; expected at least one line query_id iteration doc_id relevance"
    with pytest.raises(InputError, match=_exact(message)):
        read_qrels(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n",
            "2: found 5 fields; expected 6 whitespace-separated fields: query_id Q0 doc_id rank score run_tag",
        ),
        (
            "q1 Q0 d1 1 0.5 t extra\n",
            "1: found 7 fields; expected 6 whitespace-separated fields: query_id Q0 doc_id rank score run_tag",
        ),
        (
            "\n\nq1\n",
            "3: found 1 field; expected 6 whitespace-separated fields: query_id Q0 doc_id rank score run_tag",
        ),
        (
            "q1 Q0 d1 1 high t\n",
            "1: score 'high' is not a number; expected a number such as 12.5, -3 or 1e-05 (ASCII digits with an optional sign, decimal point and exponent, or inf)",
        ),
        (
            "q1 Q0 d1 1 nan t\n",
            "1: score 'nan' is not a number; expected a number such as 12.5, -3 or 1e-05 (ASCII digits with an optional sign, decimal point and exponent, or inf)",
        ),
        (
            "q1 Q0 d1 1 1_000 t\n",
            "1: score '1_000' is not a number; expected a number such as 12.5, -3 or 1e-05 (ASCII digits with an optional sign, decimal point and exponent, or inf)",
        ),
        (
            "q1 Q0 d1 1 0,5 t\n",
            "1: score '0,5' is not a number; expected a number such as 12.5, -3 or 1e-05 (ASCII digits with an optional sign, decimal point and exponent, or inf)",
        ),
        (
            "q1 Q0 d3 1 0.5 t\nq1 Q0 d3 2 0.4 t\n",
            "2: document 'd3' appears twice for query 'q1' (first on line 1); "
            "expected each document at most once per query",
        ),
        (
            "q1 Q0 d1 1 0.5 t\nq2 Q0 d3 1 0.5 t\n\nq2 Q0 d3 2 0.1 t\n",
            "4: document 'd3' appears twice for query 'q2' (first on line 2); "
            "expected each document at most once per query",
        ),
    ],
)
def test_read_run_errors(tmp_path, text, message):
    """Every malformed run line is reported with the file, the line number and what was expected."""
    path = _write(tmp_path, "run.txt", text)
    with pytest.raises(InputError, match=_exact(f"{path}:{message}")):
        read_run(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 0 d1\n", "1: found 3 fields; expected 4 whitespace-separated fields: query_id iteration doc_id relevance"),
        (
            "q1 0 d1 1\nq1 0 d2 1 x\n",
            "2: found 5 fields; expected 4 whitespace-separated fields: query_id iteration doc_id relevance",
        ),
        (
            "q1 0 d1 1.5\n",
            "1: relevance '1.5' is not an integer; expected an integer grade such as 0, 1 or 2 (an optional sign and ASCII digits)",
        ),
        (
            "q1 0 d1 yes\n",
            "1: relevance 'yes' is not an integer; expected an integer grade such as 0, 1 or 2 (an optional sign and ASCII digits)",
        ),
        (
            "q1 0 d1 1_0\n",
            "1: relevance '1_0' is not an integer; expected an integer grade such as 0, 1 or 2 (an optional sign and ASCII digits)",
        ),
        (
            "q1 0 d1 ٣\n",
            "1: relevance '٣' is not an integer; expected an integer grade such as 0, 1 or 2 (an optional sign and ASCII digits)",
        ),
        (
            "q1 0 d1 -\n",
            "1: relevance '-' is not an integer; expected an integer grade such as 0, 1 or 2 (an optional sign and ASCII digits)",
        ),
        (
            "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n",
            "3: document 'd1' appears twice for query 'q1' (first on line 1); "
            "expected each document at most once per query",
        ),
    ],
)
def test_read_qrels_errors(tmp_path, text, message):
    """Every malformed qrels line is reported with the file, the line number and what was expected."""
    path = _write(tmp_path, "qrels.txt", text)
    with pytest.raises(InputError, match=_exact(f"{path}:{message}")):
        read_qrels(path)


def test_same_document_in_two_queries_is_fine(tmp_path):
    """A document id may appear once in each of several queries."""
    path = _write(tmp_path, "run", "q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1 t\n")
    assert read_run(path) == {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}


@pytest.mark.parametrize("reader", [read_run, read_qrels])
def test_missing_file(tmp_path, reader):
    """A missing file raises MissingFileError (a FileNotFoundError) naming the path."""
    path = tmp_path / "nope.txt"
    with pytest.raises(MissingFileError, match=_exact(f"{path}: no such file")):
        reader(path)


@pytest.mark.parametrize("reader", [read_run, read_qrels])
def test_folder_instead_of_file(tmp_path, reader):
    """A folder where a file is expected is an InputError naming the path."""
    with pytest.raises(InputError, match=_exact(f"{tmp_path}: is a folder; expected a file")):
        reader(tmp_path)


def test_invalid_utf8(tmp_path):
    """Bytes that are not UTF-8 are reported with their line."""
    path = _write(tmp_path, "run", b"q1 Q0 d1 1 1 t\nq1 Q0 d\xff 2 1 t\n")
    message = f"{path}:2: is not valid UTF-8 (invalid start byte); expected UTF-8 text"
    with pytest.raises(InputError, match=_exact(message)):
        read_run(path)


# ---------------------------------------------------------------- writing


def test_write_run_format(tmp_path):
    """write_run sorts queries by id, ranks documents in trec_order, numbers ranks from 1, writes repr scores."""
    path = tmp_path / "out" / "run.trec"
    write_run(path, {"q2": [("d1", 0.1)], "q1": [("a", 1.0), ("b", 1.0), ("c", 2), ("d", 0.1 + 0.2)]}, tag="bm25")
    assert path.read_text(encoding="utf-8") == (
        "q1 Q0 c 1 2.0 bm25\n"
        "q1 Q0 b 2 1.0 bm25\n"
        "q1 Q0 a 3 1.0 bm25\n"
        "q1 Q0 d 4 0.30000000000000004 bm25\n"
        "q2 Q0 d1 1 0.1 bm25\n"
    )


def test_write_run_accepts_mappings_and_writes_default_tag(tmp_path):
    """A run as read_run returns it (doc -> score mappings) can be written as is; the default tag is agentmemory."""
    path = tmp_path / "run"
    write_run(path, {"q": {"x": 1.0, "y": 3.0}})
    assert path.read_text(encoding="utf-8") == "q Q0 y 1 3.0 agentmemory\nq Q0 x 2 1.0 agentmemory\n"


def test_write_run_skips_queries_without_documents(tmp_path):
    """A query with no document writes no line (a TREC run cannot express it); an empty run writes an empty file."""
    path = tmp_path / "run"
    write_run(path, {"q1": [], "q2": {}})
    assert path.read_text(encoding="utf-8") == ""
    assert read_run(path) == {}


@given(runs)
def test_run_round_trip(run):
    """read_run(write_run(run)) gives back every score exactly, and the file's ranks follow trec_order."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run"
        write_run(path, run)
        assert read_run(path) == {qid: docs for qid, docs in run.items() if docs}
        lines = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    for qid, docs in run.items():
        written = [(fields[2], int(fields[3])) for fields in lines if fields[0] == qid]
        assert written == [(doc, rank) for rank, doc in enumerate(trec_order(docs), start=1)]


@given(qrels_sets.filter(bool))
def test_qrels_round_trip(qrels):
    """read_qrels(write_qrels(qrels)) gives back every grade."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qrels"
        write_qrels(path, qrels)
        assert read_qrels(path) == qrels


def test_write_qrels_format(tmp_path):
    """write_qrels sorts by query id then document id and writes iteration 0."""
    path = tmp_path / "qrels"
    write_qrels(path, {"q2": {"b": 1}, "q1": {"z": 0, "a": 2, "m": -1}})
    assert path.read_text(encoding="utf-8") == "q1 0 a 2\nq1 0 m -1\nq1 0 z 0\nq2 0 b 1\n"


@pytest.mark.parametrize(
    ("run", "tag", "message"),
    [
        (
            {"q 1": [("d", 1.0)]},
            "t",
            "query id: 'q 1' (str) contains whitespace; TREC files separate fields by whitespace, "
            "so no query id may contain any",
        ),
        (
            {"q": [("d\t2", 1.0)]},
            "t",
            "document id: 'd\\t2' (str) contains whitespace; TREC files separate fields by whitespace, "
            "so no document id may contain any",
        ),
        (
            {"q": [("d", 1.0)]},
            "my run",
            "tag: 'my run' (str) contains whitespace; TREC files separate fields by whitespace, "
            "so no tag may contain any",
        ),
        ({"q": [("d", 1.0)]}, "", "tag: '' (str) is empty; every tag in a TREC file needs at least one character"),
        (
            {"": [("d", 1.0)]},
            "t",
            "query id: '' (str) is empty; every query id in a TREC file needs at least one character",
        ),
        ({"q": [(3, 1.0)]}, "t", "document id: 3 (int) is not a str; document id must be text"),
        (
            {"q": [("d", 1.0), ("d", 2.0)]},
            "t",
            "documents of query 'q': 'd' (str) appears twice; list each document once per query",
        ),
        (
            {"q": [("d", float("nan"))]},
            "t",
            "score of document 'd': nan (float) is not a number; "
            "every score must be a comparable number (NaN cannot be ranked)",
        ),
        ({"q": [("d", "1.0")]}, "t", "score of document 'd': '1.0' (str) is not a number; scores must be real numbers"),
        (  # queries are checked in id order, each document in its order: q1's repeat before q2's bad id
            {"q2": [("d\x01", 1.0)], "q1": [("a", 2.0), ("a", 1.0)]},
            "t",
            "documents of query 'q1': 'a' (str) appears twice; list each document once per query",
        ),
        (
            {"q2": [("ok", 1.0)], "q1": [("a", 2.0), ("b\x85", 1.0)]},
            "t",
            "document id: 'b\\x85' (str) contains the control character '\\x85'; no document id in a TREC file may hold one",
        ),
        (
            {"q": [("a", 1), ("a", 2.0)]},
            "t",
            "documents of query 'q': 'a' (str) appears twice; list each document once per query",
        ),
    ],
)
def test_write_run_errors(tmp_path, run, tag, message):
    """write_run refuses what would make an unreadable or ambiguous file."""
    with pytest.raises(ParameterError, match=_exact(message)):
        write_run(tmp_path / "run", run, tag=tag)


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        (
            {"q": {"d 1": 1}},
            "document id: 'd 1' (str) contains whitespace; TREC files separate fields by whitespace, "
            "so no document id may contain any",
        ),
        (
            {"q": {"d": 1.0}},
            "relevance of document 'd' for query 'q': 1.0 (float) is not an integer; grades are integers",
        ),
        (
            {"q": {"d": True}},
            "relevance of document 'd' for query 'q': True (bool) is not an integer; grades are integers",
        ),
    ],
)
def test_write_qrels_errors(tmp_path, qrels, message):
    """write_qrels refuses ids with whitespace and grades that are not integers."""
    with pytest.raises(ParameterError, match=_exact(message)):
        write_qrels(tmp_path / "qrels", qrels)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_failed_write_keeps_old_file_and_leaves_no_temp_file(tmp_path):
    """A write that fails on bad input leaves the previous file untouched and no temporary file behind."""
    path = tmp_path / "run"
    write_run(path, {"q": [("d", 1.0)]})
    before = path.read_text(encoding="utf-8")
    with pytest.raises(ParameterError):
        write_run(path, {"q": [("d", 1.0)], "r": [("e", float("nan"))]})
    assert path.read_text(encoding="utf-8") == before
    assert _leftovers(tmp_path) == ["run"]


@pytest.mark.parametrize(
    "write",
    [
        lambda path: write_run(path, {"q": [("d", 2.0)]}),
        lambda path: write_qrels(path, {"q": {"d": 2}}),
    ],
    ids=["write_run", "write_qrels"],
)
def test_interrupted_rename_leaves_no_temp_file(tmp_path, monkeypatch, write):
    """If the final rename fails, the error propagates, the old file survives and the temporary file is removed."""
    path = tmp_path / "file"
    path.write_text("old\n", encoding="utf-8")

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write(path)
    assert path.read_text(encoding="utf-8") == "old\n"
    assert _leftovers(tmp_path) == ["file"]


def test_hits_to_run():
    """hits_to_run turns each query's Hit list into doc -> score, which write_run and score_run accept."""
    hits = {"q": [Hit("b", 2.0, 1), Hit("a", 1.0, 2)], "r": []}
    assert hits_to_run(hits) == {"q": {"b": 2.0, "a": 1.0}, "r": {}}


def test_hits_to_run_rejects_duplicates():
    """An entry listed twice among one query's hits is an error."""
    message = "hits of query 'q': 'b' (str) appears twice; a ranking lists each entry once"
    with pytest.raises(ParameterError, match=_exact(message)):
        hits_to_run({"q": [Hit("b", 2.0, 1), Hit("b", 1.0, 2)]})


@given(st.floats(allow_nan=False, width=64))
def test_written_scores_parse_back_exactly(score):
    """Every finite or infinite float survives the text form write_run uses (no rounding, so no new ties)."""
    assert float(repr(float(score))) == score
