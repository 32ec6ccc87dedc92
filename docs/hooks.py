"""MkDocs hooks: the reference pages generated from the code, so that they cannot drift from it.

A page asks for a generated block with a line of its own, ``<!-- generated: NAME -->``; :func:`on_page_markdown`
replaces it by ``GENERATORS[NAME]()``.  An unknown name, or a generator that finds the code disagreeing with
what it documents, fails the build (``mkdocs build --strict`` is what ``make docs`` runs).

Each generator reads one entry of the package, named once here, so that a move in the package is a one-line
change of this file:

* :func:`top_level_parser`: the ``agentmemory`` command's argparse parser (the CLI reference);
* ``agentmemory.metrics.REGISTRY``: every measure's definition (the measures page);
* ``agentmemory.datasets.FORMATS``: every collection format and its declared options;
* ``agentmemory.retrievers.CAPABILITY_TABLE`` and ``agentmemory.systems.SYSTEM_CAPABILITIES``: the optional
  members of a retriever and of a memory system;
* :func:`grid_key_declarations`: the keys the grid reader accepts, table by table (``GRID_KEYS``);
* ``agentmemory.evaluation.settings.SETTINGS``: every setting of an evaluation, with its flag, notebook
  parameter and grid key.

Docstrings are written with Sphinx roles (``:class:`~agentmemory.records.Hit```); :func:`on_page_content` turns
what Markdown makes of them into cross-references that mkdocs-autorefs resolves (plain code when the target is
not documented on the site).
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import inspect
import os
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from mkdocs.exceptions import PluginError

from agentmemory import records
from agentmemory.cli import app as cli_app
from agentmemory.datasets import FORMATS
from agentmemory.evaluation.settings import SETTINGS
from agentmemory.experiment import grid as grid_module
from agentmemory.metrics import REGISTRY, CutoffRule, MeasureDef, QueryContext
from agentmemory.retrievers import CAPABILITY_TABLE
from agentmemory.systems import SYSTEM_CAPABILITIES, Memory, Turn

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)
USAGE_WIDTH = "78"  # argparse wraps usage lines at $COLUMNS: fixed, so the page is the same on every terminal, and narrow
# enough for the page's code column (a usage line never wraps twice)


# -- the entries, one line each to repoint ------------------------------------------------------------------
def top_level_parser() -> argparse.ArgumentParser:
    """The parser of the ``agentmemory`` command, from which the CLI reference is generated."""
    return cli_app.build_parser()


def grid_key_declarations() -> dict[str, tuple[grid_module.GridKey, ...]]:
    """The keys the grid reader accepts, per table of a grid file (titled as a grid file writes it), in the
    order :data:`agentmemory.experiment.grid.GRID_KEYS` declares them: the one declaration the reader checks."""
    return {
        title: tuple(key for key in grid_module.GRID_KEYS if key.table == table)
        for table, title in grid_module.GRID_TABLES.items()
    }


# -- Markdown helpers -----------------------------------------------------------------------------------------
def _text(value: object) -> str:
    """Plain text safe in a Markdown table cell: HTML escaped, Markdown's emphasis and link characters escaped."""
    escaped = html.escape(" ".join(str(value).split()), quote=False)
    escaped = escaped.replace("{", "&#123;").replace("}", "&#125;")  # attr_list would read { ... } as attributes
    return re.sub(r"([\\`*_\[\]|])", r"\\\1", escaped)


def _code(value: object) -> str:
    """``value`` as inline code in a table cell (a ``|`` inside code would still split the cell)."""
    text = str(value).replace("|", "&#124;")
    return f"<code>{html.escape(text, quote=False).replace('&amp;#124;', '&#124;')}</code>"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# -- the command line -----------------------------------------------------------------------------------------
