"""Regenerate everything under ``reports/``: ``python -m agentmemory.report.build``.

Run from the repository root (``make report`` does).  For the given seed
and k (default 7 and 5) it

1. executes with papermill (kernel ``python3``, in a staging folder that
   mirrors the working directory; see below) each report of :data:`REPORTS`: ``notebooks/eval.ipynb`` (``output_dir =
   reports``), which writes ``reports/eval-results.json``;
   ``notebooks/explore.ipynb`` with its default query;
   ``notebooks/collection.ipynb`` on the authored LoCoMo sample with the
   modern baselines (``output_dir = reports/collection``), and again as
   ``collection-provenance`` with the derived-memory run of
   ``fixtures/locomo-derived`` judged through provenance, and as
   ``collection-longmemeval`` on the authored LongMemEval sample at turn
   granularity with LongMemEval's official measures, and as
   ``collection-systems`` with the recorded output of three memory systems
   (:data:`SYSTEMS_DIR`: the reference MCP memory server, agentrecall-db and
   the example system) beside bm25 and hybrid, under provenance, and as
   ``collection-patched`` with the sample's judgment patch
   (:data:`QRELS_PATCH`) and the example claims (:data:`CLAIMS`) beside bm25,
   dense and hybrid; ``notebooks/sweep.ipynb`` with its default (small) sweep; and
   ``notebooks/answers.ipynb`` on the LoCoMo sample (repaired) with the authored answer files of
   :data:`ANSWERS` (zep, mem0's two seeds, evermemos), bm25 beside them and the authored errata
   (:data:`ERRATA`) as the answer-key patch;
2. strips what differs between runs (:func:`agentmemory.report.render.normalize_notebook`) and writes
   ``reports/<name>.ipynb`` for each: these executed notebooks are the
   references nbval checks;
3. renders each to HTML (:func:`agentmemory.report.render.render_html`: input hidden, images embedded,
   no script or style fetched from the network);
4. runs ``agentmemory eval`` (as its own process, as a user would) with the same parameters as each report that
   writes an artifact (for the seed fixture also writing the TREC runs to
   ``reports/runs/``), the artifact in a temporary file, and fails unless
   each artifact is byte-identical to its notebook's.

Running it twice without changes gives byte-identical files.  ``--only answers`` (comma-separated stems)
regenerates those reports alone, through the same steps, and leaves the others' files as they are.

**Nothing partial.**  Parameters are checked first (``seed`` an integer >= 0,
``k`` >= 1, by :mod:`agentmemory.files.numbers`'s rule on the command line; the
notebooks present; ``--reports`` inside the working folder, since the
notebooks record it relative to it).  Every output is declared in an
:class:`agentmemory.files.output_plan.OutputPlan` whose inputs are the notebooks and
the collections and runs they read, so ``--reports`` equal to
``--notebooks`` is refused before anything runs.  The notebooks then run in
a temporary staging folder that links every entry of the working directory
except the folders the reports go to: relative input paths
(``fixtures/...``) read the real files, while each notebook writes its
artifact at the same relative ``output_dir`` inside the staging folder (so
the executed notebooks are the same bytes).  The CLI check writes its runs
there too.  Only when everything has run and matched is every file written,
each atomically: a failure on the way (a notebook cell, a mismatch) leaves
``reports/`` as it was.  Errors are one line
(``agentmemory.report.build: error: ...``): exit 2 for bad input, 1 for a
notebook that failed on something else, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import nbformat

from agentmemory.collection import default_collection_path
from agentmemory.errors import (
    AgentMemoryError,
    InputError,
    NotebookFailed,
    NumberTextError,
    ParameterError,
    check_positive_int,
    check_seed,
)
from agentmemory.files.atomic import sha256_file
from agentmemory.files.numbers import INTEGER_FORM, parse_integer
from agentmemory.files.output_plan import OutputPlan
from agentmemory.report.render import execute, notebook_text, render_html
from agentmemory.report.results import ARTIFACT_NAME

__all__ = ["NOTEBOOKS", "REPORTS", "Report", "build", "main"]

SAMPLE = "fixtures/locomo-sample/locomo-sample.json"
DERIVED = "fixtures/locomo-derived"
LONGMEMEVAL = "fixtures/longmemeval-sample/longmemeval-sample.json"
LONGMEMEVAL_MEASURES = "recall_any@5,recall_all@5,ndcg_any@5,recall_any@10,sess.recall_any@5,sess.ndcg_any@5"
BEAM, BEAM_MEASURES = "fixtures/beam-sample", "recall_any@5,recall_all@5,stale@5"  # BEAM: per ability, stale@k
QRELS_PATCH = "fixtures/locomo-sample/qrels-patch.jsonl"
"""The authored judgment patch of the LoCoMo sample (``collection-patched``)."""
CLAIMS = "fixtures/claims/claims.toml"
"""The example claims file: two published numbers and illustrative ones, marked (``collection-patched``)."""
PATCHED_RETRIEVERS = "bm25,dense,hybrid"
ERRATA = "fixtures/locomo-sample/errata-sample.json"
"""The authored errata of the LoCoMo sample in locomo-audit's shape (answer and evidence corrections: ``answers``)."""
ANSWERS = (
    ("zep", ("fixtures/answers/zep/zep_locomo_grades.json",)),
    ("mem0", ("fixtures/answers/mem0-locomo-sample.json", "fixtures/answers/mem0-locomo-sample-run2.json")),
    ("evermemos", ("fixtures/answers/evermemos-locomo-sample.json",)),
)
"""The authored answer files of ``answers``: each system and its files (mem0's two: its seeds)."""
_ROOT = Path(__file__).resolve().parent.parent.parent  # the source checkout holding fixtures/
BASELINES = "bm25,tags,dense,hybrid,recency"
SYSTEMS_DIR = "fixtures/locomo-systems"
"""The recorded output (``--runs-dir``) of three memory systems on the LoCoMo sample (its README: how it was made)."""
SYSTEMS = (
    ("mcp", "mcp-profile=server-memory"),
    ("agentrecall", "agentrecall"),
    ("example", "examples.my_memory_system-System"),
)
"""Each recorded memory system of ``collection-systems``: its run's name in the report, its files' stem."""
_SYSTEM_RUNS = ",".join(f"{name}={SYSTEMS_DIR}/{stem}.trec" for name, stem in SYSTEMS)
_SYSTEM_MEMORIES = ",".join(f"{name}={SYSTEMS_DIR}/{stem}.memories.jsonl" for name, stem in SYSTEMS)


