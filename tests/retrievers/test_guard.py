"""The declared capabilities and the plugin boundary (agentmemory.retrievers.base, .guard)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO_ROOT

from agentmemory.errors import PluginError, RetrieverContractError, UnknownNameError
from agentmemory.records import Hit, MemoryEntry, Query
from agentmemory.retrievers import (
    BM25,
    CAPABILITIES,
    CAPABILITY_TABLE,
    Dense,
    GuardedRetriever,
    Hybrid,
    Recency,
    TagScorer,
    capabilities,
    has_capability,
    resolve_retriever,
)
from agentmemory.retrievers.base import REQUIRED
from agentmemory.retrievers.encoders import PrecomputedEncoder
from agentmemory.retrievers.guard import hit_violations, is_ours
from agentmemory.systems.base import SYSTEM_CAPABILITIES
from agentmemory.testing import check_retriever

PACKAGE = REPO_ROOT / "agentmemory"


class Plain:
    """A plugin with the required members only (BM25 underneath)."""

    name = "plain"
    label = "Plain"

    def __init__(self) -> None:
        self._bm25 = BM25()

    def add(self, entries) -> None:
        self._bm25.add(entries)

    def search(self, query, k: int) -> list[Hit]:
        return self._bm25.search(query, k)

    def params(self) -> dict:
        return {}


class Removing(Plain):
    label = "Removing"

    def __init__(self) -> None:
        super().__init__()
        self._kept: list[MemoryEntry] = []

    def add(self, entries) -> None:
        batch = list(entries)
        super().add(batch)
        self._kept += batch

    def remove(self, entry_ids) -> None:
        self._kept = [e for e in self._kept if e.id not in set(entry_ids)]
        self._bm25 = BM25()
        self._bm25.add(self._kept)


ENTRIES = [MemoryEntry("a", "lentil soup recipe"), MemoryEntry("b", "lentil curry"), MemoryEntry("c", "marathon")]


def test_every_capability_is_declared_once_with_its_meaning_and_what_a_report_says_without_it() -> None:
    """The table names each optional member once, says who owns it and how it is detected, and is not empty."""
    names = [c.name for c in CAPABILITY_TABLE]
    assert len(names) == len(set(names))
    assert set(names) == {
        "score_all",
        "score_at_least",
        "explain",
        "remove",
        "search_batch",
        "search_many",
        "memory_bytes",
        "max_k",
        "with_params",
        "add_texts",
        "index_params",
        "spec_label",
    }
    assert CAPABILITIES == tuple(c.name for c in CAPABILITY_TABLE if c.owner == "retriever")
    for c in CAPABILITY_TABLE:
        assert c.owner in ("retriever", "factory") and c.kind in ("method", "property")
        assert c.meaning.strip() and c.missing.strip()


def test_asking_for_an_undeclared_capability_is_an_error() -> None:
    with pytest.raises(UnknownNameError, match=r"^capability: 'fly' \(str\) is not a known name; choose from: "):
        has_capability(BM25(), "fly")


def _probes() -> set[tuple[str, str]]:
    """Every (file, member) that agentmemory's code probes with hasattr/getattr on a retriever or factory."""
    found = set()
    suspects = re.compile(r"retriever|searcher|factory|instance|_base|first|obj|item")
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in ("hasattr", "getattr") or len(node.args) < 2:
                continue
            target, member = node.args[0], node.args[1]
            if isinstance(member, ast.Constant) and isinstance(member.value, str):
                if suspects.search(ast.unparse(target)):
                    found.add((path.relative_to(PACKAGE).as_posix(), member.value))
    return found


def test_nothing_is_probed_on_a_retriever_that_is_not_declared() -> None:
    """Every member the code looks up by name on a retriever or factory is required or a declared capability (of
    a retriever, or of a memory system and its factory: SYSTEM_CAPABILITIES).

    (The probes on encoders, executors and parsed values are about other objects.)
    """
    declared = set(REQUIRED) | {c.name for c in CAPABILITY_TABLE} | {"label", "name"} | set(SYSTEM_CAPABILITIES)
    others = {"__name__", "__module__", "__qualname__", "encode", "params", "dim", "cacheable", "filename"}
    probed = {(f, m) for f, m in _probes() if m not in others}
    assert probed, "the scan found no probe at all: it is not looking where the code is"
    assert {m for _, m in probed} <= declared, sorted(probed)


