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
(trec_eval has no equivalent); a measure asked for without a provenance
definition is refused (:func:`agentmemory.metrics.modes.require_defined`), a
claim's is listed in :attr:`Evaluation.unscored` (the claims check says so),
and no tie analysis is made.

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

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial
from os import PathLike
from typing import Any

from agentmemory.collection import Collection, require_judgments
from agentmemory.collection.columns import Entries
from agentmemory.errors import ParameterError
from agentmemory.evaluation.answer_runs import (
    AnswersSpec,
    AnswerSystem,
    answer_systems,
    default_answer_measures,
    live_answer_system,
    spec_name,
    with_live_judges,
    with_retrieval,
)
from agentmemory.evaluation.options import (
    AUTO_RETRIEVERS,
    RELEVANCE_MODES,
    EvalOptions,
    Relevance,
    default_retrievers,
    resolve_relevance,
)
from agentmemory.evaluation.result_records import (
    Evaluation,
    QueryResult,
    RetrieverResult,
    SystemResult,
    Timings,
    defined_mean,
    mean,
    returns_memories,
    seed_measures,
)
from agentmemory.evaluation.runfiles import BoundRun, RunFile, bind_run, parse_run_option, read_run_file
from agentmemory.evaluation.scorer import Scorer, left_out_questions, measure_depth
from agentmemory.evaluation.system_runs import SystemRun, system_runs
from agentmemory.evaluation.time_slices import Slices, time_slices
from agentmemory.live.answering import ContextMemory, LiveQuestion, answer_questions
from agentmemory.metrics import Measure
from agentmemory.metrics.modes import defined_under, require_defined
from agentmemory.metrics.token_counters import token_counter
from agentmemory.records import Hit, Query
from agentmemory.retrievers import (
    RetrieverLike,
    RetrieverSpec,
    capabilities,
    has_capability,
    resolve_retrievers,
)
from agentmemory.store.core import MemoryStore
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
    retrievers: RetrieverLike | Sequence[RetrieverLike] | None = AUTO_RETRIEVERS,
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
    are; ``None`` or ``()`` for none (then ``runs`` must name one); ``"auto"`` (the default) the collection's
    default retrievers (:func:`~agentmemory.evaluation.options.default_retrievers`: ``bm25,tags`` when its queries
    carry tags, else ``bm25``), said in :attr:`EvalOptions.defaults_chosen` and on the card.  ``runs``
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
    answered = _judged_live(collection, answered, options)
    require_judgments(collection)  # means over no query would print as 0.00, as if measured
    if isinstance(retrievers, str) and retrievers == AUTO_RETRIEVERS:  # the collection's default, said on the card
        retrievers, why = default_retrievers(collection)
        options = replace(options, defaults_chosen=(*options.defaults_chosen, why))
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
    ranked, memories = bool(specs or bound), returns_memories(replayed, run_files)
    chosen, unscored = _scored_measures(options, names, extra, ranked=ranked, memories=memories)
    scorer = _new_scorer(collection, chosen, options)
    first_event, reused = (0 if store is None else len(store.log)), store is not None
    store = _prepared_store(collection, specs, store, options)
    queries = collection.judged_queries + _answer_only(collection, answered, options)
    slices = time_slices(collection, queries, options.as_of, added=reused)
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
        measures=chosen,
        results=tuple(results),
        unjudged_query_ids=collection.unjudged_query_ids,
        events=tuple(store.log)[first_event:] if store is not None else (),
        specs=specs,
        store=store,
        unscored=unscored,
        runs=run_files,
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
        with_retrieval(a, collection, k=made.k, relevance=made.mode, attribution=made.attribution) for a in answered
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


def _judged_live(collection: Collection, answered: list[AnswerSystem], options: EvalOptions) -> list[AnswerSystem]:
    """The imported answer systems, their answers graded by the options' live judges when there are judges and
    no reader (:func:`with_live_judges`); as they are otherwise.

    Raises:
        ParameterError: judges without a reader and without answer files (nothing to grade).
    """
    live = options.live
    if live is None or live.readers or not live.judges:
        return answered
    live.require_answers(bool(answered))
    return [with_live_judges(a, collection, live, progress=options.progress) for a in answered]


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
    scorer: Scorer,
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
            LiveQuestion.of(
                by_id[row.query_id],
                [_context(texts, base, base.returned_id(row.query_id, h.entry_id)) for h in row.hits[: options.k]],
            )
            for row in base.per_query
        ]
        for reader in live.readers:
            name = f"{base.name}+{reader.name}"
            made = answer_questions(name, base.name, questions, reader, live, progress=options.progress)
            system = live_answer_system(made, collection, label=f"{base.label} + {reader.name}")
            made_systems.append(system)
            made_results.append(_live_result(base, system, texts.with_answers(system.inputs), scorer, by_id))
    return [*results, *made_results], [*answered, *made_systems]


