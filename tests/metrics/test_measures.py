"""Measures: golden values, properties, the registry and the parser."""

from __future__ import annotations

import dataclasses
import math
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins import install, restored
from strategies import cutoffs, measures, qrels_of_query, rankings, rankings_with_first_relevant

from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.metrics import (
    ALIASES,
    REGISTRY,
    CutoffRule,
    Measure,
    MeasureDef,
    QueryContext,
    compute_measures,
    distinct_measures,
    parse_measure,
    parse_measures,
    register_measure,
)
from agentmemory.metrics import precision as precision_module
from agentmemory.metrics import r_precision as r_precision_module
from agentmemory.metrics.answers import ANSWER_DEFINITIONS
from agentmemory.metrics.average_precision import average_precision
from agentmemory.metrics.ndcg import ndcg
from agentmemory.metrics.precision import precision
from agentmemory.metrics.r_precision import r_precision
from agentmemory.metrics.recall import recall
from agentmemory.metrics.reciprocal_rank import reciprocal_rank
from agentmemory.metrics.success import success

# Judgments used by the golden table: 3 relevant documents (a: 1, c: 2, d: 1),
# b judged not relevant, n judged -1; x and y are unjudged.
QRELS = {"a": 1, "b": 0, "c": 2, "d": 1, "n": -1}
# c (grade 2) at rank 1, a (grade 1) at rank 3; 5 documents.
RUN_X = ["c", "x", "a", "b", "y"]
# first relevant document (d) at rank 3.
RUN_Y = ["x", "b", "d"]
# ideal DCG of QRELS at cutoffs >= 3: grades 2, 1, 1 at ranks 1, 2, 3.
IDCG3 = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)  # 3.1309297535714578

GOLDEN = [
    # precision: divides by k, even when fewer than k documents were retrieved
    ("P@1", RUN_X, QRELS, 1.0),
    ("P@3", RUN_X, QRELS, 2 / 3),
    ("P@5", RUN_X, QRELS, 2 / 5),
    ("P@10", RUN_X, QRELS, 2 / 10),
    ("P@2", ["a"], QRELS, 1 / 2),
    # recall: divides by all 3 relevant judged documents
    ("R@1", RUN_X, QRELS, 1 / 3),
    ("R@3", RUN_X, QRELS, 2 / 3),
    ("R@10", RUN_X, QRELS, 2 / 3),
    ("R@2", ["a", "c", "d"], QRELS, 2 / 3),
    # reciprocal rank, uncut and cut
    ("RR", RUN_X, QRELS, 1.0),
    ("RR", RUN_Y, QRELS, 1 / 3),
    ("RR@2", RUN_Y, QRELS, 0.0),
    ("RR@3", RUN_Y, QRELS, 1 / 3),
    ("RR@10", RUN_Y, QRELS, 1 / 3),
    ("RR", ["x", "n", "b"], QRELS, 0.0),
    # success
    ("Success@1", RUN_X, QRELS, 1.0),
    ("Success@2", RUN_Y, QRELS, 0.0),
    ("Success@3", RUN_Y, QRELS, 1.0),
    # AP@k: sum of P@i at relevant ranks i <= k, over all 3 relevant
    ("AP@5", RUN_X, QRELS, (1 / 1 + 2 / 3) / 3),  # 5/9
    ("AP@2", RUN_X, QRELS, (1 / 1) / 3),
    ("AP@10", RUN_Y, QRELS, (1 / 3) / 3),
    ("AP@3", ["a", "c", "d"], QRELS, 1.0),
    # R-precision: R = 3
    ("Rprec", RUN_X, QRELS, 2 / 3),
    ("Rprec", RUN_Y, QRELS, 1 / 3),
    ("Rprec", ["a"], QRELS, 1 / 3),  # fewer than R retrieved: still divided by R
    ("Rprec", ["d", "a", "c", "b"], QRELS, 1.0),
    # nDCG: gain = grade, discount log2(rank + 1), ideal from all judged grades
    ("nDCG@1", RUN_X, QRELS, 1.0),  # 2/1 over 2/1
    ("nDCG@1", ["a"], QRELS, 0.5),  # 1/1 over 2/1
    ("nDCG@3", RUN_X, QRELS, (2 / 1 + 1 / 2) / IDCG3),  # 0.798485...
    ("nDCG@5", RUN_X, QRELS, (2 / 1 + 1 / 2) / IDCG3),
    ("nDCG@5", ["d", "a"], QRELS, (1 / 1 + 1 / math.log2(3)) / IDCG3),
    ("nDCG@2", ["c", "a", "d"], QRELS, 1.0),
    ("nDCG@2", ["n", "a"], {"n": -1, "a": 1}, 1 / math.log2(3)),  # -1 is no gain, not a loss
    ("nDCG@3", ["x", "b", "c"], {"b": 0, "c": 3}, (3 / 2) / 3),
]


@pytest.mark.parametrize(("text", "ranking", "qrels", "expected"), GOLDEN)
def test_golden_values(text, ranking, qrels, expected):
    """Each measure gives the hand-computed value on small rankings (trec_eval formulas)."""
    assert parse_measure(text).compute(ranking, qrels) == pytest.approx(expected, abs=1e-15)


