"""The comparison table as LaTeX a paper can ``\\input``: booktabs rules, the best value bold, short labels.

What :func:`latex_table` writes compiles with pdflatex as emitted, given
``\\usepackage{booktabs}`` (the rules) and ``\\usepackage{amssymb}`` (the
markers, ``\\blacktriangle`` and ``\\blacktriangledown``) in the preamble, and
fits one column of ``\\documentclass[twocolumn]{article}`` (229.5 pt) with up
to :data:`COLUMN_MEASURES` measures, the default five included; a table of
more is a ``table*`` float, spanning both columns (469 pt: nine measures fit;
``tests/analysis/test_latex_table.py`` compiles both and reads pdflatex's log
for errors and overfull boxes).  To fit, each cell is a small
stack, right-aligned::

    .812▲          the headline mean, 3 decimals, the marker as a superscript; bold when it is the column's best
    [.70,.91]      its interval, 2 decimals, in \\scriptsize ("all equal" when every query scored the same)
    +12/−3         the queries above / below the baseline (not for the baseline's row)
    on 4: 40.000 vs 55.000   (only where the system and the baseline are compared on the queries both have a
                   value, fewer than their own: tokens@first) their two means over those queries

A number in [0, 1) loses its leading zero (``.812``), as tables of
proportions in papers do; the ends of an interval get 2 decimals (they move
more than that between resamplings), the mean keeps the 3 of every other
rendering.  The best mean of each column
(:meth:`~agentmemory.analysis.comparison_table.ComparisonTable.best`, in the
measure's direction, among our systems) is bold.  A lower-is-better
measure's header carries ``$\\downarrow$``; a header longer than :data:`HEADER_WIDTH`
characters is broken before its ``@`` (``recall_any`` over ``@10``).  Published rows (a claims file's
figures) follow a rule, each figure alone in its column.

**Labels.**  A system's label is the one ``labels`` maps its key or label to;
otherwise :func:`short_labels` shortens it: the shortest of "without any
parenthesis" (``Hybrid RRF``), "without nested parentheses" (``Hybrid RRF
(BM25 + Dense)``) and the full label that no other system of the table also
gets, so ``bm25`` and ``bm25[k1=0.9,b=0.4]`` stay ``BM25`` and ``BM25 (k1=0.9,
b=0.4)``.  Labels are wrapped at :data:`LABEL_WIDTH` characters, and the
footnote gives each shortened label's full form.

**Caption, label and footnote.**  The caption is the sentence a person
would write (``Retrieval on the agentmemory LoCoMo sample: 3 systems over
6 questions at k = 5, against BM25; best per column in bold.``); the
``\\label`` is derived from the collection and the table's first measure
(:func:`table_label`: ``tab:agentmemory-locomo-sample-r5``); the details
(the definitions card's line, the families, the interval; what ``▲``,
``▼`` and ``+a/−b`` mean; the full labels; the published rows' sources and
differences) are the caption's footnote (``\\footnotemark`` in the caption,
``\\footnotetext`` right after the float, LaTeX's way of giving a float a
footnote; the number is taken once before the float, since LaTeX sets a
caption twice when it measures it).  Every character LaTeX treats specially
is escaped (:func:`latex_escape`).
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agentmemory.analysis.summaries import Interval

__all__ = ["LABEL_WIDTH", "latex_escape", "latex_label", "latex_table", "short_labels", "table_label"]


class ComparisonTable(Protocol):
    """What :func:`latex_table` reads of a comparison table.

    :class:`agentmemory.analysis.comparison_table.ComparisonTable` renders
    itself with this module, so the shape it is read through is stated here
    rather than imported from it (no import cycle, not even for type checking).
    """

    @property
    def systems(self) -> tuple[tuple[str, str, str], ...]: ...
    @property
    def measures(self) -> tuple[str, ...]: ...
    @property
    def cells(self) -> Mapping[tuple[str, str], Any]: ...
    @property
    def baseline(self) -> str: ...
    @property
    def lower_measures(self) -> tuple[str, ...]: ...
    @property
    def baseline_label(self) -> str: ...
    @property
    def published(self) -> Sequence[Any]: ...
    @property
    def collection(self) -> str: ...
    @property
    def queries(self) -> int: ...
    @property
    def k(self) -> int: ...
    def marker(self, name: str, measure: str) -> str: ...
    def counts(self, name: str, measure: str) -> tuple[int, int]: ...
    def best(self, measure: str) -> tuple[str, ...]: ...
    def caption(self) -> str: ...
    def notation(self) -> str: ...
    def published_notes(self) -> str: ...


LABEL_WIDTH = 12
"""A system's label is wrapped into lines of at most this many characters (long words are broken)."""

