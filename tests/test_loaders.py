"""loaders.load: format registry, auto-detection, option checks, and the BEIR folder format."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from agentmemory.errors import InputError, MissingFileError, ParameterError, UnknownNameError
from agentmemory.loaders import FORMATS, detect_format, load
from agentmemory.locomo import load_locomo
from agentmemory.records import Provenance

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BEIR = FIXTURES / "beir-sample"
LOCOMO = FIXTURES / "locomo-sample" / "locomo-sample.json"


def test_registry_names_and_options():
    """FORMATS registers beir (option split) and locomo (options repair, include_captions)."""
    assert sorted(FORMATS) == ["beir", "locomo"]
    assert FORMATS["beir"].options == ("split",)
    assert FORMATS["locomo"].options == ("repair", "include_captions")


@pytest.mark.parametrize("path,expected", [(BEIR, "beir"), (LOCOMO, "locomo")])
def test_detect_format(path, expected):
    """A folder is beir, a .json file is locomo."""
    assert detect_format(path) == expected


def test_detect_format_json_suffix_any_case(tmp_path):
    """The .json suffix is matched case-insensitively."""
    path = tmp_path / "LOCOMO10.JSON"
    shutil.copy(LOCOMO, path)
    assert detect_format(path) == "locomo"
    assert len(load(path).entries) == 33


def test_auto_on_unrecognised_file(tmp_path):
    """A file no format recognises is rejected with the rules and the choices from the registry."""
    path = tmp_path / "data.txt"
    path.write_text("hello", encoding="utf-8")
    expected = (
        f"format: 'auto' (str) cannot tell the format of {str(path)!r}; "
        "a folder is read as beir, a .json file as locomo; pass format= one of: beir, locomo"
    )
    with pytest.raises(ParameterError, match=re.escape(expected)):
        load(path)


def test_auto_on_missing_path(tmp_path):
    """A missing path raises MissingFileError naming it."""
    path = tmp_path / "nowhere"
    with pytest.raises(MissingFileError, match=re.escape(f"{path}: no such collection file or folder")):
        load(path)


@pytest.mark.parametrize("value", ["trec", "BEIR", "", None])
def test_unknown_format(value):
    """An unknown format names the value, its type and every valid choice."""
    expected = f"format: {value!r} ({type(value).__name__}) is not a known name; choose from: auto, beir, locomo"
    with pytest.raises(UnknownNameError, match=re.escape(expected)):
        load(BEIR, format=value)


def test_load_locomo_dispatch_matches_load_locomo():
    """load() on a .json file gives exactly what load_locomo gives, options passed through."""
    for options in ({}, {"repair": True}, {"include_captions": True}):
        via_load = load(LOCOMO, **options)
        direct = load_locomo(LOCOMO, **options)
        assert via_load.entries == direct.entries
        assert via_load.queries == direct.queries
        assert via_load.skipped == direct.skipped
        assert via_load.repairs == direct.repairs
    assert load(LOCOMO, format="locomo", repair=True).repairs == load_locomo(LOCOMO, repair=True).repairs


@pytest.mark.parametrize(
    "path,options,message",
    [
        (
            BEIR,
            {"repair": True},
            "repair: True (bool) does not apply to the beir format; repair applies to: locomo; leave it at False for beir",
        ),
        (
            BEIR,
            {"include_captions": True},
            "include_captions: True (bool) does not apply to the beir format; include_captions applies to: locomo; leave it at False for beir",
        ),
        (
            LOCOMO,
            {"split": "dev"},
            "split: 'dev' (str) does not apply to the locomo format; split applies to: beir; leave it at 'test' for locomo",
        ),
    ],
)
def test_options_that_do_not_apply_are_rejected(path, options, message):
    """An option the chosen format does not take must stay at its default."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        load(path, **options)


