"""Recency: Generative Agents' retrieval score (Park et al., 2023), relevance + recency + importance.

``recency[base=bm25,decay=0.995,weights=1+1+1,depth=100]`` (the defaults).
The candidates of a query are the base retriever's top ``depth`` entries,
plus any further entry tied with the ``depth``-th (``base`` is any retriever
spec; an entry the base does not rank in its top ``depth`` is never
returned).  Each candidate ``d`` scores::

    score(d)     = w_rel * relevance(d) + w_rec * recency(d) + w_imp * importance(d)
    relevance(d) = (s(d) - s_min) / (s_max - s_min)       (1 when s_max == s_min)
    recency(d)   = decay ** hours(d)
    hours(d)     = max(0, (t_query - created_at(d)) in hours)

``s`` is the base retriever's score and ``s_min``, ``s_max`` the lowest and
highest over the candidates (min-max normalisation, so relevance lies in
[0, 1]; recency lies in (0, 1] and importance in [0, 1], so neither is
normalised again).  ``weights`` are ``w_rel+w_rec+w_imp`` (default 1+1+1,
the paper's; its code uses other values), each >= 0, not all 0; ``decay`` is
per hour, in (0, 1] (default 0.995, the paper's).

* ``t_query`` is the query's ``asked_at``; a query without one is measured
  from the newest ``created_at`` among the entries of this retriever (its
  scope), so the newest entry has recency 1.
* An entry **without** ``created_at`` gets recency 0 (its age is unknown:
  it gains nothing from recency); so does every entry when no entry has
  one and the query has no ``asked_at``.
* An entry created after ``t_query`` counts as 0 hours old (recency 1);
  hiding the future from a query is the ``--as-of`` evaluation's job, not
  this score's.
* ``importance`` is the entry's ``metadata["importance"]``, a number in
  [0, 1]; 0.5 when absent (a value outside [0, 1] is refused at ``add``).
* Out of scope: the paper's ``last_accessed`` (recency from the last
  retrieval, updated by every search) is not modelled: a search changes no
  state, so evaluations stay reproducible.

Exactly how: in float64, ``relevance`` as written, ``hours`` from the exact
``timedelta`` (``total_seconds() / 3600``), ``decay ** hours`` with Python's
``**``, and the score ``((w_rel * relevance) + (w_rec * recency)) + (w_imp *
importance)``.  Ranking: score descending, then entry id descending, scores
``<= 0`` dropped (:mod:`agentmemory.retrievers.base`).  The base is the
index (``index_params() == ("base",)``): :meth:`Recency.with_params` scores
the same base's candidates with another decay, weights or depth, and the
recencies sharing a base keep its runs once computed.  ``search(query, k)``
with ``k > depth`` is refused, as for ``hybrid``: there are only ``depth``
candidates to rank.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int
from agentmemory.records import Hit, MemoryEntry, Query, is_aware
from agentmemory.retrievers.base import DocTable, as_query, capabilities, rank_candidates
from agentmemory.retrievers.hybrid import query_key, top_with_ties
from agentmemory.retrievers.registry import resolve_retriever
from agentmemory.retrievers.spec import format_value

__all__ = ["DEFAULT_IMPORTANCE", "Recency", "RecencyExplanation"]

DEFAULT_IMPORTANCE = 0.5
"""The importance of an entry whose metadata has none."""

DEFAULT_WEIGHTS = (1.0, 1.0, 1.0)
DEFAULT_DECAY = 0.995
DEFAULT_DEPTH = 100


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _base(base: Any) -> Any:
    try:
        spec = resolve_retriever(base)
    except UnknownNameError as err:
        raise UnknownNameError("recency base", err.value, err.choices) from None
    if spec.shared:
        raise ParameterError(
            "recency base",
            spec.key,
            "is a retriever instance",
            "give a name, a spec or a factory: each recency retriever (one per scope) makes its own base",
        )
    return spec


def _label(base_label: str, extras: dict[str, Any]) -> str:
    inner = base_label
    if extras:
        inner += "; " + ", ".join(f"{k}={format_value(v)}" for k, v in extras.items())
    return f"Recency ({inner})"


def _weights(weights: Any) -> tuple[float, float, float]:
    values = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    if len(values) != 3 or not all(_is_number(w) and w >= 0 for w in values) or not any(w > 0 for w in values):
        raise ParameterError(
            "recency weights",
            weights,
            "are not three numbers >= 0, not all 0",
            "give w_relevance+w_recency+w_importance, e.g. weights=1+1+1 (the default)",
        )
    return (float(values[0]), float(values[1]), float(values[2]))


def _importance(entry: MemoryEntry) -> float:
    value = entry.metadata.get("importance", None) if entry.metadata else None
    if value is None:
        return DEFAULT_IMPORTANCE
    if not _is_number(value) or not 0 <= value <= 1:
        raise ParameterError(
            f"entry {entry.id!r} metadata importance",
            value,
            "is not a number in [0, 1]",
            f"give importance in [0, 1], or leave it out (default {DEFAULT_IMPORTANCE})",
        )
    return float(value)


def _hours(now: datetime | None, created: datetime | None) -> float | None:
    if now is None or created is None:
        return None
    return max(0.0, (now - created).total_seconds() / 3600.0)


@dataclass(frozen=True)
class RecencyExplanation:
    """The three parts of an entry's score (see :meth:`Recency.explain`).

    ``candidate`` is false when the base retriever does not rank the entry
    in its top ``depth`` (then ``score`` is 0 and the parts are ``None``).
    ``hours`` is ``None`` when the entry has no ``created_at`` or there is no
    time to measure from (recency 0); ``time_from`` says what the query time
    was (``"the query's asked_at"`` or ``"the newest entry"``).
    ``matched`` and ``missing`` are the base retriever's (its query words,
    for BM25), empty when it has no ``explain``.
    """

    entry_id: str
    candidate: bool
    base_label: str
    depth: int
    weights: tuple[float, float, float]
    decay: float
    base_score: float | None
    relevance: float | None
    candidates: int
    hours: float | None
    recency: float | None
    time_from: str
    created_known: bool
    importance: float
    importance_given: bool
    score: float
    base_explanation: Any = None

    @property
    def matched(self) -> tuple[str, ...]:
        return tuple(getattr(self.base_explanation, "matched", ()))

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(getattr(self.base_explanation, "missing", ()))

    def _sum(self) -> str:
        if self.hours is None:
            why = "it has no created_at" if not self.created_known else "no asked_at and no entry time to measure from"
            rec = f"recency 0.00 ({why})"
        else:
            rec = (
                f"recency {self.recency:.2f} ({self.hours:.1f} hours before {self.time_from}, x{self.decay:g} per hour)"
            )
        parts = [
            f"relevance {self.relevance:.2f} ({self.base_label} {self.base_score:.3g}, min-max over {self.candidates} candidates)",
            rec,
            f"importance {self.importance:.2f}{'' if self.importance_given else ' (the default)'}",
        ]
        shown = [p if w == 1 else f"{w:g} x {p}" for w, p in zip(self.weights, parts)]
        return " + ".join(shown) + f" = {self.score:.3f}"

    def hit_reason(self) -> str:
        """Why it was retrieved: its three parts and their weighted sum."""
        if not self.candidate:
            return self.miss_reason()
        return self._sum()

    def miss_reason(self) -> str:
        """Why it scored too low: not a candidate of the base retriever, or its three parts."""
        if not self.candidate:
            why = f"{self.base_label} does not rank it in its top {self.depth}, so recency never scores it"
            inner = getattr(self.base_explanation, "miss_reason", None)
            return why + (f" ({inner()})" if callable(inner) else "")
        return "it scores " + self._sum()


class Recency:
    """Generative Agents' relevance + recency + importance over a base retriever's candidates (module docstring).

    Args:
        base: the relevance retriever, any retriever spec (default ``bm25``).
        decay: recency's factor per hour, in (0, 1] (default 0.995).
        weights: ``w_relevance``, ``w_recency``, ``w_importance``, each >= 0, not all 0 (default 1, 1, 1).
        depth: how many of the base's hits are candidates, an int >= 1 (default 100).

    Raises:
        ParameterError: an unknown base, or a bad ``decay``, ``weights`` or ``depth``.
    """

    name = "recency"
    label = "Recency (BM25)"

    @staticmethod
    def spec_label(params: dict[str, Any]) -> str:
        """The label of ``recency[...]`` with ``params`` (those differing from the defaults)."""
        spec = _base(params.get("base", "bm25"))
        return _label(spec.label, {k: params[k] for k in ("decay", "weights", "depth") if k in params})

    def __init__(
        self,
        base: Any = "bm25",
        decay: float = DEFAULT_DECAY,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        depth: int = DEFAULT_DEPTH,
    ) -> None:
        spec = self._configure(base, decay, weights, depth)
        self._base = spec.new()
        self._docs = DocTable()
        self._created: list[datetime | None] = []
        self._importance: list[float] = []
        self._given: list[bool] = []
        self._newest: datetime | None = None
        self._runs_kept: dict[tuple[Any, ...], list[Hit]] | None = None  # once shared: see with_params

    def _configure(
        self,
        base: Any = "bm25",
        decay: float = DEFAULT_DECAY,
        weights: Sequence[float] = DEFAULT_WEIGHTS,
        depth: int = DEFAULT_DEPTH,
    ) -> Any:
        """Check the parameters and set everything but the base retriever and the index; the base's spec."""
        spec = _base(base)
        if not _is_number(decay) or not 0 < decay <= 1:
            raise ParameterError(
                "recency decay",
                decay,
                "is not a number in (0, 1]",
                "recency = decay ** hours; the paper's decay is 0.995",
            )
        self.decay = float(decay)
        self.weights = _weights(weights)
        self.depth = check_positive_int("recency depth", depth)
        self._spec = spec
        extras: dict[str, Any] = {}  # as given, so that the label is the spec's (weights=1+2+1, not 1.0+2.0+1.0)
        if self.decay != DEFAULT_DECAY:
            extras["decay"] = decay
        if self.weights != DEFAULT_WEIGHTS:
            extras["weights"] = list(weights)
        if self.depth != DEFAULT_DEPTH:
            extras["depth"] = self.depth
        self.label = _label(spec.label, extras)
        return spec

    @staticmethod
    def index_params() -> tuple[str, ...]:
        """``base``: its index is the index; decay, weights and depth are scoring (capability)."""
        return ("base",)

    def with_params(self, params: Mapping[str, Any]) -> Recency:
        """Another scoring (``params``: decay, weights, depth; ``base`` as this one's) of the same base and entries.

        The two share the base retriever, the entries' times and importance,
        and the base's runs (each query's candidates at each ``depth``,
        computed once by whichever is asked first); so neither takes more
        entries afterwards (``add`` refuses).  Its results are those of
        ``Recency(**params)`` given the same entries.

        Raises:
            ParameterError: bad parameters, or ``base`` names another retriever.
        """
        other = object.__new__(Recency)
        try:
            spec = other._configure(**params)
        except TypeError as err:
            raise ParameterError(
                "recency parameters", sorted(params), f"are not recency's: {err}", "give base, decay, weights, depth"
            ) from None
        if spec.key != self._spec.key:
            raise ParameterError(
                "recency base",
                spec.key,
                f"is another retriever than this recency's ({self._spec.key})",
                "with_params changes only the scoring (decay, weights, depth); make a new recency for another base",
            )
        if self._runs_kept is None:
            self._runs_kept = {}
        other._base = self._base
        other._docs = self._docs
        other._created = self._created
        other._importance = self._importance
        other._given = self._given
        other._newest = self._newest
        other._runs_kept = self._runs_kept
        return other

    def params(self) -> dict[str, Any]:
        return {
            "base": self._spec.key,
            "decay": self.decay,
            "weights": list(self.weights),
            "depth": self.depth,
            "importance_default": DEFAULT_IMPORTANCE,
            "base_params": self._base.params(),
        }

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        """Index ``entries`` in the base retriever and keep their ``created_at`` and importance."""
        batch = list(entries)
        if not batch:
            return
        if self._runs_kept is not None:
            raise ParameterError(
                "entries",
                [e.id for e in batch[:3]],
                "cannot be added: this recency shares its index with another (with_params)",
                "make a new recency retriever for a grown collection",
            )
        ids = [e.id for e in batch]
        self._docs.check_new(ids)
        importance = [_importance(e) for e in batch]
        for entry in batch:
            if entry.created_at is not None and not is_aware(entry.created_at):
                raise ParameterError(
                    f"entry {entry.id!r} created_at",
                    entry.created_at,
                    "is not a timezone-aware datetime",
                    "give created_at with a timezone (e.g. tzinfo=timezone.utc), or None when unknown",
                )
        self._base.add(batch)
        # commit
        self._docs.extend(ids, checked=True)
        self._created.extend(e.created_at for e in batch)
        self._importance.extend(importance)
        self._given.extend(e.metadata.get("importance") is not None if e.metadata else False for e in batch)
        stamps = [e.created_at for e in batch if e.created_at is not None]
        if stamps:
            newest = max(stamps)
            self._newest = newest if self._newest is None else max(self._newest, newest)

    @property
    def max_k(self) -> int:
        """The deepest search this retriever answers: its ``depth``."""
        return self.depth

    def _now(self, query: Query) -> tuple[datetime | None, str]:
        if query.asked_at is not None:
            return query.asked_at, "the query's asked_at"
        if self._newest is not None:
            return self._newest, "the newest entry"
        return None, ""

    def _check_k(self, k: int) -> int:
        k = check_positive_int("k", k)
        if k > self.depth:
            raise ParameterError(
                "k",
                k,
                f"is more than the recency depth = {self.depth}",
                f"its candidates are the base retriever's top {self.depth}: raise depth to at least {k} "
                f"(recency[...,depth={k}]; an evaluation at cutoff k looks at k + 1 hits)",
            )
        return k

    def _scored(self, query: Query) -> tuple[list[Hit], np.ndarray]:
        """The base's candidates and their scores (formula in the module docstring), in candidate order."""
        kept = self._runs_kept
        key = None if kept is None else query_key(query)
        if kept is None or key is None:
            run = top_with_ties(self._base, query, self.depth)
        else:
            run = kept.get((self.depth, key)) or []
            if (self.depth, key) not in kept:
                run = kept[(self.depth, key)] = top_with_ties(self._base, query, self.depth)
        if not run:
            return run, np.zeros(0)
        low = min(h.score for h in run)
        high = max(h.score for h in run)
        now, _ = self._now(query)
        w_rel, w_rec, w_imp = self.weights
        pos = self._docs.pos
        scores = np.empty(len(run))
        for i, hit in enumerate(run):
            number = pos[hit.entry_id]
            relevance = (hit.score - low) / (high - low) if high > low else 1.0
            hours = _hours(now, self._created[number])
            recency = 0.0 if hours is None else self.decay**hours
            scores[i] = ((w_rel * relevance) + (w_rec * recency)) + (w_imp * self._importance[number])
        return run, scores

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every candidate with a positive score: entry id -> score (unordered)."""
        run, scores = self._scored(as_query(query))
        return {h.entry_id: s for h, s in zip(run, scores.tolist()) if s > 0}

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """The top ``k`` candidates by score, ties by entry id descending; ``k`` at most ``depth``."""
        k = self._check_k(k)
        run, scores = self._scored(as_query(query))
        if not run:
            return []
        ids = [h.entry_id for h in run]
        return rank_candidates(np.arange(len(ids)), scores, k, ids)

    def explain(self, query: Query | str, entry_id: str) -> RecencyExplanation:
        """The three parts of ``entry_id``'s score for ``query`` (see :class:`RecencyExplanation`)."""
        number = self._docs.pos.get(entry_id)
        if number is None:
            raise ParameterError("entry_id", entry_id, "is not indexed", "pass the id of an indexed entry")
        query = as_query(query)
        run, scores = self._scored(query)
        base_why = self._base.explain(query, entry_id) if "explain" in capabilities(self._base) else None
        at = next((i for i, h in enumerate(run) if h.entry_id == entry_id), None)
        now, source = self._now(query)
        hours = _hours(now, self._created[number])
        common = dict(
            entry_id=entry_id,
            base_label=self._spec.label,
            depth=self.depth,
            weights=self.weights,
            decay=self.decay,
            candidates=len(run),
            hours=hours,
            time_from=source,
            created_known=self._created[number] is not None,
            importance=self._importance[number],
            importance_given=self._given[number],
            base_explanation=base_why,
        )
        if at is None:
            return RecencyExplanation(
                candidate=False,
                base_score=None,
                relevance=None,
                recency=None,
                score=0.0,
                **common,
            )
        hit = run[at]
        low = min(h.score for h in run)
        high = max(h.score for h in run)
        return RecencyExplanation(
            candidate=True,
            base_score=hit.score,
            relevance=(hit.score - low) / (high - low) if high > low else 1.0,
            recency=0.0 if hours is None else self.decay**hours,
            score=float(scores[at]),
            **common,
        )
