"""Answer-text scores: LoCoMo's normalisation, F1 and exact match, BLEU-1, DPR's has_answer.

Golden tables computed by hand (the computation in a comment per case), the
errors to the letter, properties, and cross-checks against independent
formulations built from nltk's own pieces (``PorterStemmer``,
``sentence_bleu``) and from ``unicodedata`` categories.  Nothing here is
taken from LoCoMo's code.

Porter stems used below (nltk, NLTK_EXTENSIONS mode): running -> run,
runs -> run, ran -> ran, paris -> pari, dollars -> dollar, capital -> capit,
france -> franc; café, paris’, 1000 and 35 are left as they are.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import ANSWER_WORDS, answer_categories, answers

from agentmemory.errors import ParameterError
from agentmemory.metrics.answer_text import (
    ABSTENTION_PHRASES,
    answer_bleu1,
    answer_em,
    answer_f1,
    dpr_tokens,
    has_answer,
    normalize_answer,
    token_f1,
)

# --- normalize_answer ---------------------------------------------------------------------------------------

NORMALIZED = [
    # lower-case; "The", "and", "a" removed; "," and "!" removed; spaces collapsed
    ("The cat, and a hat!", "cat hat"),
    # "and" inside a word stays: \b needs a word boundary on both sides
    ("Andrew and Sandy", "andrew sandy"),
    # every removed word, any case -> nothing left
    ("THE AND A AN", ""),
    # the apostrophe goes before the words are looked at: "don't" -> "dont"
    ("don't", "dont"),
    # the hyphen goes first, so "a-team" -> "ateam" and its "a" is no longer a word
    ("A-Team", "ateam"),
    # commas and points go: "1,000.50" -> "100050"
    ("1,000.50", "100050"),
    # tabs and newlines are whitespace: split and joined by one space
    ("  multiple\t spaces\n", "multiple spaces"),
    # "’" (U+2019) is not ASCII punctuation: it stays
    ("Paris\u2019s", "paris\u2019s"),
    # "the" then "’": a word boundary, so "the" goes and "’s" stays
    ("the\u2019s", "\u2019s"),
    # a combining mark is a word character for the regex module: "the" + U+0301 is one word, kept
    ("the\u0301", "the\u0301"),
    # "²" is not a word character: "the" before it is a whole word, removed
    ("the\u00b2", "\u00b2"),
    # no Unicode normalisation: composed and decomposed stay as they are; lower-case applies
    ("Caf\u00e9", "caf\u00e9"),
    ("CAFE\u0301", "cafe\u0301"),
    # other scripts are lower-cased and kept
    ("\u041c\u043e\u0441\u043a\u0432\u0430", "\u043c\u043e\u0441\u043a\u0432\u0430"),
    # the underscore is ASCII punctuation
    ("snake_case", "snakecase"),
    ("", ""),
]


@pytest.mark.parametrize(("text", "expected"), NORMALIZED)
def test_normalize_answer(text: str, expected: str) -> None:
    """normalize_answer removes commas, lower-cases, drops ASCII punctuation, then the whole words a/an/the/and."""
    assert normalize_answer(text) == expected


# --- answer_f1 ----------------------------------------------------------------------------------------------

F1_CASES = [
    # stems: running -> run, runs -> run: P = G = {run}: F1 = 1
    ("running", "runs", None, 1.0),
    # "ran" stems to "ran", not "run": no common token: 0
    ("He ran", "running", None, 0.0),
    # P = {eiffel, tower, pari} ("The" and "," removed), G = {eiffel, tower}: common 2, p = 2/3, r = 1,
    # F1 = 2 * 2/3 / (2/3 + 1) = 0.8
    ("The Eiffel Tower, Paris", "eiffel tower", 2, 0.8),
    # articles, "and" and commas go on both sides: P = G = {cat, dog}: 1
    ("a cat and the dog", "Cat, dog", 4, 1.0),
    # a bag, not a set: P = {pari x3}, G = {pari}: common 1, p = 1/3, r = 1, F1 = (2/3) / (4/3) = 0.5
    ("paris paris paris", "paris", None, 0.5),
    # repeats on both sides: P = {pari x2}, G = {pari x2, london}: common min(2, 2) = 2, p = 1, r = 2/3,
    # F1 = 2 * 2/3 / (5/3) = 0.8 (sets would give common 1: 0.4)
    ("paris paris", "paris paris london", None, 0.8),
    # an empty prediction: common 0 -> 0
    ("", "Paris", 2, 0.0),
    # both normalise to nothing: common 0 -> 0 (EM gives 1 here)
    ("the", "a", None, 0.0),
    # "1,000" -> "1000": P = {1000, dollar}, G = {1000}: common 1, p = 1/2, r = 1, F1 = 1 / 1.5 = 2/3
    ("1,000 dollars", "1000", None, 2 / 3),
    # the point is punctuation: "3.5" -> "35" = "35": 1
    ("3.5", "35", None, 1.0),
    # "Dr. Smith's" -> "dr smiths": equal to the gold: 1
    ("Dr. Smith's", "dr smiths", None, 1.0),
    # category 3: gold "Paris; capital of France" -> "Paris": 1
    ("Paris", "Paris; capital of France", 3, 1.0),
    # without category 3: G = {pari, capit, of, franc} (";" removed): common 1, p = 1, r = 1/4,
    # F1 = 2 * 1/4 / (5/4) = 0.4
    ("Paris", "Paris; capital of France", None, 0.4),
    # category 3 keeps what is before the first ";": nothing: 0
    ("Paris", "; Paris", 3, 0.0),
    # category 1: gold parts London, Paris, Rome; best of the prediction parts Paris, London: 1, 1, 0: mean 2/3
    ("Paris, London", "London, Paris, Rome", 1, 2 / 3),
    # category 1: one prediction part "paris london" against gold parts Paris, London: each p = 1/2, r = 1,
    # F1 = 2/3; mean 2/3 (without the category rule both bags are {pari, london}: 1)
    ("Paris and London", "Paris, London", 1, 2 / 3),
    ("Paris and London", "Paris, London", None, 1.0),
    # category 1: a trailing comma makes an empty gold part, which scores 0 and counts: (1 + 0) / 2
    ("Paris", "Paris,", 1, 0.5),
    ("Paris", "Paris,", 2, 1.0),
    # category 1: order of the parts does not matter: 1, 1: mean 1
    ("London, Paris", "Paris, London", 1, 1.0),
    # category 1: one gold part, prediction parts Rome and Paris: best 1
    ("Rome, Paris", "Paris", 1, 1.0),
    # category 5: "not mentioned" in the lower-cased prediction: 1, whatever the gold
    ("Not Mentioned.", "anything", 5, 1.0),
    ("This was not mentioned in the conversation", "x", 5, 1.0),
    ("NO INFORMATION AVAILABLE!", "x", 5, 1.0),
    # category 5: the phrase must be exact: other wording, two spaces, a hyphen: 0
    ("No information is available", "x", 5, 0.0),
    ("not  mentioned", "x", 5, 0.0),
    ("not-mentioned", "x", 5, 0.0),
    # category 5: a substring test: "cannot mentioned" contains "not mentioned": 1
    ("cannot mentioned", "x", 5, 1.0),
    # category 5: the right answer is not an abstention: 0
    ("Paris", "Paris", 5, 0.0),
    ("", "x", 5, 0.0),
    # Unicode: lower-casing only: café = café: 1; no accent stripping: cafe vs café: 0
    ("Caf\u00e9", "caf\u00e9", None, 1.0),
    ("cafe", "caf\u00e9", None, 0.0),
    # NFD vs NFC spellings differ (no Unicode normalisation in LoCoMo's F1): 0
    ("cafe\u0301", "caf\u00e9", None, 0.0),
    # another script, case only: 1
    ("\u041c\u043e\u0441\u043a\u0432\u0430", "\u043c\u043e\u0441\u043a\u0432\u0430", None, 1.0),
    # "’" stays, so "paris’" is not "paris": 0
    ("Paris\u2019", "Paris", None, 0.0),
]


@pytest.mark.parametrize(("prediction", "gold", "category", "expected"), F1_CASES)
def test_answer_f1(prediction: str, gold: str, category: int | None, expected: float) -> None:
    """answer_f1 is LoCoMo's stemmed token-bag F1 with the category-1, 3 and 5 rules."""
    assert answer_f1(prediction, gold, category) == pytest.approx(expected, abs=1e-12)


