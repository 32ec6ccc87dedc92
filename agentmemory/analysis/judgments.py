"""The headline table under the original and the patched judgments, side by side.

An evaluation of a collection whose judgments were patched
(``--qrels-patch``, :mod:`agentmemory.datasets.judgment_patch`) carries the
same systems scored under the collection's own judgments
(:attr:`Evaluation.original <agentmemory.evaluation.runner.Evaluation>`).
:func:`patch_rows` sets each system's headline means side by side, measure
by measure, ``original → patched (difference)``; :func:`patch_text` adds the
line saying which corrections made the difference; :func:`patch_dict` is the
artifact's ``judgment_patch``: the patch (file name, sha256, every
correction with its line and reason) and the original judgments' headline
means with their intervals.

The original judgments' statistics use the run's seed and baseline, so the
original numbers are those an evaluation without the patch prints.
"""

from __future__ import annotations

from typing import Any

from agentmemory.analysis.statistics import Statistics, evaluation_statistics
from agentmemory.analysis.text_tables import column_name, markdown_table
from agentmemory.datasets.judgment_patch import JudgmentPatch
from agentmemory.errors import ParameterError
from agentmemory.evaluation.runner import Evaluation

__all__ = ["correction_lines", "original_statistics", "patch_caption", "patch_dict", "patch_rows", "patch_text"]


def original_statistics(evaluation: Evaluation, statistics: Statistics) -> Statistics | None:
    """The statistics of ``evaluation.original`` (seed and baseline of ``statistics``); ``None`` without a patch."""
    if evaluation.original is None:
        return None
    return evaluation_statistics(evaluation.original, seed=statistics.seed, baseline=statistics.baseline)


def _mean(statistics: Statistics, system: str, measure: str) -> float | None:
    cell = statistics.intervals.get(system, {}).get(measure)
    return None if cell is None else cell.mean


def _cell(before: float | None, after: float | None) -> str:
    """``"0.450 → 0.500 (+0.050)"``; ``n/a`` for a side with no headline question."""
    if before is None or after is None:
        return f"{'n/a' if before is None else f'{before:.3f}'} → {'n/a' if after is None else f'{after:.3f}'}"
    delta = after - before
    shown = "0.000" if round(delta, 3) == 0 else f"{delta:+.3f}".replace("-", "−")
    return f"{before:.3f} → {after:.3f} ({shown})"


def patch_rows(
    evaluation: Evaluation, statistics: Statistics, original: Statistics
) -> tuple[list[str], list[list[str]]]:
    """Header and rows: each system's headline mean of each measure, original → patched (difference)."""
    header = ["System", *(column_name(m) for m in statistics.measures)]
    rows = [
        [r.label, *(_cell(_mean(original, r.name, m), _mean(statistics, r.name, m)) for m in statistics.measures)]
        for r in evaluation.results
    ]
    return header, rows


def patch_caption(evaluation: Evaluation, statistics: Statistics, original: Statistics) -> str:
    """What the side-by-side table shows: the patch in brief and the headline questions on each side."""
    patch = evaluation.collection.judgment_patch
    summary = "" if patch is None else f" ({patch.summary()})"
    return (
        f"Headline means under the original judgments → under the patched ones{summary}: over "
        f"{original.queries:,} → {statistics.queries:,} headline questions"
    )


def patch_text(evaluation: Evaluation, statistics: Statistics, original: Statistics) -> str:
    """The caption, the side-by-side table (Markdown) and every correction with its line and reason."""
    header, rows = patch_rows(evaluation, statistics, original)
    patch = evaluation.collection.judgment_patch
    lines = [f"{patch_caption(evaluation, statistics, original)}:", "", markdown_table(header, rows)]
    if patch is not None:
        lines += ["", *correction_lines(patch)]
    return "\n".join(lines)


def correction_lines(patch: JudgmentPatch) -> list[str]:
    """``Corrections in `patch.jsonl` (sha256 ...):`` and one Markdown list line per correction:
    ``line 2: `q` / `e`: grade 1 → removed: reason``."""
    lines = [f"Corrections in `{patch.name}` (sha256 `{patch.sha256}`):", ""]
    for c in patch.corrections:
        before = "not judged" if c.before is None else f"grade {c.before}"
        after = "removed" if c.after is None else f"grade {c.after}"
        lines.append(f"- line {c.line}: `{c.query_id}` / `{c.entry_id}`: {before} → {after}: {c.reason}")
    return lines


def patch_dict(evaluation: Evaluation, original: Statistics) -> dict[str, Any]:
    """The artifact's ``judgment_patch``: the patch, then the original judgments' headline means and intervals."""
    patch = evaluation.collection.judgment_patch
    if patch is None or evaluation.original is None:
        raise ParameterError(
            "evaluation",
            evaluation.collection.name,
            "has no judgment patch",
            "evaluate a collection a patch was applied to",
        )
    data = original.to_dict()
    return {
        **patch.to_dict(),
        "original": {
            "judged_queries": len(evaluation.original.collection.judged_queries),
            "headline_queries": original.queries,
            "aggregate": [r.aggregate_row() for r in evaluation.original.results],
            "intervals": data["intervals"],
        },
    }
