"""The comparison table people publish: systems as rows, measures as columns, each against a baseline.

Each cell is a headline mean with its percentile-bootstrap interval; a
system other than the baseline also gets a marker and two counts:

* ``▲`` / ``▼``: significantly higher / lower than the baseline at ``alpha``
  (two-sided paired permutation test over the headline queries, Holm's
  correction across **every** comparison in the table: every other system x
  every measure; the artifact's ``statistics.versus_baseline[].p_holm_table``);
* ``+a/−b``: the number of headline queries on which the system scores
  above / below the baseline (PyTerrier's ``+``/``-`` columns).

A measure that may have no value on a query (``tokens@first``) has each
system's mean over the queries where it has one, ``(n of N)`` counting them;
two systems are compared on the queries where **both** have one, so a
system's cell also ends with both means over those queries when they are
not its own queries and the baseline's (``on the 1283 queries both have a
value, 405.123 against BM25's 1047.456``): the two means the test compares.

Both follow the measure's declared direction (``MeasureDef.direction``): for
a lower-is-better measure (``stale@k``) the column's header says so, ``▲``
marks a significantly **lower** value and ``+a/−b`` counts the queries on
which the system scores below / above the baseline, so ``▲`` and ``+`` are
always the better side; the notation line says it for those columns.

**Published rows.**  With a claims file (``--claims``,
:mod:`agentmemory.evaluation.claims`) every claim whose measure is a column
is a row of its own below our systems, marked ``(published, note n)`` (or
``(illustrative, note n)``): the figure as its source states it, in its
measure's column, not re-measured, with no interval, no marker and no
counts, whether or not we evaluated that system (an evaluation computes
every claim's measure, so our rows have a value beside it).  Note ``n``
under the table says where the figure comes from and how its definition
differs from ours (:func:`agentmemory.analysis.claim_checks.check_claims`:
release by sha256, granularity, family, questions); a claim whose measure
is not a column (``--table-metrics``) is named there instead.  The best
value of a column (:meth:`ComparisonTable.best`) is among our rows only.

Everything here reads a :class:`~agentmemory.analysis.statistics.Statistics` computed with
the run's seed (:func:`agentmemory.analysis.statistics.evaluation_statistics`), so the
table, ``eval-results.json`` and every report agree.  :func:`comparison_table`
builds the table as data; :meth:`ComparisonTable.render` writes it as text,
Markdown, CSV or LaTeX (``agentmemory eval --table-out FILE`` picks by the
file's suffix); :func:`comparison_frame` gives the numbers as a pandas
DataFrame (:meth:`agentmemory.Evaluation.table`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentmemory.analysis.card import evaluation_card
from agentmemory.analysis.claim_checks import check_claims
from agentmemory.analysis.latex_table import latex_table
from agentmemory.analysis.prose import marker_limit
from agentmemory.analysis.statistics import (
    BaselineComparison,
    Interval,
    Statistics,
    evaluation_statistics,
)
from agentmemory.analysis.text_tables import (
    column_name,
    interval_cell,
    lower_is_better,
    markdown_table,
    may_be_undefined,
)
from agentmemory.errors import ParameterError
from agentmemory.evaluation.claims import Claim
from agentmemory.evaluation.options import Relevance
from agentmemory.evaluation.runner import Evaluation
from agentmemory.metrics import parse_measure
from agentmemory.metrics.answers import HAS_ANSWER_FAMILY, JUDGE_FAMILY, LOCOMO_FAMILY
from agentmemory.metrics.budget import FAMILY as BUDGET_FAMILY

__all__ = [
    "TABLE_FORMATS",
    "ComparisonTable",
    "PublishedRow",
    "comparison_frame",
    "comparison_table",
    "systems_table",
    "table_format",
]

TABLE_FORMATS = {".csv": "csv", ".md": "markdown", ".tex": "latex", ".txt": "text"}
"""File suffix -> the :meth:`ComparisonTable.render` format ``--table-out`` writes."""

_DECIMALS = 3
_FIELDS = ("mean", "low", "high", "p_holm_table", "marker", "above", "below")
"""The CSV's and the DataFrame's fields per measure."""
_SHARED_FIELDS = ("shared_n", "shared_mean", "shared_baseline_mean")
"""The fields added for a measure on which some system is compared on fewer queries than its own
(:meth:`ComparisonTable.shared_measures`): the queries both have a value on, and both means over them."""


@dataclass(frozen=True)
class TableCell:
    """One system on one measure: its headline mean and interval, and how it compares with the baseline."""

    interval: Interval | None
    versus: BaselineComparison | None  # None for the baseline itself


@dataclass(frozen=True)
class PublishedRow:
    """A claim's figure as a row of the comparison table (module docstring): not measured here.

    ``column`` is the table's measure it sits in; ``differences`` how its definition differs from ours, one
    line each (:attr:`ClaimCheck.differences <agentmemory.analysis.claim_checks.ClaimCheck>`)."""

    claim: Claim
    column: str
    differences: tuple[str, ...]

    def label(self, note: int) -> str:
        """``"hebb-mind (published, note 1)"``; ``"(illustrative, note 1)"`` for an illustrative claim."""
        kind = "illustrative" if self.claim.illustrative else "published"
        return f"{self.claim.system} ({kind}, note {note})"

    @property
    def value(self) -> str:
        """The figure as its source states it, with our rows' three decimals where that loses nothing (``0.800``,
        ``0.9575``): never rounded."""
        text = f"{self.claim.value:.{_DECIMALS}f}"
        return text if float(text) == self.claim.value else format(self.claim.value, ".12g")

    def note(self, number: int) -> str:
        """Note ``number``: the claim (what was measured, on which release, where published) and its differences."""
        claim = self.claim
        about = f" ({claim.about})" if claim.about else ""
        count = f", {claim.questions:,} questions" if claim.questions is not None else ""
        cite = claim.source or claim.citation
        text = (
            f"{number}. {claim.system}{about}: {claim.measure} = {self.value} on {claim.collection}, "
            f"{claim.granularity} granularity{count}; {cite}."
        )
        if not self.differences:
            return text + " No difference from our definition that we can detect."
        said = [f"{d[:1].upper()}{d[1:]}." for d in self.differences]
        return text + " Differs from our rows: " + " ".join(said)


@dataclass(frozen=True)
class ComparisonTable:
    """The comparison table of one evaluation (see the module docstring).

    ``systems`` are ``(name, label, kind)`` in the evaluation's order, the
    baseline first; ``cells[(name, measure)]`` the :class:`TableCell`s;
    ``tokenizer`` the name of the token counter the budget measures read
    with (``None`` when none did).
    ``short_form`` the definitions card's one line
    (:func:`agentmemory.analysis.card.short_form`), which the caption starts with.
    """

    systems: tuple[tuple[str, str, str], ...]
    measures: tuple[str, ...]
    cells: dict[tuple[str, str], TableCell]
    baseline: str
    alpha: float
    confidence: float
    queries: int
    relevance: str
    k: int
    excluded_groups: tuple[str, ...]
    tokenizer: str | None = None
    short_form: str = ""
    merged: tuple[str, ...] = ()  # uncut measures shown as their cut form at k (RR as RR@k)
    n_resamples: int = 10_000  # the paired tests' random sign flips (what the smallest p-value depends on)
    published: tuple[PublishedRow, ...] = ()  # the claims' figures, rows below ours (module docstring)
    unplaced: tuple[Claim, ...] = ()  # claims whose measure is not a column of this table
    claims_file: str = ""  # the claims file's name, for the published notes
    collection: str = ""  # the release (or the collection's name): the LaTeX caption and label read it

    @property
    def baseline_label(self) -> str:
        return next(label for name, label, _ in self.systems if name == self.baseline)

    @property
    def comparisons(self) -> int:
        """How many comparisons Holm's correction runs over: every other system x every measure, less those
        without a common query (a measure with no value where the baseline has one)."""
        return sum(1 for cell in self.cells.values() if cell.versus is not None)

    def cell_text(self, name: str, measure: str) -> str:
        """``"0.812 [0.701, 0.913] ▲ +12/−3"``; the baseline's cells carry no marker and no counts.

        A measure that may have no value on a query (``tokens@first``) shows over how many of the
        queries its mean is (``"41.667 [26.333, 59.000] (5 of 6)"``); a system that has no query with a
        value where the baseline has one too is not compared (``"(not compared: no common query)"``, or ``"(not
        compared: the baseline has no value)"``); a system with no value at all shows ``"n/a"`` alone (an answer
        file without retrieval, on a retrieval measure).
        """
        cell = self.cells[(name, measure)]
        shown = may_be_undefined(measure) or (cell.interval is not None and cell.interval.n < self.queries)
        text = interval_cell(cell.interval, _DECIMALS, of=self.queries if shown else None)
        if cell.versus is None:
            if name == self.baseline or cell.interval is None:  # nothing to compare: no value on any query
                return text
            if self.cells[(self.baseline, measure)].interval is None:
                return f"{text} (not compared: the baseline has no value)"
            return f"{text} (not compared: no common query)"
        marker = self.marker(name, measure)
        better, worse = self.counts(name, measure)
        return f"{text}{' ' + marker if marker else ''} +{better}/−{worse}{self.shared_text(name, measure)}"

    def shared_text(self, name: str, measure: str) -> str:
        """``"; on the 4 queries both have a value, 40.000 against BM25's 55.000"``: the system's and the
        baseline's means over the queries where both have a value, which the test compares
        (:attr:`BaselineComparison.shared <agentmemory.analysis.summaries.BaselineComparison>`); ``""`` when
        those are both systems' own queries (or for the baseline)."""
        versus = self.cells[(name, measure)].versus
        if versus is None or versus.shared is None:
            return ""
        ours, theirs = versus.shared
        n = versus.test.n
        return (
            f"; on the {n} {'query' if n == 1 else 'queries'} both have a value, {ours:.{_DECIMALS}f} against "
            f"{self.baseline_label}'s {theirs:.{_DECIMALS}f}"
        )

    def shared_measures(self) -> tuple[str, ...]:
        """The columns where some system is compared with the baseline on fewer queries than its own or the
        baseline's (a cell ending with both means over the queries where both have a value)."""
        return tuple(
            m
            for m in self.measures
            if any(
                cell.versus is not None and cell.versus.shared is not None
                for (_, cm), cell in self.cells.items()
                if cm == m
            )
        )

    def marker(self, name: str, measure: str) -> str:
        """``"▲"`` when ``name`` is significantly better than the baseline on ``measure`` (higher, or lower for a
        lower-is-better measure), ``"▼"`` when significantly worse, else ``""`` (also for the baseline)."""
        versus = self.cells[(name, measure)].versus
        if versus is None:
            return ""
        marker = versus.marker(self.alpha)
        if marker and lower_is_better(measure):
            return "▼" if marker == "▲" else "▲"
        return marker

    def counts(self, name: str, measure: str) -> tuple[int, int]:
        """``(a, b)`` of ``+a/−b``: the headline queries on which ``name`` does better / worse than the baseline
        (scores above / below it, or below / above for a lower-is-better measure); ``(0, 0)`` for the baseline."""
        versus = self.cells[(name, measure)].versus
        if versus is None:
            return 0, 0
        if lower_is_better(measure):
            return versus.below, versus.above
        return versus.above, versus.below

    @property
    def lower_measures(self) -> tuple[str, ...]:
        """The columns whose measure declares that lower values are better."""
        return tuple(m for m in self.measures if lower_is_better(m))

    def column(self, measure: str) -> str:
        """A column's header: the measure, followed by ``(lower is better)`` when it is."""
        return column_name(measure)

    def header(self) -> list[str]:
        return ["System", *(self.column(m) for m in self.measures)]

    def rows(self) -> list[list[str]]:
        """One row per system: its label (``(baseline)`` marked), then a cell per measure."""
        out = []
        for name, label, _ in self.systems:
            shown = f"{label} (baseline)" if name == self.baseline else label
            out.append([shown, *(self.cell_text(name, m) for m in self.measures)])
        for number, row in enumerate(self.published, 1):
            out.append([row.label(number), *(row.value if m == row.column else "" for m in self.measures)])
        return out

    def best(self, measure: str) -> tuple[str, ...]:
        """The systems (names) with the best mean of ``measure`` as shown (3 decimals), in the measure's direction;
        several on a tie; none when fewer than two systems have a value or all of them tie (nothing stands out).
        Published rows are not measured here: never among them."""
        means = {
            name: round(cell.interval.mean, _DECIMALS)
            for (name, m), cell in self.cells.items()
            if m == measure and cell.interval is not None
        }
        if len(set(means.values())) < 2:
            return ()
        top = min(means.values()) if lower_is_better(measure) else max(means.values())
        return tuple(name for name, _, _ in self.systems if means.get(name) == top)

    def published_notes(self) -> str:
        """The notes of the published rows (:meth:`PublishedRow.note`), and the claims whose measure is not a
        column; ``""`` without claims."""
        if not self.published and not self.unplaced:
            return ""
        source = f" ({self.claims_file})" if self.claims_file else ""
        lines = []
        if self.published:
            lines.append(
                f"Published rows{source}: each figure as its source states it, in its measure's column; not measured "
                "here, so no interval, no marker and no counts."
            )
            lines += [row.note(number) for number, row in enumerate(self.published, 1)]
        if self.unplaced:
            named = ", ".join(f"{c.system} ({c.measure})" for c in self.unplaced)
            lines.append(f"Claims whose measure is not a column of this table, so not shown: {named}.")
        return "\n".join(lines)

    def relabel(self, labels: Mapping[str, str], *, option: str = "labels") -> ComparisonTable:
        """The table with systems renamed: ``labels`` maps a system's key or label to the label to show.

        Raises:
            ParameterError: a key that names no system of the table (``option`` names the setting).
        """
        known = [name for name, _, _ in self.systems] + [label for _, label, _ in self.systems]
        for key in labels:
            if key not in known:
                raise ParameterError(
                    option, key, "names no system of the table", "choose a key or label from: " + ", ".join(known)
                )
        systems = tuple((name, labels.get(name, labels.get(label, label)), kind) for name, label, kind in self.systems)
        return replace(self, systems=systems)

    def families(self) -> str:
        """Which definitions the numbers follow: ``trec_eval's definitions``, or each family with its measures.

        A measure's family is its definition's ``family`` (a plugin's unstated
        one is named "their own definitions").  When every measure is a
        trec_eval one the text is just ``trec_eval's definitions``.
        """
        groups: dict[str, list[str]] = {}
        for m in self.measures:
            family = parse_measure(m).definition.family
            groups.setdefault(family or "", []).append(m)
        if set(groups) <= {"trec_eval"}:
            return "trec_eval's definitions"
        names = {
            "trec_eval": "trec_eval's definitions",
            "": "their own definitions",
            "BEAM": "agentmemory's stale-evidence definition for BEAM",
            BUDGET_FAMILY: "agentmemory's context-budget definitions"
            + (f" with the {self.tokenizer} token counter" if self.tokenizer else ""),
            JUDGE_FAMILY: "the judges' verdicts (imported, or live)",
            LOCOMO_FAMILY: "LoCoMo's official answer scores",
            HAS_ANSWER_FAMILY: "DPR's has_answer on the retrieved texts",
        }
        return " and ".join(
            f"{names.get(family, f'{family} official definitions')} ({', '.join(ms)})" for family, ms in groups.items()
        )

    def caption(self) -> str:
        """What the numbers are: the card's short form, the measure families, cutoff, queries, interval and test."""
        family = (
            "judgments through provenance (evidence-level; no trec_eval equivalent)"
            if self.relevance == Relevance.PROVENANCE
            else self.families()
        )
        left_out = f" (groups left out: {', '.join(self.excluded_groups)})" if self.excluded_groups else ""
        pct = f"{round(self.confidence * 100, 6):g}%"
        lead = f"{self.short_form}. " if self.short_form else ""
        return (
            f"{lead}Systems against the baseline {self.baseline_label}, {family}: headline means over {self.queries} "
            f"{'query' if self.queries == 1 else 'queries'}{left_out} at k = {self.k}, each with its "
            f"{pct} percentile-bootstrap interval"
        )

    def notation(self) -> str:
        """The line under the table saying what the markers and counts mean, and what this test could show."""
        a = f"{self.alpha:g}"
        if not self.comparisons:  # one system: nothing to mark
            text = "One system, so nothing is compared: each cell is its mean with the 95% interval."
        else:
            text = (
                f"▲/▼: significantly higher/lower than {self.baseline_label} at α = {a} (two-sided paired permutation "
                f"test, Holm's correction over the {self.comparisons} comparisons of this table); +a/−b: the headline "
                f"queries on which the system scores above/below {self.baseline_label}."
            )
        limit = marker_limit(self.queries, self.comparisons, self.n_resamples, self.alpha) if self.comparisons else ""
        if limit:  # too few queries, or too few resamples, for Holm's smallest adjusted p-value to reach alpha
            text += f" {limit}"
        text += self._budget_notes()
        if self.merged:
            same = ", ".join(f"{m} is {m}@{self.k}" for m in self.merged)
            text += (
                f" {same} here (each ranking is cut at k = {self.k}), the same measure under two names: shown once "
                "and counted once."
            )
        lower = self.lower_measures
        if lower:
            text += (
                f" For {', '.join(lower)} lower is better: ▲ marks a significantly lower value and +a/−b count the "
                "queries on which the system scores below/above the baseline."
            )
        return text

    def _budget_notes(self) -> str:
        """What the notation says of budget measures (no tie-aware value) and of measures with no value on some
        queries (their means, tests and counts); empty without them."""
        text = ""
        family = [m for m in self.measures if parse_measure(m).definition.family == BUDGET_FAMILY]
        budgets = [m for m in family if parse_measure(m).budget is not None]
        if budgets:
            text += (
                f" {', '.join(budgets)}: each ranking read top down while its texts' tokens stay within the budget "
                "(the hit that would cross it, and all below, left out)."
            )
        if family:
            text += (
                f" {', '.join(family)} {'has' if len(family) == 1 else 'have'} no tie-aware value (tied hits of unequal length change how many fit, "
                "and the expectation over their orders has no closed form)."
            )
        undefined = [(m, parse_measure(m).definition.undefined_when) for m in self.measures]
        undefined = [(m, when) for m, when in undefined if when is not None]
        for m, when in undefined:
            text += f" {m} has no value on a query with {when}."
        if undefined:  # the rule for all of them, said once
            names = [m for m, _ in undefined]
            subject = names[0] if len(names) == 1 else "each of " + ", ".join(names[:-1]) + " and " + names[-1]
            text += (
                f" For {subject}: the mean and interval are over the queries with a value, (n of N) counting "
                f"them; each system is compared with {self.baseline_label} on the N queries both have a value "
                "(its test and +a/−b), and its cell ends with both means over those N queries where they are not "
                "both systems' own."
            )
        others = [m for m in self.shared_measures() if parse_measure(m).definition.undefined_when is None]
        if others:
            text += (
                f" {', '.join(others)}: a cell ending with “on the N queries both have a value” is compared with "
                f"{self.baseline_label} on those N queries only, and gives both means there."
            )
        return text

    def render(self, format: str = "text") -> str:
        """The table as ``"text"`` (caption, Markdown table, notation), ``"markdown"``, ``"csv"`` or ``"latex"``.

        CSV has one row per system (then one per published row, ``baseline`` = ``published``, its figure as
        ``mean``) and, per measure, the columns ``mean``,
        ``low``, ``high``, ``p_holm_table``, ``marker``, ``above``, ``below``
        (and, for a measure of :meth:`shared_measures`, ``shared_n``,
        ``shared_mean``, ``shared_baseline_mean``: empty where the system is
        compared on its own queries)
        (numbers unrounded, empty for the baseline; ``marker`` follows the
        measure's direction, ``above``/``below`` are the raw counts, and a
        lower-is-better measure's columns are named ``<measure> (lower is
        better) <field>``); the others show the formatted cells with the
        caption and the notation.
        """
        if format == "csv":
            return self._csv()
        if format == "latex":
            return self._latex()
        if format not in ("text", "markdown"):
            raise ParameterError("format", format, "is not a table format", "choose text, markdown, csv or latex")
        body = markdown_table(self.header(), self.rows())
        notes = self.published_notes()
        return f"{self.caption()}:\n\n{body}\n\n{self.notation()}\n" + (f"\n{notes}\n" if notes else "")

    def _csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        shared = set(self.shared_measures())
        header = ["system", "baseline"]
        for m in self.measures:
            header += [f"{self.column(m)} {f}" for f in (*_FIELDS, *(_SHARED_FIELDS if m in shared else ()))]
        writer.writerow(header)
        for name, label, _ in self.systems:
            row: list[Any] = [label, "yes" if name == self.baseline else "no"]
            for m in self.measures:
                cell = self.cells[(name, m)]
                iv = cell.interval
                row += [repr(iv.mean), repr(iv.low), repr(iv.high)] if iv is not None else ["", "", ""]
                v = cell.versus
                row += ["", "", "", ""] if v is None else [repr(v.p_holm_table), self.marker(name, m), v.above, v.below]
                if m in shared:
                    both = None if v is None else v.shared
                    row += ["", "", ""] if both is None or v is None else [v.test.n, repr(both[0]), repr(both[1])]
            writer.writerow(row)
        for number, published in enumerate(self.published, 1):
            row = [published.label(number), "published"]
            for m in self.measures:
                row += [repr(published.claim.value) if m == published.column else ""] + [""] * (len(_FIELDS) - 1)
                row += [""] * (len(_SHARED_FIELDS) if m in shared else 0)
            writer.writerow(row)
        return buffer.getvalue()

    def _latex(self) -> str:
        return latex_table(self)


