"""Claims beside measurements: each claim, our value under its definition, and what differs.

For every claim (:mod:`agentmemory.evaluation.claims`) whose system was
evaluated in the run, :func:`check_claims` gives a :class:`ClaimCheck`:

* **our value under the claim's definition**: the headline mean of the
  claim's measure (its cutoff or budget included) for that system, with its
  bootstrap interval, when the definition is one we compute: the measure was
  scored (under ``relevance="provenance"`` a measure without a provenance
  definition is not), the claim's granularity is what that measure scores
  (the collection's entries, or sessions for a ``sess.`` measure, which maps a
  turn run to sessions), and the family the claim states, if any, is the
  measure's.  Otherwise the claim **cannot be reproduced** here,
  and the check says why instead of setting another number beside it;
* **the definitional differences we can detect**, each one line:
  the **release** (the claim's files against ours, by sha256: the claim's
  ``sha256``, or the hashes of the known release its ``collection`` names, so
  ``"locomo10"`` and "LoCoMo (original = mem0 copy)" are one release; a claim
  whose files we cannot tell never matches), the **granularity**, the
  **measure family** (when the claim states one), the **denominator** (the
  claim's question count against our headline count; "not stated" when it
  gives none), and our **relevance** when it is not the usual one
  (provenance).

Under a judgment patch (``--qrels-patch``) our value is the one under the
collection's own judgments, as the claim's number is (the release's
judgments); the value under the patched judgments is given beside it.

A claim whose system was not evaluated is listed as such, with no value of
ours, and its differences (a published row of the comparison table,
:mod:`agentmemory.analysis.comparison_table`, whose footnote they are).
Nothing is guessed: a difference we cannot see (how the source tokenised,
which BM25) is not in the list, so a claim without listed differences is
"comparable as far as we can tell", and said so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentmemory.analysis.statistics import Interval, Statistics
from agentmemory.analysis.text_tables import interval_cell
from agentmemory.datasets.releases import Release, release_named, release_of
from agentmemory.evaluation.claims import Claim, Claims
from agentmemory.evaluation.runner import Evaluation

__all__ = ["ClaimCheck", "check_claims", "claims_dict", "claims_text"]


@dataclass(frozen=True)
class ClaimCheck:
    """One claim beside this run (module docstring).

    ``system`` is the evaluated system's label (``None``: not evaluated);
    ``ours`` our headline mean and interval under the claim's definition,
    under the collection's own judgments (``None`` when not reproducible or
    not evaluated); ``patched`` the same under patched judgments, when a
    patch was applied; ``why_not`` why it cannot be reproduced;
    ``differences`` the detected differences, one line each.
    """

    claim: Claim
    system: str | None
    ours: Interval | None
    why_not: str | None
    differences: tuple[str, ...]
    patched: Interval | None = None

    @property
    def verdict(self) -> str:
        """``not evaluated in this run``, ``cannot reproduce: ...``, ``comparable as far as we can tell``, or
        ``same definition, not comparable as it stands: differs in release, denominator``."""
        if self.system is None:
            return "not evaluated in this run"
        if self.why_not is not None:
            return f"cannot reproduce: {self.why_not}"
        if not self.differences:
            return "comparable as far as we can tell"
        return "same definition, not comparable as it stands: differs in " + ", ".join(
            d.partition(":")[0] for d in self.differences
        )

    def to_dict(self) -> dict[str, Any]:
        """The claim as written, then ``system``, ``ours``, ``verdict`` and ``differences``."""
        return {
            **self.claim.to_dict(),
            "evaluated_as": self.system,
            "ours": None if self.ours is None else self.ours.to_dict(),
            **({"ours_patched": self.patched.to_dict()} if self.patched is not None else {}),
            "verdict": self.verdict,
            "differences": list(self.differences),
        }


def _measure_granularity(claim: Claim, card: Mapping[str, Any]) -> str | None:
    """What the claim's measure scores in this run: its definition's unit, else the collection's entries."""
    return claim.measure.definition.granularity or card["granularity"]


def _release_difference(claim: Claim, card: Mapping[str, Any]) -> str | None:
    """The release line, or ``None`` when the claim's files are ours: compared by sha256, never by label.

    The claim's hashes are its ``sha256``, else those of the known release its ``collection`` names
    (:func:`~agentmemory.datasets.releases.release_named`: ``"locomo10"`` is LoCoMo's file); ours are the card's
    files'.  They match when they are the same files or files of one known release (a collection may read part of
    one: a qrels split)."""
    ours = {f["sha256"] for f in card["data"]["files"]}
    named = release_named(claim.collection)
    theirs = set(claim.sha256) or (set(named.files.values()) if named is not None else set())
    if _same_files(theirs, ours):
        return None
    release = card["data"]["release"] or f"{card['data']['collection']}, an unknown release"
    if not theirs:
        return f"release: the claim's is {claim.collection}, not known by hash (no sha256 given); ours is {release}"
    known = _release(theirs)
    what = known.name if known is not None else "sha256 " + ", ".join(sorted(h[:12] for h in theirs))
    said = claim.collection if what == claim.collection else f"{claim.collection}, which is {what}"
    return f"release: the claim's is {said}; ours is {release}"


def _release(hashes: set[str]) -> Release | None:
    return release_of({h: h for h in hashes})


def _same_files(theirs: set[str], ours: set[str]) -> bool:
    """The same files, or files of one known release."""
    if not theirs or not ours:
        return False
    known = _release(ours)
    return theirs == ours or (known is not None and known is _release(theirs))