# --- answer_em ----------------------------------------------------------------------------------------------

EM_CASES = [
    # sets of normalised words: {paris, london} = {london, paris}: repeats and order ignored: 1
    ("Paris and London", "london, paris, paris", None, 1.0),
    # no stemming: {runs} != {running}: 0 (F1 is 1 here)
    ("runs", "running", None, 0.0),
    # both normalise to nothing: set() == set(): 1
    ("The", "a", None, 1.0),
    ("", "", None, 1.0),
    # one word more: {paris, france} != {paris}: 0
    ("Paris, France", "Paris", None, 0.0),
    # category 3: gold "Paris; capital" -> "Paris": 1; without it {paris, capital} != {paris}: 0
    ("Paris", "Paris; capital", 3, 1.0),
    ("Paris", "Paris; capital", None, 0.0),
    # category 1: no part rule for EM; the comma goes anyway: {paris, london} = {london, paris}: 1
    ("Paris, London", "London, Paris", 1, 1.0),
    # category 1: no part rule: {paris} != {paris, london}: 0 (F1 gives 1/2 here)
    ("Paris", "Paris, London", 1, 0.0),
    # category 5: no abstention rule for EM: {not, mentioned} != {paris}: 0
    ("Not mentioned", "Paris", 5, 0.0),
]


