"""BM25 over columns: add_texts from chunks of UTF-8 spans, compact postings, one term table for every index."""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from agentmemory import BM25, MemoryEntry
from agentmemory.collection.columns import TextChunk, TextList
from agentmemory.errors import ParameterError
from agentmemory.retrievers import _analysis
from agentmemory.retrievers._index import build_segment, merge_all, narrow_tfs, union_terms
from agentmemory.retrievers._vocab import TERMS, Vocabulary
from agentmemory.tokenize import tokenize

try:
    from agentmemory.retrievers import _accel

    HAVE_NUMBA = _accel.AVAILABLE
except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

MODES = ["off", "on"] if HAVE_NUMBA else ["off"]

TEXTS = [
    "The cat sat on the mat",
    "",
    "Café au lait, naïve façade",  # not ASCII: tokenize itself
    "cat CAT Cat dog-dog_dog",
    "   !!! ",
    "東京 tower and the cat",
    "word " * 14_000,  # 70,000 characters: past the compiled tokeniser's 65,535
    "x" * 70_000,
    "mat mat sat",
    "déjà vu, the dog",
    "",
    "tail text of the cat",
]
QUERIES = ["cat", "the mat", "dog café", "word x", "tower tail", "déjà vu", "nothing here", "sat sat cat"]


@contextmanager
def accel_mode(mode: str):
    old = os.environ.get("AGENTMEMORY_ACCEL")
    os.environ["AGENTMEMORY_ACCEL"] = mode
    try:
        yield
    finally:
        if old is None:
            del os.environ["AGENTMEMORY_ACCEL"]
        else:
            os.environ["AGENTMEMORY_ACCEL"] = old


class JsonLines:
    """A TextSource as a reader holds one: the texts inside JSON-like lines (bytes between the spans), in a
    memoryview, ``per`` texts a chunk."""

    def __init__(self, texts: list[str], per: int) -> None:
        self.texts = texts
        self.per = per

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, i: int) -> str:
        return self.texts[i]

    def chunks(self, size: int = 0) -> Iterator[TextChunk]:
        for first in range(0, len(self.texts), self.per):
            run = self.texts[first : first + self.per]
            buf, starts, ends = b"", [], []
            for i, text in enumerate(run):
                buf += b'{"_id": "d%d", "text": "' % (first + i)
                starts.append(len(buf))
                buf += text.encode("utf-8")
                ends.append(len(buf))
                buf += b'"}\n'
            yield TextChunk(
                first,
                memoryview(buf),
                np.array(starts, dtype=np.int64),
                np.array(ends, dtype=np.int64),
                np.array([t.isascii() for t in run], dtype=bool),
            )


def ranked(index: BM25) -> list:
    return [[(h.entry_id, h.score) for h in index.search(q, 20)] for q in QUERIES]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("per", [1, 3, 100])
def test_add_texts_from_spans_equals_add_of_records(mode, per):
    """add_texts over spans inside other bytes (mixed ASCII and not, empty texts, texts too long for the kernel),
    in chunks of 1, 3 or every text, gives add()'s hits, scores, explanations and term numbers."""
    ids = [f"d{i}" for i in range(len(TEXTS))]
    with accel_mode(mode):
        records = BM25()
        records.add(MemoryEntry(i, t) for i, t in zip(ids, TEXTS))
        spans = BM25()
        spans.add_texts(ids, JsonLines(TEXTS, per))
    assert ranked(spans) == ranked(records)
    assert ranked(records)[0]  # the queries find something
    assert spans._vocab.words() == records._vocab.words() == list(dict.fromkeys(w for t in TEXTS for w in tokenize(t)))
    for q in QUERIES:
        assert spans.score_all(q) == records.score_all(q)
        assert spans.explain(q, "d3") == records.explain(q, "d3")