def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    """Every (sub)command below ``parser``, depth first: its words, its one-line help and its parser."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), helps.get(name, ""), sub
                yield from _commands(sub, (*path, name))


def _argument(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(action.option_strings)
        if action.nargs == 0:
            return _code(names)
        metavar = action.metavar or action.dest.upper()
        return _code(f"{names} {metavar}")
    return _code(action.metavar or action.dest)


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    default = action.default
    if default is None or default is argparse.SUPPRESS or default is False or default == []:
        return ""
    return _code(default)


OPTION_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "The collection",
        (
            "--collection",
            "--format",
            "--split",
            "--repair",
            "--include-captions",
            "--granularity",
            "--all-turns",
            "--user-turns-only",
            "--updates",
            "--format-option",
        ),
    ),
    ("Retrievers and run files", ("--retrievers", "--retriever", "--run", "--memories", "--lenient-run")),
    (
        "Memory systems",
        ("--system", "--attribution", "--system-timeout", "--lenient-system", "--workers", "--clock"),
    ),
    ("Published answer files", ("--answers", "--answers-format", "--answers-mapping", "--lenient-answers")),
    (
        "Live readers and judges",
        ("--reader", "--judge", "--reader-prompt", "--judge-prompt", "--judge-majority", "--offline", "--prices"),
    ),
    (
        "What is measured",
        ("--k", "--metrics", "--relevance", "--as-of", "--tokenizer", "--qrels-patch", "--seed", "--baseline"),
    ),
    ("The comparison table", ("--claims", "--table-out", "--table-label", "--table-metrics")),
    ("Outputs", ("--out", "--runs-dir", "--run-depth", "--timings", "--progress")),
)
"""The options of a long command (more than :data:`GROUPED_FROM`) grouped by purpose on the CLI page, each group a
heading of its own; an option of no group is listed under "Other options", so none is ever left out."""
GROUPED_FROM = 12


def _option_tables(parser: argparse.ArgumentParser, level: str) -> list[str]:
    """The argument tables of one command: one, or one per group of :data:`OPTION_GROUPS` for a long command."""
    actions = [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    if not actions:
        return []
    header = ["argument", "default", "what it does"]
    if len(actions) <= GROUPED_FROM:
        return [_table(header, [[_argument(a), _default(a), _text(a.help or "")] for a in actions])]
    grouped: dict[str, list[argparse.Action]] = {}
    for action in actions:
        first = action.option_strings[0] if action.option_strings else ""
        title = next((t for t, names in OPTION_GROUPS if first in names), "Other options")
        grouped.setdefault(title, []).append(action)
    order = [t for t, _ in OPTION_GROUPS if t in grouped] + (["Other options"] if "Other options" in grouped else [])
    out = []
    for title in order:
        out.append(f"{level}# {title}")
        out.append(_table(header, [[_argument(a), _default(a), _text(a.help or "")] for a in grouped[title]]))
    return out


def cli_reference() -> str:
    """Every command and subcommand of :func:`top_level_parser`: usage, then each argument with its help (grouped
    by purpose for a long command, :data:`OPTION_GROUPS`)."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = USAGE_WIDTH
    try:
        top = top_level_parser()
        out = []
        for words, summary, parser in [((top.prog,), "", top), *_commands(top, (top.prog,))]:
            level = "#" * max(2, len(words))  # the command and its subcommands h2, store's subcommands h3
            out.append(f"{level} `{' '.join(words)}`")
            summary = summary or parser.description or ""
            if summary:
                out.append(_text(summary[0].upper() + summary[1:]).rstrip(".") + ".")
            out.append(f"```text\n{parser.format_usage().strip()}\n```")
            out += _option_tables(parser, level)
        return "\n\n".join(out)
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


# -- measures -------------------------------------------------------------------------------------------------
_CUTOFF = {
    CutoffRule.REQUIRED: "`@k` required",
    CutoffRule.OPTIONAL: "`@k` optional",
    CutoffRule.FORBIDDEN: "none",
    CutoffRule.BUDGET: "`@<T>tok` required",
    CutoffRule.FIRST: "`@first`",
}


def _measure_row(written: str, d: MeasureDef, aliases: str) -> list[str]:
    capabilities = [what for what in ("batch", "tie_aware", "provenance") if getattr(d, what) is not None]
    if d.whole_ranking:
        capabilities.append("whole ranking")
    if d.undefined_when is not None:
        capabilities.append(f"no value with {d.undefined_when}")
    return [
        written,
        aliases,
        _CUTOFF[d.cutoff],
        _text(d.family or "not stated"),
        _text(d.description),
        d.direction,
        ", ".join(capabilities),
    ]


