"""MemoryStore: adding, deriving, searching, the event log, lineage, scopes and what it refuses.

Every test runs twice: on a store in memory and on a store in a SQLite file
(the ``make`` fixture), since both must behave identically.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from agentmemory import (
    HashIds,
    MemoryEntry,
    MemoryStore,
    ParameterError,
    Provenance,
    Query,
    SteppingClock,
    UnknownNameError,
)
from agentmemory.errors import PluginError, StoreError
from agentmemory.retrievers import BM25, RETRIEVERS, register_retriever
from agentmemory.store.backend import EntryVersion

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
SECOND = timedelta(seconds=1)


@pytest.fixture(params=["memory", "sqlite"])
def make(request, tmp_path):
    """A factory of stores of one backend: in memory, or each in a new SQLite file (closed after the test).

    The clock and id source are deterministic unless ``deterministic=False``.
    """
    made: list[MemoryStore] = []

    def factory(retrievers=None, *, deterministic: bool = True, **kwargs) -> MemoryStore:
        if deterministic:
            kwargs.setdefault("clock", SteppingClock(T0))
            kwargs.setdefault("ids", HashIds("store-test"))
        if request.param == "sqlite":
            kwargs["path"] = tmp_path / f"store-{len(made)}.db"
        store = MemoryStore(retrievers, **kwargs)
        made.append(store)
        return store

    factory.backend = request.param  # type: ignore[attr-defined]
    yield factory
    for store in made:
        store.close()


def entry(
    entry_id: str, text: str, tags: tuple[str, ...] = (), *, scope: str | None = None, derived_from=()
) -> MemoryEntry:
    return MemoryEntry(
        entry_id,
        text,
        tags,
        provenance=Provenance("conversation", f"chat#{entry_id}", "user", tuple(derived_from)),
        scope=scope,
    )


@pytest.fixture
def store(make) -> MemoryStore:
    s = make()
    s.add(
        [
            entry("m1", "Maya is vegetarian and eats lentils", ("diet", "food")),
            entry("m2", "standup meetings at 9:30", ("work", "meetings")),
            entry("m3", "lentil curry on Sundays", ("food",)),
        ]
    )
    return s


# -- adding -----------------------------------------------------------------


def test_add_batch_records_one_add_event_naming_all_in_order(store: MemoryStore) -> None:
    """Adding a batch stores every entry and records one 'add' event with their ids in order."""
    assert len(store) == 3
    assert [e.id for e in store] == ["m1", "m2", "m3"]
    assert "m2" in store and "m9" not in store
    [event] = list(store.log)
    assert (event.type, event.entry_ids, event.timestamp) == ("add", ("m1", "m2", "m3"), T0)
    assert event.event_id == HashIds("store-test")()


def test_add_single_entry(store: MemoryStore) -> None:
    """A single MemoryEntry can be added on its own; it is searchable at once."""
    store.add(entry("m4", "penicillin allergy"))
    assert store.log[-1].entry_ids == ("m4",)
    assert [h.entry_id for h in store.search("penicillin", k=3)] == ["m4"]


def test_get_returns_the_stored_entry(store: MemoryStore) -> None:
    """get returns the entry exactly as added."""
    assert store.get("m3") == entry("m3", "lentil curry on Sundays", ("food",))


def test_get_unknown_id_is_an_error(store: MemoryStore) -> None:
    """get of an id that is not stored names the id and says what to pass."""
    with pytest.raises(
        ParameterError, match=re.escape("entry_id: 'm9' (str) is not in the store; pass the id of a stored entry")
    ):
        store.get("m9")


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        (
            [entry("m1", "again")],
            "entry.id: 'm1' (str) is already in the store; every entry id must be unique",
        ),
        (
            [entry("n1", "one"), entry("n1", "two")],
            "entry.id: 'n1' (str) is already in the store; every entry id must be unique",
        ),
        (
            [entry("n1", "summary", derived_from=["m9"])],
            "provenance.derived_from: 'm9' (str) is not in the store; "
            "add source entries before the entries derived from them",
        ),
        (
            [entry("n2", "summary", derived_from=["n3"]), entry("n3", "source")],
            "provenance.derived_from: 'n3' (str) is not in the store; "
            "add source entries before the entries derived from them",
        ),
        (
            {"id": "n1", "text": "a dict"},
            "entries: {'id': 'n1', 'text': 'a dict'} (dict) is not a MemoryEntry; add agentmemory.MemoryEntry records",
        ),
        (
            [entry("n1", "fine"), "n2"],
            "entries: 'n2' (str) is not a MemoryEntry; add agentmemory.MemoryEntry records",
        ),
        (5, "entries: 5 (int) is not a MemoryEntry; add agentmemory.MemoryEntry records"),
    ],
)
def test_add_refuses_bad_batches_whole(store: MemoryStore, batch, message: str) -> None:
    """A batch with a duplicate id, an unknown source or a non-entry is refused whole: nothing added, no event."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        store.add(batch)
    assert [e.id for e in store] == ["m1", "m2", "m3"]
    assert len(store.log) == 1
    assert store.search("one two fine summary source", k=5) == []


