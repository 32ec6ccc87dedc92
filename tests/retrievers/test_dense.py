"""The dense retriever, its encoders and the embedding cache."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO_ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmemory import MemoryEntry, MemoryStore, Query
from agentmemory.cli.app import main
from agentmemory.errors import ParameterError, UnknownNameError
from agentmemory.files import cache as cache_module
from agentmemory.files.atomic import atomic_write_bytes
from agentmemory.retrievers import ENCODERS, Dense, load_encoder, make_retriever, register_encoder
from agentmemory.retrievers import dense as dense_module
from agentmemory.retrievers import encoders as encoders_module
from agentmemory.retrievers.dense import MIN_CACHED_TEXTS, normalize_rows
from agentmemory.retrievers.encoders import PrecomputedEncoder, WordLlamaEncoder, mean_pool

try:
    from agentmemory.retrievers import _accel

    HAVE_NUMBA = _accel.AVAILABLE
except ImportError:  # pragma: no cover - numba missing
    HAVE_NUMBA = False

ENTRIES = [
    MemoryEntry("m01", "Maya is vegetarian and loves lentil curry"),
    MemoryEntry("m02", "Maya's sister Lena eats fish on Fridays"),
    MemoryEntry("m03", "Book a table at the Café Zürich for Maya's birthday"),
    MemoryEntry("m04", "The naïve façade of the old cinema was repainted"),
    MemoryEntry("m05", "東京のラーメン屋さんが好き"),
    MemoryEntry("twin-a", "Remember to water the basil and the mint"),
    MemoryEntry("twin-b", "Remember to water the basil and the mint"),
    MemoryEntry("m06", "Lentil soup recipe: lentils, onion, cumin, lemon"),
    MemoryEntry("m07", ""),
    MemoryEntry("m08", "Maya runs the Berlin marathon in September"),
]
QUERIES = ["what does Maya eat", "lentil soup", "water the basil", "東京 ラーメン", "", "marathon"]


# -- a controllable encoder for exact tests ------------------------------------------


class TableEncoder:
    """Vectors from a fixed table (text -> vector); counts the texts it encodes."""

    name = "test-table"
    calls: list[list[str]] = []
    table: dict[str, list[float]] = {}

    def __init__(self, model: str = "fixed") -> None:
        self.model = model
        self.dim = 2

    def params(self) -> dict:
        return {"model": self.model}

    def encode(self, texts):
        TableEncoder.calls.append(list(texts))
        return np.asarray([self.table.get(t, [0.0, 0.0]) for t in texts], dtype=np.float32).reshape(len(texts), 2)


@pytest.fixture
def table_encoder():
    """Registers ``test-table`` for one test; forgets loaded encoders before and after."""
    register_encoder("test-table", TableEncoder, replace=True)
    encoders_module._forget_loaded()
    TableEncoder.calls = []
    yield TableEncoder
    ENCODERS.unregister("test-table")
    encoders_module._forget_loaded()


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch) -> Path:
    """A cache folder of this test's own (``AGENTMEMORY_CACHE``)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("AGENTMEMORY_CACHE", str(folder))
    return folder


# -- import cost and the offline default ---------------------------------------------


