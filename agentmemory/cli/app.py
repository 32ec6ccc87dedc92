"""The ``agentmemory`` command line.

Subcommands::

    agentmemory eval     [--collection PATH] [--format NAME] [--split SPLIT] [--repair] [--include-captions]
                         [--granularity session|turn] [--all-turns | --user-turns-only] [--updates fresh|both]
                         [--format-option KEY=VALUE ...] [--seed INT] [--k INT] [--retrievers SPECS]
                         [--run NAME=PATH [--memories PATH] ...] [--lenient-run] [--relevance direct|provenance]
                         [--as-of] [--baseline NAME] [--metrics LIST] [--tokenizer NAME] [--qrels-patch FILE]
                         [--claims FILE] [--out FILE] [--table-out FILE] [--table-label SYSTEM=LABEL ...]
                         [--table-metrics LIST] [--runs-dir DIR] [--run-depth N] [--timings] [--progress | --no-progress] [--system SPEC ...]
                         [--attribution METHOD] [--system-timeout SECONDS] [--lenient-system]
                         [--workers N] [--clock real|conversation]
                         [--answers [NAME=]FILE[,FILE...] ...] [--answers-format NAME=FORMAT ...]
                         [--answers-mapping NAME=TOML ...] [--reader SPEC ...] [--judge SPEC ...]
                         [--reader-prompt FILE] [--judge-prompt FILE] [--judge-majority] [--offline]
                         [--lenient-answers] [--prices FILE]
    agentmemory retrieve --out FILE [--collection PATH] [--format NAME] [--split SPLIT] [--repair]
                         [--include-captions] [--granularity session|turn] [--all-turns | --user-turns-only]
                         [--updates fresh|both] [--format-option KEY=VALUE ...] [--retriever SPEC] [--k INT] [--progress | --no-progress]
    agentmemory score QRELS [RUN] [--run NAME=PATH ...] [--k INT] [--metrics LIST] [--per-query]
                      [--complete] [--output-format table|json]
    agentmemory store import STORE COLLECTION [--format NAME] [--split SPLIT] [--repair] [--include-captions]
                         [--granularity session|turn] [--all-turns | --user-turns-only] [--updates fresh|both]
                         [--format-option KEY=VALUE ...] [--timeout SECONDS]
    agentmemory store export STORE COLLECTION_DIR
    agentmemory store export-run STORE --retriever LABEL --out FILE [--since ISO] [--until ISO]
    agentmemory store export-queries STORE --out FILE [--retriever LABEL] [--since ISO] [--until ISO]
    agentmemory store stats STORE [--output-format table|json]
    agentmemory experiment GRID.toml [--executor serial|processes|dask] [--scheduler ADDRESS] [--workers N]
                      [--connect-timeout SECONDS] [--out DIR] [--resume | --no-resume] [--reports]
                      [--parquet] [--progress | --no-progress]
    agentmemory report NOTEBOOK [--out DIR] [-p|--parameter NAME VALUE ...] [--help-notebook]
    agentmemory --version

The modules: this one assembles the parser from one builder per command
(:mod:`~agentmemory.cli.parsers`) and runs the command's module
(:mod:`~agentmemory.cli.evaluate_cmd`, :mod:`~agentmemory.cli.retrieve_cmd`,
:mod:`~agentmemory.cli.score_cmd`, :mod:`~agentmemory.cli.store_cmd`,
:mod:`~agentmemory.cli.experiment_cmd`); :mod:`~agentmemory.cli.args` holds
what they share and :mod:`~agentmemory.cli.collection_args` the collection options.

The collection options come from the format declarations
(:data:`agentmemory.datasets.FORMATS`): ``--split`` (beir), ``--repair``
(locomo, longmemeval and beam), ``--include-captions`` (locomo), ``--granularity``
(locomo and longmemeval), ``--all-turns`` and ``--user-turns-only`` (longmemeval and beam) and
``--updates`` (beam) are generated from the
built-in formats' options, and ``--format-option KEY=VALUE`` (repeatable) passes an option of
any format, a plugin's included, read with the type the format declares.

``agentmemory store`` works on a persistent store file
(:mod:`agentmemory.store.sqlite`): ``import`` puts a collection of any format
(the same ``--format`` and format options as ``eval``) into it (created when
missing) in one transaction, ``export`` writes it back as a BEIR-style folder, ``export-run`` writes the searches it recorded with one retriever
(key or label) as a TREC run and ``export-queries`` their queries as
``queries.jsonl`` (``--since`` inclusive, ``--until`` exclusive; ISO 8601
with a timezone, or a date), and ``stats`` counts what it holds.  Only
``import`` opens the store for writing; the others read it, even while an
agent writes to it.

Any input error (a bad parameter, a malformed or missing file, a store that
is locked, full or not a store, an output path that is an input) prints one
line ``agentmemory: error: ...`` on stderr and exits with status 2, with no
traceback and every output file as it was: the commands that write declare
their outputs in an :class:`agentmemory.files.output_plan.OutputPlan` before reading
anything, render every output's text (which checks it) after computing, and
only then write them all, each atomically.  Integers on the command line are
read by :func:`agentmemory.files.numbers.parse_integer` (``1_0``, ``" 5"`` and
``"１"`` are not integers).  ``--format`` is always a collection format; the
printed form of ``score`` and ``store stats`` is ``--output-format`` (their
old ``--format`` is refused with a line naming it).  ``agentmemory experiment`` exits
with status 1 when a task failed (each is listed with its spec; the others
complete and are written).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import NoReturn

from agentmemory._version import __version__
from agentmemory.cli.args import PROG, Parser, UsageError
from agentmemory.errors import AgentMemoryError, traceback_wanted

__all__ = ["build_parser", "entry_point", "main"]

_COMMANDS = {
    "eval": "evaluate_cmd",
    "retrieve": "retrieve_cmd",
    "score": "score_cmd",
    "store": "store_cmd",
    "experiment": "experiment_cmd",
    "report": "report_cmd",
}
"""Each subcommand's module in this package (its ``run(args)`` does the work)."""

