"""Claims: published numbers to set beside our measurements (``agentmemory eval --claims FILE``).

A claims file is TOML, one ``[[claim]]`` table per claim::

    [[claim]]
    system = "bm25"                       # the system of the run the claim is set beside (its key or label)
    collection = "LongMemEval-S (cleaned)"  # the release the number was measured on (a known release's
                                          # name, alias or file name: "locomo10" is LoCoMo's locomo10.json)
    measure = "recall_any"                # a measure name of the registry (an alias too), without cutoff
    k = 5                                 # its cutoff; or budget = 2048 (tokens: R@2048tok); neither for RR
    granularity = "session"               # what the source's ranked items were: turn, session, ...
    value = 0.862                         # the number claimed, on the measure's own scale (0.862, not 86.2)
    source = "https://..."                # where it is published; or citation = "Author et al. 2025, Table 2"
    # optional:
    sha256 = "79fa87e9..."                # the sha256 of the file(s) measured on (one, or a list): the release
                                          # is matched by these hashes, whatever collection calls it
    questions = 500                       # how many questions the number averages over
    family = "LongMemEval"                # the definition the source states, when it states one
    about = "their BM25 (Porter stemming)"  # what the source measured, when not this run's system itself
    note = "..."
    illustrative = true                   # an example, not a published number (say so in citation too)
    answers = "zep_locomo_grades.json"    # the claim's own per-question evidence: an answer file (or several,
                                          # seeds), read relative to the claims file; its verdicts are scored
                                          # as the system `system` (agentmemory.answers), unless --answers
                                          # already names that system
    answers_format = "zep"                # the answer file's format, when its shape does not say

The measure is parsed by the measure registry (:func:`agentmemory.metrics.parse_measure`):
``measure`` and ``k`` make ``name@k``, ``measure`` and ``budget`` make
``name@<budget>tok``, so every measure the registry knows (a plugin's, a
token-budget one) is a claim's measure, and nothing else is.

:func:`read_claims` checks every claim before anything is evaluated; a bad
one is one :class:`~agentmemory.errors.InputError` naming the file and the
line of its ``[[claim]]`` header: a missing or unknown field, a value of the
wrong type, a measure we do not have (the registry's message, with the
names it knows), both ``k`` and ``budget``, neither ``source`` nor
``citation``.  What each claim is compared with, and how, is
:mod:`agentmemory.analysis.claim_checks`.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from agentmemory.errors import InputError, ParameterError, quote
from agentmemory.files.reading import decode_utf8, read_bytes
from agentmemory.metrics import Measure, parse_measure

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - python 3.10
    import tomli as tomllib

__all__ = ["CLAIM_FIELDS", "Claim", "Claims", "read_claims"]

CLAIM_FIELDS: Mapping[str, str] = {
    "system": "required: the system of the run the claim is set beside (its key or label)",
    "collection": "required: the collection release the number was measured on",
    "measure": "required: a measure name of the registry, without cutoff",
    "k": "the measure's cutoff, an integer >= 1",
    "budget": "the measure's token budget, an integer >= 1 (name@<budget>tok)",
    "granularity": "required: what the source ranked (turn, session, ...)",
    "value": "required: the number claimed, on the measure's own scale",
    "source": "where it is published (a URL); or citation",
    "citation": "the publication, when there is no URL; or source",
    "sha256": "the sha256 of the file the number was measured on (or a list, one per file): releases match by hash",
    "questions": "how many questions the number averages over, an integer >= 1",
    "family": "the family of definitions the source states",
    "about": "what the source measured, when not this run's system itself",
    "note": "anything else a reader needs",
    "illustrative": "true for an example that is not a published number",
    "answers": "the claim's own per-question answer file (or a list of seed files), relative to the claims file",
    "answers_format": "the answer file's format, when its shape does not say (agentmemory.answers)",
}
"""Every field a ``[[claim]]`` takes, with what it is (messages and the docs list them from here)."""

_REQUIRED = ("system", "collection", "measure", "granularity", "value")
_TEXT = (
    "system",
    "collection",
    "measure",
    "granularity",
    "source",
    "citation",
    "family",
    "about",
    "note",
    "answers_format",
)
_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*(?:claim|\"claim\"|'claim')[ \t]*\]\]", re.MULTILINE)
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


@dataclass(frozen=True)
class Claim:
    """One checked claim (see the module docstring for the fields); ``line`` is its ``[[claim]]`` header's line."""

    line: int | None
    system: str
    collection: str
    measure: Measure
    granularity: str
    value: float
    source: str | None = None
    citation: str | None = None
    questions: int | None = None
    family: str | None = None
    about: str | None = None
    note: str | None = None
    illustrative: bool = False
    answers: tuple[str, ...] = ()
    answers_format: str | None = None
    sha256: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The claim as written, its measure in the registry's text form; absent optional fields left out."""
        out: dict[str, Any] = {
            "line": self.line,
            "system": self.system,
            "collection": self.collection,
            "measure": str(self.measure),
            "granularity": self.granularity,
            "value": self.value,
        }
        for key in ("source", "citation", "questions", "family", "about", "note"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.sha256:
            out["sha256"] = list(self.sha256)
        if self.illustrative:
            out["illustrative"] = True
        if self.answers:
            out["answers"] = [Path(a).name for a in self.answers]
        return out

    def is_about(self, systems: Sequence[tuple[str, str]]) -> bool:
        """Whether ``system`` names one of ``systems`` (``(key, label)`` pairs) by its key or label."""
        return any(self.system in pair for pair in systems)


@dataclass(frozen=True)
class Claims:
    """A checked claims file: its name (no folder), sha256 and claims in file order."""

    name: str
    sha256: str
    claims: tuple[Claim, ...]

    def answers(self) -> tuple[tuple[str, tuple[str, ...], str | None], ...]:
        """``(system, files, format)`` of each claim naming its own answer file, each system once, in file order."""
        seen: dict[str, tuple[str, tuple[str, ...], str | None]] = {}
        for claim in self.claims:
            if claim.answers and claim.system not in seen:
                seen[claim.system] = (claim.system, claim.answers, claim.answers_format)
        return tuple(seen.values())

    @property
    def measures(self) -> tuple[Measure, ...]:
        """The measures of every claim, each once, in file order: an evaluation computes them all, so a claim
        about a system it did not evaluate is a published row beside our systems' values in its column."""
        return tuple(dict.fromkeys(claim.measure for claim in self.claims))

    def measures_for(self, systems: Sequence[tuple[str, str]]) -> tuple[Measure, ...]:
        """The measures of the claims about ``systems`` (``(key, label)`` pairs), each once, in file order."""
        found: list[Measure] = []
        for claim in self.claims:
            if claim.is_about(systems) and claim.measure not in found:
                found.append(claim.measure)
        return tuple(found)


def read_claims(path: str | PathLike[str]) -> Claims:
    """Read and check the claims file at ``path`` (module docstring).

    Raises:
        MissingFileError: no such file.
        InputError: not TOML, or a bad claim, naming the file and line; a file without a claim.
    """
    source = Path(path)
    data = read_bytes(source, "claims file")
    text = decode_utf8(source, data)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = _TOML_LINE.search(str(err))
        problem = _TOML_LINE.sub("", str(err)).strip()
        raise InputError(source, int(found[1]) if found else None, f"is not TOML: {problem}") from None
    others = [key for key in document if key != "claim"]
    if others:
        raise InputError(source, None, f"has the key {quote(others[0])}; a claims file holds only [[claim]] tables")
    tables = document.get("claim", [])
    if not isinstance(tables, list) or not tables:
        raise InputError(source, None, "holds no claim; write one [[claim]] table per claim (see --help)")
    headers = [text.count("\n", 0, m.start()) + 1 for m in _HEADER.finditer(text)]
    lines: list[int | None] = list(headers) if len(headers) == len(tables) else [None] * len(tables)
    claims = tuple(_claim(source, line, table) for line, table in zip(lines, tables))
    return Claims(source.name, hashlib.sha256(data).hexdigest(), claims)


def _claim(path: Path, line: int | None, table: object) -> Claim:
    def fail(problem: str) -> InputError:
        return InputError(path, line, f"claim: {problem}")

    if not isinstance(table, dict):
        raise fail("is not a table; write [[claim]] and its fields")
    unknown = [key for key in table if key not in CLAIM_FIELDS]
    if unknown:
        raise fail(f"has the field {quote(unknown[0])}, which a claim does not take; fields: {', '.join(CLAIM_FIELDS)}")
    missing = [key for key in _REQUIRED if key not in table]
    if missing:
        raise fail(f"has no {missing[0]} ({CLAIM_FIELDS[missing[0]]})")
    for key in _TEXT:
        if key in table and (not isinstance(table[key], str) or not table[key].strip()):
            raise fail(f"{key} {quote(table[key])} is not a non-empty string ({CLAIM_FIELDS[key]})")
    if "source" not in table and "citation" not in table:
        raise fail(
            "has neither source nor citation; say where the number is published, or mark it illustrative "
            'with citation = "illustrative: ..." and illustrative = true'
        )
    value = table["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise fail(f"value {quote(value)} is not a finite number; write the number claimed, e.g. 0.862")
    for key in ("k", "budget", "questions"):
        if key in table and (isinstance(table[key], bool) or not isinstance(table[key], int) or table[key] < 1):
            raise fail(f"{key} {quote(table[key])} is not an integer >= 1 ({CLAIM_FIELDS[key]})")
    illustrative = table.get("illustrative", False)
    if not isinstance(illustrative, bool):
        raise fail(f"illustrative {quote(illustrative)} is not true or false")
    answers = _answer_paths(path, table.get("answers"), fail)
    return Claim(
        line,
        table["system"],
        table["collection"],
        _measure(table, fail),
        table["granularity"],
        float(value),
        table.get("source"),
        table.get("citation"),
        table.get("questions"),
        table.get("family"),
        table.get("about"),
        table.get("note"),
        illustrative,
        answers,
        table.get("answers_format"),
        _hashes(table.get("sha256"), fail),
    )


_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _hashes(value: object, fail: Any) -> tuple[str, ...]:
    """A claim's ``sha256``: one hash or a list of them, each 64 hexadecimal digits (lower case once read)."""
    if value is None:
        return ()
    given = [value] if isinstance(value, str) else value
    if not isinstance(given, list) or not given or not all(isinstance(v, str) for v in given):
        raise fail(f"sha256 {quote(value)} is not a hash or a list of them ({CLAIM_FIELDS['sha256']})")
    for item in given:
        if not _SHA256.match(item.strip().lower()):
            raise fail(f"sha256 {quote(item)} is not 64 hexadecimal digits (sha256sum FILE prints them)")
    return tuple(dict.fromkeys(v.strip().lower() for v in given))


def _answer_paths(path: Path, value: object, fail: Any) -> tuple[str, ...]:
    """A claim's ``answers``: one path or a list of them (seeds), each relative to the claims file, existing."""
    if value is None:
        return ()
    given = [value] if isinstance(value, str) else value
    if not isinstance(given, list) or not given or not all(isinstance(v, str) and v.strip() for v in given):
        raise fail(f"answers {quote(value)} is not a file name or a list of them ({CLAIM_FIELDS['answers']})")
    out = []
    for name in given:
        found = (path.parent / name) if not Path(name).is_absolute() else Path(name)
        if not found.is_file():
            raise fail(f"answers {quote(name)} is not a file (looked for {found})")
        out.append(str(found))
    return tuple(out)


def _measure(table: Mapping[str, Any], fail: Any) -> Measure:
    """The claim's measure, through the registry's parser: ``measure`` with ``k`` or ``budget``."""
    name = table["measure"].strip()
    if "@" in name:
        raise fail(f"measure {quote(name)} carries a cutoff; write the name alone and the cutoff as k or budget")
    if "k" in table and "budget" in table:
        raise fail("gives both k and budget; a measure is cut at a rank k or at a token budget, not both")
    text = f"{name}@{table['k']}" if "k" in table else f"{name}@{table['budget']}tok" if "budget" in table else name
    try:
        return parse_measure(text)
    except ParameterError as err:
        raise fail(f"measure {quote(text)} is not a measure we have: {err.problem}; {err.allowed}") from None