@pytest.mark.parametrize(("prediction", "gold", "category", "expected"), EM_CASES)
def test_answer_em(prediction: str, gold: str, category: int | None, expected: float) -> None:
    """answer_em compares the sets of normalised, unstemmed words; only the category-3 cut applies."""
    assert answer_em(prediction, gold, category) == expected


def test_category_1_f1_is_not_em() -> None:
    """The category-1 rule is F1's: the same case gives F1 0.5 and EM 0."""
    assert (answer_f1("Paris", "Paris, London", 1), answer_em("Paris", "Paris, London", 1)) == (0.5, 0.0)


# --- answer_bleu1 -------------------------------------------------------------------------------------------

BLEU_CASES = [
    # c = r = 1, m = 1: BP = exp(1 - 1) = 1, p = 1: 1
    ("paris", "paris", None, 1.0),
    # hyp [paris], ref [the, capital, paris]: m = 1, c = 1 < r = 3: BP = exp(1 - 3) = exp(-2), p = 1
    ("paris", "the capital paris", None, math.exp(-2)),
    # hyp [the, the, the], ref [the, cat]: clipped m = 1, c = 3 > r = 2: BP = 1, p = 1/3
    ("the the the", "the cat", None, 1 / 3),
    # the final point is a token: hyp [paris, .], ref [paris]: m = 1, c = 2 > 1: BP = 1: 1/2
    ("Paris.", "paris", None, 0.5),
    # no stemming: [running] vs [runs]: m = 0: 0
    ("running", "runs", None, 0.0),
    # empty prediction or gold: m = 0: 0
    ("", "paris", None, 0.0),
    ("paris", "", None, 0.0),
    # category 3: ref [paris]: 1; without it ref [paris, ;, france]: m = 1, c = 1 < 3: exp(-2)
    ("Paris", "Paris; France", 3, 1.0),
    ("Paris", "Paris; France", None, math.exp(-2)),
    # category 5: no abstention rule: [not, mentioned] vs [paris]: 0
    ("Not mentioned", "Paris", 5, 0.0),
    # category 1: no part rule: hyp [paris, ,, london], ref [london, ,, paris]: m = 3, c = r = 3: BP = 1: 1
    ("Paris, London", "London, Paris", 1, 1.0),
    # Treebank splits "don't" into do + n't: hyp [do, n't, know], ref [do, not, know]: m = 2, c = r: 2/3
    ("don't know", "do not know", None, 2 / 3),
    # hyp [new, york, city], ref [new, york]: m = 2, c = 3 > 2: BP = 1: 2/3
    ("New York City", "New York", None, 2 / 3),
    # hyp [york], ref [new, york]: m = 1, c = 1 < 2: BP = exp(1 - 2): exp(-1)
    ("York", "New York", None, math.exp(-1)),
    # no sentence splitting: the inner "home." stays one token: hyp [he, went, home., she, stayed, .] has no
    # "home": 0 (nltk.word_tokenize with its Punkt data would give 1/7 here)
    ("He went home. She stayed.", "home", None, 0.0),
]


@pytest.mark.parametrize(("prediction", "gold", "category", "expected"), BLEU_CASES)
def test_answer_bleu1(prediction: str, gold: str, category: int | None, expected: float) -> None:
    """answer_bleu1 is BP * clipped unigram precision over lower-cased Treebank tokens; only the category-3 cut applies."""
    assert answer_bleu1(prediction, gold, category) == pytest.approx(expected, abs=1e-12)


# --- has_answer ---------------------------------------------------------------------------------------------

