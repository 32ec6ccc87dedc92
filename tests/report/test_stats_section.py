"""The statistics section: intervals and paired comparisons from evaluation_statistics, and what they allow, in words."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import REPO_ROOT

from agentmemory import evaluate
from agentmemory.analysis.statistics import evaluation_statistics
from agentmemory.datasets import load
from agentmemory.report import stats

SAMPLE_FILE = REPO_ROOT / "fixtures" / "locomo-sample" / "locomo-sample.json"


@pytest.fixture(scope="module")
def seed_stats(seed_evaluation):
    return stats.run_statistics(seed_evaluation)


@pytest.fixture(scope="module")
def repaired():
    """The LoCoMo sample with repair=True at k = 5: 12 headline queries, enough for a significant test."""
    evaluation = evaluate(load(SAMPLE_FILE, repair=True), ("bm25", "tags"), k=5, seed=7)
    return evaluation, stats.run_statistics(evaluation)


def test_run_statistics_are_the_artifacts(seed_evaluation, seed_stats):
    """run_statistics is evaluation_statistics seeded by the run's seed (what eval-results.json holds)."""
    assert seed_stats == evaluation_statistics(seed_evaluation, seed=7)


def test_interval_table_holds_every_measure(seed_evaluation, seed_stats):
    """One row per retriever, one column per measure, each the library's interval."""
    table = stats.interval_table(seed_evaluation, seed_stats)
    assert table.caption == "95% percentile-bootstrap intervals (10000 resamples of the queries, seed 7) over 5 queries"
    assert list(table.frame.columns) == ["System", "P@5", "R@5", "RR", "RR@5", "nDCG@5", "AP@5"]
    assert table.frame.iloc[0].tolist() == [
        "BM25",
        "0.28 [0.20, 0.36]",
        "0.90 [0.70, 1.00]",
        "1.00 [1.00, 1.00] (all equal)",
        "1.00 [1.00, 1.00] (all equal)",
        "0.89 [0.75, 0.98]",
        "0.83 [0.67, 0.97]",
    ]


def test_seed_significance_note_says_why_nothing_can_be_significant(seed_evaluation, seed_stats):
    """Five queries: 32 sign patterns, smallest p 0.0625 > 0.05, so no difference can be significant; widths quoted."""
    assert stats.significance_note(seed_evaluation, seed_stats).text == (
        "- **5 queries:** the paired sign-flip test enumerates all 2^5 = 32 ways of swapping the two retrievers' "
        "values query by query; the most extreme gives two-sided p = 2/32 = 0.0625.\n"
        "- 0.0625 is above alpha = 0.05, so **no difference can be significant here, whatever the retrievers do**: "
        "even a retriever that scores higher on every one of the 5 queries gets p = 0.0625. This is a property of "
        "the number of queries, not of the retrievers.\n"
        "- **Interval widths:** the widest 95% interval of a headline mean is BM25's R@5, [0.70, 1.00] (width "
        "0.30); the narrowest is Tag scorer's P@5, [0.24, 0.40] (width 0.16). Each query weighs 1/5 = 0.2 in a "
        "mean.\n"
        "- **Same value on every query** (BM25 RR, BM25 RR@5, Tag scorer R@5, Tag scorer RR, Tag scorer RR@5, Tag "
        "scorer nDCG@5, Tag scorer AP@5): the interval collapses to a point; that is no evidence of certainty, only "
        "that these queries did not vary.\n"
        "- **Largest difference:** BM25 - Tag scorer on AP@5, -0.17 (95% interval [-0.33, -0.03]), p = 0.25.\n"
        "- **Verdict:** 0 of 6 comparisons significant at 0.05 (one pair per measure, so no correction across "
        "pairs). The measures are read on the same queries and move together, so they are not separate pieces of "
        "evidence. A comparison that is not significant means these queries do not show a difference; it is not "
        "evidence that there is none."
    )


def test_seed_comparison_table(seed_evaluation, seed_stats):
    """Every measure's comparison; with 5 queries each verdict is 'cannot be significant'."""
    table = stats.comparison_table(seed_evaluation, seed_stats)
    assert list(table.frame.columns) == ["measure", "difference", "mean", "95% interval", "p", "Holm p", "verdict"]
    assert table.frame.iloc[1].tolist() == [
        "R@5",
        "BM25 - Tag scorer",
        "-0.10",
        "[-0.30, 0.00]",
        "1.00",
        "-",
        "cannot be significant (smallest p 0.0625)",
    ]
    assert table.frame.iloc[2, 3] == "all equal"
    assert set(table.frame["verdict"]) == {"cannot be significant (smallest p 0.0625)"}