@pytest.mark.parametrize(
    "options,message",
    [
        (
            {"split": "../test"},
            "split: '../test' (str) is not a split name; a split names a file qrels/<split>.tsv, e.g. 'test' or 'dev'",
        ),
        ({"split": ""}, "split: '' (str) is not a split name;"),
        ({"split": 1}, "split: 1 (int) is not a split name;"),
        ({"repair": "yes"}, "repair: 'yes' (str) is not a bool; pass repair=True or repair=False"),
        (
            {"include_captions": 1},
            "include_captions: 1 (int) is not a bool; pass include_captions=True or include_captions=False",
        ),
    ],
)
def test_bad_option_values(options, message):
    """Option values of the wrong kind are rejected before anything is read."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        load(BEIR, **options)


def test_explicit_format_mismatch():
    """Forcing a format on the wrong kind of path fails in that format's reader, naming the path."""
    with pytest.raises(InputError, match=re.escape(f"{LOCOMO}: is not a folder;")):
        load(LOCOMO, format="beir")
    with pytest.raises(InputError, match=re.escape(f"{BEIR}: is not a file; pass the LoCoMo JSON file")):
        load(BEIR, format="locomo")


# -- BEIR ----------------------------------------------------------------------


def test_beir_title_joined_to_text():
    """A non-empty title is prepended to the text with one space; empty or absent titles are not."""
    collection = load(BEIR)
    texts = {e.id: e.text for e in collection.entries}
    assert texts == {
        "doc1": "Tomato seedlings Harden off tomato seedlings for a week before planting them outdoors.",
        "doc2": "Basil Basil wilts below 10 degrees Celsius; keep it indoors until late May.",
        "doc3": "Water potted plants in the morning so the leaves dry before night.",
        "doc4": "Compost needs a mix of green and brown material, roughly one part green to three parts brown.",
        "doc5": "Slugs Copper tape around raised beds keeps most slugs away from lettuce.",
    }


def test_beir_extra_fields_kept_in_metadata():
    """Fields beyond _id/text/title land in metadata, for entries and queries."""
    collection = load(BEIR)
    meta = {e.id: dict(e.metadata) for e in collection.entries}
    assert meta == {
        "doc1": {"metadata": {"source": "garden-notes"}},
        "doc2": {"metadata": {"source": "garden-notes"}, "url": "https://example.org/basil"},
        "doc3": {"metadata": {}},
        "doc4": {},
        "doc5": {"metadata": {"source": "forum"}, "lang": "en"},
    }
    assert {q.id: dict(q.metadata) for q in collection.queries} == {
        "q1": {"metadata": {}},
        "q2": {},
        "q3": {},
        "q4": {"metadata": {"difficulty": "easy"}},
        "q5": {},
    }


def test_beir_without_memory_fields():
    """Without tags, created_at or provenance, entries get no tags, no time and unknown provenance."""
    for entry in load(BEIR).entries:
        assert entry.tags == ()
        assert entry.created_at is None
        assert entry.provenance == Provenance()
        assert entry.scope is None
    assert all(q.tags is None and q.group is None and q.scope is None for q in load(BEIR).queries)


def test_beir_test_split():
    """split='test' (the default) reads qrels/test.tsv, grades as written; dev-only queries are unjudged."""
    collection = load(BEIR)
    assert {q: dict(d) for q, d in collection.qrels.items()} == {
        "q1": {"doc1": 1},
        "q2": {"doc2": 2, "doc3": 0},
        "q3": {"doc3": 1},
    }
    assert [q.id for q in collection.judged_queries] == ["q1", "q2", "q3"]
    assert collection.unjudged_query_ids == ("q4", "q5")
    assert collection.relevant("q2") == ("doc2",)
    assert collection.name == "beir-sample"
    assert collection.skipped == () and collection.repairs == ()


def test_beir_dev_split_and_file_hashes():
    """split='dev' reads qrels/dev.tsv and hashes exactly the files it read."""
    collection = load(BEIR, split="dev")
    assert {q: dict(d) for q, d in collection.qrels.items()} == {"q4": {"doc4": 1}, "q5": {"doc5": 1}}
    assert dict(collection.files) == {
        name: hashlib.sha256((BEIR / name).read_bytes()).hexdigest()
        for name in ("corpus.jsonl", "qrels/dev.tsv", "queries.jsonl")
    }


def test_beir_missing_split():
    """A split with no qrels file raises MissingFileError naming the file."""
    with pytest.raises(MissingFileError, match=re.escape(f"{BEIR / 'qrels' / 'train.tsv'}: no such file")):
        load(BEIR, split="train")
