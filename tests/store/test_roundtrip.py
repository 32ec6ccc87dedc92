"""Every store the library accepts exports as a collection folder that loads back to the same entries.

Two halves: each kind of store the suite builds (both backends; every fixture
collection; a store changed by derive, update and forget), and a Hypothesis
round trip over generated entries, queries and judgments.  "The same" is
equality of ``MemoryEntry`` records, except that a tuple in metadata comes
back as a list (JSON has one kind of array; an in-memory store accepts
tuples, a store file refuses them).
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_DIR, REPO_ROOT
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentmemory import HashIds, MemoryEntry, MemoryStore, ParameterError, Provenance, Query, SteppingClock
from agentmemory.collection import Collection
from agentmemory.datasets import load
from agentmemory.datasets.beir import load_collection
from agentmemory.store.transfer import export_collection, import_collection, store_collection

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
FIXTURES = REPO_ROOT / "fixtures"
COLLECTIONS = {
    "assistant-notes": FIXTURE_DIR,
    "beir-sample": FIXTURES / "beir-sample",
    "locomo-sample": FIXTURES / "locomo-sample" / "locomo-sample.json",
    "longmemeval-sample": FIXTURES / "longmemeval-sample" / "longmemeval-sample.json",
    "beam-sample": FIXTURES / "beam-sample",
}


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists), for comparing metadata."""
    return json.loads(json.dumps(value))


def _entries(entries: Any) -> dict[str, MemoryEntry]:
    """Entries by id, their metadata as JSON gives it back (times compare as instants, as records do)."""
    return {e.id: replace(e, metadata=_plain(dict(e.metadata))) for e in entries}


def _store(kind: str, folder: Path, name: str = "s") -> MemoryStore:
    path = folder / f"{name}.db" if kind == "sqlite" else None
    return MemoryStore(path=path, clock=SteppingClock(T0), ids=HashIds(f"roundtrip-{name}"))


def _assert_round_trip(store: MemoryStore, folder: Path) -> Collection:
    """Export ``store`` to ``folder``, load it back; the entries, queries and judgments are the store's."""
    export_collection(store, folder)
    back = load_collection(folder)
    held = store_collection(store)
    assert _entries(back.entries) == _entries(held.entries)
    assert [e.id for e in back.entries] == [e.id for e in held.entries]
    assert [replace(q, metadata=_plain(dict(q.metadata))) for q in back.queries] == [
        replace(q, metadata=_plain(dict(q.metadata))) for q in held.queries
    ]
    assert {q: dict(j) for q, j in back.qrels.items()} == {q: dict(j) for q, j in held.qrels.items()}
    return back


def _changed(store: MemoryStore) -> None:
    """Derive, update and forget in ``store``: versions, lineage, scopes and metadata all at once."""
    store.add(
        [
            MemoryEntry("a", "Maya is vegetarian", ("diet",), T0, Provenance("conversation", "chat#1", "user")),
            MemoryEntry("b", "Maya likes tofu", scope="maya", metadata={"score": 0.5, "seen": [1, 2], "ok": True}),
            MemoryEntry("c", "a note to forget"),
            MemoryEntry("d", "Maya's second note", scope="maya"),
        ]
    )
    store.derive("s", "Maya eats no meat and likes tofu", ["b", "d"], tags=("summary",), actor="agent")
    store.update("a", "Maya is vegan now", tags=("diet", "vegan"), reason="she said so")
    store.forget("c", reason="wrong")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("source", sorted(COLLECTIONS))