@pytest.mark.parametrize("mode", MODES)
def test_many_chunks_merge_into_what_one_add_at_a_time_gives(mode, monkeypatch):
    """Chunks of a few bytes (a segment each, merged at the end) score as entries added one by one."""
    ids = [f"d{i}" for i in range(len(TEXTS))]
    monkeypatch.setattr(_analysis, "_RUN_CHARS", 10)
    with accel_mode(mode):
        chunked = BM25()
        chunked.add_texts(ids, TextList(TEXTS))
        one_by_one = BM25()
        for i, t in zip(ids, TEXTS):
            one_by_one.add_texts([i], TextList([t]))
    assert len(chunked._segs.segments) == 1
    assert ranked(chunked) == ranked(one_by_one)


def test_add_texts_refuses_a_source_of_another_length():
    index = BM25()
    with pytest.raises(
        ParameterError, match=r"^len\(texts\): 1 \(int\) differs from len\(ids\) = 2; pass one text per id$"
    ):
        index.add_texts(["a", "b"], TextList(["one"]))
    short = JsonLines(["one", "two"], 1)
    short.chunks = lambda size=0: iter(list(JsonLines(["one"], 1).chunks()))  # type: ignore[method-assign]
    with pytest.raises(
        ParameterError,
        match=r"^texts.chunks\(\): 1 \(int\) texts came for len\(texts\) = 2; chunks hold each text of the source once$",
    ):
        index.add_texts(["a", "b"], short)
    assert len(index) == 0
    index.add_texts([], TextList([]))
    assert len(index) == 0


@pytest.mark.parametrize(
    ("top", "dtype"), [(1, np.uint8), (255, np.uint8), (256, np.uint16), (65_535, np.uint16), (65_536, np.int32)]
)
def test_term_frequencies_take_the_narrowest_exact_type(top, dtype):
    tfs = np.array([1, top, 3], dtype=np.int32)
    narrow = narrow_tfs(tfs)
    assert narrow.dtype == dtype
    assert narrow.tolist() == [1, top, 3]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("repeat", [255, 256, 65_536])
def test_a_term_frequency_at_the_type_boundary_scores_exactly(mode, repeat):
    """A word repeated 255, 256 or 65,536 times in one entry: its tf is kept exactly, whatever the segment's type,
    and its score is the formula's."""
    texts = ["a " * repeat + "b", "a b c", "c"]
    with accel_mode(mode):
        index = BM25()
        index.add_texts(["x", "y", "z"], TextList(texts))
    (part,) = index.explain("a", "x")
    assert part.tf == repeat
    norm = 1.2 * (1 - 0.75 + 0.75 * part.dl / part.avgdl)
    expected = part.idf * repeat * 2.2 / (repeat + norm)
    assert index.search("a", 1)[0].score == pytest.approx(expected, rel=1e-12)
    assert index.search("a", 1)[0].entry_id == "x"
    (seg,) = index._segs.segments
    assert seg.tfs.dtype == (np.int32 if repeat > 65_535 else np.uint16 if repeat > 255 else np.uint8)


def test_merge_all_equals_one_segment_of_every_document():
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 9, size=40)
    ids = rng.integers(0, 30, size=int(lengths.sum())).astype(np.int32)
    whole = build_segment(5, ids, lengths)
    parts, at, first = [], 0, 0
    for stop in (7, 8, 20, 40):
        n = int(lengths[first:stop].sum())
        parts.append(build_segment(5 + first, ids[at : at + n], lengths[first:stop]))
        at, first = at + n, stop
    merged = merge_all(parts)
    assert parts == []
    assert (merged.base, merged.n) == (5, 40)
    for name in ("terms", "ptr", "docs", "tfs"):
        assert np.array_equal(getattr(merged, name), getattr(whole, name)), name


def test_union_terms_is_the_sorted_union_of_its_parts():
    rng = np.random.default_rng(11)
    parts = [np.unique(rng.integers(0, 500, size=int(n))).astype(np.int32) for n in (0, 3, 40, 200, 0)]
    union = union_terms(parts)
    assert union.dtype == np.int32
    assert union.tolist() == sorted(set().union(*(p.tolist() for p in parts)))
    assert union_terms([np.empty(0, np.int32)]).tolist() == []


