"""Context-budget measures: the grammar, hand-computed values (the crossing hit, ties at the budget, an empty
ranking, a hit longer than the budget at rank 1), tokens@first and its missing values, provenance."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugins import restored
from strategies import doc_scores, qrels_of_query, rankings

from agentmemory import MemoryEntry, Provenance
from agentmemory.errors import ParameterError, PluginError
from agentmemory.files.trec import trec_order
from agentmemory.metrics import (
    FIRST,
    REGISTRY,
    Budget,
    CutoffRule,
    Measure,
    MeasureDef,
    compute_measures,
    parse_measure,
    parse_measures,
    register_measure,
)
from agentmemory.metrics import ndcg as ndcg_module
from agentmemory.metrics import precision as precision_module
from agentmemory.metrics import recall as recall_module
from agentmemory.metrics import success as success_module
from agentmemory.metrics.budget import FAMILY, hits_within, tokens_to_first
from agentmemory.metrics.provenance import ancestors_of, credit
from agentmemory.metrics.tieaware import tie_reports

# Judgments: a (grade 2), c and e (grade 1) are relevant; b is judged not relevant; x, y unjudged.
QRELS = {"a": 2, "b": 0, "c": 1, "e": 1}
RANKING = ["x", "a", "b", "c", "y", "e"]
LENGTHS = [100, 50, 200, 100, 300, 10]  # cumulative: 100, 150, 350, 450, 750, 760


def _dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


IDEAL = [2, 1, 1]  # every judged grade, highest first


def values(budget: int, ranking: Sequence[str] = RANKING, lengths: Sequence[int] = LENGTHS) -> dict[str, float | None]:
    texts = [f"R@{budget}tok", f"P@{budget}tok", f"Success@{budget}tok", f"nDCG@{budget}tok", "tokens@first"]
    return compute_measures(parse_measures(texts), ranking, QRELS, lengths=lengths)


@pytest.mark.parametrize(
    ("case", "budget", "read", "expected"),
    [
        # The third hit (b, 200 tokens) would make 350 > 300: it is out, and reading stops there.
        (
            "the crossing hit is excluded",
            300,
            2,
            {"R": 1 / 3, "P": 1 / 2, "Success": 1.0, "nDCG": 2 / math.log2(3) / _dcg(IDEAL)},
        ),
        # Exactly at the budget: 150 <= 150 is within it.
        (
            "a total equal to the budget fits",
            150,
            2,
            {"R": 1 / 3, "P": 1 / 2, "Success": 1.0, "nDCG": 2 / math.log2(3) / _dcg(IDEAL)},
        ),
        ("one token short of the second hit", 149, 1, {"R": 0.0, "P": 0.0, "Success": 0.0, "nDCG": 0.0}),
        # 450 tokens read (x, a, b, c); y (300) would cross: e (10 tokens, relevant) below it is never read.
        (
            "nothing below the crossing hit is read",
            740,
            4,
            {"R": 2 / 3, "P": 2 / 4, "Success": 1.0, "nDCG": (2 / math.log2(3) + 1 / math.log2(5)) / _dcg(IDEAL)},
        ),
        (
            "everything fits",
            760,
            6,
            {
                "R": 1.0,
                "P": 3 / 6,
                "Success": 1.0,
                "nDCG": (2 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(7)) / _dcg(IDEAL),
            },
        ),
        (
            "a budget beyond the ranking",
            10_000,
            6,
            {
                "R": 1.0,
                "P": 3 / 6,
                "Success": 1.0,
                "nDCG": (2 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(7)) / _dcg(IDEAL),
            },
        ),
        # The first hit alone (100 tokens) is longer than the budget: nothing is read, every value is 0.
        ("a hit longer than the budget at rank 1", 99, 0, {"R": 0.0, "P": 0.0, "Success": 0.0, "nDCG": 0.0}),
    ],
)
def test_budget_measures_by_hand(case, budget, read, expected):
    """Each budget measure equals its hand computation over the hits read within the budget."""
    assert hits_within(LENGTHS, budget) == read
    got = values(budget)
    for name, value in expected.items():
        assert got[f"{name}@{budget}tok"] == pytest.approx(value, abs=1e-15), (case, name)
    assert got["tokens@first"] == 150.0  # x (100) then a (50), the first relevant hit: no budget applies


def test_empty_ranking():
    """An empty ranking reads nothing: every budget measure is 0 and tokens@first has no value."""
    got = values(512, [], [])
    assert got == {"R@512tok": 0.0, "P@512tok": 0.0, "Success@512tok": 0.0, "nDCG@512tok": 0.0, "tokens@first": None}


def test_no_relevant_judged():
    """A query with no relevant judged entry scores 0 on the budget measures (as trec_eval's) and has no tokens@first."""
    got = compute_measures(
        parse_measures("R@512tok,P@512tok,nDCG@512tok,tokens@first"), ["b", "x"], {"b": 0}, lengths=[5, 5]
    )
    assert got == {"R@512tok": 0.0, "P@512tok": 0.0, "nDCG@512tok": 0.0, "tokens@first": None}


@pytest.mark.parametrize(
    ("lengths", "expected"),
    [
        ([0, 0, 0, 0, 0, 0], 0.0),  # empty texts cost nothing; the first relevant is at rank 2
        ([7, 3, 1000, 1000, 1000, 1000], 10.0),  # x 7 + a 3
        ([1, 1, 1, 1, 1, 1], 2.0),
    ],
)
def test_tokens_to_first_by_hand(lengths, expected):
    """tokens@first sums the lengths down to and including the first relevant hit."""
    assert tokens_to_first(RANKING, QRELS, lengths) == expected
    assert Measure("tokens", FIRST).compute(RANKING, QRELS, lengths=lengths) == expected


def test_tokens_to_first_relevant_at_rank_one_and_none():
    """At rank 1, tokens@first is the hit's own length; with no relevant hit in the ranking, no value."""
    assert Measure("tokens", FIRST).compute(["c", "x"], QRELS, lengths=[42, 1]) == 42.0
    assert Measure("tokens", FIRST).compute(["x", "b", "y"], QRELS, lengths=[1, 2, 3]) is None


def test_zero_length_hits_are_read():
    """A hit of 0 tokens costs nothing and is read, even at the very end of the budget."""
    assert hits_within([5, 0, 0, 6], 5) == 3
    assert compute_measures([Measure("R", Budget(5))], ["x", "y", "c", "a"], QRELS, lengths=[5, 0, 0, 6]) == {
        "R@5tok": 1 / 3
    }


class Counting(Sequence[int]):
    """Lengths that record which ranks were read."""

    def __init__(self, lengths: list[int]) -> None:
        self.lengths = lengths
        self.read: list[int] = []

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, index):  # type: ignore[override]
        raise AssertionError("a budget reads its lengths in order, never by index")

    def __iter__(self) -> Iterator[int]:
        for i, n in enumerate(self.lengths):
            self.read.append(i)
            yield n


