"""The retriever registry, retriever specs, and the contract test users run on their own retrievers."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentmemory import evaluate
from agentmemory.cli.app import main
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError, RetrieverContractError, UnknownNameError
from agentmemory.records import Hit, MemoryEntry
from agentmemory.retrievers import (
    BM25,
    RETRIEVERS,
    TagScorer,
    full_label,
    make_retriever,
    register_retriever,
    resolve_retriever,
    resolve_retrievers,
)
from agentmemory.retrievers.spec import Spec, format_value, parse_spec, split_specs
from agentmemory.testing import check_retriever

GRAMMAR = (
    "write NAME, NAME[key=value,...] or package.module:attribute[key=value,...]; a value is a number, true, false, "
    "null, a \"quoted string\", a bare token, a nested spec, or items joined by '+'"
)


# -- the spec grammar ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bm25", Spec("bm25", {})),
        ("bm25[]", Spec("bm25", {})),
        ("bm25[k1=0.9,b=0.4]", Spec("bm25", {"k1": 0.9, "b": 0.4})),
        (" bm25 [ k1 = 0.9 , b = 1 ] ", Spec("bm25", {"k1": 0.9, "b": 1})),
        (
            "hybrid[of=bm25+dense,method=rrf,rrf_k=60,depth=100]",
            Spec("hybrid", {"of": ["bm25", "dense"], "method": "rrf", "rrf_k": 60, "depth": 100}),
        ),
        (
            "hybrid[of=bm25[k1=0.9,b=0.4]+dense,weights=0.5+0.5]",
            Spec("hybrid", {"of": ["bm25[k1=0.9,b=0.4]", "dense"], "weights": [0.5, 0.5]}),
        ),
        (
            "dense[encoder=model2vec,model=/path/to/model]",
            Spec("dense", {"encoder": "model2vec", "model": "/path/to/model"}),
        ),
        (
            'x[name="a b, c]",flag=true,none=null,n=-3,e=1e5]',
            Spec("x", {"name": "a b, c]", "flag": True, "none": None, "n": -3, "e": 100000.0}),
        ),
        ("mypkg.memory:MyRetriever[dim=64]", Spec("mypkg.memory:MyRetriever", {"dim": 64})),
        ("x[v=1.0.2]", Spec("x", {"v": "1.0.2"})),
    ],
)
def test_parse_spec_reads_the_grammar(text: str, expected: Spec) -> None:
    """Each spec text reads as its target and parameters: JSON scalars, bare tokens, lists by '+', nested specs as text."""
    assert parse_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("bm25,tags", ["bm25", "tags"]),
        (" bm25 , tags ", ["bm25", "tags"]),
        ("bm25,bm25[k1=0.9,b=0.4]", ["bm25", "bm25[k1=0.9,b=0.4]"]),
        ("hybrid[of=bm25[k1=0.9]+tags,weights=0.5+0.5],tags", ["hybrid[of=bm25[k1=0.9]+tags,weights=0.5+0.5]", "tags"]),
        ('x[s="a,b"],y', ['x[s="a,b"]', "y"]),
    ],
)
def test_split_specs_splits_only_at_top_level_commas(text: str, pieces: list[str]) -> None:
    """A list of specs splits at commas outside brackets and quotes, so parameters stay with their spec."""
    assert split_specs(text) == pieces


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("bm25[k1=0.9", "has a '[' without its ']'"),
        ("bm25]", "has a ']' without its '['"),
        ("bm25[k1=0.9]x", "has text after its closing ']'"),
        ("bm25[k1]", "has the parameter 'k1', which is not key=value"),
        ("bm25[1k=2]", "has the parameter '1k=2', which is not key=value"),
        ("bm25[k1=0.9,k1=1]", "gives the parameter 'k1' twice"),
        ("bm25[k1=]", "has an empty value"),
        (
            "bm25[k1=a b]",
            "has the value 'a b', which is neither a number, true, false, null, a quoted string nor a bare token",
        ),
        ('bm25[k1="a]', "has an unterminated or malformed quoted string"),
        ("bm 25", "names 'bm 25', which is not a registry name"),
        ("mod:", "names 'mod:', which is not package.module:attribute"),
        ("", "is empty"),
    ],
)
def test_parse_spec_refuses_malformed_text_in_one_line(text: str, problem: str) -> None:
    """A malformed spec is one ParameterError naming the whole spec, what is wrong, and the grammar."""
    with pytest.raises(ParameterError) as caught:
        parse_spec(text)
    assert str(caught.value) == f"retriever spec: {text!r} (str) {problem}; {GRAMMAR}"


def test_split_specs_refuses_an_empty_item() -> None:
    """Two commas in a row leave an empty spec: refused, saying how to separate specs."""
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "retrievers: 'bm25,,tags' (str) has an empty item; separate specs by single commas, e.g. 'bm25,bm25[k1=0.9]'"
        ),
    ):
        split_specs("bm25,,tags")


_token = st.from_regex(r"[A-Za-z_][A-Za-z0-9_./:-]{0,8}", fullmatch=True)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(max_size=12),
    _token,
)


@given(
    st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True),
        st.one_of(_scalar, st.lists(_scalar, min_size=2, max_size=3)),
        max_size=4,
    )
)
def test_spec_text_reads_back_to_the_same_parameters(params: dict) -> None:
    """Spec.text() writes parameters that parse_spec reads back equal (numbers, bools, null, strings, lists)."""
    spec = Spec("x", params)
    assert parse_spec(spec.text()) == spec


def test_format_value_writes_nested_specs_bare() -> None:
    """A nested spec value is written as itself, so a hybrid's key reads like what the user typed."""
    assert format_value(["bm25[k1=0.9]", "dense"]) == "bm25[k1=0.9]+dense"
    assert format_value("a b") == '"a b"'
    assert format_value("true") == '"true"'


