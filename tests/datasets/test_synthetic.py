"""Synthetic collections: deterministic by seed, shaped by their parameters, round-tripping through the loader."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmemory.datasets.beir import load_collection, write_collection
from agentmemory.datasets.synthetic import synthetic_collection
from agentmemory.errors import ParameterError, check_seed
from agentmemory.evaluation.runner import evaluate
from agentmemory.tokenize import tokenize


def plain(collection):
    """Everything a collection holds, as comparable plain data."""
    return (
        collection.name,
        collection.entries,
        collection.queries,
        {q: dict(d) for q, d in collection.qrels.items()},
        dict(collection.files),
    )


def test_same_seed_same_collection():
    """Two calls with the same seed and parameters build equal collections with equal digests."""
    assert plain(synthetic_collection(seed=3)) == plain(synthetic_collection(seed=3))


def test_different_seed_different_collection():
    """Another seed gives other texts and another digest."""
    a, b = synthetic_collection(seed=3), synthetic_collection(seed=4)
    assert [e.text for e in a.entries] != [e.text for e in b.entries]
    assert a.digest != b.digest


def test_relevance_does_not_follow_id_order():
    """Entries are shuffled before numbering: relevant entries are not simply the first ids."""
    first_ids = []
    for seed in range(5):
        c = synthetic_collection(seed=seed)
        relevant = sorted(e for judged in c.qrels.values() for e in judged)
        first_ids.append(relevant == [e.id for e in c.entries[: len(relevant)]])
    assert not all(first_ids)


def test_name_and_files():
    """The name carries seed and size; files holds the sha256 of the canonical serialisation."""
    collection = synthetic_collection(seed=9, n_entries=20)
    assert collection.name == "synthetic-seed9-n20"
    assert list(collection.files) == ["synthetic.json"]
    assert len(collection.files["synthetic.json"]) == 64
    assert (
        collection.digest
        == hashlib.sha256(f"synthetic.json  {collection.files['synthetic.json']}\n".encode()).hexdigest()
    )


def test_parameters_change_the_digest():
    """The digest covers the content: another mismatch rate gives another digest."""
    assert (
        synthetic_collection(seed=1, mismatch_rate=0.0).digest != synthetic_collection(seed=1, mismatch_rate=1.0).digest
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_queries=st.integers(1, 6),
    rel=st.tuples(st.integers(1, 3), st.integers(0, 2)).map(lambda t: (t[0], t[0] + t[1])),
    tags=st.tuples(st.integers(1, 2), st.integers(0, 2)).map(lambda t: (t[0], t[0] + t[1])),
    length=st.tuples(st.integers(2, 6), st.integers(0, 6)).map(lambda t: (t[0], t[0] + t[1])),
    extra=st.integers(0, 10),
    mismatch_rate=st.floats(0, 1),
)
def test_structure(seed, n_queries, rel, tags, length, extra, mismatch_rate):
    """Sizes, ranges, one owner per relevant entry, and the word-sharing rule hold for any parameters."""
    n_entries = n_queries * rel[1] + extra
    c = synthetic_collection(
        seed=seed,
        n_entries=n_entries,
        n_queries=n_queries,
        n_tags=6,
        vocabulary=40,
        mismatch_rate=mismatch_rate,
        relevant_per_query=rel,
        tags_per_entry=tags,
        entry_length=length,
    )
    assert len(c.entries) == n_entries and len(c.queries) == n_queries
    assert [e.id for e in c.entries] == sorted(e.id for e in c.entries)
    owners = {}
    for q in c.queries:
        judged = c.qrels[q.id]
        assert rel[0] <= len(judged) <= rel[1]
        assert set(judged.values()) == {1}
        for eid in judged:
            assert eid not in owners
            owners[eid] = q.id
    for e in c.entries:
        assert tags[0] <= len(e.tags) <= tags[1]
        assert length[0] <= len(tokenize(e.text)) <= length[1]
    by_id = {q.id: q for q in c.queries}
    for eid, qid in owners.items():
        entry, query = c.entry(eid), by_id[qid]
        assert entry.metadata["relevant_to"] == qid
        assert set(entry.tags) & set(query.tags), "a relevant entry shares a tag with its query"
        shares_words = bool(set(tokenize(entry.text)) & set(tokenize(query.text)))
        assert shares_words == (not entry.metadata["mismatch"])
    assert sum(1 for e in c.entries if e.metadata) == len(owners)


def test_mismatch_rate_controls_bm25_recall():
    """mismatch_rate=1 leaves BM25 nothing to match (R@5 = 0 on every seed); mismatch_rate=0 finds most."""
    for seed in range(5):
        full = evaluate(synthetic_collection(seed=seed, mismatch_rate=1.0), ["bm25", "tags"], k=5)
        assert full.result("bm25").means["R@5"] == 0.0
        assert full.result("tags").means["R@5"] > 0.0
        none = evaluate(synthetic_collection(seed=seed, mismatch_rate=0.0), ["bm25"], k=5)
        assert none.result("bm25").means["R@5"] >= 0.6


def test_write_and_load_round_trip(tmp_path):
    """write_collection writes a folder load_collection reads back to equal entries, queries and qrels."""
    collection = synthetic_collection(seed=5, n_entries=12, n_queries=4)
    files = write_collection(collection, tmp_path / "synthetic")
    loaded = load_collection(tmp_path / "synthetic")
    assert loaded.entries == collection.entries
    assert loaded.queries == collection.queries
    assert {q: dict(d) for q, d in loaded.qrels.items()} == {q: dict(d) for q, d in collection.qrels.items()}
    assert dict(loaded.files) == files
    assert list(files) == ["corpus.jsonl", "qrels/test.tsv", "queries.jsonl"]
    qrels_text = (tmp_path / "synthetic" / "qrels" / "test.tsv").read_text(encoding="utf-8")
    assert qrels_text.startswith("query-id\tcorpus-id\tscore\n")
    assert not list((tmp_path / "synthetic").rglob("*.tmp"))


def test_write_is_byte_stable(tmp_path):
    """Writing the same collection twice gives the same bytes (same hashes)."""
    collection = synthetic_collection(seed=2)
    assert write_collection(collection, tmp_path / "a") == write_collection(collection, tmp_path / "b")


def test_evaluation_on_written_folder_matches():
    """Evaluating the generated collection and its written-and-loaded copy gives the same means."""
    import tempfile

    collection = synthetic_collection(seed=8)
    with tempfile.TemporaryDirectory() as folder:
        write_collection(collection, folder)
        loaded = load_collection(folder)
    a, b = evaluate(collection, k=5), evaluate(loaded, k=5)
    assert [r.means for r in a.results] == [r.means for r in b.results]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            {"n_entries": 4},
            r"^n_entries: 4 \(int\) cannot hold 5 queries x up to 2 relevant entries; use n_entries >= 10",
        ),
        ({"mismatch_rate": 1.5}, r"^mismatch_rate: 1.5 \(float\) is not a probability; use a number in \[0, 1\]"),
        ({"relevant_per_query": (2, 1)}, r"^relevant_per_query: \(2, 1\) \(tuple\) is not a range \(low, high\)"),
        ({"entry_length": (1, 4)}, r"^entry_length: \(1, 4\) \(tuple\) is not a range.*2 <= low <= high"),
        ({"tags_per_entry": (1, 13)}, r"^tags_per_entry: \(1, 13\) \(tuple\) asks for more tags than n_tags=12"),
        (
            {"vocabulary": 20},
            r"^vocabulary: 20 \(int\) is too small for n_tags=12; use at least 2 \* \(n_tags \+ 1\) = 26",
        ),
        ({"n_queries": 0}, r"^n_queries: 0 \(int\) is less than 1"),
    ],
)
def test_rejects_bad_parameters(kwargs, message):
    """Impossible parameters are rejected with the argument, the value and what would work."""
    with pytest.raises(ParameterError, match=message):
        synthetic_collection(seed=1, **kwargs)


@pytest.mark.parametrize(
    "seed,message",
    [
        (-1, "seed: -1 (int) is negative; seed must be an integer >= 0"),
        ("1", "seed: '1' (str) is not an integer; seed must be an integer >= 0"),
        (True, "seed: True (bool) is not an integer; seed must be an integer >= 0"),
        (1.0, "seed: 1.0 (float) is not an integer; seed must be an integer >= 0"),
    ],
)
def test_rejects_bad_seed(seed, message):
    """The seed is checked by errors.check_seed: a non-negative int (numpy's default_rng rejects negatives)."""
    with pytest.raises(ParameterError) as info:
        synthetic_collection(seed=seed)
    assert str(info.value) == message
    with pytest.raises(ParameterError) as shared:
        check_seed(seed)
    assert str(shared.value) == message