def comparison_table(evaluation: Evaluation, statistics: Statistics) -> ComparisonTable:
    """The comparison table of ``evaluation`` from its ``statistics`` (computed with a baseline).

    Systems keep the evaluation's order, except that the baseline comes first;
    the caption starts with the definitions card's short form.
    """
    systems = [(r.name, r.label, r.kind) for r in evaluation.results]
    tokenizer = None if evaluation.tokenizer is None else str(evaluation.tokenizer.get("name"))
    table = systems_table(systems, statistics, k=evaluation.k, relevance=evaluation.relevance, tokenizer=tokenizer)
    card = evaluation_card(evaluation)
    collection = card["data"]["release"] or card["data"]["collection"]
    table = replace(table, short_form=card["short_form"], collection=collection)
    claims = evaluation.options.claims
    if claims is None:
        return table
    published, unplaced = [], []
    for check in check_claims(evaluation, statistics, card):
        column = _column(table, str(check.claim.measure))
        if column is None:
            unplaced.append(check.claim)
        else:
            published.append(PublishedRow(check.claim, column, check.differences))
    return replace(table, published=tuple(published), unplaced=tuple(unplaced), claims_file=claims.name)


def _column(table: ComparisonTable, measure: str) -> str | None:
    """The column a claim's ``measure`` sits in: its own, or its cut form when the table shows it so (RR as RR@k)."""
    if measure in table.measures:
        return measure
    cut = f"{measure}@{table.k}"
    return cut if measure in table.merged and cut in table.measures else None