def test_import_agentmemory_loads_no_embedding_library(python_run) -> None:
    """`import agentmemory` (and its retrievers) imports neither wordllama, tokenizers, safetensors nor model2vec."""
    proc = python_run(
        [
            "-c",
            "import sys, agentmemory, agentmemory.retrievers, agentmemory.testing; "
            "print(sorted(m for m in ('wordllama', 'tokenizers', 'safetensors', 'model2vec', 'huggingface_hub', "
            "'sentence_transformers', 'fastembed', 'torch') if m in sys.modules))",
        ],
        cwd=REPO_ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def _no_network(*args, **kwargs):
    raise AssertionError("the network was touched")


@pytest.fixture
def offline(monkeypatch):
    """Sockets disabled in this process: opening one fails the test."""
    monkeypatch.setattr(socket, "socket", _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    monkeypatch.setattr(socket, "getaddrinfo", _no_network)
    encoders_module._forget_loaded()
    yield
    encoders_module._forget_loaded()


def test_wordllama_loads_and_encodes_with_the_network_disabled(offline) -> None:
    """The default encoder reads the files shipped in the wordllama wheel: no socket is ever opened."""
    dense = Dense()
    dense.add(ENTRIES)
    hits = dense.search("lentil soup", 3)
    assert hits and hits[0].entry_id == "m06"
    assert dense.encoder.dim == 256
    assert dense.params()["encoder_params"]["model"] == "l2_supercat_256"


def test_wordllama_pooling_matches_wordllama_inference() -> None:
    """Our text vectors point where WordLlamaInference.embed's do (cosine 1 to 1e-6): the same model, the same pooling."""
    pytest.importorskip("wordllama")
    import importlib.util

    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    root = Path(next(iter(importlib.util.find_spec("wordllama").submodule_search_locations)))
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as handle:
        table = handle.get_tensor("embedding.weight")
    reference = WordLlamaInference(
        table, Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    )
    texts = [e.text for e in ENTRIES if e.text] + ["a" * 2000, "  spaced   words  "]
    ours = normalize_rows(load_encoder("wordllama").encode(texts))
    theirs = normalize_rows(reference.embed(texts))
    np.testing.assert_allclose(np.einsum("ij,ij->i", ours, theirs), 1.0, atol=1e-6)


def test_a_text_vector_does_not_depend_on_its_batch() -> None:
    """Each text is pooled alone: encoded alone, in a batch, or in another order, its vector is bit-identical."""
    encoder = load_encoder("wordllama")
    texts = [e.text for e in ENTRIES] + ["one more, with a longer tail of words " * 5]
    batch = encoder.encode(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(encoder.encode([text])[0], batch[i])
    order = list(reversed(range(len(texts))))
    assert np.array_equal(encoder.encode([texts[i] for i in order]), batch[order])


@pytest.mark.parametrize(
    ("lengths", "rows", "weights", "expected"),
    [
        ([2, 0, 1], [0, 1, 1], None, [[0.5, 0.5], [0.0, 0.0], [0.0, 1.0]]),
        ([3], [0, 0, 1], None, [[2 / 3, 1 / 3]]),
        ([2], [0, 1], [2.0, 4.0], [[1.0, 2.0]]),
        ([], [], None, np.zeros((0, 2))),
    ],
)
def test_mean_pool_is_the_mean_of_the_token_rows(lengths, rows, weights, expected) -> None:
    """mean_pool averages each text's (weighted) token rows; a text of no token gets zeros."""
    table = np.asarray([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    got = mean_pool(
        np.asarray(lengths),
        np.asarray(rows, dtype=np.int64),
        table,
        None if weights is None else np.asarray(weights, np.float32),
    )
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float32).reshape(len(lengths), 2), rtol=1e-7)


# -- scores and the ranking rule -------------------------------------------------------


def test_scores_equal_a_direct_numpy_cosine() -> None:
    """Every score is the cosine of the L2-normalised embeddings (to 1e-6); the order is the ranking rule, exactly."""
    dense = Dense()
    dense.add(ENTRIES)
    encoder = load_encoder("wordllama")
    entries = encoder.encode([e.text for e in ENTRIES]).astype(np.float64)
    norms = np.linalg.norm(entries, axis=1, keepdims=True)
    entries = np.divide(entries, norms, out=np.zeros_like(entries), where=norms > 0)
    for text in QUERIES:
        q = encoder.encode([text])[0].astype(np.float64)
        q = q / np.linalg.norm(q) if np.linalg.norm(q) > 0 else q
        expected = entries @ q
        hits = dense.search(text, len(ENTRIES))
        got = {h.entry_id: h.score for h in hits}
        assert set(got) == {e.id for e, s in zip(ENTRIES, expected) if s > 1e-6} - {"m07"}
        for entry, score in zip(ENTRIES, expected):
            if entry.id in got:
                assert got[entry.id] == pytest.approx(score, abs=1e-6)
        assert [(h.score, h.entry_id) for h in hits] == sorted(((h.score, h.entry_id) for h in hits), reverse=True)
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert hits == dense.search(text, len(ENTRIES) + 5)


def test_identical_texts_score_bit_identically_and_larger_id_first() -> None:
    """twin-a and twin-b share a text: their scores are equal to the bit, and twin-b (the larger id) ranks first."""
    dense = Dense()
    dense.add(ENTRIES)
    for text in QUERIES[:4]:
        hits = dense.search(text, len(ENTRIES))
        twins = [h for h in hits if h.entry_id.startswith("twin")]
        if text == "water the basil":
            assert twins
        if twins:  # found together or not at all
            assert [h.entry_id for h in twins] == ["twin-b", "twin-a"]
            assert twins[0].score == twins[1].score
            assert twins[1].rank == twins[0].rank + 1


def test_equal_embeddings_of_different_texts_tie_exactly(table_encoder) -> None:
    """Two texts with the same vector tie to the bit, wherever they sit in the matrix; the larger id wins the tie."""
    table_encoder.table = {"x": [0.3, 0.7], "y": [0.3, 0.7], "z": [0.9, 0.1], "q": [0.5, 0.5]}
    dense = Dense(encoder="test-table")
    dense.add([MemoryEntry("a", "x"), MemoryEntry("c", "z")])
    dense.add([MemoryEntry("b", "y")])
    hits = dense.search("q", 5)
    assert [h.entry_id for h in hits] == ["b", "a", "c"]
    assert hits[0].score == hits[1].score > hits[2].score


def test_negative_and_zero_cosines_are_never_returned(table_encoder) -> None:
    """Only cosines > 0 are hits: opposite (-1), orthogonal (0) and zero-vector (empty text) entries never are."""
    table_encoder.table = {"east": [1, 0], "west": [-1, 0], "north": [0, 1], "north-east": [1, 1], "q": [1, 0]}
    dense = Dense(encoder="test-table")
    dense.add([MemoryEntry(i, i) for i in ("east", "west", "north", "north-east")] + [MemoryEntry("empty", "")])
    hits = dense.search("q", 10)
    assert [h.entry_id for h in hits] == ["east", "north-east"]
    assert hits[0].score == pytest.approx(1.0) and hits[1].score == pytest.approx(2**-0.5)
    assert dense.search("", 10) == []
    assert dense.score_all("q") == {h.entry_id: h.score for h in hits}


def test_an_empty_retriever_answers_without_loading_anything(table_encoder) -> None:
    """A search of an empty dense retriever returns no hit and encodes nothing."""
    dense = Dense(encoder="test-table")
    assert dense.search("anything", 5) == [] and table_encoder.calls == []


def test_search_batch_equals_search() -> None:
    """search_batch gives search's hits (ids equal, scores to float32 rounding) for every query."""
    dense = Dense()
    dense.add(ENTRIES)
    batch = dense.search_batch([Query(f"q{i}", t) for i, t in enumerate(QUERIES)], 4)
    for text, hits in zip(QUERIES, batch):
        single = dense.search(text, 4)
        assert [h.entry_id for h in hits] == [h.entry_id for h in single]
        assert [h.score for h in hits] == pytest.approx([h.score for h in single], abs=1e-6)


# -- precomputed vectors and the batched search ------------------------------------------


def _exact_vectors(rng: np.random.Generator, n: int, dim: int, *, distinct: bool) -> np.ndarray:
    """Vectors of 0, 1, 4 or 16 entries of +-1: their unit vectors (+-1, 1/2, 1/4) and dot products are exact.

    So every score is exact in float32 whatever the summation order, and ties
    are frequent (equal scores of different vectors; with ``distinct=False``
    also equal vectors, which share a row).
    """
    out = np.zeros((n, dim), dtype=np.float32)
    for i in range(n):
        nonzero = int(rng.choice([16] if distinct else [0, 1, 4, 16]))
        out[i, rng.choice(dim, nonzero, replace=False)] = rng.choice([-1.0, 1.0], nonzero)
    if distinct:
        out = np.unique(out, axis=0)
        out = out[rng.permutation(len(out))]
    return out


def _reference(entries: np.ndarray, queries: np.ndarray, ids: list[str], k: int) -> list[list[tuple[float, str]]]:
    """The ranking rule computed directly: float64 cosines (exact here), those > 0, by (score, id) descending."""
    unit = [normalize_rows(m).astype(np.float64) for m in (entries, queries)]
    out = []
    for q in unit[1]:
        scores = unit[0] @ q
        out.append(sorted(((float(s), i) for s, i in zip(scores, ids) if s > 0), reverse=True)[:k])
    return out


@pytest.mark.parametrize("distinct", [True, False], ids=["distinct-vectors", "shared-rows"])
@pytest.mark.parametrize(
    ("row_block_bytes", "query_block", "pool"),
    [(1 << 20, 1024, 4), (16 * 4 * 7, 5, 1), (16 * 4, 1, 1), (16 * 4 * 64, 7, 2)],
    ids=["defaults", "7-row-blocks", "1-row-blocks", "64-row-blocks"],
)
def test_search_batch_and_search_follow_the_ranking_rule_exactly(
    monkeypatch, distinct: bool, row_block_bytes: int, query_block: int, pool: int
) -> None:
    """search_batch and search equal a direct ranking exactly, ties included, across block edges and bound refreshes.

    The vectors make every score exact (see _exact_vectors), so the blocked
    GEMM of search_batch, the matrix-vector product of search and the
    float64 reference agree to the bit; blocks of 1 and 7 rows and pools of
    1 x k force many bound refreshes.  Entries are added in two batches, ids
    are in no particular order, and with shared rows many entries have equal
    vectors.
    """
    monkeypatch.setattr(dense_module, "_ROW_BLOCK_BYTES", row_block_bytes)
    monkeypatch.setattr(dense_module, "_QUERY_BLOCK", query_block)
    monkeypatch.setattr(dense_module, "_POOL_PER_QUERY", pool)
    rng = np.random.default_rng(3 if distinct else 4)
    entries = _exact_vectors(rng, 500, 16, distinct=distinct)
    if not distinct:
        entries[rng.integers(0, len(entries), 150)] = entries[rng.integers(0, len(entries), 150)]
    queries = _exact_vectors(rng, 40, 16, distinct=False)
    ids = [f"e{int(rng.integers(0, 10**6)):06d}-{i}" for i in range(len(entries))]
    keys = [f"q{i}" for i in range(len(queries))]
    dense = Dense(encoder=PrecomputedEncoder(ids + keys, np.concatenate([entries, queries])))
    dense.add([MemoryEntry(i, i) for i in ids[:200]])
    dense.add([MemoryEntry(i, i) for i in ids[200:]])
    assert dense._identity is distinct
    for k in (1, 3, 10, 60, 1000):
        expected = _reference(entries, queries, ids, k)
        batch = dense.search_batch(keys, k)
        assert [[(h.score, h.entry_id) for h in hits] for hits in batch] == expected, k
        assert [[(h.score, h.entry_id) for h in dense.search(key, k)] for key in keys] == expected, k
        assert all([h.rank for h in hits] == list(range(1, len(hits) + 1)) for hits in batch)


def test_search_batch_of_random_vectors_equals_search() -> None:
    """On random vectors (no exact scores), search_batch finds search's top 10 ids, scores equal to 1e-6."""
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((3100, 32)).astype(np.float32)
    ids = [f"d{i:05d}" for i in range(3000)]
    keys = [f"q{i}" for i in range(100)]
    dense = Dense(encoder=PrecomputedEncoder(ids + keys, vectors))
    dense.add([MemoryEntry(i, i) for i in ids])
    for single, hits in zip([dense.search(key, 10) for key in keys], dense.search_batch(keys, 10)):
        assert [h.entry_id for h in hits] == [h.entry_id for h in single]
        assert [h.score for h in hits] == pytest.approx([h.score for h in single], abs=1e-6)


def test_precomputed_scores_equal_a_direct_numpy_cosine(own_cache: Path) -> None:
    """Dense over PrecomputedEncoder scores the cosine of the given vectors (to 1e-6) and writes no cache file."""
    rng = np.random.default_rng(6)
    vectors = rng.standard_normal((60, 8)).astype(np.float32)
    vectors[7] = 0.0
    texts = [f"t{i}" for i in range(50)] + [f"query {i}" for i in range(10)]
    encoder = PrecomputedEncoder(texts, vectors)
    dense = Dense(encoder=encoder)
    dense.add([MemoryEntry(f"m{i}", texts[i]) for i in range(50)])
    unit = vectors.astype(np.float64)
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    unit = np.divide(unit, norms, out=np.zeros_like(unit), where=norms > 0)
    for j in range(50, 60):
        got = dense.score_all(texts[j])
        expected = {f"m{i}": unit[i] @ unit[j] for i in range(50) if unit[i] @ unit[j] > 1e-6}
        assert set(got) == set(expected)
        assert all(got[i] == pytest.approx(expected[i], abs=1e-6) for i in got)
    assert dense.label == "Dense (precomputed)"
    assert dense.params()["encoder"] == "precomputed"
    assert dense.params()["encoder_params"] == {"model": "precomputed", "texts": 60}
    assert dense.memory_bytes() == 50 * 8 * 4 + 50 * 8
    assert not own_cache.exists()


def test_precomputed_encoder_returns_the_given_rows() -> None:
    """encode gives the rows of its texts: a read-only view for consecutive rows in order, else a copy."""
    vectors = np.arange(12, dtype=np.float32).reshape(6, 2)
    encoder = PrecomputedEncoder(["a", "b", "c", "d", "e", "f"], vectors)
    view = encoder.encode(["b", "c", "d"])
    assert np.array_equal(view, vectors[1:4]) and not view.flags.writeable and np.shares_memory(view, vectors)
    copy = encoder.encode(["d", "b"])
    assert np.array_equal(copy, vectors[[3, 1]]) and not np.shares_memory(copy, vectors)
    assert encoder.encode([]).shape == (0, 2)
    assert len(encoder) == 6 and encoder.dim == 2 and encoder.cacheable is False


@pytest.mark.parametrize(
    ("texts", "vectors", "message"),
    [
        (["a", "b"], np.zeros((3, 2)), "vectors: 'array of shape (3, 2)' (str) is not one row per text (2 texts)"),
        (["a"], np.zeros(2), "vectors: 'array of shape (2,)' (str) is not one row per text (1 texts)"),
        (["a", "b"], [[0.0, np.inf], [1.0, 2.0]], "vectors: 'array' (str) holds non-finite numbers"),
        (["a", "b", "a"], np.zeros((3, 2)), "texts: 'a' (str) is given twice"),
        (["a", 5], np.zeros((2, 2)), "text: 5 (int) is not a str"),
    ],
)
def test_precomputed_encoder_refuses_bad_input(texts, vectors, message: str) -> None:
    """A table that is not one finite row per distinct text is refused with one line."""
    with pytest.raises(ParameterError) as caught:
        PrecomputedEncoder(texts, vectors)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_text_without_a_precomputed_vector_is_refused() -> None:
    """Adding an entry, or asking a query, whose text has no vector is one ParameterError; nothing is indexed."""
    dense = Dense(encoder=PrecomputedEncoder(["a", "b"], np.eye(2, dtype=np.float32)))
    with pytest.raises(ParameterError, match=re.escape("text: 'c' (str) has no precomputed vector")):
        dense.add([MemoryEntry("x", "a"), MemoryEntry("y", "c")])
    assert len(dense) == 0
    dense.add([MemoryEntry("x", "a")])
    with pytest.raises(ParameterError, match=re.escape("text: 'zzz' (str) has no precomputed vector")):
        dense.search("zzz", 1)


def test_an_encoder_object_is_checked_and_takes_no_model() -> None:
    """Dense(encoder=obj) takes any encoder object; one that is not an encoder, or a model beside it, is refused."""
    with pytest.raises(ParameterError, match=re.escape("is a object, which is not an encoder (it lacks encode")):
        Dense(encoder=object())  # type: ignore[arg-type]
    encoder = PrecomputedEncoder(["a"], np.ones((1, 2)))
    with pytest.raises(ParameterError, match=re.escape("model: 'm' (str) is given with an encoder object")):
        Dense(encoder=encoder, model="m")
    assert Dense(encoder=encoder).encoder is encoder


def test_normalize_rows_in_blocks_is_bit_identical_to_one_block(monkeypatch) -> None:
    """Normalising in blocks of 3 rows gives the very bits of the whole-matrix formula, float32 and float64 inputs."""
    rng = np.random.default_rng(7)
    monkeypatch.setattr(dense_module, "_NORMALIZE_ROWS", 3)
    for dtype in (np.float32, np.float64):
        vectors = (rng.standard_normal((11, 5)) * rng.choice([1e-20, 1.0, 1e20], size=(11, 1))).astype(dtype)
        vectors[4] = 0.0
        wide = vectors.astype(np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", wide, wide))
        whole = np.ascontiguousarray(wide / np.where(norms > 0, norms, 1.0)[:, None], dtype=np.float32)
        got = normalize_rows(vectors)
        assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), whole.view(np.uint32))
    assert normalize_rows(np.zeros((0, 4))).shape == (0, 4)


def test_adds_of_any_size_give_the_scores_of_one_add() -> None:
    """One add, then adds of 1, 7 and 300 entries (the first buffer taken as is, then grown): the same hits."""
    rng = np.random.default_rng(8)
    vectors = rng.standard_normal((420, 16)).astype(np.float32)
    ids = [f"d{i:03d}" for i in range(400)]
    keys = [f"q{i}" for i in range(20)]
    encoder = PrecomputedEncoder(ids + keys, vectors)
    one = Dense(encoder=encoder)
    one.add([MemoryEntry(i, i) for i in ids])
    many = Dense(encoder=encoder)
    for a, b in ((0, 92), (92, 93), (93, 100), (100, 400)):
        many.add([MemoryEntry(i, i) for i in ids[a:b]])
    for key in keys:
        assert one.search(key, 15) == many.search(key, 15)
    assert one.search_batch(keys, 15) == many.search_batch(keys, 15)


def test_incremental_adds_give_the_scores_of_one_add() -> None:
    """Adding entries one by one gives bit-identical scores to one add (vectors never depend on the batch)."""
    one = Dense()
    one.add(ENTRIES)
    many = Dense()
    for entry in ENTRIES:
        many.add([entry])
    for text in QUERIES:
        assert one.search(text, 20) == many.search(text, 20)


def test_bad_entries_are_refused_and_change_nothing(table_encoder) -> None:
    """A repeated id or a text that is not a str is refused before anything is indexed."""
    dense = Dense(encoder="test-table")
    dense.add([MemoryEntry("a", "x")])
    with pytest.raises(ParameterError, match=re.escape("entry.id: 'a' (str) is already indexed")):
        dense.add([MemoryEntry("b", "x"), MemoryEntry("a", "y")])
    with pytest.raises(ParameterError, match=re.escape("entry.text: 5 (int) is not a str")):
        dense.add([MemoryEntry._trusted(id="c", text=5)])  # MemoryEntry() refuses it; built unchecked, Dense still does
    assert len(dense) == 1


# -- the embedding cache -----------------------------------------------------------------


def _entries(n: int) -> list[MemoryEntry]:
    return [MemoryEntry(f"e{i:02d}", f"text {i}") for i in range(n)]


def test_cache_folder_follows_the_environment(tmp_path: Path, monkeypatch) -> None:
    """AGENTMEMORY_CACHE wins; else XDG_CACHE_HOME/agentmemory; else ~/.cache/agentmemory."""
    monkeypatch.setenv("AGENTMEMORY_CACHE", str(tmp_path / "own"))
    assert cache_module.cache_dir() == tmp_path / "own"
    monkeypatch.setenv("AGENTMEMORY_CACHE", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_module.cache_dir() == tmp_path / "xdg" / "agentmemory"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_module.cache_dir() == tmp_path / "home" / ".cache" / "agentmemory"


def test_embeddings_are_computed_once_and_reused(table_encoder, own_cache: Path) -> None:
    """The first add encodes and writes one cache file; a new retriever over the same texts encodes nothing."""
    table_encoder.table = {f"text {i}": [1.0, i] for i in range(20)}
    first = Dense(encoder="test-table")
    first.add(_entries(12))
    assert [len(c) for c in table_encoder.calls] == [12]
    files = list((own_cache / "embeddings").iterdir())
    assert len(files) == 1 and files[0].name.startswith("test-table-")
    second = Dense(encoder="test-table")
    second.add(_entries(12))
    assert [len(c) for c in table_encoder.calls] == [12]  # read from the cache
    assert second.search("text 3", 12) == first.search("text 3", 12)


def test_incremental_adds_encode_only_the_new_entries(table_encoder) -> None:
    """A second add encodes its own entries only."""
    table_encoder.table = {f"text {i}": [1.0, i] for i in range(30)}
    dense = Dense(encoder="test-table")
    dense.add(_entries(10))
    dense.add([MemoryEntry("new", "text 25")])
    assert table_encoder.calls == [[f"text {i}" for i in range(10)], ["text 25"]]


def test_small_adds_skip_the_disk_cache(table_encoder, own_cache: Path) -> None:
    """An add of fewer than MIN_CACHED_TEXTS texts writes no file."""
    dense = Dense(encoder="test-table")
    dense.add(_entries(MIN_CACHED_TEXTS - 1))
    assert not (own_cache / "embeddings").exists()


def test_the_cache_key_changes_with_text_model_and_version(table_encoder, own_cache: Path) -> None:
    """Different texts, another model or another encoder version give another file: nothing stale is read."""
    Dense(encoder="test-table").add(_entries(10))
    Dense(encoder="test-table").add(_entries(11))
    Dense(encoder="test-table", model="other").add(_entries(10))
    assert len(list((own_cache / "embeddings").iterdir())) == 3
    assert [len(c) for c in table_encoder.calls] == [10, 11, 10]


def _cache_file(own_cache: Path) -> Path:
    (path,) = (own_cache / "embeddings").iterdir()
    return path


@pytest.mark.parametrize(
    ("damage", "warning"),
    [
        (lambda p: p.write_bytes(b"not a zip file"), "is unreadable (ValueError: "),
        (lambda p: p.write_bytes(p.read_bytes()[:100]), "is unreadable"),
        ("flip", "is corrupt (its vectors do not match their recorded sha256)"),
        ("shape", "is corrupt (it holds float32 (3, 2), expected float32 (10, 2))"),
        ("version", "was written by another version (format 99, this version reads 1)"),
    ],
)
def test_a_bad_cache_file_is_recomputed_with_a_warning(table_encoder, own_cache: Path, damage, warning: str) -> None:
    """A corrupt file, or one from another version, gives one warning line, is recomputed and replaced: never a wrong score."""
    table_encoder.table = {f"text {i}": [1.0, i] for i in range(10)}
    Dense(encoder="test-table").add(_entries(10))
    path = _cache_file(own_cache)
    if damage == "flip":
        with np.load(path) as data:
            vectors, meta = data["vectors"].copy(), data["meta"]
        vectors[3, 1] += 1
        with open(path, "wb") as handle:
            np.savez(handle, vectors=vectors, meta=meta)
    elif damage in ("shape", "version"):
        with np.load(path) as data:
            vectors, meta = data["vectors"], json.loads(bytes(data["meta"]))
        if damage == "shape":
            vectors = vectors[:3]
            meta["vectors_sha256"] = cache_module._vectors_sha256(vectors)
        else:
            meta["format"] = 99
        with open(path, "wb") as handle:
            np.savez(handle, vectors=vectors, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    else:
        damage(path)
    dense = Dense(encoder="test-table")
    with pytest.warns(cache_module.CacheWarning) as caught:
        dense.add(_entries(10))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert (
        message.startswith(f"agentmemory: embedding cache file {path} ") and warning in message and "\n" not in message
    )
    assert message.endswith("; recomputing it")
    assert [len(c) for c in table_encoder.calls] == [10, 10]
    assert [h.entry_id for h in dense.search("text 9", 3)] == ["e09", "e08", "e07"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Dense(encoder="test-table").add(_entries(10))  # the file was replaced: read back without a warning
    assert [len(c) for c in table_encoder.calls] == [10, 10, 1]  # the 1: the query "text 9"


def test_an_unwritable_cache_is_a_warning_not_a_failure(table_encoder, tmp_path: Path, monkeypatch) -> None:
    """When the cache folder cannot be created, the add still works and says why it did not cache."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("AGENTMEMORY_CACHE", str(blocker / "cache"))
    dense = Dense(encoder="test-table")
    with pytest.warns(cache_module.CacheWarning, match="cannot write the embedding cache file"):
        dense.add(_entries(10))
    assert len(dense) == 10


def test_atomic_write_bytes_leaves_no_temporary_file(tmp_path: Path) -> None:
    """atomic_write_bytes writes the bytes, creating folders, and leaves only the destination behind."""
    path = tmp_path / "a" / "b.bin"
    atomic_write_bytes(path, b"\x00\x01")
    atomic_write_bytes(path, b"\x02")
    assert path.read_bytes() == b"\x02"
    assert [p.name for p in path.parent.iterdir()] == ["b.bin"]


def test_texts_sha256_is_unambiguous() -> None:
    """The digest of the texts frames each text with its length: ['ab', 'c'] and ['a', 'bc'] differ."""
    assert cache_module.texts_sha256(["ab", "c"]) != cache_module.texts_sha256(["a", "bc"])
    assert cache_module.texts_sha256(["ab", "c"]) == cache_module.texts_sha256(["ab", "c"])


# -- encoders: registry, extras, local models ------------------------------------------


def test_encoders_are_an_open_registry() -> None:
    """The four built-in encoders are registered; an unknown one is named with the list of known ones."""
    assert {"fastembed", "model2vec", "sentence-transformers", "wordllama"} <= set(ENCODERS.names())
    with pytest.raises(
        UnknownNameError,
        match=re.escape("encoder: 'nope' (str) is not a known name; choose from: fastembed, model2vec"),
    ):
        Dense(encoder="nope")


def test_a_factory_that_gives_no_encoder_is_refused() -> None:
    """An encoder factory must give something with name, dim, encode and params."""
    register_encoder("test-broken", lambda: object(), replace=True)
    try:
        with pytest.raises(
            ParameterError,
            match=re.escape("gives a object, which is not an encoder (it lacks encode, params, name, dim)"),
        ):
            load_encoder("test-broken")
    finally:
        ENCODERS.unregister("test-broken")


def test_dense_labels_name_the_encoder_and_model() -> None:
    """The label says which encoder (and model) a dense run used."""
    from agentmemory.retrievers import resolve_retriever

    assert resolve_retriever("dense").label == "Dense (wordllama)"
    assert resolve_retriever("dense[encoder=model2vec,model=/m]").label == "Dense (model2vec: /m)"
    assert resolve_retriever("dense[encoder=model2vec,model=/m]").key == "dense[encoder=model2vec,model=/m]"


@pytest.mark.parametrize(
    ("module", "encoder", "extra"),
    [
        ("model2vec", "model2vec", "model2vec"),
        ("sentence_transformers", "sentence-transformers", "sentence-transformers"),
        ("fastembed", "fastembed", "fastembed"),
    ],
)
def test_a_missing_extra_names_what_to_install(monkeypatch, module: str, encoder: str, extra: str) -> None:
    """An encoder whose package is not installed fails with one line naming the extra to install."""
    real = encoders_module._installed
    monkeypatch.setattr(encoders_module, "_installed", lambda name: False if name == module else real(name))
    encoders_module._forget_loaded()
    message = f"encoder: '{encoder}' (str) needs the {extra} package, which is not installed; pip install 'agentmemory-eval[{extra}]'"
    with pytest.raises(ParameterError) as caught:
        Dense(encoder=encoder, model="some/model")
    assert str(caught.value) == message


def test_a_missing_extra_is_one_cli_line(monkeypatch, capsys, tmp_path: Path) -> None:
    """Through the command line the same error is one stderr line and exit status 2."""
    monkeypatch.setattr(encoders_module, "_installed", lambda name: False)
    encoders_module._forget_loaded()
    code = main(["eval", "--retrievers", "bm25,dense[encoder=model2vec]", "--out", str(tmp_path / "x.json")])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        "agentmemory: error: encoder: 'model2vec' (str) needs the model2vec package, which is not installed; "
        "pip install 'agentmemory-eval[model2vec]'"
    ]


def test_a_wordllama_model_it_does_not_ship_is_refused() -> None:
    """wordllama serves the model shipped in its wheel only, and says what to use instead."""
    with pytest.raises(
        ParameterError,
        match=re.escape(
            "model: 'l3_supercat' (str) is not a wordllama model shipped in its wheel; use l2_supercat_256"
        ),
    ):
        WordLlamaEncoder("l3_supercat")


requires_model2vec = pytest.mark.skipif(
    not encoders_module._installed("model2vec"),
    reason="the model2vec extra is not installed (pip install 'agentmemory-eval[model2vec]')",
)


@pytest.fixture
def tiny_model2vec(tmp_path: Path) -> Path:
    """A model2vec model built here from a word vocabulary and a random matrix, saved with its own save_pretrained."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.normalizers import Lowercase
    from tokenizers.pre_tokenizers import Whitespace

    words = ["[UNK]", "[PAD]", "maya", "lentil", "soup", "curry", "basil", "water", "the", "marathon", "berlin", "eat"]
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = Lowercase()
    tokenizer.pre_tokenizer = Whitespace()
    vectors = np.random.default_rng(7).normal(size=(len(words), 8)).astype(np.float32)
    folder = tmp_path / "tiny-model"
    StaticModel(vectors, tokenizer, normalize=False).save_pretrained(folder)
    return folder


@requires_model2vec
def test_model2vec_loads_a_local_folder_offline(tiny_model2vec: Path, offline) -> None:
    """dense[encoder=model2vec,model=<folder>] loads a saved model with the network off; its vectors are model2vec's."""
    from model2vec import StaticModel

    dense = make_retriever(f'dense[encoder=model2vec,model="{tiny_model2vec}"]')
    texts = ["Maya lentil soup", "water the basil", "berlin marathon", "unknown words only", ""]
    dense.add([MemoryEntry(f"e{i}", t) for i, t in enumerate(texts)])
    ours = dense.encoder.encode(texts)
    theirs = StaticModel.from_pretrained(tiny_model2vec).encode(texts, normalize=False, use_multiprocessing=False)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert [h.entry_id for h in dense.search("lentil soup", 1)] == ["e0"]
    assert dense.params()["encoder_params"]["model"] == str(tiny_model2vec.resolve())
    assert len(dense.params()["encoder_params"]["model_sha256"]) == 64


@requires_model2vec
@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            "/no/such/model",
            "model: '/no/such/model' (str) is not an existing folder; pass the folder of a saved model, or a model name",
        ),
        ("EMPTY", "is not a model2vec model folder (ValueError: Could not find expected model files"),
    ],
)
def test_model2vec_names_a_model_that_does_not_exist_or_is_not_one(tmp_path: Path, model: str, message: str) -> None:
    """A model path that does not exist, or a folder that holds no model, is one ParameterError line naming it."""
    if model == "EMPTY":
        model = str(tmp_path)
    with pytest.raises(ParameterError) as caught:
        Dense(encoder="model2vec", model=model)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"model: {model!r} (str) ")


@pytest.mark.skipif(
    not encoders_module._installed("sentence_transformers"),
    reason="the sentence-transformers extra is not installed (pip install 'agentmemory-eval[sentence-transformers]')",
)
def test_sentence_transformers_loads_a_local_folder(tmp_path: Path) -> None:
    """A SentenceTransformer built here and saved to a folder loads from it; its vectors are its own encode's."""
    from sentence_transformers import SentenceTransformer, models
    from sentence_transformers.models.tokenizer import WhitespaceTokenizer

    words = ["maya", "lentil", "soup", "basil", "water"]
    tokenizer = WhitespaceTokenizer(vocab=words)
    weights = np.random.default_rng(1).normal(size=(len(words), 4)).astype(np.float32)
    word = models.WordEmbeddings(tokenizer, weights)
    model = SentenceTransformer(modules=[word, models.Pooling(word.get_word_embedding_dimension())])
    folder = tmp_path / "st"
    model.save(str(folder))
    dense = Dense(encoder="sentence-transformers", model=str(folder))
    texts = ["maya lentil soup", "water basil"]
    np.testing.assert_allclose(dense.encoder.encode(texts), model.encode(texts), atol=1e-6)


@pytest.mark.skipif(
    not encoders_module._installed("fastembed"),
    reason="the fastembed extra is not installed (pip install 'agentmemory-eval[fastembed]')",
)
def test_fastembed_refuses_a_path(tmp_path: Path) -> None:
    """fastembed loads models by name: a folder is refused with what to do instead."""
    with pytest.raises(ParameterError, match=re.escape("is a path, and fastembed loads models by name")):
        Dense(encoder="fastembed", model=str(tmp_path))


# -- in a store, with scopes ----------------------------------------------------------


def test_dense_serves_each_scope_with_its_own_index() -> None:
    """In a MemoryStore each scope gets its own dense retriever: a query finds entries of its scope only."""
    store = MemoryStore("bm25,dense")
    store.add(
        [
            MemoryEntry("a1", "lentil soup", scope="a"),
            MemoryEntry("b1", "lentil soup", scope="b"),
            MemoryEntry("b2", "marathon in Berlin", scope="b"),
        ]
    )
    assert [h.entry_id for h in store.search(Query("q", "lentil soup", scope="a"), 5, retriever="dense")] == ["a1"]
    assert [h.entry_id for h in store.search(Query("q", "lentil soup", scope="b"), 5, retriever="dense")][0] == "b1"
    assert store.retriever("dense", "a").encoder is store.retriever("dense", "b").encoder  # the model is loaded once


def test_dense_params_are_json_ready() -> None:
    """params() names the encoder, its model and versions, and the similarity."""
    params = Dense().params()
    assert json.loads(json.dumps(params)) == params
    assert params["encoder"] == "wordllama" and params["similarity"] == "cosine" and params["dim"] == 256
    assert params["encoder_params"]["wordllama"]


def test_the_default_works_in_a_fresh_process_without_network(tmp_path: Path) -> None:
    """A new interpreter whose sockets fail loads the default dense retriever and searches."""
    script = (
        "import socket\n"
        "def no(*a, **k): raise OSError('network disabled')\n"
        "socket.socket = no; socket.create_connection = no; socket.getaddrinfo = no\n"
        "from agentmemory.retrievers import make_retriever\n"
        "from agentmemory import MemoryEntry\n"
        "d = make_retriever('dense')\n"
        "d.add([MemoryEntry('a', 'lentil soup'), MemoryEntry('b', 'marathon')])\n"
        "print([h.entry_id for h in d.search('soup with lentils', 1)])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "AGENTMEMORY_CACHE": str(tmp_path / "c"),
            "PYTHONPATH": str(REPO_ROOT),
        },
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['a']"


# -- the compiled selection (numba) and the NumPy path --------------------------------------


PATHS = ["numpy", "numba"] if HAVE_NUMBA else ["numpy"]
SMALLEST = np.nextafter(np.float32(0), np.float32(1))
DENSE_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _use_path(monkeypatch, path: str) -> list[str]:
    """Force the NumPy path or the compiled one (at any size); returns a list that records each kernel call."""
    monkeypatch.setenv("AGENTMEMORY_ACCEL", "on" if path == "numba" else "off")
    calls: list[str] = []
    if HAVE_NUMBA:
        for name in ("dense_top", "dense_block_select"):
            kernel = getattr(_accel, name)

            def spy(*args, _kernel=kernel, _name=name):
                calls.append(_name)
                return _kernel(*args)

            monkeypatch.setattr(_accel, name, spy)
    return calls


def _direct(scores: np.ndarray, ids: list[str], k: int) -> list[tuple[float, str]]:
    """The ranking rule applied directly to one query's float32 scores: those > 0, by (score, id) descending."""
    return sorted(((float(s), i) for s, i in zip(scores.tolist(), ids) if s > 0), reverse=True)[:k]


def _tile_scores(dense: Dense, vectors: np.ndarray) -> np.ndarray:
    """The entries' scores as search_batch computes them: the same blocks of queries x rows, one matmul each."""
    matrix = dense._unique[: dense._n_unique]
    width = max(1, dense_module._ROW_BLOCK_BYTES // (4 * matrix.shape[1]))
    out = np.empty((len(vectors), len(matrix)), dtype=np.float32)
    for first in range(0, len(matrix), width):
        block = matrix[first : first + width]
        for q0 in range(0, len(vectors), dense_module._QUERY_BLOCK):
            part = vectors[q0 : q0 + dense_module._QUERY_BLOCK]
            out[q0 : q0 + len(part), first : first + len(block)] = np.matmul(part, block.T)
    return out[:, dense._row_of[: len(dense)]]


@st.composite
def dense_cases(draw):
    """Small random matrices with forced duplicate rows, zero rows and opposite rows; queries; ids in any order."""
    dim = draw(st.integers(1, 6))
    n = draw(st.integers(1, 40) | st.integers(60, 300))  # past 64: the kernels' whole chunks, not only their tails
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):  # small integers: many equal scores of different vectors
        entries = rng.integers(-2, 3, (n, dim)).astype(np.float32)
    else:
        entries = rng.standard_normal((n, dim)).astype(np.float32)
    copies = draw(st.integers(0, n))
    entries[rng.integers(0, n, copies)] = entries[rng.integers(0, n, copies)]  # equal rows: exact ties
    entries[rng.integers(0, n, draw(st.integers(0, 2)))] = 0.0  # zero vectors: score 0, never returned
    n_queries = draw(st.integers(1, 6))
    queries = rng.integers(-2, 3, (n_queries, dim)).astype(np.float32)
    if draw(st.booleans()):
        queries[0] = entries[0]  # a query equal to an entry (and to its copies)
    if draw(st.booleans()):
        queries[-1] = -entries[-1]  # mostly negative scores: fewer than k positive
    ids = [f"e{x}" for x in rng.permutation(10 * n)[:n]]  # ids in no relation to the entry order
    split = draw(st.integers(0, n))
    return entries, queries, ids, split


@pytest.mark.parametrize("path", PATHS)
@DENSE_SETTINGS
@given(
    case=dense_cases(),
    k=st.integers(1, 45),
    row_block=st.sampled_from([1, 3, 8, 1 << 20]),
    query_block=st.sampled_from([1, 2, 1024]),
    pool_rows=st.sampled_from([1, 16]),
)
def test_search_and_search_batch_equal_a_direct_ranking_of_their_scores(
    path: str, case, k: int, row_block: int, query_block: int, pool_rows: int
) -> None:
    """On either path, search and search_batch equal the ranking rule applied to their own float32 scores, exactly.

    Ids and scores are compared to the bit: equal rows tie, ties go to the
    larger id, a tie straddling the cut keeps the larger ids, k may exceed
    the number of positive scores, blocks of 1 or 3 rows and tiny pools
    force many threshold updates and pool cuts.
    """
    entries, queries, ids, split = case
    keys = [f"q{i}" for i in range(len(queries))]
    with pytest.MonkeyPatch.context() as mp:
        calls = _use_path(mp, path)
        mp.setattr(dense_module, "_ROW_BLOCK_BYTES", 4 * entries.shape[1] * row_block)
        mp.setattr(dense_module, "_QUERY_BLOCK", query_block)
        mp.setattr(dense_module, "_POOL_ROWS", pool_rows)
        dense = Dense(encoder=PrecomputedEncoder(ids + keys, np.concatenate([entries, queries])))
        dense.add([MemoryEntry(i, i) for i in ids[:split]])
        dense.add([MemoryEntry(i, i) for i in ids[split:]])
        batch = dense.search_batch(keys, k)
        singles = [dense.search(key, k) for key in keys]
        batch_scores = _tile_scores(dense, dense._query_vectors(keys))
        for i, key in enumerate(keys):
            assert [(h.score, h.entry_id) for h in singles[i]] == _direct(dense.scores(key), ids, k)
            assert [(h.score, h.entry_id) for h in batch[i]] == _direct(batch_scores[i], ids, k)
            assert [h.rank for h in batch[i]] == list(range(1, len(batch[i]) + 1))
            assert [h.rank for h in singles[i]] == list(range(1, len(singles[i]) + 1))
        if path == "numba":  # the compiled kernels ran wherever k is below the number of rows
            assert ("dense_top" in calls) == (k < len(ids))
            assert ("dense_block_select" in calls) == (k < dense._n_unique)
        else:
            assert calls == []


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_the_numba_and_numpy_paths_give_the_same_hits_to_the_bit(monkeypatch) -> None:
    """Random vectors (inexact scores), shared rows, several blocks: both paths return identical hits and scores."""
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((2600, 24)).astype(np.float32)
    vectors[2000:2300] = vectors[rng.integers(0, 2000, 300)]  # 300 entries share a row with another
    ids = [f"d{int(x):05d}" for x in rng.permutation(2500)]
    keys = [f"q{i}" for i in range(100)]
    dense = Dense(encoder=PrecomputedEncoder(ids + keys, vectors))
    dense.add([MemoryEntry(i, i) for i in ids])
    monkeypatch.setattr(dense_module, "_ROW_BLOCK_BYTES", 4 * 24 * 300)
    monkeypatch.setattr(dense_module, "_QUERY_BLOCK", 37)
    results = {}
    for path in ("numpy", "numba"):
        with pytest.MonkeyPatch.context() as mp:
            calls = _use_path(mp, path)
            results[path] = [
                (dense.search_batch(keys, k), [dense.search(key, k) for key in keys]) for k in (1, 10, 100, 2600)
            ]
            assert bool(calls) is (path == "numba")
    assert results["numba"] == results["numpy"]


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@DENSE_SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 700),
    few_values=st.booleans(),
    k=st.integers(1, 80),
    values=st.lists(st.floats(-1, 1, width=32), max_size=20),
)
def test_dense_top_keeps_every_score_at_or_above_the_kth(
    seed: int, n: int, few_values: bool, k: int, values: list[float]
) -> None:
    """The compiled one-query selection: every position with a score >= the k-th largest positive one, ascending.

    That is exactly what the NumPy path keeps (``np.partition``; every
    positive score when there are fewer than k), ties at the cut included,
    wherever they fall (in the 64-score chunks or the tail after them).
    """
    rng = np.random.default_rng(seed)
    if few_values:  # many ties, zeros, negatives and the smallest positive float32
        scores = rng.choice(np.float32([-1.0, -0.5, 0.0, SMALLEST, 0.25, 0.5, 0.75, 1.0]), n)
    else:
        scores = rng.standard_normal(n).astype(np.float32)
    scores[: len(values)] = np.asarray(values, dtype=np.float32)[:n]
    k = min(k, n - 1)
    kth = np.partition(scores, n - k)[n - k]
    expected = np.flatnonzero(scores >= kth) if kth > 0 else np.flatnonzero(scores > 0)
    np.testing.assert_array_equal(_accel.dense_top(scores, k), expected)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