def test_reading_stops_at_the_crossing_hit():
    """A budget reads the lengths only down to the hit that crosses it (counting the rest would be wasted)."""
    lengths = Counting(LENGTHS)
    Measure("R", Budget(300)).compute(RANKING, QRELS, lengths=lengths)
    assert lengths.read == [0, 1, 2]
    first = Counting(LENGTHS)
    Measure("tokens", FIRST).compute(RANKING, QRELS, lengths=first)
    assert first.read == [0, 1]


def test_ties_at_the_budget_follow_the_tie_rule():
    """Tied scores straddling the budget are read in trec_eval's order (entry id descending), so the rule decides.

    m and z tie at score 1.0 after the relevant-free top hit x (score 2.0); each costs 60 tokens, x 50, and the budget
    is 120: x and one of the tied pair fit.  trec_order puts z (the higher id) first, so z is read and m is not.
    """
    scores = {"x": 2.0, "m": 1.0, "z": 1.0}
    ranking = trec_order(scores)
    assert ranking == ["x", "z", "m"]
    lengths = {"x": 50, "m": 60, "z": 60}
    read = [lengths[d] for d in ranking]
    for qrels, expected in (({"m": 1}, 0.0), ({"z": 1}, 1.0)):
        got = compute_measures(parse_measures("R@120tok,tokens@first"), ranking, qrels, lengths=read)
        assert got["R@120tok"] == expected
    # Unequal lengths: if z were 80 tokens long, 50 + 80 > 120 and reading stops before m, though m would fit.
    uneven = [50, 80, 60]
    assert hits_within(uneven, 120) == 1
    assert compute_measures([Measure("R", Budget(120))], ranking, {"m": 1}, lengths=uneven) == {"R@120tok": 0.0}