_BUILDERS = {
    "eval": "add_eval_parser",
    "retrieve": "add_retrieve_parser",
    "score": "add_score_parser",
    "experiment": "add_experiment_parser",
    "store": "add_store_parser",
    "report": "add_report_parser",
}
"""Each subcommand's parser builder in :mod:`agentmemory.cli.parsers`, in the order ``--help`` lists them."""


def build_parser(command: str | None = None) -> Parser:
    """The whole command line: one builder per subcommand (:mod:`agentmemory.cli.parsers`).

    A new parser on each call.  The documentation's command-line reference is generated from it
    (``docs/hooks.py``), so the reference lists exactly what the command accepts.  With ``command``
    (a subcommand's name), only that subcommand's parser is built under the top-level one: what
    :func:`main` uses once it knows the command, since that parser alone reads the rest of the line.
    """
    parser = Parser(
        prog=PROG, description="Evaluate agent-memory retrievers with exact IR metrics.", allow_abbrev=False
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="show the full traceback behind an error (or AGENTMEMORY_TRACEBACK=1)"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    from agentmemory.cli import parsers  # the collection and format modules, loaded inside main's paused collector

    for name, builder in _BUILDERS.items():
        if command is None or name == command:
            getattr(parsers, builder)(sub)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs, when only ``--traceback`` comes before its name; else None.

    The top-level parser takes no option with a value, so the first other
    word is the subcommand argparse will choose; anything else first
    (``--help``, ``--version``, a refused option, an unknown command) gets
    the whole parser, whose help and errors list every subcommand.
    """
    for text in argv:
        if text != "--traceback":
            return text if text in _BUILDERS else None
    return None


_build_parser = build_parser
"""The same function under its former private name (tests call it so)."""


def _command_module(args: object) -> ModuleType:
    """The chosen command's module (its ``run(args)`` does the work), imported only now.

    Deferred on purpose: the commands' modules import the evaluation, the
    statistics, the store and the experiment runner (about 0.5 s together on
    the development machine, against 0.14 s for this module and the parsers),
    which ``--help``, ``--version`` and a refused option never need, and each
    command needs only its own part of.
    """
    _short_blas_spin()
    return importlib.import_module(f"agentmemory.cli.{_COMMANDS[args.command]}")  # type: ignore[attr-defined]


BLAS_SPIN = ("OPENBLAS_THREAD_TIMEOUT", "22")
"""How long OpenBLAS's idle worker threads wait for work before they sleep: 2**22 clock ticks (~2 ms)."""


def _short_blas_spin() -> None:
    """Let OpenBLAS's idle worker threads sleep after ~2 ms instead of ~0.1 s, unless the user set it.

    NumPy's wheels load OpenBLAS on ``import numpy``, which starts a worker
    thread per core that spins 2**28 clock ticks (~0.1 s) waiting for work
    before it sleeps: on the 2-core development machine a whole core taken
    from the command as it starts (``import numpy`` 0.11 -> 0.07 s of CPU;
    a 10,000-entry retrieve about a tenth less CPU).  Only the idle wait is
    shorter: the threads, their number and every result are the same.  Set
    before the command's imports (OpenBLAS reads it once, as it loads);
    processes this one starts inherit it.
    """
    name, ticks = BLAS_SPIN
    os.environ.setdefault(name, ticks)


@contextmanager
def _collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """Python's cyclic garbage collector off inside, then as it was; with ``freeze``, what exists is frozen first.

    Start-up (the parsers' and the command's imports: NumPy's and ours, the
    parser) makes a few hundred thousand objects and almost no cycles to
    free.  Walked as they are made, they cost some 60 collections; merely
    paused, one large one when the collector is back.  The imports live as
    long as the process, so ``freeze`` (:func:`gc.freeze`, as loading a
    collection does after it) moves them out of every later collection's way
    (about 3% of a 10,000-entry retrieve).  Only a process of its own
    freezes (:func:`entry_point`): in a caller's process, ``main`` would
    freeze the caller's objects too, and its parser's.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if was_enabled:
            gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    return _main(argv, own_process=False)


def _main(argv: Sequence[str] | None, *, own_process: bool) -> int:
    args = None
    try:
        with _collector_paused(freeze=own_process):
            parser = build_parser(_command_named(sys.argv[1:] if argv is None else argv))
            args = parser.parse_args(argv)
            module = _command_module(args)
        return int(module.run(args))
    except BrokenPipeError:  # `agentmemory ... | head`: the reader left; stop quietly, as Unix tools do
        _silence_stdout()
        return 141  # 128 + SIGPIPE, the status a shell shows for a tool stopped by a closed pipe
    except (AgentMemoryError, UsageError) as err:
        if getattr(args, "traceback", False) or traceback_wanted():
            import traceback  # only on an error that asks for it

            traceback.print_exception(err, file=sys.stderr)
        print(f"{PROG}: error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except OSError as err:  # an input that cannot be read, ...
        where = f"{err.filename}: " if getattr(err, "filename", None) else ""
        print(f"{PROG}: error: {_one_line(f'{where}{err.strerror or err}')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no file descriptor (captured): nothing to redirect
        pass


def _one_line(message: str) -> str:
    """``message`` on one line: a line break inside it (in a path, say) is shown as ``\\n``."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


def entry_point() -> NoReturn:
    """Console-script entry point: the working folder is importable first, as under ``python -m agentmemory``.

    ``python -m`` puts the working folder at the head of ``sys.path``; a
    console script puts its own folder there instead, so a ``module:attr``
    spec naming a module beside the user (``my_retriever:Mine``) would not
    import.  Adding the folder makes both launchers resolve the same specs.
    The process is the command's own, so the command's imports are frozen
    out of the garbage collector's way (:func:`_collector_paused`).
    """
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    sys.exit(_main(None, own_process=True))