def _recorded_flags(name: str, stem: str) -> tuple[str, ...]:
    return (
        "--run",
        f"{name}={{root}}/{SYSTEMS_DIR}/{stem}.trec",
        "--memories",
        f"{{root}}/{SYSTEMS_DIR}/{stem}.memories.jsonl",
    )


class Report(NamedTuple):
    """One committed report: ``reports/<stem>.ipynb`` and ``.html`` from ``notebooks/<notebook>``.

    ``parameters`` are the notebook's (``output_dir`` is added when
    ``artifact`` names a folder under ``reports/``); ``cli`` are the
    ``agentmemory eval`` options that must write the same artifact, byte for
    byte (``{reports}`` is the reports folder, ``{root}`` the source checkout, ``{k}`` the cutoff).
    """

    stem: str
    notebook: str
    parameters: dict[str, Any]
    artifact: str | None = None
    cli: tuple[str, ...] = ()


REPORTS: tuple[Report, ...] = (
    Report("eval", "eval.ipynb", {}, ".", ("--runs-dir", "{reports}/runs")),
    Report("explore", "explore.ipynb", {}),
    Report(
        "collection",
        "collection.ipynb",
        {"retrievers": BASELINES},
        "collection",
        ("--collection", f"{{root}}/{SAMPLE}", "--retrievers", BASELINES),
    ),
    Report(
        "collection-provenance",
        "collection.ipynb",
        {
            "runs": f"derived={DERIVED}/derived.trec",
            "memories": f"derived={DERIVED}/memories.jsonl",
            "relevance": "provenance",
        },
        "collection-provenance",
        (
            "--collection",
            f"{{root}}/{SAMPLE}",
            "--run",
            f"derived={{root}}/{DERIVED}/derived.trec",
            "--memories",
            f"{{root}}/{DERIVED}/memories.jsonl",
            "--relevance",
            "provenance",
        ),
    ),
    Report(
        "collection-longmemeval",
        "collection.ipynb",
        {
            "collection": LONGMEMEVAL,
            "format_options": "granularity=turn",
            "retrievers": "bm25,dense,hybrid",
            "metrics": LONGMEMEVAL_MEASURES,
        },
        "collection-longmemeval",
        (
            "--collection",
            f"{{root}}/{LONGMEMEVAL}",
            "--granularity",
            "turn",
            "--retrievers",
            "bm25,dense,hybrid",
            "--metrics",
            LONGMEMEVAL_MEASURES,
        ),
    ),
    Report(
        "collection-beam",
        "collection.ipynb",
        {"collection": BEAM, "retrievers": "bm25,dense,hybrid", "metrics": BEAM_MEASURES},
        "collection-beam",
        ("--collection", f"{{root}}/{BEAM}", "--retrievers", "bm25,dense,hybrid", "--metrics", BEAM_MEASURES),
    ),
    Report(
        "collection-systems",
        "collection.ipynb",
        {"retrievers": "bm25,hybrid", "runs": _SYSTEM_RUNS, "memories": _SYSTEM_MEMORIES, "relevance": "provenance"},
        "collection-systems",
        (
            "--collection",
            f"{{root}}/{SAMPLE}",
            "--retrievers",
            "bm25,hybrid",
            *(arg for name, stem in SYSTEMS for arg in _recorded_flags(name, stem)),
            "--relevance",
            "provenance",
        ),
    ),
    Report(
        "collection-patched",
        "collection.ipynb",
        {"retrievers": PATCHED_RETRIEVERS, "qrels_patch": QRELS_PATCH, "claims": CLAIMS},
        "collection-patched",
        (
            "--collection",
            f"{{root}}/{SAMPLE}",
            "--retrievers",
            PATCHED_RETRIEVERS,
            "--qrels-patch",
            f"{{root}}/{QRELS_PATCH}",
            "--claims",
            f"{{root}}/{CLAIMS}",
        ),
    ),
    Report("sweep", "sweep.ipynb", {}),
    Report(
        "answers",
        "answers.ipynb",
        {
            "repair": True,
            "answers": ";".join(f"{name}={','.join(paths)}" for name, paths in ANSWERS),
            "retrievers": "bm25",
            "qrels_patch": ERRATA,
        },
        "answers",
        (
            "--collection",
            f"{{root}}/{SAMPLE}",
            "--repair",
            "--retrievers",
            "bm25",
            *(
                arg
                for name, paths in ANSWERS
                for arg in ("--answers", f"{name}=" + ",".join(f"{{root}}/{p}" for p in paths))
            ),
            "--baseline",
            ANSWERS[0][0],
            "--table-metrics",
            "Judge,F1,EM,BLEU-1,answer_in_context@{k},R@{k}",
            "--qrels-patch",
            f"{{root}}/{ERRATA}",
        ),
    ),
)
"""The reports ``build`` regenerates, in order."""

