"""Known releases of collection files: which published (or shipped) file a sha256 is, and how we know.

Every collection records its input files' sha256 (:attr:`Collection.files
<agentmemory.collection.Collection>`).  :data:`RELEASES` is the one
table that turns those hashes into a release's name for the definitions card
(:mod:`agentmemory.analysis.card`): a collection whose every file is a file
of one release is that release; any other (one byte changed, another copy,
a file of ours edited) is an **unknown release**, and the card says so.

Only hashes that were computed here from the file itself, or that a source
states, are recorded, each with where it comes from (:attr:`Release.source`).
Never the data: the table holds names and hashes only.

* **LoCoMo** ``locomo10.json``: the file of snap-research/LoCoMo
  (``data/locomo10.json``, added in commit ``cbfbc1db``, 2024-08-09), the same
  bytes as the copy mem0's evaluation reads (mem0ai/mem0
  ``evaluation/dataset/locomo10.json``, added in commit ``ea220047``,
  2025-04-29): both hashed from the repositories' files, and the hash checked
  against the copy on the development machine.
* **The shipped samples** (``fixtures/``): releases of ours, authored for
  agentmemory; ``tests/datasets/test_releases.py`` recomputes every hash, so
  a changed fixture byte fails it until the table is updated on purpose.

No LongMemEval file is here: no release's hash was verified or found stated
in a source (the 2024 files and the 2025 "cleaned" ones differ), so a
LongMemEval file is an unknown release until one is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["RELEASES", "Release", "release_named", "release_of"]


@dataclass(frozen=True)
class Release:
    """One known release: its name, each file's name in it with its sha256, and where the hashes come from.

    Attributes:
        name: how cards and captions name it (``"LoCoMo (original = mem0 copy)"``).
        files: file name (as the release names it, POSIX, relative to its folder) -> sha256.
        source: where each hash comes from: the file it was computed from, or the source that states it.
        aliases: other names people give the release (``"locomo10"``, ``"snap-research/LoCoMo"``), which
            :func:`release_named` reads besides the name and the file names.
    """

    name: str
    files: Mapping[str, str]
    source: str
    aliases: tuple[str, ...] = ()


_OURS = "authored for agentmemory and shipped in fixtures/{}; sha256 of the committed files, recomputed by "
_GUARD = "tests/datasets/test_releases.py"

RELEASES: tuple[Release, ...] = (
    Release(
        "LoCoMo (original = mem0 copy)",
        {"locomo10.json": "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"},
        "sha256 of github.com/snap-research/LoCoMo data/locomo10.json (commit cbfbc1db, 2024-08-09) and of "
        "github.com/mem0ai/mem0 evaluation/dataset/locomo10.json (added in commit ea220047, 2025-04-29): the same "
        "bytes; checked against the developers' copy",
        ("LoCoMo", "LoCoMo10", "snap-research/LoCoMo", "mem0ai/mem0 locomo10"),
    ),
    Release(
        "agentmemory assistant-notes fixture",
        {
            "corpus.jsonl": "11ff3a637bb963cdca155363f32621621f1cce37c7e23d0fbf04ecc531b461f7",
            "queries.jsonl": "f43f519db9797c8f83b9ee106f86aa1dd54037f4ba2ab9c7ee6522782321e132",
            "qrels/test.tsv": "b49979eb5208b6d74ccb96ebc0f13fb57e847dfbe7b9fac0d183f6b124e8ca00",
        },
        _OURS.format("assistant-notes") + _GUARD,
    ),
    Release(
        "agentmemory BEIR sample",
        {
            "corpus.jsonl": "6eb622c77d906b6ed4d71dd6deae56304ee1cee892432899098a31c115bed652",
            "queries.jsonl": "46f6f54661caea6aa279b2c95e0be85bba0359f36835b66fac6289016eb7c7fc",
            "qrels/test.tsv": "09e121f80d4c64ec692c1484e8f3a2a047084983c43f5ec366417e988454b227",
            "qrels/dev.tsv": "836a5e71e69394cc08cf5559fcd44870020e32be1a982a2ce472fc8bdf41957b",
        },
        _OURS.format("beir-sample") + _GUARD,
    ),
    Release(
        "agentmemory LoCoMo sample",
        {"locomo-sample.json": "7cd7040c7c48352023ba07d6d2236698956f4364120240cc798d1e97fac863aa"},
        _OURS.format("locomo-sample") + _GUARD,
    ),
    Release(
        "agentmemory LongMemEval sample",
        {"longmemeval-sample.json": "44ddffa673d3332f0d5b5d8098a974f6e265097e53de4d26ab0b106f1f7bf668"},
        _OURS.format("longmemeval-sample") + _GUARD,
    ),
    Release(
        "agentmemory BEAM sample",
        {
            "1/chat.json": "63bb6593f8131a1594b22f1ea1576f116ad94e25463711b012a329ce29e835dd",
            "1/probing_questions/probing_questions.json": (
                "2da9843ec582158cbabbcbdcedcd94a26baba4535e1d629f443b9d5fb06d74fa"
            ),
            "2/chat.json": "4a514b3ffb0a8c1d862f1ca96bbd3343f0ab596c3bec72c781849accedca2e1c",
            "2/probing_questions/probing_questions.json": (
                "7db3115b6a26bb3c4b6ad2d665f0c31106c609954ff84278fcdcf532a417624f"
            ),
        },
        _OURS.format("beam-sample") + _GUARD,
    ),
)
"""Every known release (see the module docstring): only verified or source-stated hashes."""


def release_of(files: Mapping[str, str], releases: tuple[Release, ...] = RELEASES) -> Release | None:
    """The release every one of ``files`` (name -> sha256) belongs to, by hash; ``None`` when there is none.

    Names are not compared (a renamed copy is still the release); a
    collection may read part of a release (one qrels split of two).  A
    collection without files (a synthetic one) has no release.
    """
    hashes = set(files.values())
    if not hashes:
        return None
    return next((r for r in releases if hashes <= set(r.files.values())), None)


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def release_named(text: str, releases: tuple[Release, ...] = RELEASES) -> Release | None:
    """The release ``text`` names, or ``None``: its name, one of its aliases, or one of its files' names with or
    without the suffix (``"locomo10"``, ``"locomo10.json"``), compared without case.

    What a claims file writes for ``collection`` is a label; this turns it into the release's hashes, so that two
    labels of one file are one release.  A text that names files of two releases (``"corpus"``) names neither.
    """
    wanted = _plain(text)
    for release in releases:
        if wanted in {_plain(release.name), *(_plain(a) for a in release.aliases)}:
            return release
    found = []
    for release in releases:
        names = {_plain(n) for n in release.files} | {
            _plain(n.rsplit("/", 1)[-1].rsplit(".", 1)[0]) for n in release.files
        }
        if wanted in names:
            found.append(release)
    return found[0] if len(found) == 1 else None