# -- resolving specs ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "label", "params"),
    [
        ("bm25", "bm25", "BM25", {}),
        ("tags", "tags", "Tag scorer", {}),
        ("bm25[k1=0.9,b=0.4]", "bm25[k1=0.9,b=0.4]", "BM25 (k1=0.9, b=0.4)", {"k1": 0.9, "b": 0.4}),
        ("bm25[k1=1.2]", "bm25", "BM25", {}),
        ("bm25[k1=1.2,b=0.4]", "bm25[b=0.4]", "BM25 (b=0.4)", {"b": 0.4}),
        ("bm25[b=1]", "bm25[b=1]", "BM25 (b=1)", {"b": 1}),
    ],
)
def test_resolve_derives_key_and_label_from_the_non_default_parameters(text, key, label, params) -> None:
    """Default parameters keep the registry name and label; others make both from the parameters that differ."""
    spec = resolve_retriever(text)
    assert (spec.key, spec.label, spec.params) == (key, label, params)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("bm25", "BM25 (k1=1.2, b=0.75)"),
        ("bm25[k1=0.6]", "BM25 (k1=0.6, b=0.75)"),
        ("bm25[k1=0.6,b=0.75]", "BM25 (k1=0.6, b=0.75)"),
        ("bm25[b=0.4,k1=0.9]", "BM25 (k1=0.9, b=0.4)"),
        ("tags", "Tag scorer"),
        ("recency[decay=0.9]", "Recency (BM25; decay=0.9)"),
        ("hybrid[of=bm25+tags]", "Hybrid RRF (BM25 + Tag scorer)"),
    ],
)
def test_full_label_names_every_parameter(text, label) -> None:
    """A grid's label names every parameter, defaults included, in the factory's order; a retriever that names
    itself (spec_label) or has no parameter keeps resolve_retriever's label."""
    assert full_label(text) == label