@pytest.mark.parametrize(
    ("retriever", "expected"),
    [
        (BM25(), {"score_all", "score_at_least", "explain", "search_many", "memory_bytes", "with_params", "add_texts"}),
        (TagScorer(), {"score_all", "score_at_least", "explain", "memory_bytes"}),
        (Plain(), set()),
        (Removing(), {"remove"}),
    ],
    ids=["bm25", "tags", "plain", "removing"],
)
def test_capabilities_are_read_from_the_table(retriever, expected) -> None:
    assert capabilities(retriever) == expected


def test_dense_declares_search_batch_and_hybrid_recency_declare_max_k() -> None:
    dense = Dense(encoder=PrecomputedEncoder(["x"], np.ones((1, 4), dtype=np.float32)))
    assert has_capability(dense, "search_batch")
    assert has_capability(Hybrid(of=["bm25", "tags"]), "max_k")
    assert has_capability(Recency(), "max_k")
    assert not has_capability(BM25(), "max_k")


def test_a_plugin_is_guarded_and_ours_are_not() -> None:
    """Resolution wraps exactly the retrievers whose code lives outside agentmemory."""
    assert not resolve_retriever("bm25").plugin and isinstance(resolve_retriever("bm25").new(), BM25)
    spec = resolve_retriever(Plain)
    made = spec.new()
    assert spec.plugin == f"{__name__}:Plain" and isinstance(made, GuardedRetriever)
    assert isinstance(made.plugin, Plain) and (made.name, made.label) == ("plain", "Plain")
    assert is_ours(BM25) and is_ours(BM25()) and not is_ours(Plain) and not is_ours(Plain())


def test_the_guard_has_exactly_the_plugins_capabilities() -> None:
    """A guarded plugin offers the optional members its plugin has, and no other."""
    assert capabilities(resolve_retriever(Plain).new()) == frozenset()
    guarded = resolve_retriever(Removing).new()
    assert capabilities(guarded) == {"remove"}
    guarded.add(ENTRIES)
    guarded.remove(["a"])
    assert [h.entry_id for h in guarded.search("lentil", 5)] == ["b"]


def test_the_guard_forgets_removed_ids() -> None:
    """After remove, an id the plugin still returns is a ghost: refused."""

    class Forgetful(Removing):
        label = "Forgetful"

        def remove(self, entry_ids) -> None:  # says it removed, keeps them
            pass

    guarded = resolve_retriever(Forgetful).new()
    guarded.add(ENTRIES)
    guarded.remove(["a"])
    with pytest.raises(PluginError, match=r"returned ids never added to it: \['a'\]$"):
        guarded.search("lentil", 5)


def test_an_instance_plugin_is_guarded_too() -> None:
    class Ghostly(Plain):
        label = "Ghostly"

        def search(self, query, k: int) -> list[Hit]:
            return [Hit("nobody", 1.0, 1)]

    instance = Ghostly()
    spec = resolve_retriever(instance)
    assert spec.shared and isinstance(spec.instance, GuardedRetriever) and spec.instance.plugin is instance
    spec.instance.add(ENTRIES)
    with pytest.raises(PluginError) as caught:
        spec.instance.search(Query("q1", "lentil", scope="conv-1"), 3)
    assert spec.plugin == f"{__name__}:{Ghostly.__qualname__}"
    assert str(caught.value) == (
        f"retriever plugin {spec.plugin!r} (Ghostly): search (query 'q1', k = 3) returned ids never added "
        "to it (scope 'conv-1'): ['nobody']"
    )


def test_score_all_and_memory_bytes_are_checked_at_the_boundary() -> None:
    class Odd(Plain):
        label = "Odd"

        def score_all(self, query) -> dict:
            return {"zzz": 1.0}

        def memory_bytes(self) -> int:
            return -1

    guarded = resolve_retriever(Odd).new()
    guarded.add(ENTRIES)
    with pytest.raises(PluginError, match=r"\(Odd\): score_all returned 'zzz', an id that was never added$"):
        guarded.score_all("lentil")
    with pytest.raises(PluginError, match=r"\(Odd\): memory_bytes returned -1, not an int >= 0$"):
        guarded.memory_bytes()