def test_budget_measures_have_no_tie_aware_value():
    """The budget measures declare no tie-aware expectation, and a tie report gives them none."""
    for name in ("R", "P", "Success", "nDCG"):
        assert Measure(name, Budget(64)).definition.tie_aware is None
    reports = tie_reports(parse_measures("R@3,R@64tok"), {"a": 1.0, "b": 1.0, "c": 0.5}, {"b": 1}, 1)
    assert reports["R@64tok"] is None
    assert reports["R@3"] is not None


@given(
    rankings,
    qrels_of_query,
    st.lists(st.integers(min_value=0, max_value=50), min_size=14, max_size=14),
    st.integers(1, 400),
)
def test_budget_equals_its_rank_measure_at_the_hits_read(ranking, qrels, pool, budget):
    """X@Ttok == X@n_T (n_T the hits that fit) for R, P, Success, nDCG, and 0 when nothing fits."""
    lengths = pool[: len(ranking)]
    read = hits_within(lengths, budget)
    for name in ("R", "P", "Success", "nDCG"):
        got = Measure(name, Budget(budget)).compute(ranking, qrels, lengths=lengths)
        if not read:
            expected = 0.0
        elif name == "nDCG":  # trec_eval's ndcg of the hits read, its ideal uncut
            expected = Measure("nDCG", max(read, len(qrels))).compute(ranking[:read], qrels)
        else:
            expected = Measure(name, read).compute(ranking, qrels)
        assert got == expected
        assert got is not None and 0.0 <= got <= 1.0


@given(
    rankings,
    qrels_of_query,
    st.lists(st.integers(min_value=0, max_value=50), min_size=14, max_size=14),
    st.integers(1, 400),
    st.integers(0, 400),
)
def test_recall_within_a_budget_never_falls_as_the_budget_grows(ranking, qrels, pool, budget, more):
    """R@Ttok, Success@Ttok and nDCG@Ttok (its ideal uncut) never fall when T grows (more is read)."""
    lengths = pool[: len(ranking)]
    for name in ("R", "Success", "nDCG"):
        small = Measure(name, Budget(budget)).compute(ranking, qrels, lengths=lengths)
        large = Measure(name, Budget(budget + more)).compute(ranking, qrels, lengths=lengths)
        assert small is not None and large is not None and small <= large


@given(doc_scores, qrels_of_query)
def test_one_token_per_hit_makes_the_budget_a_rank_cutoff(scores, qrels):
    """With every text one token long, T tokens read the top T hits: R@Ttok == R@T (and P, nDCG, Success)."""
    ranking = trec_order(scores)
    ones = [1] * len(ranking)
    for t in (1, 3, 20):
        for name in ("R", "P", "Success", "nDCG"):
            read = min(t, len(ranking))
            expected = Measure(name, t).compute(ranking, qrels) if ranking else 0.0
            if name == "P" and ranking:
                expected = Measure("P", read).compute(ranking, qrels)  # P@T divides by the hits read
            if name == "nDCG" and ranking:  # the ideal of every relevant judged, uncut
                expected = Measure("nDCG", max(read, len(qrels))).compute(ranking[:read], qrels)
            assert Measure(name, Budget(t)).compute(ranking, qrels, lengths=ones) == expected