def test_add_accepts_sources_earlier_in_the_same_batch(make) -> None:
    """An entry may be derived from an entry added before it in the same batch."""
    s = make()
    s.add([entry("a", "alpha"), entry("b", "beta", derived_from=["a"])])
    assert [e.id for e in s.lineage("b")] == ["a"]


# -- deriving ---------------------------------------------------------------


def test_derive_makes_a_derived_entry_and_records_it(store: MemoryStore) -> None:
    """derive adds an entry with source 'derived', derived_from the sources, the clock's time, and a 'derive' event."""
    new = store.derive(
        "s1", "vegetarian, cooks lentils", ["m1", "m3"], tags=("diet",), actor="assistant", ref="weekly/W05"
    )
    assert new == MemoryEntry(
        "s1",
        "vegetarian, cooks lentils",
        ("diet",),
        T0 + SECOND,
        Provenance("derived", "weekly/W05", "assistant", ("m1", "m3")),
    )
    assert store.get("s1") == new
    event = store.log[-1]
    assert (event.type, event.entry_ids) == ("derive", ("s1", "m1", "m3"))
    assert event.timestamp == new.created_at
    assert store.log.record("add", []).timestamp == T0 + 2 * SECOND  # derive read the clock once
    assert [h.entry_id for h in store.search(Query("q", "x", tags=("diet",)), k=5, retriever="tags")][0] == "s1"


@pytest.mark.parametrize(
    ("entry_id", "sources", "message"),
    [
        ("s1", [], "sources: [] (list) is empty; name at least one source entry id"),
        ("s1", ["m1", "m9"], "sources: 'm9' (str) is not in the store; derive only from stored entry ids"),
        ("m2", ["m1"], "entry.id: 'm2' (str) is already in the store; every entry id must be unique"),
    ],
)
def test_derive_refusals_leave_store_log_and_clock_alone(store: MemoryStore, entry_id, sources, message) -> None:
    """A refused derive adds nothing, records nothing and does not advance the clock."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        store.derive(entry_id, "text", sources)
    assert len(store) == 3
    assert len(store.log) == 1
    assert store.log.now() == T0 + SECOND


def test_derive_across_scopes_is_refused(make) -> None:
    """An entry cannot be derived from entries of different scopes."""
    s = make()
    s.add([entry("a", "alpha", scope="u1"), entry("b", "beta", scope="u2")])
    with pytest.raises(
        ParameterError,
        match=re.escape("sources: ['a', 'b'] (list) span several scopes; derive from entries of one scope"),
    ):
        s.derive("c", "gamma", ["a", "b"])


def test_derived_entry_takes_its_sources_scope(make) -> None:
    """A derived entry lives in its sources' scope and is found only there."""
    s = make()
    s.add([entry("a", "alpha", scope="u1")])
    s.derive("b", "beta summary", ["a"])
    assert s.get("b").scope == "u1"
    assert s.search(Query("q", "summary", scope="u1"), k=3) != []
    assert s.search("summary", k=3) == []


