"""The evaluation artifact from a notebook: the same ``eval-results.json`` as ``agentmemory eval``.

Both go through :func:`agentmemory.artifact.dumps_artifact`, so for the same
collection, retrievers, k and seed the bytes are identical.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..artifact import dumps_artifact, write_artifact
from ..evaluate import Evaluation
from .display import Markdown

__all__ = ["ARTIFACT_NAME", "artifact_summary", "cli_command", "write_results"]

ARTIFACT_NAME = "eval-results.json"


def cli_command(evaluation: Evaluation, source: str, out: str = "reports/eval-results.json") -> str:
    """The ``agentmemory eval`` command that writes the same artifact (``source`` as given to the notebook)."""
    from .params import SHIPPED

    names = ",".join(r.name for r in evaluation.results)
    parts = ["agentmemory eval"]
    if source != SHIPPED:
        parts.append(f"--collection {source}")
    parts += [f"--seed {evaluation.seed}", f"--k {evaluation.k}", f"--retrievers {names}", f"--out {out}"]
    return " ".join(parts)


def artifact_summary(evaluation: Evaluation, source: str) -> Markdown:
    """Size and sha256 of the artifact for this run (computed, not read from disk) and the equivalent command."""
    data = dumps_artifact(evaluation).encode("utf-8")
    return Markdown(
        f"`{ARTIFACT_NAME}` for these parameters: {len(data)} bytes, sha256 `{hashlib.sha256(data).hexdigest()}`. "
        f"`{cli_command(evaluation, source)}` writes the same bytes."
    )


def write_results(evaluation: Evaluation, output_dir: Path | None) -> Markdown:
    """Write ``output_dir/eval-results.json`` (atomically); with no ``output_dir``, say that nothing was written."""
    if output_dir is None:
        return Markdown(f'`{ARTIFACT_NAME}` not written: output_dir is "" (pass e.g. `-p output_dir reports`).')
    path = output_dir / ARTIFACT_NAME
    write_artifact(evaluation, path)
    return Markdown(f"Wrote `{path.as_posix()}`.")
