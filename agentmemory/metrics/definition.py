"""The records a measure is made of: its definition, its cutoff rule and what it sees of one query.

This module imports nothing else of :mod:`agentmemory.metrics`, so every
measure module (:mod:`.precision`, :mod:`.ndcg`, ...) can import it without a
cycle.  The registry and the parser live in :mod:`.base`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from agentmemory.errors import ParameterError
from agentmemory.registry import NAME_PATTERN

if TYPE_CHECKING:  # only for annotations: importing them here would be a cycle (or NumPy for nothing)
    import numpy as np

    from agentmemory.metrics.provenance import Credited
    from agentmemory.metrics.tie_context import TieContext
    from agentmemory.records import Query

__all__ = ["DIRECTIONS", "FIRST", "AnswerInput", "Budget", "CutoffRule", "MeasureDef", "QueryContext"]

DIRECTIONS: tuple[str, ...] = ("higher", "lower")
"""What :attr:`MeasureDef.direction` takes: which values of the measure are better."""


class CutoffRule(enum.Enum):
    """Which cutoff a measure takes after its ``@``.

    ``REQUIRED``, ``OPTIONAL`` and ``FORBIDDEN`` say whether a rank cutoff
    ``@k`` (an integer >= 1) is required, optional or not allowed.
    ``BUDGET`` requires a token budget ``@<T>tok`` (an integer >= 1 followed
    by ``tok``: ``R@512tok``; a :class:`Budget`).  ``FIRST`` requires the word
    ``@first``: reading stops at the first relevant hit (``tokens@first``).

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
    BUDGET = "budget"
    FIRST = "first"


FIRST = "first"
"""The cutoff of a :attr:`CutoffRule.FIRST` measure, as written after its ``@`` (``tokens@first``)."""

BUDGET_SUFFIX = "tok"
"""What follows the number of a token budget: ``512tok``."""


@dataclass(frozen=True, slots=True)
class Budget:
    """A token budget: the cutoff of a budget measure (``R@512tok`` is ``Measure("R", Budget(512))``).

    ``str(Budget(512)) == "512tok"``.  A ranking is read from the top while
    the cumulative token count of the hits read stays within ``tokens``
    (:mod:`agentmemory.metrics.budget`).

    Raises:
        ParameterError: ``tokens`` is not an integer >= 1.
    """

    tokens: int

    def __post_init__(self) -> None:
        if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 1:
            raise ParameterError(
                "budget", self.tokens, "is not an integer >= 1", "give a number of tokens, e.g. Budget(512)"
            )

    def __str__(self) -> str:
        return f"{self.tokens}{BUDGET_SUFFIX}"


class AnswerInput(NamedTuple):
    """What an answer measure sees of one system's answer to one query (:attr:`QueryContext.answer`).

    Attributes:
        text: the answer the system generated, or ``None`` when it gave none
            (a retriever, or a question an answer file has no answer for).
        verdict: the judges' verdict on it in ``[0, 1]`` (the majority of an
            imported file's verdicts), or ``None`` when nobody judged it.
        texts: the texts of the system's ranking, best first (what it
            retrieved and would hand a reader), or ``None`` when the system
            retrieved nothing it told us (an answer file without retrieval).
    """

    text: str | None
    verdict: float | None
    texts: Sequence[str] | None