# -- lineage ------------------------------------------------------------------


def test_lineage_is_transitive_depth_first_each_once(make) -> None:
    """lineage walks derived_from depth-first in stated order, listing a shared ancestor once."""
    s = make()
    s.add([entry("a", "root one"), entry("b", "root two")])
    s.derive("c", "from a and b", ["a", "b"])
    s.derive("d", "from a", ["a"])
    s.derive("e", "from c and d", ["c", "d"])
    assert [x.id for x in s.lineage("e")] == ["c", "a", "b", "d"]
    assert [x.id for x in s.lineage("d")] == ["a"]
    assert s.lineage("a") == []
    assert s.describe("e")["lineage"] == ["c", "a", "b", "d"]
    assert s.describe("e")["provenance"]["derived_from"] == ["c", "d"]


def test_lineage_of_unknown_entry_is_an_error(store: MemoryStore) -> None:
    """lineage of an id that is not stored is refused with the id named."""
    with pytest.raises(ParameterError, match=re.escape("entry_id: 'zz' (str) is not in the store")):
        store.lineage("zz")


# -- searching ----------------------------------------------------------------


def test_search_records_a_retrieve_event(store: MemoryStore) -> None:
    """search returns ranked hits and records a 'retrieve' event with the hits, query id and retriever."""
    hits = store.search(Query("q1", "lentil lentils"), k=5)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert {h.entry_id for h in hits} == {"m1", "m3"}
    event = store.log[-1]
    assert event.type == "retrieve"
    assert event.entry_ids == tuple(h.entry_id for h in hits)
    assert (event.query_id, event.retriever, event.timestamp) == ("q1", "bm25", T0 + SECOND)


def test_search_with_plain_text_records_no_query_id(store: MemoryStore) -> None:
    """A plain-string query has no id: its event's query_id is None."""
    store.search("vegetarian", k=1, retriever="tags")
    assert (store.log[-1].query_id, store.log[-1].retriever) == (None, "tags")


def test_search_both_retrievers_on_tags(store: MemoryStore) -> None:
    """The tag retriever ranks by shared tags, ties by id descending; BM25 by words."""
    hits = store.search(Query("q", "what does she eat", tags=("food", "diet")), k=5, retriever="tags")
    assert [(h.entry_id, h.score) for h in hits] == [("m1", 2.0), ("m3", 1.0)]
    hits = store.search(Query("q", "food", tags=("food",)), k=5, retriever="tags")
    assert [h.entry_id for h in hits] == ["m3", "m1"]
    assert store.search("food", k=5, retriever="bm25") == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"k": 0}, ParameterError, "k: 0 (int) is less than 1; k must be an integer >= 1"),
        ({"k": "5"}, ParameterError, "k: '5' (str) is not an integer; k must be an integer >= 1"),
        ({"k": True}, ParameterError, "k: True (bool) is not an integer; k must be an integer >= 1"),
        (
            {"retriever": "splade"},
            UnknownNameError,
            "retriever: 'splade' (str) is not a known name; choose from: bm25, tags",  # the store's retrievers
        ),
    ],
)
def test_search_refuses_bad_parameters_and_records_nothing(store: MemoryStore, kwargs, error, message) -> None:
    """A search with a bad k or an unknown retriever is refused with the exact message, and logs nothing."""
    with pytest.raises(error, match=re.escape(message)):
        store.search("lentils", **kwargs)
    assert len(store.log) == 1


def test_search_refuses_a_query_that_is_not_text(store: MemoryStore) -> None:
    """A query must be a str or a Query."""
    with pytest.raises(
        ParameterError, match=re.escape("query: 5 (int) is neither a str nor an agentmemory.Query; pass the query text")
    ):
        store.search(5)


