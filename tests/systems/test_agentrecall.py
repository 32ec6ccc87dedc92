"""The agentrecall system: agentrecall-db's keyword memory, one SQLite file per scope, our ids kept as sources."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

pytest.importorskip("agentrecall", reason="the agentrecall extra (agentrecall-db) is not installed")

from agentmemory.systems.agentrecall import AgentRecallSystem  # noqa: E402
from agentmemory.systems.base import Turn  # noqa: E402
from agentmemory.systems.registry import resolve_system  # noqa: E402

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def turns(texts: list[str], scope: str = "c1") -> list[Turn]:
    return [Turn(f"{scope}/D1:{i + 1}", t, "A", T0, "session_1", scope) for i, t in enumerate(texts)]


def test_keyword_search_with_sources_ids_and_rank_scores(tmp_path):
    """Each turn is one memory; a search returns the matching ones best first, at most k, with our entry id as
    sources, the turn's time, the system's row id, and the score 1/(60 + rank)."""
    system = AgentRecallSystem(scope="c1", workdir=tmp_path)
    try:
        system.ingest(turns(["Caroline went to a support group", "Melanie paints sunsets", "the group met again"]))
        system.ingest([])
        found = system.search("support group", 5)
        assert [m.sources for m in found] == [("c1/D1:1",), ("c1/D1:3",)]
        assert [m.text for m in found] == ["Caroline went to a support group", "the group met again"]
        assert [m.score for m in found] == [1 / 60, 1 / 61]
        assert [m.id for m in found] == ["1", "3"]
        assert all(m.created_at == T0 for m in found)
        assert len(system.search("group", 1)) == 1
        assert system.search("kayak", 5) == []
        assert system.search("?!", 5) == []  # no word token: no query at all
        assert (tmp_path / "agentrecall.db").is_file()
        assert system.params()["embeddings"] is False
    finally:
        system.close()
    system.close()  # idempotent


def test_scopes_never_share_a_file(tmp_path):
    """Two scopes, two SQLite files: one never finds the other's turns."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = AgentRecallSystem(scope="a", workdir=tmp_path / "a")
    b = AgentRecallSystem(scope="b", workdir=tmp_path / "b")
    try:
        a.ingest(turns(["tea time"], "a"))
        b.ingest(turns(["coffee time"], "b"))
        assert [m.sources for m in a.search("time", 5)] == [("a/D1:1",)]
        assert [m.sources for m in b.search("time", 5)] == [("b/D1:1",)]
    finally:
        a.close()
        b.close()


def test_semantic_search_stays_off(tmp_path):
    """Opened with embeddings=False, whatever is installed (its default 'auto' would switch on with model2vec)."""
    system = AgentRecallSystem(workdir=tmp_path)
    try:
        assert system._memory.semantic_enabled is False
    finally:
        system.close()


def test_registry_name():
    """``agentrecall`` is a registered system, labelled by the library's name."""
    spec = resolve_system("agentrecall")
    assert (spec.key, spec.label) == ("agentrecall", "agentrecall-db")


def test_calls_from_other_threads(tmp_path):
    """The replay may call each method from another worker thread; SQLite's one-thread rule never shows."""
    from concurrent.futures import ThreadPoolExecutor

    system = AgentRecallSystem(scope="c1", workdir=tmp_path)
    try:
        with ThreadPoolExecutor(2) as pool:
            pool.submit(system.ingest, turns(["tea time"])).result()
            found = pool.submit(system.search, "tea", 5).result()
        assert [m.sources for m in found] == [("c1/D1:1",)]
    finally:
        system.close()