COLUMN_MEASURES = 5
"""The most measures a table fits into one column of a two-column paper; a wider one is a ``table*`` float."""

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': "''",
    "▲": r"$\blacktriangle$",
    "▼": r"$\blacktriangledown$",
    "−": "$-$",
    "α": r"$\alpha$",
    "Δ": r"$\Delta$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "×": r"$\times$",
    "±": r"$\pm$",
    "→": r"$\rightarrow$",
    "…": r"\ldots{}",
    "–": "--",
    "—": "---",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "\u00a0": "~",
}


def _latin(char: str) -> str:
    """A character outside ASCII and :data:`_SPECIAL`: kept when LaTeX's utf8 input knows it (the accented Latin
    letters, U+00C0 to U+017F), else its letters without accents (NFKD), else ``?``."""
    if "\u00c0" <= char <= "\u017f" and char not in "\u00d7\u00f7":
        return char
    plain = "".join(c for c in unicodedata.normalize("NFKD", char) if c.isascii() and c.isprintable())
    return latex_escape(plain) if plain else "?"


def latex_escape(text: str) -> str:
    """``text`` as LaTeX text that pdflatex sets as written.

    ``\\ { } $ & # ^ _ % ~ < > |`` and ``"`` become their text commands; the
    symbols this project's tables use (``▲ ▼ − α Δ ≥ ≤ × ± → … – — ‘ ’ “ ”``)
    their LaTeX forms (``▲``/``▼`` need amssymb); accented Latin letters stay
    (pdflatex reads UTF-8); any other character is written without its
    accents where it has a plain form, else as ``?``; a line break becomes a space.
    """
    out = []
    for char in " ".join(text.splitlines()):
        if char in _SPECIAL:
            out.append(_SPECIAL[char])
        elif char.isascii():
            out.append(char if char.isprintable() else " ")
        else:
            out.append(_latin(char))
    return "".join(out)


def latex_label(name: str) -> str:
    """A ``\\label`` key from ``name`` (a file's stem): ``tab:`` and its letters, digits, ``-`` and ``.``."""
    key = re.sub(r"[^A-Za-z0-9.-]+", "-", name).strip("-.")
    return f"tab:{key or 'comparison'}"


def table_label(collection: str, measure: str) -> str:
    """The ``\\label`` key of a table of ``collection`` led by ``measure``: ``tab:`` and both, lower case, letters and
    digits joined by ``-`` (``"agentmemory LoCoMo sample"``, ``"R@5"`` -> ``tab:agentmemory-locomo-sample-r5``)."""
    words = [re.sub(r"[^a-z0-9]+", "-", part.lower().replace("@", "")).strip("-") for part in (collection, measure)]
    return latex_label("-".join(w for w in words if w))


_PARENTHESES = re.compile(r"\s*\([^()]*\)")


def _levels(label: str) -> list[str]:
    """A label's shorter forms, shortest first, then the label: without any parenthesis, without nested ones."""
    nested = label
    while True:  # the innermost parentheses, while more than one level deep
        inner = re.sub(r"(\([^()]*?)\s*\([^()]*\)", r"\1", nested)
        if inner == nested:
            break
        nested = inner
    flat = nested
    while _PARENTHESES.search(flat):
        flat = _PARENTHESES.sub("", flat)
    return list(dict.fromkeys(form.strip() for form in (flat, nested, label) if form.strip()))