def systems_table(
    systems: Sequence[tuple[str, str, str]],
    statistics: Statistics,
    *,
    k: int,
    relevance: str = "direct",
    tokenizer: str | None = None,
) -> ComparisonTable:
    """The comparison table of ``systems`` (``(name, label, kind)`` in order) from their ``statistics``.

    What :func:`comparison_table` builds from an evaluation, for callers that
    hold only per-query values and their :func:`~agentmemory.analysis.statistics.per_query_statistics`
    (an experiment's merge).  ``k``, ``relevance`` and ``tokenizer`` (the
    token counter's name, when budget measures were computed) are the
    evaluation's, for the caption.  The baseline comes first.
    """
    base = statistics.baseline
    ordered = sorted(systems, key=lambda s: s[0] != base)
    shown = statistics.shown_measures
    merged = tuple(m for m in statistics.measures if m not in shown and f"{m}@{k}" in shown)
    cells = {
        (name, m): TableCell(statistics.intervals[name].get(m), statistics.against_baseline(name, m))
        for name, _, _ in ordered
        for m in statistics.shown_measures
    }
    return ComparisonTable(
        systems=tuple(ordered),
        measures=statistics.shown_measures,
        cells=cells,
        baseline=base,
        alpha=statistics.alpha,
        confidence=statistics.confidence,
        queries=statistics.queries,
        relevance=relevance,
        k=k,
        excluded_groups=statistics.excluded_groups,
        tokenizer=tokenizer,
        merged=merged,
        n_resamples=statistics.n_resamples,
    )


