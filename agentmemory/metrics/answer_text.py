"""Answer scores on text: LoCoMo's F1 and exact match, BLEU-1, and DPR's ``has_answer``.

Pure functions of strings, with no state and no files: the definitions that a
registered answer measure wraps.

**Source.**  LoCoMo's own scoring (Maharana et al., ACL 2024), the file
``task_eval/evaluation.py`` of github snap-research/locomo, branch ``code``,
commit ``92286325a40764bee61f77824ddb95233b11c4d6`` (7 August 2024; the
branch ``main`` holds the data and the web page only).  Its definitions are
restated here and implemented afresh; nothing is copied or imported from it.
It computes one answer score per question, in ``eval_question_answering``: the
F1 below, with rules per category.  It also defines an exact match
(``exact_match_score``), which no scoring path of that file calls, and
``has_answer``, taken from DPR (Karpukhin et al., 2020; the same tokeniser and
test as DPR's ``has_answer``).  It defines **no BLEU**: the BLEU-1 published
for LoCoMo comes from A-Mem's ``utils.py`` (github WujiangXu/AgenticMemory,
commit ``7f716dc55dcc55fe9d65058b2714a79f264e37ce``), which mem0's
``evaluation/metrics/utils.py`` borrows; :func:`answer_bleu1` follows that.

**Categories** are LoCoMo's question categories 1-5 (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial) or ``None`` for no category rule.
The official loop applies its rules as follows, and so do these functions:

=========  ==================================  ==================================
category   gold answer                         F1
=========  ==================================  ==================================
1          as given                            mean over gold parts of best part F1
2, 4       as given                            token F1
3          text before the first ``;``         token F1
5          (not used)                          1 if the prediction abstains, else 0
None       as given                            token F1
=========  ==================================  ==================================

The category-3 cut prepares the gold answer before the loop chooses a score
(its BERTScore path gets it too), so :func:`answer_em` and
:func:`answer_bleu1` apply it as well.  The category-1 and category-5 rules
are alternatives to the plain F1 in the same choice (the BERTScore path skips
them), so they belong to :func:`answer_f1` only: EM and BLEU-1 of a category-1
or category-5 question compare the whole prediction with the gold given.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache
from numbers import Integral
from typing import Any

import numpy as np

from agentmemory.errors import ParameterError

__all__ = [
    "ABSTENTION_PHRASES",
    "CATEGORIES",
    "answer_bleu1",
    "answer_em",
    "answer_f1",
    "dpr_tokens",
    "has_answer",
    "normalize_answer",
    "token_f1",
]

#: LoCoMo's question categories; ``None`` means no category rule.
CATEGORIES = (1, 2, 3, 4, 5)

#: A category-5 prediction scores F1 = 1 when its lower-cased text contains one of these.
ABSTENTION_PHRASES = ("no information available", "not mentioned")

#: The words :func:`normalize_answer` removes (whole words, after punctuation is removed).
_REMOVED_WORDS = r"\b(?:a|an|the|and)\b"

#: DPR's tokens: a run of letters, numbers and marks, or any one other character that is not a
#: separator (Z) or an "other" character (C: controls, format characters, unassigned, private use).
_DPR_TOKEN = r"[\p{L}\p{N}\p{M}]+|[^\p{Z}\p{C}]"

#: ASCII punctuation (Python's ``string.punctuation``), each character mapped to nothing.
_NO_PUNCTUATION = str.maketrans("", "", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


@cache
def _regex() -> Any:
    """The ``regex`` module (Unicode classes and word boundaries ``re`` lacks), imported on first use."""
    import regex

    return regex


@cache
def _removed_words() -> Any:
    return _regex().compile(_REMOVED_WORDS)


@cache
def _dpr_token() -> Any:
    regex = _regex()
    return regex.compile(_DPR_TOKEN, flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)


@cache
def _stem() -> Callable[[str], str]:
    """nltk's Porter stemmer (its default NLTK_EXTENSIONS mode; no downloaded data), imported on first use."""
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer().stem


