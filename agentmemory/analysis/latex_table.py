"""The comparison table as LaTeX a paper can ``\\input``: booktabs rules, a label, the legend as a footnote.

What :func:`latex_table` writes compiles with pdflatex as emitted, given
``\\usepackage{booktabs}`` (the rules) and ``\\usepackage{amssymb}`` (the
markers, ``\\blacktriangle`` and ``\\blacktriangledown``) in the preamble, and
fits one column of ``\\documentclass[twocolumn]{article}`` (229.5 pt) with up
to :data:`COLUMN_MEASURES` measures, the default five included; a table of
more is a ``table*`` float, spanning both columns (469 pt: nine measures fit;
``tests/analysis/test_latex_table.py`` compiles both and reads pdflatex's log
for errors and overfull boxes).  To fit, each cell is a small
stack, right-aligned::

    .812▲          the headline mean, 3 decimals, the marker as a superscript
    [.70,.91]      its interval, 2 decimals, in \\scriptsize ("all equal" when every query scored the same)
    +12/−3         the queries above / below the baseline (not for the baseline's row)
    on 4: 40.000 vs 55.000   (only where the system and the baseline are compared on the queries both have a
                   value, fewer than their own: tokens@first) their two means over those queries

A number in [0, 1) loses its leading zero (``.812``), as tables of
proportions in papers do; the ends of an interval get 2 decimals (they move
more than that between resamplings), the mean keeps the 3 of every other
rendering.  System labels are wrapped at :data:`LABEL_WIDTH` characters; a
lower-is-better measure's header carries ``$\\downarrow$``.  The caption is
:meth:`~agentmemory.analysis.comparison_table.ComparisonTable.caption`; the
notation line (what ``▲``, ``▼`` and ``+a/−b`` mean) is its footnote
(``\\footnotemark`` in the caption, ``\\footnotetext`` right after the float,
LaTeX's way of giving a float a footnote; the number is taken once before
the float, since LaTeX sets a caption twice when it measures it).  Every character LaTeX treats
specially is escaped (:func:`latex_escape`).
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Mapping
from typing import Any, Protocol

from agentmemory.analysis.summaries import Interval

__all__ = ["LABEL_WIDTH", "latex_escape", "latex_label", "latex_table"]


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
    def marker(self, name: str, measure: str) -> str: ...
    def counts(self, name: str, measure: str) -> tuple[int, int]: ...
    def caption(self) -> str: ...
    def notation(self) -> str: ...


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


def _label_cell(label: str, baseline: bool) -> str:
    lines = textwrap.wrap(label, LABEL_WIDTH, break_long_words=True, break_on_hyphens=True) or [""]
    rows = [latex_escape(line) for line in lines]
    if baseline:
        rows.append("{\\scriptsize (baseline)}")
    if len(rows) == 1:
        return rows[0]
    return "\\begin{tabular}[t]{@{}l@{}}" + "\\\\".join(rows) + "\\end{tabular}"


def _cell(table: ComparisonTable, name: str, measure: str) -> str:
    cell = table.cells[(name, measure)]
    mean = "--" if cell.interval is None else _number(cell.interval.mean, 3)
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


def _header(table: ComparisonTable, measure: str) -> str:
    return latex_escape(measure) + ("$\\downarrow$" if measure in table.lower_measures else "")


def latex_table(table: ComparisonTable, label: str = "tab:comparison") -> str:
    """``table`` as a LaTeX ``table`` float (see the module docstring); ``label`` is its ``\\label`` key."""
    caption = latex_escape(table.caption())
    float_ = "table" if len(table.measures) <= COLUMN_MEASURES else "table*"
    lines = [
        "% The comparison table written by agentmemory. Preamble: \\usepackage{booktabs} and \\usepackage{amssymb}.",
        "% Each cell: the headline mean (marker as superscript), its interval, the queries above/below the baseline.",
        "\\stepcounter{footnote}% the legend's footnote number, fixed here (a caption is set twice when measured)",
        f"\\begin{{{float_}}}[tbp]",
        "\\centering",
        "\\footnotesize",
        "\\setlength{\\tabcolsep}{2.5pt}",
        "\\begin{tabular}{@{}l" + "r" * len(table.measures) + "@{}}",
        "\\toprule",
        " & ".join(["System", *(_header(table, m) for m in table.measures)]) + " \\\\",
        "\\midrule",
    ]
    for name, label_text, _ in table.systems:
        cells = [_label_cell(label_text, name == table.baseline), *(_cell(table, name, m) for m in table.measures)]
        lines.append(" & ".join(cells) + " \\\\[2pt]")
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption[{caption}]{{{caption}.\\protect\\footnotemark[\\value{{footnote}}]}}",
        f"\\label{{{latex_escape(label)}}}",
        f"\\end{{{float_}}}",
        f"\\footnotetext[\\value{{footnote}}]{{{latex_escape(table.notation())}}}",
    ]
    return "\n".join(lines) + "\n"
