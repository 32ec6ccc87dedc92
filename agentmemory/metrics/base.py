"""Measures as values: a registry of measure definitions, aliases and a parser.

A :class:`Measure` is a name from :data:`REGISTRY` plus a checked cutoff,
hashable, with a canonical text form (``P@5``, ``RR``, ``RR@5``, ``nDCG@10``,
``Rprec``).  :func:`parse_measure` turns text (aliases allowed, case ignored)
back into one.  The numbers come from the pure helpers, one module each
(:mod:`.precision`, :mod:`.recall`, ...), whose docstrings state the formulas.

Every measure follows trec_eval (``-l 1``): a document is relevant when its
judged grade is >= 1; unjudged documents are not relevant; a query with no
relevant judged document scores 0.0 on every measure.  The ranking is taken
as given (rank 1 first): order scored documents with
:func:`agentmemory.trec.trec_order` first to get trec_eval's tie rule.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.metrics.average_precision import average_precision
from agentmemory.metrics.ndcg import ndcg
from agentmemory.metrics.precision import precision
from agentmemory.metrics.r_precision import r_precision
from agentmemory.metrics.recall import recall
from agentmemory.metrics.reciprocal_rank import reciprocal_rank
from agentmemory.metrics.success import success

__all__ = [
    "ALIASES",
    "REGISTRY",
    "CutoffRule",
    "Measure",
    "MeasureDef",
    "compute_measures",
    "parse_measure",
    "parse_measures",
]


class CutoffRule(enum.Enum):
    """Whether a measure takes a cutoff ``@k``."""

    REQUIRED = "required"
    OPTIONAL = "optional"
    FORBIDDEN = "forbidden"


@dataclass(frozen=True, slots=True)
class MeasureDef:
    """What the registry knows about one measure.

    Attributes:
        name: the canonical name (``"P"``, ``"nDCG"``, ...).
        function: the pure helper; called as ``function(ranking, qrels, k)``,
            or ``function(ranking, qrels)`` when the cutoff is forbidden.
        cutoff: whether ``@k`` is required, optional or forbidden.
        description: one line, naming the trec_eval equivalent.
    """

    name: str
    function: Callable[..., float]
    cutoff: CutoffRule
    description: str


REGISTRY: dict[str, MeasureDef] = {
    definition.name: definition
    for definition in (
        MeasureDef(
            "P",
            precision,
            CutoffRule.REQUIRED,
            "precision: relevant in the top k / k (trec_eval P_k)",
        ),
        MeasureDef(
            "R",
            recall,
            CutoffRule.REQUIRED,
            "recall: relevant in the top k / all relevant judged (trec_eval recall_k)",
        ),
        MeasureDef(
            "RR",
            reciprocal_rank,
            CutoffRule.OPTIONAL,
            "reciprocal rank of the first relevant document, 0 if none in the top k"
            " (uncut: trec_eval recip_rank); its mean is MRR",
        ),
        MeasureDef(
            "nDCG",
            ndcg,
            CutoffRule.REQUIRED,
            "normalised DCG, gain = grade, discount log2(rank + 1) (trec_eval ndcg_cut_k)",
        ),
        MeasureDef(
            "AP",
            average_precision,
            CutoffRule.REQUIRED,
            "average precision: sum of P@i at relevant ranks i <= k / all relevant judged (trec_eval map_cut_k)",
        ),
        MeasureDef(
            "Success",
            success,
            CutoffRule.REQUIRED,
            "1 if a relevant document is in the top k, else 0 (trec_eval success_k)",
        ),
        MeasureDef(
            "Rprec",
            r_precision,
            CutoffRule.FORBIDDEN,
            "precision at rank R, R = number of relevant judged documents (trec_eval Rprec)",
        ),
    )
}
"""Canonical measure name -> definition."""

ALIASES: dict[str, str] = {
    "precision": "P",
    "recall": "R",
    "MRR": "RR",
    "recip_rank": "RR",
    "MAP": "AP",
    "map_cut": "AP",
    "ndcg_cut": "nDCG",
    "hit_rate": "Success",
    "R-precision": "Rprec",
}
"""Other accepted spellings -> canonical name.  :func:`parse_measure` ignores
case for these and for the canonical names (``mrr``, ``NDCG`` and ``p`` work)."""

_LOOKUP: dict[str, str] = {
    **{name.casefold(): name for name in REGISTRY},
    **{alias.casefold(): name for alias, name in ALIASES.items()},
}
_CUTOFF_TEXT = re.compile(r"[+-]?[0-9]+")
_CUTOFF_PROBLEMS = {
    "missing": "is missing",
    "forbidden": "is not allowed",
    "not_int": "is not an integer",
    "below_1": "is less than 1",
}


def _name_choices() -> list[str]:
    return sorted(REGISTRY) + sorted(ALIASES)


def _cutoff_problem(definition: MeasureDef, cutoff: object) -> tuple[str, str] | None:
    """``(kind, allowed)`` when ``cutoff`` does not suit ``definition``, else ``None``.

    ``kind`` is one of ``missing``, ``forbidden``, ``not_int``, ``below_1``.
    """
    name = definition.name
    must = f"the cutoff must be an integer >= 1, e.g. {name}@10"
    if cutoff is None:
        if definition.cutoff is CutoffRule.REQUIRED:
            return "missing", f"{name} needs a cutoff k, an integer >= 1: write {name}@k, e.g. {name}@10"
        return None
    if definition.cutoff is CutoffRule.FORBIDDEN:
        return "forbidden", f"{name} takes no cutoff: write {name}"
    if isinstance(cutoff, bool) or not isinstance(cutoff, int):
        return "not_int", must
    if cutoff < 1:
        return "below_1", must
    return None


@dataclass(frozen=True, slots=True)
class Measure:
    """One measure: a canonical name from :data:`REGISTRY` and a cutoff.

    Construct it directly (``Measure("P", 5)``) or from text with
    :func:`parse_measure`.  ``str(measure)`` is the canonical text (``P@5``,
    ``RR``, ``RR@10``, ``Rprec``), which :func:`parse_measure` maps back to an
    equal measure.

    Raises:
        UnknownNameError: ``name`` is not a canonical name (aliases are only
            resolved by :func:`parse_measure`).
        ParameterError: the cutoff is missing where required (P, R, nDCG, AP,
            Success), given where forbidden (Rprec), or not an integer >= 1.
    """

    name: str
    cutoff: int | None = None

    def __post_init__(self) -> None:
        definition = REGISTRY.get(self.name)
        if definition is None:
            raise UnknownNameError("metric", self.name, sorted(REGISTRY))
        problem = _cutoff_problem(definition, self.cutoff)
        if problem is not None:
            kind, allowed = problem
            raise ParameterError("cutoff", self.cutoff, _CUTOFF_PROBLEMS[kind], allowed)

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"

    @property
    def definition(self) -> MeasureDef:
        """The registry entry of this measure."""
        return REGISTRY[self.name]

    def compute(self, ranking: Sequence[str], qrels: Mapping[str, int]) -> float:
        """The measure for one query.

        Args:
            ranking: document ids in rank order, rank 1 first, each at most once
                (ties already broken, e.g. by :func:`agentmemory.trec.trec_order`).
            qrels: judged relevance per document id of this query (grades may be
                0 or negative; relevant means >= 1).

        Raises:
            ParameterError: a document id appears twice in ``ranking``.
        """
        _check_distinct(ranking)
        return self._compute(ranking, qrels)

    def _compute(self, ranking: Sequence[str], qrels: Mapping[str, int]) -> float:
        definition = REGISTRY[self.name]
        if definition.cutoff is CutoffRule.FORBIDDEN:
            return definition.function(ranking, qrels)
        return definition.function(ranking, qrels, self.cutoff)


def _check_distinct(ranking: Sequence[str]) -> None:
    seen: set[str] = set()
    for doc in ranking:
        if doc in seen:
            raise ParameterError(
                "ranking",
                doc,
                "appears twice",
                "list each document once (trec_eval stops on duplicate documents too)",
            )
        seen.add(doc)


def parse_measure(text: str) -> Measure:
    """Turn ``name`` or ``name@k`` into a :class:`Measure`.

    ``name`` is a canonical name (``P R RR nDCG AP Success Rprec``) or an
    alias from :data:`ALIASES`, in any case; surrounding whitespace is
    ignored.  ``k`` is an integer >= 1 in ASCII digits.  Examples:
    ``parse_measure("recall@5") == Measure("R", 5)``,
    ``parse_measure("MRR") == Measure("RR")``,
    ``parse_measure("MRR@5") == Measure("RR", 5)``.

    Raises:
        UnknownNameError: the name is not known; lists the names and aliases.
        ParameterError: the cutoff is missing, forbidden or not an integer >= 1.
    """
    if not isinstance(text, str):
        raise ParameterError("metric", text, "is not text", "give a name such as 'P@5' or 'RR'")
    stripped = text.strip()
    name_text, at, cutoff_text = stripped.partition("@")
    canonical = _LOOKUP.get(name_text.strip().casefold())
    if canonical is None:
        raise UnknownNameError("metric", text, _name_choices())
    definition = REGISTRY[canonical]
    cutoff: object = None
    if at:
        cutoff_text = cutoff_text.strip()
        cutoff = int(cutoff_text) if _CUTOFF_TEXT.fullmatch(cutoff_text) else cutoff_text
    problem = _cutoff_problem(definition, cutoff)
    if problem is not None:
        kind, allowed = problem
        wording = {
            "missing": "has no cutoff",
            "forbidden": "has a cutoff",
            "not_int": f"has cutoff {cutoff!r}, which is not an integer",
            "below_1": f"has cutoff {cutoff!r}, which is less than 1",
        }
        raise ParameterError("metric", text, wording[kind], allowed)
    return Measure(canonical, cutoff)  # type: ignore[arg-type]


def parse_measures(spec: str | Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse several measures: ``"P@5,R@5,MRR"`` or an iterable of texts/Measures.

    The result keeps the given order.

    Raises:
        UnknownNameError, ParameterError: as :func:`parse_measure`; also when
            ``spec`` names no measure or the same measure twice (after
            resolving aliases, so ``"MRR,RR"`` is rejected), or when a comma
            separates nothing (``"P@5,,RR"``).
    """
    if isinstance(spec, str):
        if not spec.strip():
            raise ParameterError("metrics", spec, "names no measure", "give at least one, e.g. 'P@5,RR'")
        items: list[str | Measure] = list(spec.split(","))
        if any(not item.strip() for item in items):
            raise ParameterError(
                "metrics", spec, "has an empty item", "separate measures by single commas, e.g. 'P@5,RR'"
            )
    else:
        items = list(spec)
    measures: list[Measure] = []
    for item in items:
        if isinstance(item, Measure):
            measure = item
        elif isinstance(item, str):
            measure = parse_measure(item)
        else:
            raise ParameterError("metric", item, "is neither text nor a Measure", "give a name such as 'P@5'")
        if measure in measures:
            shown = spec if isinstance(spec, str) else items
            raise ParameterError("metrics", shown, f"names {measure} twice", "list each measure once")
        measures.append(measure)
    if not measures:
        raise ParameterError("metrics", items, "names no measure", "give at least one, e.g. 'P@5,RR'")
    return tuple(measures)


def compute_measures(measures: Iterable[Measure], ranking: Sequence[str], qrels: Mapping[str, int]) -> dict[str, float]:
    """Every measure for one query, keyed by ``str(measure)`` in the given order.

    See :meth:`Measure.compute` for ``ranking`` and ``qrels``.

    Raises:
        ParameterError: an item of ``measures`` is not a :class:`Measure`
            (parse text with :func:`parse_measures` first), or a document id
            appears twice in ``ranking``.
    """
    _check_distinct(ranking)
    values: dict[str, float] = {}
    for measure in measures:
        if not isinstance(measure, Measure):
            raise ParameterError(
                "measures",
                measure,
                "is not a Measure",
                f"parse text first, e.g. with parse_measures({measure!r})",
            )
        values[str(measure)] = measure._compute(ranking, qrels)
    return values