# -- retrievers and params ----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"retrievers": ["bm25", "splade"]},
            "retriever: 'splade' (str) is not a known name; choose from: " + ", ".join(sorted(RETRIEVERS)),
        ),
        (
            {"retrievers": ["bm25[k2=1]"]},
            "bm25 parameter: 'k2' (str) is not a known name; choose from: b, k1",
        ),
        ({"retrievers": "bm25[k1=-1]"}, "k1: -1 (int) is not a number >= 0; BM25 needs k1 >= 0 (default 1.2)"),
        (
            {"retrievers": "tags[x=1]"},
            "tags parameter: 'x' (str) is not accepted; the tags retriever takes no parameters",
        ),
        ({"retrievers": "bm25,bm25[k1=1.2]"}, "retrievers: 'bm25,bm25[k1=1.2]' (str) names the retriever 'BM25' twice"),
    ],
)
def test_store_refuses_unknown_retrievers_and_bad_params(make, kwargs, message: str) -> None:
    """Unknown retriever names and bad parameters are refused when the store is made, choices from the registry."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        make(deterministic=False, **kwargs)


def test_default_store_has_bm25_and_tags_whatever_is_registered(make) -> None:
    """Without a list, a store attaches bm25 and tags, even when other retrievers are registered."""
    register_retriever("test-extra", BM25)
    try:
        assert make(deterministic=False).retriever_names == ("bm25", "tags")
    finally:
        RETRIEVERS.unregister("test-extra")
    assert make("tags", deterministic=False).retriever_names == ("tags",)


def test_retriever_params_reach_the_retriever(make) -> None:
    """Parameters in a spec configure that retriever's instances in every scope; the key names the spec."""
    s = make(["bm25[k1=0.9,b=0.4]"], deterministic=False)
    assert s.retriever_names == ("bm25[k1=0.9,b=0.4]",)
    assert s.retriever("bm25[k1=0.9,b=0.4]").params()["k1"] == 0.9
    assert s.retriever("bm25[k1=0.9,b=0.4]", "other-scope").params()["b"] == 0.4


def test_a_retriever_instance_serves_one_scope_only(make) -> None:
    """An instance serves the first scope given entries; a second scope is refused with a message asking for a factory."""
    s = make([BM25()], deterministic=False)
    s.add([entry("a1", "Maya likes lentil curry", ("food",), scope="A")])
    assert [h.entry_id for h in s.search(Query("q", "lentil", scope="A"), retriever="bm25")] == ["a1"]
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "retrievers: 'bm25' (str) is a retriever instance, which can serve one scope only, and scope 'B' is a second "
            "one; pass a factory or a spec (a class, a registry name) so that each scope gets its own retriever"
        ),
    ):
        s.add([entry("b1", "Lena likes lentil soup", ("food",), scope="B")])


# -- scopes -------------------------------------------------------------------


@pytest.fixture
def scoped(make) -> MemoryStore:
    s = make()
    s.add(
        [
            entry("a1", "Maya likes lentil curry", ("food",), scope="A"),
            entry("b1", "Lena likes lentil soup", ("food",), scope="B"),
            entry("n1", "shared lentil note", ("food",)),
        ]
    )
    return s


@pytest.mark.parametrize(
    ("scope", "expected"),
    [("A", ["a1"]), ("B", ["b1"]), (None, ["n1"]), ("C", [])],
)
@pytest.mark.parametrize("retriever", ["bm25", "tags"])
def test_an_entry_is_found_only_by_queries_of_its_scope(scoped: MemoryStore, scope, expected, retriever) -> None:
    """An entry in scope A is not found by a query in scope B (or unscoped), for every retriever."""
    hits = scoped.search(Query("q", "lentil", tags=("food",), scope=scope), k=5, retriever=retriever)
    assert [h.entry_id for h in hits] == expected


