"""Judgments through provenance: a derived memory counts through the judged sources it came from.

Benchmarks judge the *source* turns (LoCoMo's evidence, LongMemEval's answer
sessions); memory systems store what an agent *derived* from them
(summaries, extracted facts).  With ``relevance="provenance"`` a retrieved
entry is relevant when its ``derived_from`` chain reaches a judged-relevant
entry, and the measures count **evidence**: which relevant sources the top k
reached.  This is how LoCoMo's own harness scores retrieval (the fraction of
evidence turns found).  trec_eval has no equivalent (expanding the qrels
instead would change recall's denominator), so these numbers form their own
family, named ``provenance`` in artifacts and captions.

Definitions, for one query with ranking ``h_1, h_2, ...`` (the top ``k``):

* ``S``: the relevant sources, every entry judged with grade >= 1 (a
  judged entry that is itself derived counts once, as a source of its own);
  ``g(s)`` its grade.
* ``reach(h)``: the relevant sources ``h`` reaches: ``h`` itself if it is
  in ``S``, and every entry of ``S`` among its ancestors (``derived_from``,
  transitively).
* Credits: walking the hits in rank order, each source is **credited once**,
  to the first hit that reaches it; ``new(h_i)`` are the sources first
  credited at rank ``i``.
* ``P@k = |{i <= k : reach(h_i) != {}}| / k`` (hits that reach at least one
  relevant source; a hit reaching an already credited source still counts).
* ``R@k = |union of new(h_i), i <= k| / |S|`` (so recall never exceeds 1).
* ``RR = 1 / min{i : reach(h_i) != {}}`` (0 when no hit reaches a source);
  ``RR@k`` the same within the top k.
* ``Success@k = 1`` when some ``h_i``, ``i <= k``, reaches a source.
* ``AP@k = (1 / |S|) * sum over i <= k of |new(h_i)| * P@i`` (each source
  credited once, at the precision of the rank that first reached it).
* ``Rprec = |union of new(h_i), i <= |S|| / |S|``.
* ``nDCG@k``: walking the top ``k`` hits in rank order, a hit takes one
  place when it credits no new source or one, and one place per source when
  it credits several (highest grade first, ties by id descending); a place
  holding source ``s`` gains ``g(s)``, any other gains 0.
  ``DCG@k = sum over places j <= k of gain_j / log2(j + 1)``; ``IDCG@k`` is
  the same sum over ``S`` sorted by grade descending, one source per place
  (trec_eval's ideal); ``nDCG@k = DCG@k / IDCG@k`` (0 when ``S`` is empty).
  When no hit credits more than one source the places are the ranks: each
  source's gain counted once, at the rank of the first hit that reaches it.
  A hit crediting several takes several places (the hits after it move
  down), which keeps ``nDCG@k <= 1``.

With no derived entries (every hit reaches at most itself) each of these
equals its trec_eval definition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentmemory.errors import ParameterError, quote
from agentmemory.records import MemoryEntry

__all__ = ["Credited", "ancestors_of", "credit"]


def ancestors_of(entries: Iterable[MemoryEntry]) -> dict[str, frozenset[str]]:
    """Every entry's ancestors: the ids its ``derived_from`` chain reaches, transitively (itself excluded).

    Raises:
        ParameterError: a ``derived_from`` id is not among ``entries`` (names
            both ids), or the chains form a cycle (names the ids on it).
    """
    parents: dict[str, tuple[str, ...]] = {e.id: e.provenance.derived_from for e in entries}
    for child, sources in parents.items():
        for source in sources:
            if source not in parents:
                raise ParameterError(
                    "derived_from",
                    source,
                    f"is named by entry {quote(child)} but is not in the corpus",
                    "derived_from may only name entries of the same collection",
                )
    done: dict[str, frozenset[str]] = {}
    for start in parents:
        if start in done:
            continue
        # Iterative depth-first walk; ``path`` holds the chain being explored, to report a cycle.
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = [start]
        on_path = {start}
        while stack:
            node, index = stack[-1]
            sources = parents[node]
            if index < len(sources):
                stack[-1] = (node, index + 1)
                nxt = sources[index]
                if nxt in on_path:
                    cycle = path[path.index(nxt) :] + [nxt]
                    raise ParameterError(
                        "derived_from",
                        nxt,
                        "is part of a cycle: " + " -> ".join(repr(i) for i in cycle),
                        "an entry cannot be derived, directly or not, from itself",
                    )
                if nxt not in done:
                    stack.append((nxt, 0))
                    path.append(nxt)
                    on_path.add(nxt)
                continue
            stack.pop()
            path.pop()
            on_path.discard(node)
            reached: set[str] = set()
            for source in sources:
                reached.add(source)
                reached |= done[source]
            done[node] = frozenset(reached)
    return done


@dataclass(frozen=True)
class Credited:
    """One query's ranking seen through provenance (see the module docstring).

    Attributes:
        sources: the relevant sources ``S`` with their grades.
        reach: per rank, the relevant sources the hit reaches.
        new: per rank, the sources first credited there, highest grade first, ties by id descending.
        lengths: per rank, the token length of the hit's own text (what the
            budget measures read, :mod:`agentmemory.metrics.budget`), or
            ``None`` when not counted.
    """

    sources: Mapping[str, int]
    reach: tuple[frozenset[str], ...]
    new: tuple[tuple[str, ...], ...]
    lengths: Sequence[int] | None = None

    def useful(self, k: int) -> int:
        """Hits in the top ``k`` that reach at least one relevant source."""
        return sum(1 for r in self.reach[:k] if r)

    def credited(self, k: int) -> int:
        """Sources credited within the top ``k``."""
        return sum(len(n) for n in self.new[:k])

    def first_rank(self, k: int | None = None) -> int | None:
        """The rank of the first hit reaching a relevant source (within the top ``k``), or None."""
        depth = self.reach if k is None else self.reach[:k]
        return next((i for i, r in enumerate(depth, start=1) if r), None)


def credit(
    ranking: Sequence[str],
    qrels: Mapping[str, int],
    ancestors: Mapping[str, frozenset[str]],
    lengths: Sequence[int] | None = None,
) -> Credited:
    """Credit the relevant sources of ``qrels`` to the hits of ``ranking`` (rank order), each source once.

    ``ancestors`` maps an entry id to its ancestors (:func:`ancestors_of`);
    an id missing there has none.  ``lengths`` (the token length of each
    hit's text) is kept as :attr:`Credited.lengths`.
    """
    sources = {d: g for d, g in qrels.items() if g >= 1}
    reach: list[frozenset[str]] = []
    new: list[tuple[str, ...]] = []
    seen: set[str] = set()
    empty: frozenset[str] = frozenset()
    for hit in ranking:
        reached = {hit} if hit in sources else set()
        reached |= {a for a in ancestors.get(hit, empty) if a in sources}
        fresh = sorted(reached - seen, key=lambda s: (sources[s], s), reverse=True)
        seen.update(fresh)
        reach.append(frozenset(reached))
        new.append(tuple(fresh))
    return Credited(sources, tuple(reach), tuple(new), lengths)
