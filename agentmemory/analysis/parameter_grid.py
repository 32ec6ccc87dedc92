"""Parameter grids: the settings of one retriever as a grid over its parameters, one measure's mean on each.

A grid of evaluations (``agentmemory experiment`` over ``{ retriever = "bm25", grid = { k1 = [...], b = [...] } }``,
or the sweep report's BM25 grid) compares many settings of one retriever.  :func:`parameter_grids` groups the
retriever settings of one evaluation by retriever (``bm25[k1=0.9,b=0.4]`` is a ``bm25``) and finds the
parameters that vary among them (from each setting's own ``params()``, so a default left out of the spec still
has its value).  For each pair of those parameters (or the one, when only one varies),
:meth:`ParameterGrid.heat_maps` gives the headline mean of the grid's measure on every combination, the other
varying parameters held at the best setting's values, so every cell is one measured setting, never an average
over several.  :meth:`ParameterGrid.best_text` names the best setting and compares it with the retriever's
**default setting** (``bm25``: every parameter at its default), with the comparison table's test when the
default is the table's baseline.

The headline measure of a grid (:func:`headline_measure`) is ``nDCG@k`` when it was computed, else the first
column of the comparison table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentmemory.analysis.prose import format_p, marker_limit
from agentmemory.analysis.statistics import BaselineComparison, Statistics
from agentmemory.analysis.text_tables import column_name, lower_is_better, markdown_table
from agentmemory.errors import AgentMemoryError
from agentmemory.retrievers import resolve_retriever
from agentmemory.retrievers.spec import format_value, parse_spec

__all__ = ["HeatMap", "ParameterGrid", "Setting", "headline_measure", "parameter_grids", "value_text"]


def headline_measure(measures: Sequence[str], k: int) -> str:
    """The measure a grid's heat maps show: ``nDCG@k`` when among ``measures``, else the first of them."""
    wanted = f"nDCG@{k}"
    return wanted if wanted in measures else measures[0]


def value_text(value: Any) -> str:
    """A parameter value as a spec writes it (``0.75``, ``lucene``), or its ``str`` when a spec cannot."""
    try:
        return format_value(value)
    except AgentMemoryError:
        return str(value)


def _key(value: Any) -> str:
    """A hashable, order-free form of a parameter value (lists and mappings included)."""
    return json.dumps(value, sort_keys=True, default=str)


def _signed(value: float) -> str:
    """``+0.034``, ``−0.034`` (a real minus sign), ``0.000``: a difference of means, three decimals."""
    if round(value, 3) == 0:
        return "0.000"
    return f"+{value:.3f}" if value > 0 else f"−{-value:.3f}"


@dataclass(frozen=True)
class Setting:
    """One setting of the grid's retriever.

    ``name`` is the system's key (``bm25[k1=0.9,b=0.4]``), ``label`` its label in tables, ``params`` every
    parameter it ran with (its ``params()``), ``mean`` the headline mean of the grid's measure (``None``
    without one) and ``versus`` its test against the comparison table's baseline on that measure (``None``
    for the baseline itself, or when the measure is not a column of the table).
    """

    name: str
    label: str
    params: Mapping[str, Any]
    mean: float | None
    versus: BaselineComparison | None = None


@dataclass(frozen=True)
class HeatMap:
    """The grid's measure over two parameters (``x`` across, ``y`` down), or over one (``y`` is ``None``).

    ``cells[i][j]`` is the setting with ``y = ys[i]`` and ``x = xs[j]`` whose other varying parameters equal
    ``fixed`` (the best setting's values), ``None`` where the grid holds no such setting.
    """

    x: str
    y: str | None
    xs: tuple[Any, ...]
    ys: tuple[Any, ...]
    cells: tuple[tuple[Setting | None, ...], ...]
    fixed: Mapping[str, Any]

    def values(self) -> list[list[float | None]]:
        """The means, ``values()[i][j]`` for ``y = ys[i]`` and ``x = xs[j]`` (``None``: no setting or no value)."""
        return [[None if cell is None else cell.mean for cell in row] for row in self.cells]

    def over(self) -> str:
        """``over k1 and b`` (then the parameters held fixed, when there are others)."""
        over = self.x if self.y is None else f"{self.x} and {self.y}"
        held = ", ".join(f"{p}={value_text(v)}" for p, v in self.fixed.items())
        return f"over {over}" + (f" ({held}, as in the best setting)" if held else "")