MERGE_WITHOUT_NUMPY_MA = """
import sys
from agentmemory import BM25, MemoryEntry
from agentmemory.collection.columns import TextList
from agentmemory.retrievers import _analysis

_analysis._MIN_RUN_CHARS = _analysis._RUN_CHARS = 64  # many chunks: merge_all
texts = [f"w{i % 37} common w{i % 11} x{i}" for i in range(400)]
index = BM25()
index.add_texts([f"d{i}" for i in range(400)], TextList(texts))
assert len(index._segs.segments) == 1
for i in range(3):  # one entry at a time: merge_segments
    index.add([MemoryEntry(id=f"e{i}", text="w1 common late")])
print(index.search("w1 common", 3)[0].entry_id, "numpy.ma" in sys.modules)
"""


def test_merging_segments_does_not_import_numpy_ma(python_run, tmp_path):
    """merge_all and merge_segments take the union of term numbers without np.unique / np.union1d, which import
    numpy.ma on first use (7 ms of a small `retrieve` process); a fresh process shows it."""
    done = python_run(["-c", MERGE_WITHOUT_NUMPY_MA], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    entry, imported = done.stdout.split()
    assert entry.startswith(("d", "e"))
    assert imported == "False"


def test_indexes_share_the_words_but_keep_their_own_statistics():
    """Two indexes: each word is in the process's table once; IDF, df and N stay each index's own."""
    first, second = BM25(), BM25()
    first.add_texts(["a", "b", "c"], TextList(["zebu okapi", "zebu", "quagga"]))
    words = len(TERMS)
    second.add_texts(["d", "e"], TextList(["okapi zebu", "okapi"]))
    assert len(TERMS) == words  # no new word: nothing added to the table
    assert first.idf("zebu") == pytest.approx(np.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
    assert second.idf("zebu") == pytest.approx(np.log(1 + (2 - 1 + 0.5) / (1 + 0.5)))
    assert second.idf("quagga") == pytest.approx(np.log(1 + (2 + 0.5) / 0.5))  # in the table, not in this index
    assert second.search("quagga", 5) == []
    assert [h.entry_id for h in first.search("quagga", 5)] == ["c"]
    assert first._vocab.words() == ["zebu", "okapi", "quagga"]
    assert second._vocab.words() == ["okapi", "zebu"]
    assert first._vocab.nbytes < 100  # int32 arrays, no strings
    second.add_texts(["f"], TextList(["quagga quagga"]))  # a word a query found missing, then added
    assert [h.entry_id for h in second.search("quagga", 5)] == ["f"]


def test_a_vocabulary_travels_as_its_words():
    vocab = Vocabulary()
    assert vocab.numbers(["okapi", "zebu", "gnu"]).tolist() == [0, 1, 2]
    assert vocab.numbers(["gnu", "eland"]).tolist() == [2, 3]
    back = pickle.loads(pickle.dumps(vocab))
    assert back.words() == ["okapi", "zebu", "gnu", "eland"]
    assert [back.get(w) for w in ("eland", "okapi", "ox")] == [3, 0, None]
    assert back.lookup(["zebu", "ox", "gnu"]) == [1, -1, 2]


def _many_texts(n: int, offset: int = 0) -> list[str]:
    """Short texts whose words recur with several periods: entry ``i`` holds ``a<i % 7>``, ``b<i % 11>``, and
    ``last`` only for the final entry of the whole test (so its document number is the largest)."""
    return [f"a{(offset + i) % 7} b{(offset + i) % 11} a{(offset + i) % 7}" for i in range(n)]


@pytest.mark.parametrize(("n", "dtype"), [(65_536, np.uint16), (65_537, np.int32)])
def test_document_numbers_take_uint16_up_to_65536_entries_and_rank_exactly(n, dtype):
    """A segment's documents are uint16 up to 65,536 entries, int32 above; the last entry (number n - 1, past
    uint16's range in the second case) is found and ranked by its id, exactly as a dict reference scores it."""
    texts = _many_texts(n - 1) + ["last a3"]
    ids = [f"d{i:06d}" for i in range(n)]
    with accel_mode("off"):
        index = BM25()
        index.add_texts(ids, TextList(texts))
    (seg,) = index._segs.segments
    assert seg.docs.dtype == dtype
    assert index._docs._pos is None  # searching never needs the id -> number dict
    hits = index.search("last", 3)
    assert [h.entry_id for h in hits] == [ids[-1]]
    holders = [i for i, t in enumerate(texts) if "a3" in t.split()]
    assert {h.entry_id for h in index.search("a3", len(holders) + 5)} == {ids[i] for i in holders}


@pytest.mark.parametrize("mode", MODES)
def test_a_small_segment_past_document_65536_keeps_its_base(mode):
    """A second add of 10 entries to an index of 70,000: its segment's documents are uint16 (local 0-9), its base
    70,000; search, score_all and explain give the new entries' own ids and scores, equal to a fresh index's."""
    first = [f"e{i:06d}" for i in range(70_000)]
    second = [f"f{i}" for i in range(10)]
    texts = _many_texts(70_000) + [f"zz{i % 3} a1" for i in range(10)]
    with accel_mode(mode):
        grown = BM25()
        grown.add_texts(first, TextList(texts[:70_000]))
        grown.add_texts(second, TextList(texts[70_000:]))
        fresh = BM25()
        fresh.add_texts(first + second, TextList(texts))
    assert any(s.docs.dtype == np.uint16 and s.base >= 65_536 for s in grown._segs.segments) or mode == "on"
    for query in ("zz1", "zz0 a1", "a1 b3"):
        assert [(h.entry_id, h.score) for h in grown.search(query, 12)] == [
            (h.entry_id, h.score) for h in fresh.search(query, 12)
        ]
    assert grown.score_all("zz2") == fresh.score_all("zz2")
    assert sorted(grown.score_all("zz2")) == ["f2", "f5", "f8"]
    assert grown.explain("zz1", "f4").score == fresh.explain("zz1", "f4").score > 0


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
def test_the_kernels_widen_a_uint16_segment_of_the_numpy_path():
    """Entries indexed on the NumPy path (uint16 documents), then more with the kernels: the kernels search the
    first segment too (widened to int32 once), and every ranking equals an index built on the NumPy path alone."""
    texts = _many_texts(3_000)
    ids = [f"g{i:05d}" for i in range(3_000)]
    with accel_mode("off"):
        mixed = BM25()
        mixed.add_texts(ids[:2_000], TextList(texts[:2_000]))
        plain = BM25()
        plain.add_texts(ids, TextList(texts))
    assert mixed._segs.segments[0].docs.dtype == np.uint16
    with accel_mode("on"):
        mixed.add_texts(ids[2_000:], TextList(texts[2_000:]))
        for query in ("a1", "a2 b3", "b10 a6"):
            assert [(h.entry_id, h.score) for h in mixed.search(query, 15)] == [
                (h.entry_id, h.score) for h in plain.search(query, 15)
            ]
    assert mixed._accel is not None
    assert all(s.docs.dtype == np.int32 for s in mixed._segs.segments)


@pytest.mark.parametrize("hash_pair", [None, (0, 0)], ids=["hashed", "every-pair-colliding"])
def test_words_numbered_in_earlier_chunks_keep_their_numbers(hash_pair, monkeypatch):
    """The NumPy path in chunks of one or two texts: a word seen in an earlier chunk is not spelled again (the
    memo), new words are numbered in order of first occurrence, long words (past 16 characters, numbered per
    chunk) and hash collisions (every pair given one hash) fall back to the numbering: the index's vocabulary
    and postings equal one chunk's, term for term."""
    texts = [
        "alpha beta gamma",
        "beta alpha " + "x" * 17 + " delta",
        "gamma " + "x" * 17 + " " + "y" * 40 + " alpha",
        "epsilon beta",
        "delta delta zeta " + "y" * 40,
    ]
    ids = [f"t{i}" for i in range(len(texts))]
    if hash_pair is not None:
        monkeypatch.setattr(_analysis._Memo, "_M1", np.uint64(hash_pair[0]))
        monkeypatch.setattr(_analysis._Memo, "_M2", np.uint64(hash_pair[1]))
    with accel_mode("off"):
        whole = BM25()
        whole.add_texts(ids, TextList(texts))
        monkeypatch.setattr(_analysis, "_RUN_CHARS", 20)
        chunked = BM25()
        chunked.add_texts(ids, TextList(texts))
    assert len(chunked._segs.segments) == 1
    assert chunked._vocab.words() == whole._vocab.words() == list(dict.fromkeys(tokenize(" ".join(texts))))
    for name in ("terms", "ptr", "docs", "tfs"):
        assert np.array_equal(getattr(chunked._segs.segments[0], name), getattr(whole._segs.segments[0], name))
    spelled = []
    monkeypatch.setattr(_analysis, "_spelled", lambda *a: spelled.append(len(a[1])) or _SPELLED(*a))
    with accel_mode("off"):
        BM25().add_texts(ids, TextList(texts))
    once = len(set(tokenize(" ".join(texts)))) + 2  # each word once, the two long ones once per chunk holding it
    if hash_pair is None:
        assert sum(spelled) == once
    else:  # colliding pairs are spelled and numbered again, and the index is still exact (above)
        assert sum(spelled) > once


_SPELLED = _analysis._spelled


def _buffer_texts(texts: list[str]):
    from agentmemory.collection.columns import BufferTexts

    encoded = [t.encode("utf-8") for t in texts]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
    starts = ends - np.array([len(b) for b in encoded], dtype=np.int64)
    flags = np.array([t.isascii() for t in texts], dtype=bool)
    return BufferTexts(bytearray(b"".join(encoded)), starts, ends, flags)


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_buffer_texts_give_their_texts_alone_in_chunks_and_taken(size):
    """BufferTexts (a loader's texts in one UTF-8 buffer): each text by position, every text once through chunks of
    any size, a taken subset sharing the buffer, and an index over them equal to one over the strings."""
    texts = ["alpha beta", "", "café crème", "gamma", "δέλτα alpha", "beta beta"]
    source = _buffer_texts(texts)
    assert [source[i] for i in range(len(texts))] == texts
    assert source.nbytes == sum(len(t.encode()) for t in texts)
    got = []
    for chunk in source.chunks(size):
        got.extend(bytes(chunk.buf[s:e]).decode() for s, e in zip(chunk.starts.tolist(), chunk.ends.tolist()))
        assert chunk.ascii.tolist() == [t.isascii() for t in texts[chunk.first : chunk.first + len(chunk.starts)]]
    assert got == texts
    taken = source.take(np.array([0, 2, 5]))
    assert [taken[i] for i in range(3)] == [texts[0], texts[2], texts[5]]
    ids = [f"d{i}" for i in range(len(texts))]
    a, b = BM25(), BM25()
    a.add_texts(ids, source)
    b.add([MemoryEntry(i, t) for i, t in zip(ids, texts)])
    for query in ("alpha", "beta", "café", "δέλτα gamma"):
        assert a.search(query, 5) == b.search(query, 5)
    # spans with and without bytes between them in one run (rows 0, 1 touch; 3 and 5 lie apart): the same index
    rows = [0, 1, 3, 5]
    c, d = BM25(), BM25()
    c.add_texts([ids[r] for r in rows], source.take(np.array(rows)))
    d.add([MemoryEntry(ids[r], texts[r]) for r in rows])
    assert c._vocab.words() == d._vocab.words()
    for query in ("alpha beta", "gamma", "beta"):
        assert c.search(query, 5) == d.search(query, 5)
