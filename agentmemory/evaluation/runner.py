"""The evaluation runner: systems (retrievers and run files) over a collection's queries, scored per query.

A *system* is a retriever (any spec :mod:`agentmemory.retrievers` resolves)
or a run file of another memory system (:mod:`agentmemory.evaluation.runfiles`).  Both are
scored the same way; a run holds no scores below its depth, so what needs
them (tie analysis past its last hit, "why not retrieved") is marked not
available for it.

**Relevance.**  ``relevance="direct"`` (the default) is trec_eval's: a hit is
relevant when it is judged so.  ``relevance="provenance"`` credits a hit with
the judged sources its ``derived_from`` chain reaches, each source once
(:mod:`agentmemory.metrics.provenance`): evidence-level numbers, their own family
(trec_eval has no equivalent); only measures with a provenance definition
are computed, the others are listed in :attr:`Evaluation.unscored`, and no
tie analysis is made.

:func:`evaluate` builds one :class:`~agentmemory.store.core.MemoryStore` whose
event ids and timestamps are derived from the run's inputs and seed
(:class:`~agentmemory.store.events.HashIds` namespaced by the collection digest and
seed; a :class:`~agentmemory.store.events.SteppingClock` starting at the latest
``created_at`` of the corpus, one second per event), adds every entry, and
asks each retriever for the top ``k`` of every judged query.  The same
inputs and seed therefore give the same result and the same log.

Which queries count: every query with at least one judgment line, in file
order.  A judged query with no relevant entry scores 0 and still counts.
Queries with no judgment at all are not run; their ids are reported in
:attr:`Evaluation.unjudged_query_ids`.  Queries whose group is in
``collection.headline_excludes`` (LoCoMo's adversarial category) are run and
appear in the group means, but not in the headline means.

The aggregate row of each retriever carries the seed write-up's columns,
``mean_recall@k`` (mean of R@k), ``mean_precision@k`` (mean of P@k) and
``MRR`` (mean of RR over the retrieved top ``k``, which equals trec_eval's
``recip_rank`` on the exported run), plus the mean of every measure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from os import PathLike
from typing import Any

from agentmemory.datasets.collection import Collection, require_judgments
from agentmemory.errors import ParameterError
from agentmemory.evaluation.answer_runs import (
    AnswersSpec,
    AnswerSystem,
    answer_systems,
    default_answer_measures,
    live_answer_system,
    spec_name,
    with_retrieval,
)
from agentmemory.evaluation.options import RELEVANCE_MODES, EvalOptions, resolve_relevance
from agentmemory.evaluation.runfiles import BoundRun, RunFile, bind_run, parse_run_option, read_run_file
from agentmemory.evaluation.system_runs import SystemRun, system_runs
from agentmemory.live.answering import ContextMemory, LiveQuestion, answer_questions
from agentmemory.metrics import Measure, compute_measures, defined
from agentmemory.metrics.definition import AnswerInput
from agentmemory.metrics.provenance import Credited, ancestors_of, credit
from agentmemory.metrics.tieaware import TieReport, tie_reports
from agentmemory.metrics.token_counters import CachedCounter, token_counter
from agentmemory.records import Event, Hit, MemoryEntry, Query
from agentmemory.retrievers import (
    DEFAULT_RETRIEVERS,
    RetrieverLike,
    RetrieverSpec,
    capabilities,
    has_capability,
    resolve_retrievers,
)
from agentmemory.store.core import MemoryStore, dependency_order
from agentmemory.store.events import HashIds, SteppingClock

__all__ = [
    "RELEVANCE_MODES",
    "EvalOptions",
    "Evaluation",
    "QueryResult",
    "RetrieverResult",
    "SystemResult",
    "Timings",
    "defined_mean",
    "evaluate",
    "left_out_questions",
    "mean",
    "measure_depth",
    "seed_measures",
    "system_depth",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean with exactly rounded summation (:func:`math.fsum`); 0.0 when empty."""
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


def defined_mean(values: Iterable[float | None]) -> float | None:
    """:func:`mean` of the values that are not ``None`` (a measure's queries with a value); ``None`` when none is.

    The mean of a measure that may be undefined on a query (``MeasureDef.undefined_when``: ``tokens@first``
    without a relevant hit) is over the queries with a value; for every other measure no value is ``None``
    and this is :func:`mean` (``None`` only over no query, where :func:`mean` says 0.0).
    """
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


@dataclass(frozen=True)
class QueryResult:
    """One query under one retriever.

    ``relevant`` are the entry ids judged relevant (sorted); ``hits`` the top
    ``k``; ``metrics`` maps each measure's text form to its value (``None``
    where the measure has no value on this query: ``tokens@first`` without a
    relevant hit, ``MeasureDef.undefined_when``);
    ``tie_at_cutoff`` is true when the entry just below the cutoff has the
    same score as the ``k``-th hit (the tie rule, not the scores, decided
    what made the cut).  ``ties`` (when the evaluation ran with ``ties=True``)
    maps each measure to its :class:`~agentmemory.metrics.tieaware.TieReport`: the
    value under the tie rule, its expectation over all orderings of tied
    scores, and the worst and best it could be.  ``reads`` maps each measure
    to how many hits from the top it read on this query
    (:meth:`agentmemory.metrics.Measure.read_depth`), and ``ranking`` is the
    ranking down to the deepest of them (at least the top ``k``; a memory
    system's whole answer; at least the options' ``run_depth`` when set):
    what ``--runs-dir`` writes, so the run re-scores to ``metrics``.
    """

    query_id: str
    text: str
    group: str | None
    relevant: tuple[str, ...]
    hits: tuple[Hit, ...]
    metrics: dict[str, float | None]
    tie_at_cutoff: bool
    ties: Mapping[str, TieReport] | None = None
    credited: Credited | None = None
    visible: int | None = None
    ranking: tuple[Hit, ...] = field(default=(), repr=False, compare=False)
    reads: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)

    def value(self, measure: str) -> float:
        """``metrics[measure]`` for a measure with a value on every query (the seed's ``R@k``, ``P@k``, ``RR``).

        Raises:
            KeyError: the measure was not computed.
            ParameterError: it has no value on this query (``tokens@first`` without a relevant hit).
        """
        return defined(self.metrics[measure], measure)

    @property
    def found(self) -> tuple[str, ...]:
        """Relevant entries in the top k, in rank order (provenance: the sources credited, in credit order)."""
        if self.credited is not None:
            return tuple(s for new in self.credited.new for s in new)
        rel = set(self.relevant)
        return tuple(h.entry_id for h in self.hits if h.entry_id in rel)

    @property
    def missed(self) -> tuple[str, ...]:
        """Relevant entries not in the top k, sorted (provenance: the sources no hit reached)."""
        got = set(self.found) if self.credited is not None else {h.entry_id for h in self.hits}
        return tuple(r for r in self.relevant if r not in got)

    @property
    def first_relevant_rank(self) -> int | None:
        """Rank of the first relevant hit in the top k (provenance: the first hit reaching a source), or None."""
        if self.credited is not None:
            return self.credited.first_rank()
        rel = set(self.relevant)
        return next((h.rank for h in self.hits if h.entry_id in rel), None)