def test_every_fixture_collection_in_either_store_exports_and_loads_back(tmp_path, kind, source) -> None:
    """Each fixture collection (every format's sample) imported into a store exports to a folder whose entries,
    queries and judgments are the store's: what the loaders produce, a store file keeps exactly."""
    collection = load(COLLECTIONS[source])
    store = _store(kind, tmp_path)
    with store:
        import_collection(store, collection)
        assert len(store) == len(collection.entries)
        _assert_round_trip(store, tmp_path / "out")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_changed_store_exports_its_newest_versions_and_loads_back(tmp_path, kind) -> None:
    """A store after derive, update and forget exports its live entries at their newest versions, in order;
    loaded into a new store and exported again, the folder is byte-identical."""
    with _store(kind, tmp_path) as store:
        _changed(store)
        back = _assert_round_trip(store, tmp_path / "one")
        assert [e.id for e in back.entries] == ["a", "b", "d", "s"]
        assert back.entries[0].text == "Maya is vegan now"
        with _store(kind, tmp_path, "again") as again:
            import_collection(again, back)
            export_collection(again, tmp_path / "two")
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


class _Text(str):
    """A str subclass: the bulk check hands it to json_problem itself."""


JSON_CASES = [
    {"session": "s1", "turn": 3, "answer": True, "score": 0.5, "none": None},
    {"nested": {"list": [1, "two", [3.0, None]], "t": (1, 2)}},
    {"weight": math.nan},
    {"deep": [{"x": [math.inf]}]},
    {1: "int key"},
    {"text": "lone \ud800 surrogate"},
    {"lone \udc00 key": 1},
    {"set": {1, 2}},
    {"bytes": b"x"},
    {"sub": _Text("fine")},
    {"sub": [_Text("bad \ud800")]},
    {"tuple": (1, math.nan)},
]


@pytest.mark.parametrize("tuples", [True, False])
@pytest.mark.parametrize("value", JSON_CASES, ids=range(len(JSON_CASES)))
def test_the_bulk_metadata_check_agrees_with_json_problem(value, tuples) -> None:
    """json_clean(value) is exactly ``json_problem(value) is None``, with and without tuples passing as lists."""
    from agentmemory.store.backend import json_clean, json_problem

    assert json_clean(value, tuples=tuples) is (json_problem(value, "metadata", tuples=tuples) is None)


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (
            {"weight": math.nan},
            "entry 'm2' metadata: {'weight': nan} (dict) cannot be kept exactly: metadata['weight'] is nan",
        ),
        ({"scope": "x"}, "entry 'm2' metadata: 'scope' (str) is a reserved field name"),
    ],
)
def test_a_batch_of_columns_with_bad_metadata_is_refused_as_records_are(metadata, expected) -> None:
    """A batch of columns (a loaded collection's entries) whose metadata an export could not carry, or that takes
    a reserved key, is refused with the records' message, naming the entry; nothing is added."""
    from agentmemory.collection.columns import Entries

    entries = Entries.of(
        [MemoryEntry("m1", "fine", metadata={"session": "s1"}), MemoryEntry("m2", "x", metadata=metadata)]
    )
    store = MemoryStore()
    with pytest.raises(ParameterError) as caught:
        store.add(entries)
    assert str(caught.value).startswith(expected)
    assert len(store) == 0
    store.add(Entries.of([MemoryEntry("m1", "fine", metadata={"session": "s1", "turns": [1, 2]})]))
    assert store.get("m1").metadata == {"session": "s1", "turns": [1, 2]}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize(
    ("value", "shown"),
    [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf"), ([1.0, math.nan], "nan")],
)
def test_metadata_an_export_cannot_carry_is_refused_at_add_in_one_line(tmp_path, kind, value, shown) -> None:
    """NaN and infinities in metadata (strict JSON has neither; the export would not load) are refused by add,
    naming the entry, the key and the value; nothing is added."""
    with _store(kind, tmp_path) as store:
        with pytest.raises(ParameterError) as caught:
            store.add([MemoryEntry("ok", "fine"), MemoryEntry("m1", "x", metadata={"weight": value})])
        message = str(caught.value)
        assert message.startswith("entry 'm1' metadata: {'weight': ")
        where = "metadata['weight'][1]" if isinstance(value, list) else "metadata['weight']"
        assert f"cannot be kept exactly: {where} is {shown}, which JSON cannot carry; " in message
        assert message.endswith("use dicts with string keys, lists, strings, finite numbers, booleans and None")
        assert "\n" not in message and len(store) == 0


def test_a_reserved_metadata_key_is_refused_at_add() -> None:
    """A metadata key the collection format reads as a field (``title``) would not come back as metadata: refused."""
    with pytest.raises(ParameterError, match=r"^entry 'm1' metadata: 'title' \(str\) is a reserved field name; "):
        MemoryStore().add(MemoryEntry("m1", "x", metadata={"title": "t"}))


# -- Hypothesis: any store the library accepts -------------------------------------------------------------

_IDS = ("m1", "m2", "m3", "é4", "日本", "doc-1", "doc_1", "Z")
_TEXT = st.text(max_size=30)
_NAME = st.text(min_size=1, max_size=8)
_JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(),  # NaN and infinities included: the store must refuse them or carry them
    _TEXT,
)
_METADATA_VALUES = st.recursive(
    _JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(_NAME, inner, max_size=3)
    ),
    max_leaves=6,
)
_TIMES = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.sampled_from([timezone.utc, None])
).map(lambda t: t if t.tzinfo else t.replace(tzinfo=timezone(timedelta(hours=5, minutes=30))))