#: NFD of "서울" (Hangul syllables decomposed into jamo).
SEOUL_NFD = "\u1109\u1165\u110b\u116e\u11af"

HAS_ANSWER_CASES = [
    # tokens [new, york] in [i, live, in, new, york, .]: in sequence: True
    ("New York", ["I live in new york."], True),
    # both tokens, wrong order: False
    ("New York", ["york new"], False),
    # "new" in one text, "york" in the other: each text is tested alone: False
    ("New York", ["I love new", "york city"], False),
    # the second text holds it; a tab is a control character, dropped: True
    ("New York", ["nothing here", "in New\tYork!"], True),
    # whole tokens only: [yorkshire] has no token "york": False
    ("York", ["Yorkshire"], False),
    # NFC gold, NFD text: both NFD: [cafe\u0301]: True
    ("caf\u00e9", ["CAFE\u0301 au lait"], True),
    # accents are kept: [cafe] vs [cafe\u0301]: False
    ("cafe", ["caf\u00e9"], False),
    # a script without spaces: [北京] vs [我住在北京市], one token: False; with spaces: True
    ("\u5317\u4eac", ["\u6211\u4f4f\u5728\u5317\u4eac\u5e02"], False),
    ("\u5317\u4eac", ["\u6211\u4f4f\u5728 \u5317\u4eac \u5e02"], True),
    # Hangul: NFC gold, NFD text: both become the same jamo: True
    ("\uc11c\uc6b8", [SEOUL_NFD + " \uc2dc"], True),
    # Greek: lower-casing keeps the accent (NFD mark): αθη\u0301να is not αθηνα: False; with it: True
    ("\u0391\u03b8\u03ae\u03bd\u03b1", ["\u03c3\u03c4\u03b7\u03bd \u0391\u0398\u0397\u039d\u0391"], False),
    ("\u0391\u03b8\u03ae\u03bd\u03b1", ["\u03c3\u03c4\u03b7\u03bd \u03b1\u03b8\u03ae\u03bd\u03b1"], True),
    # punctuation is a token of its own, spaces between tokens do not matter: [co, -, op] in [the, co, -, op]
    ("co-op", ["the co - op"], True),
    # a soft hyphen (format character) splits a word: [co, op]: "coop" not found, "co op" found
    ("coop", ["co\u00adop"], False),
    ("co op", ["co\u00adop"], True),
    # the Kelvin sign decomposes to K (NFD): [k]: True
    ("\u212a", ["k"], True),
    # "²" has no canonical decomposition: [x²] vs [x2]: False
    ("x2", ["x\u00b2"], False),
    # lower-casing is not case folding: straße vs strasse: False
    ("Stra\u00dfe", ["STRASSE"], False),
    # points are tokens: [u, ., s, .] in [the, u, ., s, ., army]: True
    ("U.S.", ["the u . s . army"], True),
    # a gold with no tokens is found in any text, even an empty one; no texts: False
    ("", ["anything"], True),
    ("  ", [""], True),
    ("Paris", [], False),
    ("", [], False),
]


@pytest.mark.parametrize(("gold", "texts", "expected"), HAS_ANSWER_CASES)
def test_has_answer(gold: str, texts: list[str], expected: bool) -> None:
    """has_answer looks for the gold's NFD, lower-cased DPR tokens as a contiguous run in each text's tokens."""
    assert has_answer(gold, texts) is expected


def test_has_answer_takes_any_iterable() -> None:
    """has_answer reads texts from a generator as from a list, stopping at the first text that has the answer."""
    seen: list[str] = []

    def texts():
        for text in ("no", "Paris yes", "never read"):
            seen.append(text)
            yield text

    assert has_answer("paris", texts()) is True
    assert seen == ["no", "Paris yes"]


DPR_TOKENS = [
    # letter runs, the apostrophe and the em dash alone, "!" alone
    ("Don't stop\u2014NOW!", ["don", "'", "t", "stop", "\u2014", "now", "!"]),
    # NFD: é -> e + U+0301, a mark, kept in the run; lower-cased
    ("Caf\u00e9", ["cafe\u0301"]),
    # numbers are in the runs; "." alone; "²" (No) is a number: one run
    ("3.5 x\u00b2", ["3", ".", "5", "x\u00b2"]),
    # a zero-width joiner (Cf) and a no-break space (Zs) separate and vanish; an emoji (So) is one token
    ("a\u200db\u00a0c \U0001f600", ["a", "b", "c", "\U0001f600"]),
    # private use (Co) vanishes too
    ("x\ue000y", ["x", "y"]),
]