def short_labels(labels: Sequence[str]) -> list[str]:
    """Each label in its shortest form (:func:`_levels`) that no other label of ``labels`` also takes.

    ``["BM25", "Dense (wordllama)", "Hybrid RRF (BM25 + Dense (wordllama))"]`` -> ``["BM25", "Dense",
    "Hybrid RRF"]``; ``["BM25", "BM25 (k1=0.9, b=0.4)"]`` stay as they are.  Labels that would still collide
    keep their full form.
    """
    forms = [_levels(label) for label in labels]
    level = [0] * len(labels)
    while True:
        chosen = [f[i] for f, i in zip(forms, level)]
        clashing = [n for n, c in enumerate(chosen) if chosen.count(c) > 1 and level[n] < len(forms[n]) - 1]
        if not clashing:
            break
        for n in clashing:
            level[n] += 1
    chosen = [f[i] for f, i in zip(forms, level)]
    return [c if chosen.count(c) == 1 else label for c, label in zip(chosen, labels)]


def _number(value: float, decimals: int) -> str:
    """``value`` to ``decimals`` places, a value in (-1, 1) without its leading zero; a minus sign as ``$-$``."""
    text = f"{value:.{decimals}f}"
    sign = text.startswith("-")
    digits = text[1:] if sign else text
    if digits.startswith("0."):
        digits = digits[1:]
    if sign and digits.strip("0.") == "":  # -0.000 rounds to zero: no sign
        sign = False
    return ("$-$" if sign else "") + digits


def _interval(interval: Interval | None) -> str:
    if interval is None:
        return "--"
    if interval.degenerate:
        return "all equal"
    return f"[{_number(interval.low, 2)},{_number(interval.high, 2)}]"


def _stack(lines: list[str]) -> str:
    """Lines set right-aligned above one another in one cell (the first in the cell's size, the others smaller)."""
    rows = [lines[0], *(f"{{\\scriptsize {line}}}" for line in lines[1:] if line)]
    return "\\begin{tabular}[t]{@{}r@{}}" + "\\\\".join(rows) + "\\end{tabular}"


def _label_cell(label: str, note: str | None) -> str:
    lines = textwrap.wrap(label, LABEL_WIDTH, break_long_words=True, break_on_hyphens=True) or [""]
    rows = [latex_escape(line) for line in lines]
    if note:
        rows.append(f"{{\\scriptsize {latex_escape(note)}}}")
    if len(rows) == 1:
        return rows[0]
    return "\\begin{tabular}[t]{@{}l@{}}" + "\\\\".join(rows) + "\\end{tabular}"


def _cell(table: ComparisonTable, name: str, measure: str) -> str:
    cell = table.cells[(name, measure)]
    mean = "--" if cell.interval is None else _number(cell.interval.mean, 3)
    if name in table.best(measure):
        mean = f"\\textbf{{{mean}}}"
    marker = table.marker(name, measure)
    if marker:
        mean += "$^{" + ("\\blacktriangle" if marker == "▲" else "\\blacktriangledown") + "}$"
    lines = [mean, _interval(cell.interval)]
    if cell.versus is not None:
        better, worse = table.counts(name, measure)
        lines.append(f"+{better}/$-${worse}")
        if cell.versus.shared is not None:  # compared on the queries both have a value: both means there
            ours, theirs = cell.versus.shared
            lines.append(f"on {cell.versus.test.n}: {_number(ours, 3)} vs {_number(theirs, 3)}")
    return _stack(lines)


HEADER_WIDTH = 8
"""A measure's header longer than this many characters is set on two lines, broken before its ``@``."""


def _header(table: ComparisonTable, measure: str) -> str:
    arrow = "$\\downarrow$" if measure in table.lower_measures else ""
    name, at, cut = measure.partition("@")
    if len(measure) <= HEADER_WIDTH or not at:
        return latex_escape(measure) + arrow
    return f"\\begin{{tabular}}[b]{{@{{}}r@{{}}}}{latex_escape(name)}\\\\@{latex_escape(cut)}{arrow}\\end{{tabular}}"


def _labels(table: ComparisonTable, given: Mapping[str, str] | None) -> dict[str, str]:
    """Each system's label as the table shows it: ``given`` (by key or label), else :func:`short_labels`."""
    given = dict(given or {})
    short = dict(zip((n for n, _, _ in table.systems), short_labels([label for _, label, _ in table.systems])))
    return {name: given.get(name, given.get(label, short[name])) for name, label, _ in table.systems}