NOTEBOOKS = tuple(dict.fromkeys(r.notebook for r in REPORTS))
"""The source notebooks the reports come from."""


def _reports_folder(reports: Path, cwd: Path) -> Path:
    """``reports`` relative to ``cwd`` (the notebooks record their ``output_dir`` that way).

    Raises:
        ParameterError: ``reports`` is outside ``cwd``.
    """
    absolute = Path(os.path.normpath(cwd / reports))
    try:
        return absolute.relative_to(cwd)
    except ValueError:
        raise ParameterError(
            "reports",
            str(reports),
            "is outside the working folder",
            "run the build from a folder that holds it (the notebooks record it as a relative path)",
        ) from None


def _inputs(notebooks: Path, cwd: Path) -> list[Path]:
    """What the build reads: the notebooks, the shipped fixture, and every fixture file the reports name."""
    found = [notebooks / name for name in NOTEBOOKS]
    fixture = default_collection_path()
    found += sorted(p for p in fixture.rglob("*") if p.is_file())
    for folder in (_ROOT / "fixtures", cwd / "fixtures"):
        if folder.is_dir():
            found += sorted(p for p in folder.rglob("*") if p.is_file())
    return found


def _mirror(cwd: Path, staging: Path, own: set[str]) -> None:
    """Link every entry of ``cwd`` into ``staging`` except the names in ``own`` (where the reports are written)."""
    for name in sorted(os.listdir(cwd)):
        if name not in own:
            os.symlink(cwd / name, staging / name, target_is_directory=(cwd / name).is_dir())