@pytest.mark.parametrize("retriever", ["bm25", "tags"])
def test_search_all_without_records_gives_each_querys_search_in_order(scoped: MemoryStore, retriever) -> None:
    """search_all(record=False) hands runs of one scope to search_many where a retriever has it (BM25): the same
    (query, hits) pairs, in the order given, as search_all recording each query and as search itself."""
    queries = [
        Query(f"q{i}", text, tags=("food",), scope=scope)
        for i, (text, scope) in enumerate(
            [("lentil", "A"), ("lentil curry", "A"), ("soup", "B"), ("lentil", None), ("note", None), ("x", "A")]
        )
    ]
    quiet = list(scoped.search_all(queries, 3, retriever, record=False))
    assert [q for q, _ in quiet] == queries
    assert quiet == list(scoped.search_all(queries, 3, retriever, durations=[]))
    assert [hits for _, hits in quiet] == [scoped.search(q, 3, retriever) for q in queries]
    assert any(hits for _, hits in quiet)


def test_scopes_lists_scopes_with_entries(make, scoped: MemoryStore) -> None:
    """scopes lists None first, then the named scopes sorted."""
    assert scoped.scopes == (None, "A", "B")
    s = make()
    s.add(entry("x", "text", scope="Z"))
    assert s.scopes == ("Z",)


def test_statistics_are_per_scope(make, scoped: MemoryStore) -> None:
    """BM25 statistics (N, document frequency, avgdl) are per scope: a scope scores as a store of its own entries."""
    alone = make()
    alone.add(entry("a1", "Maya likes lentil curry", ("food",)))
    together = make()
    together.add([entry(e.id, e.text, e.tags) for e in scoped])
    score_in_scope = scoped.search(Query("q", "lentil", scope="A"), k=1)[0].score
    score_shared = {h.entry_id: h.score for h in together.search("lentil", k=3)}["a1"]
    assert score_in_scope == alone.search("lentil", k=1)[0].score
    assert score_in_scope != score_shared


# -- updates, forgetting and history -----------------------------------------------


def test_update_makes_a_new_version_that_retrieval_sees(store: MemoryStore) -> None:
    """update keeps the id, changes the text, stamps the clock's time, records an 'update' event; search sees only it."""
    new = store.update("m1", "Maya is vegan now and eats tofu", reason="she said so")
    assert new == MemoryEntry(
        "m1",
        "Maya is vegan now and eats tofu",
        ("diet", "food"),
        T0 + SECOND,
        Provenance("conversation", "chat#m1", "user"),
    )
    assert store.get("m1") == new and len(store) == 3
    assert [e.id for e in store] == ["m1", "m2", "m3"]  # an update keeps the entry's place
    event = store.log[-1]
    assert (event.type, event.entry_ids, event.timestamp) == ("update", ("m1",), T0 + SECOND)
    assert [h.entry_id for h in store.search("tofu", k=5)] == ["m1"]
    assert [h.entry_id for h in store.search("lentils", k=5)] == []  # the old text is gone from the index


def test_update_tags_only_keeps_the_text(store: MemoryStore) -> None:
    """update(tags=...) replaces the tags and keeps the text; the tag retriever sees the new tags."""
    new = store.update("m2", tags=("calendar",))
    assert (new.text, new.tags) == ("standup meetings at 9:30", ("calendar",))
    assert [h.entry_id for h in store.search(Query("q", "x", tags=("calendar",)), retriever="tags")] == ["m2"]
    assert store.search(Query("q", "x", tags=("work",)), retriever="tags") == []