NO_RELEVANT = [
    ("all judged 0 or negative", ["a", "b", "c"], {"a": 0, "b": -1}),
    ("nothing judged", ["a", "b"], {}),
    ("empty ranking", [], {"a": 0}),
    ("empty ranking and judgments", [], {}),
]


def _family(family: str) -> list[str]:
    """The registered measures of one family, read from the registry (no test lists them by hand)."""
    return sorted(n for n, d in REGISTRY.registered().items() if d.family == family)


TREC_EVAL = _family("trec_eval")
LONGMEMEVAL = _family("LongMemEval")


@pytest.mark.parametrize("name", TREC_EVAL)
@pytest.mark.parametrize(("case", "ranking", "qrels"), NO_RELEVANT, ids=[c[0] for c in NO_RELEVANT])
def test_no_relevant_document_scores_zero(name, case, ranking, qrels):
    """A query with no relevant judged document scores exactly 0.0 on every trec_eval measure."""
    measure = Measure(name) if REGISTRY[name].cutoff is not CutoffRule.REQUIRED else Measure(name, 3)
    assert measure.compute(ranking, qrels) == 0.0


@pytest.mark.parametrize("name", LONGMEMEVAL)
@pytest.mark.parametrize(("case", "ranking", "qrels"), NO_RELEVANT, ids=[c[0] for c in NO_RELEVANT])
def test_no_relevant_document_longmemeval(name, case, ranking, qrels):
    """With no gold item, LongMemEval's recall_all is 1.0 (all() of nothing, as the official code) and the others 0.0."""
    expected = 1.0 if name.endswith("recall_all") else 0.0
    assert Measure(name, 3).compute(ranking, qrels) == expected


@pytest.mark.parametrize("name", ["P", "R", "nDCG", "AP", "Success"])
def test_empty_ranking_with_relevant_documents_scores_zero(name):
    """Retrieving nothing scores 0.0 even when the query has relevant documents."""
    assert Measure(name, 5).compute([], QRELS) == 0.0


@pytest.mark.parametrize(
    ("helper", "args", "expected"),
    [
        (precision, (RUN_X, QRELS, 3), 2 / 3),
        (recall, (RUN_X, QRELS, 3), 2 / 3),
        (reciprocal_rank, (RUN_Y, QRELS), 1 / 3),
        (reciprocal_rank, (RUN_Y, QRELS, 2), 0.0),
        (ndcg, (RUN_X, QRELS, 3), 2.5 / IDCG3),
        (average_precision, (RUN_X, QRELS, 5), 5 / 9),
        (success, (RUN_Y, QRELS, 3), 1.0),
        (r_precision, (RUN_X, QRELS), 2 / 3),
    ],
)
def test_pure_helpers(helper, args, expected):
    """The pure helper of each module computes the measure directly."""
    assert helper(*args) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("helper", [precision, recall, reciprocal_rank, ndcg, average_precision, success])
@pytest.mark.parametrize(
    ("k", "message"),
    [
        (0, "k: 0 (int) is less than 1; k must be an integer >= 1"),
        (2.0, "k: 2.0 (float) is not an integer; k must be an integer >= 1"),
        (True, "k: True (bool) is not an integer; k must be an integer >= 1"),
    ],
)
def test_helpers_reject_bad_cutoff(helper, k, message):
    """Every helper with a cutoff rejects a k that is not an integer >= 1."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        helper(RUN_X, QRELS, k)


def test_registry_entries_are_consistent():
    """Each registry entry is keyed by its own name and has a one-line description naming its family's reference
    (every built-in states a family; the families' members are read from the registry, not listed here)."""
    assert TREC_EVAL and LONGMEMEVAL
    references = {
        "trec_eval": "trec_eval",
        "LongMemEval": "LongMemEval official",
        "BEAM": "BEAM knowledge updates",
        "budget": "context budget",
        "judge": "imported judge",
        "LoCoMo": "LoCoMo's",
        "DPR has_answer": "has_answer",
    }
    for key, definition in REGISTRY.registered().items():
        for d in (definition, definition.budget_form):
            if d is None:
                continue
            assert d.name == key
            assert d.description and "\n" not in d.description
            assert references[d.family] in d.description
            assert callable(d.function)


def test_cutoff_rules():
    """P, R, nDCG, AP and Success require a cutoff, RR may take one, Rprec takes none; every LongMemEval measure
    requires one.  (Facts about these measures, not the list of measures: another may be registered beside them.)"""
    expected = {
        "P": CutoffRule.REQUIRED,
        "R": CutoffRule.REQUIRED,
        "nDCG": CutoffRule.REQUIRED,
        "AP": CutoffRule.REQUIRED,
        "Success": CutoffRule.REQUIRED,
        "RR": CutoffRule.OPTIONAL,
        "Rprec": CutoffRule.FORBIDDEN,
    }
    assert {name: REGISTRY[name].cutoff for name in expected} == expected
    assert all(REGISTRY[name].cutoff is CutoffRule.REQUIRED for name in LONGMEMEVAL)


def test_aliases_point_into_registry():
    """Every alias resolves to a canonical registry name."""
    assert set(ALIASES.values()) <= set(REGISTRY)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("P@5", Measure("P", 5)),
        ("p@5", Measure("P", 5)),
        ("precision@5", Measure("P", 5)),
        ("R@5", Measure("R", 5)),
        ("recall@5", Measure("R", 5)),
        ("Recall@10", Measure("R", 10)),
        ("RR", Measure("RR")),
        ("RR@5", Measure("RR", 5)),
        ("MRR", Measure("RR")),
        ("mrr", Measure("RR")),
        ("MRR@5", Measure("RR", 5)),
        ("recip_rank", Measure("RR")),
        ("nDCG@10", Measure("nDCG", 10)),
        ("ndcg@10", Measure("nDCG", 10)),
        ("NDCG@10", Measure("nDCG", 10)),
        ("ndcg_cut@10", Measure("nDCG", 10)),
        ("AP@10", Measure("AP", 10)),
        ("MAP@10", Measure("AP", 10)),
        ("map@10", Measure("AP", 10)),
        ("map_cut@10", Measure("AP", 10)),
        ("Success@1", Measure("Success", 1)),
        ("success@3", Measure("Success", 3)),
        ("hit_rate@3", Measure("Success", 3)),
        ("Rprec", Measure("Rprec")),
        ("rprec", Measure("Rprec")),
        ("R-precision", Measure("Rprec")),
        ("  P@5 ", Measure("P", 5)),
        ("P@05", Measure("P", 5)),
    ],
)
def test_parse_measure(text, expected):
    """Names, aliases (any case) and cutoffs parse to the right Measure."""
    assert parse_measure(text) == expected