class QueryContext(NamedTuple):
    """What a measure's per-query function sees of one query.

    Attributes:
        ranking: distinct ids in rank order, rank 1 first (ties already
            broken, e.g. by :func:`agentmemory.files.trec.trec_order`).
        qrels: judged grade per id of this query (relevant means >= 1).
        k: the measure's rank cutoff, ``None`` when it has none (``RR``,
            ``Rprec``, and every budget measure).
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
            <agentmemory.collection.Collection>`: LoCoMo's
            ``<sample_id>/D3:7 -> <sample_id>/S3``), or ``None`` when none is
            known; the ``sess.`` measures then use LongMemEval's rule (the id
            without its last ``_`` part).
        budget: the token budget ``T`` of a budget measure (``R@512tok``:
            512), ``None`` for every other measure.
        lengths: the token length of each hit of ``ranking`` (same order),
            counted from the text the system returned (an evaluation's token
            counter, :mod:`agentmemory.metrics.tokens`), or ``None`` when no
            text is known (``agentmemory score`` has only a run and qrels).
            It may be computed as it is read, so a measure reads only as far
            as it needs.
        answer: what an answer measure (``MeasureDef.reads_answer``) sees of
            the system's answer (:class:`AnswerInput`); ``None`` for every
            other measure.
    """

    ranking: Sequence[str]
    qrels: Mapping[str, int]
    k: int | None
    scope_ids: Set[str] | None = None
    query: Query | None = None
    session_of: Callable[[str], str] | None = None
    budget: int | None = None
    lengths: Sequence[int] | None = None
    answer: AnswerInput | None = None

    @property
    def cutoff(self) -> int:
        """``k`` for a measure whose cutoff is required (never ``None`` then)."""
        if self.k is None:
            raise ParameterError("k", None, "is missing", "this measure needs a cutoff, an integer >= 1")
        return self.k

    @property
    def tokens(self) -> int:
        """The token budget of a budget measure (never ``None`` then)."""
        if self.budget is None:
            raise ParameterError("budget", None, "is missing", "this measure needs a token budget, e.g. @512tok")
        return self.budget

    @property
    def hit_lengths(self) -> Sequence[int]:
        """:attr:`lengths`, for a measure that reads them.

        Raises:
            ParameterError: no lengths are known (no text of the hits).
        """
        if self.lengths is None:
            raise ParameterError(
                "lengths",
                None,
                "are unknown: this measure counts the tokens of the texts the system returned, and a ranking "
                "scored against qrels alone has none",
                "evaluate with the collection (agentmemory eval --collection ... --run NAME=PATH)",
            )
        return self.lengths


