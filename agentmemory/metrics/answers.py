"""Answer measures: the system's answer scored, beside its ranking (imported verdicts, LoCoMo's scores, has_answer).

Each is a :class:`~agentmemory.metrics.definition.MeasureDef` with
``reads_answer=True``: it reads :attr:`QueryContext.answer
<agentmemory.metrics.definition.QueryContext>` (the system's answer, its
judges' verdict, the texts it retrieved) and the query's gold answer
(``query.metadata["answer"]``, and LoCoMo's ``category``), never the
judgments, so it is computed the same way under every relevance mode, and
on questions the loader left out of retrieval scoring (LoCoMo's malformed
evidence) when an evaluation imports answers.

* ``Judge``: the verdict (:attr:`AnswerInput.verdict`: 1 correct, 0 wrong):
  an imported file's (the majority of several judges, 0.5 where they tie),
  whose mean is the accuracy the harness published, or the live judges'
  (:mod:`agentmemory.live`: the first judge's, or their majority).  Family ``judge``: whatever model and
  prompt the file's harness used, stated in the definitions card.
* ``F1``, ``EM``, ``BLEU-1``: LoCoMo's official answer scores of the
  generated answer against the gold answer
  (:mod:`agentmemory.metrics.answer_text`, which states each definition and
  its source).  Family ``LoCoMo``.
* ``answer_in_context@k``: 1 when the gold answer's token sequence appears in
  one of the top ``k`` texts the system retrieved (DPR's ``has_answer``,
  which LoCoMo's evaluation also uses), else 0.  It needs no attribution, so
  it scores a retriever, a memory system, or an imported context alike,
  rewritten memories included.  Family ``DPR has_answer``.

Every one has no value (``None``, counted beside the mean) where its input
is missing: no verdict, no answer, no gold answer, or no retrieved texts.
"""

from __future__ import annotations

from collections.abc import Callable

from agentmemory.metrics.answer_text import answer_bleu1, answer_em, answer_f1, has_answer
from agentmemory.metrics.definition import AnswerInput, CutoffRule, MeasureDef, QueryContext
from agentmemory.records import Query

__all__ = ["ANSWER_DEFINITIONS", "ANSWER_MEASURE_NAMES", "gold_answer", "question_category"]

JUDGE_FAMILY = "judge"
LOCOMO_FAMILY = "LoCoMo"
HAS_ANSWER_FAMILY = "DPR has_answer"


def gold_answer(query: Query | None) -> str | None:
    """The query's gold answer as text (``metadata["answer"]``; a number written as Python writes it), or ``None``.

    LoCoMo's adversarial questions (category 5) carry ``adversarial_answer``
    instead, a trap rather than a gold answer: ``None`` here.
    """
    if query is None:
        return None
    value = query.metadata.get("answer")
    if value is None or isinstance(value, (dict, list)):
        return None
    return value if isinstance(value, str) else str(value)


def question_category(query: Query | None) -> int | None:
    """LoCoMo's category number of the query (``metadata["category"]``, 1-5), or ``None`` for other collections."""
    if query is None:
        return None
    value = query.metadata.get("category")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _answer(ctx: QueryContext) -> AnswerInput:
    return ctx.answer if ctx.answer is not None else AnswerInput(None, None, None)


def _judge(ctx: QueryContext) -> float | None:
    return _answer(ctx).verdict


def _scored(
    score: Callable[[str, str, int | None], float], *, abstention: bool = False
) -> Callable[[QueryContext], float | None]:
    """A per-query function applying LoCoMo's ``score(prediction, gold, category)`` where both texts exist;
    ``abstention``: also on an adversarial question (category 5) without a gold answer, which LoCoMo's F1
    scores by the prediction alone (1 when it says the information is not available)."""

    def function(ctx: QueryContext) -> float | None:
        text = _answer(ctx).text
        category = question_category(ctx.query)
        gold = gold_answer(ctx.query)
        if text is None or (gold is None and not (abstention and category == 5)):
            return None
        return float(score(text, gold or "", category))

    return function


def _in_context(ctx: QueryContext) -> float | None:
    texts = _answer(ctx).texts
    gold = gold_answer(ctx.query)
    if texts is None or gold is None:
        return None
    return 1.0 if has_answer(gold, list(texts[: ctx.cutoff])) else 0.0


_NO_VERDICT = (
    "no verdict (a system without judges, a question its answer file has no record for, or whose live calls failed)"
)
_NO_ANSWER = "no answer from the system, or no gold answer"

JUDGE = MeasureDef(
    "Judge",
    _judge,
    CutoffRule.FORBIDDEN,
    "the judges' verdict on the answer (1 correct, 0 wrong): the imported judges' majority (0.5 on a tie), or the "
    "live judges' first verdict (or their majority); mean = accuracy",
    family=JUDGE_FAMILY,
    undefined_when=_NO_VERDICT,
    reads_answer=True,
    granularity="question",
    aliases=("accuracy",),
)
F1 = MeasureDef(
    "F1",
    _scored(answer_f1, abstention=True),
    CutoffRule.FORBIDDEN,
    "LoCoMo's answer F1: token-bag F1 of the normalised, Porter-stemmed answer against the gold answer",
    family=LOCOMO_FAMILY,
    undefined_when=_NO_ANSWER,
    reads_answer=True,
    granularity="question",
)
EM = MeasureDef(
    "EM",
    _scored(answer_em),
    CutoffRule.FORBIDDEN,
    "LoCoMo's exact match of the normalised answer against the gold answer",
    family=LOCOMO_FAMILY,
    undefined_when=_NO_ANSWER,
    reads_answer=True,
    granularity="question",
)
BLEU1 = MeasureDef(
    "BLEU-1",
    _scored(answer_bleu1),
    CutoffRule.FORBIDDEN,
    "LoCoMo's BLEU-1 of the answer against the gold answer",
    family=LOCOMO_FAMILY,
    undefined_when=_NO_ANSWER,
    reads_answer=True,
    granularity="question",
    aliases=("BLEU1",),
)
ANSWER_IN_CONTEXT = MeasureDef(
    "answer_in_context",
    _in_context,
    CutoffRule.REQUIRED,
    "1 when the gold answer's token sequence is in one of the top k retrieved texts (DPR's has_answer), else 0",
    family=HAS_ANSWER_FAMILY,
    undefined_when="no retrieved texts from the system, or no gold answer",
    reads_answer=True,
    aliases=("has_answer",),
)

ANSWER_DEFINITIONS: tuple[MeasureDef, ...] = (JUDGE, F1, EM, BLEU1, ANSWER_IN_CONTEXT)
"""The built-in answer measures, in the order tables show them."""

ANSWER_MEASURE_NAMES: tuple[str, ...] = tuple(d.name for d in ANSWER_DEFINITIONS)