@dataclass(frozen=True)
class Timings:
    """Wall-clock figures of one retriever (only with ``evaluate(..., timings=True)``; never in an artifact).

    ``latencies`` are the seconds of each query's search; ``index_seconds``
    the time spent adding the collection; ``entries`` the entries indexed and
    ``index_bytes`` the index's size when the retriever reports one
    (``memory_bytes()``), else ``None``.
    """

    latencies: tuple[float, ...]
    index_seconds: float
    entries: int
    index_bytes: int | None

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile of the latencies, in seconds (numpy's linear interpolation)."""
        import numpy as np

        return float(np.percentile(np.asarray(self.latencies), q)) if self.latencies else 0.0


@dataclass(frozen=True)
class RetrieverResult:
    """Every judged query's result for one system (a retriever or a run file), and the means.

    ``kind`` is ``"retriever"`` or ``"run"``; ``capabilities`` the optional
    members the retriever has (``score_all``, ``explain``; none for a run);
    ``entries`` the run's own memories (its companion ``memories.jsonl``),
    ``dropped`` the run lines ``lenient_run=True`` left out, ``(line, reason)``;
    ``skipped_hits`` ``(query_id, hits)`` for each question of a run that the
    loader skipped (its hits ignored: :attr:`skipped_note`);
    ``rankings`` a run's whole ranking per query (as deep as the file goes),
    which reports read below the top k.  ``means`` are over the headline
    queries; a measure that may have no value on a query averages those with
    one (:func:`defined_mean`; ``None`` when none has).
    """

    name: str
    label: str
    params: dict[str, Any]
    per_query: tuple[QueryResult, ...]
    means: dict[str, float | None]
    k: int
    excluded_groups: tuple[str, ...] = ()
    kind: str = "retriever"
    capabilities: frozenset[str] = frozenset()
    entries: Mapping[str, MemoryEntry] = field(default_factory=dict, repr=False)
    dropped: tuple[tuple[int, str], ...] = ()
    skipped_hits: tuple[tuple[str, int], ...] = ()
    timings: Timings | None = field(default=None, repr=False, compare=False)
    rankings: Mapping[str, tuple[Hit, ...]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def skipped_note(self) -> str | None:
        """``140 hits for 14 skipped questions ignored``: the hits of a run on questions the loader skipped
        (``Collection.skipped``), or ``None`` when it named none."""
        if not self.skipped_hits:
            return None
        hits = sum(n for _, n in self.skipped_hits)
        questions = len(self.skipped_hits)
        return (
            f"{hits} hit{'s' if hits != 1 else ''} for {questions} skipped question{'s' if questions != 1 else ''} "
            "ignored"
        )

    def group_means(self) -> dict[str, dict[str, float | None]]:
        """Mean of every measure per query group (groups sorted; queries without a group left out; a measure
        that may have no value on a query averages those with one, ``None`` when none has)."""
        groups: dict[str, list[QueryResult]] = {}
        for q in self.per_query:
            if q.group is not None:
                groups.setdefault(q.group, []).append(q)
        return {
            g: {m: defined_mean(q.metrics[m] for q in rows) for m in self.means} for g, rows in sorted(groups.items())
        }

    @property
    def headline(self) -> tuple[QueryResult, ...]:
        """The queries behind the headline means (groups in ``headline_excludes`` left out)."""
        return tuple(q for q in self.per_query if q.group not in self.excluded_groups)

    def tie_means(self) -> dict[str, dict[str, float]]:
        """Per measure, the headline means of the tie reports' value under the rule,
        expectation, minimum and maximum (empty when ties were not analysed)."""
        rows = [q for q in self.headline if q.ties is not None]
        if not rows or len(rows) != len(self.headline):
            return {}
        fields = ("value_under_rule", "expected", "minimum", "maximum")
        measures = [m for m in self.means if all(m in q.ties for q in rows)]  # type: ignore[operator]
        return {m: {f: mean(getattr(q.ties[m], f) for q in rows) for f in fields} for m in measures}  # type: ignore[index]

    def aggregate_row(self) -> dict[str, Any]:
        """The seed's columns first (``None`` where not computed: answer files alone rank nothing), then the mean
        of every measure."""
        recall, precision, rr = seed_measures(self.k)
        row: dict[str, Any] = {
            "retriever": self.label,
            "mean_recall@k": self.means.get(recall),
            "mean_precision@k": self.means.get(precision),
            "MRR": self.means.get(rr),
        }
        row.update(self.means)
        return row


@dataclass(frozen=True)
class Evaluation:
    """The result of :func:`evaluate`.

    ``specs`` are the evaluated retrievers (one per result, same order), so
    the same retrievers can be run again (deeper, on another collection);
    ``store`` is the store the run searched (its retrievers hold the
    collection), for reports that ask the retrievers *why*; ``options`` the
    :class:`~agentmemory.evaluation.options.EvalOptions` it ran with (``k``,
    ``seed``, ``relevance``, ``lenient_run`` and ``as_of`` are its fields
    again; ``measures`` every measure computed).  ``tokenizer`` describes
    the token counter the budget measures read the hits' texts with
    (:mod:`agentmemory.metrics.token_counters`: name, version, files), or is
    ``None`` when no measure counts tokens.  ``original`` is, when the
    collection's judgments were patched (``collection.judgment_patch``), the
    same systems scored under the collection's own judgments, else ``None``.
    ``answers`` are the imported answer systems
    (:class:`~agentmemory.evaluation.answer_runs.AnswerSystem`), each also
    among ``results`` under its name.
    """

    collection: Collection
    k: int
    seed: int
    measures: tuple[Measure, ...]
    results: tuple[RetrieverResult, ...]
    unjudged_query_ids: tuple[str, ...]
    events: tuple[Event, ...]
    specs: tuple[RetrieverSpec, ...] = ()
    store: MemoryStore | None = field(default=None, repr=False, compare=False)
    relevance: str = "direct"
    unscored: tuple[str, ...] = ()
    runs: tuple[RunFile, ...] = ()
    lenient_run: bool = False
    as_of: bool = False
    systems: tuple[SystemRun, ...] = field(default=(), repr=False, compare=False)
    options: EvalOptions = field(default_factory=EvalOptions, compare=False)
    tokenizer: Mapping[str, Any] | None = None
    original: Evaluation | None = field(default=None, repr=False, compare=False)
    answers: tuple[AnswerSystem, ...] = field(default=(), repr=False, compare=False)

    @property
    def returns_memories(self) -> bool:
        """Whether a system returns its own memories (a memory system, or a run file with its memories file):
        the token-budget measures are then among the defaults (:func:`~agentmemory.evaluation.options.default_measures_for`)."""
        return _returns_memories(self.systems, self.runs)

    def result(self, name: str) -> RetrieverResult:
        """The result of the system ``name`` (its key, e.g. ``"bm25"``, or a run's name; a label works too)."""
        for res in self.results:
            if res.name == name:
                return res
        for res in self.results:
            if res.label == name:
                return res
        raise ParameterError(
            "system", name, "was not evaluated", "choose from: " + ", ".join(r.name for r in self.results)
        )

    def entry_text(self, system: str, entry_id: str) -> str:
        """The text of ``entry_id`` as ``system`` saw it: a collection entry, or one of a run's own memories."""
        extra = self.result(system).entries
        if entry_id in extra:
            return extra[entry_id].text
        return self.collection.entry(entry_id).text

    def to_frame(self) -> Any:
        """Every per-query value in long format: columns system, query, group, measure, value (a pandas DataFrame).

        One row per system x judged query x measure, in the evaluation's
        order; ``system`` is the label (as in every table).  Needs pandas
        (the ``report`` extra).
        """
        import pandas as pd

        rows = [
            (r.label, q.query_id, q.group, m, q.metrics[m]) for r in self.results for q in r.per_query for m in r.means
        ]
        return pd.DataFrame(rows, columns=["system", "query", "group", "measure", "value"])


def _returns_memories(systems: Sequence[SystemRun], runs: Sequence[RunFile]) -> bool:
    """A memory system among ``systems``, or a run of ``runs`` with its own memories file."""
    return bool(systems) or any(r.memories_path is not None for r in runs)


def seed_measures(k: int) -> tuple[str, str, str]:
    """The seed write-up's three measures at cutoff ``k`` as result keys: ``R@k``, ``P@k``, ``RR`` (whose mean is MRR).

    They are the measures behind the seed table's columns ``mean_recall@k``,
    ``mean_precision@k`` and ``MRR``, in that order: the one place that names them.
    """
    return (str(Measure("R", k)), str(Measure("P", k)), str(Measure("RR")))


def _reachable(retriever: Any, query: Query, hits: list[Hit], k: int) -> dict[str, float]:
    """Every entry scoring at least the k-th hit (the entries a tie at the cutoff could bring into the top k).

    ``score_all`` when the retriever has it; otherwise deeper and deeper
    searches (doubling the depth) until the last hit scores below the k-th:
    under the ranking rule every entry at or above that score comes first.
    """
    floor = hits[k - 1].score
    if "score_all" in capabilities(retriever):
        if has_capability(retriever, "score_at_least"):  # the same, filtered before the dict is built
            return retriever.score_at_least(query, floor)
        return {d: s for d, s in retriever.score_all(query).items() if s >= floor}
    depth = 2 * (k + 1)
    while True:
        deeper = retriever.search(query, depth)
        if len(deeper) < depth or deeper[-1].score < floor:
            return {h.entry_id: h.score for h in deeper if h.score >= floor}
        depth *= 2


def _as_run(item: RunFile | tuple[str, str] | str) -> RunFile:
    """A run given as a :class:`~agentmemory.evaluation.runfiles.RunFile`, a ``(name, path)`` pair or ``"NAME=PATH"`` text."""
    if isinstance(item, RunFile):
        return item
    if isinstance(item, str):
        name, path = parse_run_option(item, "runs")
        return read_run_file(path, name)
    if isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, (str, PathLike)) for x in item):
        return read_run_file(item[1], str(item[0]))
    raise ParameterError(
        "runs",
        item,
        "is not a run",
        'pass agentmemory.evaluation.runfiles.read_run_file(...), ("name", "path") or "name=path"',
    )


