"""The records a measure is made of: its definition, its cutoff rule and what it sees of one query.

This module imports nothing else of :mod:`agentmemory.metrics`, so every
measure module (:mod:`.precision`, :mod:`.ndcg`, ...) can import it without a
cycle.  The registry and the parser live in :mod:`.base`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from agentmemory.errors import ParameterError
from agentmemory.registry import NAME_PATTERN

if TYPE_CHECKING:  # only for annotations: importing them here would be a cycle (or NumPy for nothing)
    import numpy as np

    from agentmemory.metrics.provenance import Credited
    from agentmemory.metrics.tie_context import TieContext
    from agentmemory.records import Query

__all__ = ["DIRECTIONS", "CutoffRule", "MeasureDef", "QueryContext"]

DIRECTIONS: tuple[str, ...] = ("higher", "lower")
"""What :attr:`MeasureDef.direction` takes: which values of the measure are better."""


class CutoffRule(enum.Enum):
    """Whether a measure takes a cutoff ``@k``.

    ``OPTIONAL`` promises that the cutoff only limits what is looked at: the
    measure at ``@k`` on a ranking equals the uncut measure on the ranking's
    top ``k`` (``RR@k``; not nDCG, whose cutoff also cuts the ideal ranking).
    An evaluation shows an uncut measure the top ``k``, so it counts ``RR``
    and ``RR@k`` as one measure
    (:func:`agentmemory.metrics.distinct_measures`).
    """

    REQUIRED = "required"
    OPTIONAL = "optional"
    FORBIDDEN = "forbidden"


class QueryContext(NamedTuple):
    """What a measure's per-query function sees of one query.

    Attributes:
        ranking: distinct ids in rank order, rank 1 first (ties already
            broken, e.g. by :func:`agentmemory.files.trec.trec_order`).
        qrels: judged grade per id of this query (relevant means >= 1).
        k: the measure's cutoff, ``None`` when it has none (``RR``, ``Rprec``).
        scope_ids: the ids of every entry the query could retrieve (its
            scope: the whole store, or its conversation, or its haystack), or
            ``None`` when unknown (``agentmemory score`` has only a run and
            qrels).  The trec_eval measures ignore it; a measure that needs it
            (an ideal ranking of the gold items present in the haystack)
            decides what ``None`` means: fall back, or raise
            :class:`~agentmemory.errors.ParameterError`.
        query: the query itself (its ``metadata`` carries what a loader knows
            beyond the judgments, e.g. BEAM's outdated evidence), or ``None``
            when unknown (``agentmemory score``); a measure that needs it
            raises :class:`~agentmemory.errors.ParameterError` without it.
        session_of: the collection's entry-to-session mapping, an entry id to
            its session's id (:attr:`Collection.session_of
            <agentmemory.datasets.collection.Collection>`: LoCoMo's
            ``<sample_id>/D3:7 -> <sample_id>/S3``), or ``None`` when none is
            known; the ``sess.`` measures then use LongMemEval's rule (the id
            without its last ``_`` part).
    """

    ranking: Sequence[str]
    qrels: Mapping[str, int]
    k: int | None
    scope_ids: Set[str] | None = None
    query: Query | None = None
    session_of: Callable[[str], str] | None = None

    @property
    def cutoff(self) -> int:
        """``k`` for a measure whose cutoff is required (never ``None`` then)."""
        if self.k is None:
            raise ParameterError("k", None, "is missing", "this measure needs a cutoff, an integer >= 1")
        return self.k


@dataclass(frozen=True, slots=True)
class MeasureDef:
    """Everything about one measure: register it with :func:`agentmemory.metrics.register_measure`.

    Attributes:
        name: the canonical name (``"P"``, ``"nDCG"``): letters, digits,
            ``_ . + -`` (no ``@`` or commas, so ``name@k`` and ``"P@5,RR"`` parse).
        function: the value for one query, ``function(QueryContext) -> float``.
        cutoff: whether ``@k`` is required, optional or forbidden.
        description: one line naming the trec_eval equivalent (or the family
            the measure comes from, e.g. LongMemEval).
        batch: optional NumPy kernel, ``batch(ranked, k) -> ndarray`` (one value
            per query of a :class:`~agentmemory.metrics.ranked.Ranked`; ``k``
            is ``None`` without a cutoff); it must equal ``function`` exactly
            (``==``) with ``scope_ids=None``, as :func:`agentmemory.metrics.scoring.score_run`
            uses it only on runs without scopes.  Without it, ``score_run``
            scores per query (same numbers, slower).
        tie_aware: optional expectation over all orderings of tied scores,
            ``tie_aware(TieContext) -> float`` (see :mod:`agentmemory.metrics.tieaware`).
            Without it, :func:`agentmemory.metrics.tieaware.tie_report` gives ``None``
            for the measure.
        provenance: optional value under judgments through provenance,
            ``provenance(credited, k) -> float`` over a
            :class:`~agentmemory.metrics.provenance.Credited` ranking (each relevant
            source credited once, to the first hit whose ``derived_from``
            chain reaches it); ``evaluate(..., relevance="provenance")``
            computes only the measures that have one and names the others.
        whole_ranking: the measure may look below its own cutoff (LongMemEval's
            ``sess.*`` widen it until k sessions appear), so an evaluation
            hands it each query's whole ranking instead of the top ``k``.
        family: which family of definitions the measure follows, as reports
            name it beside its numbers: ``"trec_eval"`` for the built-in
            trec_eval measures, ``"LongMemEval"`` for the official LongMemEval
            ones (:mod:`agentmemory.metrics.longmemeval_official`); ``None`` when not
            stated (a plugin's, unless it says).
        direction: ``"higher"`` (the default) when higher values are better,
            ``"lower"`` when lower ones are (``stale@k``); the comparison
            table's markers and counts follow it.
        aliases: other accepted spellings (``("precision",)`` for ``P``).
            Names and aliases are matched ignoring case; none may be taken by
            another registered measure.  They belong to the definition so that
            an installed measure (an entry point in the group
            ``agentmemory.measures``) brings its own, and replacing or
            unregistering a measure takes its aliases with it.

    Raises:
        ParameterError: a field has the wrong type, the name or an alias is
            not a valid name, the description is not one line, or an alias
            repeats the name or another alias (ignoring case).
    """

    name: str
    function: Callable[[QueryContext], float]
    cutoff: CutoffRule
    description: str
    batch: Callable[..., np.ndarray] | None = None  # (ranked, k), k None when the measure has no cutoff
    tie_aware: Callable[[TieContext], float] | None = None
    aliases: tuple[str, ...] = ()
    provenance: Callable[[Credited, int | None], float] | None = None
    family: str | None = None
    whole_ranking: bool = False
    direction: str = "higher"

    def __post_init__(self) -> None:
        _check_name("measure name", self.name)
        if self.direction not in DIRECTIONS:
            raise ParameterError("direction", self.direction, "is not a direction", "give 'higher' or 'lower'")
        if not callable(self.function):
            raise ParameterError("function", self.function, "is not callable", "give function(QueryContext) -> float")
        if not isinstance(self.cutoff, CutoffRule):
            raise ParameterError(
                "cutoff", self.cutoff, "is not a CutoffRule", "give CutoffRule.REQUIRED, OPTIONAL or FORBIDDEN"
            )
        if not isinstance(self.description, str) or not self.description.strip() or "\n" in self.description:
            raise ParameterError(
                "description", self.description, "is not one line of text", "describe the measure in one line"
            )
        for field, value, shape in (
            ("batch", self.batch, "batch(ranked, k) -> ndarray"),
            ("tie_aware", self.tie_aware, "tie_aware(TieContext) -> float"),
            ("provenance", self.provenance, "provenance(credited, k) -> float"),
        ):
            if value is not None and not callable(value):
                raise ParameterError(field, value, "is not callable", f"give {shape}, or None")
        if not isinstance(self.whole_ranking, bool):
            raise ParameterError("whole_ranking", self.whole_ranking, "is not a bool", "pass True or False")
        if self.family is not None and (
            not isinstance(self.family, str) or not self.family.strip() or "\n" in self.family
        ):
            raise ParameterError(
                "family",
                self.family,
                "is not one line of text",
                "name the family in one line (e.g. 'trec_eval'), or None",
            )
        if isinstance(self.aliases, str) or not isinstance(self.aliases, tuple):
            raise ParameterError("aliases", self.aliases, "is not a tuple", "give a tuple of names, e.g. ('hits',)")
        seen = {self.name.casefold()}
        for alias in self.aliases:
            _check_name("measure alias", alias)
            if alias.casefold() in seen:
                raise ParameterError(
                    "measure alias",
                    alias,
                    f"repeats a name or alias of {self.name} (ignoring case)",
                    "list each spelling once",
                )
            seen.add(alias.casefold())


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ParameterError(
            what,
            name,
            "is not a valid name",
            "use letters, digits, '_', '.', '+' and '-' (no brackets, commas, colons, '=' or spaces), "
            "starting with a letter, a digit or '_'",
        )
