"""docs/semantics.md says what the retrievers do, where a reader could otherwise guess wrong."""

from __future__ import annotations

import re

from conftest import REPO_ROOT

from agentmemory.records import Hit, Query
from agentmemory.retrievers.hybrid import top_with_ties

PAGE = REPO_ROOT / "docs" / "semantics.md"


def _bullet(name: str) -> str:
    """The page's bullet on ``name``, its lines joined by single spaces."""
    text = PAGE.read_text(encoding="utf-8")
    match = re.search(rf"^\* \*\*{name}\*\*.*?(?=^\* |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match is not None, f"no bullet on {name} in {PAGE.name}"
    return " ".join(match[0].split())


def test_hybrid_bullet_says_candidates_include_the_ties_at_depth():
    """The hybrid's candidates are each component's top depth plus the hits tied with the depth-th: the page says so,
    and top_with_ties (what the hybrid fuses) does it."""
    assert (
        "fuses the **union** of each component's top `depth`, plus every further hit whose score ties with the "
        "`depth`-th (so an entry id never decides whether an entry is a candidate)" in _bullet("Hybrid")
    )

    class Scores:  # scores 3, 2, 2, 2, 1: the 2nd to 4th tie
        def search(self, query: Query, k: int) -> list[Hit]:
            scores = [3.0, 2.0, 2.0, 2.0, 1.0]
            return [Hit(f"e{i}", s, i + 1) for i, s in enumerate(scores)][:k]

    assert [h.entry_id for h in top_with_ties(Scores(), Query("q", "anything"), 2)] == ["e0", "e1", "e2", "e3"]