def _check_systems(keys: list[tuple[str, str]]) -> None:
    """Keys and labels unique across every system of one evaluation."""
    seen_keys: set[str] = set()
    seen_labels: set[str] = set()
    for key, label in keys:
        if key in seen_keys or label in seen_labels:
            raise ParameterError(
                "systems",
                [k for k, _ in keys],
                f"name the system {label!r} twice",
                "give every retriever and run its own name (labels must be unique)",
            )
        seen_keys.add(key)
        seen_labels.add(label)


def evaluate(
    collection: Collection,
    retrievers: RetrieverLike | Sequence[RetrieverLike] | None = DEFAULT_RETRIEVERS,
    *,
    runs: Sequence[RunFile | tuple[str, str] | str] = (),
    store: MemoryStore | None = None,
    systems: Sequence[Any] = (),
    options: EvalOptions | None = None,
    executor: Executor | None = None,
    answers: Sequence[Any] = (),
    **keywords: Any,
) -> Evaluation:
    """Run ``retrievers`` and score them, with the ``runs`` of other systems, over ``collection``.

    ``retrievers`` takes what :func:`agentmemory.retrievers.resolve_retrievers`
    takes: registry names (``"bm25,tags"``), specs with parameters
    (``"bm25[k1=0.9,b=0.4]"``), ``"package.module:attribute"``, factories,
    or a retriever instance (unscoped collections only); already resolved
    :class:`~agentmemory.retrievers.RetrieverSpec` values are taken as they
    are; ``None`` or ``()`` for none (then ``runs`` must name one).  ``runs``
    are run files (:func:`agentmemory.evaluation.runfiles.read_run_file`,
    ``("name", "path")`` or ``"name=path"``), checked against the collection
    (:func:`agentmemory.evaluation.runfiles.bind_run`; ``lenient_run`` drops
    and lists the lines naming unknown queries or entries, or hits out of
    scope).  A judged query a run does not mention retrieved nothing
    (trec_eval ``-c``).

    ``options`` is an :class:`~agentmemory.evaluation.options.EvalOptions`; instead of it, its fields may be given
    as keywords (``k=10, relevance="provenance"``), which make one; giving both is an error.  ``k`` (default 5) is
    the cutoff and ``seed`` (default 7) names the event ids.  ``measures`` adds to the defaults
    (:func:`~agentmemory.evaluation.options.default_measures_for`: P@k, R@k, RR, RR@k, nDCG@k, AP@k, and the token
    budgets with a system's own memories).  ``relevance`` is ``"direct"`` or ``"provenance"`` (module docstring).
    ``ties`` (default True) computes a :class:`~agentmemory.metrics.tieaware.TieReport` per query and measure
    (measures without a tie-aware formula get none) from the scores of every entry that could reach the top ``k``
    (those scoring at least the ``k``-th hit: the hits themselves unless a tie crosses the cutoff, so the analysis
    costs a deeper look only for those queries); for a run, only when its scores show where the tie ends.
    ``progress`` shows a tqdm bar per retriever (off by default); ``timings`` records each retriever's search
    latencies and index build (:class:`Timings`; never in an artifact); ``as_of`` shows each query only the entries
    created by its ``asked_at``.  ``baseline`` is carried for the statistics (:meth:`Evaluation.table`), not used
    here.

    ``store`` reuses the store of an earlier evaluation of the same
    collection (``Evaluation.store``) instead of indexing the entries again:
    its retrievers must be ``retrievers`` (by key) and its entries the
    collection's.  The new evaluation's ``events`` are only those it records.

    ``systems`` are memory systems (:mod:`agentmemory.systems`: specs such as
    ``"examples.my_memory_system:System"``, ``"bm25"`` for a retriever as a
    system): each is replayed over the collection, its memories attributed
    (the options' ``attribution``: ``sources``, ``exact``,
    ``overlap[threshold=...]``, ``dense[threshold=...]``, ``auto``) and scored
    as a run with its own memories (:mod:`agentmemory.evaluation.system_runs`);
    ``system_timeout`` bounds each call in seconds, ``lenient_system`` records
    a failing search as an empty ranking and lists it.  With systems and no
    ``relevance`` given, relevance is ``"provenance"``.  ``executor`` (a
    ``concurrent.futures.Executor``) replays each scope of each system as a
    task on it, with the same results (:func:`agentmemory.systems.replay.replay`).
    An experiment does not pass one: its tasks are already the unit of work
    on its executor, and a replay's scopes run serially inside its task (a
    pool within a pool's worker would oversubscribe the cores, and a Dask
    task would have to secede from its worker to submit more).

    ``answers``: other harnesses' answer files, each a system (:mod:`agentmemory.evaluation.answer_runs`).
    """
    options, answered = _options_and_answers(collection, answers, bool(systems), options, keywords)
    require_judgments(collection)  # means over no query would print as 0.00, as if measured
    specs = _specs(retrievers)
    run_files, bound, replayed = _bound_runs(collection, runs, systems, options, executor)
    by_system: dict[str, Any] = {s.run.name: s for s in replayed}
    if not specs and not bound and not answered:
        raise ParameterError(
            "retrievers", retrievers, "names no system", "name a retriever (e.g. 'bm25') or pass a run"
        )
    _check_systems((names := _names(specs, bound, by_system, answered)) + _live_names(options, specs, bound, answered))
    bound += [bind_run(a.run, collection, as_of=options.as_of) for a in answered if a.run is not None]
    extra = default_answer_measures(collection, answered, options.k, generated=_generated(options))
    ranked, memories = bool(specs or bound), _returns_memories(replayed, run_files)
    chosen, unscored = _scored_measures(options, names, extra, ranked=ranked, memories=memories)
    scorer = _new_scorer(collection, chosen, options)
    first_event, reused = (0 if store is None else len(store.log)), store is not None
    store = _prepared_store(collection, specs, store, options)
    queries = collection.judged_queries + _answer_only(collection, answered, options)
    slices = _time_slices(collection, queries, options.as_of, added=reused)
    durations: dict[str, list[float]] | None = {spec.key: [] for spec in specs} if options.timings else None
    found = _search(collection, specs, store, scorer, slices, options, durations)
    excluded = tuple(collection.headline_excludes)
    results = [
        _retriever_result(
            spec, store, [found[spec.key][q.id] for q in queries], scorer, excluded, slices, options, durations
        )
        for spec in specs
    ]
    results += _other_results(bound, answered, by_system, queries, scorer, excluded, options.k)
    results, answered = _live_results(collection, results, answered, queries, scorer, options)
    evaluation = Evaluation(
        collection=collection,
        k=options.k,
        seed=options.seed,
        measures=chosen,
        results=tuple(results),
        unjudged_query_ids=collection.unjudged_query_ids,
        events=tuple(store.log)[first_event:] if store is not None else (),
        specs=specs,
        store=store,
        relevance=options.relevance,
        unscored=unscored,
        runs=run_files,
        lenient_run=options.lenient_run,
        as_of=options.as_of,
        options=options,
        systems=tuple(replayed),
        tokenizer=None if scorer.counter is None else scorer.counter.describe(),
        answers=tuple(answered),
    )
    return _with_original(evaluation)