@st.composite
def _collections(draw: st.DrawFn) -> tuple[list[MemoryEntry], list[Query], dict[str, dict[str, int]]]:
    ids = draw(st.lists(st.sampled_from(_IDS), unique=True, min_size=1, max_size=6))
    scopes = draw(st.lists(st.one_of(st.none(), st.sampled_from(["u1", "ü2"])), min_size=len(ids), max_size=len(ids)))
    entries: list[MemoryEntry] = []
    for i, entry_id in enumerate(ids):
        earlier = [e.id for e in entries if e.scope == scopes[i]]
        derived = tuple(draw(st.lists(st.sampled_from(earlier), unique=True, max_size=2))) if earlier else ()
        entries.append(
            MemoryEntry(
                id=entry_id,
                text=draw(_TEXT),
                tags=tuple(draw(st.lists(_NAME, max_size=3))),
                created_at=draw(st.one_of(st.none(), _TIMES)),
                provenance=Provenance(
                    source="derived" if derived else draw(st.sampled_from(["conversation", "document", "unknown"])),
                    ref=draw(st.one_of(st.none(), _NAME)),
                    actor=draw(st.one_of(st.none(), _NAME)),
                    derived_from=derived,
                ),
                scope=scopes[i],
                metadata=draw(st.dictionaries(st.sampled_from(["w", "note", "ü", "n"]), _METADATA_VALUES, max_size=3)),
            )
        )
    queries = [
        Query(
            qid,
            draw(_TEXT),
            tags=draw(st.one_of(st.none(), st.lists(_NAME, max_size=2).map(tuple))),
            scope=draw(st.one_of(st.none(), st.sampled_from(["u1", "ü2"]))),
            group=draw(st.one_of(st.none(), _NAME)),
            asked_at=draw(st.one_of(st.none(), _TIMES)),
        )
        for qid in draw(st.lists(st.sampled_from(["q1", "q2", "Q3"]), unique=True, max_size=3))
    ]
    qrels = {
        q.id: draw(st.dictionaries(st.sampled_from(ids), st.integers(-1, 3), min_size=1, max_size=3))
        for q in queries
        if draw(st.booleans())
    }
    return entries, queries, qrels


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_collections(), kind=st.sampled_from(["memory", "sqlite"]))
def test_any_store_the_library_accepts_exports_and_loads_back_to_the_same_entries(data, kind) -> None:
    """Generated entries (metadata with NaN, infinities and tuples included), queries and judgments: whatever a
    store accepts, it exports to a folder that loads back to the same entries, queries and judgments; what it
    refuses, it refuses in one line, keeping nothing."""
    entries, queries, qrels = data
    collection = Collection(name="generated", entries=tuple(entries), queries=tuple(queries), qrels=qrels, files={})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with _store(kind, folder) as store:
            try:
                import_collection(store, collection)
            except ParameterError as err:
                assert "\n" not in str(err) and len(store) == 0
                assume(False)
            _assert_round_trip(store, folder / "out")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
