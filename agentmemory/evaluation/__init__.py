"""Evaluation: systems over a collection's queries, scored per query; batch retrieval, sweeps, run files."""
