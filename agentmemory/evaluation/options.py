"""An evaluation's options: one frozen record, checked once, where it is made.

:class:`EvalOptions` holds everything that says *how* an evaluation runs, as
opposed to *what* it runs on (the collection, the retrievers, the run files,
a store to reuse): the cutoff ``k``, the ``seed`` of its event ids and
statistics, the extra ``measures``, the ``relevance`` mode, whether ties are
analysed, ``lenient_run``, ``as_of``, ``timings``, ``progress``, ``clamp``
the comparison ``baseline``, the ``claims`` set beside the measurements and
the ``run_depth`` of the runs ``--runs-dir`` writes.  The command line, the notebooks' parameters,
the experiment grid and Python callers all make one and hand it on; nothing
downstream checks a value again.

The choices an option takes are declared here once (:data:`RELEVANCE_MODES`);
every message that lists them reads them from here.

::

    from agentmemory import EvalOptions, evaluate

    options = EvalOptions(k=10, measures="nDCG@10,Success@3", relevance="provenance")
    evaluation = evaluate(collection, "bm25", options=options)
    evaluate(collection, "bm25", k=10)  # the same as options=EvalOptions(k=10)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from enum import Enum
from os import PathLike
from typing import Any

from agentmemory.collection import Collection
from agentmemory.errors import NumberTextError, ParameterError, UnknownNameError, check_positive_int, check_seed
from agentmemory.evaluation.claims import Claims, read_claims
from agentmemory.evaluation.settings import SETTINGS, setting
from agentmemory.files.numbers import INTEGER_FORM, parse_integer, parse_number
from agentmemory.live.config import LiveOptions
from agentmemory.metrics import Measure, parse_measures
from agentmemory.metrics.scoring import default_measures
from agentmemory.metrics.token_counters import DEFAULT_TOKEN_COUNTER, check_token_counter
from agentmemory.retrievers.spec import split_specs
from agentmemory.systems.attribution import parse_attribution
from agentmemory.systems.replay import CLOCKS

__all__ = [
    "AUTO_RETRIEVERS",
    "BUDGET_DEFAULTS",
    "RELEVANCE_MODES",
    "EvalOptions",
    "Relevance",
    "default_measures_for",
    "default_retrievers",
    "options_from_settings",
    "resolve_relevance",
]


class Relevance(str, Enum):
    """How a hit counts, a value with its modes: ``DIRECT`` (trec_eval's: a hit counts when it is judged) or
    ``PROVENANCE`` (a derived memory counts through the judged sources its ``derived_from`` chain reaches, each
    once: :mod:`agentmemory.metrics.provenance`).  Its text is the mode's name (``"provenance"``), as the
    command line, the notebooks, the grid and the artifact write it; lower layers receive what a mode needs
    (an attribution's ``ranks_entries``), never its name."""

    DIRECT = "direct"
    PROVENANCE = "provenance"

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]  # the mode's name in f-strings, on every Python


RELEVANCE_MODES = tuple(mode.value for mode in Relevance)
"""What ``relevance`` takes, as text: trec_eval's judgments, or judgments through provenance (:class:`Relevance`)."""

BUDGET_DEFAULTS = ("R@512tok", "R@2048tok", "Success@2048tok")
"""The token-budget measures (:mod:`agentmemory.metrics.budget`) every evaluation of a system returning its own
memories computes by default, after the cut-off defaults: a system of session notes and one of one-line facts cost
an agent different context for the same ``R@k``, and these compare them at equal cost."""


def resolve_relevance(relevance: str | None, *, attributed: bool) -> Relevance:
    """The relevance mode, resolved once: as given, else ``"provenance"`` when memories are attributed (a memory
    system's, or an answer file's retrieved memories: they count through the entries they are attributed to),
    else ``"direct"``."""
    if relevance is not None:
        return Relevance(relevance)
    return Relevance.PROVENANCE if attributed else Relevance.DIRECT


AUTO_RETRIEVERS = "auto"
"""The retrievers' value meaning "the default for this collection" (:func:`default_retrievers`)."""


def default_retrievers(collection: Collection) -> tuple[str, str]:
    """The retrievers an evaluation compares when none are named, and why, by the collection's kind: ``bm25``
    and the tag scorer when its queries carry tags (a BEIR folder whose queries name them, the shipped
    fixture), else ``bm25`` alone (LoCoMo, LongMemEval, BEAM: their queries carry none, and the tag scorer,
    left to guess a query's tags from its words, ranks by ties).  The reason is what the card says:
    ``"retrievers bm25 (the queries carry no tags)"``."""
    if any(query.tags for query in collection.queries):
        return "bm25,tags", "retrievers bm25,tags (the queries carry tags)"
    return "bm25", "retrievers bm25 (the queries carry no tags, so the tag scorer is left out)"


def default_measures_for(k: int, *, memories: bool) -> tuple[Measure, ...]:
    """What an evaluation at ``k`` computes unless told otherwise: ``(P@k, R@k, RR, RR@k, nDCG@k, AP@k)``; when a
    system returns its own memories (``memories``: a memory system, or a run file with its memories),
    :data:`BUDGET_DEFAULTS` first, so the comparison table leads with the systems at equal context cost (five
    session notes and five turn notes are not the same amount of text), then the cut-off measures."""
    chosen = default_measures(k)
    return parse_measures(",".join(BUDGET_DEFAULTS)) + chosen if memories else chosen


def _measures(value: object, name: str) -> tuple[Measure, ...]:
    """``measures`` as given (text ``"P@5,RR"``, or a sequence of texts and :class:`Measure`) -> measures.

    A sequence's items are read one by one (an item that repeats another is
    kept here and dropped by :attr:`EvalOptions.all_measures`).
    """
    if value is None:
        return ()
    if isinstance(value, str):
        return parse_measures(value, name=name)
    if not isinstance(value, Sequence):
        raise ParameterError(name, value, "is not measures", 'pass text such as "nDCG@10,Success@3" or a list')
    return tuple(m if isinstance(m, Measure) else parse_measures(m)[0] for m in value)


def _claims(value: object, name: str) -> Claims | None:
    """``claims`` as given: a record, a path (read now), or ``None``."""
    if value is None or isinstance(value, Claims):
        return value
    if isinstance(value, (str, PathLike)) and str(value):
        return read_claims(value)
    raise ParameterError(name, value, "is not a claims file", "pass the path of a claims TOML file, or None")


def _run_depth(value: object, k: int, k_name: str, measures: Sequence[Measure], name: str) -> int | None:
    """``run_depth`` checked: ``None``, or an int at least as deep as the top ``k`` and every rank cutoff."""
    if value is None:
        return None
    depth = check_positive_int(name, value)
    need, reader = k, f"the measures at {k_name} {k} read"
    for m in measures:
        if m.rank_cutoff is not None and m.rank_cutoff > need:
            need, reader = m.rank_cutoff, f"{m} reads"
    if depth < need:
        raise ParameterError(
            name,
            value,
            f"is shallower than the top {need} that {reader}, so the runs could not reproduce it",
            f"give {need} or more, or leave it out to write each ranking as deep as its measures read",
        )
    return depth


@dataclass(frozen=True, init=False)
class EvalOptions:
    """How one evaluation runs; every value checked when the record is made (see the module docstring).

    Attributes:
        k: the rank cutoff, an int >= 1 (default 5).
        seed: seeds the event ids and the statistics, an int >= 0 (default 7).
        measures: the measures beyond the defaults (P@k, R@k, RR, RR@k,
            nDCG@k, AP@k; with a memory system also :data:`BUDGET_DEFAULTS`:
            :meth:`measures_for`), as given: text (``"nDCG@10,Success@3"``) or a
            sequence of texts and :class:`~agentmemory.metrics.Measure`;
            kept as a tuple of measures.
        relevance: one of :data:`RELEVANCE_MODES` (default ``"direct"``); ``None`` to have it resolved from what
            is evaluated (:func:`resolve_relevance`, which :func:`~agentmemory.evaluation.runner.evaluate` calls).
        ties: compute a tie report per query and measure (default True).
        lenient_run: drop and list the run lines naming unknown queries or
            entries, or hits out of scope, instead of refusing them.
        as_of: each query sees only the memories created at or before its ``asked_at``.
        timings: record each retriever's latencies and index build (never in an artifact).
        progress: show progress bars.
        clamp: a retriever that ranks fewer than ``k`` entries is searched
            as deep as it goes instead of refused (deep runs for curves).
        attribution: how a memory system's memories map to entries (:mod:`agentmemory.systems.attribution`:
            ``sources``, ``exact``, ``overlap[threshold=...]``, ``dense[threshold=...]``, ``auto``).
        system_timeout: the longest one memory-system call (ingest, search) may take, in seconds.
        lenient_system: a memory system's failing search is recorded as an empty ranking and listed.
        tokenizer: the token counter the budget measures (``R@512tok``,
            ``tokens@first``) count the hits' texts with, a name of
            :data:`~agentmemory.metrics.token_counters.TOKEN_COUNTERS`
            (default ``llama2``, the Llama-2 BPE); unused without them.
        baseline: the system the comparison table compares with (its key,
            label or a run's name); ``None`` for the first system.  Which
            systems there are is known only with them: :meth:`check_baseline`.
        run_depth: how deep each query's ranking is kept for the run files
            ``--runs-dir`` writes (:attr:`QueryResult.ranking
            <agentmemory.evaluation.runner.QueryResult>`): retrievers are
            searched and memory systems asked at least that deep, and the runs
            hold each ranking's top ``run_depth``.  ``None`` (the default):
            each ranking as deep as its measures read on it, so every run
            re-scores to the same values.  An int shallower than the top ``k``
            or a measure's rank cutoff (``R@10``) is refused; one shallower
            than what a whole-ranking measure (``sess.*``, the budget measures,
            ``tokens@first``) read on some query is allowed, and the command
            line says which values the runs then cannot reproduce.
        left_out: also score the questions the loader left out of retrieval scoring
            (:func:`~agentmemory.evaluation.runner.left_out_questions`), as an evaluation
            with answer files does: their retrieval measures have no value, their answer
            measures one.  An experiment sets it on every task of a collection with answer
            files, so each of its systems is scored on the questions ``agentmemory eval
            --answers`` scores it on.
        live: readers and judges that answer every question from each ranked system's top ``k`` and grade
            the answers (:class:`~agentmemory.live.config.LiveOptions`; :mod:`agentmemory.live`), each
            (system, reader) scored as an answer system; ``None`` (the default) for none.
        claims: published numbers to set beside ours (:mod:`agentmemory.evaluation.claims`):
            a :class:`~agentmemory.evaluation.claims.Claims`, or the path of a
            claims file (read and checked here); ``None`` for none.  The
            measures of the claims about the evaluated systems are computed
            too (after :attr:`all_measures`).
        clock: the clock a memory system sees while replayed, one of
            :data:`~agentmemory.systems.replay.CLOCKS`: ``"real"`` (the
            default) or ``"conversation"`` (the turns' and questions' times).

        table_metrics: the comparison table's columns (``None``: every measure); computed too, after
            :attr:`measures`.
        qrels_patch: the judgment patch applied to the collection by whoever loads it (the command line, the
            notebooks, a grid's tasks), as given; ``None`` for none.
        defaults_chosen: the defaults resolved from what is evaluated, one line each, as the card states them
            (:func:`default_retrievers`'s reason).

    ``names`` (a keyword, not a field) maps a field to the name messages use for it,
    e.g. ``{"k": "--k"}`` on the command line; by default the field's own name.

    Raises:
        ParameterError: a value of the wrong type or out of range.
        UnknownNameError: a relevance mode or measure name not declared.
    """

    k: int = 5
    seed: int = 7
    relevance: Relevance | None = Relevance.DIRECT
    measures: tuple[Measure, ...] = ()
    ties: bool = True
    lenient_run: bool = False
    as_of: bool = False
    timings: bool = False
    progress: bool = False
    clamp: bool = False
    baseline: str | None = None
    attribution: str = "auto"
    system_timeout: float = 300.0
    lenient_system: bool = False
    tokenizer: str = DEFAULT_TOKEN_COUNTER
    claims: Claims | None = None
    run_depth: int | None = None
    left_out: bool = False
    clock: str = "real"
    live: LiveOptions | None = None
    table_metrics: tuple[Measure, ...] | None = None
    qrels_patch: str | None = None
    defaults_chosen: tuple[str, ...] = ()

    def __init__(
        self,
        k: int = 5,
        seed: int = 7,
        relevance: str | None = "direct",
        measures: str | Sequence[Measure | str] | None = (),
        ties: bool = True,
        lenient_run: bool = False,
        as_of: bool = False,
        timings: bool = False,
        progress: bool = False,
        clamp: bool = False,
        baseline: str | None = None,
        attribution: str = "auto",
        system_timeout: float = 300.0,
        lenient_system: bool = False,
        tokenizer: str = DEFAULT_TOKEN_COUNTER,
        claims: Claims | str | PathLike[str] | None = None,
        run_depth: int | None = None,
        left_out: bool = False,
        clock: str = "real",
        live: LiveOptions | None = None,
        table_metrics: str | Sequence[Measure | str] | None = None,
        qrels_patch: str | PathLike[str] | None = None,
        defaults_chosen: Sequence[str] = (),
        *,
        names: Mapping[str, str] | None = None,
    ) -> None:
        def name(field: str) -> str:
            return field if names is None else names.get(field, field)

        check_seed(seed, name("seed"))
        check_positive_int(name("k"), k)
        if relevance is not None and relevance not in RELEVANCE_MODES:
            raise UnknownNameError(name("relevance"), relevance, RELEVANCE_MODES)
        mode = None if relevance is None else Relevance(relevance)
        chosen = _measures(measures, name("measures"))
        table = None if table_metrics is None else _measures(table_metrics, name("table_metrics"))
        chosen += tuple(m for m in table or () if m not in chosen)  # the table's are computed too
        flags = {"ties": ties, "lenient_run": lenient_run, "as_of": as_of, "timings": timings}
        flags |= {"progress": progress, "clamp": clamp, "lenient_system": lenient_system, "left_out": left_out}
        for flag, given in flags.items():
            if not isinstance(given, bool):
                raise ParameterError(name(flag), given, "is not a bool", "pass True or False")
        if baseline is not None and not isinstance(baseline, str):
            raise ParameterError(name("baseline"), baseline, "is not text", "pass a system's name, or None")
        method = parse_attribution(attribution, option=name("attribution"))
        if mode is Relevance.DIRECT and method.target in ("overlap", "dense"):
            raise ParameterError(
                name("attribution"),
                method.text(),
                "never makes a memory one entry, so nothing counts under relevance direct",
                f"use {name('attribution')} sources, exact or auto with {name('relevance')} direct, or "
                f"{name('relevance')} provenance",
            )
        if isinstance(system_timeout, bool) or not isinstance(system_timeout, (int, float)):
            raise ParameterError(
                name("system_timeout"), system_timeout, "is not a number", "give seconds > 0, e.g. 300"
            )
        if not 0 < system_timeout < math.inf:
            raise ParameterError(
                name("system_timeout"), system_timeout, "is not a number > 0", "give seconds, e.g. 300"
            )
        check_token_counter(tokenizer, name("tokenizer"))
        if clock not in CLOCKS:
            raise UnknownNameError(name("clock"), clock, list(CLOCKS))
        if live is not None and not isinstance(live, LiveOptions):
            raise ParameterError(name("live"), live, "is not a LiveOptions", "pass agentmemory.live.LiveOptions(...)")
        values: dict[str, object] = {
            "k": k,
            "seed": seed,
            "relevance": mode,
            "measures": chosen,
            **flags,
            "baseline": baseline,
            "attribution": attribution,
            "system_timeout": float(system_timeout),
            "tokenizer": tokenizer,
            "claims": _claims(claims, name("claims")),
            "run_depth": _run_depth(run_depth, k, name("k"), chosen, name("run_depth")),
            "clock": clock,
            "live": live,
            "table_metrics": table,
            "qrels_patch": None if qrels_patch is None else str(qrels_patch),
            "defaults_chosen": tuple(defaults_chosen),
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)  # frozen: set once, here

    @classmethod
    def from_keywords(cls, keywords: Mapping[str, Any], *, where: str = "evaluate") -> EvalOptions:
        """The record ``where``'s keyword arguments describe (``evaluate(k=10, ...)``); unknown keywords refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(keywords) - known)
        if unknown:
            raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
        return cls(**keywords)

    @property
    def mode(self) -> Relevance:
        """:attr:`relevance` once resolved (:func:`resolve_relevance`, which :func:`~agentmemory.evaluation.runner.
        evaluate` calls); a ``ParameterError`` before."""
        if self.relevance is None:
            raise ParameterError("relevance", None, "is not resolved yet", "call resolve_relevance first")
        return self.relevance

    def with_live(self, live: LiveOptions | None) -> EvalOptions:
        """The same options with the live readers and judges ``live``."""
        return replace(self, live=live)

    @property
    def all_measures(self) -> tuple[Measure, ...]:
        """Every measure asked for: the defaults at ``k``, then :attr:`measures` not among them, in order."""
        return self.measures_for(memories=False)

    def measures_for(self, *, memories: bool) -> tuple[Measure, ...]:
        """Every measure asked for when a system returns its own memories (``memories``) or not:
        :func:`default_measures_for`, then :attr:`measures` not among them, in order."""
        chosen = list(default_measures_for(self.k, memories=memories))
        for m in self.measures:
            if m not in chosen:
                chosen.append(m)
        return tuple(chosen)

    def check_baseline(self, systems: Sequence[tuple[str, str]], name: str = "baseline") -> None:
        """:attr:`baseline` must be one of ``systems`` (``(key, label)`` pairs: either names it).

        Raises:
            UnknownNameError: it names none of them (the keys are listed).
        """
        if self.baseline is not None and not any(self.baseline in pair for pair in systems):
            raise UnknownNameError(name, self.baseline, [key for key, _ in systems])


def _seconds(value: object, name: str) -> object:
    """Seconds as typed (``"300"``) read as a number > 0; any other value as it is (the record checks it)."""
    if not isinstance(value, str):
        return value
    try:
        seconds = float(parse_number(value))
    except NumberTextError as err:
        raise ParameterError(name, value, err.problem, "give seconds > 0, e.g. 300") from None
    if not 0 < seconds < math.inf:  # said here about the text as typed; the record checks values from Python
        raise ParameterError(name, value, "is not a number > 0", "give seconds, e.g. 300")
    return seconds


def _integer(value: object, name: str, at_least: int) -> object:
    """An integer as typed (``"5"``) read by :func:`~agentmemory.files.numbers.parse_integer`; ``""`` unset."""
    if not isinstance(value, str):
        return value
    if value == "":
        return None
    try:
        return parse_integer(value)
    except NumberTextError as err:
        raise ParameterError(
            name, value, err.problem, f"{name} must be an integer >= {at_least} ({INTEGER_FORM})"
        ) from None


def _unset_empty(value: object, name: str) -> object:
    """Text where ``""`` means unset (``relevance``, ``baseline``)."""
    return None if value == "" else value


def _path(value: object, name: str) -> object:
    """A file's path, ``""`` unset."""
    if value is None or value == "":
        return None
    if not isinstance(value, (str, PathLike)):
        raise ParameterError(name, value, "is not a path", 'pass a file\'s path, or ""')
    return value


def _measure_list(value: object, name: str) -> object:
    """Measures as comma-separated text or a list, ``""`` unset."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return parse_measures(value, name=name)
    if isinstance(value, Sequence) and all(isinstance(m, (str, Measure)) for m in value):
        return parse_measures(value, name=name)
    raise ParameterError(name, value, "is not text", 'pass measures such as "P@5,R@5,nDCG@5", or ""')


def _spec_list(value: object, name: str) -> object:
    """Specs repeated (a list) or comma-separated text (commas inside ``[...]`` belong to a spec); empty unset."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        return tuple(piece.strip() for piece in split_specs(value) if piece.strip())
    return value


_READ: dict[str, Callable[[object, str], object]] = {
    "seconds": _seconds,
    "bool": lambda value, name: value,
    "name": lambda value, name: value,
    "text": _unset_empty,
    "path": _path,
    "measures": _measure_list,
    "specs": _spec_list,
}


def options_from_settings(given: Mapping[str, object], surface: str, **extra: Any) -> EvalOptions:
    """The :class:`EvalOptions` of the declared settings ``given`` by field name (:data:`~agentmemory.evaluation.
    settings.SETTINGS`; ``None`` or absent: unset), each read by its kind and named in messages as ``surface``
    (``"flag"``, ``"parameter"`` or ``"grid"``) names it; ``extra`` fields (``progress``, ``clamp``, ...) as they
    are.  Unset, relevance is left to :func:`resolve_relevance`.

    Raises:
        ParameterError, UnknownNameError: the first bad value, named as ``surface`` names it.
    """
    values: dict[str, Any] = {"relevance": None}
    live: dict[str, Any] = {}
    for name, value in given.items():
        declared = setting(name)
        shown = declared.named(surface)
        if value is None or value == "" and declared.kind == "int":
            read = None
        elif surface != "flag" and declared.kind in ("int", "seconds"):
            read = value  # typed by the notebook or the grid file; the record checks it
        elif declared.kind == "int":
            read = _integer(value, shown, 0 if name == "seed" else 1)
        else:
            read = _READ[declared.kind](value, shown)
        if read is not None and not (declared.live and read is False):  # a live flag off is no live setting
            (live if declared.live else values)[name] = read
    names = {s.name: s.named(surface) for s in SETTINGS if not s.live}
    options = EvalOptions(**{**values, **extra}, names=names)
    if live:
        live_names = {s.name: s.named(surface) for s in SETTINGS if s.live}
        live_names["answers"] = "--answers" if surface == "flag" else "answers"  # what judges without a reader grade
        options = options.with_live(LiveOptions(**{"readers": [], **live}, names=live_names))  # [] as unset
    return options