def test_a_text_with_a_unicode_line_separator_exports_and_loads_back(tmp_path, kind, char) -> None:
    """U+2028, U+2029 and U+0085 are written unescaped inside JSON strings; the reader does not end a line there
    (it used to, and the exported corpus.jsonl then failed to load: "Unterminated string")."""
    with _store(kind, tmp_path) as store:
        store.add(MemoryEntry("m1", f"one{char}two", metadata={"note": f"a{char}b"}))
        back = _assert_round_trip(store, tmp_path / "out")
    assert back.entries[0].text == f"one{char}two"


def test_values_set_reads_a_field_from_the_columns() -> None:
    """Entries.values_set gives the values of the entries that set a field, in row order, for a sparse column, a
    dense one and an absent one, without making records; a value of another type than the default's counts."""
    from agentmemory.collection.columns import Entries

    t1, t2 = T0 + timedelta(days=1), T0 + timedelta(days=2)
    sparse = Entries.of([MemoryEntry("a", "x"), MemoryEntry("b", "y", created_at=t2), MemoryEntry("c", "z")])
    dense = Entries.of([MemoryEntry("a", "x", created_at=t1), MemoryEntry("b", "y", created_at=t2)])
    assert sparse.values_set("created_at") == [t2]
    assert dense.values_set("created_at") == [t1, t2]
    assert dense.values_set("scope") == []
    assert sparse.values_set("metadata") == []
    with pytest.raises(KeyError):
        sparse.values_set("colour")


def _layered_entries(base_values: list, own_roles: tuple = ("user", "assistant")):
    """Four entries over two shared mappings, each row adding its turn and role (a loader's layered metadata)."""
    import numpy as np

    from agentmemory.collection.columns import Codes, Entries, Layered, TextList

    sessions = np.array([0, 0, 1, 1], dtype=np.int32)
    metadata = Layered(
        Codes(sessions, base_values),
        {
            "turn": Codes(np.array([1, 2, 1, 2], dtype=np.int32), range(3)),
            "role": Codes(np.array([0, 1, 0, 1], dtype=np.int32), own_roles),
        },
    )
    return Entries(["a", "b", "c", "d"], TextList(["w x", "y", "z w", "v"]), metadata=metadata)


def test_a_layered_metadata_column_gives_each_row_its_shared_mapping_and_own_fields() -> None:
    """Row i of a Layered column is its shared mapping followed by its own fields (a mapping equal to that dict,
    keys in that order), alone, in runs, taken, and as the records a store keeps."""
    from types import MappingProxyType

    shared = [MappingProxyType({"session": "s1", "n": 0}), MappingProxyType({"session": "s2", "n": 1})]
    entries = _layered_entries(shared)
    expected = [
        {"session": "s1", "n": 0, "turn": 1, "role": "user"},
        {"session": "s1", "n": 0, "turn": 2, "role": "assistant"},
        {"session": "s2", "n": 1, "turn": 1, "role": "user"},
        {"session": "s2", "n": 1, "turn": 2, "role": "assistant"},
    ]
    assert [dict(e.metadata) for e in entries] == expected
    assert [list(e.metadata) for e in entries] == [list(m) for m in expected]
    assert dict(entries[3].metadata) == expected[3]
    import numpy as np

    assert [dict(e.metadata) for e in entries.take(np.array([1, 2]))] == expected[1:3]
    store = MemoryStore()
    store.add(entries)
    assert [dict(store.get(i).metadata) for i in "abcd"] == expected
    checked = list(entries.metadata_checks())  # each shared mapping once, each own value once: 2 + 2 + 2
    assert len(checked) == 6
    assert {row for row, _ in checked} <= {0, 1, 2}


