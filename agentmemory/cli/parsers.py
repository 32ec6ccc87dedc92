"""The command line's parsers, one builder per command (what each takes; :mod:`agentmemory.cli.app` assembles them).

Building them imports only what the flags need (the format declarations),
so ``agentmemory --help`` and a refused option stay fast; each command's
work lives in its own module (``evaluate_cmd``, ``retrieve_cmd``,
``score_cmd``, ``store_cmd``, ``experiment_cmd``).

The paths a command writes (``eval --out``, ``--table-out``, ``--runs-dir``,
``retrieve --out``, ``experiment --out``, ``report --out``) are read as
:class:`~agentmemory.files.output_plan.OutputPath`: fixed to the working
folder while the arguments are parsed, so a plugin that changes the working
folder later moves none of them; messages show them as typed.
"""

from __future__ import annotations

import argparse

from agentmemory.cli.args import Parser, UsageError, add_output_format
from agentmemory.cli.collection_args import add_collection_arguments
from agentmemory.files.output_plan import output_path

__all__ = [
    "add_eval_parser",
    "add_experiment_parser",
    "add_report_parser",
    "add_retrieve_parser",
    "add_score_parser",
    "add_store_parser",
]


class MemoriesAction(argparse.Action):
    """``--memories PATH`` belongs to the ``--run`` just before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        runs = getattr(namespace, "run", None) or []
        if not runs:
            raise UsageError("--memories must follow the --run NAME=PATH it belongs to (see 'agentmemory eval --help')")
        memories = dict(getattr(namespace, "memories", None) or {})
        name = runs[-1].partition("=")[0].strip()
        if name in memories:
            raise UsageError(f"--run {name} has two --memories files (see 'agentmemory eval --help')")
        memories[name] = values
        namespace.memories = memories


def add_eval_parser(sub: argparse._SubParsersAction) -> None:
    """``agentmemory eval``: retrievers and run files on a collection."""
    ev = sub.add_parser(
        "eval",
        help="evaluate retrievers and run files on a collection: comparison table, report, artifact",
        allow_abbrev=False,
    )
    add_collection_arguments(ev)
    ev.add_argument(
        "--retrievers",
        default="auto",
        help="comma-separated retriever specs: registry names (bm25, tags, dense, hybrid, recency, or a plugin's), "
        "a name with parameters (bm25[k1=0.9,b=0.4], hybrid[of=bm25+dense,method=convex]) or "
        "package.module:attribute[params]; auto (the default): bm25,tags when the collection's queries carry "
        "tags, else bm25 alone (LoCoMo, LongMemEval, BEAM), said on the card",
    )
    ev.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="another system's run file (TREC run, or JSON lines {query_id, hits: [{entry_id, score}]}), "
        "evaluated beside the retrievers under NAME; repeatable",
    )
    ev.add_argument(
        "--memories",
        action=MemoriesAction,
        metavar="PATH",
        help="the preceding --run's own memories (JSON lines: _id, text, derived_from), which its hits may name",
    )
    ev.add_argument(
        "--out",
        default=None,
        type=output_path,
        metavar="FILE",
        help="write the eval-results.json artifact here (default: write none)",
    )
    ev.add_argument(
        "--table-out",
        type=output_path,
        metavar="FILE",
        help="also write the comparison table, as CSV, Markdown, LaTeX or text by the suffix (.csv, .md, .tex, .txt)",
    )
    ev.add_argument(
        "--table-label",
        action="append",
        default=[],
        metavar="SYSTEM=LABEL",
        help="the label --table-out shows for a system (its key or label), e.g. --table-label "
        "'hybrid=Hybrid'; repeat for several (default: the labels as printed; LaTeX shortens nested ones, "
        "Dense (wordllama) to Dense, keeping labels apart)",
    )
    _add_runs_arguments(ev)
    ev.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars (default: on when stderr is a terminal); a memory system's replay where stderr is "
        "not a terminal: a plain line every 10 s",
    )
    _add_system_arguments(ev)
    _add_answers_arguments(ev)
    from agentmemory.evaluation.settings import add_setting_arguments

    add_setting_arguments(ev)  # every setting of the evaluation, from its declaration


def _add_answers_arguments(ev: argparse.ArgumentParser) -> None:
    """Imported answer files (agentmemory.answers): ``--answers [NAME=]FILE[,FILE...]`` (repeatable),
    ``--answers-format NAME=FORMAT`` and ``--answers-mapping NAME=TOML``."""
    ev.add_argument(
        "--answers",
        action="append",
        default=[],
        metavar="[NAME=]FILE[,FILE...]",
        help="another harness's per-question results (mem0's evaluation output, EverMemOS results, Zep's grades, "
        "LongMemEval hypotheses with .eval-results labels, or any JSON a mapping file describes), scored as a "
        "system: its judges' verdicts (Judge), LoCoMo's F1/EM/BLEU-1 of its answers, and its retrieved memories "
        "when the file has them; several files (or a glob) are seeds of one system; repeatable",
    )
    ev.add_argument(
        "--answers-format",
        action="append",
        default=[],
        metavar="NAME=FORMAT",
        help="read the answer files of system NAME with this format (default: detected from each file's shape)",
    )
    ev.add_argument(
        "--answers-mapping",
        action="append",
        default=[],
        metavar="NAME=TOML",
        help="read the answer files of system NAME through a mapping file (where the records are, which fields "
        "hold the question, answer, verdicts and memories): a shape no reader knows, imported with no code",
    )


def _add_runs_arguments(ev: argparse.ArgumentParser) -> None:
    """The runs ``eval`` writes: ``--runs-dir DIR`` (``--run-depth N`` is a setting)."""
    ev.add_argument(
        "--runs-dir",
        type=output_path,
        metavar="DIR",
        help="also write each system's rankings as TREC run files <system>.trec (its key made "
        "filename-safe: bm25.trec, bm25-k1=0.9-b=0.4.trec) plus qrels.txt, the judgments of the headline queries "
        "only (so agentmemory score and trec_eval average over the report's queries; qrels-all.txt holds every "
        "judged query when groups such as LoCoMo's adversarial one are left out), and a memory system's memories; "
        "each ranking as deep as its measures read on it (the top k; down to k' for sess.*, past the "
        "token budget for R@512tok, to the first relevant hit for tokens@first), so they re-score to the same values",
    )


def _add_system_arguments(ev: argparse.ArgumentParser) -> None:
    """Memory systems (agentmemory.systems): ``--system SPEC`` (repeatable) and ``--workers`` (``--attribution``,
    ``--system-timeout``, ``--lenient-system`` and ``--clock`` are settings)."""
    ev.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="SPEC",
        help="a memory system replayed over each conversation and scored through attribution: a system name "
        "with parameters (mcp[profile=server-memory], agentrecall), package.module:attribute[params] "
        "(examples.my_memory_system:System) or a retriever name as a system (bm25); repeatable",
    )
    ev.add_argument(
        "--workers",
        default="1",
        metavar="N",
        help="replay a memory system's conversations in N worker processes at once (default 1: one after the "
        "other); the results are the same byte for byte; the system must be importable by the workers",
    )


def add_retrieve_parser(sub: argparse._SubParsersAction) -> None:
    """``agentmemory retrieve``: one retriever's top k of every query, as a TREC run."""
    rt = sub.add_parser(
        "retrieve", help="retrieve the top k of every query of a collection into a TREC run file", allow_abbrev=False
    )
    add_collection_arguments(rt)
    rt.add_argument(
        "--retriever",
        default="bm25",
        help="one retriever spec: a registry name, name[params] or package.module:attribute (default bm25)",
    )
    rt.add_argument("--k", default="10", help="hits per query (default 10)")
    rt.add_argument("--out", required=True, type=output_path, metavar="FILE", help="TREC run file to write")
    rt.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: on when stderr is a terminal)",
    )