@pytest.mark.parametrize(
    ("measure", "text"),
    [
        (Measure("P", 5), "P@5"),
        (Measure("R", 5), "R@5"),
        (Measure("RR"), "RR"),
        (Measure("RR", 5), "RR@5"),
        (Measure("nDCG", 5), "nDCG@5"),
        (Measure("AP", 5), "AP@5"),
        (Measure("Success", 5), "Success@5"),
        (Measure("Rprec"), "Rprec"),
    ],
)
def test_canonical_text(measure, text):
    """str(measure) is the canonical text form."""
    assert str(measure) == text


@given(measures())
def test_text_round_trip(measure):
    """parse_measure(str(m)) gives back an equal (and equally hashed) measure."""
    parsed = parse_measure(str(measure))
    assert parsed == measure
    assert hash(parsed) == hash(measure)


def test_measures_are_hashable_values():
    """Equal measures are interchangeable as dict keys and set members."""
    assert {Measure("P", 5), parse_measure("precision@5"), Measure("P", 10)} == {Measure("P", 5), Measure("P", 10)}
    with pytest.raises(AttributeError):
        Measure("P", 5).cutoff = 10  # type: ignore[misc]


ALL_NAMES = ", ".join(sorted([*REGISTRY.names(), *ALIASES]))
"""What an unknown measure's message offers: every registered name and alias, sorted (derived from the registry,
so an honest addition breaks no test)."""


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("foo@5", UnknownNameError, f"metric: 'foo@5' (str) is not a known name; choose from: {ALL_NAMES}"),
        ("", UnknownNameError, f"metric: '' (str) is not a known name; choose from: {ALL_NAMES}"),
        ("@5", UnknownNameError, f"metric: '@5' (str) is not a known name; choose from: {ALL_NAMES}"),
        (
            "P",
            ParameterError,
            "metric: 'P' (str) has no cutoff; P needs a cutoff k, an integer >= 1: write P@k, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            "MAP",
            ParameterError,
            "metric: 'MAP' (str) has no cutoff; AP needs a cutoff k, an integer >= 1: write AP@k, e.g. AP@10",
        ),
        (
            "P@0",
            ParameterError,
            "metric: 'P@0' (str) has cutoff 0, which is less than 1; the cutoff must be an integer >= 1, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            "nDCG@-3",
            ParameterError,
            "metric: 'nDCG@-3' (str) has cutoff -3, which is less than 1; "
            "the cutoff must be an integer >= 1, e.g. nDCG@10, or a token budget: nDCG@<T>tok, e.g. nDCG@512tok",
        ),
        (
            "P@x",
            ParameterError,
            "metric: 'P@x' (str) has cutoff 'x', which is not an integer; "
            "the cutoff must be an integer >= 1, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            "P@2.5",
            ParameterError,
            "metric: 'P@2.5' (str) has cutoff '2.5', which is not an integer; "
            "the cutoff must be an integer >= 1, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            "P@",
            ParameterError,
            "metric: 'P@' (str) has cutoff '', which is not an integer; the cutoff must be an integer >= 1, e.g. P@10, "
            "or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            "RR@5@3",
            ParameterError,
            "metric: 'RR@5@3' (str) has cutoff '5@3', which is not an integer; "
            "the cutoff must be an integer >= 1, e.g. RR@10",
        ),
        ("Rprec@5", ParameterError, "metric: 'Rprec@5' (str) has a cutoff; Rprec takes no cutoff: write Rprec"),
        (5, ParameterError, "metric: 5 (int) is not text; give a name such as 'P@5' or 'RR'"),
    ],
)
def test_parse_measure_errors(text, error, message):
    """Bad names and cutoffs are rejected with a message naming the text and what is allowed."""
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        parse_measure(text)