def _caption(table: ComparisonTable) -> str:
    """The sentence a person would write under the table: what, on which data, how many, against what."""
    systems = len(table.systems)
    what = f"the {table.collection}" if table.collection.startswith("agentmemory") else table.collection
    queries = f"{table.queries:,} {'question' if table.queries == 1 else 'questions'}"
    lead = f"Retrieval on {what}: " if what else "Retrieval: "
    text = f"{lead}{systems} {'system' if systems == 1 else 'systems'} over {queries} at k = {table.k}"
    if systems > 1:
        text += f", against {table.baseline_label}; best per column in bold"
    if table.published:
        text += "; published figures below the rule"
    return text


def _footnote(table: ComparisonTable, labels: Mapping[str, str]) -> str:
    """The details the caption leaves out: the card's line and definitions, the notation, the full labels, the
    published rows' notes."""
    parts = [table.caption() + ".", table.notation()]
    full = [f"{labels[name]}: {label}" for name, label, _ in table.systems if labels[name] != label]
    if full:
        parts.append("Labels in full: " + "; ".join(full) + ".")
    notes = table.published_notes()
    if notes:
        parts.append(" ".join(notes.splitlines()))
    return " ".join(parts)


def latex_table(table: ComparisonTable, label: str | None = None, labels: Mapping[str, str] | None = None) -> str:
    """``table`` as a LaTeX ``table`` float (see the module docstring).

    ``label`` is its ``\\label`` key (default :func:`table_label` of the table's collection and first measure);
    ``labels`` maps a system's key or label to the label to show (default :func:`short_labels`).
    """
    shown = _labels(table, labels)
    key = label if label is not None else table_label(table.collection, table.measures[0] if table.measures else "")
    caption = latex_escape(_caption(table))
    float_ = "table" if len(table.measures) <= COLUMN_MEASURES else "table*"
    lines = [
        "% The comparison table written by agentmemory. Preamble: \\usepackage{booktabs} and \\usepackage{amssymb}.",
        "% Each cell: the headline mean (bold: the column's best; marker as superscript), its interval, the queries",
        "% above/below the baseline. The caption's footnote holds the definitions and the notes.",
        "\\stepcounter{footnote}% the footnote's number, fixed here (a caption is set twice when measured)",
        f"\\begin{{{float_}}}[tbp]",
        "\\centering",
        "\\footnotesize",
        "\\setlength{\\tabcolsep}{2.5pt}",
        "\\begin{tabular}{@{}l" + "r" * len(table.measures) + "@{}}",
        "\\toprule",
        " & ".join(["System", *(_header(table, m) for m in table.measures)]) + " \\\\",
        "\\midrule",
    ]
    for name, _, _ in table.systems:
        note = "(baseline)" if name == table.baseline else None
        cells = [_label_cell(shown[name], note), *(_cell(table, name, m) for m in table.measures)]
        lines.append(" & ".join(cells) + " \\\\[2pt]")
    if table.published:
        lines.append("\\midrule")
    for number, row in enumerate(table.published, 1):
        kind = "illustrative" if row.claim.illustrative else "published"
        cells = [_label_cell(row.claim.system, f"{kind}, note {number}")]
        value = row.value  # as its source states it: never rounded
        figure = f"$-${value[1:]}" if value.startswith("-") else value
        figure = figure.replace("0.", ".", 1) if figure.startswith(("0.", "$-$0.")) else figure
        cells += [figure if m == row.column else "" for m in table.measures]
        lines.append(" & ".join(cells) + " \\\\[2pt]")
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption[{caption}]{{{caption}.\\protect\\footnotemark[\\value{{footnote}}]}}",
        f"\\label{{{latex_escape(key)}}}",
        f"\\end{{{float_}}}",
        f"\\footnotetext[\\value{{footnote}}]{{{latex_escape(_footnote(table, shown))}}}",
    ]
    return "\n".join(lines) + "\n"