@pytest.mark.parametrize(("text", "expected"), DPR_TOKENS)
def test_dpr_tokens(text: str, expected: list[str]) -> None:
    """dpr_tokens: letter/number/mark runs and other single non-separator, non-control characters, lower-cased."""
    assert dpr_tokens(text) == expected


def test_category_may_be_a_numpy_integer() -> None:
    """A NumPy integer category (a column read by pandas) is the same category as the int."""
    import numpy as np

    assert answer_f1("Paris", "Paris; France", np.int64(3)) == 1.0


# --- errors -------------------------------------------------------------------------------------------------

CATEGORY_ALLOWED = "category must be 1, 2, 3, 4, 5 or None \\(no category rule\\)"


@pytest.mark.parametrize("score", [answer_f1, answer_em, answer_bleu1])
@pytest.mark.parametrize(
    ("category", "shown"), [(6, "6 \\(int\\)"), (0, "0 \\(int\\)"), (True, "True \\(bool\\)"), ("1", "'1' \\(str\\)")]
)
def test_bad_category(score, category: object, shown: str) -> None:
    """A category outside 1-5 and None (a bool, a string) is refused, naming the allowed values."""
    with pytest.raises(ParameterError, match=f"^category: {shown} is not a LoCoMo category; {CATEGORY_ALLOWED}$"):
        score("a", "b", category)


@pytest.mark.parametrize("score", [answer_f1, answer_em, answer_bleu1])
def test_gold_not_text(score) -> None:
    """A number gold answer is refused with the hint to convert it as LoCoMo's evaluation does."""
    message = "^gold: 2022 \\(int\\) is not text; gold must be a str \\(LoCoMo's evaluation turns a number answer into text with str\\(\\)\\)$"
    with pytest.raises(ParameterError, match=message):
        score("2022", 2022, 2)


@pytest.mark.parametrize("score", [answer_f1, answer_em, answer_bleu1, token_f1])
def test_prediction_not_text(score) -> None:
    """A prediction that is not a str is refused."""
    arguments = (None, "x") if score is token_f1 else (None, "x", None)
    with pytest.raises(ParameterError, match="^prediction: None \\(NoneType\\) is not text; prediction must be a str$"):
        score(*arguments)


def test_has_answer_refuses_one_string() -> None:
    """A single str as texts is refused: iterating it would test each character."""
    with pytest.raises(
        ParameterError,
        match="^texts: 'Paris' \\(str\\) is one str, not a collection of texts; pass a list of texts: \\[text\\]$",
    ):
        has_answer("Paris", "Paris")


def test_has_answer_refuses_a_text_that_is_not_a_string() -> None:
    """A text that is not a str is refused, naming its position."""
    with pytest.raises(
        ParameterError, match="^texts\\[1\\]: None \\(NoneType\\) is not text; texts\\[1\\] must be a str$"
    ):
        has_answer("Paris", ["x", None])


# --- properties ---------------------------------------------------------------------------------------------


@given(answers, answers, answer_categories)
def test_scores_are_within_0_and_1(prediction: str, gold: str, category: int | None) -> None:
    """F1, EM and BLEU-1 are always in [0, 1], and EM is 0 or 1."""
    assert 0.0 <= answer_f1(prediction, gold, category) <= 1.0
    assert answer_em(prediction, gold, category) in (0.0, 1.0)
    assert 0.0 <= answer_bleu1(prediction, gold, category) <= 1.0


@given(answers, answers)
def test_token_f1_is_symmetric(prediction: str, gold: str) -> None:
    """Token F1 without a category rule does not depend on which side is the gold."""
    assert token_f1(prediction, gold) == token_f1(gold, prediction)


@given(answers, answers)
def test_category_5_reads_only_the_prediction(prediction: str, gold: str) -> None:
    """Category-5 F1 is 1 exactly when the lower-cased prediction contains an abstention phrase."""
    expected = float(any(phrase in prediction.lower() for phrase in ABSTENTION_PHRASES))
    assert answer_f1(prediction, gold, 5) == expected


@given(answers, answers, answers)
def test_has_answer_finds_the_gold_between_spaces(before: str, gold: str, after: str) -> None:
    """The gold written into a text between spaces is always found, and order of texts does not matter."""
    assert has_answer(gold, [before + " " + gold + " " + after])
    assert has_answer(gold, ["x", before]) == has_answer(gold, [before, "x"])