def _answer_only(collection: Collection, answered: Sequence[Any], options: EvalOptions) -> tuple[Query, ...]:
    """The questions scored on answers only (:func:`left_out_questions`): with answer files, the options'
    ``live`` readers, or ``left_out`` (an experiment's task of a collection with answer files); else none."""
    return left_out_questions(collection) if answered or options.left_out or options.live else ()


def _options_and_answers(
    collection: Collection, answers: Any, systems: bool, options: EvalOptions | None, keywords: Mapping[str, Any]
) -> tuple[EvalOptions, list[AnswerSystem]]:
    """The evaluation's options and its answer systems read and matched: relevance ``"provenance"`` by default
    when a memory system or an answer file's retrieved memories are to be attributed."""
    if options is None and "relevance" not in keywords:
        keywords = {**keywords, "relevance": None}  # resolved below, from what is evaluated
    made = _options(options, keywords)
    answered = answer_systems(collection, _with_claimed(answers, made)) if _given(answers, made) else []
    memories = systems or any(a.files[0].has_retrieval for a in answered)  # memories counted through attribution
    made = replace(made, relevance=resolve_relevance(made.relevance, attributed=memories))
    attributed = [
        with_retrieval(a, collection, k=made.k, relevance=made.relevance, attribution=made.attribution)
        for a in answered
    ]
    return made, attributed


def _names(
    specs: Sequence[RetrieverSpec], bound: Sequence[BoundRun], by_system: Mapping[str, Any], answered: Sequence[Any]
) -> list[tuple[str, str]]:
    """``(key, label)`` of every system: retrievers, runs, memory systems, answer files without retrieval."""
    names = [(s.key, s.label) for s in specs]
    names += [(b.name, by_system[b.name].spec.label if b.name in by_system else b.name) for b in bound]
    names += [(a.name, a.label) for a in answered if a.run is None]
    return names


def _generated(options: EvalOptions) -> int:
    """What :func:`default_answer_measures` is told of live answers: 0 without readers, the number of judges, or
    -1 with readers and no judge."""
    return 0 if options.live is None else (len(options.live.judges) or -1)


def _live_names(
    options: EvalOptions, specs: Sequence[RetrieverSpec], bound: Sequence[BoundRun], answered: Sequence[AnswerSystem]
) -> list[tuple[str, str]]:
    """``(key, label)`` of every live answer system: each ranked system (retrievers, runs, memory systems, answer
    files with retrieval) with each of the options' readers."""
    if options.live is None:
        return []
    ranked = [(s.key, s.label) for s in specs] + [(b.name, b.name) for b in bound]
    ranked += [(a.name, a.label) for a in answered if a.run is not None]
    return [(f"{key}+{r.name}", f"{label} + {r.name}") for key, label in ranked for r in options.live.readers]


def _live_results(
    collection: Collection,
    results: list[RetrieverResult],
    answered: list[AnswerSystem],
    queries: Sequence[Query],
    scorer: _Scorer,
    options: EvalOptions,
) -> tuple[list[RetrieverResult], list[AnswerSystem]]:
    """``results`` and ``answered`` with the options' live readers on every ranked system (:mod:`agentmemory.live`):
    each question answered from the system's top ``k`` (the texts it returned) and graded by the judges; each
    (system, reader) an answer system ``<system>+<reader>`` whose ranking is the system's (its rows as they are,
    the answer measures computed from the reader's answers)."""
    live = options.live
    if live is None:
        return results, answered
    unranked = {a.name for a in answered if not a.ranked}
    by_id = {q.id: q for q in queries}
    made_results, made_systems = [], []
    for base in [r for r in results if r.name not in unranked]:
        texts = scorer.with_entries(base.entries)
        questions = [
            LiveQuestion.of(by_id[row.query_id], [_context(texts, base, h.entry_id) for h in row.hits[: options.k]])
            for row in base.per_query
        ]
        for reader in live.readers:
            made = answer_questions(f"{base.name}+{reader.name}", base.name, questions, reader, live)
            system = live_answer_system(made, collection, label=f"{base.label} + {reader.name}")
            made_systems.append(system)
            made_results.append(_live_result(base, system, texts.with_answers(system.inputs), scorer, by_id))
    return [*results, *made_results], [*answered, *made_systems]


def _live_result(
    base: RetrieverResult, system: AnswerSystem, scoring: _Scorer, scorer: _Scorer, by_id: Mapping[str, Query]
) -> RetrieverResult:
    """A live answer system's result: ``base``'s rows with the answer measures computed from its answers."""
    rows = []
    for row in base.per_query:
        metrics, reads = dict(row.metrics), dict(row.reads)
        qrels = scoring.collection.qrels.get(row.query_id, {})
        scoring._answer_metrics(by_id[row.query_id], [h.entry_id for h in row.ranking], qrels, metrics, reads)
        rows.append(replace(row, metrics=metrics, reads=reads))
    return replace(
        base,
        name=system.name,
        label=system.label,
        params=system.params,
        per_query=tuple(rows),
        means=scorer.means(rows),
        kind="answers",
        timings=None,
        dropped=(),
        skipped_hits=(),
    )


def _context(texts: _Scorer, base: RetrieverResult, entry_id: str) -> ContextMemory:
    """One memory of ``base``'s ranking as its reader sees it: the text the system returned, and when it was
    recorded (the entry's ``created_at``, a run's own memory's when it has one)."""
    own = base.entries.get(entry_id)
    entry = own if own is not None else texts.collection.entry(entry_id)
    return ContextMemory(texts.text(entry_id), entry_id, entry.created_at)