def _chosen(only: Sequence[str] | None) -> tuple[Report, ...]:
    """The reports ``only`` names (their stems), in :data:`REPORTS`' order; all of them for ``None``.

    Raises:
        ParameterError: a name that is no report's stem (the stems are listed).
    """
    if only is None:
        return REPORTS
    stems = [r.stem for r in REPORTS]
    for name in only:
        if name not in stems:
            raise ParameterError("--only", name, "is not a report of the build", f"choose from: {', '.join(stems)}")
    return tuple(r for r in REPORTS if r.stem in only)


def build(
    *,
    seed: int = 7,
    k: int = 5,
    notebooks: Path = Path("notebooks"),
    reports: Path = Path("reports"),
    only: Sequence[str] | None = None,
) -> list[Path]:
    """Regenerate ``reports`` (see the module docstring); return the files written (and the runs folder).

    ``only`` names the reports to regenerate (their stems, ``["answers"]``); the others' files are left as
    they are.  ``None`` (the default, ``make report``): every report.

    Raises:
        ParameterError: ``seed`` or ``k`` out of range; ``reports`` outside
            the working folder; an output that is an input; ``only`` naming no report.
        InputError: a notebook is missing.
        NotebookFailed: a notebook stopped on an error (nothing is written).
        RuntimeError: a notebook's artifact differs from the CLI's (nothing is written).
    """
    seed = check_seed(seed)
    k = check_positive_int("k", k)
    chosen = _chosen(only)
    for name in NOTEBOOKS:
        if not (notebooks / name).is_file():
            raise InputError(notebooks / name, None, "not found; run from the repository root or pass --notebooks")
    cwd = Path.cwd()
    relative = _reports_folder(reports, cwd)
    plan = OutputPlan(_inputs(notebooks, cwd))
    pages = [
        (
            report,
            plan.file("--reports", reports / f"{report.stem}.ipynb"),
            plan.file("--reports", reports / f"{report.stem}.html"),
        )
        for report in chosen
    ]
    artifacts = {
        report.stem: plan.file("--reports", reports / report.artifact / ARTIFACT_NAME)
        for report in chosen
        if report.artifact is not None
    }
    own = {(relative / report.artifact / ARTIFACT_NAME).parts[0] for report in chosen if report.artifact is not None}
    own.add((relative / "runs").parts[0])
    written = [path for _, notebook_path, html_path in pages for path in (notebook_path, html_path)]
    with tempfile.TemporaryDirectory(prefix="agentmemory-build-") as tmp:
        staging = Path(tmp)
        _mirror(cwd, staging, own)
        for report, notebook_path, html_path in pages:
            parameters = {"k": k, **report.parameters}
            if report.notebook != "explore.ipynb" and report.notebook != "sweep.ipynb":
                parameters["seed"] = seed
            if report.artifact is not None:
                parameters["output_dir"] = (relative / report.artifact).as_posix()
            nb = _execute_checked(notebooks / report.notebook, parameters, staging)
            plan.put(notebook_path, notebook_text(nb))
            plan.put(html_path, render_html(nb))
        for report in chosen:
            if report.artifact is None:
                continue
            staged_reports = staging / relative
            cli = [arg.format(reports=staged_reports.as_posix(), root=_ROOT.as_posix(), k=k) for arg in report.cli]
            staged = staged_reports / report.artifact / ARTIFACT_NAME
            plan.put(artifacts[report.stem], _check_against_cli(seed, k, staged, cli))
            written.append(artifacts[report.stem])
            if "--runs-dir" in cli:
                staged_runs = Path(cli[cli.index("--runs-dir") + 1])
                runs = plan.folder("--reports", reports / staged_runs.relative_to(staged_reports))
                for run_file in sorted(staged_runs.iterdir()):
                    plan.put(plan.file("--reports", runs / run_file.name), run_file.read_bytes())
                written.append(runs)
        plan.write()
    return written


