"""An evaluation's result records: per query (:class:`QueryResult`), per system (:class:`RetrieverResult`, also
:data:`SystemResult`), the timings, and the whole :class:`Evaluation`; the means they report."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentmemory.collection import Collection
from agentmemory.errors import ParameterError
from agentmemory.evaluation.answer_runs import (
    AnswerSystem,
)
from agentmemory.evaluation.options import EvalOptions, Relevance
from agentmemory.evaluation.runfiles import RunFile
from agentmemory.evaluation.system_runs import SystemRun
from agentmemory.metrics import Measure, defined
from agentmemory.metrics.provenance import Credited
from agentmemory.metrics.tieaware import TieReport
from agentmemory.records import Event, Hit, MemoryEntry
from agentmemory.retrievers import (
    RetrieverSpec,
)
from agentmemory.store.core import MemoryStore

__all__ = [
    "returns_memories",
    "seed_measures",
    "Evaluation",
    "QueryResult",
    "RetrieverResult",
    "SystemResult",
    "Timings",
    "TIE_FIELDS",
    "defined_mean",
    "mean",
    "tie_means",
    "tie_values",
]


def seed_measures(k: int) -> tuple[str, str, str]:
    """The seed write-up's three measures at cutoff ``k`` as result keys: ``R@k``, ``P@k``, ``RR`` (whose mean is MRR).

    They are the measures behind the seed table's columns ``mean_recall@k``,
    ``mean_precision@k`` and ``MRR``, in that order: the one place that names them.
    """
    return (str(Measure("R", k)), str(Measure("P", k)), str(Measure("RR")))


def returns_memories(systems: Sequence[SystemRun], runs: Sequence[RunFile]) -> bool:
    """A memory system among ``systems``, or a run of ``runs`` with its own memories file."""
    return bool(systems) or any(r.memories_path is not None for r in runs)


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean with exactly rounded summation (:func:`math.fsum`); 0.0 when empty."""
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


TIE_FIELDS = ("value_under_rule", "expected", "minimum", "maximum")
"""The fields of a tie report whose headline means a result reports (:func:`tie_means`), in that order."""


def tie_values(report: TieReport) -> list[float]:
    """A tie report's :data:`TIE_FIELDS`, in order."""
    return [getattr(report, name) for name in TIE_FIELDS]


def tie_means(
    measures: Iterable[str], rows: Sequence[Mapping[str, Sequence[float]] | None]
) -> dict[str, dict[str, float]]:
    """Per measure of ``measures`` (in order) that every row reports, the :func:`mean` of each of
    :data:`TIE_FIELDS` over ``rows`` (the headline queries' tie reports, each ``measure -> values`` as
    :func:`tie_values` gives them, ``None`` for a query whose ties were not analysed); empty when there is no
    row or one is ``None``.  Exactly rounded sums: the means do not depend on the rows' order."""
    if not rows or any(row is None for row in rows):
        return {}
    kept = [r for r in rows if r is not None]
    wanted = [m for m in measures if all(m in r for r in kept)]
    return {m: {f: mean(r[m][i] for r in kept) for i, f in enumerate(TIE_FIELDS)} for m in wanted}


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
    which reports read below the top k; ``stand_ins`` a replayed memory
    system's memories standing in for entries under ``direct`` relevance
    (:attr:`~agentmemory.evaluation.runfiles.RunFile.stand_ins`, read through
    :meth:`returned_id`).  ``means`` are over the headline
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
    stand_ins: Mapping[str, Mapping[str, str]] = field(default_factory=dict, repr=False, compare=False)

    def returned_id(self, query_id: str, entry_id: str) -> str:
        """The id whose text the system returned for hit ``entry_id`` of ``query_id``: the memory standing in for
        that entry under ``direct`` relevance, else ``entry_id`` itself."""
        return self.stand_ins.get(query_id, {}).get(entry_id, entry_id)

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
        expectation, minimum and maximum (empty when ties were not analysed): :func:`tie_means`."""
        rows = [None if q.ties is None else {m: tie_values(t) for m, t in q.ties.items()} for q in self.headline]
        return tie_means(self.means, rows)

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
    :class:`~agentmemory.evaluation.options.EvalOptions` it ran with, kept
    once (``k``, ``seed``, ``relevance``, ``lenient_run`` and ``as_of`` read
    it); ``measures`` every measure computed.  ``tokenizer`` describes
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
    measures: tuple[Measure, ...]
    results: tuple[RetrieverResult, ...]
    unjudged_query_ids: tuple[str, ...]
    events: tuple[Event, ...]
    specs: tuple[RetrieverSpec, ...] = ()
    store: MemoryStore | None = field(default=None, repr=False, compare=False)
    unscored: tuple[str, ...] = ()
    runs: tuple[RunFile, ...] = ()
    systems: tuple[SystemRun, ...] = field(default=(), repr=False, compare=False)
    options: EvalOptions = field(default_factory=EvalOptions, compare=False)
    tokenizer: Mapping[str, Any] | None = None
    original: Evaluation | None = field(default=None, repr=False, compare=False)
    answers: tuple[AnswerSystem, ...] = field(default=(), repr=False, compare=False)

    @property
    def k(self) -> int:
        """The rank cutoff (``options.k``)."""
        return self.options.k

    @property
    def seed(self) -> int:
        """The seed of the event ids and the statistics (``options.seed``)."""
        return self.options.seed

    @property
    def relevance(self) -> Relevance:
        """How a hit counted (``options.relevance``, resolved by :func:`~agentmemory.evaluation.runner.evaluate`)."""
        return self.options.mode

    @property
    def lenient_run(self) -> bool:
        """Whether unusable run lines were dropped and listed (``options.lenient_run``)."""
        return self.options.lenient_run

    @property
    def as_of(self) -> bool:
        """Whether each query saw only the memories created by its ``asked_at`` (``options.as_of``)."""
        return self.options.as_of

    @property
    def returns_memories(self) -> bool:
        """Whether a system returns its own memories (a memory system, or a run file with its memories file):
        the token-budget measures are then among the defaults (:func:`~agentmemory.evaluation.options.default_measures_for`)."""
        return returns_memories(self.systems, self.runs)

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


SystemResult = RetrieverResult
"""The result of one system (a retriever or a run file); :class:`RetrieverResult` under its general name."""