def test_unknown_name_choices_come_from_registry():
    """The choices listed for an unknown name are exactly the registry names plus the aliases."""
    with pytest.raises(UnknownNameError) as info:
        parse_measure("nope")
    assert info.value.choices == sorted([*REGISTRY, *ALIASES])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("P",),
            "cutoff: None (NoneType) is missing; P needs a cutoff k, an integer >= 1: write P@k, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            ("P", 0),
            "cutoff: 0 (int) is less than 1; the cutoff must be an integer >= 1, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            ("P", True),
            "cutoff: True (bool) is not an integer; the cutoff must be an integer >= 1, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (
            ("P", "5"),
            "cutoff: '5' (str) is not an integer; the cutoff must be an integer >= 1, e.g. P@10, or a token budget: P@<T>tok, e.g. P@512tok",
        ),
        (("Rprec", 3), "cutoff: 3 (int) is not allowed; Rprec takes no cutoff: write Rprec"),
    ],
)
def test_measure_constructor_checks_cutoff(args, message):
    """Measure(...) checks its cutoff like the parser does."""
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        Measure(*args)


def test_measure_constructor_needs_canonical_name():
    """Measure(...) accepts only canonical names; aliases go through parse_measure."""
    message = "metric: 'recall' (str) is not a known name; choose from: " + ", ".join(sorted(REGISTRY.names()))
    with pytest.raises(UnknownNameError, match=f"^{re.escape(message)}$"):
        Measure("recall", 5)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("P@5,R@5", (Measure("P", 5), Measure("R", 5))),
        ("P@5, R@5 ,MRR", (Measure("P", 5), Measure("R", 5), Measure("RR"))),
        ("nDCG@10", (Measure("nDCG", 10),)),
        (["RR@5", Measure("P", 3)], (Measure("RR", 5), Measure("P", 3))),
        ((m for m in [Measure("AP", 2)]), (Measure("AP", 2),)),
    ],
)
def test_parse_measures(spec, expected):
    """Comma-separated text or an iterable of texts/Measures parses to a tuple, order kept."""
    assert parse_measures(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("MRR,RR", "metrics: 'MRR,RR' (str) names RR twice; list each measure once"),
        (
            ["P@5", Measure("P", 5)],
            "metrics: ['P@5', Measure(name='P', cutoff=5)] (list) names P@5 twice; list each measure once",
        ),
        ("", "metrics: '' (str) names no measure; give at least one, e.g. 'P@5,RR'"),
        ([], "metrics: [] (list) names no measure; give at least one, e.g. 'P@5,RR'"),
        ("P@5,,RR", "metrics: 'P@5,,RR' (str) has an empty item; separate measures by single commas, e.g. 'P@5,RR'"),
        ("P@5,", "metrics: 'P@5,' (str) has an empty item; separate measures by single commas, e.g. 'P@5,RR'"),
        ([3], "metric: 3 (int) is neither text nor a Measure; give a name such as 'P@5'"),
    ],
)
def test_parse_measures_errors(spec, message):
    """Duplicates (after aliases), empty lists and empty items are rejected with a clear message."""
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        parse_measures(spec)


def test_parse_measures_names_the_option_in_messages():
    """name= is what a message calls the list (a command-line flag)."""
    with pytest.raises(ParameterError, match=r"^--table-metrics: 'RR,MRR' \(str\) names RR twice; list each"):
        parse_measures("RR,MRR", name="--table-metrics")


@pytest.mark.parametrize(
    ("measures", "k", "expected"),
    [
        (["P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5"], 5, ("P@5", "R@5", "RR@5", "nDCG@5", "AP@5")),
        (["RR@5", "RR"], 5, ("RR@5",)),  # the cut form is kept wherever it stands
        (["RR", "RR@10"], 5, ("RR", "RR@10")),  # RR@10 looks deeper than an evaluation at 5 shows RR
        (["RR", "RR@3"], 5, ("RR", "RR@3")),
        (["RR"], 5, ("RR",)),
        (["Rprec", "P@5"], 5, ("Rprec", "P@5")),  # Rprec takes no cutoff: nothing to merge
        (["sess.recall_any@5", "recall_any@5"], 5, ("sess.recall_any@5", "recall_any@5")),
        ([Measure("RR"), Measure("RR", 10)], 10, ("RR@10",)),
        (["P@5", "P@5"], 5, ("P@5",)),
    ],
)
def test_distinct_measures(measures, k, expected):
    """An uncut measure whose cutoff is optional is its cut form at k in an evaluation at k: only the cut form stays."""
    assert distinct_measures(measures, k) == expected