def _execute_checked(source: Path, parameters: dict[str, Any], cwd: Path) -> nbformat.NotebookNode:
    """:func:`execute`, with a notebook's error turned into :class:`NotebookFailed` (one line)."""
    import papermill

    try:
        return execute(source, parameters, cwd)
    except papermill.PapermillExecutionError as err:
        raise NotebookFailed(source, str(err.ename), str(err.evalue), err.exec_count) from None


def _check_against_cli(seed: int, k: int, artifact: Path, extra: list[str]) -> bytes:
    """Run ``agentmemory eval`` with the same parameters (and ``extra`` options) as its own process, as a
    user would; fail unless its artifact equals the notebook's byte for byte.  Returns the artifact's bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        cli_out = Path(tmp) / ARTIFACT_NAME
        command = ["eval", "--seed", str(seed), "--k", str(k), "--out", str(cli_out), *extra, "--no-progress"]
        done = subprocess.run(
            [sys.executable, "-m", "agentmemory", *command], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [""])[-1]
            raise RuntimeError(f"agentmemory eval exited with status {done.returncode}: {last}")
        data = artifact.read_bytes()
        if cli_out.read_bytes() != data:
            raise RuntimeError(
                f"{artifact.name} (written by the notebook) differs from what agentmemory eval writes "
                f"for seed {seed}, k {k}: sha256 {sha256_file(artifact)} against {sha256_file(cli_out)}"
            )
    return data


_PROG = "agentmemory.report.build"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block), raised instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def _int(name: str, text: str) -> int:
    try:
        return parse_integer(text)
    except NumberTextError as err:
        raise ParameterError(name, text, err.problem, f"{name} must be an integer ({INTEGER_FORM})") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the build from the command line; return the exit status (see the module docstring)."""
    parser = _Parser(
        prog=f"python -m {_PROG}",
        description="Regenerate reports/: executed notebooks, their HTML and the eval-results.json artifacts.",
    )
    parser.add_argument("--seed", default="7", help="seed of the evaluation (default 7)")
    parser.add_argument("--k", default="5", help="rank cutoff (default 5)")
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="folder of the source notebooks")
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="folder to regenerate")
    parser.add_argument(
        "--only", default=None, help="comma-separated reports to regenerate (e.g. answers); default every report"
    )
    try:
        args = parser.parse_args(argv)
        seed = check_seed(_int("--seed", args.seed), "--seed")
        k = check_positive_int("--k", _int("--k", args.k))
        only = None if args.only is None else [name.strip() for name in args.only.split(",")]
        written = build(seed=seed, k=k, notebooks=args.notebooks, reports=args.reports, only=only)
    except NotebookFailed as err:
        print(f"{_PROG}: error: {_one_line(str(err))}", file=sys.stderr)
        return 2 if err.bad_input else 1
    except (AgentMemoryError, _UsageError) as err:
        print(f"{_PROG}: error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except OSError as err:
        where = f"{err.filename}: " if getattr(err, "filename", None) else ""
        print(f"{_PROG}: error: {_one_line(f'{where}{err.strerror or err}')}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"{_PROG}: error: {_one_line(str(err))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    for path in written:
        if path.is_file():
            print(f"{sha256_file(path)}  {path.as_posix()}")
        else:
            print(f"{'(folder)':>64}  {path.as_posix()}/")
    return 0


def _one_line(message: str) -> str:
    return message.replace("\r", "\\r").replace("\n", "\\n")


if __name__ == "__main__":
    sys.exit(main())