def test_history_lists_every_version_with_what_it_supersedes(store: MemoryStore) -> None:
    """history: version 1 from the add event, each update superseding the one before, then the forget."""
    add_event = store.log[0]
    store.update("m1", "first change")
    store.update("m1", "second change", reason="corrected")
    store.forget("m1", reason="user asked")
    versions = store.history("m1")
    assert [(v.version, v.change, v.supersedes, v.reason) for v in versions] == [
        (1, "add", None, None),
        (2, "update", 1, None),
        (3, "update", 2, "corrected"),
        (4, "forget", 3, "user asked"),
    ]
    assert [v.entry.text for v in versions] == [
        "Maya is vegetarian and eats lentils",
        "first change",
        "second change",
        "second change",
    ]
    assert (versions[0].event_id, versions[0].timestamp) == (add_event.event_id, add_event.timestamp)
    assert [v.event_id for v in versions[1:]] == [e.event_id for e in list(store.log)[1:]]
    assert store.history("m2") == [EntryVersion(store.get("m2"), 1, "add", add_event.event_id, T0)]


def test_history_of_a_derived_entry_starts_with_derive(store: MemoryStore) -> None:
    """A derived entry's first version is its 'derive'."""
    store.derive("s1", "summary", ["m1"])
    [version] = store.history("s1")
    assert (version.change, version.entry, version.event_id) == ("derive", store.get("s1"), store.log[-1].event_id)


def test_forget_hides_an_entry_from_every_retriever(store: MemoryStore) -> None:
    """A forgotten entry is no longer stored, found, iterated or counted; a 'forget' event records it."""
    store.forget("m3", reason="outdated")
    event = store.log[-1]
    assert (event.type, event.entry_ids) == ("forget", ("m3",))
    assert "m3" not in store and len(store) == 2 and [e.id for e in store] == ["m1", "m2"]
    assert [h.entry_id for h in store.search("lentil curry", k=5)] == []
    assert [h.entry_id for h in store.search(Query("q", "x", tags=("food",)), retriever="tags")] == ["m1"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s.get("m3"),
            "entry_id: 'm3' (str) was forgotten; pass the id of a stored entry "
            "(history(entry_id) lists a forgotten entry's versions)",
        ),
        (lambda s: s.forget("m3"), "entry_id: 'm3' (str) was forgotten"),
        (lambda s: s.update("m3", "again"), "entry_id: 'm3' (str) was forgotten"),
        (
            lambda s: s.add(entry("m3", "new text")),
            "entry.id: 'm3' (str) was forgotten; every entry id must be unique: give the new entry a new id",
        ),
        (
            lambda s: s.derive("m3", "new text", ["m1"]),
            "entry.id: 'm3' (str) was forgotten; every entry id must be unique: give the new entry a new id",
        ),
    ],
)
def test_a_forgotten_id_is_gone_for_good(store: MemoryStore, call, message: str) -> None:
    """After forget, the id cannot be read, changed, forgotten again or used for a new entry; nothing is recorded."""
    store.forget("m3")
    before = len(store.log)
    with pytest.raises(ParameterError, match=re.escape(message)):
        call(store)
    assert len(store.log) == before


def test_forget_refuses_a_source_of_live_entries(store: MemoryStore) -> None:
    """An entry others are derived from cannot be forgotten before them (no lineage may break)."""
    store.derive("s1", "summary", ["m1", "m3"])
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "entry_id: 'm1' (str) is a source of 's1'; forget the entries derived from it first, "
            "so that no lineage breaks"
        ),
    ):
        store.forget("m1")
    store.forget("s1")
    store.forget("m1")
    assert [e.id for e in store] == ["m2", "m3"]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("m9", "x"), {}, "entry_id: 'm9' (str) is not in the store; pass the id of a stored entry"),
        (("m1",), {}, "update: 'm1' (str) changes nothing; pass text=... and/or tags=..."),
        (("m1", 5), {}, "text: 5 (int) is not a str; pass the new text of the entry"),
        (("m1",), {"tags": "diet"}, "tags: 'diet' (str) is not a sequence of strings; pass e.g. tags=('diet', 'food')"),
        (("m1", "x"), {"reason": 3}, "reason: 3 (int) is not a str; say why in words, or leave it out"),
    ],
)
def test_update_refusals_change_and_record_nothing(store: MemoryStore, args, kwargs, message: str) -> None:
    """A refused update leaves the entry, the log and the clock alone."""
    with pytest.raises(ParameterError, match=re.escape(message)):
        store.update(*args, **kwargs)
    assert store.get("m1").text == "Maya is vegetarian and eats lentils"
    assert len(store.log) == 1
    assert store.log.now() == T0 + SECOND