def add_score_parser(sub: argparse._SubParsersAction) -> None:
    """``agentmemory score``: TREC runs against TREC qrels."""
    sc = sub.add_parser("score", help="score TREC run files against TREC qrels, as trec_eval does", allow_abbrev=False)
    sc.add_argument("qrels", metavar="QRELS")
    sc.add_argument("run", metavar="RUN", nargs="?", help="a run file (or name runs with --run)")
    sc.add_argument(
        "--run",
        dest="runs",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a run file scored under NAME, side by side with the others; repeatable",
    )
    sc.add_argument("--k", default="5", help="cutoff of the default measures (default 5)")
    sc.add_argument("--metrics", default=None, help="comma-separated measures (default P@k,R@k,RR,RR@k,nDCG@k,AP@k)")
    sc.add_argument(
        "--per-query",
        action="store_true",
        help="also print each query's values in the table (JSON output always has them)",
    )
    sc.add_argument(
        "--complete", action="store_true", help="count qrels queries missing from the run as 0 (trec_eval -c)"
    )
    add_output_format(sc)


def add_experiment_parser(sub: argparse._SubParsersAction) -> None:
    """``agentmemory experiment``: a grid of evaluations."""
    ex = sub.add_parser(
        "experiment",
        help="run a grid of evaluations (collections x systems x k x seeds) as tasks, serially, on processes or "
        "on Dask; resumable, byte-identical results",
        allow_abbrev=False,
    )
    ex.add_argument("grid", metavar="GRID", help="the grid file (TOML; see examples/grid.toml)")
    ex.add_argument(
        "--executor", default="serial", metavar="NAME", help="serial (default), processes or dask (the dask extra)"
    )
    ex.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a running Dask scheduler (tcp://host:8786) instead of a local cluster; needs --executor dask",
    )
    ex.add_argument(
        "--workers",
        metavar="N",
        help="worker processes of --executor processes or a local Dask cluster (default: CPUs)",
    )
    ex.add_argument(
        "--connect-timeout",
        default="10",
        metavar="SECONDS",
        help="how long to wait for --scheduler to answer (default 10)",
    )
    ex.add_argument(
        "--out", type=output_path, metavar="DIR", help="the output folder (default experiments/<grid name>)"
    )
    ex.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="reuse the finished tasks in DIR/tasks and compute only the others (default: on)",
    )
    ex.add_argument(
        "--reports",
        action="store_true",
        help="also render the shipped collection.ipynb for each collection with papermill, as tasks on the "
        "executor (the report extra)",
    )
    ex.add_argument("--parquet", action="store_true", help="also write DIR/per_query.parquet (the report extra)")
    ex.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar: tasks done out of all, failures (default: on when stderr is a terminal)",
    )