def test_full_label_of_plugins(plugin_module: str) -> None:
    """A plugin factory's parameters are named with their defaults; an instance keeps its label."""
    assert full_label(f"{plugin_module}:Boosted[k1=0.9]") == "Boosted BM25 (dim=8, k1=0.9)"
    assert full_label(f"{plugin_module}:make") == "BM25 (k1=1.2)"  # the label of what it makes
    assert full_label(f"{plugin_module}:INSTANCE") == "BM25"


def test_a_spec_builds_a_configured_retriever() -> None:
    """The parameters reach the factory: the retriever's params() shows them."""
    assert make_retriever("bm25[k1=0.9,b=0.4]").params() == {"k1": 0.9, "b": 0.4, "variant": "lucene"}
    assert make_retriever("bm25", k1=0.5).params()["k1"] == 0.5


@pytest.mark.parametrize(
    ("items", "error", "message"),
    [
        (
            "bm25,splade",
            UnknownNameError,
            "retriever: 'splade' (str) is not a known name; choose from: bm25, dense, hybrid, recency, tags",
        ),
        ("bm25[k2=1]", UnknownNameError, "bm25 parameter: 'k2' (str) is not a known name; choose from: b, k1"),
        (
            "tags[x=1]",
            ParameterError,
            "tags parameter: 'x' (str) is not accepted; the tags retriever takes no parameters",
        ),
        (
            "bm25,bm25[k1=1.2]",
            ParameterError,
            "retrievers: 'bm25,bm25[k1=1.2]' (str) names the retriever 'BM25' twice; give each retriever once, or "
            "different parameters (labels must be unique)",
        ),
        ([], ParameterError, "retrievers: [] (list) names no retriever; name at least one, e.g. 'bm25'"),
        (5, ParameterError, "retrievers: 5 (int) is not a retriever; pass a registry name such as 'bm25'"),
    ],
)
def test_resolve_refuses_bad_retrievers(items, error, message: str) -> None:
    """Unknown names, parameters the factory does not take, duplicate labels and non-retrievers: one clear error each."""
    with pytest.raises(error) as caught:
        resolve_retrievers(items)
    assert str(caught.value).startswith(message)


class Minimal:
    """A retriever with only the required members: BM25 underneath, no score_all, no explain."""

    name = "minimal"
    label = "Minimal"

    def __init__(self, k1: float = 1.2) -> None:
        self._bm25 = BM25(k1=k1)

    def add(self, entries) -> None:
        self._bm25.add(entries)

    def search(self, query, k: int) -> list[Hit]:
        return self._bm25.search(query, k)

    def params(self) -> dict:
        return {"k1": self._bm25.k1}


@pytest.fixture
def registered():
    """Registers ``minimal`` for one test and removes it after."""
    register_retriever("minimal", Minimal)
    yield
    RETRIEVERS.unregister("minimal")


def test_a_retriever_registered_at_run_time_is_used_by_name(registered, notes) -> None:
    """After register_retriever, the name resolves, takes parameters, appears among the choices and evaluates."""
    assert "minimal" in RETRIEVERS.names()
    spec = resolve_retriever("minimal[k1=0.9]")
    assert (spec.key, spec.label) == ("minimal[k1=0.9]", "Minimal (k1=0.9)")
    with pytest.raises(UnknownNameError, match=re.escape("choose from: bm25, dense, hybrid, minimal, recency, tags")):
        resolve_retriever("nope")
    evaluation = evaluate(notes, "minimal,bm25", k=5, seed=7)
    assert [r.name for r in evaluation.results] == ["minimal", "bm25"]


