"""Hybrid retrieval: fuse the rankings of two or more retrievers.

``hybrid[of=bm25+dense,method=rrf,rrf_k=60,depth=100]`` (the defaults).
Each component (any retriever spec, with its own brackets:
``of=bm25[k1=0.9]+dense``) indexes every entry the hybrid gets.  For a query,
each component ``i`` gives ``run_i``: its top ``depth`` hits by its own
ranking rule, plus any further hit whose score ties with the ``depth``-th
(so an entry id never decides whether an entry is a candidate).  The
candidates are the **union** of the runs, so an entry only one component
finds is fused too (fusing only one component's top k drops the others'
hits: mem0 #5742).  An entry in no run scores 0 and is never returned.

**method=rrf** (reciprocal rank fusion, Cormack et al. 2009)::

    score(d) = sum over i with d in run_i of  1 / (rrf_k + rank_i(d))
    rank_i(d) = 1 + the number of hits of run_i scoring strictly more than d

``rank_i`` is the position in the component's ranking, except that tied
scores share the best rank of their tie (competition ranking, 1-2-2-4):
entries a component cannot tell apart fuse alike, and the id order that
breaks the component's ties does not leak into the fused scores.

**method=convex** (convex combination of min-max-normalised scores)::

    score(d) = sum over i of  w_i * norm_i(d)
    norm_i(d) = (s_i(d) - min_i) / (max_i - min_i)   if d is in run_i and max_i > min_i
              = 1                                    if d is in run_i and max_i == min_i (a constant run)
              = 0                                    if d is not in run_i

``s_i(d)`` is component i's score, ``min_i`` and ``max_i`` the lowest and
highest score of ``run_i``; the weights ``w_i`` (``weights=0.5+0.5``,
default equal, ``1 / number of components`` each) are ``>= 0`` and sum to 1.
An entry at the bottom of every run it is in fuses to 0 and, like every zero
score, is not returned.

Exactly how: each term is computed in float64 as written (``1.0 / (rrf_k +
rank)``; ``w_i * ((s - min_i) / (max_i - min_i))``) and the terms are summed
from 0.0 in component order, so equal inputs give bit-identical scores.
**Ties** follow the ranking rule of :mod:`agentmemory.retrievers.base`:
fused score descending, then entry id descending.

**Sharing.**  The components are the index (``index_params() == ("of",)``);
:meth:`Hybrid.with_params` gives another fusion (method, rrf_k, depth,
weights) over the same components, and the hybrids sharing them keep each
query's component runs (per ``depth``) once computed, so a grid of fusion
settings asks each component once per query.

The hybrid ranks no deeper than ``depth``: ``search(query, k)`` with ``k >
depth`` is refused (a :class:`~agentmemory.errors.ParameterError`), so an
evaluation's cutoff can never exceed what was fused (an evaluation at cutoff
k looks at k + 1 hits, to see ties).  :meth:`Hybrid.explain` gives each
component's rank, score and contribution.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentmemory.errors import ParameterError, UnknownNameError, check_positive_int
from agentmemory.records import Hit, MemoryEntry, Query
from agentmemory.retrievers.base import DocTable, as_query, has_capability, rank_candidates
from agentmemory.retrievers.registry import resolve_retriever
from agentmemory.retrievers.spec import format_value

__all__ = ["FUSION_METHODS", "ComponentPart", "Hybrid", "HybridExplanation"]

FUSION_METHODS = {"rrf": "RRF", "convex": "convex"}
"""The fusion methods by parameter value, with their name in labels."""

DEFAULT_OF = ("bm25", "dense")
DEFAULT_RRF_K = 60
DEFAULT_DEPTH = 100


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _components(of: Any) -> list[Any]:
    """The component specs (two or more), resolved; ParameterError otherwise."""
    items = [of] if isinstance(of, str) or not isinstance(of, (list, tuple)) else list(of)
    if len(items) < 2:
        raise ParameterError(
            "hybrid of",
            of,
            "names fewer than two retrievers",
            "fuse two or more, joined by '+': hybrid[of=bm25+dense]",
        )
    specs = []
    for item in items:
        try:
            spec = resolve_retriever(item)
        except UnknownNameError as err:
            raise UnknownNameError("hybrid component", err.value, err.choices) from None
        if spec.shared:
            raise ParameterError(
                "hybrid component",
                spec.key,
                "is a retriever instance",
                "give a name, a spec or a factory: each hybrid (one per scope) makes its own components",
            )
        specs.append(spec)
    keys = [s.key for s in specs]
    twice = next((k for k in keys if keys.count(k) > 1), None)
    if twice is not None:
        raise ParameterError("hybrid of", keys, f"names {twice!r} twice", "fuse different retrievers")
    return specs


def _method(method: Any) -> str:
    if method not in FUSION_METHODS:
        raise UnknownNameError("hybrid method", method, FUSION_METHODS)
    return method


def _weights(weights: Any, n: int, method: str) -> tuple[float, ...]:
    if weights is None:
        return tuple(1.0 / n for _ in range(n)) if method == "convex" else ()
    if method != "convex":
        raise ParameterError(
            "hybrid weights", weights, "are given with method=rrf", "weights apply to method=convex; drop them for RRF"
        )
    values = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    if len(values) != n or not all(_is_number(w) for w in values):
        raise ParameterError(
            "hybrid weights",
            weights,
            f"are not {n} numbers",
            f"give one finite weight per component ({n}), joined by '+', e.g. weights=0.7+0.3 for two",
        )
    if any(w < 0 for w in values) or abs(math.fsum(values) - 1.0) > 1e-9:
        raise ParameterError(
            "hybrid weights", weights, "are not a convex combination", "give weights >= 0 that sum to 1, e.g. 0.7+0.3"
        )
    return tuple(float(w) for w in values)


def _label(labels: Sequence[str], method: str, extras: dict[str, Any]) -> str:
    inner = " + ".join(labels)
    if extras:
        inner += "; " + ", ".join(f"{k}={format_value(v)}" for k, v in extras.items())
    return f"Hybrid {FUSION_METHODS[method]} ({inner})"


@dataclass(frozen=True, slots=True)
class ComponentPart:
    """One component's part of an entry's fused score (see :meth:`Hybrid.explain`).

    ``rank`` is the entry's rank in the component's run as RRF uses it
    (tied scores share the best rank), ``score`` the component's score; both
    are ``None`` when the entry is not among the component's candidates.
    ``contribution`` is its term of the fused sum.
    """

    key: str
    label: str
    rank: int | None
    score: float | None
    contribution: float


def top_with_ties(retriever: Any, query: Query, depth: int) -> list[Hit]:
    """``retriever``'s top ``depth`` hits, plus every further hit whose score ties with the ``depth``-th.

    So an entry id (the ranking rule's tie-break) never decides whether an
    entry is a candidate: equal scores are in or out together.  It asks for
    ``depth + 1`` hits, and deeper (doubling) while the tie goes on, but never
    deeper than a retriever's own ``max_k`` (a nested ``hybrid`` or
    ``recency`` ranks at most its depth).
    """
    cap = retriever.max_k if has_capability(retriever, "max_k") else None
    ask = depth + 1 if cap is None else min(depth + 1, cap)
    hits = retriever.search(query, ask)
    while (
        len(hits) == ask
        and len(hits) > depth
        and hits[-1].score == hits[depth - 1].score
        and (cap is None or ask < cap)
    ):
        ask = ask * 2 if cap is None else min(ask * 2, cap)
        hits = retriever.search(query, ask)
    if len(hits) <= depth:
        return hits
    cut = hits[depth - 1].score
    return hits[:depth] + [h for h in hits[depth:] if h.score == cut]


def query_key(query: Query) -> tuple[Any, ...] | None:
    """What a retriever's answer to ``query`` can depend on, as a dict key (``None`` when a value is unhashable)."""
    key = (query.id, query.text, query.tags, query.scope, query.asked_at, tuple(sorted(query.metadata.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def shared_ranks(run: Sequence[Hit]) -> list[int]:
    """Each hit's rank with tied scores sharing the best rank of their tie ("1224" competition ranking).

    ``run`` is in the ranking rule's order, so a tie is a run of equal scores;
    the id order inside it decides positions but not this rank.
    """
    ranks: list[int] = []
    for i, hit in enumerate(run):
        ranks.append(ranks[-1] if i and hit.score == run[i - 1].score else i + 1)
    return ranks


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True, slots=True)
class HybridExplanation:
    """:meth:`Hybrid.explain`'s answer: one :class:`ComponentPart` per component, in component order.

    ``matched`` are the labels of the components that rank the entry within
    their top ``depth``, ``missing`` those that do not; ``score`` is the
    fused score (the contributions summed from 0.0 in component order).
    """

    parts: tuple[ComponentPart, ...]
    method: str
    depth: int

    @property
    def score(self) -> float:
        total = 0.0
        for p in self.parts:
            total += p.contribution
        return total

    @property
    def matched(self) -> tuple[str, ...]:
        """The components that rank the entry in their top ``depth``."""
        return tuple(p.label for p in self.parts if p.rank is not None)

    @property
    def missing(self) -> tuple[str, ...]:
        """The components that do not rank it in their top ``depth``."""
        return tuple(p.label for p in self.parts if p.rank is None)

    def _terms(self) -> str:
        terms = []
        for p in self.parts:
            if p.rank is None:
                continue
            terms.append(f"{p.label} ranks it {_ordinal(p.rank)} (score {p.score:.3g}, adds {p.contribution:.4f})")
        return "; ".join(terms)

    def hit_reason(self) -> str:
        """Why it was retrieved: each component's rank and what it adds to the fused score."""
        fused = f"fused {FUSION_METHODS[self.method]} score {self.score:.4f}"
        absent = f"; not in the top {self.depth} of {', '.join(self.missing)}" if self.missing else ""
        return f"{self._terms()}{absent}: {fused}"

    def miss_reason(self) -> str:
        """Why it scored too low: the components that rank it (and what they add) and those that do not."""
        if not self.matched:
            return f"none of {', '.join(self.missing)} ranks it in its top {self.depth}, so its fused score is 0"
        return self.hit_reason()


class Hybrid:
    """Fusion of two or more retrievers' rankings (formulas, candidates and ties in the module docstring).

    Args:
        of: the components: retriever specs (a list; in a spec, joined by ``+``).
        method: ``rrf`` (default) or ``convex``.
        rrf_k: RRF's constant, a number >= 0 (default 60); only for ``rrf``.
        depth: how many of each component's hits are fused, an int >= 1 (default 100).
        weights: ``convex`` only: one weight >= 0 per component, summing to 1 (default equal).

    Raises:
        ParameterError: fewer than two components, an unknown component, a
            component given as an instance, an unknown method, bad weights,
            ``rrf_k`` or ``depth``.
    """

    name = "hybrid"
    label = "Hybrid RRF (BM25 + Dense (wordllama))"

    @staticmethod
    def spec_label(params: dict[str, Any]) -> str:
        """The label of ``hybrid[...]`` with ``params`` (those differing from the defaults)."""
        specs = _components(params.get("of", DEFAULT_OF))
        method = _method(params.get("method", "rrf"))
        extras: dict[str, Any] = {k: params[k] for k in ("rrf_k", "depth", "weights") if k in params}
        return _label([s.label for s in specs], method, extras)

    def __init__(
        self,
        of: Sequence[Any] = DEFAULT_OF,
        method: str = "rrf",
        rrf_k: float = DEFAULT_RRF_K,
        depth: int = DEFAULT_DEPTH,
        weights: Sequence[float] | None = None,
    ) -> None:
        specs = self._configure(of, method, rrf_k, depth, weights)
        self._components = [s.new() for s in specs]
        self._docs = DocTable()
        self._runs_kept: dict[tuple[Any, ...], list[list[Hit]]] | None = None  # once shared: see with_params

    def _configure(
        self,
        of: Sequence[Any] = DEFAULT_OF,
        method: str = "rrf",
        rrf_k: float = DEFAULT_RRF_K,
        depth: int = DEFAULT_DEPTH,
        weights: Sequence[float] | None = None,
    ) -> list[Any]:
        """Check the parameters and set everything but the components and the index; the component specs."""
        specs = _components(of)
        self.method = _method(method)
        if not _is_number(rrf_k) or rrf_k < 0:
            raise ParameterError(
                "hybrid rrf_k", rrf_k, "is not a number >= 0", "RRF adds 1 / (rrf_k + rank); the usual rrf_k is 60"
            )
        if self.method != "rrf" and rrf_k != DEFAULT_RRF_K:
            raise ParameterError(
                "hybrid rrf_k", rrf_k, "is given with method=convex", "rrf_k applies to method=rrf; drop it"
            )
        self.rrf_k = rrf_k
        self.depth = check_positive_int("hybrid depth", depth)
        self.weights = _weights(weights, len(specs), self.method)
        self._specs = specs
        extras: dict[str, Any] = {}
        if self.method == "rrf" and rrf_k != DEFAULT_RRF_K:
            extras["rrf_k"] = rrf_k
        if self.depth != DEFAULT_DEPTH:
            extras["depth"] = self.depth
        if weights is not None:
            extras["weights"] = list(weights)  # as given, so that the label is the spec's
        self.label = _label([s.label for s in specs], self.method, extras)
        return specs

    @staticmethod
    def index_params() -> tuple[str, ...]:
        """``of``: the components are the index; the fusion (method, rrf_k, depth, weights) is scoring (capability)."""
        return ("of",)

    def with_params(self, params: Mapping[str, Any]) -> Hybrid:
        """Another fusion (``params``: method, rrf_k, depth, weights; ``of`` as this one's) of the same components.

        The two share the components and their index, so an add to either
        reaches both, and the components' runs: each query's run of each
        component (at each ``depth``) is computed once, by whichever of them
        is asked first, and kept for the others until the next add.  Its
        results are those of ``Hybrid(**params)`` given the same entries.

        Raises:
            ParameterError: bad parameters, or ``of`` names other components.
        """
        other = object.__new__(Hybrid)
        try:
            specs = other._configure(**params)
        except TypeError as err:
            raise ParameterError(
                "hybrid parameters",
                sorted(params),
                f"are not the hybrid's: {err}",
                "give of, method, rrf_k, depth, weights",
            ) from None
        if [s.key for s in specs] != [s.key for s in self._specs]:
            raise ParameterError(
                "hybrid of",
                [s.key for s in specs],
                f"fuses other retrievers than this hybrid ({', '.join(s.key for s in self._specs)})",
                "with_params changes only the fusion (method, rrf_k, depth, weights); make a new hybrid for others",
            )
        if self._runs_kept is None:
            self._runs_kept = {}
        other._components = self._components
        other._docs = self._docs
        other._runs_kept = self._runs_kept
        return other

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "of": [s.key for s in self._specs],
            "method": self.method,
            "depth": self.depth,
        }
        if self.method == "rrf":
            out["rrf_k"] = self.rrf_k
        else:
            out["weights"] = list(self.weights)
        out["components"] = [
            {"key": s.key, "label": s.label, "params": c.params()} for s, c in zip(self._specs, self._components)
        ]
        return out

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, entries: Iterable[MemoryEntry]) -> None:
        """Add ``entries`` to every component (checked once first, so a bad batch changes none)."""
        batch = list(entries)
        if not batch:
            return
        ids = [e.id for e in batch]
        self._docs.check_new(ids)
        for entry in batch:
            if not isinstance(entry.text, str):
                raise ParameterError("entry.text", entry.text, "is not a str", "every entry needs a text string")
        if self._runs_kept is not None:
            self._runs_kept.clear()  # every hybrid sharing these components sees the new entries
        for component in self._components:
            component.add(batch)
        self._docs.extend(ids, checked=True)

    def _check_k(self, k: int) -> int:
        k = check_positive_int("k", k)
        if k > self.depth:
            raise ParameterError(
                "k",
                k,
                f"is more than the hybrid's depth = {self.depth}",
                f"it fuses each component's top {self.depth}, so it ranks no deeper: raise depth to at least {k} "
                f"(hybrid[...,depth={k}]; an evaluation at cutoff k looks at k + 1 hits)",
            )
        return k

    @property
    def max_k(self) -> int:
        """The deepest search this retriever answers: its ``depth``."""
        return self.depth

    def _runs(self, query: Query) -> list[list[Hit]]:
        kept = self._runs_kept
        key = None if kept is None else query_key(query)
        if kept is None or key is None:
            return [top_with_ties(c, query, self.depth) for c in self._components]
        runs = kept.get((self.depth, key))
        if runs is None:
            runs = kept[(self.depth, key)] = [top_with_ties(c, query, self.depth) for c in self._components]
        return runs

    def _fuse(self, runs: list[list[Hit]]) -> dict[str, float]:
        """Fused score of every candidate (the union of the runs), summed in component order."""
        fused: dict[str, float] = {}
        if self.method == "rrf":
            for run in runs:
                for hit, rank in zip(run, shared_ranks(run)):
                    fused[hit.entry_id] = fused.get(hit.entry_id, 0.0) + 1.0 / (self.rrf_k + rank)
            return fused
        for run in runs:
            for hit in run:
                fused.setdefault(hit.entry_id, 0.0)
        for weight, run in zip(self.weights, runs):
            if not run:
                continue
            low = min(h.score for h in run)
            high = max(h.score for h in run)
            for hit in run:
                norm = (hit.score - low) / (high - low) if high > low else 1.0
                fused[hit.entry_id] += weight * norm
        return fused

    def score_all(self, query: Query | str) -> dict[str, float]:
        """Every candidate with a positive fused score: entry id -> score (unordered)."""
        fused = self._fuse(self._runs(as_query(query)))
        return {i: s for i, s in fused.items() if s > 0}

    def search(self, query: Query | str, k: int) -> list[Hit]:
        """The top ``k`` candidates by fused score, ties by entry id descending; ``k`` at most ``depth``."""
        k = self._check_k(k)
        fused = self._fuse(self._runs(as_query(query)))
        if not fused:
            return []
        ids = list(fused)
        scores = np.fromiter(fused.values(), dtype=np.float64, count=len(ids))
        return rank_candidates(np.arange(len(ids)), scores, k, ids)

    def explain(self, query: Query | str, entry_id: str) -> HybridExplanation:
        """Each component's rank, score and contribution to ``entry_id``'s fused score."""
        if entry_id not in self._docs.pos:
            raise ParameterError("entry_id", entry_id, "is not indexed", "pass the id of an indexed entry")
        runs = self._runs(as_query(query))
        parts = []
        for i, (spec, run) in enumerate(zip(self._specs, runs)):
            at = next((j for j, h in enumerate(run) if h.entry_id == entry_id), None)
            if at is None:
                parts.append(ComponentPart(spec.key, spec.label, None, None, 0.0))
                continue
            hit, rank = run[at], shared_ranks(run)[at]
            if self.method == "rrf":
                part = 1.0 / (self.rrf_k + rank)
            else:
                low = min(h.score for h in run)
                high = max(h.score for h in run)
                part = self.weights[i] * ((hit.score - low) / (high - low) if high > low else 1.0)
            parts.append(ComponentPart(spec.key, spec.label, rank, hit.score, part))
        return HybridExplanation(tuple(parts), self.method, self.depth)