def _differences(claim: Claim, card: Mapping[str, Any], counted: int) -> list[str]:
    out = []
    release = _release_difference(claim, card)
    if release is not None:
        out.append(release)
    ours_granularity = _measure_granularity(claim, card)
    if ours_granularity is None:
        out.append(f"granularity: the claim's is {claim.granularity}; ours is not declared by the format")
    elif claim.granularity.casefold() != ours_granularity.casefold():
        out.append(f"granularity: the claim's is {claim.granularity}; our {claim.measure} scores {ours_granularity}s")
    family = claim.measure.definition.family
    if claim.family is not None and claim.family.casefold() != (family or "").casefold():
        out.append(f"measure family: the claim states {claim.family}; our {claim.measure} is {family or 'unstated'}")
    ours_count = f"ours {counted:,} of {card['denominator']['questions']:,} questions"
    if claim.questions is None:
        out.append(f"denominator: not stated by the claim; {ours_count}")
    elif claim.questions != counted:
        out.append(f"denominator: the claim averages over {claim.questions:,} questions; {ours_count}")
    if card["relevance"] not in (None, "direct"):
        out.append(f"relevance: ours is judged through {card['relevance']}")
    return out


def _why_not(claim: Claim, evaluation: Evaluation, card: Mapping[str, Any]) -> str | None:
    measure = str(claim.measure)
    if measure in evaluation.unscored:
        return f"{measure} has no definition under relevance = {evaluation.relevance}"
    ours = _measure_granularity(claim, card)
    if ours is None:
        return f"this collection's granularity is not declared, so the claim's ({claim.granularity}) cannot be checked"
    if claim.granularity.casefold() != ours.casefold():
        return f"the claim's granularity is {claim.granularity}; our {measure} scores {ours}s"
    family = claim.measure.definition.family
    if claim.family is not None and claim.family.casefold() != (family or "").casefold():
        return f"the claim states the {claim.family} family; our {measure} follows {family or 'an unstated family'}"
    return None


def check_claims(
    evaluation: Evaluation,
    statistics: Statistics,
    card: Mapping[str, Any],
    claims: Claims | None = None,
    original: Statistics | None = None,
) -> tuple[ClaimCheck, ...]:
    """Every claim of ``claims`` (default: the evaluation's options' claims) beside ``evaluation``.

    ``statistics`` gives the intervals (the run's own, as the artifact holds
    them); ``card`` is :func:`agentmemory.analysis.card.evaluation_card` of
    the evaluation; ``original`` the statistics under the collection's own
    judgments when they were patched
    (:func:`agentmemory.analysis.judgments.original_statistics`): then our
    value is read from them, and the patched one from ``statistics``.
    """
    chosen = evaluation.options.claims if claims is None else claims
    if chosen is None:
        return ()
    own = statistics if original is None else original
    checks = []
    for claim in chosen.claims:
        result = next((r for r in evaluation.results if claim.is_about([(r.name, r.label)])), None)
        if result is None:  # a published row of the comparison table: its differences are its footnote
            checks.append(ClaimCheck(claim, None, None, None, tuple(_differences(claim, card, own.queries))))
            continue
        why_not = _why_not(claim, evaluation, card)
        ours = patched = None
        if why_not is None:
            ours = own.intervals.get(result.name, {}).get(str(claim.measure))
            if original is not None:
                patched = statistics.intervals.get(result.name, {}).get(str(claim.measure))
            if ours is None:
                why_not = "no headline question to average over"
        differences = tuple(_differences(claim, card, own.queries))
        checks.append(ClaimCheck(claim, result.label, ours, why_not, differences, patched))
    return tuple(checks)


def claims_dict(claims: Claims, checks: Sequence[ClaimCheck]) -> dict[str, Any]:
    """The artifact's ``claims``: the file's name and sha256, then every check (:meth:`ClaimCheck.to_dict`)."""
    return {"file": claims.name, "sha256": claims.sha256, "claims": [c.to_dict() for c in checks]}


def _claimed(claim: Claim) -> str:
    where = f"line {claim.line}" if claim.line is not None else "claim"
    about = f" ({claim.about})" if claim.about else ""
    count = f", {claim.questions:,} questions" if claim.questions is not None else ""
    family = f", {claim.family} family" if claim.family else ""
    cite = claim.source or claim.citation
    marked = " **Illustrative, not a published number.**" if claim.illustrative else ""
    return (
        f"{where}: **{claim.system}**{about}: {claim.measure} = {claim.value:g} on {claim.collection}, "
        f"{claim.granularity} granularity{family}{count}; {cite}.{marked}"
    )


def claims_text(claims: Claims, checks: Sequence[ClaimCheck], *, plain: bool = False) -> str:
    """The claims beside our measurements as Markdown (a list; the command line prints the same text, ``plain``:
    without bold marks)."""
    lines = [f"Claims from `{claims.name}` (sha256 `{claims.sha256}`), each beside our value under its definition:", ""]
    shown = [c for c in checks if c.system is not None]
    for check in shown:
        lines.append(f"- {_claimed(check.claim)}")
        ours = "no value" if check.ours is None else interval_cell(check.ours, 3)
        if check.patched is not None:
            ours += f" under the collection's own judgments, {interval_cell(check.patched, 3)} under the patched ones"
        lines.append(f"  - ours ({check.system}): {ours}; {check.verdict}")
        lines += [f"  - {d}" for d in check.differences]
    if not shown:
        lines.append("- no claim names a system evaluated in this run")
    absent = [c for c in checks if c.system is None]
    if absent:
        named = ", ".join(
            f"{c.claim.system} ({'line ' + str(c.claim.line) if c.claim.line is not None else 'claim'})" for c in absent
        )
        lines += [
            "",
            f"Not evaluated in this run ({len(absent)}), so each is a published row of the comparison table: {named}.",
        ]
    text = "\n".join(lines)
    return text.replace("**", "") if plain else text