@dataclass(frozen=True)
class ParameterGrid:
    """The settings of one retriever in one evaluation (see the module docstring).

    ``retriever`` is its registry name or ``module:attribute`` (``bm25``), ``name`` its plain label (``BM25``);
    ``axes`` the varying parameters with their values (numbers ascending, else in order of appearance);
    ``baseline``/``baseline_label`` the comparison table's baseline; ``alpha``, ``queries``, ``comparisons``
    (the table's Holm family) and ``n_resamples`` what its tests ran with.
    """

    retriever: str
    name: str
    measure: str
    settings: tuple[Setting, ...]
    axes: tuple[tuple[str, tuple[Any, ...]], ...]
    baseline: str
    baseline_label: str
    alpha: float
    queries: int
    comparisons: int
    n_resamples: int

    @property
    def lower_is_better(self) -> bool:
        return lower_is_better(self.measure)

    @property
    def default(self) -> Setting | None:
        """The retriever's default setting (its key is the bare name: every parameter at its default), if held."""
        return next((s for s in self.settings if s.name == self.retriever), None)

    def best(self) -> Setting | None:
        """The setting with the best mean (highest, or lowest for a lower-is-better measure), the first in order
        among equals; ``None`` when no setting has a value."""
        scored = [s for s in self.settings if s.mean is not None]
        if not scored:
            return None
        sign = -1.0 if self.lower_is_better else 1.0
        return max(scored, key=lambda s: sign * float(s.mean or 0.0))

    def heat_maps(self) -> tuple[HeatMap, ...]:
        """One :class:`HeatMap` per pair of varying parameters (in order: the first across), or one over the only
        one; the other varying parameters held at the best setting's values."""
        names = [name for name, _ in self.axes]
        if len(names) == 1:
            return (self._heat(names[0], None),)
        return tuple(self._heat(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names)))

    def _heat(self, x: str, y: str | None) -> HeatMap:
        values = dict(self.axes)
        anchor = self.best() or self.settings[0]
        fixed = {p: anchor.params.get(p) for p in values if p not in (x, y)}
        ys: tuple[Any, ...] = (None,) if y is None else values[y]
        rows = []
        for yv in ys:
            row = []
            for xv in values[x]:
                wanted = {x: xv, **({} if y is None else {y: yv}), **fixed}
                found = next(
                    (s for s in self.settings if all(_key(s.params.get(p)) == _key(v) for p, v in wanted.items())),
                    None,
                )
                row.append(found)
            rows.append(tuple(row))
        return HeatMap(x, y, values[x], ys, tuple(rows), fixed)

    def marker(self, setting: Setting) -> str:
        """``▲``/``▼`` when ``setting`` is significantly better/worse than the baseline on the measure (the
        comparison table's marker), else ``""``."""
        if setting.versus is None:
            return ""
        marker = setting.versus.marker(self.alpha)
        if marker and self.lower_is_better:
            return "▼" if marker == "▲" else "▲"
        return marker

    def cell_text(self, setting: Setting | None) -> str:
        """A heat map cell as text: ``0.612 ▲``, ``0.578 (default)``, ``n/a`` (no value), ``—`` (not in the grid)."""
        if setting is None:
            return "—"
        if setting.mean is None:
            return "n/a"
        text = f"{setting.mean:.3f}"
        marker = self.marker(setting)
        if marker:
            text += f" {marker}"
        best = self.best()
        roles = [
            role
            for role, on in (
                ("best", best is not None and setting.name == best.name),
                ("default", setting.name == self.retriever),
            )
            if on
        ]
        return f"{text} ({', '.join(roles)})" if roles else text

    def rows(self, heat: HeatMap) -> tuple[list[str], list[list[str]]]:
        """The numbers behind ``heat`` as a header and rows: ``y`` values down, ``x`` values across."""
        corner = heat.x if heat.y is None else f"{heat.y} \\ {heat.x}"
        header = [corner, *(value_text(v) for v in heat.xs)]
        rows = [
            ["" if heat.y is None else value_text(yv), *(self.cell_text(cell) for cell in row)]
            for yv, row in zip(heat.ys, heat.cells)
        ]
        return header, rows

    def limit(self) -> str:
        """:func:`~agentmemory.analysis.prose.marker_limit` of the comparison table: why no marker can appear, or ``""``."""
        return marker_limit(self.queries, self.comparisons, self.n_resamples, self.alpha)

    def caption(self, heat: HeatMap) -> str:
        """What the cells of ``heat`` are: the measure's headline mean per setting, the markers' meaning (and why
        none can appear, when none can)."""
        limit = self.limit()
        return (
            f"{self.name}: {column_name(self.measure)}, headline mean over {self.queries} "
            f"{'query' if self.queries == 1 else 'queries'}, {heat.over()}; "
            f"▲/▼: significantly better/worse than {self.baseline_label} at α = {self.alpha:g} (Holm over the "
            f"{self.comparisons} comparisons of the comparison table); — not in the grid"
            + (f". {limit[:-1]}" if limit else "")
        )

    def markdown(self) -> str:
        """Every heat map's numbers as a Markdown table under its caption, then :meth:`best_text`."""
        parts = []
        for heat in self.heat_maps():
            header, rows = self.rows(heat)
            parts.append(f"{self.caption(heat)}:\n\n{markdown_table(header, rows)}")
        parts.append(self.best_text())
        return "\n\n".join(parts)

    def best_text(self) -> str:
        """Which setting scores best on the measure, and how it compares with the default setting (see the module
        docstring): its difference, the comparison table's test when the default is the baseline (or why there is
        none), and that a best of several settings picked on the same queries is an optimistic estimate."""
        best = self.best()
        if best is None:
            return f"No setting of {self.name} has a value on {self.measure}."
        assert best.mean is not None  # best() picks among settings with a value
        ties = sum(1 for s in self.settings if s.mean == best.mean) - 1
        tied = f" (tied with {ties} other setting{'s' if ties > 1 else ''})" if ties else ""
        direction = "lowest" if self.lower_is_better else "highest"
        default = self.default
        head = f"**Best setting on {self.measure}** ({direction} headline mean of {len(self.settings)} settings)"
        if default is None:
            return (
                f"{head}: {best.label}, {best.mean:.3f}{tied}. The grid holds no default {self.name} "
                f"({self.retriever} with every parameter at its default), so there is no default to compare it with."
            )
        if best.name == default.name:
            return f"{head}: the default, {default.label}, {best.mean:.3f}{tied}; no other setting does better."
        if default.mean is None:
            return f"{head}: {best.label}, {best.mean:.3f}{tied}; the default {self.name} has no value to compare."
        difference = best.mean - default.mean
        role = ", the comparison table's baseline" if default.name == self.baseline else ""
        text = (
            f"{head}: {best.label}, {best.mean:.3f}{tied}, {_signed(difference)} against default {self.name} "
            f"({default.label}, {default.mean:.3f}{role})"
        )
        text += self._test_text(best, default)
        return (
            f"{text} It is the best of {len(self.settings)} settings measured on the same queries it was picked on, so "
            "its lead is an optimistic estimate: confirm it on other queries."
        )

    def _test_text(self, best: Setting, default: Setting) -> str:
        """The sentence on the comparison table's test of ``best`` against ``default`` (the baseline)."""
        if default.name != self.baseline:
            return f"; not tested against it (the comparison table's baseline is {self.baseline_label})."
        versus = best.versus
        if versus is None:
            return "; not tested against it (the measure is not a column of the comparison table)."
        better, worse = (versus.below, versus.above) if self.lower_is_better else (versus.above, versus.below)
        counts = f"better on {better} {'query' if better == 1 else 'queries'}, worse on {worse}"
        limit = self.limit()
        adjusted = f"Holm-adjusted p = {format_p(versus.p_holm_table)} over the table's {self.comparisons} comparisons"
        if limit:
            return f" ({counts}); it cannot be shown significant here. {limit}"
        if self.marker(best):
            return f"; significant at α = {self.alpha:g} ({adjusted}; {counts})."
        return (
            f"; not significant at α = {self.alpha:g} ({adjusted}; {counts}): these queries do not show that it is "
            "better."
        )


