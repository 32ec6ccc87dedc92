"""A report of one's own: a shipped notebook (or any parameterized one) run with papermill and rendered to HTML.

What ``agentmemory report NOTEBOOK --out DIR -p NAME VALUE ...`` does, in the
order it does it:

1. :func:`find_notebook`: ``NOTEBOOK`` is a path to an ``.ipynb`` file, or
   the name of a shipped notebook (:data:`SHIPPED`: ``eval``, ``explore``,
   ``collection``, ``sweep``), found inside the installed package
   (``agentmemory/_notebooks``, where the wheel carries them) or in a source
   checkout's ``notebooks/``;
2. :func:`read_parameters`: each ``-p NAME VALUE`` must name a parameter of
   the notebook (papermill's reading of its ``parameters`` cell) and is read
   with the type the notebook declares (``int`` and ``float`` by
   :mod:`agentmemory.files.numbers`' rules, ``bool`` as ``true``/``false``);
3. :func:`check_parameters`: a notebook whose parameters are a shipped
   notebook's is checked by that notebook's own setup function
   (:mod:`agentmemory.report.params`) before any kernel starts, so a bad
   value is one line, not a failed notebook;
4. :func:`run_report`: the notebook runs with papermill in the working
   folder and is rendered exactly as ``make report`` renders the committed
   reports (:func:`agentmemory.report.render.execute` and
   :func:`~agentmemory.report.render.render_html`: code hidden, images
   embedded, captions visible); ``DIR/<name>.ipynb`` and ``DIR/<name>.html``
   are written last, each atomically (:class:`~agentmemory.files.output_plan.OutputPlan`,
   which refuses an output that is an input).  A notebook with an
   ``output_dir`` parameter not given writes its artifact into ``DIR`` too
   (its last cell, only when every other cell ran).

:func:`parameters_help` is the notebook's parameters as ``--help-notebook``
shows them.  papermill cannot read a parameter's comment holding ``=``, so the
notebooks write ``NAME=PATH pairs`` as ``NAME and PATH pairs``; the help here
writes them back with the equals sign.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmemory.errors import NotebookFailed, NumberTextError, ParameterError
from agentmemory.files.numbers import INTEGER_FORM, NUMBER_FORM, parse_integer, parse_number
from agentmemory.files.output_plan import OutputPlan
from agentmemory.report import params as setups
from agentmemory.report.render import execute, notebook_text, render_html
from agentmemory.report.shipped import NOTEBOOK_NAMES, notebook_folder

__all__ = [
    "SHIPPED",
    "NotebookParameter",
    "check_parameters",
    "find_notebook",
    "notebook_parameters",
    "parameters_help",
    "read_parameters",
    "run_report",
]

SHIPPED: dict[str, Callable[..., Any]] = {name: getattr(setups, f"{name}_setup") for name in NOTEBOOK_NAMES}
"""Each shipped notebook by name, with the setup function that checks its parameters."""

_PAIRS = re.compile(r"\b([A-Z]+) and ([A-Z]+) pairs\b")


def find_notebook(text: str) -> Path:
    """The notebook ``text`` names: a path to an ``.ipynb`` file, or a shipped notebook's name (``collection``).

    Raises:
        ParameterError: neither (the message lists the shipped names, and says where they were looked for).
    """
    path = Path(text)
    if path.is_file():
        return path
    name = text[: -len(".ipynb")] if text.endswith(".ipynb") else text
    folder = notebook_folder()
    if name in SHIPPED and folder is not None:
        return folder / f"{name}.ipynb"
    where = "" if folder is not None else " (this installation has none: reinstall agentmemory-eval)"
    raise ParameterError(
        "NOTEBOOK",
        text,
        "is neither a notebook file nor a shipped notebook's name",
        f"give the path of an .ipynb file or one of: {', '.join(SHIPPED)}{where}",
    )


@dataclass(frozen=True)
class NotebookParameter:
    """One parameter of a notebook's ``parameters`` cell: its name, declared type, default value and help."""

    name: str
    type: str
    default: Any
    help: str


def notebook_parameters(path: Path) -> dict[str, NotebookParameter]:
    """The parameters papermill reads from ``path``'s ``parameters`` cell, in order (defaults as Python values).

    Raises:
        ParameterError: the notebook has no ``parameters`` cell, or papermill cannot read it.
    """
    import papermill

    try:
        found = papermill.inspect_notebook(str(path))
    except Exception as err:  # papermill's own errors (no kernel name, malformed JSON) become one line
        raise ParameterError("NOTEBOOK", str(path), "cannot be read by papermill", f"{err}") from None
    if not found:
        raise ParameterError(
            "NOTEBOOK", str(path), "has no parameters cell", "tag the cell of its parameters 'parameters'"
        )
    out = {}
    for name, item in found.items():
        try:
            default = ast.literal_eval(item["default"])
        except (ValueError, SyntaxError):
            default = item["default"]
        out[name] = NotebookParameter(name, str(item["inferred_type_name"]), default, str(item["help"] or ""))
    return out