@pytest.mark.parametrize(
    ("base", "roles", "expected"),
    [
        (
            [{"session": "s1"}, {"session": "s2", "w": math.nan}],
            ("user", "assistant"),
            "entry 'c' metadata: {'session': 's2', 'w': nan, 'turn': 1, 'role': 'user'} (dict) cannot be kept exactly: "
            "metadata['w'] is nan",
        ),
        (
            [{"session": "s1"}, {"scope": "x"}],
            ("user", "assistant"),
            "entry 'c' metadata: 'scope' (str) is a reserved field name",
        ),
        (
            [{"session": "s1"}, {"session": "s2"}],
            ("user", "bad \ud800"),
            "entry 'b' metadata: {'session': 's1', 'turn': 2, 'role': 'bad \\ud800'} (dict) cannot be kept exactly: "
            "metadata['role'] is text that is not valid Unicode",
        ),
    ],
)
def test_a_layered_column_with_bad_shared_or_own_metadata_is_refused_naming_an_entry(base, roles, expected) -> None:
    """The bulk check of a layered column looks at each shared mapping and own value once, yet refuses a bad one
    as a record's check would, naming an entry that holds it; nothing is added."""
    store = MemoryStore()
    with pytest.raises(ParameterError) as caught:
        store.add(_layered_entries(base, roles))
    assert str(caught.value).startswith(expected), str(caught.value)
    assert len(store) == 0


def test_distinct_values_of_a_field_cover_every_row_and_its_default() -> None:
    """Entries.distinct: what a check of every row's value must look at, by column kind (the store's check that no
    entry is derived reads it instead of every row's provenance)."""
    from agentmemory.collection.columns import Entries
    from agentmemory.records import UNKNOWN_PROVENANCE, Provenance

    p = Provenance(source="conversation", ref="s1")
    dense = Entries.of([MemoryEntry(f"e{i}", "x", provenance=p) for i in range(4)])
    assert dense.distinct("provenance") == [p]
    sparse = Entries.of([MemoryEntry("a", "x", provenance=p)] + [MemoryEntry(f"e{i}", "x") for i in range(6)])
    assert sparse.distinct("provenance") == [p, UNKNOWN_PROVENANCE]
    assert Entries.of([MemoryEntry("a", "x")]).distinct("provenance") == [UNKNOWN_PROVENANCE]
    assert Entries.of([MemoryEntry("a", "x", scope="s"), MemoryEntry("b", "y")]).distinct("scope") == ["s", None]
    derived = Provenance(source="summary", derived_from=("a",))
    batch = Entries.of([MemoryEntry("a", "x"), MemoryEntry("b", "sum of a", provenance=derived)])
    store = MemoryStore()
    store.add(batch)  # derived from an entry of its own batch: added as records, in order
    assert store.get("b").provenance == derived


def test_scope_ids_of_many_scopes_are_made_per_scope_and_equal_the_sets() -> None:
    """A collection of columns in several scopes gives each scope's ids when asked (not every set at once): the
    same sets as the records give, every scope listed, an unknown scope absent."""
    from agentmemory.collection import Collection
    from agentmemory.collection.columns import Entries

    records = [MemoryEntry(f"e{i}", "x", scope=f"s{i % 3}") for i in range(10)]
    columns = Collection(name="c", entries=Entries.of(records), queries=(), qrels={}, files={})
    listed = Collection(name="c", entries=tuple(records), queries=(), qrels={}, files={})
    assert dict(columns.scope_ids) == dict(listed.scope_ids)
    assert set(columns.scope_ids) == {"s0", "s1", "s2"}
    assert "s3" not in columns.scope_ids
    assert columns.scope_ids.get("s3") is None
    assert columns.scope_ids["s1"] == frozenset({"e1", "e4", "e7"})
