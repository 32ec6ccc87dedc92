"""The README's numbers are the code's numbers."""

from __future__ import annotations

from conftest import FIXTURE_DIR, REPO_ROOT

from agentmemory import evaluate, load_collection
from agentmemory.analysis.text_tables import SEED_COLUMNS, markdown_table, seed_rows


def test_readme_shows_the_seed_table_the_code_computes():
    """The seed table quoted in README.md is, line for line, the one `agentmemory eval` computes."""
    table = markdown_table(SEED_COLUMNS, seed_rows(evaluate(load_collection(FIXTURE_DIR), k=5, seed=7)))
    assert table in (REPO_ROOT / "README.md").read_text(encoding="utf-8")
