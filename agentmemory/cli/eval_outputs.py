"""What ``agentmemory eval`` writes: the artifact, the comparison table's file and the TREC runs, declared before
anything is read (:class:`~agentmemory.files.output_plan.OutputPlan`) and rendered after computing."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from agentmemory.analysis.artifact import dumps_artifact
from agentmemory.analysis.comparison_table import ComparisonTable, table_format
from agentmemory.analysis.latex_table import latex_table
from agentmemory.analysis.statistics import Statistics
from agentmemory.collection import Collection
from agentmemory.errors import ParameterError, quote
from agentmemory.evaluation.run_export import ExportedRuns, cut_text, depth_text, exported_runs, qrels_text
from agentmemory.evaluation.runner import Evaluation
from agentmemory.files.output_plan import OutputPath, OutputPlan
from agentmemory.files.trec import format_qrels, format_run

__all__ = ["Outputs", "run_file_names"]


def run_file_names(keys: Sequence[str]) -> dict[str, str]:
    """Each retriever key's TREC run file name: the key made filename-safe, plus ``.trec``.

    Characters other than letters, digits and ``. _ + = -`` become ``-`` (runs
    collapsed, none at either end): ``bm25`` -> ``bm25.trec``,
    ``bm25[k1=0.9,b=0.4]`` -> ``bm25-k1=0.9-b=0.4.trec``.

    Raises:
        ParameterError: two keys give the same file name (one run would overwrite the other).
    """
    names: dict[str, str] = {}
    taken: dict[str, str] = {}
    for key in keys:
        stem = re.sub(r"[^A-Za-z0-9._+=-]+", "-", key).strip("-.") or "retriever"
        name = f"{stem}.trec"
        if name in taken:
            raise ParameterError(
                "--runs-dir",
                name,
                f"would hold the runs of both {quote(taken[name])} and {quote(key)}",
                "give the retrievers keys that differ in letters or digits",
            )
        names[key] = taken[name] = name
    return names


@dataclass
class Outputs:
    """The files ``--out``, ``--table-out`` and ``--runs-dir`` name, declared before anything is read.

    The paths are the absolute ones the options were fixed to when parsed
    (:class:`~agentmemory.files.output_plan.OutputPath`); ``shown`` holds them as typed, for the last line.
    """

    plan: OutputPlan
    out: Path | None = None
    table_out: Path | None = None
    table_kind: str | None = None
    table_labels: dict[str, str] = field(default_factory=dict)  # --table-label SYSTEM=LABEL
    runs_dir: Path | None = None
    run_paths: dict[str, Path] = field(default_factory=dict)
    memories_paths: dict[str, Path] = field(default_factory=dict)
    qrels_path: Path | None = None
    all_qrels_path: Path | None = None
    runs_shown: str = "DIR"  # --runs-dir as typed, in the lines saying how to re-score
    runs: ExportedRuns | None = None
    shown: list[str] = field(default_factory=list)

    @classmethod
    def declare(cls, args: argparse.Namespace, keys: list[str], system_keys: Sequence[str] = ()) -> Outputs:
        plan = OutputPlan()
        outputs = cls(plan)
        if args.out:
            outputs.out = plan.file("--out", args.out)
            outputs.shown.append(str(PurePath(str(args.out))))
        if args.table_out:
            outputs.table_out = plan.file("--table-out", args.table_out, example="comparison.md")
            outputs.table_kind = table_format(str(args.table_out))
            outputs.table_labels = _table_labels(getattr(args, "table_label", None) or [])
            outputs.shown.append(str(PurePath(str(args.table_out))))
        if args.runs_dir:
            runs = args.runs_dir if isinstance(args.runs_dir, OutputPath) else OutputPath(args.runs_dir)
            outputs.runs_dir = plan.folder("--runs-dir", runs)
            names = run_file_names(keys)
            outputs.run_paths = {
                key: plan.file("--runs-dir", runs / name, example="runs/") for key, name in names.items()
            }
            outputs.memories_paths = {  # each memory system's memories, as a --memories file for its run
                key: plan.file("--runs-dir", runs / (names[key][: -len(".trec")] + ".memories.jsonl"), example="runs/")
                for key in system_keys
            }
            outputs.qrels_path = plan.file("--runs-dir", runs / "qrels.txt", example="runs/")  # the headline's
            outputs.all_qrels_path = plan.file("--runs-dir", runs / "qrels-all.txt", example="runs/")  # if any left out
            outputs.shown.append(f"TREC runs in {runs}")
            outputs.runs_shown = str(PurePath(str(runs)))
        return outputs

    def put(
        self, evaluation: Evaluation, statistics: Statistics, table: ComparisonTable, collection: Collection
    ) -> None:
        """Render every output (rendering checks ids, scores and text); :meth:`OutputPlan.write` writes them all."""
        if self.out is not None:
            self.plan.put(self.out, dumps_artifact(evaluation, statistics))
        if self.table_out is not None and self.table_kind == "latex":  # \label{tab:<collection>-<measure>}
            self.plan.put(self.table_out, latex_table(table, labels=self.table_labels))
        elif self.table_out is not None and self.table_kind is not None:
            shown = table.relabel(self.table_labels, option="--table-label")
            self.plan.put(self.table_out, shown.render(self.table_kind))
        if self.qrels_path is not None:  # each ranking as deep as its measures read (evaluation.run_export)
            self.runs = exported_runs(evaluation)
            for name, rankings in self.runs.rankings.items():
                self.plan.put(self.run_paths[name], format_run(rankings, tag=name))
            self.plan.put(self.qrels_path, format_qrels(self.runs.qrels))  # the headline queries' (run_export)
            if self.runs.all_qrels is not None and self.all_qrels_path is not None:
                self.plan.put(self.all_qrels_path, format_qrels(self.runs.all_qrels))
            for key, text in self.runs.memories.items():
                self.plan.put(self.memories_paths[key], text)

    def written(self, k: int) -> str:
        """``Wrote a, b and TREC runs in DIR`` (as typed), or that nothing was written; then how deep the runs go
        when below the top ``k``, and the rankings ``--run-depth`` cut above what a measure read."""
        done = self.shown
        listed = ", ".join(done[:-1]) + " and " + done[-1] if len(done) > 1 else "".join(done)
        lines = [f"Wrote {listed}" if done else "No file written (--out FILE writes the artifact)."]
        if self.runs is not None:
            found = (depth_text(self.runs, k), cut_text(self.runs), qrels_text(self.runs, self.runs_shown))
            lines += [line for line in found if line is not None]
        return "\n".join(lines)


def _table_labels(texts: Sequence[str]) -> dict[str, str]:
    """``--table-label SYSTEM=LABEL`` options as a mapping (the systems are checked once they are known)."""
    out: dict[str, str] = {}
    for text in texts:
        name, sep, label = text.partition("=")
        if not sep or not name.strip() or not label.strip():
            raise ParameterError("--table-label", text, "is not SYSTEM=LABEL", "give e.g. --table-label hybrid=Hybrid")
        out[name.strip()] = label.strip()
    return out


def check_table_labels(labels: dict[str, str], systems: Sequence[tuple[str, str]]) -> None:
    """Every ``--table-label`` names a system by its key or label, before anything is read."""
    known = [name for pair in systems for name in pair]
    for name in labels:
        if name not in known:
            raise ParameterError(
                "--table-label", name, "names no evaluated system", "choose a key or label from: " + ", ".join(known)
            )