# -- the grammar ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("R@512tok", Measure("R", Budget(512))),
        ("recall@512tok", Measure("R", Budget(512))),
        ("r@512TOK", Measure("R", Budget(512))),
        (" nDCG@2048tok ", Measure("nDCG", Budget(2048))),
        ("ndcg_cut@2048tok", Measure("nDCG", Budget(2048))),
        ("P@512tok", Measure("P", Budget(512))),
        ("precision@0512tok", Measure("P", Budget(512))),
        ("Success@512tok", Measure("Success", Budget(512))),
        ("hit_rate@1tok", Measure("Success", Budget(1))),
        ("tokens@first", Measure("tokens", FIRST)),
        ("TOKENS@FIRST", Measure("tokens", FIRST)),
    ],
)
def test_parse_budget_measures(text, expected):
    """Budgets parse with aliases and any case; the canonical text round-trips."""
    measure = parse_measure(text)
    assert measure == expected
    assert parse_measure(str(measure)) == measure
    assert str(measure) in ("tokens@first", f"{measure.name}@{measure.budget}tok")


def test_a_budget_and_a_rank_cutoff_are_different_measures():
    """R@5 and R@5tok are two measures (both may be asked for), with different definitions."""
    r5, r5tok = parse_measures("R@5,R@5tok")
    assert r5 != r5tok and str(r5tok) == "R@5tok" and r5tok.budget == 5 and r5tok.rank_cutoff is None
    assert r5.definition is recall_module.DEFINITION
    assert r5tok.definition is recall_module.BUDGET_DEFINITION


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "R@0tok",
            "metric: 'R@0tok' (str) has budget '0tok', which is less than 1 token; R needs a cutoff k, an integer >= 1: "
            "write R@k, e.g. R@10, or a token budget: R@<T>tok, e.g. R@512tok",
        ),
        (
            "R@1.5tok",
            "metric: 'R@1.5tok' (str) has cutoff '1.5tok', which is not an integer; the cutoff must be an integer >= 1, "
            "e.g. R@10, or a token budget: R@<T>tok, e.g. R@512tok",
        ),
        (
            "R@tok",
            "metric: 'R@tok' (str) has cutoff 'tok', which is not an integer; the cutoff must be an integer >= 1, "
            "e.g. R@10, or a token budget: R@<T>tok, e.g. R@512tok",
        ),
        (
            "MRR@512tok",
            "metric: 'MRR@512tok' (str) has a token budget; RR takes an optional cutoff k, an integer >= 1: write RR or "
            "RR@k, e.g. RR@10 (token budgets: P@<T>tok, R@<T>tok, Success@<T>tok, nDCG@<T>tok)",
        ),
        (
            "sess.recall_any@512tok",
            "metric: 'sess.recall_any@512tok' (str) has a token budget; sess.recall_any needs a cutoff k, an integer "
            ">= 1: write sess.recall_any@k, e.g. sess.recall_any@10 (token budgets: P@<T>tok, R@<T>tok, "
            "Success@<T>tok, nDCG@<T>tok)",
        ),
        (
            "tokens",
            "metric: 'tokens' (str) has no cutoff; tokens reads down to the first relevant hit: write tokens@first",
        ),
        (
            "tokens@5",
            "metric: 'tokens@5' (str) has cutoff '5'; tokens reads down to the first relevant hit: write tokens@first",
        ),
        (
            "tokens@512tok",
            "metric: 'tokens@512tok' (str) has a token budget; tokens reads down to the first relevant hit: write "
            "tokens@first (token budgets: P@<T>tok, R@<T>tok, Success@<T>tok, nDCG@<T>tok)",
        ),
        (
            "R@first",
            "metric: 'R@first' (str) has cutoff 'first', which is not an integer; the cutoff must be an integer >= 1, "
            "e.g. R@10, or a token budget: R@<T>tok, e.g. R@512tok",
        ),
    ],
)
def test_bad_budget_text(text, message):
    """Bad budgets are refused in one line naming the text and listing what the measure takes."""
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}$"):
        parse_measure(text)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("RR", Budget(5)), "cutoff: Budget(tokens=5) (Budget) is a token budget, which this measure does not take"),
        (("tokens", 3), "cutoff: 3 (int) is not allowed; tokens reads down to the first relevant hit"),
        (("tokens",), "cutoff: None (NoneType) is missing; tokens reads down to the first relevant hit"),
    ],
)
def test_measure_constructor_checks_budgets(args, message):
    """Measure(...) checks a budget or the word first like the parser does."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        Measure(*args)


@pytest.mark.parametrize("bad", [0, -5, True, 2.0, "512"])
def test_budget_must_be_a_positive_integer(bad):
    """Budget(T) takes an integer >= 1 only."""
    with pytest.raises(
        ParameterError, match=r"^budget: .* is not an integer >= 1; give a number of tokens, e.g. Budget\(512\)$"
    ):
        Budget(bad)


def test_budget_definitions_are_the_budget_family():
    """Every budget form and tokens@first: family "budget", one-line description, whole ranking, lengths read,
    no batch kernel and no tie-aware value; tokens@first is lower-is-better and may have no value."""
    forms = [
        m.budget_form
        for m in (
            recall_module.DEFINITION,
            precision_module.DEFINITION,
            success_module.DEFINITION,
            ndcg_module.DEFINITION,
        )
    ]
    assert [f.name for f in forms if f is not None] == ["R", "P", "Success", "nDCG"]
    for definition in (*forms, REGISTRY["tokens"]):
        assert definition is not None
        assert definition.family == FAMILY == "budget"
        assert definition.description.strip() and "\n" not in definition.description
        assert "context budget" in definition.description
        assert definition.whole_ranking and definition.reads_lengths
        assert definition.batch is None and definition.tie_aware is None
    assert (
        REGISTRY["tokens"].direction == "lower"
        and REGISTRY["tokens"].undefined_when == "no relevant hit in the ranking"
    )
    assert all(f is not None and f.direction == "higher" and f.undefined_when is None for f in forms)


def test_budget_measures_need_lengths():
    """Without the hits' token lengths a budget measure says what it needs."""
    with pytest.raises(
        ParameterError, match=r"^lengths: None \(NoneType\) are unknown: this measure counts the tokens"
    ):
        Measure("R", Budget(512)).compute(RANKING, QRELS)