def test_compute_measures_keys_and_order():
    """compute_measures returns one value per measure, keyed by its text, in the given order."""
    chosen = parse_measures("Rprec,P@2,RR,RR@2,nDCG@3")
    values = compute_measures(chosen, RUN_Y, QRELS)
    assert list(values) == ["Rprec", "P@2", "RR", "RR@2", "nDCG@3"]
    assert values == pytest.approx(
        {"Rprec": 1 / 3, "P@2": 0.0, "RR": 1 / 3, "RR@2": 0.0, "nDCG@3": (1 / 2) / IDCG3}, abs=1e-15
    )


def test_compute_measures_rejects_text():
    """compute_measures wants Measure values and says how to get them from text."""
    message = "measures: 'P@5' (str) is not a Measure; parse text first, e.g. with parse_measures('P@5')"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        compute_measures(["P@5"], RUN_X, QRELS)  # type: ignore[list-item]


@pytest.mark.parametrize(
    "call",
    [
        lambda ranking: compute_measures([Measure("P", 5)], ranking, QRELS),
        lambda ranking: Measure("P", 5).compute(ranking, QRELS),
    ],
    ids=["compute_measures", "Measure.compute"],
)
def test_duplicate_document_in_ranking_is_rejected(call):
    """A ranking that lists a document twice is an error, as in trec_eval."""
    message = "ranking: 'a' (str) appears twice; list each document once (trec_eval stops on duplicate documents too)"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        call(["a", "c", "a"])


# ---------------------------------------------------------------- properties


@given(measures(), rankings, qrels_of_query)
def test_values_are_between_zero_and_one(measure, ranking, qrels):
    """Every measure lies in [0, 1]."""
    assert 0.0 <= measure.compute(ranking, qrels) <= 1.0


@given(rankings, qrels_of_query, cutoffs, cutoffs)
def test_recall_never_falls_as_k_grows(ranking, qrels, k1, k2):
    """R@k is non-decreasing in k."""
    small, large = sorted((k1, k2))
    assert recall(ranking, qrels, small) <= recall(ranking, qrels, large)


@given(rankings_with_first_relevant(), st.one_of(st.none(), cutoffs))
def test_rr_is_one_when_first_document_is_relevant(case, k):
    """RR (cut or not) is exactly 1 when the rank-1 document is relevant."""
    ranking, qrels = case
    assert reciprocal_rank(ranking, qrels, k) == 1.0


@given(rankings, qrels_of_query, cutoffs)
def test_success_at_least_precision(ranking, qrels, k):
    """Success@k >= P@k: a query with any hit in the top k succeeds."""
    assert success(ranking, qrels, k) >= precision(ranking, qrels, k)


@given(rankings, qrels_of_query, cutoffs)
def test_ap_at_most_recall(ranking, qrels, k):
    """AP@k <= R@k: each term P@i of the AP sum is at most 1."""
    assert average_precision(ranking, qrels, k) <= recall(ranking, qrels, k) + 1e-15


@given(rankings, qrels_of_query, cutoffs)
def test_rr_cut_is_rr_or_zero(ranking, qrels, k):
    """RR@k equals RR when the first relevant rank is <= k, and 0 otherwise."""
    uncut = reciprocal_rank(ranking, qrels)
    expected = uncut if uncut >= 1 / k else 0.0
    assert reciprocal_rank(ranking, qrels, k) == expected


@given(rankings, qrels_of_query)
def test_rprec_is_precision_and_recall_at_r(ranking, qrels):
    """With R relevant documents, Rprec = P@R = R@R (and 0 when R = 0)."""
    num_rel = sum(1 for grade in qrels.values() if grade >= 1)
    value = r_precision(ranking, qrels)
    if num_rel == 0:
        assert value == 0.0
    else:
        assert value == precision(ranking, qrels, num_rel) == recall(ranking, qrels, num_rel)


@given(rankings, qrels_of_query, cutoffs)
def test_ideal_ranking_has_ndcg_one(ranking, qrels, k):
    """Ranking every positively graded document by grade, highest first, gives nDCG@k = 1 (or 0 if none)."""
    ideal = sorted((doc for doc, grade in qrels.items() if grade > 0), key=lambda d: -qrels[d])
    has_relevant = bool(ideal)
    assert ndcg(ideal + [d for d in ranking if d not in ideal], qrels, k) == pytest.approx(
        1.0 if has_relevant else 0.0, abs=1e-12
    )


# ---------------------------------------------------------------- the open registry


def _hits(query: QueryContext) -> float:
    """Hits@k: the number of relevant documents in the top k (a measure no built-in computes)."""
    return float(sum(1 for doc in query.ranking[: query.k] if query.qrels.get(doc, 0) >= 1))


HITS = MeasureDef("Hits", _hits, CutoffRule.REQUIRED, "relevant documents in the top k (trec_eval: P_k times k)")


@pytest.fixture
def registry_restored():
    """REGISTRY exactly as before the test, whatever the test registers, replaces or removes."""
    with restored(REGISTRY):
        yield


def _choices(*extra: str) -> str:
    return ", ".join(sorted([*ALL_NAMES.split(", "), *extra]))