def measure_reference() -> str:
    """Every registered measure (and its budget form, a row of its own): a summary table, then each defining
    module's docstring and public functions."""
    definitions = REGISTRY.registered()
    rows = []
    modules: dict[str, list[str]] = {}
    for name, d in definitions.items():
        aliases = ", ".join(_code(a) for a in d.aliases)
        rows.append(_measure_row(_code(name), d, aliases))
        if d.budget_form is not None:
            rows.append(_measure_row(_code(f"{name}@<T>tok"), d.budget_form, aliases))
        module = inspect.getmodule(d.function)
        if module is None:
            raise PluginError(f"the measure {name!r}: its function has no module to document")
        modules.setdefault(module.__name__, []).append(name)
    out = [
        _table(["measure", "aliases", "cutoff", "family", "definition", "better", "optional parts"], rows),
        "The optional parts: `batch` (a NumPy kernel for whole runs), `tie_aware` (the expectation over all "
        "orderings of tied scores), `provenance` (a value under `--relevance provenance`), `whole ranking` "
        "(the measure may look below its cutoff), `no value with ...` (where the measure has none: the query is "
        "left out of its mean and counted beside it).  A row `X@<T>tok` is the budget form of `X` "
        "(`MeasureDef.budget_form`), defined in `X`'s module with the reading rule of "
        "`agentmemory/metrics/budget.py`.",
    ]
    for module_name, names in modules.items():
        out.append(f"## {', '.join(f'`{n}`' for n in names)}")
        out.append(
            f"::: {module_name}\n    options:\n      show_root_heading: false\n      heading_level: 3\n"
            "      show_attribute_values: false"
        )
    return "\n\n".join(out)


# -- collection formats ---------------------------------------------------------------------------------------
def format_reference() -> str:
    """Every registered format: what it is, how ``auto`` detects it, its declared options, its module's docstring."""
    out = []
    for name, fmt in FORMATS.registered().items():
        out.append(f"## `{name}`: {_text(fmt.description)}")
        out.append(
            f"**Detected** (`--format auto`): {_text(fmt.rule) if fmt.rule else 'never; name it with --format'}."
        )
        if fmt.options:
            rows = [[_code(o.name), _code(o.type.__name__), _code(o.default), _text(o.help)] for o in fmt.options]
            out.append(_table(["option", "type", "default", "what it does"], rows))
        module = inspect.getmodule(fmt.read)
        if module is None:
            raise PluginError(f"the format {name!r}: its reader has no module to document")
        out.append(
            f"::: {module.__name__}\n    options:\n      show_root_heading: false\n      members: false\n"
            "      heading_level: 3"
        )
    return "\n\n".join(out)


# -- records --------------------------------------------------------------------------------------------------
def _fields(cls: type) -> list[tuple[str, str, str]]:
    """(name, type as written, default) of a dataclass or a NamedTuple."""
    if dataclasses.is_dataclass(cls):
        out = []
        for f in dataclasses.fields(cls):
            default = "" if f.default is dataclasses.MISSING else repr(f.default)
            out.append((f.name, str(f.type), default))
        return out
    annotations = inspect.get_annotations(cls)
    defaults = getattr(cls, "_field_defaults", {})
    return [(n, str(annotations[n]), repr(defaults[n]) if n in defaults else "") for n in cls._fields]  # type: ignore[attr-defined]


RECORDS: dict[str, type] = {
    "MemoryEntry": records.MemoryEntry,
    "Provenance": records.Provenance,
    "Query": records.Query,
    "Hit": records.Hit,
    "QueryContext": QueryContext,
    "Turn": Turn,
    "Memory": Memory,
}


def _record_table(name: str) -> Callable[[], str]:
    def generate() -> str:
        rows = [[_code(f"{name}.{n}"), _code(t), _code(d) if d else "required"] for n, t, d in _fields(RECORDS[name])]
        return _table(["attribute", "type", "default"], rows)

    return generate


# -- optional capabilities ----------------------------------------------------------------------------------
def retriever_capabilities() -> str:
    """``agentmemory.retrievers.CAPABILITY_TABLE``: each optional member, whose it is, what it means, what
    happens without it."""
    rows = [[_code(c.name), _text(c.owner), _text(c.meaning), _text(c.missing)] for c in CAPABILITY_TABLE]
    return _table(["member", "of the", "what it is", "without it"], rows)


def system_capabilities() -> str:
    """``agentmemory.systems.SYSTEM_CAPABILITIES``: each optional member of a memory system and its meaning."""
    return _table(
        ["member", "what it is"], [[_code(name), _text(meaning)] for name, meaning in SYSTEM_CAPABILITIES.items()]
    )