@cache
def _word_tokenize() -> Callable[[str], list[str]]:
    """nltk's Treebank-style word tokeniser, the word step of ``nltk.word_tokenize`` (no downloaded data)."""
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer().tokenize


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        hint = " (LoCoMo's evaluation turns a number answer into text with str())" if name == "gold" else ""
        raise ParameterError(name, value, "is not text", f"{name} must be a str{hint}")
    return value


def _check_category(category: object) -> int | None:
    if category is None:
        return None
    if isinstance(category, Integral) and not isinstance(category, bool) and int(category) in CATEGORIES:
        return int(category)
    raise ParameterError(
        "category", category, "is not a LoCoMo category", "category must be 1, 2, 3, 4, 5 or None (no category rule)"
    )


def _gold_for(gold: str, category: int | None) -> str:
    """The gold answer a score compares with: for category 3, its text before the first ``;``, stripped."""
    return gold.split(";")[0].strip() if category == 3 else gold


def normalize_answer(text: str) -> str:
    """LoCoMo's answer normalisation (``normalize_answer`` of ``task_eval/evaluation.py``).

    In this order: remove every comma; lower-case (``str.lower``); remove every
    ASCII punctuation character (``string.punctuation``; other punctuation such
    as ``’`` or ``—`` stays); replace each whole word ``a``, ``an``, ``the`` or
    ``and`` by a space, where "whole word" is the ``regex`` module's ``\\b``
    (Unicode words: letters, marks, decimal digits, connector punctuation, so
    the ``the`` of ``"the\\u0301"`` stays); then split on whitespace
    (``str.split``) and join with single spaces.

    Punctuation goes before the words, so ``"don't"`` becomes ``"dont"`` and
    ``"A-Team"`` becomes ``"ateam"``; nothing is Unicode-normalised (NFC and NFD
    spellings of one word stay different); no stemming here.

    >>> normalize_answer("The cat, and a hat!")
    'cat hat'
    """
    text = _check_text("text", text).replace(",", "").lower().translate(_NO_PUNCTUATION)
    return " ".join(_removed_words().sub(" ", text).split())