@dataclass(frozen=True, slots=True)
class MeasureDef:
    """Everything about one measure: register it with :func:`agentmemory.metrics.register_measure`.

    Attributes:
        name: the canonical name (``"P"``, ``"nDCG"``): letters, digits,
            ``_ . + -`` (no ``@`` or commas, so ``name@k`` and ``"P@5,RR"`` parse).
        function: the value for one query, ``function(QueryContext) -> float``
            (or ``None`` where the measure is undefined, only when
            ``undefined_when`` says when).
        cutoff: which cutoff the measure takes (:class:`CutoffRule`): ``@k``
            required, optional or forbidden, a token budget ``@<T>tok``, or
            ``@first``.
        description: one line naming the trec_eval equivalent (or the family
            the measure comes from, e.g. LongMemEval).
        batch: optional NumPy kernel, ``batch(ranked, k) -> ndarray`` (one value
            per query of a :class:`~agentmemory.metrics.ranked.Ranked`; ``k``
            is ``None`` without a cutoff); it must equal ``function`` exactly
            (``==``) with ``scope_ids=None``, as :func:`agentmemory.metrics.scoring.score_run`
            uses it only on runs without scopes.  Without it, ``score_run``
            scores per query (same numbers, slower).
        tie_aware: optional expectation over all orderings of tied scores,
            ``tie_aware(TieContext) -> float`` (see :mod:`agentmemory.metrics.tieaware`),
            ``None`` only where the measure has no value (``undefined_when``).
            Without it, :func:`agentmemory.metrics.tieaware.tie_report` gives ``None``
            for the measure.
        provenance: optional value under judgments through provenance,
            ``provenance(credited, cutoff) -> float`` over a
            :class:`~agentmemory.metrics.provenance.Credited` ranking (each relevant
            source credited once, to the first hit whose ``derived_from``
            chain reaches it), ``cutoff`` being the measure's (``k``, or a
            :class:`Budget` read against ``credited.lengths``);
            ``evaluate(..., relevance="provenance")``
            computes only the measures that have one and names the others.
        whole_ranking: the measure may look below its own cutoff (LongMemEval's
            ``sess.*`` widen it until k sessions appear), so an evaluation
            hands it each query's whole ranking instead of the top ``k``.
        reads: for a ``whole_ranking`` measure, how many hits from the top its
            per-query function reads on this query, ``reads(QueryContext) ->
            int`` (0 to ``len(ranking)``): its value on those first hits is its
            value on the whole ranking, so a run cut there re-scores to it
            (``--runs-dir`` writes each ranking as deep as its measures read).
            ``sess.*`` read down to the widened cutoff ``k'``, a budget measure
            down to the hit that crosses its budget, ``tokens@first`` down to
            the first relevant hit.  ``None``: the whole ranking (the safe
            answer for a measure that does not say).
        family: which family of definitions the measure follows, as reports
            name it beside its numbers: ``"trec_eval"`` for the built-in
            trec_eval measures, ``"LongMemEval"`` for the official LongMemEval
            ones (:mod:`agentmemory.metrics.longmemeval_official`), ``"budget"``
            for the context-budget measures (:mod:`agentmemory.metrics.budget`);
            ``None`` when not stated (a plugin's, unless it says).
        direction: ``"higher"`` (the default) when higher values are better,
            ``"lower"`` when lower ones are (``stale@k``); the comparison
            table's markers and counts follow it.
        budget_form: the measure under a token budget (``R@512tok`` beside
            ``R@5``), its own definition (family, description, per-query
            function reading :attr:`QueryContext.budget` and
            :attr:`QueryContext.lengths`), with the same name, no aliases of
            its own (this definition's are its spellings) and cutoff
            :attr:`CutoffRule.BUDGET`; ``None`` when the measure has none.
            :attr:`agentmemory.metrics.Measure.definition` is this form for a
            measure written with a budget.
        reads_lengths: the per-query function reads :attr:`QueryContext.lengths`
            (every budget measure, ``tokens@first``), so an evaluation counts
            the tokens of each hit's text for it.
        undefined_when: when the measure has no value on a query, in one line
            (``tokens@first``: ``"no relevant hit in the ranking"``); its
            per-query function returns ``None`` there, and means, intervals
            and tests leave such queries out, counting them beside the mean.
            ``None`` (the default): the measure has a value on every query.
        reads_answer: the measure scores the system's *answer* (an imported
            verdict, LoCoMo's F1 of the generated answer against the gold
            one, the gold answer found in the retrieved texts) rather than
            the ranking against the judgments: an evaluation hands it
            :attr:`QueryContext.answer`, computes it under every relevance
            mode (it reads no judgment), and on a question left out of
            retrieval scoring too.  Such a measure must declare
            ``undefined_when`` (a system without answers has no value).
        granularity: the unit the measure scores when its definition fixes one
            whatever the collection's entries are: ``"session"`` for
            LongMemEval's ``sess.`` measures (a turn run's ids mapped to
            sessions); ``None`` (the default) when it scores the collection's
            own entries.  The definitions card and the claims check read it.
        aliases: other accepted spellings (``("precision",)`` for ``P``).
            Names and aliases are matched ignoring case; none may be taken by
            another registered measure.  They belong to the definition so that
            an installed measure (an entry point in the group
            ``agentmemory.measures``) brings its own, and replacing or
            unregistering a measure takes its aliases with it.

    Raises:
        ParameterError: a field has the wrong type, the name or an alias is
            not a valid name, the description is not one line, an alias
            repeats the name or another alias (ignoring case), a budget
            measure does not read lengths, ``budget_form`` is not a budget
            form of this measure, or ``reads`` is given without ``whole_ranking``.
    """

    name: str
    function: Callable[[QueryContext], float | None]
    cutoff: CutoffRule
    description: str
    batch: Callable[..., np.ndarray] | None = None  # (ranked, k), k None when the measure has no cutoff
    tie_aware: Callable[[TieContext], float | None] | None = None
    aliases: tuple[str, ...] = ()
    provenance: Callable[[Credited, Any], float | None] | None = None  # (credited, the measure's cutoff)
    family: str | None = None
    whole_ranking: bool = False
    direction: str = "higher"
    budget_form: MeasureDef | None = None
    reads_lengths: bool = False
    undefined_when: str | None = None
    granularity: str | None = None
    reads: Callable[[QueryContext], int] | None = None  # after every older field: positional use keeps working
    reads_answer: bool = False

    def __post_init__(self) -> None:
        _check_name("measure name", self.name)
        if self.direction not in DIRECTIONS:
            raise ParameterError("direction", self.direction, "is not a direction", "give 'higher' or 'lower'")
        if not callable(self.function):
            raise ParameterError("function", self.function, "is not callable", "give function(QueryContext) -> float")
        if not isinstance(self.cutoff, CutoffRule):
            raise ParameterError(
                "cutoff",
                self.cutoff,
                "is not a CutoffRule",
                "give CutoffRule.REQUIRED, OPTIONAL, FORBIDDEN, BUDGET or FIRST",
            )
        for field, text, what in (
            ("description", self.description, "describe the measure in one line"),
            ("undefined_when", self.undefined_when, "say in one line when the measure has no value, or None"),
        ):
            if (text is not None or field == "description") and not _one_line(text):
                raise ParameterError(field, text, "is not one line of text", what)
        for field, value, shape in (
            ("batch", self.batch, "batch(ranked, k) -> ndarray"),
            ("tie_aware", self.tie_aware, "tie_aware(TieContext) -> float"),
            ("provenance", self.provenance, "provenance(credited, k) -> float"),
            ("reads", self.reads, "reads(QueryContext) -> int"),
        ):
            if value is not None and not callable(value):
                raise ParameterError(field, value, "is not callable", f"give {shape}, or None")
        for flag, given in (
            ("whole_ranking", self.whole_ranking),
            ("reads_lengths", self.reads_lengths),
            ("reads_answer", self.reads_answer),
        ):
            if not isinstance(given, bool):
                raise ParameterError(flag, given, "is not a bool", "pass True or False")
        if self.reads is not None and not self.whole_ranking:
            raise ParameterError(
                "reads",
                self.reads,
                f"is given to {self.name}, which reads only its top k",
                "pass whole_ranking=True with it, or leave reads out",
            )
        _check_reads(self)
        _check_budget_form(self)
        for label, text, allowed in (
            ("family", self.family, "name the family in one line (e.g. 'trec_eval'), or None"),
            ("granularity", self.granularity, "name the unit the measure scores (e.g. 'session'), or None"),
        ):
            if text is not None and not _one_line(text):
                raise ParameterError(label, text, "is not one line of text", allowed)
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


