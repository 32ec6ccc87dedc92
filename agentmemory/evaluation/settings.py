"""Every setting of an evaluation, declared once: what the command line, the notebooks and the grid derive.

A :class:`Setting` is one row of :data:`SETTINGS`: its name (the field of
:class:`~agentmemory.evaluation.options.EvalOptions`, or of
:class:`~agentmemory.live.config.LiveOptions` for the live readers' and
judges' settings), how a given value is read (:attr:`Setting.kind`), its
default as a notebook writes it, its ``agentmemory eval`` flag, its notebook
parameter, its grid key and its help.  From the table come:

* the ``eval`` command's flags (:func:`add_setting_arguments`) and their
  reading (:func:`options_from_arguments`);
* the notebooks' parameters (:func:`options_from_parameters`: ``eval_setup``,
  ``collection_setup``, ``answers_setup`` take them as keywords);
* the grid's keys (:func:`grid_settings`, read by ``agentmemory.experiment.grid``);
* the documentation's table of settings (``docs/cli.md``, generated).

Each surface hands the values it was given (unset ones left out) to
:func:`make_options`, which reads each by its kind, names it as that surface
does in messages (``--k``, ``k``, ``grid.toml:3: k``) and makes the one
:class:`~agentmemory.evaluation.options.EvalOptions` that travels.  A default
that depends on what is evaluated (relevance ``provenance`` when memories are
attributed; the token-budget measures with a system's own memories) is
resolved in one place, :func:`~agentmemory.evaluation.options.resolve_defaults`.

Adding a setting is one row here plus the code that uses it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SETTINGS",
    "SURFACES",
    "Setting",
    "add_setting_arguments",
    "setting",
]

SURFACES = ("flag", "parameter", "grid")
"""Where a setting is given: the command line (its flag), a notebook (its parameter), a grid file (its key)."""


@dataclass(frozen=True)
class Setting:
    """One setting of an evaluation (see the module docstring).

    Attributes:
        name: the record's field (``EvalOptions``'; ``LiveOptions``' when ``live``).
        kind: how a value is read: ``int`` (an integer, text on the command line), ``seconds`` (a number),
            ``bool``, ``text`` (``""`` is unset), ``name`` (text kept as given: ``""`` is refused by the record),
            ``measures`` (comma-separated text or a list), ``path`` (``""`` is unset), ``specs`` (repeated on
            the command line; comma-separated text, brackets kept, or a list elsewhere).
        default: the default as a notebook writes it (``""``: none, or resolved from what is evaluated).
        help: what it does, one sentence; the flag's help adds the default.
        flag: its ``agentmemory eval`` flag (default ``--`` and the parameter with ``-`` for ``_``).
        parameter: its notebook parameter (default ``name``).
        grid: its grid key, top level (default the parameter), or ``TABLE.KEY`` for a key of another table
            (``statistics.baseline``).
        metavar: the flag's value as the help shows it.
        live: a setting of the live readers and judges (:class:`~agentmemory.live.config.LiveOptions`).
        artifact: whether it can change the artifact, so that the artifact's command line carries it when it
            is not its default (``timings``: wall-clock figures never enter the artifact).
    """

    name: str
    kind: str
    default: Any
    help: str
    flag: str = ""
    parameter: str = ""
    grid: str = ""
    metavar: str | None = None
    live: bool = False
    artifact: bool = True

    def __post_init__(self) -> None:
        parameter = self.parameter or self.name
        object.__setattr__(self, "parameter", parameter)
        object.__setattr__(self, "flag", self.flag or "--" + parameter.replace("_", "-"))
        object.__setattr__(self, "grid", self.grid or parameter)

    def named(self, surface: str) -> str:
        """How ``surface`` (one of :data:`SURFACES`) names it: ``--k``, ``k``, ``seeds``."""
        return str(getattr(self, surface))


_RELEVANCE_HELP = (
    "how a hit counts: direct (trec_eval's judgments) or provenance (a derived memory counts through the judged "
    "sources its derived_from chain reaches, each source once); default provenance when a memory system's or an "
    "answer file's memories are attributed, else direct"
)

SETTINGS: tuple[Setting, ...] = (
    Setting("k", "int", 5, "the rank cutoff: the measures look at each system's top k hits (an integer >= 1)"),
    Setting(
        "seed",
        "int",
        7,
        "seeds the run's event ids and the bootstrap and permutation tests (no ranking depends on it)",
        grid="seeds",
    ),
    Setting("relevance", "text", "", _RELEVANCE_HELP, metavar="MODE"),
    Setting(
        "measures",
        "measures",
        "",
        "measures beyond P@k, R@k, RR, RR@k, nDCG@k and AP@k (and, with a system's own memories, R@512tok, "
        "R@2048tok, Success@2048tok), comma-separated: a rank cutoff (nDCG@10), a token budget (R@512tok, "
        "nDCG@2048tok, P@512tok, Success@512tok) or tokens@first",
        parameter="metrics",
        grid="measures",
        metavar="LIST",
    ),
    Setting(
        "table_metrics",
        "measures",
        "",
        "the comparison table's columns, comma-separated measures (P@5,R@5,nDCG@5), computed if they are not "
        "already; Holm's correction runs over the table's comparisons (default: every measure, RR and RR@k once); "
        "the table, its file and the artifact's versus_baseline follow it, everything else keeps every measure",
        metavar="LIST",
    ),
    Setting(
        "lenient_run",
        "bool",
        False,
        "drop run lines naming unknown queries or entries, or hits outside the query's scope, and list each "
        "(default: such a line is an error)",
    ),
    Setting(
        "as_of",
        "bool",
        False,
        "each query sees only the memories created at or before its asked_at (an agent cannot remember the "
        "future); queries without asked_at see all",
    ),
    Setting(
        "baseline",
        "text",
        "",
        "the system the comparison table compares with, its key or label (default the first)",
        grid="statistics.baseline",
        metavar="NAME",
    ),
    Setting(
        "timings",
        "bool",
        False,
        "also measure each retriever's search latency and index build, and each memory system's wall time "
        "(wall-clock figures: never in the artifact)",
        artifact=False,
    ),
    Setting(
        "attribution",
        "name",
        "auto",
        "how a system's memories map to entries: sources, exact, overlap[threshold=0.5], dense[threshold=0.8] or "
        "auto (sources, else exact, else overlap)",
        metavar="METHOD",
    ),
    Setting(
        "system_timeout",
        "seconds",
        300.0,
        "the longest one memory-system call (ingest, search) may take, in seconds; longer is an error",
        metavar="SECONDS",
    ),
    Setting(
        "lenient_system",
        "bool",
        False,
        "record a memory system's failing search as an empty ranking and list it (default: it is an error)",
    ),
    Setting(
        "tokenizer",
        "name",
        "llama2",  # agentmemory.metrics.token_counters.DEFAULT_TOKEN_COUNTER (a test holds them equal)
        "the token counter of the budget measures and tokens@first, a name of "
        "agentmemory.metrics.token_counters.TOKEN_COUNTERS (llama2: the Llama-2 BPE wordllama ships, counted "
        "without <s>)",
        metavar="NAME",
    ),
    Setting(
        "qrels_patch",
        "path",
        "",
        "corrections to the collection's judgments, JSON lines {query_id, entry_id, grade (an integer, or "
        '"remove"), reason}: every number is computed under the patched judgments, and the headline table under '
        "the original ones is shown beside",
        metavar="FILE",
    ),
    Setting(
        "claims",
        "path",
        "",
        "published numbers to set beside ours, TOML [[claim]] tables (system, collection, measure, k or budget, "
        "granularity, value, source or citation): every claim is a published row of the comparison table (its "
        "figure, not re-measured; its differences in a note), and each claim about an evaluated system is shown "
        "with our value under its definition",
        metavar="FILE",
    ),
    Setting(
        "run_depth",
        "int",
        "",
        "how deep each ranking of the written runs goes (at least k and every rank cutoff of the measures); "
        "default: each ranking as deep as its measures read on it",
        metavar="N",
        artifact=False,  # the runs --runs-dir writes, never the artifact
    ),
    Setting(
        "clock",
        "name",
        "real",
        "the clock a memory system sees: real, or conversation (now is the newest turn's time during ingest and "
        "the question's date during search, for systems ranking by recency or decay)",
        metavar="CLOCK",
    ),
    Setting(
        "readers",
        "specs",
        "",
        "readers answering every question from each ranked system's top k through an OpenAI-compatible "
        "endpoint: openai[base_url=http://localhost:8000/v1,model=NAME] (the key from the environment variable "
        "api_key_env names, default OPENAI_API_KEY); each system and reader is scored as the answer system "
        "SYSTEM+NAME",
        flag="--reader",
        metavar="SPEC",
        live=True,
    ),
    Setting(
        "judges",
        "specs",
        "",
        "judges grading each answer against the gold answer, e.g. openai[model=gpt-4o-mini]; Judge is the first "
        "judge's verdict, every judge's is kept and their agreement shown per category; without --reader it grades "
        "the --answers files' answers, beside their own judges",
        flag="--judge",
        metavar="SPEC",
        live=True,
    ),
    Setting(
        "reader_prompt",
        "path",
        "",
        "the reader's prompt template (placeholders {question}, {memories}, {question_date}), or FILE.py:NAME for "
        "a string constant in a Python file (a benchmark's official prompt); default: the shipped one",
        metavar="FILE",
        live=True,
    ),
    Setting(
        "judge_prompt",
        "path",
        "",
        "the judge's prompt template ({question}, {gold_answer}, {generated_answer}, {question_date}), or "
        "FILE.py:NAME (mem0's llm_judge.py:ACCURACY_PROMPT); default: the shipped one",
        metavar="FILE",
        live=True,
    ),
    Setting("judge_majority", "bool", False, "Judge is the majority of the judges' verdicts (0.5 on a tie)", live=True),
    Setting(
        "offline",
        "bool",
        False,
        "make no reader or judge call: every one must be in the cache (a miss is refused, naming it)",
        live=True,
        artifact=False,  # how calls are made, not what they answer: the cache's answers either way
    ),
    Setting(
        "lenient",
        "bool",
        False,
        "leave a question whose calls finally failed out of the answer measures, counted in the card (default: "
        "such a question fails the run, after every other call is cached)",
        parameter="lenient_answers",
        live=True,
    ),
    Setting(
        "prices",
        "path",
        "",
        "a price table (TOML: [MODEL] input = ..., output = ..., per million tokens) turning the token counts "
        "into cost",
        metavar="FILE",
        live=True,
    ),
)
"""Every setting of an evaluation, once (see the module docstring)."""

_BY_NAME = {s.name: s for s in SETTINGS}


def setting(name: str) -> Setting:
    """The declared setting of field ``name``."""
    return _BY_NAME[name]


def add_setting_arguments(parser: argparse.ArgumentParser) -> None:
    """Every declared setting as a flag of ``parser`` (``agentmemory eval``), its value under the setting's name;
    a flag not given reads as ``None`` (unset: the record's default, or one resolved from what is evaluated)."""
    for s in SETTINGS:
        if s.kind == "bool":
            parser.add_argument(s.flag, dest=s.name, action="store_true", default=None, help=s.help)
        elif s.kind == "specs":
            parser.add_argument(s.flag, dest=s.name, action="append", metavar=s.metavar, help=s.help + "; repeatable")
        else:
            shown = f"{s.default:g}" if isinstance(s.default, float) else s.default
            default = f" (default {shown})" if shown != "" else ""
            parser.add_argument(s.flag, dest=s.name, metavar=s.metavar, help=s.help + default)