def test_runtime_measure_parses_and_computes_at_once(registry_restored):
    """A measure registered at run time parses (any case, by alias too) and computes, with no other step."""
    stored = register_measure(HITS, aliases=("found",))
    assert stored.aliases == ("found",)
    assert parse_measure("Hits@3") == Measure("Hits", 3) == parse_measure("FOUND@3") == parse_measure(" hits@3 ")
    assert str(Measure("Hits", 3)) == "Hits@3"
    assert Measure("Hits", 3).compute(RUN_X, QRELS) == 2.0
    assert compute_measures(parse_measures("P@3,hits@3"), RUN_X, QRELS) == {"P@3": 2 / 3, "Hits@3": 2.0}
    assert ALIASES["found"] == "Hits"


def test_runtime_measure_is_among_the_choices(registry_restored):
    """The choices of an unknown-name error (parser and constructor) list a measure registered at run time."""
    register_measure(HITS, aliases="found")
    message = f"metric: 'nope@3' (str) is not a known name; choose from: {_choices('Hits', 'found')}"
    with pytest.raises(UnknownNameError, match=f"^{re.escape(message)}$"):
        parse_measure("nope@3")
    message = "metric: 'nope' (str) is not a known name; choose from: " + ", ".join(sorted(REGISTRY.names()))
    with pytest.raises(UnknownNameError, match=f"^{re.escape(message)}$"):
        Measure("nope", 3)


def test_runtime_measure_cutoff_rule_is_checked(registry_restored):
    """The parser checks a run-time measure's cutoff rule as it does the built-ins'."""
    register_measure(HITS)
    message = "metric: 'Hits' (str) has no cutoff; Hits needs a cutoff k, an integer >= 1: write Hits@k, e.g. Hits@10"
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        parse_measure("Hits")


def test_per_query_function_receives_a_query_context(registry_restored):
    """The per-query function gets QueryContext(ranking, qrels, k, scope_ids): k is the cutoff (None without one)."""
    seen: list[QueryContext] = []

    def spy(query: QueryContext) -> float:
        seen.append(query)
        return 0.5

    register_measure(MeasureDef("Spy", spy, CutoffRule.OPTIONAL, "records what it sees (no trec_eval equivalent)"))
    assert compute_measures(parse_measures("Spy,Spy@2"), RUN_Y, QRELS) == {"Spy": 0.5, "Spy@2": 0.5}
    assert seen == [QueryContext(RUN_Y, QRELS, None, None), QueryContext(RUN_Y, QRELS, 2, None)]
    Measure("Spy", 4).compute(RUN_Y, QRELS, scope_ids=["x", "b", "d", "x"])
    assert seen[-1] == QueryContext(RUN_Y, QRELS, 4, frozenset({"x", "b", "d"}))


def _recall_in_scope(query: QueryContext) -> float:
    """Relevant in the top k over the relevant present in the scope (all relevant judged when it is unknown)."""
    relevant = [doc for doc, grade in query.qrels.items() if grade >= 1]
    if query.scope_ids is not None:
        relevant = [doc for doc in relevant if doc in query.scope_ids]
    if not relevant:
        return 0.0
    return sum(1 for doc in query.ranking[: query.k] if doc in relevant) / len(relevant)


def test_measure_using_scope_ids(registry_restored):
    """A measure can read the query's scope: here the relevant document 'd', outside the scope, is not counted."""
    register_measure(MeasureDef("ScopedR", _recall_in_scope, CutoffRule.REQUIRED, "recall over the gold in scope"))
    scope = {"c", "x", "a", "b", "y"}  # RUN_X's documents; the relevant 'd' is not in the scope
    measure = Measure("ScopedR", 5)
    assert measure.compute(RUN_X, QRELS) == 2 / 3  # unknown scope: a, c, d relevant
    assert measure.compute(RUN_X, QRELS, scope) == 1.0  # in scope: a and c, both found
    assert measure.compute(RUN_X, QRELS, sorted(scope)) == 1.0
    both = compute_measures([measure, Measure("R", 5)], RUN_X, QRELS, scope_ids=scope)
    assert both == {"ScopedR@5": 1.0, "R@5": 2 / 3}  # the trec_eval measures ignore the scope


@pytest.mark.parametrize(
    ("scope", "message"),
    [
        (
            "abc",
            "scope_ids: 'abc' (str) is one text, not a collection of ids; "
            "give the ids of every entry the query could retrieve (a set, list or tuple), or None",
        ),
        (
            3,
            "scope_ids: 3 (int) is not a collection of ids; "
            "give the ids of every entry the query could retrieve (a set, list or tuple), or None",
        ),
    ],
)
def test_bad_scope_ids(scope, message):
    """scope_ids must be a collection of ids (or None), not one text or a number."""
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        compute_measures([Measure("P", 5)], RUN_X, QRELS, scope_ids=scope)


def test_registering_a_taken_name_is_an_error(registry_restored):
    """A name registered twice is refused (built-in or not), and the registered definition stays."""
    register_measure(HITS)
    for name in ("Hits", "P"):
        message = (
            f"measure name: {name!r} (str) is already registered; "
            "pass replace=True to replace the registered measure, or choose another name"
        )
        with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
            register_measure(dataclasses.replace(HITS, name=name))
    assert REGISTRY["Hits"] is HITS
    assert REGISTRY["P"].function is not _hits