def _axes(settings: Sequence[Setting]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """The parameters whose values differ among ``settings``, each with its values (numbers ascending, else in order
    of first appearance)."""
    names = list(dict.fromkeys(p for s in settings for p in s.params))
    axes = []
    for name in names:
        found = list({_key(s.params.get(name)): s.params.get(name) for s in settings}.values())
        if len(found) < 2:
            continue
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in found):
            found.sort()
        axes.append((name, tuple(found)))
    return tuple(axes)


def _family(name: str) -> str | None:
    """The retriever a system's key is a setting of (``bm25[k1=0.9]`` -> ``bm25``), ``None`` when the key is no spec."""
    try:
        return parse_spec(name).target
    except AgentMemoryError:
        return None


def parameter_grids(
    systems: Sequence[tuple[str, str, str, Mapping[str, Any]]], statistics: Statistics, measure: str
) -> tuple[ParameterGrid, ...]:
    """The parameter grids of one evaluation: each retriever with at least two settings that differ in a parameter.

    ``systems`` are ``(name, label, kind, params)`` in the evaluation's order (``kind`` ``"retriever"`` for the
    settings; runs and memory systems are left out); ``statistics`` the evaluation's (the headline means, the
    tests against the baseline); ``measure`` the one the heat maps show (:func:`headline_measure`).  Grids come in
    the order of their first setting.
    """
    families: dict[str, list[tuple[str, str, Mapping[str, Any]]]] = {}
    for name, label, kind, params in systems:
        family = _family(name) if kind == "retriever" else None
        if family is not None:
            families.setdefault(family, []).append((name, label, params))
    labels = {name: label for name, label, _, _ in systems}
    grids = []
    for family, members in families.items():
        settings = tuple(
            Setting(
                name, label, dict(params), _mean(statistics, name, measure), statistics.against_baseline(name, measure)
            )
            for name, label, params in members
        )
        axes = _axes(settings)
        if len(settings) < 2 or not axes:
            continue
        grids.append(
            ParameterGrid(
                retriever=family,
                name=_plain_label(family),
                measure=measure,
                settings=settings,
                axes=axes,
                baseline=statistics.baseline,
                baseline_label=labels.get(statistics.baseline, statistics.baseline),
                alpha=statistics.alpha,
                queries=statistics.queries,
                comparisons=len(statistics.versus_baseline),
                n_resamples=statistics.n_resamples,
            )
        )
    return tuple(grids)


def _plain_label(family: str) -> str:
    """The retriever's label with its default parameters (``BM25``); its name when it has no default setting."""
    try:
        return resolve_retriever(family).label
    except AgentMemoryError:
        return family


def _mean(statistics: Statistics, name: str, measure: str) -> float | None:
    interval = statistics.intervals.get(name, {}).get(measure)
    return None if interval is None else interval.mean