def _given(answers: Any, options: EvalOptions) -> bool:
    """Whether ``answers`` (a sequence with items, or one spec) or a claim of the options names an answer file."""
    given = bool(answers) if isinstance(answers, (list, tuple)) else answers is not None
    return given or (options.claims is not None and bool(options.claims.answers()))


def _with_claimed(answers: Any, options: EvalOptions) -> list[Any]:
    """``answers`` as a list, then the answer files of the options' claims whose system ``answers`` does not name
    (a claim checked against its own per-question evidence)."""
    out = list(answers) if isinstance(answers, (list, tuple)) else ([] if answers is None else [answers])
    if options.claims is None:
        return out
    named = {spec_name(a) for a in out}
    for system, paths, answers_format in options.claims.answers():
        if system not in named:
            out.append(AnswersSpec(system, paths, answers_format))
    return out


def left_out_questions(collection: Collection) -> tuple[Query, ...]:
    """The questions without judgments that an answer can still be scored on: those the loader left out of
    retrieval scoring (``Collection.left_out_queries``) and those a judgment patch left unjudged without
    excluding them (an empty evidence list), never a question the patch excluded.  An evaluation with answer
    files (or ``left_out=True``) scores them after the judged questions, in this order."""
    judged = collection.qrels
    excluded = set(collection.excluded_query_ids)
    kept = [q for q in collection.queries if q.id not in judged]
    kept += collection.left_out_queries
    return tuple(q for q in kept if q.id not in judged and q.id not in excluded)


def _new_scorer(collection: Collection, chosen: tuple[Measure, ...], options: EvalOptions) -> _Scorer:
    """The scorer of an evaluation: ties analysed under direct relevance only, and a token counter (the options'
    ``tokenizer``) when a measure reads the hits' token lengths."""
    counter = token_counter(options.tokenizer) if any(m.definition.reads_lengths for m in chosen) else None
    return _Scorer(
        collection,
        options.k,
        chosen,
        ties=options.ties and options.relevance == "direct",
        relevance=options.relevance,
        counter=counter,
        keep=options.run_depth or 0,
    )


def _with_original(evaluation: Evaluation) -> Evaluation:
    """``evaluation`` of a patched collection, with its :attr:`Evaluation.original`: the same systems scored
    under the collection's own judgments.

    The retrievers' store is reused (not under ``as_of``, which adds entries
    in time order) and the memory systems' replays too: neither depends on
    the judgments.
    """
    patch = evaluation.collection.judgment_patch
    if patch is None:
        return evaluation
    original = evaluate(
        patch.revert(evaluation.collection),
        evaluation.specs,
        runs=evaluation.runs,
        systems=evaluation.systems,
        store=None if evaluation.as_of else evaluation.store,
        options=evaluation.options,
        answers=[a.files for a in evaluation.answers if a.live is None],  # live answers are made again (cached)
    )
    return replace(evaluation, original=original)


def _bound_runs(
    collection: Collection,
    runs: Sequence[RunFile | tuple[str, str] | str] | RunFile | str,
    systems: Sequence[Any],
    options: EvalOptions,
    executor: Executor | None,
) -> tuple[tuple[RunFile, ...], list[BoundRun], list[SystemRun]]:
    """The run files read and bound to the collection, then the memory systems replayed and bound as runs
    with their memories (:func:`_replay_systems`)."""
    run_files = tuple(
        _as_run(r) for r in ([runs] if isinstance(runs, (str, RunFile)) or not isinstance(runs, Sequence) else runs)
    )
    bound = [bind_run(r, collection, lenient=options.lenient_run, as_of=options.as_of) for r in run_files]
    replayed = _replay_systems(collection, systems, options, executor)
    bound += [bind_run(s.run, collection, as_of=options.as_of) for s in replayed]
    return run_files, bound, replayed


def _options(options: EvalOptions | None, keywords: Mapping[str, Any]) -> EvalOptions:
    """``options``, or the record ``keywords`` make (both given: an error)."""
    if options is None:
        return EvalOptions.from_keywords(keywords)
    if keywords:
        raise ParameterError(
            "options",
            sorted(keywords),
            "are given beside options",
            "pass options=EvalOptions(...) or its fields as keywords, not both",
        )
    if not isinstance(options, EvalOptions):
        raise ParameterError("options", options, "is not an EvalOptions", "pass options=EvalOptions(...)")
    return options


def _specs(retrievers: RetrieverLike | Sequence[RetrieverLike] | None) -> tuple[RetrieverSpec, ...]:
    """The retrievers resolved (specs already resolved are kept as they are: a caller resolves them once)."""
    if retrievers is None or (isinstance(retrievers, (list, tuple)) and not retrievers):
        return ()
    if isinstance(retrievers, tuple) and all(isinstance(r, RetrieverSpec) for r in retrievers):
        return retrievers  # keys and labels unique: checked with the runs' names by _check_systems
    return resolve_retrievers(retrievers)


def _scored_measures(
    options: EvalOptions,
    systems: Sequence[tuple[str, str]] = (),
    answer_measures: Sequence[Measure] = (),
    *,
    ranked: bool = True,
    memories: bool = False,
) -> tuple[tuple[Measure, ...], tuple[str, ...]]:
    """The measures computed and those left unscored (no provenance definition, under ``relevance="provenance"``).

    The measures are the options' (:meth:`EvalOptions.measures_for`: with the token-budget defaults when
    ``memories``, a system returning its own memories), then
    those of the options' claims about ``systems`` (``(key, label)`` pairs)
    not among them, so each such claim has our value under its definition,
    then ``answer_measures`` not among them (an evaluation with answer files);
    when no system ranks anything (answer files without retrieval alone),
    only the answer measures.
    An answer measure (``MeasureDef.reads_answer``) reads no judgment, so it
    is scored under either relevance.
    """
    chosen = options.measures_for(memories=memories)
    if options.claims is not None:
        chosen += tuple(m for m in options.claims.measures_for(systems) if m not in chosen)
    chosen += tuple(m for m in answer_measures if m not in chosen)
    if not ranked:  # answer files alone: no system ranked anything, so only the answer measures have values
        chosen = tuple(m for m in chosen if m.definition.reads_answer and m.rank_cutoff is None)
    if options.relevance != "provenance":
        return chosen, ()

    def scored(m: Measure) -> bool:
        return m.definition.provenance is not None or m.definition.reads_answer

    return tuple(m for m in chosen if scored(m)), tuple(str(m) for m in chosen if not scored(m))


def _prepared_store(
    collection: Collection, specs: tuple[RetrieverSpec, ...], store: MemoryStore | None, options: EvalOptions
) -> MemoryStore | None:
    """The store to search: a new one (ids and clock from the inputs and seed), or ``store`` once checked."""
    if store is not None and options.as_of:
        raise ParameterError(
            "store",
            "MemoryStore",
            "holds every entry, but an as-of evaluation adds them in time order",
            "leave store out when as_of=True",
        )
    if specs and store is None:
        stamps = [e.created_at for e in collection.entries if e.created_at is not None]
        return MemoryStore(
            specs,
            clock=SteppingClock(max(stamps) if stamps else _EPOCH),
            ids=HashIds(f"{collection.digest}:{options.seed}"),
        )
    if store is not None and (
        any(s.key not in store.retriever_names for s in specs)
        or len(store) != len(collection.entries)
        or not store.holds_exactly(collection.entries)
    ):
        raise ParameterError(
            "store",
            "MemoryStore",
            "does not hold these retrievers and this collection's entries",
            "pass the store of an evaluation of the same collection and retrievers (Evaluation.store)",
        )
    return store