def test_replace_true_replaces_the_measure_and_its_aliases(registry_restored):
    """replace=True swaps in the new definition; the old one's aliases go with it."""
    register_measure(HITS, aliases=("found",))
    halved = MeasureDef("Hits", lambda q: _hits(q) / 2, CutoffRule.REQUIRED, "half the hits", aliases=("half",))
    assert register_measure(halved, replace=True) is halved
    assert Measure("Hits", 3).compute(RUN_X, QRELS) == 1.0
    assert parse_measure("half@3") == Measure("Hits", 3)
    with pytest.raises(UnknownNameError):
        parse_measure("found@3")


def test_replacing_a_built_in_measure(registry_restored):
    """A built-in measure can be replaced too, keeping its aliases when the new definition lists them."""
    original = REGISTRY["P"]
    register_measure(dataclasses.replace(original, function=lambda q: 0.25), replace=True)
    assert parse_measure("precision@5").compute(RUN_X, QRELS) == 0.25


def test_unregistered_measure_no_longer_parses(registry_restored):
    """After REGISTRY.unregister, neither the name nor the aliases parse."""
    register_measure(HITS, aliases=("found",))
    REGISTRY.unregister("Hits")
    for text in ("Hits@3", "found@3"):
        with pytest.raises(
            UnknownNameError,
            match=f"^metric: '{text}' \\(str\\) is not a known name; choose from: {re.escape(ALL_NAMES)}$",
        ):
            parse_measure(text)


@pytest.mark.parametrize(
    ("name", "aliases", "what", "spelling", "owner"),
    [
        ("Hits", ("mrr",), "measure alias", "mrr", "RR"),  # another measure's alias, other case
        ("Hits", ("NDCG",), "measure alias", "NDCG", "nDCG"),  # another measure's name, other case
        ("p", (), "measure name", "p", "P"),  # a name differing only in case
        ("Map", (), "measure name", "Map", "AP"),  # a name that is another measure's alias
    ],
)
def test_spellings_taken_by_another_measure_are_refused(registry_restored, name, aliases, what, spelling, owner):
    """Names and aliases are matched ignoring case, so none may be another measure's name or alias, even with replace."""
    definition = dataclasses.replace(HITS, name=name, aliases=aliases)
    message = (
        f"{what}: {spelling!r} (str) is taken by the measure {owner!r} (names and aliases are compared ignoring case); "
        f"choose another spelling, or unregister {owner!r} first"
    )
    for replace in (False, True):
        with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
            register_measure(definition, replace=replace)
    assert name not in REGISTRY


def test_register_measure_wants_a_measure_def():
    """register_measure refuses anything but a MeasureDef, saying what to give."""
    message = (
        "measure: 'Hits' (str) is not a MeasureDef; "
        "register an agentmemory.metrics.MeasureDef (name, per-query function, cutoff rule, description)"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        register_measure("Hits")  # type: ignore[arg-type]


NAME_RULE = (
    "use letters, digits, '_', '.', '+' and '-' (no brackets, commas, colons, '=' or spaces), "
    "starting with a letter, a digit or '_'"
)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Hits@5"}, f"measure name: 'Hits@5' (str) is not a valid name; {NAME_RULE}"),
        ({"name": ""}, f"measure name: '' (str) is not a valid name; {NAME_RULE}"),
        ({"function": 3}, "function: 3 (int) is not callable; give function(QueryContext) -> float"),
        (
            {"cutoff": "required"},
            "cutoff: 'required' (str) is not a CutoffRule; give CutoffRule.REQUIRED, OPTIONAL, FORBIDDEN, BUDGET or FIRST",
        ),
        (
            {"description": "two\nlines"},
            "description: 'two\\nlines' (str) is not one line of text; describe the measure in one line",
        ),
        ({"description": " "}, "description: ' ' (str) is not one line of text; describe the measure in one line"),
        ({"batch": "fast"}, "batch: 'fast' (str) is not callable; give batch(ranked, k) -> ndarray, or None"),
        (
            {"granularity": "a\nb"},
            "granularity: 'a\\nb' (str) is not one line of text; name the unit the measure scores (e.g. 'session'), "
            "or None",
        ),
        (
            {"granularity": 3},
            "granularity: 3 (int) is not one line of text; name the unit the measure scores (e.g. 'session'), or None",
        ),
        ({"tie_aware": 1.0}, "tie_aware: 1.0 (float) is not callable; give tie_aware(TieContext) -> float, or None"),
        ({"aliases": ["found"]}, "aliases: ['found'] (list) is not a tuple; give a tuple of names, e.g. ('hits',)"),
        ({"aliases": "found"}, "aliases: 'found' (str) is not a tuple; give a tuple of names, e.g. ('hits',)"),
        ({"aliases": ("a b",)}, f"measure alias: 'a b' (str) is not a valid name; {NAME_RULE}"),
        (
            {"aliases": ("hits",)},
            "measure alias: 'hits' (str) repeats a name or alias of Hits (ignoring case); list each spelling once",
        ),
        (
            {"aliases": ("x", "X")},
            "measure alias: 'X' (str) repeats a name or alias of Hits (ignoring case); list each spelling once",
        ),
    ],
)
def test_measure_def_checks_its_fields(changes, message):
    """A MeasureDef with a bad field cannot be made; the message names the field and what to give."""
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        dataclasses.replace(HITS, **changes)