def test_the_guard_hands_back_python_floats() -> None:
    """A plugin scoring with numpy floats gives Hits with Python floats (what JSON and the run writer take)."""

    class Numpy(Plain):
        label = "Numpy"

        def search(self, query, k: int) -> list[Hit]:
            return [Hit(h.entry_id, np.float32(h.score), h.rank) for h in super().search(query, k)]

    guarded = resolve_retriever(Numpy).new()
    guarded.add(ENTRIES)
    hits = guarded.search("lentil", 5)
    assert hits and all(type(h.score) is float for h in hits)


def test_a_plugins_search_batch_is_validated_like_search() -> None:
    class Batching(Plain):
        label = "Batching"

        def search_batch(self, queries, k: int) -> list[list[Hit]]:
            return [[Hit("ghost", 1.0, 1)] for _ in queries]

    guarded = resolve_retriever(Batching).new()
    guarded.add(ENTRIES)
    assert has_capability(guarded, "search_batch")
    with pytest.raises(PluginError, match=r"\(Batching\): search_batch \(query 'q1', k = 2\) returned ids never"):
        guarded.search_batch([Query("q1", "lentil")], 2)


def test_a_plugins_search_many_is_validated_like_search() -> None:
    class Many(Plain):
        label = "Many"

        def search_many(self, queries, k: int) -> list[list[Hit]]:
            return [self.search(q, k) for q in queries][:-1]  # one list short

    guarded = resolve_retriever(Many).new()
    guarded.add(ENTRIES)
    assert has_capability(guarded, "search_many")
    with pytest.raises(PluginError, match=r"\(Many\): search_many returned .*not a list of 2 lists of hits"):
        guarded.search_many([Query("q1", "lentil"), Query("q2", "curry")], 2)


def test_check_retriever_and_the_boundary_share_one_validator() -> None:
    """The contract test lists the boundary's own words for the same violation (plus its stricter rules)."""

    class Ascending(Plain):
        label = "Ascending"

        def search(self, query, k: int) -> list[Hit]:
            hits = list(reversed(super().search(query, k)))
            return [Hit(h.entry_id, h.score, r) for r, h in enumerate(hits, start=1)]

    ranked = [Hit("a", 1.0, 1), Hit("b", 2.0, 2)]
    [words] = hit_violations(ranked, 5, {"a", "b"})
    assert words == ("hits out of order: 'a' (1.0) above 'b' (2.0); the rule is score descending, then id descending")
    with pytest.raises(RetrieverContractError) as caught:
        check_retriever(Ascending)
    assert any("hits out of order: " in v for v in caught.value.violations)
    guarded = resolve_retriever(Ascending).new()
    guarded.add([MemoryEntry("a", "lentil"), MemoryEntry("b", "lentil lentil soup")])
    with pytest.raises(PluginError, match="returned hits out of order: "):
        guarded.search("lentil", 5)


@pytest.mark.parametrize(
    ("hits", "words"),
    [
        (None, "a NoneType (None), not a list of agentmemory.Hit"),
        ([("a", 1.0)], "item 1: ('a', 1.0) (tuple), not an agentmemory.Hit"),
        ([Hit("a", 1.0, 1), Hit("b", 0.5, 2)], "2 hits for k = 1"),
        ([Hit("a", 1.0, 2)], "hits ranked [2], not 1..1"),
        ([Hit("a", 1.0, 1), Hit("a", 1.0, 2)], "an entry twice ('a')"),
        ([Hit("x", 1.0, 1)], "ids never added to it: ['x']"),
        ([Hit("a", float("nan"), 1)], "'a' (nan): scores must be numbers, not NaN"),
    ],
)
def test_each_violation_in_the_validators_words(hits, words) -> None:
    k = 1 if hits and len(hits) == 2 and hits[0].entry_id != hits[1].entry_id else 5
    assert hit_violations(hits, k, {"a", "b"})[0] == words