def test_comparison_sentences_say_the_shared_caveat_once(seed_evaluation, seed_stats):
    """What 5 queries can show is said once, then one brief bullet per comparison (no repeated boilerplate)."""
    text = stats.comparison_sentences(seed_evaluation, seed_stats).text
    preface, blank, *bullets = text.split("\n")
    assert preface == (
        "Paired permutation tests over the 5 queries: the smallest attainable two-sided p-value is 0.0625, so no "
        "difference below can be significant at 0.05, whatever the systems do."
    )
    assert blank == "" and len(bullets) == sum(len(rows) for rows in seed_stats.comparisons.values())
    assert bullets[0] == (
        "- BM25 vs Tag scorer on P@5: mean difference -0.04 (95% CI -0.12 to 0.00), paired permutation p = 1.00 over "
        "5 queries."
    )
    assert "smallest p-value attainable" not in text and text.count("0.0625") == 1
    only = stats.comparison_sentences(seed_evaluation, seed_stats, ["R@5"]).text
    assert only.endswith(
        "\n\n- BM25 vs Tag scorer on R@5: mean difference -0.10 (95% CI -0.30 to 0.00), paired "
        "permutation p = 1.00 over 5 queries."
    )


def test_enough_queries_can_be_significant_and_the_note_says_so(repaired):
    """12 queries: smallest p 2/4096; the verdict counts the significant comparisons without the 0.0625 claim."""
    evaluation, statistics = repaired
    text = stats.significance_note(evaluation, statistics).text
    assert text.startswith(
        "- **12 queries:** the paired sign-flip test enumerates all 2^12 = 4096 ways of swapping the two retrievers' "
        "values query by query; the most extreme gives two-sided p = 2/4096 = 0.000488.\n"
    )
    assert "no difference can be significant" not in text
    assert "- **Verdict:** 4 of 6 comparisons significant at 0.05 (one pair per measure" in text
    verdicts = stats.comparison_table(evaluation, statistics).frame["verdict"].tolist()
    assert verdicts == ["not significant at 0.05", "not significant at 0.05"] + ["significant at 0.05"] * 4


def test_holm_is_shown_and_decides_with_several_pairs(repaired):
    """With several pairs per measure the table shows Holm's p and the verdict reads it, not the raw p."""
    evaluation, statistics = repaired
    base = statistics.comparisons["RR"][0]

    def pair(p_value, p_holm, **changes):
        return replace(base, test=replace(base.test, p_value=p_value, **changes), p_holm=p_holm)

    pairs = (
        pair(0.01, 0.03),
        replace(pair(0.04, 0.06, mean_difference=-base.test.mean_difference), a="tags", b="bm25"),
        pair(0.02, 0.04),
    )
    several = replace(statistics, comparisons={"RR": pairs})
    frame = stats.comparison_table(evaluation, several).frame
    assert frame[["difference", "p", "Holm p", "verdict"]].values.tolist() == [
        ["BM25 - Tag scorer", "0.01", "0.03", "significant at 0.05"],
        ["Tag scorer - BM25", "0.04", "0.06", "not significant at 0.05"],
        ["BM25 - Tag scorer", "0.02", "0.04", "significant at 0.05"],
    ]
    note = stats.significance_note(evaluation, several).text
    assert (
        "- **Verdict:** 2 of 3 comparisons significant at 0.05 after Holm's correction across the retriever pairs"
        in note
    )


def test_group_tables_split_the_excluded_groups(repaired):
    """Headline groups in one table; 5 adversarial in a second, captioned as left out of the headline."""
    evaluation, statistics = repaired
    headline, excluded = stats.group_tables(evaluation, statistics)
    assert list(headline.frame["group"].unique()) == ["1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"]
    assert excluded.caption == "Shown separately, left out of the headline means: 5 adversarial"
    assert excluded.frame.iloc[0, :4].tolist() == ["5 adversarial", "2", "BM25", "0.20 [0.20, 0.20] (all equal)"]
    cell = statistics.groups["2 temporal"].intervals["bm25"]["R@5"]
    row = headline.frame[(headline.frame["group"] == "2 temporal") & (headline.frame["System"] == "BM25")]
    assert row["R@5"].item() == stats.interval_cell(cell) and row["queries"].item() == "3"


def test_group_tables_without_groups(seed_evaluation, seed_stats):
    """A collection without query groups gets one empty table that says so."""
    [table] = stats.group_tables(seed_evaluation, seed_stats)
    assert table.caption == "No query has a group: there is nothing to break down." and len(table.frame) == 0