@DENSE_SETTINGS
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12), pool=st.integers(0, 40), width=st.integers(1, 150))
def test_dense_block_select_keeps_every_score_at_or_above_the_final_kth(seed: int, k: int, pool: int, width: int):
    """The compiled block selection, fed blocks one by one: its pool, cut at the final thresholds, is exact.

    Whatever the pool's size (it stops at a row it has no room for; the
    caller cuts and resumes), the kept candidates of each query are the
    positions with a score >= its k-th largest positive score (all positive
    scores when fewer), and each heap's root is that k-th score.
    """
    rng = np.random.default_rng(seed)
    n_queries, n = 3, 3 * width + 5
    scores = rng.choice(np.float32([-0.5, 0.0, SMALLEST, 0.125, 0.25, 0.5, 1.0]), (n_queries, n))
    scores[1] = rng.standard_normal(n).astype(np.float32)
    heaps = np.full((n_queries, k), SMALLEST, dtype=np.float32)
    pool_q, pool_r = np.empty(pool + 2 * width, np.int64), np.empty(pool + 2 * width, np.int64)
    pool_s = np.empty(pool + 2 * width, np.float32)
    kept: list[tuple[int, int, float]] = []
    used = 0
    for first in range(0, n, width):
        block = np.ascontiguousarray(scores[:, first : first + width])
        done = 0
        while done < n_queries:
            done, used = _accel.dense_block_select(block, 5, first, heaps, pool_q, pool_r, pool_s, used, done)
            if done < n_queries:  # full: move the pool aside (a cut would do; keeping everything is as exact)
                kept += zip(pool_q[:used].tolist(), pool_r[:used].tolist(), pool_s[:used].tolist())
                used = 0
    kept += zip(pool_q[:used].tolist(), pool_r[:used].tolist(), pool_s[:used].tolist())
    for q in range(n_queries):
        positive = np.sort(scores[q][scores[q] > 0])
        kth = positive[-k] if len(positive) >= k else SMALLEST
        assert heaps[q, 0] == kth
        got = sorted(r for qq, r, s in kept if qq == q + 5 and s >= kth)
        assert got == np.flatnonzero(scores[q] >= kth).tolist()
        assert all(scores[q, r] == s for qq, r, s in kept if qq == q + 5)
        assert len({r for qq, r, _ in kept if qq == q + 5}) == len([r for qq, r, _ in kept if qq == q + 5])


