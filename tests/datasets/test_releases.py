"""Known releases: the shipped samples' hashes are guarded, and a changed byte makes an unknown release."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.card import UNKNOWN_RELEASE, card_text, evaluation_card
from agentmemory.datasets import load
from agentmemory.datasets.releases import RELEASES, Release, release_named, release_of

# Each of our releases and the fixture folder it is shipped in.
OURS = {
    "agentmemory assistant-notes fixture": "fixtures/assistant-notes",
    "agentmemory BEIR sample": "fixtures/beir-sample",
    "agentmemory LoCoMo sample": "fixtures/locomo-sample",
    "agentmemory LongMemEval sample": "fixtures/longmemeval-sample",
    "agentmemory BEAM sample": "fixtures/beam-sample",
}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("release", [r for r in RELEASES if r.name in OURS], ids=lambda r: r.name)
def test_our_releases_are_the_committed_files(release: Release) -> None:
    """Every hash of a shipped sample is the committed file's: a fixture changed without updating the table
    fails here (and its card would say "unknown release")."""
    folder = REPO_ROOT / OURS[release.name]
    for name, sha in release.files.items():
        assert _sha(folder / name) == sha, f"{folder / name} changed: update RELEASES if the change is meant"


def test_every_release_names_its_source_and_every_hash_is_sha256() -> None:
    """A release says where its hashes come from; names are unique; hashes are 64 lowercase hex digits."""
    assert len({r.name for r in RELEASES}) == len(RELEASES)
    for release in RELEASES:
        assert release.source.strip()
        for sha in release.files.values():
            assert len(sha) == 64 and set(sha) <= set("0123456789abcdef")
    locomo = next(r for r in RELEASES if r.name.startswith("LoCoMo"))
    assert locomo.files == {"locomo10.json": "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"}
    assert "snap-research/LoCoMo" in locomo.source and "mem0ai/mem0" in locomo.source


def test_release_of_matches_by_hash_not_name() -> None:
    """A renamed copy is still the release; part of a release (one qrels split) is too; one foreign hash is not."""
    beir = next(r for r in RELEASES if r.name == "agentmemory BEIR sample")
    test_split = {k: v for k, v in beir.files.items() if k != "qrels/dev.tsv"}
    assert release_of(test_split) is beir
    assert release_of({"renamed.jsonl": beir.files["corpus.jsonl"]}) is beir
    assert release_of({**test_split, "extra.txt": "0" * 64}) is None
    assert release_of({}) is None


def test_one_changed_byte_makes_the_card_say_unknown_release(tmp_path: Path) -> None:
    """The LoCoMo sample with one byte changed loads and evaluates as before, but its card names no release."""
    source = REPO_ROOT / "fixtures/locomo-sample/locomo-sample.json"
    copy = tmp_path / "locomo-sample.json"
    shutil.copyfile(source, copy)
    data = copy.read_bytes()
    at = data.index(b"pottery")
    copy.write_bytes(data[:at] + b"P" + data[at + 1 :])  # one byte: "pottery" -> "Pottery"
    original = evaluation_card(evaluate(load(source), "bm25"))
    changed = evaluation_card(evaluate(load(copy), "bm25"))
    assert original["data"]["release"] == "agentmemory LoCoMo sample"
    assert changed["data"]["release"] is None and changed["data"]["release_source"] is None
    assert changed["data"]["files"] == [{"name": "locomo-sample.json", "sha256": _sha(copy)}]
    assert changed["short_form"].startswith(f"locomo-sample ({UNKNOWN_RELEASE}), turns, ")
    assert f"release: **{UNKNOWN_RELEASE}**" in card_text(changed)
    assert str(tmp_path) not in card_text(changed)  # the file's name only, never its folder


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("LoCoMo (original = mem0 copy)", "LoCoMo (original = mem0 copy)"),
        ("locomo10", "LoCoMo (original = mem0 copy)"),  # the file's name without its suffix
        ("locomo10.json", "LoCoMo (original = mem0 copy)"),
        ("snap-research/locomo", "LoCoMo (original = mem0 copy)"),  # an alias, without case
        ("agentmemory  LoCoMo sample", "agentmemory LoCoMo sample"),
        ("corpus", None),  # files of two releases: neither
        ("LongMemEval-S (cleaned)", None),
    ],
)
def test_release_named_reads_names_aliases_and_file_names(text: str, expected: str | None) -> None:
    """A claim's label for a collection becomes a known release (and so its hashes) when it names one."""
    found = release_named(text)
    assert (found.name if found is not None else None) == expected