def comparison_frame(
    evaluation: Evaluation,
    statistics: Statistics | None = None,
    *,
    baseline: str | None = None,
    confidence: float = 0.95,
    alpha: float = 0.05,
) -> Any:
    """The comparison table's numbers as a pandas DataFrame (needs the ``report`` extra).

    Index: the systems' labels (baseline first); columns: a MultiIndex of
    (measure, field) with fields ``mean``, ``low``, ``high``, ``p_holm_table``,
    ``marker``, ``above``, ``below`` (``NaN``/empty for the baseline's test fields; ``marker`` follows the
    measure's direction, ``above``/``below`` are raw counts), and for a measure of
    :meth:`ComparisonTable.shared_measures` ``shared_n``, ``shared_mean``, ``shared_baseline_mean`` (the
    queries where the system and the baseline both have a value, and both means over them; empty elsewhere).

    Without ``statistics`` they are computed here, seeded by the evaluation's
    seed, against ``baseline`` (default the first system) at ``confidence`` and
    ``alpha``; with ``statistics`` those three must be left at their defaults.
    """
    import pandas as pd  # the report extra; `import agentmemory` never loads pandas

    if statistics is None:
        statistics = evaluation_statistics(
            evaluation, seed=evaluation.seed, baseline=baseline, confidence=confidence, alpha=alpha
        )
    elif (baseline, confidence, alpha) != (None, 0.95, 0.05):
        raise ParameterError(
            "baseline/confidence/alpha",
            (baseline, confidence, alpha),
            "were given with statistics",
            "they choose how statistics are computed: pass them to evaluation_statistics instead",
        )

    table = comparison_table(evaluation, statistics)
    shared = set(table.shared_measures())
    data = []
    for name, _, _ in table.systems:
        row: list[Any] = []
        for m in table.measures:
            cell = table.cells[(name, m)]
            iv, v = cell.interval, cell.versus
            row += [iv.mean, iv.low, iv.high] if iv is not None else [float("nan")] * 3
            row += (
                [float("nan"), "", pd.NA, pd.NA]
                if v is None
                else [v.p_holm_table, table.marker(name, m), v.above, v.below]
            )
            if m in shared:
                both = None if v is None else v.shared
                row += [pd.NA, float("nan"), float("nan")] if both is None or v is None else [v.test.n, *both]
        data.append(row)
    columns = pd.MultiIndex.from_tuples(
        [(m, f) for m in table.measures for f in (*_FIELDS, *(_SHARED_FIELDS if m in shared else ()))],
        names=["measure", "field"],
    )
    return pd.DataFrame(data, index=pd.Index([label for _, label, _ in table.systems], name="system"), columns=columns)


def table_format(path: str) -> str:
    """The :meth:`ComparisonTable.render` format for a ``--table-out`` path, from its suffix.

    Raises:
        ParameterError: a suffix other than .csv, .md, .tex or .txt.
    """
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix not in TABLE_FORMATS:
        raise ParameterError("--table-out", path, "has no known suffix", "end the file name in .csv, .md, .tex or .txt")
    return TABLE_FORMATS[suffix]