def test_one_retriever_has_nothing_to_compare(notes):
    """A single retriever: the note says a paired test needs two, and no sentence is invented."""
    evaluation = evaluate(notes, ("bm25",), k=5, seed=7)
    statistics = stats.run_statistics(evaluation)
    assert stats.significance_note(evaluation, statistics).text == (
        "- **Nothing to compare:** 5 headline queries and 1 retriever; a paired test needs two retrievers and at "
        "least one query."
    )
    assert (
        stats.comparison_sentences(evaluation, statistics).text == "No comparison: fewer than two systems, or no query."
    )
    assert len(stats.comparison_table(evaluation, statistics).frame) == 0


def test_the_matrix_holds_every_pairs_test_on_the_tables_measures(repaired):
    """One row per pair, one column per measure of the comparison table (RR once, as RR@5); each cell is the
    artifact's test: mean difference, interval, p (one pair: the test's own), * where significant."""
    evaluation, statistics = repaired
    matrix = stats.pairs_matrix(evaluation, statistics)
    assert matrix.rows == (("BM25", "Tag scorer"),) and matrix.measures == statistics.table_measures
    assert "RR" not in matrix.measures and "RR@5" in matrix.measures
    for m in matrix.measures:
        [c] = statistics.comparisons[m]
        cell = matrix.cells[(0, m)]
        assert (cell.difference, cell.p) == (c.test.mean_difference, c.test.p_value)
        assert (cell.low, cell.high) == (c.test.effect_ci.low, c.test.effect_ci.high)
        assert cell.significant == (c.test.p_value <= 0.05)
    table = stats.comparison_matrix(matrix)
    assert list(table.frame.columns) == ["pair (first − second)", "P@5", "R@5", "RR@5", "nDCG@5", "AP@5"]
    rr = statistics.comparisons["RR@5"][0].test
    low, high = rr.effect_ci.low, rr.effect_ci.high
    assert table.frame.loc[0, "RR@5"] == f"+{rr.mean_difference:.2f} [+{low:.2f}, +{high:.2f}] p\u00a00.00586 *"
    assert table.frame.loc[0, "P@5"].endswith(" p\u00a00.11")  # not significant: no star
    assert table.caption == (
        "Paired differences over 12 headline queries: mean difference [95% bootstrap interval], p of the one pair; "
        "* significant at 0.05"
    )


def test_the_summary_says_what_the_matrix_allows(repaired, seed_evaluation, seed_stats):
    """A few sentences: how many comparisons, which are significant (named), the largest difference, and that
    measures on the same queries are one finding; with 5 queries, that nothing can be significant."""
    evaluation, statistics = repaired
    text = stats.comparison_summary(stats.pairs_matrix(evaluation, statistics)).text
    assert text.startswith(
        "5 paired comparisons (1 pair of systems x 5 measures) over 12 headline queries, each a two-sided paired "
        "permutation test (one pair, no correction). 3 of them are significant at 0.05 (marked *): BM25 − Tag "
        "scorer on RR@5 (+0.54), BM25 − Tag scorer on nDCG@5 (+0.47), BM25 − Tag scorer on AP@5 (+0.46). The largest "
        "difference is BM25 − Tag scorer on RR@5, +0.54 (interval [+0.27, +0.79])."
    )
    assert text.count(". ") == 3
    assert "several significant measures of one pair are one finding, not several" in text
    seed = stats.comparison_summary(stats.pairs_matrix(seed_evaluation, seed_stats)).text
    assert (
        "With 5 queries no p-value can fall below 0.0625, so none of them can be significant at 0.05, whatever the "
        "systems do" in seed
    )


def test_holms_floor_is_named_when_it_rules_out_significance():
    """When the smallest p passes alpha but not after Holm's first step (the LoCoMo sample: 6 queries, 10 pairs),
    the summary names the adjusted floor."""
    evaluation = evaluate(load(SAMPLE_FILE), "bm25,tags,hybrid,recency,bm25[k1=0.9,b=0.4]", k=5, seed=7)
    statistics = stats.run_statistics(evaluation)
    matrix = stats.pairs_matrix(evaluation, statistics)
    assert len(matrix.rows) == 10 and matrix.adjusted and matrix.smallest_p == 2 / 2**6
    text = stats.comparison_summary(matrix).text
    assert "no p-value can fall below 0.0312, 0.31 after Holm's correction over 10 pairs, so none of them" in text
    assert stats.comparison_matrix(matrix).caption.startswith(
        "Paired differences over 6 headline queries: mean difference [95% bootstrap interval], Holm-adjusted p across "
        "the pairs of each measure"
    )
