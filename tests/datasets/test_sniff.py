"""first_record_keys: the keys of a JSON file's first record, read as a stream, checked against the json module."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmemory.datasets.sniff import first_record_has_keys, first_record_keys

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def expected_keys(document: object) -> list[str]:
    """The first record's keys as the json module sees them (duplicate keys are impossible in a dict)."""
    if isinstance(document, list):
        document = document[0] if document else None
    return list(document) if isinstance(document, dict) else []


@settings(max_examples=200, deadline=None)
@given(document=VALUES, chunk=st.integers(1, 9), ensure_ascii=st.booleans(), indent=st.sampled_from([None, 0, 2]))
def test_keys_match_the_json_module(document, chunk, ensure_ascii, indent):
    """For any JSON document, any chunk size (strings and escapes cut anywhere), the keys are json.loads' keys."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "doc.json"
        path.write_text(json.dumps(document, ensure_ascii=ensure_ascii, indent=indent), encoding="utf-8")
        assert list(first_record_keys(path, chunk=chunk)) == expected_keys(document)


@pytest.mark.parametrize(
    "text,keys",
    [
        ('{"a": 1, "b": {"c": 2}, "d": [{"e": 3}]}', ["a", "b", "d"]),
        ('[{"a": "x\\"y", "b": "}"}, {"z": 1}]', ["a", "b"]),
        ('  \n[ {"a":1} ]', ["a"]),
        ('{"a": 1, "b": ', ["a", "b"]),  # a truncated file still yields what it has
        ('{"a": "unterminated', ["a"]),
        ("[1, 2]", []),
        ("3", []),
        ("", []),
        ("\x00\xff garbage", []),
    ],
)
def test_first_record_keys_table(tmp_path, text, keys):
    """Keys of the top-level object or of a top-level list's first object; anything else yields none."""
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    assert list(first_record_keys(path)) == keys


def test_reading_stops_at_the_keys_asked_for(tmp_path):
    """first_record_has_keys stops once every key is seen: the rest of the file is never read or checked."""
    path = tmp_path / "x.json"
    with path.open("w", encoding="utf-8") as handle:
        handle.write('[{"qa": [], "conversation": {}, "rest": "')
        handle.write("x" * 5_000_000)  # never reached
    assert first_record_has_keys(path, ("conversation", "qa"))
    assert not first_record_has_keys(path, ("conversation", "missing"))


def test_invalid_utf8_is_read_without_error(tmp_path):
    """Bytes that are not UTF-8 are replaced, never raised: a recogniser must not fail on a strange file."""
    path = tmp_path / "x.json"
    path.write_bytes(b'{"caf\xe9": 1, "qa": 2}')
    assert list(first_record_keys(path)) == ["caf\ufffd", "qa"]