def _stemmed(text: str) -> list[str]:
    stem = _stem()
    return [stem(word) for word in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """LoCoMo's token F1 of one prediction against one gold answer (``f1_score``), no category rule.

    ``P`` and ``G`` are the bags (multisets) of tokens of
    :func:`normalize_answer` of each text, each token Porter-stemmed (nltk's
    ``PorterStemmer().stem``, mode NLTK_EXTENSIONS); ``common = |P ∩ G|``, the
    bag intersection (a token counts min(times in P, times in G) times).  Then
    ``F1 = 2 * p * r / (p + r)`` with ``p = common / |P|`` and ``r = common /
    |G|``, and ``F1 = 0.0`` when ``common == 0``, which includes an empty
    prediction, an empty gold answer, and both empty (``"the"`` against ``"a"``
    scores 0.0, not 1.0).
    """
    predicted = _stemmed(_check_text("prediction", prediction))
    wanted = _stemmed(_check_text("gold", gold))
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision = 1.0 * common / len(predicted)
    recall = 1.0 * common / len(wanted)
    return (2 * precision * recall) / (precision + recall)


def _multi_part_f1(prediction: str, gold: str) -> float:
    """Category 1: the mean over the gold's comma-separated parts of the best F1 against a prediction part."""
    predicted = [part.strip() for part in prediction.split(",")]
    wanted = [part.strip() for part in gold.split(",")]
    return float(np.mean([max(token_f1(part, goal) for part in predicted) for goal in wanted]))


def _abstains(prediction: str) -> bool:
    lowered = prediction.lower()
    return any(phrase in lowered for phrase in ABSTENTION_PHRASES)


def answer_f1(prediction: str, gold: str, category: int | None) -> float:
    """LoCoMo's answer F1 of a prediction, with the rule of the question's category (``eval_question_answering``).

    * category 2, 4 or ``None``: :func:`token_f1` ``(prediction, gold)``;
    * category 3: :func:`token_f1` against the gold's text before its first
      ``;``, stripped (``"Paris; the capital"`` -> ``"Paris"``);
    * category 1 (multi-hop): split the prediction and the gold on every
      ``,`` and strip each part; the score is the **mean over the gold parts**
      of the **best** :func:`token_f1` of any prediction part against that
      gold part (``numpy.mean``).  An empty gold part (a trailing comma) scores
      0 and still counts in the mean; one good prediction part may serve every
      gold part;
    * category 5 (adversarial): 1.0 when ``prediction.lower()`` contains
      ``"no information available"`` or ``"not mentioned"`` as a substring
      (:data:`ABSTENTION_PHRASES`; ``"Not Mentioned."`` counts, ``"not
      mentioned"`` with two spaces or ``"No information is available"`` does
      not), else 0.0; the gold answer is not used.

    Raises :class:`~agentmemory.errors.ParameterError` for a category outside
    1-5 and ``None``, or a prediction or gold that is not a ``str``.
    """
    category = _check_category(category)
    prediction = _check_text("prediction", prediction)
    gold = _gold_for(_check_text("gold", gold), category)
    if category == 5:
        return 1.0 if _abstains(prediction) else 0.0
    if category == 1:
        return _multi_part_f1(prediction, gold)
    return token_f1(prediction, gold)


def answer_em(prediction: str, gold: str, category: int | None) -> float:
    """LoCoMo's exact match (``exact_match_score``): 1.0 when the two answers have the same set of words.

    ``EM = 1.0 if set(normalize_answer(prediction).split()) ==
    set(normalize_answer(gold).split()) else 0.0``: word order and repeats do
    not matter (``"Paris and London"`` matches ``"london, paris, paris"``),
    words are **not** stemmed (``"runs"`` does not match ``"running"``), and two
    answers that normalise to nothing match (``"The"`` against ``"a"`` is 1.0).

    Category 3 compares with the gold's text before its first ``;``, stripped,
    as :func:`answer_f1` does; no other category rule applies (see the module's
    notes: the official file applies the category-1 and category-5 rules to its
    F1 only, and calls no exact match in its scoring).
    """
    category = _check_category(category)
    prediction = _check_text("prediction", prediction)
    gold = _gold_for(_check_text("gold", gold), category)
    return 1.0 if set(normalize_answer(prediction).split()) == set(normalize_answer(gold).split()) else 0.0


def answer_bleu1(prediction: str, gold: str, category: int | None) -> float:
    """BLEU-1 of a prediction against one gold answer, as A-Mem's and mem0's LoCoMo evaluations compute it.

    Tokens: the text lower-cased (``str.lower``), then split by nltk's
    Treebank-style word tokeniser (``NLTKWordTokenizer``, the word step of
    ``nltk.word_tokenize``), with no other normalisation: punctuation tokens
    count, nothing is stemmed, articles stay.  With ``c`` the prediction's
    token count, ``r`` the gold's, and ``m`` the clipped unigram matches (each
    prediction token counted at most as often as it occurs in the gold)::

        BLEU-1 = BP * m / c,   BP = 1 if c > r else exp(1 - r / c)

    and 0.0 when ``m == 0`` (an empty prediction or gold included); ``m / c``
    is computed as ``exp(log(m / c))``, as nltk does, so the value equals
    nltk's bit for bit.  This is
    nltk's ``sentence_bleu([gold_tokens], prediction_tokens, weights=(1, 0, 0,
    0), smoothing_function=SmoothingFunction().method1)``, which those
    evaluations call: with all weight on unigrams, ``method1``'s smoothing
    never changes the value (it only adds to a zero higher-order precision,
    whose weight is 0, and a zero unigram precision returns 0 first).

    One difference from those evaluations: ``nltk.word_tokenize`` first splits
    the text into sentences with the Punkt model, downloaded data this package
    does not use, so a period ending an inner sentence stays on its word here
    (``"home. She"`` gives ``home.``, ``she``; Punkt gives ``home``, ``.``,
    ``she``).  One-sentence answers, the usual case, tokenise identically.

    Category 3 compares with the gold's text before its first ``;``, stripped,
    as :func:`answer_f1` does; no other category rule applies (A-Mem and mem0
    apply none at all: ``category=None`` gives theirs exactly).
    """
    category = _check_category(category)
    prediction = _check_text("prediction", prediction)
    gold = _gold_for(_check_text("gold", gold), category)
    tokenize = _word_tokenize()
    predicted = tokenize(prediction.lower())
    wanted = tokenize(gold.lower())
    matches = sum((Counter(predicted) & Counter(wanted)).values())
    if matches == 0:
        return 0.0
    c, r = len(predicted), len(wanted)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(math.log(matches / c))  # nltk's order of operations, for its value bit for bit


def dpr_tokens(text: str) -> list[str]:
    """DPR's tokens of a text, as ``has_answer`` compares them (``SimpleTokenizer`` with ``uncased=True``).

    The text is NFD-normalised (``unicodedata.normalize("NFD", ...)``:
    composed characters become base + combining marks), then split into
    tokens, each either a maximal run of letters, numbers and marks (Unicode
    classes ``L``, ``N``, ``M``) or a single other character that is neither a
    separator (``Z``) nor an "other" character (``C``: controls, format
    characters such as a soft hyphen or zero-width joiner, unassigned, private
    use), found left to right by the ``regex`` module; each token is then
    lower-cased (``str.lower``).  Separators and ``C`` characters are dropped
    and split tokens (``"co\\u00adop"`` gives ``co``, ``op``).

    >>> dpr_tokens("Don't stop—NOW!")
    ['don', "'", 't', 'stop', '—', 'now', '!']
    """
    text = unicodedata.normalize("NFD", _check_text("text", text))
    return [match.group().lower() for match in _dpr_token().finditer(text)]


def _contains(tokens: list[str], needle: list[str]) -> bool:
    size = len(needle)
    return any(tokens[start : start + size] == needle for start in range(len(tokens) - size + 1))


def has_answer(gold: str, texts: Iterable[str]) -> bool:
    """DPR's ``has_answer`` as LoCoMo defines it: does any text contain the gold answer's tokens in sequence?

    True when, for some text ``t`` of ``texts``, the :func:`dpr_tokens` of
    ``gold`` occur as a contiguous run of the :func:`dpr_tokens` of ``t``
    (same tokens, same order, nothing between them).  Matching is by whole
    tokens, so ``"York"`` is not found in ``"Yorkshire"``, and a gold token must
    not straddle two texts.  Case and NFC/NFD spelling do not matter; accents
    do (``"cafe"`` is not ``"café"``), and so does a script written without
    spaces (``"北京"`` is one token, not found inside ``"北京市"``).

    Each text is tested alone, as DPR's ``check_answer`` tests each passage
    (LoCoMo's ``eval_recall`` joins the texts with ``" || "`` first, which
    differs only for a gold answer that itself contains ``||``).  A gold answer
    with no tokens (``""``, only spaces) is found in any text, even an empty
    one, as in the official code; with no texts the result is False.

    ``texts`` is a collection of strings; a single ``str`` is refused (iterating
    it would test each character as a text).
    """
    needle = dpr_tokens(_check_text("gold", gold))
    if isinstance(texts, str):
        raise ParameterError("texts", texts, "is one str, not a collection of texts", "pass a list of texts: [text]")
    return any(_contains(dpr_tokens(_check_text(f"texts[{index}]", text)), needle) for index, text in enumerate(texts))