# -- MeasureDef's new fields -----------------------------------------------------------------------------------------


def _one(q):
    return 1.0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"cutoff": CutoffRule.BUDGET},
            "reads_lengths: False (bool) is wrong for the budget measure Own; pass reads_lengths=True",
        ),
        ({"reads_lengths": "yes"}, "reads_lengths: 'yes' (str) is not a bool; pass True or False"),
        ({"undefined_when": "a\nb"}, "undefined_when: 'a\\nb' (str) is not one line of text"),
        ({"budget_form": "R"}, "budget_form: 'R' (str) is not a MeasureDef"),
        (
            {"budget_form": recall_module.BUDGET_DEFINITION},
            "budget_form: 'R' (str) is not a budget form of this measure; give a MeasureDef named 'Own'",
        ),
    ],
)
def test_measure_def_checks_budget_fields(changes, message):
    """MeasureDef refuses a budget measure that reads no lengths, a bad undefined_when or a foreign budget form."""
    fields = {"name": "Own", "function": _one, "cutoff": CutoffRule.REQUIRED, "description": "one", **changes}
    with pytest.raises(ParameterError, match=f"^{re.escape(message)}"):
        MeasureDef(**fields)


@pytest.fixture
def registry_restored():
    with restored(REGISTRY):
        yield


def test_a_plugin_budget_measure_parses_and_computes(registry_restored):
    """A registered measure with a budget form of its own (a plugin's) takes @<T>tok at once."""
    form = MeasureDef(
        "Read",
        lambda q: float(hits_within(q.hit_lengths, q.tokens)),
        CutoffRule.BUDGET,
        "hits read (context budget)",
        reads_lengths=True,
    )
    register_measure(MeasureDef("Read", lambda q: float(q.cutoff), CutoffRule.REQUIRED, "k itself", budget_form=form))
    assert parse_measure("read@350tok").compute(RANKING, QRELS, lengths=LENGTHS) == 3.0  # 100 + 50 + 200
    assert parse_measure("read@4").compute(RANKING, QRELS) == 4.0


