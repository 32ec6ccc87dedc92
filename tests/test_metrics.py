"""Measures: golden values, properties, the registry and the parser."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import cutoffs, measures, qrels_of_query, rankings, rankings_with_first_relevant

from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.metrics import (
    ALIASES,
    REGISTRY,
    CutoffRule,
    Measure,
    compute_measures,
    parse_measure,
    parse_measures,
)
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


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize(("case", "ranking", "qrels"), NO_RELEVANT, ids=[c[0] for c in NO_RELEVANT])
def test_no_relevant_document_scores_zero(name, case, ranking, qrels):
    """A query with no relevant judged document scores exactly 0.0 on every measure."""
    measure = Measure(name) if REGISTRY[name].cutoff is not CutoffRule.REQUIRED else Measure(name, 3)
    assert measure.compute(ranking, qrels) == 0.0


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
    """Each registry entry is keyed by its own name and has a one-line description naming trec_eval."""
    assert sorted(REGISTRY) == ["AP", "P", "R", "RR", "Rprec", "Success", "nDCG"]
    for key, definition in REGISTRY.registered().items():
        assert definition.name == key
        assert definition.description and "\n" not in definition.description
        assert "trec_eval" in definition.description
        assert callable(definition.function)


def test_cutoff_rules():
    """P, R, nDCG, AP and Success require a cutoff, RR may take one, Rprec takes none."""
    rules = {name: definition.cutoff for name, definition in REGISTRY.registered().items()}
    assert rules == {
        "P": CutoffRule.REQUIRED,
        "R": CutoffRule.REQUIRED,
        "nDCG": CutoffRule.REQUIRED,
        "AP": CutoffRule.REQUIRED,
        "Success": CutoffRule.REQUIRED,
        "RR": CutoffRule.OPTIONAL,
        "Rprec": CutoffRule.FORBIDDEN,
    }


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


ALL_NAMES = "AP, MAP, MRR, P, R, R-precision, RR, Rprec, Success, hit_rate, map_cut, nDCG, ndcg_cut, precision, recall, recip_rank"


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("foo@5", UnknownNameError, f"metric: 'foo@5' (str) is not a known name; choose from: {ALL_NAMES}"),
        ("", UnknownNameError, f"metric: '' (str) is not a known name; choose from: {ALL_NAMES}"),
        ("@5", UnknownNameError, f"metric: '@5' (str) is not a known name; choose from: {ALL_NAMES}"),
        (
            "P",
            ParameterError,
            "metric: 'P' (str) has no cutoff; P needs a cutoff k, an integer >= 1: write P@k, e.g. P@10",
        ),
        (
            "MAP",
            ParameterError,
            "metric: 'MAP' (str) has no cutoff; AP needs a cutoff k, an integer >= 1: write AP@k, e.g. AP@10",
        ),
        (
            "P@0",
            ParameterError,
            "metric: 'P@0' (str) has cutoff 0, which is less than 1; the cutoff must be an integer >= 1, e.g. P@10",
        ),
        (
            "nDCG@-3",
            ParameterError,
            "metric: 'nDCG@-3' (str) has cutoff -3, which is less than 1; "
            "the cutoff must be an integer >= 1, e.g. nDCG@10",
        ),
        (
            "P@x",
            ParameterError,
            "metric: 'P@x' (str) has cutoff 'x', which is not an integer; "
            "the cutoff must be an integer >= 1, e.g. P@10",
        ),
        (
            "P@2.5",
            ParameterError,
            "metric: 'P@2.5' (str) has cutoff '2.5', which is not an integer; "
            "the cutoff must be an integer >= 1, e.g. P@10",
        ),
        (
            "P@",
            ParameterError,
            "metric: 'P@' (str) has cutoff '', which is not an integer; the cutoff must be an integer >= 1, e.g. P@10",
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
        (("P",), "cutoff: None (NoneType) is missing; P needs a cutoff k, an integer >= 1: write P@k, e.g. P@10"),
        (("P", 0), "cutoff: 0 (int) is less than 1; the cutoff must be an integer >= 1, e.g. P@10"),
        (("P", True), "cutoff: True (bool) is not an integer; the cutoff must be an integer >= 1, e.g. P@10"),
        (("P", "5"), "cutoff: '5' (str) is not an integer; the cutoff must be an integer >= 1, e.g. P@10"),
        (("Rprec", 3), "cutoff: 3 (int) is not allowed; Rprec takes no cutoff: write Rprec"),
    ],
)
def test_measure_constructor_checks_cutoff(args, message):
    """Measure(...) checks its cutoff like the parser does."""
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        Measure(*args)


def test_measure_constructor_needs_canonical_name():
    """Measure(...) accepts only canonical names; aliases go through parse_measure."""
    message = "metric: 'recall' (str) is not a known name; choose from: AP, P, R, RR, Rprec, Success, nDCG"
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
