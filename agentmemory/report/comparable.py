"""What every report opens with, and what stands beside its comparison table.

* :func:`card`: the definitions card of an evaluation
  (:func:`agentmemory.analysis.card.evaluation_card`, the artifact's ``card``,
  rendered by :func:`agentmemory.analysis.card.card_text`, which
  ``agentmemory eval`` prints too).
* :func:`explore_card` and :func:`sweep_card`: the card of
  the explore report (a collection, no measure) and of the sweep report (its
  k sweep's collection and measures, and the synthetic collections).
* :func:`beside`: under a judgment patch, the headline table under the
  original and the patched judgments side by side with the corrections
  (:mod:`agentmemory.analysis.judgments`); with claims, each claim beside our
  value under its definition (:mod:`agentmemory.analysis.claim_checks`); nothing
  otherwise.
"""

from __future__ import annotations

import pandas as pd

from agentmemory.analysis.card import card_text, collection_card, evaluation_card, short_form
from agentmemory.analysis.claim_checks import check_claims, claims_text
from agentmemory.analysis.judgments import correction_lines, original_statistics, patch_caption, patch_rows
from agentmemory.analysis.statistics import Statistics
from agentmemory.collection import Collection
from agentmemory.evaluation.runner import Evaluation
from agentmemory.evaluation.sweeps import CURVES
from agentmemory.metrics import Measure, parse_measure
from agentmemory.report.display import Folded, Markdown, Table
from agentmemory.report.params import SweepSetup
from agentmemory.report.sweep_notebook import sweep_measures

__all__ = ["beside", "card", "explore_card", "explore_card_line", "sweep_card", "sweep_card_line"]


def card(evaluation: Evaluation) -> Markdown:
    """The definitions card of ``evaluation``: data and release, granularity, relevance, attribution, judgments,
    denominator, cutoffs, and each measure's family and definition."""
    return Markdown(card_text(evaluation_card(evaluation)))


def explore_card(collection: Collection) -> Markdown:
    """The card of a report that computes no measure (explore): the data, its granularity and its questions."""
    shown = collection_card(collection)
    return Markdown(card_text(shown, ["- **Measures**: none: this report ranks one query of your own"]))


def sweep_card(setup: SweepSetup) -> Markdown:
    """The sweep report's card: the k sweep's collection with every measure the report draws, and the
    synthetic collections of the seed sweep (generated: no file, no release)."""
    k_max = max(setup.ks)
    curves = [Measure(name, k_max) for name in CURVES]
    seeded = [m for m in (parse_measure(text) for text in sweep_measures(setup.k)) if m not in curves]
    shown = collection_card(setup.collection, measures=[*curves, *seeded], k=setup.k, relevance="direct")
    seeds = setup.seeds
    extra = [
        f"- **k sweep**: {', '.join(CURVES)} at every k from 1 to {k_max} (the table below names them at {k_max})",
        f"- **Seed sweep**: synthetic collections (agentmemory.datasets.synthetic, no file: no release), seeds "
        f"{seeds[0]}..{seeds[-1]}, cut at k = {setup.k}",
    ]
    return Markdown(card_text(shown, extra))


_FULL_CARD = "(the full definitions card: [Definitions](#Definitions))"


def sweep_card_line(setup: SweepSetup) -> Markdown:
    """The sweep card in one line (the k sweep's collection, then the seed sweep's synthetic collections), pointing
    to the full card further down."""
    seeds = setup.seeds
    return Markdown(
        f"**What the numbers are:** the k sweep on {short_form(collection_card(setup.collection))}; the seed sweep "
        f"and the grid on synthetic collections (seeds {seeds[0]}..{seeds[-1]}, k = {setup.k}) {_FULL_CARD}."
    )


def explore_card_line(collection: Collection) -> Markdown:
    """The exploration card in one line, pointing to the full card further down."""
    return Markdown(f"**What the data is:** {short_form(collection_card(collection))} {_FULL_CARD}.")


def beside(evaluation: Evaluation, statistics: Statistics) -> tuple[Table | Markdown | Folded, ...]:
    """What stands beside the comparison table: the original judgments' headline table (a patch), the claims."""
    shown: list[Table | Markdown | Folded] = []
    original = original_statistics(evaluation, statistics)
    patch = evaluation.collection.judgment_patch
    if original is not None and patch is not None:
        header, rows = patch_rows(evaluation, statistics, original)
        shown.append(Table(pd.DataFrame(rows, columns=header), patch_caption(evaluation, statistics, original)))
        shown.append(Markdown("\n".join(correction_lines(patch))))
    claims = evaluation.options.claims
    if claims is not None:
        checks = check_claims(evaluation, statistics, evaluation_card(evaluation), original=original)
        text = claims_text(claims, checks)
        head, _, rest = text.partition("\n\n")
        # The claims are the table's published rows, with their notes: each check in detail is folded, not repeated.
        summary = head.rstrip(":").replace("`", "")
        shown.append(Folded(f"{summary} ({len(checks)}, in detail)", rest))
    return tuple(shown)