def test_none_only_from_a_measure_that_says_when(registry_restored):
    """A measure's function returning None without undefined_when is a plugin error, named."""
    register_measure(MeasureDef("Nothing", lambda q: None, CutoffRule.FORBIDDEN, "never a value"))
    with pytest.raises(
        PluginError,
        match=r"^measure plugin 'Nothing': function returned None, which only a measure declaring undefined_when may",
    ):
        Measure("Nothing").compute(RANKING, QRELS)


# -- provenance ------------------------------------------------------------------------------------------------------

ENTRIES = (
    MemoryEntry("t1", "turn one"),
    MemoryEntry("t2", "turn two"),
    MemoryEntry("t3", "turn three"),
    MemoryEntry("s12", "summary", provenance=Provenance("derived", derived_from=("t1", "t2"))),
    MemoryEntry("f3", "fact", provenance=Provenance("derived", derived_from=("t3",))),
    MemoryEntry("x", "unrelated"),
)
SOURCES = {"t1": 1, "t2": 1, "t3": 1}
ANCESTORS = ancestors_of(ENTRIES)


def _through_provenance(text: str, ranking: list[str], lengths: list[int]) -> float | None:
    m = parse_measure(text)
    assert m.definition.provenance is not None
    return m.definition.provenance(credit(ranking, SOURCES, ANCESTORS, lengths), m.cutoff)


@pytest.mark.parametrize(
    ("ranking", "lengths", "budget", "expected"),
    [
        # x (30) then s12 (a 40-token summary reaching t1 and t2): 70 tokens read, two of three sources credited.
        (["x", "s12", "f3"], [30, 40, 20], 70, {"R": 2 / 3, "P": 1 / 2, "Success": 1.0}),
        # The summary crosses a 60-token budget: nothing below it is read, though the fact would fit.
        (["x", "s12", "f3"], [30, 40, 20], 60, {"R": 0.0, "P": 0.0, "Success": 0.0}),
        # A long summary at rank 1 is over the budget on its own.
        (["s12", "f3"], [500, 5], 100, {"R": 0.0, "P": 0.0, "Success": 0.0}),
        (["f3", "s12"], [5, 500], 100, {"R": 1 / 3, "P": 1.0, "Success": 1.0}),
    ],
)
def test_budget_measures_through_provenance(ranking, lengths, budget, expected):
    """Under provenance a derived memory costs its own text's tokens, and credits its sources, each once."""
    for name, value in expected.items():
        assert _through_provenance(f"{name}@{budget}tok", ranking, lengths) == pytest.approx(value)


def test_budget_ndcg_through_provenance_by_hand():
    """nDCG@Ttok through provenance: the places of the hits read (s12 takes two, t2 and t1) against all three sources.

    x (30) then s12 (40) fit in 70 tokens: places x, t2, t1 gain 0, 1, 1 (ties by id descending); the ideal holds
    the three sources, uncut.
    """
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / _dcg([1, 1, 1])
    assert _through_provenance("nDCG@70tok", ["x", "s12", "f3"], [30, 40, 20]) == pytest.approx(expected)
    credited = credit(["x", "s12", "f3"], SOURCES, ANCESTORS, [30, 40, 20])
    assert ndcg_module.provenance_ndcg_read(credited, 2) == pytest.approx(expected)


def test_tokens_to_first_through_provenance():
    """tokens@first under provenance: tokens down to the first hit reaching a relevant source; none without one."""
    assert _through_provenance("tokens@first", ["x", "s12", "f3"], [30, 40, 20]) == 70.0
    assert _through_provenance("tokens@first", ["x"], [30]) is None


def test_provenance_without_derived_entries_equals_direct():
    """With no derived entry, each budget measure through provenance equals its direct value."""
    ranking, lengths = ["x", "t2", "t1", "t3"], [10, 20, 30, 40]
    for text in ("R@60tok", "P@60tok", "Success@60tok", "nDCG@60tok", "tokens@first"):
        direct = parse_measure(text).compute(ranking, SOURCES, lengths=lengths)
        assert _through_provenance(text, ranking, lengths) == pytest.approx(direct)
