"""How report results show in a notebook: Markdown, tables and PNG figures.

Each object has a rich form (``_repr_markdown_``, ``_repr_html_`` or
``_repr_png_``), which the HTML report shows, and a plain-text ``repr``
that nbval compares.  Both are deterministic: no memory address, no time,
no random id (pandas' Styler is avoided because its HTML carries a random
uuid).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from agentmemory.analysis.prose import signed  # re-exported for the report modules

__all__ = [
    "FOLD_ROWS",
    "Folded",
    "Markdown",
    "Png",
    "Table",
    "ordinal",
    "param_text",
    "params_text",
    "plural",
    "short",
    "signed",
]

FOLD_ROWS = 12
"""A table longer than this many rows is folded (``<details>``) in the HTML report: its caption and row count stay
visible, the rows open on a click, and a printed report leaves them out (the length budget)."""


def plural(n: int, one: str, many: str) -> str:
    """``"1 query"``, ``"3 queries"``: ``n`` with the singular or plural noun."""
    return f"{n} {one if n == 1 else many}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ... ``11th``, ``12th``, ``13th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def params_text(params: Mapping[str, object]) -> str:
    """A system's parameters as ``key = value`` text: ``k1 = 1.2, b = 0.75, variant = lucene`` (see :func:`param_text`)."""
    return ", ".join(f"{key} = {param_text(value)}" for key, value in params.items())


def param_text(value: object) -> str:
    """One parameter's value as text, never a Python repr: text as it is (no quotes), a list as ``[a, b]``, a
    mapping as ``(key = value, ...)``, a component (a mapping with ``label`` and ``params``, as a hybrid lists its
    parts) as ``label (key = value, ...)`` (components separated by ``;``); ``[]`` and ``{}`` as ``none``; a float to
    four significant digits."""
    if isinstance(value, Mapping):
        if not value:
            return "none"
        if "label" in value and isinstance(value.get("params"), Mapping):
            inner = params_text(value["params"])
            return f"{value['label']} ({inner})" if inner else str(value["label"])
        return f"({params_text(value)})"
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        parts = [param_text(item) for item in value]
        return "[" + ("; " if any(isinstance(item, Mapping) for item in value) else ", ").join(parts) + "]"
    if isinstance(value, float):
        return format(value, ".4g")  # 0.0697, never 0.06972477064220184
    return str(value)


def short(text: str, width: int = 60) -> str:
    """``text`` on one line, cut at a word boundary to at most ``width`` characters, ``…`` marking a cut."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    space = cut.rfind(" ")
    if space > width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "…"


@dataclass(frozen=True)
class Markdown:
    """Markdown text; its plain form is the same text."""

    text: str

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


_TABLE_CLASS = "agentmemory-table"
_FIGURE_CLASS = "agentmemory-figure"
# Left-aligned cells; the selector outweighs JupyterLab's right-aligning table rule in the HTML report.
_TABLE_STYLE = (
    f"<style>.jp-RenderedHTMLCommon table.{_TABLE_CLASS} td, .jp-RenderedHTMLCommon table.{_TABLE_CLASS} th, "
    f"table.{_TABLE_CLASS} td, table.{_TABLE_CLASS} th {{text-align: left; vertical-align: top;}} "
    f"table.{_TABLE_CLASS} caption {{text-align: left; font-weight: bold;}}</style>\n"
)


@dataclass(frozen=True, eq=False)
class Table:
    """A DataFrame shown without its index: HTML for the report, ``to_string`` for nbval.

    ``bold`` holds ``(row, column)`` positions shown in bold in the HTML (the best value of a column); the plain
    form is unchanged.  ``fold``: ``None`` folds the table in a ``<details>`` element when it has more than
    :data:`FOLD_ROWS` rows, ``True`` always, ``False`` never; a folded table's summary is its caption and row count.
    A table without rows shows its caption alone (no empty header row).
    """

    frame: pd.DataFrame
    caption: str = ""
    bold: frozenset[tuple[int, int]] = frozenset()
    fold: bool | None = None

    @property
    def folded(self) -> bool:
        """Whether the HTML report shows the rows folded (see the class docstring)."""
        return bool(len(self.frame)) and (self.fold if self.fold is not None else len(self.frame) > FOLD_ROWS)

    def _repr_html_(self) -> str:
        if not len(self.frame):
            return f"<p><strong>{_escape(self.caption)}</strong></p>" if self.caption else ""
        frame = self.frame.astype(str).map(_escape) if len(self.frame.columns) else self.frame
        for row, column in self.bold:
            frame.iat[row, column] = f"<strong>{frame.iat[row, column]}</strong>"
        html = frame.to_html(index=False, border=0, escape=False, na_rep="", classes=_TABLE_CLASS, justify="left")
        html = html.replace("<td>nan</td>", "<td></td>")
        if self.folded:
            rows = plural(len(self.frame), "row", "rows")
            summary = f"{_escape(self.caption)} ({rows})" if self.caption else rows
            return f"{_TABLE_STYLE}<details><summary>{summary}</summary>\n{html}\n</details>"
        if self.caption:
            html = html.replace(">\n", f">\n  <caption>{_escape(self.caption)}</caption>\n", 1)
        return _TABLE_STYLE + html

    def __repr__(self) -> str:
        body = self.frame.to_string(index=False, na_rep="") if len(self.frame) else "(no rows)"
        return f"{self.caption}\n{body}" if self.caption else body


@dataclass(frozen=True)
class Folded:
    """Markdown shown folded in the HTML report: a one-line summary, the text under it on a click (left out of a
    printed report); the plain form, which nbval compares, is the summary then the text."""

    summary: str
    text: str

    def _repr_html_(self) -> str:
        import mistune  # nbconvert's own Markdown renderer

        body = mistune.html(self.text)
        return f"<details><summary>{_escape(self.summary)}</summary>\n{body}</details>"

    def __repr__(self) -> str:
        return f"{self.summary}\n{self.text}"


@dataclass(frozen=True, eq=False)
class Png:
    """PNG bytes with a one-line caption: shown as a figure with its caption visible under it.

    The rich form is HTML (``<figure>``: the image as a ``data:`` URI, its
    caption as alternative text and as a visible ``<figcaption>``), so a
    reader of the HTML report sees the caption; the plain form, which nbval
    compares, is the caption.
    """

    data: bytes
    caption: str

    def _repr_html_(self) -> str:
        encoded = base64.b64encode(self.data).decode("ascii")
        caption = _escape(self.caption)
        return (
            f'<figure class="{_FIGURE_CLASS}"><img alt="{caption.replace(chr(34), "&quot;")}" '
            f'src="data:image/png;base64,{encoded}"/><figcaption>{caption}</figcaption></figure>'
        )

    def __repr__(self) -> str:
        return self.caption


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