def test_the_compiled_selection_is_only_for_large_indexes(monkeypatch) -> None:
    """By default (``auto``) a small index never loads numba; ``AGENTMEMORY_ACCEL=off`` keeps any index on NumPy."""
    calls = []
    with pytest.MonkeyPatch.context() as mp:
        if HAVE_NUMBA:
            calls = _use_path(mp, "numpy")
        mp.setenv("AGENTMEMORY_ACCEL", "auto")
        dense = Dense(encoder=PrecomputedEncoder(["a", "b", "q"], np.eye(3, dtype=np.float32)[[0, 1, 0]]))
        dense.add([MemoryEntry("a", "a"), MemoryEntry("b", "b")])
        assert [h.entry_id for h in dense.search("q", 1)] == ["a"]
        assert [[h.entry_id for h in hits] for hits in dense.search_batch(["q"], 1)] == [["a"]]
    assert calls == []


CORRUPT_CACHE = r"""
import io, json
import numpy as np
from agentmemory.files import cache
path = cache.embeddings_path("enc", {"texts": "abc"})
path.parent.mkdir(parents=True)
buffer = io.BytesIO()
np.savez(buffer, vectors=np.zeros((2, 2), np.float32), meta=np.frombuffer(json.dumps({"format": 99}).encode(), np.uint8))
path.write_bytes(buffer.getvalue())
assert cache.load_embeddings("enc", {"texts": "abc"}, 2, 2) is None
"""