def _search(
    collection: Collection,
    specs: tuple[RetrieverSpec, ...],
    store: MemoryStore | None,
    scorer: _Scorer,
    slices: _Slices,
    options: EvalOptions,
    durations: dict[str, list[float]] | None,
) -> dict[str, dict[str, QueryResult]]:
    """Every retriever's scored result per query id: entries added and queries answered slice by slice."""
    k = options.k
    extra, whole = _search_extra(collection, k, scorer.measures, options.run_depth)
    found: dict[str, dict[str, QueryResult]] = {spec.key: {} for spec in specs}
    for entries, batch in slices:
        if entries and store is not None:
            store.add(entries)
        for spec in specs:
            assert store is not None  # made by _prepared_store whenever there are retrievers
            searched = store.search_all(
                batch,
                k,
                spec.key,
                extra=extra,
                progress=options.progress and len(slices) == 1,
                durations=None if durations is None else durations[spec.key],
                clamp=options.clamp or whole,
            )
            for query, deeper in searched:
                retriever = store.retriever(spec.key, query.scope)
                found[spec.key][query.id] = scorer.score(
                    query, deeper, partial(_reachable, retriever, query, deeper, k)
                )
    return found


def _index_bytes(store: MemoryStore, key: str) -> int | None:
    """The size of retriever ``key``'s index over every scope of ``store`` (each scope has its own index), or
    ``None`` when the retriever reports none (``memory_bytes``, a declared capability: retrievers.base)."""
    total = 0
    for scope in store.scopes or (None,):
        size = getattr(store.retriever(key, scope), "memory_bytes", None)
        if not callable(size):
            return None
        total += int(size())
    return total


def _retriever_result(
    spec: RetrieverSpec,
    store: MemoryStore | None,
    per_query: list[QueryResult],
    scorer: _Scorer,
    excluded: tuple[str, ...],
    slices: _Slices,
    options: EvalOptions,
    durations: dict[str, list[float]] | None,
) -> RetrieverResult:
    """One retriever's result: its queries (with what each saw, as of its time), means and timings."""
    assert store is not None  # made by _prepared_store whenever there are retrievers
    if options.as_of:
        per_query = [replace(r, visible=slices.visible[r.query_id]) for r in per_query]
    retriever = store.retriever(spec.key)
    timing = None
    if durations is not None:
        timing = Timings(
            tuple(durations[spec.key]), store.index_seconds(spec.key), len(store), _index_bytes(store, spec.key)
        )
    return RetrieverResult(
        spec.key,
        spec.label,
        retriever.params(),
        tuple(per_query),
        scorer.means(per_query),
        options.k,
        excluded,
        capabilities=capabilities(retriever),
        timings=timing,
    )


def _run_result(
    run: BoundRun,
    queries: Sequence[Query],
    scorer: _Scorer,
    excluded: tuple[str, ...],
    k: int,
    system: SystemRun | None = None,
    answered: AnswerSystem | None = None,
) -> RetrieverResult:
    """One run file's (or replayed memory system's, or answer file's) result, scored over the collection plus
    its own memories."""
    scorer_run = scorer.with_entries(run.entries)
    if answered is not None:
        scorer_run = scorer_run.with_answers(answered.inputs)
    kept = system is not None or answered is not None
    per_query = [scorer_run.score(q, list(run.rankings.get(q.id, ())), None, keep_all=kept) for q in queries]
    kind = "run" if system is None else "system"
    if answered is not None:
        label, params, kind = answered.label, answered.params, "answers"
    else:
        label = run.name if system is None else system.spec.label
        params = run.run.summary() if system is None else system.params
    return RetrieverResult(
        run.name,
        label,
        params,
        tuple(per_query),
        scorer.means(per_query),
        k,
        excluded,
        kind=kind,
        entries=run.entries,
        dropped=run.dropped,
        skipped_hits=run.skipped_hits,
    )


def _other_results(
    bound: Sequence[BoundRun],
    answered: Sequence[AnswerSystem],
    by_system: Mapping[str, Any],
    queries: Sequence[Query],
    scorer: _Scorer,
    excluded: tuple[str, ...],
    k: int,
) -> list[RetrieverResult]:
    """The results of the runs (run files, replayed memory systems, answer files with retrieval), then of the
    answer files without retrieval."""
    by_answers = {a.name: a for a in answered}
    results = [
        _run_result(run, queries, scorer, excluded, k, by_system.get(run.name), by_answers.get(run.name))
        for run in bound
    ]
    return results + [_answers_result(a, queries, scorer, excluded, k) for a in answered if a.run is None]


def _answers_result(
    answered: AnswerSystem, queries: Sequence[Query], scorer: _Scorer, excluded: tuple[str, ...], k: int
) -> RetrieverResult:
    """An answer file without retrieval: its answer measures per question; every retrieval measure has no value."""
    scorer_answers = scorer.with_answers(answered.inputs, ranked=False)
    per_query = [scorer_answers.score(q, [], None) for q in queries]
    return RetrieverResult(
        answered.name,
        answered.label,
        answered.params,
        tuple(per_query),
        scorer.means(per_query),
        k,
        excluded,
        kind="answers",
    )


def _replay_systems(
    collection: Collection, systems: Sequence[Any], options: EvalOptions, executor: Executor | None = None
) -> list[SystemRun]:
    """The memory systems of an evaluation (see :func:`evaluate`), asked as deep as the deepest measure."""
    if isinstance(systems, str) or not isinstance(systems, Sequence):
        systems = [systems]
    if not systems:
        return []
    if all(isinstance(s, SystemRun) for s in systems):  # replayed already (the original judgments of a patch)
        return list(systems)
    k = options.k
    depth = max(max(system_depth(m, k) for m in options.measures_for(memories=True)), options.run_depth or 0)
    return system_runs(
        collection,
        systems,
        k=k,
        depth=depth,
        relevance=options.relevance,
        attribution=options.attribution,
        timeout=options.system_timeout,
        lenient=options.lenient_system,
        as_of=options.as_of,
        executor=executor,
        clock=options.clock,
        progress=options.progress,
    )


def measure_depth(measure: Measure, k: int) -> int | None:
    """How deep a ranking ``measure`` sees in an evaluation at cutoff ``k``: ``None`` for the whole ranking.

    A measure without a cutoff, or with one up to ``k``, sees the top ``k``
    (the run an evaluation at ``k`` exports, so ``RR`` is trec_eval's
    ``recip_rank`` of that run); ``R@10`` in an evaluation at ``k = 5`` sees
    the top 10; a measure whose definition widens its own cutoff
    (``MeasureDef.whole_ranking``, LongMemEval's ``sess.*``) sees every
    scored entry.
    """
    if measure.definition.whole_ranking:
        return None
    cutoff = measure.rank_cutoff
    if cutoff is None or cutoff <= k:
        return k
    return cutoff


def system_depth(measure: Measure, k: int) -> int:
    """How many memories a memory system is asked for so that ``measure`` can be computed at cutoff ``k``.

    :func:`measure_depth` where it is a number; under a token budget ``T``
    (``R@512tok``), ``T + 1`` memories (every non-empty text counts at least
    one token, so they cross the budget); otherwise ``k`` (a measure reading
    the whole ranking reads what the system returns for ``k``).
    """
    budget = measure.budget
    if budget is not None:
        return max(k, budget + 1)
    return measure_depth(measure, k) or k


