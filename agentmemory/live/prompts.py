"""Prompts as files: the reader's and the judge's templates, read once, checked, and stated by their sha256.

A template is text with placeholders; rendered, it is the one user message of
the call.  The defaults ship in the package (``templates/reader.txt``,
``templates/judge.txt``, written for this project); ``--reader-prompt`` and
``--judge-prompt`` name another:

* ``FILE``: a text file (UTF-8), the template as it is;
* ``FILE.py:NAME``: the string constant ``NAME`` assigned at the top level
  of a Python file, read with :mod:`ast` and never run: a benchmark's
  official prompt from a clone of its repository
  (``mem0/evaluation/metrics/llm_judge.py:ACCURACY_PROMPT``).

**Placeholders** (:data:`PLACEHOLDERS`), in either of two syntaxes:

* ``{name}``: Python's :meth:`str.format` (a literal brace is doubled), as
  most harnesses fill their prompts;
* ``{{name}}``: the double braces of a Jinja template's variables (mem0's
  answer prompts), used when the template holds one of the role's
  placeholders that way; nothing else of Jinja is read.

A placeholder outside the role's, a positional ``{}``, a conversion or a
format spec is refused, and so is a template that lacks one of the role's
required placeholders (:data:`REQUIRED`), each in one line naming the file.

The sha256 of the template's text (the extracted string, for ``FILE.py:NAME``)
goes into the card and the artifact beside the file's name; the cache key
holds the rendered messages, so a changed prompt is asked again.
"""

from __future__ import annotations

import ast
import hashlib
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from os import PathLike
from pathlib import Path

from agentmemory.errors import ParameterError, quote
from agentmemory.files.reading import decode_utf8, read_bytes

__all__ = ["PLACEHOLDERS", "REQUIRED", "ROLES", "PromptTemplate", "default_prompt", "load_prompt"]

ROLES = ("reader", "judge")
"""The two roles a prompt plays."""

PLACEHOLDERS: Mapping[str, Mapping[str, str]] = {
    "reader": {
        "question": "the question's text",
        "memories": "the system's top k memories, one numbered line each (1. [YYYY-MM-DD HH:MM] text)",
        "question_date": "when the question was asked (YYYY-MM-DD HH:MM), or 'an unknown date'",
    },
    "judge": {
        "question": "the question's text",
        "gold_answer": "the collection's gold answer",
        "generated_answer": "the reader's answer",
        "question_date": "when the question was asked (YYYY-MM-DD HH:MM), or 'an unknown date'",
    },
}
"""Each role's placeholders and what each is filled with."""

REQUIRED: Mapping[str, tuple[str, ...]] = {
    "reader": ("question", "memories"),
    "judge": ("gold_answer", "generated_answer"),
}
"""The placeholders a role's template must hold."""

_DOUBLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_PYTHON_SOURCE = re.compile(r"^(?P<file>.+\.py):(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")


@dataclass(frozen=True)
class PromptTemplate:
    """One checked template: its ``role``, ``text``, where it came from (``source``: ``"default"``, a file's name,
    ``"llm_judge.py:ACCURACY_PROMPT"``), its ``syntax`` (``"format"`` or ``"double-braces"``) and the sha256 of
    ``text``.  ``given`` is the ``FILE`` or ``FILE.py:NAME`` as it was given (``""`` for the default): what the
    artifact's command line repeats."""

    role: str
    text: str
    source: str
    syntax: str
    sha256: str
    given: str = field(default="", compare=False)

    def render(self, values: Mapping[str, str]) -> str:
        """The template with every placeholder filled from ``values`` (which holds every one of the role's)."""
        if self.syntax == "double-braces":
            return _DOUBLE.sub(lambda m: values[m[1]], self.text)
        return self.text.format_map(values)

    def describe(self) -> dict[str, str]:
        """What the card and the artifact state: the source, the syntax and the sha256."""
        return {"source": self.source, "syntax": self.syntax, "sha256": self.sha256}


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ParameterError("role", role, "is not a prompt's role", "choose from: " + ", ".join(ROLES))