def test_infinities_rank_and_are_no_violation() -> None:
    ranked = [Hit("a", float("inf"), 1), Hit("b", 1.0, 2), Hit("c", float("-inf"), 3)]
    assert hit_violations(ranked, 3, {"a", "b", "c"}) == []


def test_the_probe_scan_reads_the_package_it_checks() -> None:
    assert (PACKAGE / "retrievers" / "guard.py").is_file() and Path(__file__).parent.name == "retrievers"


class Tunable(Plain):
    """A plugin whose ``boost`` only scales the scores (scoring) and ``field`` would change the index."""

    label = "Tunable"

    def __init__(self, boost: float = 1.0, field: str = "text") -> None:
        super().__init__()
        self.boost = boost

    @staticmethod
    def index_params() -> tuple[str, ...]:
        return ("field",)

    def with_params(self, params: dict) -> Tunable:
        other = Tunable(**params)
        other._bm25 = self._bm25
        return other

    def search(self, query, k: int) -> list[Hit]:
        return [Hit(h.entry_id, h.score * self.boost, h.rank) for h in super().search(query, k)]


def test_a_plugin_shares_its_index_only_when_it_declares_index_params() -> None:
    """index_key: a plugin without index_params shares nothing (its searches might change it); with it, the
    plugin's target and its index parameters; with_params goes through the boundary and knows the entries."""
    assert resolve_retriever(Plain).index_key is None
    spec = resolve_retriever(f"{__name__}:Tunable[boost=2.0]")
    assert spec.index_key == f"{__name__}:Tunable"
    assert resolve_retriever(f"{__name__}:Tunable[field=title]").index_key == f"{__name__}:Tunable[field=title]"
    owner_spec = resolve_retriever(f"{__name__}:Tunable")
    owner = owner_spec.new()
    owner.add(ENTRIES)
    view = spec.share(owner, owner_spec)
    assert isinstance(view, GuardedRetriever) and view.plugin.boost == 2.0 and view._known == {"a", "b", "c"}
    assert [h.score for h in view.search("lentil", 5)] == [2 * h.score for h in owner.search("lentil", 5)]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("field", r"returned 'field', not a tuple of parameter names$"),
        (("field", "field"), r"returned \('field', 'field'\), which names a parameter twice$"),
        (("colour",), r"returned 'colour', a parameter the factory does not take$"),
    ],
)
def test_a_plugins_index_params_are_checked_at_the_boundary(answer, problem: str) -> None:
    class Strange(Tunable):
        label = "Strange"

        @staticmethod
        def index_params():
            return answer

    with pytest.raises(PluginError, match=r"^retriever plugin .*Strange.*: index_params " + problem):
        resolve_retriever(Strange)


def test_a_plugins_with_params_must_give_a_new_retriever() -> None:
    class Lazy(Tunable):
        label = "Lazy"

        def with_params(self, params: dict):
            return self if params else object()

    owner_spec = resolve_retriever(Lazy)
    owner = owner_spec.new()
    owner.add(ENTRIES)
    with pytest.raises(PluginError, match=r"with_params returned the retriever itself, not a new one"):
        owner.with_params({"boost": 2.0})
    with pytest.raises(PluginError, match=r"with_params returned <object object .*, not a retriever \(it lacks"):
        owner.with_params({})


def test_check_retriever_checks_with_params_when_a_plugin_has_it() -> None:
    """The contract test: with_params with the spec's own parameters gives a new retriever with the same hits."""
    check_retriever(Tunable)

    class Selfish(Tunable):
        label = "Selfish"

        def with_params(self, params: dict):
            return self

    class Louder(Tunable):
        label = "Louder"

        def with_params(self, params: dict):
            return Tunable.with_params(self, {**params, "boost": 3.0})

    with pytest.raises(RetrieverContractError, match=r"with_params\(\{\}\) returned the retriever itself"):
        check_retriever(Selfish)
    with pytest.raises(RetrieverContractError, match=r"with_params\(its own parameters\) gives \["):
        check_retriever(Louder)
