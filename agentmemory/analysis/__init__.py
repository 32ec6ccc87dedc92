"""Analysis of an evaluation: intervals, paired tests, Holm, comparison tables, the artifact."""