def _search_extra(
    collection: Collection, k: int, measures: Sequence[Measure], run_depth: int | None = None
) -> tuple[int, bool]:
    """How many hits below ``k`` to search (at least one, to see a tie across the cutoff; down to
    ``run_depth`` when given), and whether to clamp the search to each retriever's own depth: when the whole
    ranking is needed (then as many as the largest scope holds), or ``run_depth`` asks deeper than the
    measures (a retriever ranking fewer, hybrid's candidates, gives what it has instead of refusing)."""
    depths = [measure_depth(m, k) for m in measures]
    if any(d is None for d in depths):
        sizes: dict[str | None, int] = {}
        for entry in collection.entries:
            sizes[entry.scope] = sizes.get(entry.scope, 0) + 1
        return max(max(sizes.values(), default=1) - k, 1, (run_depth or 0) - k), True
    extra = max(max((d for d in depths if d is not None), default=k) - k, 1)
    if run_depth is not None and run_depth - k > extra:
        return run_depth - k, True
    return extra, False


class _Slices(list):
    """``(entries to add, queries to answer then)`` in time order, and each query's visible entries in its scope."""

    visible: dict[str, int]


def _time_slices(collection: Collection, queries: Sequence[Query], as_of: bool, *, added: bool) -> _Slices:
    """The order an evaluation adds entries and answers queries in.

    Without ``as_of``: every entry (unless ``added``: a reused store holds them
    already; sources before what is derived from them), then every query.  With it: entries without ``created_at`` first,
    then, for each distinct ``asked_at`` in ascending order, the entries created
    up to it and the queries asked then; the queries without ``asked_at`` last,
    after every entry.

    An entry exists once it was created *and* its sources exist: its time is the
    latest of its own ``created_at`` and its sources' times (an undated entry
    derived from a dated one comes with that source, not before it), and each
    slice adds sources before the entries derived from them.
    """
    slices = _Slices()
    slices.visible = {}
    if not as_of:
        slices.append(((() if added else tuple(dependency_order(collection.entries))), tuple(queries)))
        return slices
    ordered = dependency_order(collection.entries)
    exists: dict[str, datetime | None] = {}
    for entry in ordered:
        dated = [exists[s] for s in entry.provenance.derived_from if exists.get(s) is not None]
        if entry.created_at is not None:
            dated.append(entry.created_at)
        exists[entry.id] = max(dated) if dated else None  # type: ignore[type-var]
    timed = sorted((e for e in ordered if exists[e.id] is not None), key=lambda e: exists[e.id])  # type: ignore[arg-type,return-value]
    pending = [e for e in ordered if exists[e.id] is None]
    by_time: dict[datetime | None, list[Query]] = {}
    for query in queries:
        by_time.setdefault(query.asked_at, []).append(query)
    times = sorted(t for t in by_time if t is not None)
    counts: dict[str | None, int] = {}
    position = 0
    for moment in [*times, None]:
        asked = by_time.get(moment, [])
        while position < len(timed) and (moment is None or exists[timed[position].id] <= moment):  # type: ignore[operator]
            pending.append(timed[position])
            position += 1
        for entry in pending:
            counts[entry.scope] = counts.get(entry.scope, 0) + 1
        if asked or pending:
            slices.append((tuple(pending), tuple(asked)))
        pending = []
        for query in asked:
            slices.visible[query.id] = counts.get(query.scope, 0)
    return slices


class _Lengths(Sequence[int]):
    """The token length of each hit's text, counted when first read (a budget stops reading early)."""

    def __init__(self, ids: Sequence[str], text_of: Callable[[str], str], counter: CachedCounter) -> None:
        self._ids = ids
        self._text_of = text_of
        self._counter = counter

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._counter.count_one(self._text_of(i)) for i in self._ids[index]]
        return self._counter.count_one(self._text_of(self._ids[index]))

    def __iter__(self) -> Iterator[int]:
        for entry_id in self._ids:
            yield self._counter.count_one(self._text_of(entry_id))