def test_history_of_an_unknown_id_is_an_error(store: MemoryStore) -> None:
    """history of an id the store never held is refused with the id named."""
    with pytest.raises(ParameterError, match=re.escape("entry_id: 'zz' (str) is not in the store")):
        store.history("zz")


def test_an_updated_scoped_entry_stays_in_its_scope(scoped: MemoryStore) -> None:
    """update keeps the scope: the new version is found in its scope only."""
    scoped.update("a1", "Maya likes chickpea stew")
    assert [h.entry_id for h in scoped.search(Query("q", "chickpea", scope="A"))] == ["a1"]
    assert scoped.search(Query("q", "chickpea", scope="B")) == []
    assert [h.entry_id for h in scoped.search(Query("q", "lentil", scope="B"))] == ["b1"]


def _ranked(store: MemoryStore, queries: list[Query], retriever: str) -> list[list[tuple[str, float]]]:
    return [[(h.entry_id, h.score) for h in store.retriever(retriever, q.scope).search(q, 10)] for q in queries]


def test_changes_leave_the_same_rankings_as_a_store_built_from_the_final_entries(make) -> None:
    """After adds, updates and forgets, every ranking (ids and scores) equals a new store's over the entries left."""
    s = make()
    s.add([entry(f"e{i}", f"note {i} about lentil curry {'soup ' * (i % 3)}", ("food",) * (i % 2)) for i in range(12)])
    s.search("lentil", k=3)  # builds nothing lazily, but searches before the changes too
    s.update("e3", "now about chickpeas", tags=("legumes",))
    s.forget("e5")
    s.add(entry("x1", "lentil soup again", ("food",)))
    s.update("e7", "curry curry curry")
    s.forget("e0")
    fresh = MemoryStore()
    fresh.add(list(s))
    queries = [
        Query("q", t, tags=tg) for t, tg in [("lentil", ("food",)), ("curry soup", None), ("chickpeas", ("legumes",))]
    ]
    for retriever in ("bm25", "tags"):
        assert _ranked(s, queries, retriever) == _ranked(fresh, queries, retriever)


class Removable(BM25):
    """BM25 that can remove entries (by rebuilding itself), counting calls: the optional remove capability."""

    name = "removable"
    label = "Removable"
    removed: list[list[str]] = []

    def __init__(self) -> None:
        super().__init__()
        self._kept: list[MemoryEntry] = []

    def add(self, entries) -> None:
        batch = list(entries)
        super().add(batch)
        self._kept.extend(batch)

    def remove(self, entry_ids) -> None:
        Removable.removed.append(list(entry_ids))
        keep = [e for e in self._kept if e.id not in set(entry_ids)]
        BM25.__init__(self)
        self._kept = []
        self.add(keep)


def test_a_retriever_with_remove_is_updated_in_place_others_are_rebuilt(make) -> None:
    """update and forget call remove(ids) on a retriever that has it (same object); one without is rebuilt."""
    Removable.removed = []
    s = make([Removable, "bm25"])
    s.add([entry("a", "lentil curry"), entry("b", "lentil soup"), entry("c", "tofu")])
    keep, plain = s.retriever("removable"), s.retriever("bm25")
    s.update("a", "chickpea curry")
    s.forget("c")
    assert Removable.removed == [["a"], ["c"]]
    assert s.retriever("removable") is keep
    assert s.retriever("bm25") is not plain  # rebuilt before its next use
    for name in ("removable", "bm25"):
        assert [h.entry_id for h in s.search("lentil curry", k=5, retriever=name)] == ["b", "a"]