def test_registering_a_taken_name_needs_replace(registered) -> None:
    """A name registered twice is an error unless replace=True; invalid names and non-factories are refused."""
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "retriever name: 'minimal' (str) is already registered; pass replace=True to replace the registered "
            "retriever, or choose another name"
        ),
    ):
        register_retriever("minimal", BM25)
    register_retriever("minimal", BM25, label="Other", replace=True)
    assert resolve_retriever("minimal").label == "Other"
    with pytest.raises(ParameterError, match=re.escape("retriever name: 'a,b' (str) is not a valid name")):
        register_retriever("a,b", BM25)
    with pytest.raises(ParameterError, match=re.escape("retriever factory: 5 (int) is not a retriever factory")):
        register_retriever("five", 5)  # type: ignore[arg-type]


class Named(Minimal):
    """A factory that names itself from its parameters (spec_label), with a list parameter."""

    label = "Named"

    def __init__(self, k1: float = 1.2, mix: tuple = (1.0, 2.0)) -> None:
        super().__init__(k1)
        self.label = Named.spec_label({"k1": k1} if k1 != 1.2 else {})

    @staticmethod
    def spec_label(params: dict) -> str:
        return "Named BM25" + (f" at k1 {params['k1']}" if "k1" in params else "")


def test_a_factory_names_itself_with_spec_label() -> None:
    """spec_label(params) gives the label from the parameters that differ from the defaults; a registered label wins."""
    register_retriever("named", Named)
    try:
        assert resolve_retriever("named").label == "Named BM25"
        assert resolve_retriever("named[k1=0.9]").label == "Named BM25 at k1 0.9"
        assert make_retriever("named[k1=0.9]").label == "Named BM25 at k1 0.9"
        register_retriever("named", Named, label="Mine", replace=True)
        assert resolve_retriever("named[k1=0.9]").label == "Mine (k1=0.9)"
    finally:
        RETRIEVERS.unregister("named")


@pytest.mark.parametrize("spec", ["named[mix=1+2]", "named[mix=1.0+2]", "named[k1=1.2,mix=1+2.0]"])
def test_a_list_equal_to_a_tuple_default_is_a_default(spec: str) -> None:
    """weights=1+2 given for a default (1.0, 2.0) is the default: the key and label drop it."""
    register_retriever("named", Named)
    try:
        resolved = resolve_retriever(spec)
        assert (resolved.key, resolved.label, resolved.params) == ("named", "Named BM25", {})
        assert resolve_retriever("named[mix=1+3]").key == "named[mix=1+3]"
    finally:
        RETRIEVERS.unregister("named")


def test_a_retriever_without_optional_capabilities_gives_the_same_numbers(notes) -> None:
    """Without score_all, tie analysis searches deeper instead and finds the same tie reports as BM25 itself."""
    ours = evaluate(notes, [Minimal], k=2, seed=7)
    bm25 = evaluate(notes, ["bm25"], k=2, seed=7)
    assert [q.metrics for q in ours.results[0].per_query] == [q.metrics for q in bm25.results[0].per_query]
    assert [q.ties for q in ours.results[0].per_query] == [q.ties for q in bm25.results[0].per_query]


def test_report_says_an_explanation_is_not_available(notes) -> None:
    """The explanation of a miss names the retriever and says it cannot explain, instead of failing."""
    from agentmemory.report.explain import explain_run

    explanation = explain_run(evaluate(notes, [Minimal], k=5, seed=7)).retrievers[0]
    assert explanation.misses
    assert all(
        "an explanation is not available for Minimal (it has no explain())" in m.reason for m in explanation.misses
    )


