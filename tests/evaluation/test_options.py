"""EvalOptions: one record of an evaluation's options, checked when it is made, the same from every caller."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from agentmemory import EvalOptions, ParameterError, UnknownNameError, evaluate
from agentmemory.evaluation.options import BUDGET_DEFAULTS, RELEVANCE_MODES, default_measures_for
from agentmemory.metrics import Measure
from agentmemory.metrics.scoring import default_measures


def test_defaults_are_evaluate_s_defaults() -> None:
    """The record's defaults are what ``evaluate`` did with no keyword: k 5, seed 7, direct, ties analysed."""
    options = EvalOptions()
    assert (options.k, options.seed, options.relevance, options.ties, options.measures) == (5, 7, "direct", True, ())
    assert [str(m) for m in options.all_measures] == ["P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5"]


def test_a_system_s_own_memories_add_the_token_budget_defaults() -> None:
    """measures_for(memories=True): BUDGET_DEFAULTS first (the table leads at equal context cost), then the cut-off
    defaults, then the extra measures not among them; all_measures is measures_for(memories=False)."""
    options = EvalOptions(k=3, measures="R@2048tok,nDCG@10")
    assert [str(m) for m in options.measures_for(memories=True)] == [
        *BUDGET_DEFAULTS,
        *["P@3", "R@3", "RR", "RR@3", "nDCG@3", "AP@3"],
        "nDCG@10",
    ]
    assert options.all_measures == options.measures_for(memories=False)
    assert default_measures_for(3, memories=False) == default_measures(3)
    assert BUDGET_DEFAULTS == ("R@512tok", "R@2048tok", "Success@2048tok")


def test_measures_are_parsed_once_and_added_after_the_defaults() -> None:
    """Text or a list of texts and Measures becomes Measures; all_measures puts the defaults first, without repeats."""
    options = EvalOptions(k=3, measures="nDCG@10,P@3,Success@1")
    assert options.measures == (Measure("nDCG", 10), Measure("P", 3), Measure("Success", 1))
    assert [str(m) for m in options.all_measures] == [
        "P@3",
        "R@3",
        "RR",
        "RR@3",
        "nDCG@3",
        "AP@3",
        "nDCG@10",
        "Success@1",
    ]
    assert EvalOptions(measures=["nDCG@10", Measure("RR", 2)]).measures == (Measure("nDCG", 10), Measure("RR", 2))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"k": 0}, "k: 0 (int) is less than 1; k must be an integer >= 1"),
        ({"k": "5"}, "k: '5' (str) is not an integer; k must be an integer >= 1"),
        ({"seed": -1}, "seed: -1 (int) is negative; seed must be an integer >= 0"),
        ({"relevance": "graded"}, "relevance: 'graded' (str) is not a known name; choose from: direct, provenance"),
        ({"ties": "yes"}, "ties: 'yes' (str) is not a bool; pass True or False"),
        ({"as_of": 1}, "as_of: 1 (int) is not a bool; pass True or False"),
        ({"baseline": 3}, "baseline: 3 (int) is not text; pass a system's name, or None"),
        ({"run_depth": 0}, "run_depth: 0 (int) is less than 1; run_depth must be an integer >= 1"),
        ({"run_depth": "7"}, "run_depth: '7' (str) is not an integer; run_depth must be an integer >= 1"),
        (
            {"run_depth": 4},
            "run_depth: 4 (int) is shallower than the top 5 that the measures at k 5 read, so the runs could not "
            "reproduce it; give 5 or more, or leave it out to write each ranking as deep as its measures read",
        ),
        (
            {"k": 3, "measures": "R@10,nDCG@7,R@512tok", "run_depth": 9},
            "run_depth: 9 (int) is shallower than the top 10 that R@10 reads, so the runs could not reproduce it; "
            "give 10 or more, or leave it out to write each ranking as deep as its measures read",
        ),
    ],
)
def test_a_bad_value_is_refused_when_the_record_is_made(given: dict, message: str) -> None:
    """Every field is checked by the constructor, with the library's one-line message."""
    with pytest.raises((ParameterError, UnknownNameError)) as caught:
        EvalOptions(**given)
    assert str(caught.value) == message


def test_run_depth_is_kept_when_deep_enough() -> None:
    """``run_depth`` at least k and every rank cutoff is kept; a budget or a sess.* measure sets no static floor."""
    assert EvalOptions().run_depth is None
    assert EvalOptions(k=5, run_depth=5, measures="R@512tok,tokens@first,sess.recall_any@5").run_depth == 5
    assert EvalOptions(k=3, measures="R@10", run_depth=10).run_depth == 10


def test_names_spell_the_fields_as_the_caller_does() -> None:
    """``names`` makes a message name the option as its caller wrote it (the command line's ``--k``)."""
    with pytest.raises(ParameterError, match=r"^--k: 0 \(int\) is less than 1; --k must be an integer >= 1$"):
        EvalOptions(k=0, names={"k": "--k"})
    with pytest.raises(UnknownNameError, match=r"^--relevance: 'x' \(str\) is not a known name; choose from: "):
        EvalOptions(relevance="x", names={"relevance": "--relevance"})


def test_relevance_modes_are_declared_once() -> None:
    """The record's relevance modes are the ones the runner exports (one declaration)."""
    from agentmemory.evaluation.runner import RELEVANCE_MODES as runner_modes

    assert RELEVANCE_MODES == runner_modes == ("direct", "provenance")


def test_replace_checks_again_and_the_record_pickles() -> None:
    """A record changed with dataclasses.replace is checked too; a record survives pickling (grid workers)."""
    options = EvalOptions(k=3, measures="nDCG@10")
    with pytest.raises(ParameterError, match=r"^k: 0 \(int\)"):
        replace(options, k=0)
    assert pickle.loads(pickle.dumps(options)) == options


def test_baseline_must_name_a_system() -> None:
    """check_baseline accepts a key or a label and lists the keys otherwise."""
    systems = [("bm25", "BM25"), ("tags", "Tag scorer")]
    EvalOptions(baseline="Tag scorer").check_baseline(systems)
    with pytest.raises(
        UnknownNameError, match=r"^--baseline: 'dense' \(str\) is not a known name; choose from: bm25, tags$"
    ):
        EvalOptions(baseline="dense").check_baseline(systems, "--baseline")


def test_evaluate_takes_the_record_or_its_keywords_not_both(notes) -> None:
    """options=EvalOptions(k=3) and k=3 give the same evaluation; both at once, or an unknown keyword, are refused."""
    by_record = evaluate(notes, "bm25", options=EvalOptions(k=3, measures="nDCG@10"))
    by_keywords = evaluate(notes, "bm25", k=3, measures="nDCG@10")
    assert by_record.results == by_keywords.results and by_record.measures == by_keywords.measures
    assert by_record.options == EvalOptions(k=3, measures="nDCG@10")
    with pytest.raises(ParameterError, match=r"^options: \['k'\] \(list\) are given beside options; pass options="):
        evaluate(notes, "bm25", options=EvalOptions(), k=3)
    with pytest.raises(TypeError, match=r"^evaluate\(\) got an unexpected keyword argument 'cutoff'$"):
        evaluate(notes, "bm25", cutoff=3)
