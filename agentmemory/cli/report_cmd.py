"""``agentmemory report``: a report notebook run with papermill and rendered to HTML, as ``make report`` does.

``NOTEBOOK`` is a shipped notebook's name (``collection``) or a path; each
``-p NAME VALUE`` is checked against the notebook's parameters, and the
parameters of a shipped notebook by its own setup function, before a kernel
starts (:mod:`agentmemory.report.own_report`).  ``--help-notebook`` lists the
parameters.  The report extra (papermill, nbconvert, ipykernel, pandas,
matplotlib) is checked first: without it the command says what to install.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from agentmemory.errors import ParameterError
from agentmemory.files.output_plan import OutputPath

__all__ = ["REPORT_MODULES", "run"]

REPORT_MODULES = ("papermill", "ipykernel", "nbconvert", "nbformat", "pandas", "matplotlib")
"""What running and rendering a report needs (the ``report`` extra)."""


def run(args: argparse.Namespace) -> int:
    """Run ``agentmemory report`` (see the module docstring)."""
    missing = [m for m in REPORT_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise ParameterError(
            "report",
            args.notebook,
            f"needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed",
            "pip install 'agentmemory-eval[report]'",
        )
    from agentmemory.report import own_report  # the report extra, just checked

    path = own_report.find_notebook(args.notebook)
    if args.help_notebook:
        print(own_report.parameters_help(path))
        return 0
    if not args.out:
        raise ParameterError("--out", None, "is missing", "name the folder to write the report into: --out DIR")
    values = own_report.read_parameters(path, args.parameter)
    own_report.check_parameters(path, values)
    out = args.out if isinstance(args.out, OutputPath) else OutputPath(args.out)
    written = own_report.run_report(path, values, Path(out))
    print("Wrote " + " and ".join(out.shown(p) for p in written))
    return 0