class _Scorer:
    """Scores one query's ranking: measures, tie reports, provenance credits (the part shared by every system)."""

    def __init__(
        self,
        collection: Collection,
        k: int,
        measures: tuple[Measure, ...],
        *,
        ties: bool,
        relevance: str,
        extra: Mapping[str, MemoryEntry] | None = None,
        counter: CachedCounter | None = None,
        keep: int = 0,
        answers: Mapping[str, tuple[AnswerInput, ...]] | None = None,
        ranked: bool = True,
    ) -> None:
        self.collection = collection
        self.k = k
        self.keep = keep  # each query's ranking is kept at least this deep (the options' run_depth)
        self.measures = measures
        self.ties = ties
        self.relevance = relevance
        self.extra = dict(extra or {})
        self.counter = counter
        self.answers = answers  # per query, one AnswerInput per seed (an answer file); None for other systems
        self.ranked = ranked  # False: the system told no ranking (an answer file without retrieval)
        excluded = collection.headline_excludes
        self.headline = {q.id for q in collection.headline_queries}
        self.headline |= {q.id for q in left_out_questions(collection) if q.group not in excluded}
        if self.extra:
            scopes: dict[str | None, set[str]] = {}
            for entry in (*collection.entries, *self.extra.values()):
                scopes.setdefault(entry.scope, set()).add(entry.id)
            self.scope_ids = {scope: frozenset(ids) for scope, ids in scopes.items()}
        else:
            self.scope_ids = dict(collection.scope_ids)  # computed once per collection, for every evaluation
        self._ancestors: dict[str, frozenset[str]] | None = None
        groups: dict[int | None, list[Measure]] = {}
        self.answer_measures = tuple(m for m in measures if m.definition.reads_answer)
        for m in measures:
            if not m.definition.reads_answer:
                groups.setdefault(measure_depth(m, k), []).append(m)
        self.groups = [(depth, tuple(group)) for depth, group in groups.items()]
        # A measure looking deeper than k has no tie report of the depth-k run.
        self.at_k = tuple(groups.get(k, ()))

    def with_entries(self, extra: Mapping[str, MemoryEntry]) -> _Scorer:
        """The same scorer over the collection plus a run's own memories (the same token counts remembered)."""
        if not extra:
            return self
        return self._copy(extra=extra)

    def with_answers(self, answers: Mapping[str, tuple[AnswerInput, ...]], *, ranked: bool = True) -> _Scorer:
        """The same scorer for an answer file's system: its answers per query (one per seed); ``ranked=False``
        when it told no ranking (every retrieval measure then has no value)."""
        return self._copy(answers=answers, ranked=ranked)

    def _copy(self, **changes: Any) -> _Scorer:
        fields: dict[str, Any] = {
            "extra": self.extra,
            "counter": self.counter,
            "keep": self.keep,
            "answers": self.answers,
            "ranked": self.ranked,
        }
        fields.update(changes)
        return _Scorer(self.collection, self.k, self.measures, ties=self.ties, relevance=self.relevance, **fields)

    @property
    def ancestors(self) -> dict[str, frozenset[str]]:
        if self._ancestors is None:
            self._ancestors = ancestors_of((*self.collection.entries, *self.extra.values()))
        return self._ancestors

    def text(self, entry_id: str) -> str:
        """The text the system returned for ``entry_id``: a run's own memory, else the collection's entry."""
        own = self.extra.get(entry_id)
        return own.text if own is not None else self.collection.entry(entry_id).text

    def lengths(self, ranking: Sequence[str], group: Sequence[Measure]) -> Sequence[int] | None:
        """The token lengths of ``ranking``'s texts (counted as read) when a measure of ``group`` reads them."""
        if self.counter is None or not any(m.definition.reads_lengths for m in group):
            return None
        return _Lengths(ranking, self.text, self.counter)

    def score(
        self,
        query: Query,
        deeper: list[Hit],
        reachable: Callable[[], dict[str, float]] | None,
        *,
        keep_all: bool = False,
    ) -> QueryResult:
        """``deeper`` is the ranking, at least ``k + 1`` deep when there is that much; ``reachable`` gives every
        entry scoring at least the k-th hit, or is ``None`` (a run: only what ``deeper`` holds is known).
        ``keep_all`` keeps the whole of ``deeper`` as :attr:`QueryResult.ranking` (a memory system's answer)."""
        k = self.k
        hits = tuple(deeper[:k])
        judged = self.collection.qrels.get(query.id)
        qrels: Mapping[str, int] = judged if judged is not None else {}
        tie_at_cutoff = len(deeper) > k and deeper[k].score == deeper[k - 1].score
        if judged is None or not self.ranked:  # a question left out of retrieval scoring, or no ranking told
            metrics, credited, reads = self._unranked_metrics(query, [h.entry_id for h in deeper], qrels)
            reports = None
        else:
            metrics, credited, reads = self._metrics(query, [h.entry_id for h in deeper], qrels)
            reports = self._tie_reports(query, deeper, qrels, tie_at_cutoff, reachable, metrics) if self.ties else None
        kept = len(deeper) if keep_all else max(len(hits), self.keep, *reads.values(), 0)
        return QueryResult(
            query_id=query.id,
            text=query.text,
            group=query.group,
            relevant=self.collection.relevant(query.id),
            hits=hits,
            metrics=metrics,
            tie_at_cutoff=tie_at_cutoff,
            ties=reports,
            credited=credited,
            ranking=hits if kept <= len(hits) else tuple(deeper[:kept]),
            reads=reads,
        )

    def _metrics(
        self, query: Query, whole: list[str], qrels: Mapping[str, int]
    ) -> tuple[dict[str, float | None], Credited | None, dict[str, int]]:
        """Every measure's value in the evaluation's order, (provenance) the credits of the top k, and how deep
        each measure read (:meth:`~agentmemory.metrics.Measure.read_depth`; under provenance a hit counts as
        relevant there when it reaches a relevant source, as the provenance definitions read it)."""
        k = self.k
        credited = None
        metrics: dict[str, float | None] = {}
        reads: dict[str, int] = {}
        scope = self.scope_ids.get(query.scope, frozenset())
        for depth, group in self.groups:  # each measure sees the ranking as deep as it needs (see measure_depth)
            ranking = whole if depth is None else whole[:depth]
            lengths = self.lengths(ranking, group)
            relevant: Mapping[str, int] = qrels
            if self.relevance == "provenance":
                credited_here = credit(ranking, qrels, self.ancestors, lengths)
                if depth == k:
                    credited = credited_here
                for m in group:
                    metrics[str(m)] = m.definition.provenance(credited_here, m.cutoff)  # type: ignore[misc]
                relevant = {doc: 1 for doc, reached in zip(ranking, credited_here.reach) if reached}
            else:
                metrics.update(
                    compute_measures(
                        group,
                        ranking,
                        qrels,
                        scope_ids=scope,
                        query=query,
                        session_of=self.collection.session_of,
                        lengths=lengths,
                    )
                )
            for m in group:
                reads[str(m)] = m.read_depth(ranking, relevant, scope, query, self.collection.session_of, lengths)
        if credited is None and self.relevance == "provenance":
            credited = credit(whole[:k], qrels, self.ancestors)
        self._answer_metrics(query, whole, qrels, metrics, reads)
        return (
            {str(m): metrics[str(m)] for m in self.measures},
            credited,
            {str(m): reads[str(m)] for m in self.measures},
        )

    def _unranked_metrics(
        self, query: Query, whole: list[str], qrels: Mapping[str, int]
    ) -> tuple[dict[str, float | None], Credited | None, dict[str, int]]:
        """A query whose ranking is not scored (left out of retrieval scoring by the loader, or a system that
        told no ranking): no retrieval measure has a value; the answer measures do."""
        metrics: dict[str, float | None] = {str(m): None for m in self.measures}
        reads = {str(m): 0 for m in self.measures}
        self._answer_metrics(query, whole, qrels, metrics, reads)
        return metrics, None, reads

    def _answer_metrics(
        self,
        query: Query,
        whole: list[str],
        qrels: Mapping[str, int],
        metrics: dict[str, float | None],
        reads: dict[str, int],
    ) -> None:
        """The answer measures of ``query`` into ``metrics`` (the mean over an answer file's seeds; a measure
        with no value under any seed has none), and how deep each read the ranking into ``reads``."""
        for m in self.answer_measures:
            depth = min(m.rank_cutoff or 0, len(whole)) if self.ranked else 0
            texts = tuple(self.text(i) for i in whole[:depth]) if self.ranked else None
            inputs = (AnswerInput(None, None, texts),) if self.answers is None else self.answers.get(query.id, ())
            values = [
                m._compute(whole, qrels, None, query, None, None, a if a.texts is not None else a._replace(texts=texts))
                for a in inputs
            ]
            present = [v for v in values if v is not None]
            metrics[str(m)] = math.fsum(present) / len(present) if present else None
            reads[str(m)] = depth

    def _tie_reports(
        self,
        query: Query,
        deeper: list[Hit],
        qrels: Mapping[str, int],
        tie_at_cutoff: bool,
        reachable: Callable[[], dict[str, float]] | None,
        metrics: Mapping[str, float | None],
    ) -> dict[str, TieReport] | None:
        """The tie report of every measure at depth k, or ``None`` when a run's tie runs past its last line."""
        k = self.k
        if tie_at_cutoff and reachable is None and deeper[-1].score >= deeper[k - 1].score:
            return None
        # Only entries scoring at least the k-th hit can reach the top k. Without a tie across
        # the cutoff those are the hits; with one, the retriever tells (a run cannot past its end).
        if tie_at_cutoff and reachable is not None:
            scores = reachable()
        elif tie_at_cutoff:
            scores = {h.entry_id: h.score for h in deeper if h.score >= deeper[k - 1].score}
        else:
            scores = {h.entry_id: h.score for h in deeper[:k]}
        top = [h.entry_id for h in deeper[:k]]  # what the depth-k measures were computed on
        found = tie_reports(self.at_k, scores, qrels, k, query=query, computed=(top, metrics))
        return {name: r for name, r in found.items() if r is not None}

    def means(self, per_query: Sequence[QueryResult]) -> dict[str, float | None]:
        """Each measure's mean over the headline queries (:func:`defined_mean`: over those with a value)."""
        headline = [r for r in per_query if r.query_id in self.headline]
        means: dict[str, float | None] = {}
        for m in self.measures:
            values = [r.metrics[str(m)] for r in headline]
            undefined = m.definition.undefined_when is not None or any(v is None for v in values)
            means[str(m)] = defined_mean(values) if undefined else mean(values)  # type: ignore[arg-type]
        return means


SystemResult = RetrieverResult
"""The result of one system (a retriever or a run file); :class:`RetrieverResult` under its general name."""