# -- module:attribute ---------------------------------------------------------


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch) -> str:
    """A module ``am_test_plugin`` on sys.path with a factory, a function factory, an instance and a non-retriever."""
    (tmp_path / "am_test_plugin.py").write_text(
        textwrap.dedent(
            """
            from agentmemory.retrievers import BM25

            class Boosted(BM25):
                name = "boosted"
                label = "Boosted BM25"

                def __init__(self, dim: int = 8, k1: float = 1.2) -> None:
                    super().__init__(k1=k1)
                    self.dim = dim

            def make(k1: float = 1.2):
                return BM25(k1=k1)

            def broken():
                return 42

            INSTANCE = BM25()
            NUMBER = 7
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "am_test_plugin"
    sys.modules.pop("am_test_plugin", None)


def test_module_attribute_specs_resolve(plugin_module: str) -> None:
    """'module:attribute' names a factory (with parameters checked against its signature) or an instance;
    a function factory's retrievers keep the label they declare (BM25 here), not the function's name."""
    spec = resolve_retriever(f"{plugin_module}:Boosted[dim=64]")
    assert (spec.key, spec.label) == (f"{plugin_module}:Boosted[dim=64]", "Boosted BM25 (dim=64)")
    assert spec.new().dim == 64
    assert resolve_retriever(f"{plugin_module}:make").label == "BM25"
    assert resolve_retriever(f"{plugin_module}:make[k1=0.9]").label == "BM25 (k1=0.9)"
    assert resolve_retriever(f"{plugin_module}:INSTANCE").shared


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        (
            "nowhere_module:X",
            "retriever spec: 'nowhere_module:X' (str) cannot be imported: ModuleNotFoundError: No module named 'nowhere_module'; name an importable package.module:attribute (is the package installed?)",
        ),
        (
            "{m}:Missing",
            "retriever spec: '{m}:Missing' (str) names 'Missing', which module '{m}' does not have; check the attribute name after the ':' in '{m}:Missing'",
        ),
        (
            "{m}:NUMBER",
            "retriever spec: '{m}:NUMBER' (str) names a int, which is neither a retriever nor a factory; point it at a class or function returning a retriever, or at a retriever instance",
        ),
        (
            "{m}:INSTANCE[k1=1]",
            "retriever spec: '{m}:INSTANCE[k1=1]' (str) gives parameters to a retriever instance; drop the brackets, or point {m}:... at a factory that takes them",
        ),
        ("{m}:Boosted[size=3]", "{m}:Boosted parameter: 'size' (str) is not a known name; choose from: dim, k1"),
    ],
)
def test_module_attribute_specs_fail_in_one_line(plugin_module: str, attribute: str, message: str) -> None:
    """A spec that does not import, names a missing attribute or a non-retriever, is one ParameterError naming it."""
    with pytest.raises(ParameterError) as caught:
        resolve_retriever(attribute.format(m=plugin_module))
    assert str(caught.value) == message.format(m=plugin_module)


def test_a_factory_that_returns_no_retriever_is_named_when_used(plugin_module: str) -> None:
    """A factory's product is checked: a non-retriever is refused naming the spec and what it lacks."""
    with pytest.raises(
        ParameterError,
        match=re.escape(
            f"retriever spec: '{plugin_module}:broken' (str) gives a int, which is not a retriever (it lacks name, label, "
            "add(), search(), params())"
        ),
    ):
        resolve_retriever(f"{plugin_module}:broken").new()


def test_cli_eval_takes_two_bm25_configurations_and_writes_two_runs(tmp_path: Path, plugin_module: str, capsys) -> None:
    """--retrievers with two BM25 configurations and a module:attribute spec: one row each, run files never overwrite."""
    out = tmp_path / "eval.json"
    runs = tmp_path / "runs"
    spec = f"bm25,bm25[k1=0.9,b=0.4],{plugin_module}:Boosted[dim=4]"
    assert main(["eval", "--retrievers", spec, "--out", str(out), "--runs-dir", str(runs), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "| BM25 (k1=0.9, b=0.4) |" in printed and "| Boosted BM25 (dim=4) |" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [r["name"] for r in data["params"]["retrievers"]] == [
        "bm25",
        "bm25[k1=0.9,b=0.4]",
        f"{plugin_module}:Boosted[dim=4]",
    ]
    assert data["params"]["retrievers"][1]["params"] == {"k1": 0.9, "b": 0.4, "variant": "lucene"}
    assert sorted(p.name for p in runs.iterdir()) == [
        "am_test_plugin-Boosted-dim=4.trec",
        "bm25-k1=0.9-b=0.4.trec",
        "bm25.trec",
        "qrels.txt",
    ]
    assert (runs / "bm25.trec").read_text() != (runs / "bm25-k1=0.9-b=0.4.trec").read_text()


def test_an_instance_on_a_scoped_collection_is_refused(repo_root: Path) -> None:
    """LoCoMo questions search their own conversation: an instance cannot serve every scope, and the error says so."""
    from agentmemory.datasets import load

    sample = load(repo_root / "fixtures" / "locomo-sample" / "locomo-sample.json")
    with pytest.raises(ParameterError, match=re.escape("is a retriever instance, which can serve one scope only")):
        evaluate(sample, [BM25()], k=5)


# -- the contract test --------------------------------------------------------


@pytest.mark.parametrize("factory", [BM25, TagScorer, "bm25[k1=0.9,b=0.4]"])
@pytest.mark.parametrize("accel", ["off", "on"])
def test_built_in_retrievers_keep_the_contract(factory, accel: str, monkeypatch) -> None:
    """BM25 and the tag scorer pass check_retriever, on the NumPy path and with the compiled kernels."""
    monkeypatch.setenv("AGENTMEMORY_ACCEL", accel)
    check_retriever(factory)


class _Broken(Minimal):
    flaw = ""

    def search(self, query, k: int) -> list[Hit]:
        if k < 1 and self.flaw != "k0":
            raise ValueError("k")
        hits = super().search(query, max(k, 1))
        if self.flaw == "zeros":
            hits = hits + [Hit("m08", 0.0, len(hits) + 1)] if len(hits) < k else hits
        if self.flaw == "ties":
            hits = sorted(hits, key=lambda h: (-h.score, h.entry_id))
            hits = [Hit(h.entry_id, h.score, r) for r, h in enumerate(hits, 1)]
        return hits


def _broken(flaw: str):
    return type(f"Broken_{flaw}", (_Broken,), {"flaw": flaw, "label": f"Broken {flaw}"})


@pytest.mark.parametrize(
    ("flaw", "violation"),
    [
        ("zeros", "q7 at k = 22 (larger than the store): m08 score <= 0; such entries must be dropped"),
        (
            "ties",
            "q3: entries twin-a and twin-b have identical text and tags, so they must score the same, twin-b first (id descending)",
        ),
        ("k0", "search(query, 0) did not raise ValueError (k must be an integer >= 1)"),
    ],
)
def test_the_contract_test_names_each_violation(flaw: str, violation: str) -> None:
    """A retriever that returns zero scores, breaks ties the wrong way or accepts k = 0 fails with that violation listed."""
    with pytest.raises(RetrieverContractError) as caught:
        check_retriever(_broken(flaw))
    assert any(v.startswith(violation) for v in caught.value.violations), caught.value.violations
    assert str(caught.value).startswith(f"check_retriever(Broken {flaw}): ")


def test_the_contract_test_catches_incremental_adds_that_differ() -> None:
    """A retriever whose statistics do not update on a later add gives different hits after two adds: named."""

    class Frozen(Minimal):
        label = "Frozen"

        def __init__(self) -> None:
            super().__init__()
            self._added = False

        def add(self, entries) -> None:
            if not self._added:
                super().add(entries)
            self._added = True

    with pytest.raises(RetrieverContractError) as caught:
        check_retriever(Frozen)
    assert any("two adds give" in v for v in caught.value.violations)


def test_the_contract_test_catches_a_search_many_that_is_not_search() -> None:
    """search_many must give exactly search's hits query by query: one that drops the last hit is named."""

    class Shortened(Minimal):
        label = "Shortened"

        def search_many(self, queries, k: int) -> list[list[Hit]]:
            return [self.search(q, k)[:-1] for q in queries]

    with pytest.raises(RetrieverContractError) as caught:
        check_retriever(Shortened)
    assert any("search_many(..., 5) gives" in v and "search gives" in v for v in caught.value.violations)


def test_search_many_of_a_bm25_subclass_with_its_own_search_is_that_search() -> None:
    """A subclass that changes search keeps search_many equal to it (BM25's batched scoring is not its search)."""

    class Reversed(BM25):
        def search(self, query, k: int) -> list[Hit]:
            hits = super().search(query, k)
            return [Hit(h.entry_id, -h.score, h.rank) for h in hits]

    r = Reversed()
    r.add([MemoryEntry("a", "lentil soup"), MemoryEntry("b", "lentil")])
    assert r.search_many(["lentil", "soup"], 2) == [r.search("lentil", 2), r.search("soup", 2)]
    assert r.search_many(["lentil"], 2)[0][0].score < 0


class _Removing(Minimal):
    """Minimal with remove(entry_ids): rebuilds its BM25 from the entries kept (``broken`` removes nothing)."""

    label = "Removing"
    broken = False

    def __init__(self) -> None:
        super().__init__()
        self._kept: list = []

    def add(self, entries) -> None:
        batch = list(entries)
        super().add(batch)
        self._kept += batch

    def remove(self, entry_ids) -> None:
        if self.broken:
            return
        self._kept = [e for e in self._kept if e.id not in set(entry_ids)]
        self._bm25 = BM25()
        self._bm25.add(self._kept)


def test_the_contract_test_checks_remove_when_a_retriever_has_it() -> None:
    """remove(ids) must leave a new retriever's hits over the entries left, and allow adding them again."""
    check_retriever(_Removing)
    broken = type("BrokenRemove", (_Removing,), {"broken": True, "label": "Broken remove"})
    with pytest.raises(RetrieverContractError) as caught:
        check_retriever(broken)
    assert any("after remove(['m01', 'm05', 'm07']) the hits are" in v for v in caught.value.violations)
    assert caught.value.violations[-1].startswith("adding the removed entries ['m01', 'm05', 'm07'] again raised")


@pytest.mark.parametrize(
    ("text", "index_key"),
    [
        ("bm25", "bm25"),
        ("bm25[k1=0.9,b=0.4]", "bm25"),
        ("tags", "tags"),
        ("dense", "dense"),
        ("dense[encoder=model2vec]", "dense[encoder=model2vec]"),
        ("hybrid", "hybrid"),
        ("hybrid[of=bm25+tags,method=convex,weights=0.3+0.7]", "hybrid[of=bm25+tags]"),
        ("hybrid[of=bm25[k1=0.9]+tags,depth=20]", "hybrid[of=bm25[k1=0.9]+tags]"),
        ("recency[decay=0.9,weights=1+2+1,depth=30]", "recency"),
        ("recency[base=tags]", "recency[base=tags]"),
    ],
)
def test_index_key_keeps_only_the_parameters_that_change_the_index(text: str, index_key: str) -> None:
    """index_params(): BM25 has none (k1 and b are scoring), hybrid its components, recency its base; dense and
    tags declare none, so only their own spec shares."""
    assert resolve_retriever(text).index_key == index_key


SHARED = synthetic_collection(seed=3, n_entries=400, n_queries=30, n_tags=12, vocabulary=120)


def _searches(retriever, k: int = 12) -> list:
    return [(retriever.search(q, k), retriever.score_all(q)) for q in SHARED.judged_queries]


@pytest.mark.parametrize("accel", ["off", "on"])
@pytest.mark.parametrize(
    ("owner", "other"),
    [
        ("bm25", "bm25[k1=0.7,b=0.3]"),
        ("bm25[k1=2.0]", "bm25[b=1.0]"),
        ("hybrid[of=bm25+tags]", "hybrid[of=bm25+tags,method=convex,weights=0.3+0.7]"),
        ("hybrid[of=bm25+tags]", "hybrid[of=bm25+tags,depth=20,rrf_k=5]"),
        ("recency", "recency[weights=1+2+0.5,decay=0.9]"),
        ("recency", "recency[depth=30]"),
    ],
)
def test_with_params_searches_as_a_new_retriever_with_those_parameters(owner, other, accel, monkeypatch) -> None:
    """A retriever made by share() (with_params) from a built one gives the hits, scores, score_all and params of
    one built from scratch with its parameters, bit for bit, on the NumPy and the compiled path."""
    monkeypatch.setenv("AGENTMEMORY_ACCEL", accel)
    owner_spec, spec = resolve_retriever(owner), resolve_retriever(other)
    built = owner_spec.new()
    built.add(SHARED.entries)
    before = _searches(built)
    view = spec.share(built, owner_spec)
    fresh = spec.new()
    fresh.add(SHARED.entries)
    assert _searches(view) == _searches(fresh)
    assert view.params() == fresh.params()
    assert _searches(built) == before
    if hasattr(view, "search_many"):  # the grouped search of a view is the fresh retriever's search too
        queries = list(SHARED.judged_queries)
        assert view.search_many(queries, 12) == [fresh.search(q, 12) for q in queries]


def test_a_bm25_with_other_parameters_is_independent_of_the_first() -> None:
    """BM25's with_params copies what add changes: entries added to either later do not reach the other."""
    first = BM25()
    first.add(SHARED.entries[:300])
    second = first.with_params({"k1": 0.5})
    second.add(SHARED.entries[300:])
    assert len(first) == 300 and len(second) == 400
    fresh = BM25(k1=0.5)
    fresh.add(SHARED.entries)
    query = SHARED.judged_queries[0]
    assert second.search(query, 10) == fresh.search(query, 10)
    alone = BM25()
    alone.add(SHARED.entries[:300])
    assert first.search(query, 10) == alone.search(query, 10)


def test_hybrid_fusions_share_their_components_runs(monkeypatch) -> None:
    """Two fusions of one hybrid ask each component once per query and depth; an add reaches both and runs
    them again; other components are refused."""
    from agentmemory.retrievers import hybrid as hybrid_module

    calls: list[str] = []
    real = hybrid_module.top_with_ties
    monkeypatch.setattr(hybrid_module, "top_with_ties", lambda r, q, d: calls.append(r.name) or real(r, q, d))
    first = make_retriever("hybrid[of=bm25+tags]")
    first.add(SHARED.entries[:300])
    second = first.with_params({"of": ["bm25", "tags"], "method": "convex"})
    query = SHARED.judged_queries[0]
    first.search(query, 5)
    second.search(query, 5)
    assert calls == ["bm25", "tags"]
    second.with_params({"of": ["bm25", "tags"], "depth": 10}).search(query, 5)
    assert len(calls) == 4  # another depth: other runs
    first.add(SHARED.entries[300:])
    assert len(second) == 400
    second.search(query, 5)
    assert len(calls) == 6
    with pytest.raises(ParameterError, match=r"^hybrid of: .* fuses other retrievers than this hybrid"):
        first.with_params({"of": ["bm25", "dense"]})


def test_recency_settings_share_one_base_and_take_no_more_entries() -> None:
    """A recency made by with_params shares the base and the entries' times, so neither takes new entries."""
    first = make_retriever("recency")
    first.add(SHARED.entries[:300])
    second = first.with_params({"decay": 0.9})
    assert second._base is first._base and second.label == "Recency (BM25; decay=0.9)"
    for retriever in (first, second):
        with pytest.raises(ParameterError, match=r"cannot be added: this recency shares its index with another"):
            retriever.add(SHARED.entries[300:])
    with pytest.raises(ParameterError, match=r"^recency base: 'tags' .* is another retriever than this recency"):
        first.with_params({"base": "tags"})