def _value(parameter: NotebookParameter, text: str) -> Any:
    """``text`` read with ``parameter``'s declared type."""
    option = f"-p {parameter.name}"
    try:
        if parameter.type == "int":
            return parse_integer(text)
        if parameter.type == "float":
            return float(parse_number(text))
    except NumberTextError as err:
        form = INTEGER_FORM if parameter.type == "int" else NUMBER_FORM
        raise ParameterError(
            option, text, err.problem, f"give {'an integer' if parameter.type == 'int' else 'a number'} ({form})"
        ) from None
    if parameter.type == "bool":
        if text.lower() not in ("true", "false"):
            raise ParameterError(option, text, "is not a bool", "give true or false")
        return text.lower() == "true"
    return text


def read_parameters(path: Path, pairs: Sequence[Sequence[str]]) -> dict[str, Any]:
    """``-p NAME VALUE`` pairs as the notebook's parameters, each read with its declared type.

    Raises:
        ParameterError: a name the notebook does not declare (its parameters are listed, in order), a value its
            type refuses, or a parameter given twice.
    """
    declared = notebook_parameters(path)
    values: dict[str, Any] = {}
    for name, text in pairs:
        if name not in declared:
            raise ParameterError(
                "-p", name, f"is not a parameter of {path.name}", f"choose from: {', '.join(declared)}"
            )
        if name in values:
            raise ParameterError(f"-p {name}", text, "gives the parameter a second value", "give each parameter once")
        values[name] = _value(declared[name], text)
    return values


def check_parameters(path: Path, values: Mapping[str, Any]) -> None:
    """Check ``values`` with the setup function of the shipped notebook whose parameters ``path`` has.

    Every parameter not given takes the notebook's default; the setup
    function raises what the notebook's first cell would (a bad ``k``, a
    collection file that does not exist, ...).  A notebook of one's own,
    with other parameters, is checked by its own cells when it runs.

    Raises:
        AgentMemoryError: the setup function's one-line error.
    """
    declared = notebook_parameters(path)
    for setup in SHIPPED.values():
        if setups.takes_parameters(setup, declared):
            setup(**{name: values.get(name, p.default) for name, p in declared.items()})
            return


def parameters_help(path: Path) -> str:
    """The notebook's parameters, one a line: ``name: type (default ...)`` and its help (``NAME=PATH pairs``)."""
    declared = notebook_parameters(path)
    width = max(len(f"{p.name}: {p.type}") for p in declared.values())
    lines = [f"Parameters of {path.name} (give each as -p NAME VALUE):"]
    for p in declared.values():
        head = f"{p.name}: {p.type}"
        default = repr(p.default) if isinstance(p.default, str) else str(p.default).lower()
        meaning = _PAIRS.sub(r"\1=\2 pairs", p.help)
        lines.append(f"  {head:<{width}}  (default {default})  {meaning}".rstrip())
    return "\n".join(lines)


def _relative(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it is inside it (the executed notebook records it), else absolute."""
    absolute = Path(os.path.normpath(cwd / path))
    try:
        return absolute.relative_to(cwd).as_posix()
    except ValueError:
        return absolute.as_posix()


def run_report(path: Path, values: Mapping[str, Any], out: Path, *, cwd: Path | None = None) -> list[Path]:
    """Run ``path`` with ``values`` in ``cwd`` (default the working folder) and write ``out/<name>.ipynb`` and
    ``out/<name>.html``, rendered as ``make report`` renders (see the module docstring); return them.

    Raises:
        ParameterError: an output is an input, or a parent of ``out`` is a file.
        NotebookFailed: a cell raised (nothing is written by this function).
    """
    import papermill

    cwd = Path.cwd() if cwd is None else cwd
    declared = notebook_parameters(path)
    parameters = dict(values)
    if "output_dir" in declared and "output_dir" not in parameters:
        parameters["output_dir"] = _relative(out, cwd)
    plan = OutputPlan([path])
    plan.folder("--out", out)
    targets = [plan.file("--out", out / f"{path.stem}{suffix}", example="report/") for suffix in (".ipynb", ".html")]
    try:
        nb = execute(path, parameters, cwd)
    except papermill.PapermillExecutionError as err:
        raise NotebookFailed(path, str(err.ename), str(err.evalue), err.exec_count) from None
    plan.put(targets[0], notebook_text(nb))
    plan.put(targets[1], render_html(nb))
    plan.write()
    return targets