# -- grid keys ------------------------------------------------------------------------------------------------
_TOML_LITERAL = re.compile(r'-?[0-9][0-9_.]*|"[^"]*"|\[\]|\{\}|true|false')


def _grid_default(default: str) -> str:
    """A default written as a TOML value as code (``5``, ``"direct"``), one described in words as text."""
    return _code(default) if _TOML_LITERAL.fullmatch(default) else _text(default)


def grid_reference() -> str:
    """One table per table of a grid file, each key with what it takes, its default and its meaning.

    Fails the build when a table declares no key (a table of :data:`GRID_TABLES` that ``GRID_KEYS`` forgot).
    """
    out = []
    for title, keys in grid_key_declarations().items():
        if not keys:
            raise PluginError(
                f"grid keys: the table {title!r} declares no key in agentmemory.experiment.grid.GRID_KEYS"
            )
        out.append(f"### {_text(title)}")
        rows = [[_code(k.name), _text(k.type), _grid_default(k.default), _text(k.help)] for k in keys]
        out.append(_table(["key", "what it takes", "default", "what it does"], rows))
    return "\n\n".join(out)


# -- the hooks ------------------------------------------------------------------------------------------------
def settings_reference() -> str:
    """``agentmemory.evaluation.settings.SETTINGS``: each setting with its flag, notebook parameter, grid key,
    default (``""``: none, or resolved from what is evaluated) and meaning."""
    header = ["setting", "`eval` flag", "notebook parameter", "grid key", "default", "meaning"]
    rows = [
        [_code(s.name), _code(s.flag), _code(s.parameter), _code(s.grid), _code(repr(s.default)), _text(s.help)]
        for s in SETTINGS
    ]
    return _table(header, rows)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "measures": measure_reference,
    "formats": format_reference,
    "grid-keys": grid_reference,
    "settings": settings_reference,
    "capabilities": retriever_capabilities,
    "system-capabilities": system_capabilities,
    **{f"record-{name.lower()}": _record_table(name) for name in RECORDS},
}


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Each ``<!-- generated: NAME -->`` line replaced by its generator's Markdown."""

    def generate(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in GENERATORS:
            raise PluginError(f"{page.file.src_path}: no generator {name!r}; known: {', '.join(sorted(GENERATORS))}")
        return GENERATORS[name]()

    return MARKER.sub(generate, markdown)


def on_page_context(context: dict[str, Any], page: Any, **_: Any) -> dict[str, Any]:
    """The measures page's table of contents lists the measures only: each measure's section keeps its module's
    documented members (``DEFINITION``, ``BUDGET_DEFINITION``, functions) on the page, out of the contents."""
    if page.file.src_uri == "measures.md":
        for item in page.toc:
            for section in item.children:  # the page's own sections have no subsections; the measures' are members
                section.children = []
    return context


_ROLE = re.compile(r":(?:py:)?(class|func|meth|mod|data|attr|exc|obj):<code>(~?)([\w.]+)(\(\))?</code>")


_PRE = re.compile(r"<pre\b.*?</pre>", re.DOTALL)
_TEXT = re.compile(r">([^<]+)<")
_OPTION = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*)")


def _options_unbroken(block: re.Match[str]) -> str:
    """A code block whose ``--option`` names are each one unbreakable span: a wrapped command line breaks between
    words, never inside ``--table-metrics`` (extra.css: ``.am-option``)."""

    def text(found: re.Match[str]) -> str:
        return ">" + _OPTION.sub(r'<span class="am-option">\1</span>', found.group(1)) + "<"

    return _TEXT.sub(text, block.group(0))


def on_page_content(content: str, **_: Any) -> str:
    """``:class:`~a.b.C``` as Markdown renders it becomes a cross-reference to ``a.b.C`` shown as ``C``; a code
    block's option names never break across lines."""
    content = _PRE.sub(_options_unbroken, content)

    def link(found: re.Match[str]) -> str:
        _, short, target, call = found.groups()
        shown = (target.rsplit(".", 1)[-1] if short else target) + (call or "")
        if "." not in target:
            return f"<code>{shown}</code>"
        return f'<autoref identifier="{target}" optional><code>{shown}</code></autoref>'

    return _ROLE.sub(link, content)