def _live_result(
    base: RetrieverResult, system: AnswerSystem, scoring: Scorer, scorer: Scorer, by_id: Mapping[str, Query]
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


def _context(texts: Scorer, base: RetrieverResult, entry_id: str) -> ContextMemory:
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


def _new_scorer(collection: Collection, chosen: tuple[Measure, ...], options: EvalOptions) -> Scorer:
    """The scorer of an evaluation: ties analysed under direct relevance only, and a token counter (the options'
    ``tokenizer``) when a measure reads the hits' token lengths."""
    counter = token_counter(options.tokenizer) if any(m.definition.reads_lengths for m in chosen) else None
    return Scorer(
        collection,
        options.k,
        chosen,
        ties=options.ties and options.mode is Relevance.DIRECT,
        relevance=options.mode,
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
        answers=[a.given_files for a in evaluation.answers if a.live is None],  # live calls made again (cached)
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
    """The measures computed and the claims' measures left unscored (no provenance definition, under
    ``relevance="provenance"``: the claims check says so); a measure asked for without one is refused
    (:func:`agentmemory.metrics.modes.require_defined`).

    The measures are the options' (:meth:`EvalOptions.measures_for`: with the token-budget defaults when
    ``memories``, a system returning its own memories), then
    those of the options' claims not among them (:attr:`Claims.measures
    <agentmemory.evaluation.claims.Claims.measures>`: every claim's, so each claim about one of ``systems``
    (``(key, label)`` pairs) has our value under its definition, and every claim is a published row of the
    comparison table, in its measure's column),
    then ``answer_measures`` not among them (an evaluation with answer files);
    when no system ranks anything (answer files without retrieval alone),
    only the answer measures.
    An answer measure (``MeasureDef.reads_answer``) reads no judgment, so it
    is scored under either relevance.
    """
    chosen = options.measures_for(memories=memories)
    mode = options.relevance or Relevance.DIRECT  # resolved by now (resolve_relevance); unset reads as direct
    if ranked:  # a measure asked for without a definition under the relevance is refused; a claim's is named
        require_defined(chosen, mode)
    if options.claims is not None:
        chosen += tuple(m for m in options.claims.measures if m not in chosen)
    chosen += tuple(m for m in answer_measures if m not in chosen)
    if not ranked:  # answer files alone: no system ranked anything, so only the answer measures have values
        chosen = tuple(m for m in chosen if m.definition.reads_answer and m.rank_cutoff is None)
    kept = tuple(m for m in chosen if defined_under(m, mode))
    return kept, tuple(str(m) for m in chosen if m not in kept)


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
        entries = collection.entries
        if isinstance(entries, Entries):  # from the column: no record made per entry
            stamps = [t for t in entries.values_set("created_at") if t is not None]
        else:
            stamps = [e.created_at for e in entries if e.created_at is not None]
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
    scorer: Scorer,
    slices: Slices,
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
    scorer: Scorer,
    excluded: tuple[str, ...],
    slices: Slices,
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
    scorer: Scorer,
    excluded: tuple[str, ...],
    k: int,
    system: SystemRun | None = None,
    answered: AnswerSystem | None = None,
) -> RetrieverResult:
    """One run file's (or replayed memory system's, or answer file's) result, scored over the collection plus
    its own memories."""
    scorer_run = scorer.with_entries(run.entries, run.run.stand_ins)
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
        stand_ins=run.run.stand_ins,
    )


def _other_results(
    bound: Sequence[BoundRun],
    answered: Sequence[AnswerSystem],
    by_system: Mapping[str, Any],
    queries: Sequence[Query],
    scorer: Scorer,
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
    answered: AnswerSystem, queries: Sequence[Query], scorer: Scorer, excluded: tuple[str, ...], k: int
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
        relevance=options.mode,
        attribution=options.attribution,
        timeout=options.system_timeout,
        lenient=options.lenient_system,
        as_of=options.as_of,
        executor=executor,
        clock=options.clock,
        progress=options.progress,
    )


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
        entries = collection.entries
        sizes: dict[str | None, int] = {}
        if isinstance(entries, Entries):  # counted from the scope codes: no record made
            sizes = entries.scope_sizes()
        else:
            for entry in entries:
                sizes[entry.scope] = sizes.get(entry.scope, 0) + 1
        return max(max(sizes.values(), default=1) - k, 1, (run_depth or 0) - k), True
    extra = max(max((d for d in depths if d is not None), default=k) - k, 1)
    if run_depth is not None and run_depth - k > extra:
        return run_depth - k, True
    return extra, False
