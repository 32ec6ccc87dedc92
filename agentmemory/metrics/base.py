"""Measures as values: an open registry of measure definitions, their aliases and a parser.

A :class:`Measure` is a name from :data:`REGISTRY` plus a checked cutoff,
hashable, with a canonical text form (``P@5``, ``RR``, ``RR@5``, ``nDCG@10``,
``Rprec``).  :func:`parse_measure` turns text (aliases allowed, case ignored)
back into one.  Each measure is one :class:`~.definition.MeasureDef`, kept
in its own module (:mod:`.precision`, :mod:`.recall`, ...) with its pure
helper (whose docstring states the formula), its NumPy batch kernel and its
tie-aware expectation.

The registry is open: :func:`register_measure` adds a measure at run time,
and an installed package adds one through an entry point in the group
``agentmemory.measures`` whose object is a ``MeasureDef`` (its aliases are
the definition's ``aliases``).  :func:`parse_measure`, :class:`Measure` and
every list of valid choices read the live registry, so a measure registered
at run time parses at once.

Every built-in measure of the trec_eval family (``P R RR nDCG AP Success
Rprec bpref``) follows trec_eval (``-l 1``): a document is relevant when its judged
grade is >= 1; unjudged documents are not relevant; a query with no relevant
judged document scores 0.0 on every measure.  The LongMemEval family
(``recall_any recall_all ndcg_any`` and their ``sess.`` versions,
:mod:`.longmemeval_official`) follows LongMemEval's official scripts instead, quirks
included (``recall_all`` is 1.0 with no gold item).  The budget family
(:mod:`.budget`: ``R@512tok``, ``nDCG@512tok``, ``P@512tok``,
``Success@512tok``, ``tokens@first``) reads a ranking by the tokens of its
texts instead of by rank: a cutoff is a rank ``k`` or a token budget
``<T>tok``, and a budget selects the measure's budget form
(``MeasureDef.budget_form``), its own definition.  Each definition's
``family`` says which family it is.  The ranking
is taken as given (rank 1 first): order scored documents with
:func:`agentmemory.files.trec.trec_order` first to get trec_eval's tie rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from agentmemory.errors import NumberTextError, ParameterError, PluginError, UnknownNameError, quote
from agentmemory.files.numbers import parse_integer
from agentmemory.metrics.definition import (
    BUDGET_SUFFIX,
    FIRST,
    AnswerInput,
    Budget,
    CutoffRule,
    MeasureDef,
    QueryContext,
)
from agentmemory.records import Query
from agentmemory.registry import Registry

__all__ = [
    "ALIASES",
    "REGISTRY",
    "Measure",
    "as_scope",
    "compute_measures",
    "distinct_measures",
    "parse_measure",
    "parse_measures",
    "register_measure",
    "defined",
]


def _not_a_definition(obj: object) -> ParameterError:
    return ParameterError(
        "measure",
        obj,
        "is not a MeasureDef",
        "register an agentmemory.metrics.MeasureDef (name, per-query function, cutoff rule, description)",
    )


def _check_definition(name: str, obj: Any) -> MeasureDef:
    """What :data:`REGISTRY` stores: ``obj`` itself, once it is a MeasureDef named ``name`` whose
    name and aliases no other measure takes (ignoring case)."""
    if not isinstance(obj, MeasureDef):
        raise _not_a_definition(obj)
    if obj.name != name:
        raise ParameterError(
            "measure name",
            name,
            f"is not the name of its MeasureDef ({obj.name!r})",
            "register a MeasureDef under its own name",
        )
    # Casefolded spelling -> the registered measure that has it.  Installed measures not yet
    # loaded are not read here (that would scan every distribution); each is checked when it loads.
    taken: dict[str, str] = {}
    for definition in REGISTRY.registered().values():
        if definition.name != name:
            for spelling in (definition.name, *definition.aliases):
                taken[spelling.casefold()] = definition.name
    for what, spelling in (("measure name", name), *(("measure alias", alias) for alias in obj.aliases)):
        other = taken.get(spelling.casefold())
        if other is not None:
            raise ParameterError(
                what,
                spelling,
                f"is taken by the measure {other!r} (names and aliases are compared ignoring case)",
                f"choose another spelling, or unregister {other!r} first",
            )
    return obj


REGISTRY: Registry[MeasureDef] = Registry("measure", "agentmemory.measures", _check_definition)
"""Canonical measure name -> :class:`~.definition.MeasureDef`: the built-in measures, those
registered at run time (:func:`register_measure`) and installed ones (entry points in the group
``agentmemory.measures``, loaded on first use).  ``sorted(REGISTRY)`` lists every name."""


def register_measure(definition: MeasureDef, aliases: Iterable[str] = (), *, replace: bool = False) -> MeasureDef:
    """Register ``definition`` under its name; it parses, computes and scores at once.

    Args:
        definition: the measure (see :class:`~.definition.MeasureDef`).
        aliases: more spellings (one text is one alias), added to
            ``definition.aliases``: the stored definition carries them all.
        replace: replace the measure registered under the same name (its
            aliases go with it).

    Returns the stored definition.

    Raises:
        ParameterError: ``definition`` is not a MeasureDef; its name is taken
            (unless ``replace=True``); its name or an alias is a name or alias
            of another measure, ignoring case (``replace`` does not take
            another measure's spelling: unregister that measure first); or an
            alias is not a valid name.
    """
    if not isinstance(definition, MeasureDef):
        raise _not_a_definition(definition)
    extra = (aliases,) if isinstance(aliases, str) else tuple(aliases)
    if extra:
        definition = dataclasses.replace(definition, aliases=(*definition.aliases, *extra))
    return REGISTRY.register(definition.name, definition, replace=replace)


class _Aliases(Mapping[str, str]):
    """Alias -> canonical name, read from the registered definitions at every access."""

    def _table(self) -> dict[str, str]:
        return {alias: d.name for d in REGISTRY.registered().values() for alias in d.aliases}

    def __getitem__(self, alias: str) -> str:
        return self._table()[alias]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"ALIASES({self._table()!r})"


ALIASES: Mapping[str, str] = _Aliases()
"""Other accepted spellings -> canonical name, live: the ``aliases`` of every registered
definition (an installed measure's aliases count once it is loaded).  :func:`parse_measure`
ignores case for these and for the canonical names (``mrr``, ``NDCG`` and ``p`` work)."""

_CUTOFF_PROBLEMS = {
    "missing": "is missing",
    "forbidden": "is not allowed",
    "not_int": "is not an integer",
    "below_1": "is less than 1",
    "no_budget": "is a token budget, which this measure does not take",
    "other": "is not allowed",
}


def _name_choices() -> list[str]:
    """Every name and alias, read now (what an unknown-name error lists)."""
    return sorted(REGISTRY) + sorted(ALIASES)


def _spellings() -> dict[str, str]:
    """Casefolded name or alias -> canonical name, over the measures registered now."""
    table: dict[str, str] = {}
    for definition in REGISTRY.registered().values():
        for spelling in (definition.name, *definition.aliases):
            table[spelling.casefold()] = definition.name
    return table


def _resolve(name: str) -> str | None:
    """The canonical name that ``name`` spells, ignoring case; ``None`` when no measure has it.

    A miss among the registered measures turns to the installed ones not yet
    loaded: the one whose name matches is loaded (its load error, if any, is
    raised); failing that, every one of them is loaded to learn its aliases,
    skipping those that fail to load (they report their error when named).
    """
    key = name.casefold()
    found = _spellings().get(key)
    if found is not None:
        return found
    registered = REGISTRY.registered()
    pending = [other for other in REGISTRY.names() if other not in registered]
    for other in pending:
        if other.casefold() == key:
            REGISTRY.get(other)
            return other
    for other in pending:
        try:
            REGISTRY.get(other)
        except ParameterError:
            continue
    return _spellings().get(key)


def _allowed(definition: MeasureDef) -> tuple[str, str]:
    """``(for a rank cutoff, for any other)``: what ``definition`` takes after its ``@``, in words."""
    name = definition.name
    budget = f"{name} needs a token budget T, an integer >= 1: write {name}@<T>tok, e.g. {name}@512tok"
    if definition.cutoff is CutoffRule.BUDGET:
        return budget, budget
    if definition.cutoff is CutoffRule.FIRST:
        first = f"{name} reads down to the first relevant hit: write {name}@{FIRST}"
        return first, first
    also = f", or a token budget: {name}@<T>tok, e.g. {name}@512tok" if definition.budget_form is not None else ""
    if definition.cutoff is CutoffRule.FORBIDDEN:
        return f"{name} takes no cutoff: write {name}{also}", f"{name} takes no cutoff: write {name}{also}"
    needs = f"{name} needs a cutoff k, an integer >= 1: write {name}@k, e.g. {name}@10{also}"
    if definition.cutoff is CutoffRule.OPTIONAL:
        needs = f"{name} takes an optional cutoff k, an integer >= 1: write {name} or {name}@k, e.g. {name}@10{also}"
    return f"the cutoff must be an integer >= 1, e.g. {name}@10{also}", needs


def _budget_names() -> list[str]:
    """The registered measures that take a token budget (``P@<T>tok, R@<T>tok, ...``), sorted."""
    return sorted(
        f"{d.name}@<T>tok"
        for d in REGISTRY.registered().values()
        if d.budget_form is not None or d.cutoff is CutoffRule.BUDGET
    )


def _cutoff_problem(definition: MeasureDef, cutoff: object) -> tuple[str, str] | None:
    """``(kind, allowed)`` when ``cutoff`` does not suit ``definition`` (the registered one), else ``None``.

    ``kind`` is one of ``missing``, ``forbidden``, ``not_int``, ``below_1``,
    ``no_budget`` (a budget the measure does not take), ``other`` (a rank
    cutoff for a budget or ``@first`` measure).
    """
    for_rank, otherwise = _allowed(definition)
    rule = definition.cutoff
    if cutoff is None:
        missing = rule in (CutoffRule.REQUIRED, CutoffRule.BUDGET, CutoffRule.FIRST)
        return ("missing", otherwise) if missing else None
    if isinstance(cutoff, Budget):
        takes = rule is CutoffRule.BUDGET or definition.budget_form is not None
        return None if takes else ("no_budget", f"{otherwise} (token budgets: {', '.join(_budget_names())})")
    if rule is CutoffRule.FIRST:
        return None if cutoff == FIRST else ("other", otherwise)
    if rule is CutoffRule.BUDGET:
        return "other", otherwise
    if rule is CutoffRule.FORBIDDEN:
        return "forbidden", otherwise
    if isinstance(cutoff, bool) or not isinstance(cutoff, int):
        return "not_int", for_rank
    if cutoff < 1:
        return "below_1", for_rank
    return None


@dataclass(frozen=True, slots=True)
class Measure:
    """One measure: a canonical name from :data:`REGISTRY` and a cutoff.

    Construct it directly (``Measure("P", 5)``, ``Measure("R", Budget(512))``,
    ``Measure("tokens", "first")``) or from text with :func:`parse_measure`.
    ``str(measure)`` is the canonical text (``P@5``, ``RR``, ``RR@10``,
    ``Rprec``, ``R@512tok``, ``tokens@first``), which :func:`parse_measure`
    maps back to an equal measure.

    The cutoff is a rank ``k`` (an int >= 1), a token budget
    (:class:`~.definition.Budget`: the measure's budget form,
    ``MeasureDef.budget_form``), the word ``"first"`` (a measure whose rule is
    :attr:`~.definition.CutoffRule.FIRST`), or ``None``.

    Raises:
        UnknownNameError: ``name`` is not a canonical name (aliases are only
            resolved by :func:`parse_measure`).
        ParameterError: the cutoff is missing where required (P, R, nDCG, AP,
            Success), given where forbidden (Rprec), not an integer >= 1, a
            budget for a measure without a budget form, or not what a budget
            or ``@first`` measure takes.
    """

    name: str
    cutoff: int | Budget | str | None = None
    _text: str = field(init=False, repr=False, compare=False)  # str(self), made once: asked per query and measure

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name not in REGISTRY:
            raise UnknownNameError("metric", self.name, REGISTRY.names())
        definition = REGISTRY[self.name]
        problem = _cutoff_problem(definition, self.cutoff)
        if problem is not None:
            kind, allowed = problem
            raise ParameterError("cutoff", self.cutoff, _CUTOFF_PROBLEMS[kind], allowed)
        object.__setattr__(self, "_text", self.name if self.cutoff is None else f"{self.name}@{self.cutoff}")

    def __str__(self) -> str:
        return self._text

    @property
    def definition(self) -> MeasureDef:
        """The definition this measure is computed by: the registry entry, or its budget form under a budget."""
        registered = REGISTRY[self.name]
        if isinstance(self.cutoff, Budget) and registered.budget_form is not None:
            return registered.budget_form
        return registered

    @property
    def budget(self) -> int | None:
        """The token budget ``T`` of a budget measure (``R@512tok``: 512), else ``None``."""
        return self.cutoff.tokens if isinstance(self.cutoff, Budget) else None

    @property
    def rank_cutoff(self) -> int | None:
        """The rank cutoff ``k`` (``P@5``: 5), ``None`` for a measure without one (``RR``, ``R@512tok``, ``tokens@first``)."""
        return self.cutoff if isinstance(self.cutoff, int) else None

    def compute(
        self,
        ranking: Sequence[str],
        qrels: Mapping[str, int],
        scope_ids: Iterable[str] | None = None,
        query: Query | None = None,
        session_of: Callable[[str], str] | None = None,
        lengths: Sequence[int] | None = None,
    ) -> float | None:
        """The measure for one query: its definition's function on a :class:`~.definition.QueryContext`.

        Args:
            ranking: document ids in rank order, rank 1 first, each at most once
                (ties already broken, e.g. by :func:`agentmemory.files.trec.trec_order`).
            qrels: judged relevance per document id of this query (grades may be
                0 or negative; relevant means >= 1).
            scope_ids: the ids of every entry the query could retrieve, or
                ``None`` when unknown (the trec_eval measures ignore it).
            query: the query, or ``None`` when unknown (``QueryContext.query``).
            session_of: the collection's entry-to-session mapping, or ``None``
                (``QueryContext.session_of``).
            lengths: the token length of each hit of ``ranking``, or ``None``
                (``QueryContext.lengths``; the budget measures and
                ``tokens@first`` need them).

        Returns the value, or ``None`` on a query where the measure has no value
        (only a measure whose ``undefined_when`` says when: ``tokens@first``).

        Raises:
            ParameterError: a document id appears twice in ``ranking``,
                ``scope_ids`` is not a collection of ids, or ``lengths`` is
                needed and missing.
        """
        _check_distinct(ranking)
        return self._compute(ranking, qrels, as_scope(scope_ids), query, session_of, lengths)

    def _compute(
        self,
        ranking: Sequence[str],
        qrels: Mapping[str, int],
        scope_ids: Set[str] | None,
        query: Query | None = None,
        session_of: Callable[[str], str] | None = None,
        lengths: Sequence[int] | None = None,
        answer: AnswerInput | None = None,
    ) -> float | None:
        context = QueryContext(
            ranking, qrels, self.rank_cutoff, scope_ids, query, session_of, self.budget, lengths, answer
        )
        definition = self.definition
        value = definition.function(context)
        if value is None and definition.undefined_when is None:
            raise PluginError(
                "measure",
                str(self),
                None,
                "function",
                "returned None, which only a measure declaring undefined_when may (on a query without a value)",
            )
        return value

    def read_depth(
        self,
        ranking: Sequence[str],
        qrels: Mapping[str, int],
        scope_ids: Set[str] | None = None,
        query: Query | None = None,
        session_of: Callable[[str], str] | None = None,
        lengths: Sequence[int] | None = None,
    ) -> int:
        """How many hits from the top of ``ranking`` this measure reads on one query (the arguments are
        :meth:`compute`'s): its value on those first hits is its value on the whole ``ranking``.

        A measure that reads only its top ``k`` reads ``min(k, len(ranking))``
        (its rank cutoff; without one, the whole ranking it is given); a
        ``whole_ranking`` measure says how deep through ``MeasureDef.reads``
        (the whole ranking when it does not).

        Raises:
            PluginError: ``reads`` returned something other than an int from 0 to ``len(ranking)``.
        """
        definition = self.definition
        if not definition.whole_ranking or definition.reads is None:
            cutoff = None if definition.whole_ranking else self.rank_cutoff
            return len(ranking) if cutoff is None else min(cutoff, len(ranking))
        context = QueryContext(ranking, qrels, self.rank_cutoff, scope_ids, query, session_of, self.budget, lengths)
        depth = definition.reads(context)
        if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= len(ranking):
            raise PluginError(
                "measure", str(self), None, "reads", f"returned {quote(depth)}, not an int from 0 to {len(ranking)}"
            )
        return depth


def defined(value: float | None, measure: object) -> float:
    """``value``, the value of ``measure`` on one query, where only a value will do (a measure with a value on
    every query: the trec_eval and LongMemEval ones, whose functions never return ``None``).

    Raises:
        ParameterError: ``value`` is ``None`` (a measure that may have no value, ``tokens@first``).
    """
    if value is None:
        raise ParameterError(
            "measure",
            str(measure),
            "has no value on this query",
            "read it where a query without one is left out (MeasureDef.undefined_when)",
        )
    return value


def as_scope(scope_ids: Iterable[str] | None) -> Set[str] | None:
    """``scope_ids`` as a set: a set as given, another collection as a frozenset, ``None`` kept.

    Raises:
        ParameterError: ``scope_ids`` is text or not iterable.
    """
    if scope_ids is None or isinstance(scope_ids, Set):
        return scope_ids
    allowed = "give the ids of every entry the query could retrieve (a set, list or tuple), or None"
    if isinstance(scope_ids, str):
        raise ParameterError("scope_ids", scope_ids, "is one text, not a collection of ids", allowed)
    try:
        return frozenset(scope_ids)
    except TypeError:
        raise ParameterError("scope_ids", scope_ids, "is not a collection of ids", allowed) from None


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


def _read_cutoff(text: str) -> object:
    """The cutoff written after ``@``: an int (``5``), a :class:`Budget` (``512tok``), :data:`FIRST`, or the text itself.

    A budget whose number is below 1 is returned as ``(tokens,)`` for the
    message; case is ignored in ``tok`` and ``first``.
    """
    try:  # the integer rule of agentmemory.files.numbers (ASCII digits; at most 4,300 of them)
        return parse_integer(text)
    except NumberTextError:
        pass
    if text.casefold() == FIRST:
        return FIRST
    if text.casefold().endswith(BUDGET_SUFFIX):
        try:
            tokens = parse_integer(text[: -len(BUDGET_SUFFIX)])
        except NumberTextError:
            return text
        return Budget(tokens) if tokens >= 1 else (tokens,)
    return text


def parse_measure(text: str) -> Measure:
    """Turn ``name``, ``name@k``, ``name@<T>tok`` or ``name@first`` into a :class:`Measure`.

    ``name`` is a name of :data:`REGISTRY` (built in: ``P R RR nDCG AP
    Success Rprec``, LongMemEval's, ``stale``, ``tokens``) or an alias from
    :data:`ALIASES`, in any case; surrounding whitespace is ignored.  ``k`` is
    an integer >= 1 in ASCII digits; ``T`` a token budget, an integer >= 1
    followed by ``tok`` (the measure's budget form, ``R@512tok``);
    ``first`` the cutoff of ``tokens@first``.  Examples:
    ``parse_measure("recall@5") == Measure("R", 5)``,
    ``parse_measure("MRR") == Measure("RR")``,
    ``parse_measure("MRR@5") == Measure("RR", 5)``,
    ``parse_measure("recall@512tok") == Measure("R", Budget(512))``.

    Raises:
        UnknownNameError: the name is not known; lists the names and aliases.
        ParameterError: the cutoff is missing, forbidden, not an integer >= 1,
            a budget the measure does not take, or not what a budget or
            ``@first`` measure takes; the message lists what the measure takes.
    """
    if not isinstance(text, str):
        raise ParameterError("metric", text, "is not text", "give a name such as 'P@5' or 'RR'")
    stripped = text.strip()
    name_text, at, cutoff_text = stripped.partition("@")
    canonical = _resolve(name_text.strip())
    if canonical is None:
        raise UnknownNameError("metric", text, _name_choices())
    definition = REGISTRY[canonical]
    cutoff = _read_cutoff(cutoff_text.strip()) if at else None
    if isinstance(cutoff, tuple):
        raise ParameterError(
            "metric", text, f"has budget {cutoff_text.strip()!r}, which is less than 1 token", _allowed(definition)[1]
        )
    problem = _cutoff_problem(definition, cutoff)
    if problem is not None:
        kind, allowed = problem
        wording = {
            "missing": "has no cutoff",
            "forbidden": "has a cutoff",
            "not_int": f"has cutoff {cutoff!r}, which is not an integer",
            "below_1": f"has cutoff {cutoff!r}, which is less than 1",
            "no_budget": "has a token budget",
            "other": f"has cutoff {cutoff_text.strip()!r}",
        }
        raise ParameterError("metric", text, wording[kind], allowed)
    return Measure(canonical, cutoff)  # type: ignore[arg-type]


def parse_measures(spec: str | Iterable[str | Measure], *, name: str = "metrics") -> tuple[Measure, ...]:
    """Parse several measures: ``"P@5,R@5,MRR"`` or an iterable of texts/Measures.

    The result keeps the given order; messages call ``spec`` ``name``.

    Raises:
        UnknownNameError, ParameterError: as :func:`parse_measure`; also when
            ``spec`` names no measure or the same measure twice (after
            resolving aliases, so ``"MRR,RR"`` is rejected), or when a comma
            separates nothing (``"P@5,,RR"``).
    """
    if isinstance(spec, str):
        if not spec.strip():
            raise ParameterError(name, spec, "names no measure", "give at least one, e.g. 'P@5,RR'")
        texts = spec.split(",")
        if any(not item.strip() for item in texts):
            raise ParameterError(name, spec, "has an empty item", "separate measures by single commas, e.g. 'P@5,RR'")
        items: list[str | Measure] = list(texts)
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
            raise ParameterError(name, shown, f"names {measure} twice", "list each measure once")
        measures.append(measure)
    if not measures:
        raise ParameterError(name, items, "names no measure", "give at least one, e.g. 'P@5,RR'")
    return tuple(measures)


def distinct_measures(measures: Iterable[str | Measure], k: int) -> tuple[str, ...]:
    """``measures``' text forms, in order, without those that an evaluation at ``k`` computes twice.

    An evaluation shows a measure without a cutoff the top ``k`` of each
    ranking (:func:`agentmemory.evaluation.runner.measure_depth`).  For a
    measure whose cutoff is optional (``RR``) that is exactly what its cut form
    at ``k`` (``RR@k``) sees (:attr:`CutoffRule.OPTIONAL`'s promise), so the
    two are one measure with the same value on every query: when both are
    listed only the cut form is kept (its name says the cutoff), and a table
    shows it once and a multiple-comparison correction counts it once.  A
    measure listed twice is kept once.
    """
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    texts = [str(m) for m in parsed]
    kept: list[str] = []
    for m, text in zip(parsed, texts):
        same_as_cut = (
            m.cutoff is None
            and m.definition.cutoff is CutoffRule.OPTIONAL
            and not m.definition.whole_ranking
            and str(Measure(m.name, k)) in texts
        )
        if not same_as_cut and text not in kept:
            kept.append(text)
    return tuple(kept)


def compute_measures(
    measures: Iterable[Measure],
    ranking: Sequence[str],
    qrels: Mapping[str, int],
    *,
    scope_ids: Iterable[str] | None = None,
    query: Query | None = None,
    session_of: Callable[[str], str] | None = None,
    lengths: Sequence[int] | None = None,
) -> dict[str, float | None]:
    """Every measure for one query, keyed by ``str(measure)`` in the given order.

    See :meth:`Measure.compute` for ``ranking``, ``qrels``, ``scope_ids``, ``query``, ``session_of`` and
    ``lengths``; a value is ``None`` where the measure has none (``tokens@first`` without a relevant hit).

    Raises:
        ParameterError: an item of ``measures`` is not a :class:`Measure`
            (parse text with :func:`parse_measures` first), a document id
            appears twice in ``ranking``, or ``scope_ids`` is not a
            collection of ids.
    """
    _check_distinct(ranking)
    scope = as_scope(scope_ids)
    values: dict[str, float | None] = {}
    for measure in measures:
        if not isinstance(measure, Measure):
            raise ParameterError(
                "measures",
                measure,
                "is not a Measure",
                f"parse text first, e.g. with parse_measures({measure!r})",
            )
        values[str(measure)] = measure._compute(ranking, qrels, scope, query, session_of, lengths)
    return values