def test_only_the_session_measures_fix_a_granularity():
    """LongMemEval's sess. measures score sessions whatever the entries are, the answer measures (but
    answer_in_context@k, which reads the top k) score questions; every other built-in scores the collection's own
    entries (granularity None), which the definitions card and the claims check read."""
    for name, definition in REGISTRY.registered().items():
        reads_top_k = definition.cutoff is CutoffRule.REQUIRED
        expected = (
            "session"
            if name.startswith("sess.")
            else "question"
            if definition.reads_answer and not reads_top_k  # they score the answer to a question
            else None
        )
        assert definition.granularity == expected, name
    assert {REGISTRY[name].granularity for name in LONGMEMEVAL if name.startswith("sess.")} == {"session"}


def test_built_in_definitions_live_in_their_modules():
    """Each trec_eval measure's registered definition is the DEFINITION of the module of its per-query function,
    and its kernel and expectation (when it has one) live there too; the modules are found from the registry."""
    modules = {name: sys.modules[REGISTRY[name].function.__module__] for name in TREC_EVAL}
    assert modules["P"] is precision_module and modules["Rprec"] is r_precision_module  # the lookup finds them
    for name, module in modules.items():
        definition = REGISTRY[name]
        assert definition is module.DEFINITION
        assert definition.batch is not None and definition.batch.__module__ == module.__name__
        assert definition.tie_aware is None or definition.tie_aware.__module__ == module.__name__
    assert len(set(modules.values())) == len(modules)  # one module per measure
    assert all(REGISTRY[d.name] is d for d in ANSWER_DEFINITIONS)


# --- installed measures (entry points in the group agentmemory.measures)

PLUGIN_MEASURES = """
from agentmemory.metrics import CutoffRule, MeasureDef


def _hits(query):
    return float(sum(1 for doc in query.ranking[: query.k] if query.qrels.get(doc, 0) >= 1))


HITS = MeasureDef("PlugHits", _hits, CutoffRule.REQUIRED, "relevant in the top k (P_k times k)", aliases=("plug_found",))
NAMED_OTHERWISE = MeasureDef("Other", _hits, CutoffRule.REQUIRED, "relevant in the top k")
NOT_A_DEFINITION = "PlugHits"
"""


def _install_measures(tmp_path, monkeypatch, points):
    install(tmp_path, monkeypatch, {"agentmemory.measures": points}, {"am_plugin_measures": PLUGIN_MEASURES})


def test_installed_measure_parses_by_name_and_alias(registry_restored, tmp_path, monkeypatch):
    """An installed measure is a choice before it loads, parses by its name (any case) and by its alias."""
    _install_measures(tmp_path, monkeypatch, {"PlugHits": "am_plugin_measures:HITS"})
    assert "PlugHits" in REGISTRY.names()
    assert "am_plugin_measures" not in sys.modules
    assert parse_measure("plug_found@3") == Measure("PlugHits", 3)  # loads every installed measure to find the alias
    assert Measure("PlugHits", 3).compute(RUN_X, QRELS) == 2.0
    REGISTRY.unregister("PlugHits")
    assert parse_measure("plughits@3") == Measure("PlugHits", 3)


def test_installed_measure_with_another_name_is_refused(registry_restored, tmp_path, monkeypatch):
    """An entry point must be named as its MeasureDef; otherwise using it says so."""
    _install_measures(tmp_path, monkeypatch, {"Mismatch": "am_plugin_measures:NAMED_OTHERWISE"})
    message = (
        "measure: 'Mismatch' (str) comes from the entry point 'am_plugin_measures:NAMED_OTHERWISE' "
        "(group agentmemory.measures), whose object is not the name of its MeasureDef ('Other'); "
        "register a MeasureDef under its own name"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        parse_measure("Mismatch@3")


def test_broken_installed_measure_does_not_hide_an_unknown_name(registry_restored, tmp_path, monkeypatch):
    """Looking for an alias loads the installed measures; one that fails is skipped then, and reports when named."""
    _install_measures(
        tmp_path,
        monkeypatch,
        {"PlugHits": "am_plugin_measures:HITS", "Broken": "am_plugin_measures:NOT_A_DEFINITION"},
    )
    message = f"metric: 'nope@3' (str) is not a known name; choose from: {_choices('Broken', 'PlugHits', 'plug_found')}"
    with pytest.raises(UnknownNameError, match=f"^{re.escape(message)}$"):
        parse_measure("nope@3")
    message = (
        "measure: 'Broken' (str) comes from the entry point 'am_plugin_measures:NOT_A_DEFINITION' "
        "(group agentmemory.measures), whose object is not a MeasureDef; "
        "register an agentmemory.metrics.MeasureDef (name, per-query function, cutoff rule, description)"
    )
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        parse_measure("broken@3")