# --- cross-checks against independent formulations ---------------------------------------------------------

ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def reference_token_f1(prediction: str, gold: str) -> float:
    """Token F1 from nltk's stemmer and a word-by-word normalisation (valid where \\b agrees with spaces)."""
    from nltk.stem.porter import PorterStemmer

    stemmer = PorterStemmer()

    def bag(text: str) -> Counter[str]:
        words = "".join(ch for ch in text.lower() if ch not in ASCII_PUNCTUATION).split()
        return Counter(stemmer.stem(word) for word in words if word not in {"a", "an", "the", "and"})

    p, g = bag(prediction), bag(gold)
    common = sum(min(p[token], g[token]) for token in p)
    return 0.0 if common == 0 else 2 * common / (sum(p.values()) + sum(g.values()))


#: Answers of ASCII words and punctuation, where "a whole word" and "a space-separated word" agree.
ascii_answers = st.lists(
    st.sampled_from([word for word in ANSWER_WORDS if word.isascii() and "-" not in word and "'" not in word]),
    max_size=6,
).map(" ".join)


@given(ascii_answers, ascii_answers)
def test_token_f1_matches_nltk_stems_and_counts(prediction: str, gold: str) -> None:
    """token_f1 equals 2 * common / (|P| + |G|) over nltk-stemmed words with ASCII punctuation and a/an/the/and gone."""
    assert token_f1(prediction, gold) == pytest.approx(reference_token_f1(prediction, gold), abs=1e-12)


@given(answers, answers, answer_categories)
def test_bleu1_matches_nltk_sentence_bleu(prediction: str, gold: str, category: int | None) -> None:
    """answer_bleu1 equals nltk's sentence_bleu with weights (1, 0, 0, 0) and method1 smoothing, bit for bit."""
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    reference = gold.split(";")[0].strip() if category == 3 else gold
    tokenize = NLTKWordTokenizer().tokenize
    hypothesis, wanted = tokenize(prediction.lower()), tokenize(reference.lower())
    smoothing = SmoothingFunction().method1
    expected = sentence_bleu([wanted], hypothesis, weights=(1, 0, 0, 0), smoothing_function=smoothing)
    assert answer_bleu1(prediction, gold, category) == expected


def category_tokens(text: str) -> list[str]:
    """DPR's tokens by Unicode category, character by character (no regex): runs of L/N/M, single non-Z/C."""
    tokens: list[str] = []
    run = ""
    for ch in unicodedata.normalize("NFD", text):
        kind = unicodedata.category(ch)[0]
        if kind in "LNM":
            run += ch
            continue
        if run:
            tokens.append(run)
            run = ""
        if kind not in "ZC":
            tokens.append(ch)
    if run:
        tokens.append(run)
    return [token.lower() for token in tokens]


unicode_texts = st.text(
    alphabet=st.sampled_from("aAbB \t\u00e9e\u0301\u00ad\u200d\u00a0.-'\u2019\u00b2\u5317\u4eac\u0391\u03ae\u212a1"),
    max_size=12,
)


@given(unicode_texts, unicode_texts, unicode_texts)
def test_has_answer_matches_a_tokeniser_by_unicode_category(gold: str, first: str, second: str) -> None:
    """has_answer agrees with a contiguous-run search over tokens cut by unicodedata categories."""
    needle = category_tokens(gold)

    def contains(text: str) -> bool:
        tokens = category_tokens(text)
        return any(tokens[i : i + len(needle)] == needle for i in range(len(tokens) - len(needle) + 1))

    assert dpr_tokens(first) == category_tokens(first)
    assert has_answer(gold, [first, second]) == (contains(first) or contains(second))


def test_the_answer_module_loads_nothing_heavy() -> None:
    """Importing the module loads neither nltk nor regex; the first score does."""
    import subprocess
    import sys

    code = (
        "import sys; import agentmemory.metrics.answer_text as m; "
        "print(sorted(n for n in ('nltk', 'regex') if n in sys.modules)); "
        "m.answer_f1('a', 'b', None); print(sorted(n for n in ('nltk', 'regex') if n in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "['nltk', 'regex']"]


def test_regex_word_boundary_differs_from_re() -> None:
    """Why the regex module: Python's re would remove the "the" of "the" + a combining mark (the regex module keeps it)."""
    assert re.sub(r"\b(?:a|an|the|and)\b", " ", "the\u0301").strip() == "\u0301"
    assert normalize_answer("the\u0301") == "the\u0301"