def test_a_retriever_instance_without_remove_refuses_update(make) -> None:
    """A shared instance cannot be rebuilt: update and forget are refused, saying to pass a factory."""
    s = make([BM25()], deterministic=False)
    s.add(entry("a", "text"))
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "retrievers: 'bm25' (str) is a retriever instance without remove(entry_ids), which cannot be rebuilt "
            "after an update; pass a factory or a spec"
        ),
    ):
        s.update("a", "new")
    assert s.get("a").text == "text"


class Failing(BM25):
    """BM25 that refuses entries whose text contains 'boom' (a retriever failing halfway through a batch)."""

    name = "failing"
    label = "Failing"

    def add(self, entries) -> None:
        batch = list(entries)
        if any("boom" in e.text for e in batch):
            raise RuntimeError("boom")
        super().add(batch)


def test_a_failing_retriever_leaves_nothing_half_done(make) -> None:
    """When one retriever fails on a batch, the add raises, records nothing, and the others forget the batch too."""
    s = make(["bm25", Failing])
    s.add(entry("a", "lentil curry"))
    with pytest.raises(PluginError, match="add raised RuntimeError: boom$"):  # a plugin: behind the boundary
        s.add([entry("b", "lentil soup"), entry("c", "boom lentil")])
    assert [e.id for e in s] == ["a"] and len(s.log) == 1
    assert [h.entry_id for h in s.search("lentil", retriever="bm25")] == ["a"]
    assert [h.entry_id for h in s.search("lentil", retriever="failing")] == ["a"]


def test_a_closed_store_refuses_everything(make) -> None:
    """After close (or leaving a with block) every change and search is refused with a one-line StoreError."""
    with make() as s:
        s.add(entry("a", "text"))
    assert s.closed
    for call in (lambda: s.add(entry("b", "x")), lambda: s.search("text"), lambda: s.forget("a")):
        with pytest.raises(StoreError, match="is closed; "):
            call()
    s.close()  # idempotent


def test_readonly_needs_a_path() -> None:
    """readonly=True without a path is refused: there is nothing to read."""
    with pytest.raises(
        ParameterError, match=re.escape("readonly: True (bool) needs a path; open a store file read-only: path=...")
    ):
        MemoryStore(readonly=True)


def test_attach_serves_other_scoring_parameters_from_the_same_index_and_detach_takes_it_out():
    """A BM25 attached like another one searches as a store built with it, in every scope, without indexing
    again; detached, it is gone and the first one stays; a spec of another index is refused."""
    entries = [
        MemoryEntry("a1", "lentil soup with cumin", scope="a"),
        MemoryEntry("a2", "lentil curry and rice rice", scope="a"),
        MemoryEntry("b1", "marathon training plan", scope="b"),
        MemoryEntry("b2", "training for a marathon in spring, marathon pace", scope="b"),
    ]
    store = MemoryStore(["bm25"])
    store.add(entries)
    fresh = MemoryStore(["bm25[k1=0.5,b=0.2]"])
    fresh.add(entries)
    spec = store.attach("bm25[k1=0.5,b=0.2]", like="bm25")
    assert spec.key == "bm25[k1=0.5,b=0.2]" and store.retriever_names == ("bm25", spec.key)
    for text, scope in (("lentil rice", "a"), ("marathon training", "b")):
        query = Query("q", text, scope=scope)
        assert store.search(query, 2, spec.key) == fresh.search(query, 2, spec.key)
    assert store.index_seconds(spec.key) == 0.0
    store.detach(spec.key)
    assert store.retriever_names == ("bm25",)
    with pytest.raises(UnknownNameError):
        store.retriever(spec.key, "a")
    with pytest.raises(ParameterError, match=r"does not share its index with 'bm25'"):
        store.attach("tags", like="bm25")
    with pytest.raises(ParameterError, match="is attached already"):
        store.attach("bm25", like="bm25")