def _check_reads(definition: MeasureDef) -> None:
    """An answer measure says when it has no value; a budget measure reads the hits' lengths."""
    if definition.reads_answer and definition.undefined_when is None:
        raise ParameterError(
            "undefined_when",
            None,
            f"is missing for the answer measure {definition.name}",
            "say in one line when it has no value (e.g. 'no answer from the system')",
        )
    if definition.cutoff is CutoffRule.BUDGET and not definition.reads_lengths:
        raise ParameterError(
            "reads_lengths", False, f"is wrong for the budget measure {definition.name}", "pass reads_lengths=True"
        )


def _one_line(text: object) -> bool:
    return isinstance(text, str) and bool(text.strip()) and "\n" not in text


def _check_budget_form(definition: MeasureDef) -> None:
    """``definition.budget_form`` is ``None`` or a budget measure of the same name, without aliases or a form of its own."""
    form = definition.budget_form
    if form is None:
        return
    allowed = (
        f"give a MeasureDef named {definition.name!r} with cutoff CutoffRule.BUDGET, no aliases and no "
        "budget_form, or None"
    )
    if not isinstance(form, MeasureDef):
        raise ParameterError("budget_form", form, "is not a MeasureDef", allowed)
    if definition.cutoff is CutoffRule.BUDGET:
        raise ParameterError(
            "budget_form", form.name, f"is given to {definition.name}, itself a budget measure", "pass None"
        )
    if form.name != definition.name or form.cutoff is not CutoffRule.BUDGET or form.aliases or form.budget_form:
        raise ParameterError("budget_form", form.name, "is not a budget form of this measure", allowed)


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ParameterError(
            what,
            name,
            "is not a valid name",
            "use letters, digits, '_', '.', '+' and '-' (no brackets, commas, colons, '=' or spaces), "
            "starting with a letter, a digit or '_'",
        )