def add_store_parser(sub: argparse._SubParsersAction) -> None:
    """``agentmemory store import|export|export-run|export-queries|stats``."""
    st = sub.add_parser(
        "store",
        help="a persistent store: import or export a collection, export its searches as a run, stats",
        allow_abbrev=False,
    )
    commands = st.add_subparsers(dest="store_command", required=True, parser_class=Parser, metavar="COMMAND")
    im = commands.add_parser(
        "import", help="put a collection's entries, queries and judgments into a store", allow_abbrev=False
    )
    im.add_argument("store", metavar="STORE", help="the store file (created when missing)")
    im.add_argument(
        "collection", metavar="COLLECTION", help="a collection folder or file, in any registered format (--format)"
    )
    add_collection_arguments(im, collection_flag=False)
    im.add_argument(
        "--timeout", default="5", metavar="SECONDS", help="how long to wait for another writer of the store (default 5)"
    )
    ex = commands.add_parser(
        "export", help="write a store as a collection folder (corpus, queries, qrels)", allow_abbrev=False
    )
    ex.add_argument("store", metavar="STORE")
    ex.add_argument("folder", metavar="COLLECTION_DIR", help="the folder to write (created when missing)")
    for name, what in (
        ("export-run", "write one retriever's recorded searches as a TREC run file"),
        ("export-queries", "write the recorded searches' queries as queries.jsonl"),
    ):
        ep = commands.add_parser(name, help=what, allow_abbrev=False)
        ep.add_argument("store", metavar="STORE")
        ep.add_argument(
            "--retriever",
            required=name == "export-run",
            metavar="LABEL",
            help="the retriever whose searches to write, by key or label (bm25, 'BM25')"
            + ("" if name == "export-run" else " (default: every search)"),
        )
        ep.add_argument("--out", required=True, metavar="FILE", help="the file to write")
        ep.add_argument("--since", metavar="ISO", help="only searches at or after this time (2026-03-01T09:00:00Z)")
        ep.add_argument("--until", metavar="ISO", help="only searches before this time")
    sp = commands.add_parser("stats", help="what a store holds: entries, scopes, events, size", allow_abbrev=False)
    sp.add_argument("store", metavar="STORE")
    add_output_format(sp)


def add_report_parser(sub: argparse._SubParsersAction) -> None:
    """``agentmemory report``: a notebook run with papermill and rendered to HTML, as ``make report`` does."""
    rp = sub.add_parser(
        "report",
        help="run a report notebook (a shipped one by name, or a path) with your parameters and render it to HTML",
        allow_abbrev=False,
    )
    rp.add_argument(
        "notebook",
        metavar="NOTEBOOK",
        help="a shipped notebook's name (eval, explore, collection, sweep) or the path of an .ipynb file",
    )
    rp.add_argument(
        "--out",
        type=output_path,
        metavar="DIR",
        help="the folder to write NAME.ipynb and NAME.html into (and the notebook's eval-results.json, unless "
        "-p output_dir says otherwise); created when missing",
    )
    rp.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="a notebook parameter, read with the type the notebook declares; repeatable",
    )
    rp.add_argument(
        "--help-notebook",
        action="store_true",
        help="list the notebook's parameters (type, default, meaning) and run nothing",
    )