def test_a_corrupt_cache_file_warns_in_exactly_one_stderr_line(tmp_path: Path) -> None:
    """The warning as a user sees it on stderr, to the letter: one line, without the source line of our code that
    warned (the warnings module prints one beneath the warning when the file it names exists)."""
    folder = tmp_path / "cache"
    env = {**os.environ, "AGENTMEMORY_CACHE": str(folder)}
    env.pop("PYTHONWARNINGS", None)
    script = tmp_path / "script.py"  # a file, not -c: the old two-line warning quoted its source line
    script.write_text(CORRUPT_CACHE)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    (path,) = (folder / "embeddings").iterdir()
    assert proc.stderr == (
        f"agentmemory:0: CacheWarning: agentmemory: embedding cache file {path} was written by another version "
        "(format 99, this version reads 1); recomputing it\n"
    )


@pytest.mark.parametrize("kind", ["normal", "few values", "all negative", "rounded"])
@pytest.mark.parametrize(("n", "k"), [(2, 1), (9_000, 10), (100_000, 10), (100_001, 37), (250_000, 3)])
def test_the_block_bound_keeps_exactly_what_one_partition_keeps(kind: str, n: int, k: int) -> None:
    """_at_least_kth (block maxima bound the k-th largest score) gives the positions a partition of every score
    gives: scores > 0 at or above the k-th largest, ties at the k-th included, ascending."""
    from agentmemory.retrievers.dense import _at_least_kth

    rng = np.random.default_rng(n + k)
    scores = {
        "normal": rng.standard_normal(n),
        "few values": rng.integers(-3, 4, n) / 4,
        "all negative": -np.abs(rng.standard_normal(n)),
        "rounded": np.round(rng.standard_normal(n), 1),
    }[kind].astype(np.float32)
    kth = np.partition(scores, n - k)[n - k]
    expected = np.flatnonzero(scores >= kth) if kth > 0 else np.flatnonzero(scores > 0)
    assert _at_least_kth(scores, k).tolist() == expected.tolist()