def default_prompt(role: str) -> PromptTemplate:
    """The template shipped for ``role`` (``"reader"`` or ``"judge"``)."""
    _check_role(role)
    text = resources.files("agentmemory.live").joinpath(f"templates/{role}.txt").read_text(encoding="utf-8")
    return _checked(role, text, "default", f"the default {role} prompt")


def load_prompt(role: str, source: str | PathLike[str] | None, option: str | None = None) -> PromptTemplate:
    """The template of ``role`` from ``source`` (``FILE`` or ``FILE.py:NAME``; ``None``: the default).

    ``option`` is what messages name (``--judge-prompt``; default ``<role>_prompt``).

    Raises:
        MissingFileError: no such file.
        InputError: a file that is not UTF-8.
        ParameterError: no such constant, a constant that is not a string, or a template that fails its checks
            (see the module docstring).
    """
    _check_role(role)
    if source is None:
        return default_prompt(role)
    option = option or f"{role}_prompt"
    text_source = str(source)
    found = _PYTHON_SOURCE.match(text_source)
    if found and not Path(text_source).is_file():
        path = Path(found["file"])
        text = _constant(path, found["name"], option)
        shown = f"{path.name}:{found['name']}"
    else:
        path = Path(text_source)
        text = decode_utf8(path, read_bytes(path, "prompt file"))
        shown = path.name
    return replace(_checked(role, text, shown, f"{option} {text_source}"), given=text_source)


def _constant(path: Path, name: str, option: str) -> str:
    """The string assigned to ``name`` at the top level of the Python file ``path`` (read with ast, never run)."""
    source = decode_utf8(path, read_bytes(path, "prompt file"))
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as err:
        raise ParameterError(
            option, f"{path}:{name}", f"names a file Python cannot parse ({err.msg})", "name a .py file"
        ) from None
    found: ast.expr | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            found = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            found = node.value
    if found is None:
        raise ParameterError(
            option,
            f"{path}:{name}",
            f"names no top-level assignment to {name} in {path.name}",
            "name a string constant assigned at the top level, e.g. llm_judge.py:ACCURACY_PROMPT",
        )
    try:
        value = ast.literal_eval(found)
    except ValueError:
        value = None
    if not isinstance(value, str):
        raise ParameterError(
            option,
            f"{path}:{name}",
            f"is not a string constant in {path.name} (an f-string, a call or another value)",
            "copy the prompt into a text file with the placeholders of --help, and name that file",
        )
    return value


def _fields(text: str, where: str) -> list[str]:
    """The ``{name}`` fields of ``text`` under str.format, each checked to be a plain name."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as err:
        raise ParameterError(
            where, shorten_text(text), f"is not a str.format template ({err})", _ALLOWED_FORMAT
        ) from None
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier():
            problem = (
                "has a positional placeholder {}" if name == "" else f"has the placeholder {quote('{' + name + '}')}"
            )
            raise ParameterError(where, shorten_text(text), problem, _ALLOWED_FORMAT)
        if spec or conversion:
            raise ParameterError(
                where, shorten_text(text), f"has a conversion or format spec on {{{name}}}", _ALLOWED_FORMAT
            )
        names.append(name)
    return names


_ALLOWED_FORMAT = "write each placeholder as {name} (or {{name}} throughout), and double a literal brace"


def shorten_text(text: str) -> str:
    """The template's first line, for messages."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:60] + ("..." if len(first) > 60 or "\n" in text.strip() else "")


def _checked(role: str, text: str, source: str, where: str) -> PromptTemplate:
    allowed = PLACEHOLDERS[role]
    doubled = [n for n in _DOUBLE.findall(text) if n in allowed]
    if doubled:
        syntax, names = "double-braces", _DOUBLE.findall(text)
    else:
        syntax, names = "format", _fields(text, where)
    for name in names:
        if name not in allowed:
            raise ParameterError(
                where,
                "{" + name + "}",
                f"is not a placeholder of the {role} prompt",
                "use: " + ", ".join("{" + n + "}" for n in allowed),
            )
    for name in REQUIRED[role]:
        if name not in names:
            raise ParameterError(
                where,
                shorten_text(text),
                f"has no {{{name}}} placeholder ({allowed[name]})",
                f"a {role} prompt holds " + ", ".join("{" + n + "}" for n in REQUIRED[role]),
            )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return PromptTemplate(role, text, source, syntax, digest)
