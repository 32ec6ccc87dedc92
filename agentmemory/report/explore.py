"""The exploration notebook's helpers: corpus and tag statistics, provenance, the event log, one query in depth.

An :class:`Exploration` holds a :class:`~agentmemory.MemoryStore` over the
collection with the default retrievers (BM25, the tag scorer), a deterministic clock (starting
at the newest ``created_at``) and deterministic event ids, so the event log
it shows is the same on every run.
"""

from __future__ import annotations

import statistics
from collections import Counter
from datetime import datetime, timezone

import matplotlib
import matplotlib.style
import pandas as pd

from agentmemory.collection import Collection
from agentmemory.records import Hit, Query
from agentmemory.report.display import Markdown, Png, Table, plural, short
from agentmemory.report.figures import _RC, _caption, _figure, png_bytes
from agentmemory.report.params import ExploreSetup
from agentmemory.retrievers import BM25, TagScorer
from agentmemory.store.core import MemoryStore
from agentmemory.store.events import HashIds, SteppingClock
from agentmemory.tokenize import normalize_tag, tokenize

__all__ = [
    "Exploration",
    "bm25_terms",
    "corpus_stats",
    "event_log",
    "explained_entry",
    "provenance_table",
    "side_by_side",
    "tag_overlap",
    "tag_table",
    "scores_figure",
    "verdict",
]


def _spread(values: list[int]) -> str:
    if not values:
        return "-"
    return f"{min(values)} / {statistics.median(values):g} / {max(values)}"


def corpus_stats(collection: Collection) -> Table:
    """Counts and spreads (min / median / max) of the corpus, its tags and its judgments."""
    entries = collection.entries
    tokens = [tokenize(e.text) for e in entries]
    tags = [{normalize_tag(t) for t in e.tags} for e in entries]
    judged = collection.judged_queries
    stamps = sorted(e.created_at for e in entries if e.created_at is not None)
    sources = Counter(e.provenance.source for e in entries)
    rows = [
        ("entries", str(len(entries))),
        ("queries (judged)", f"{len(collection.queries)} ({len(judged)})"),
        ("relevant entries per judged query", _spread([len(collection.relevant(q.id)) for q in judged])),
        ("tokens per entry", _spread([len(t) for t in tokens])),
        ("distinct tokens", str(len({w for t in tokens for w in t}))),
        ("tags per entry", _spread([len(t) for t in tags])),
        ("distinct tags", str(len(set().union(*tags)) if tags else 0)),
        ("entries derived from others", str(sum(1 for e in entries if e.provenance.derived_from))),
        ("created", f"{stamps[0].isoformat()} .. {stamps[-1].isoformat()}" if stamps else "unknown"),
        ("sources", ", ".join(f"{s} {n}" for s, n in sorted(sources.items(), key=lambda x: (-x[1], x[0])))),
    ]
    return Table(pd.DataFrame(rows, columns=["statistic", "value"]), f"Collection {collection.name}")


def tag_table(collection: Collection) -> Table:
    """Every normalised tag: how many entries carry it and which, most frequent first."""
    carriers: dict[str, list[str]] = {}
    for entry in collection.entries:
        for tag in sorted({normalize_tag(t) for t in entry.tags if normalize_tag(t)}):
            carriers.setdefault(tag, []).append(entry.id)
    rows = sorted(carriers.items(), key=lambda item: (-len(item[1]), item[0]))
    frame = pd.DataFrame(
        [(tag, str(len(ids)), ", ".join(ids)) for tag, ids in rows], columns=["tag", "entries", "entry ids"]
    )
    return Table(frame, "Tags by number of entries")


class Exploration:
    """A store over ``setup.collection`` with the default retrievers (BM25 and the tag scorer), and the user's query."""

    def __init__(self, setup: ExploreSetup) -> None:
        c = setup.collection
        stamps = [e.created_at for e in c.entries if e.created_at is not None]
        start = max(stamps) if stamps else datetime(1970, 1, 1, tzinfo=timezone.utc)
        self.setup = setup
        self.collection = c
        self.store = MemoryStore(clock=SteppingClock(start), ids=HashIds(f"{c.digest}:explore"))
        self.store.add(c.entries)
        self.query = Query(id="", text=setup.query, tags=setup.query_tags)
        self.hits: dict[str, list[Hit]] = {}

    def search(self) -> dict[str, list[Hit]]:
        """Each retriever's top k for the query (recorded in the log), in the store's order (BM25 first)."""
        if not self.hits:
            for name in self.store.retriever_names:
                self.hits[name] = self.store.search(self.query, self.setup.k, retriever=name)
        return self.hits

    def label(self, name: str) -> str:
        """The display label of the store's retriever ``name``."""
        return next(s.label for s in self.store.retriever_specs if s.key == name)


def provenance_table(exploration: Exploration) -> Table:
    """Each entry: when it was created, where it came from, what it was derived from (transitively)."""
    rows = []
    for entry in exploration.collection.entries:
        p = entry.provenance
        lineage = [e.id for e in exploration.store.lineage(entry.id)]
        rows.append(
            {
                "entry": entry.id,
                "created_at": entry.created_at.isoformat() if entry.created_at else "unknown",
                "source": p.source,
                "actor": p.actor or "-",
                "ref": p.ref or "-",
                "derived from": ", ".join(p.derived_from) or "-",
                "lineage": ", ".join(lineage) or "-",
                "text": short(entry.text, 50),
            }
        )
    return Table(pd.DataFrame(rows), "Provenance of each entry")


def event_log(exploration: Exploration, *, max_ids: int = 6) -> Table:
    """The store's event log, oldest first (entry id lists longer than ``max_ids`` are cut, with a count)."""
    rows = []
    for event in exploration.store.log:
        ids = list(event.entry_ids)
        shown = ", ".join(ids[:max_ids]) + (f", ... ({len(ids)} in all)" if len(ids) > max_ids else "")
        rows.append(
            {
                "event_id": event.event_id,
                "type": event.type,
                "timestamp": event.timestamp.isoformat(),
                "entry_ids": shown,
                "query": event.query_id or (f'"{short(event.query_text, 40)}"' if event.query_text else "-"),
                "retriever": event.retriever or "-",
            }
        )
    return Table(
        pd.DataFrame(rows),
        "Event log of this exploration (ids and timestamps are derived from the collection, not the clock)",
    )


def side_by_side(exploration: Exploration) -> Table:
    """Rank by rank, each retriever's hit for the query: id, score and a short text."""
    hits = exploration.search()
    c = exploration.collection
    depth = max((len(h) for h in hits.values()), default=0)
    rows = []
    for i in range(depth):
        row: dict[str, str] = {"rank": str(i + 1)}
        for name, found in hits.items():
            label = exploration.label(name)
            if i < len(found):
                hit = found[i]
                row[label] = f"{hit.entry_id} ({hit.score:.2f}) {short(c.entry(hit.entry_id).text, 45)}"
            else:
                row[label] = "-"
        rows.append(row)
    labels = [exploration.label(name) for name in hits]
    frame = pd.DataFrame(rows, columns=["rank", *labels])
    k = exploration.setup.k
    caption = f'Top {k} for "{exploration.query.text}" (id, score, text)'
    short_of_k = [f"{exploration.label(n)} {len(found)}" for n, found in hits.items() if len(found) < k]
    if short_of_k:
        caption += (
            f"; fewer than {k} rows where a retriever found fewer entries with a score above 0 ("
            + ", ".join(short_of_k)
            + "): entries scoring 0 are never returned"
        )
    return Table(frame, caption)


def explained_entry(exploration: Exploration) -> str | None:
    """The entry to explain: the ``explain_entry`` parameter, else BM25's first hit, else the tag scorer's."""
    if exploration.setup.explain_entry is not None:
        return exploration.setup.explain_entry
    hits = exploration.search()
    for name in ("bm25", "tags"):
        if hits.get(name):
            return hits[name][0].entry_id
    return None


def bm25_terms(exploration: Exploration, entry_id: str | None) -> Table:
    """BM25's score of ``entry_id`` for the query, term by term (:meth:`agentmemory.BM25.explain`)."""
    if entry_id is None:
        return Table(pd.DataFrame(), "No entry to explain: neither retriever returned anything.")
    bm25: BM25 = exploration.store.retriever("bm25")  # type: ignore[assignment]
    parts = bm25.explain(exploration.query, entry_id)
    frame = pd.DataFrame(
        [
            {
                "term": p.term,
                "in query": str(p.qtf),
                "in entry": str(p.tf),
                "entries with it": str(p.df),
                "idf": format(p.idf, ".4f"),
                "contribution": format(p.contribution, ".4f"),
            }
            for p in parts
        ]
    )
    total = sum(p.contribution for p in parts)
    entry = exploration.collection.entry(entry_id)
    return Table(
        frame,
        f'BM25 for {entry_id} ("{short(entry.text, 50)}"): score {total:.4f}; '
        f"entry length {parts[0].dl if parts else 0} tokens, average {parts[0].avgdl if parts else 0:.2f}",
    )


def tag_overlap(exploration: Exploration, entry_id: str | None) -> Markdown:
    """The tag scorer's view of ``entry_id``: query tags (given or derived), entry tags, shared (:meth:`agentmemory.TagScorer.explain`)."""
    if entry_id is None:
        return Markdown("No entry to explain: neither retriever returned anything.")
    tags: TagScorer = exploration.store.retriever("tags")  # type: ignore[assignment]
    overlap = tags.explain(exploration.query, entry_id)
    origin = "derived from the query text" if overlap.derived else "given as a parameter"
    return Markdown(
        "\n".join(
            [
                f"- **Query tags** ({origin}): {', '.join(overlap.query_tags) or 'none'}",
                f"- **Tags of {entry_id}:** {', '.join(overlap.entry_tags) or 'none'}",
                f"- **Shared:** {', '.join(overlap.shared) or 'none'}, so the tag score is {overlap.score}",
            ]
        )
    )


def verdict(exploration: Exploration) -> Markdown:
    """The paragraph the exploration opens with: the query, each retriever's first hit (its score and text) and
    how many entries it found, and how many of their top k the retrievers share."""
    hits = exploration.search()
    c = exploration.collection
    k = exploration.setup.k
    text = [f'**Verdict.** For "{exploration.query.text}" (top {k} of {plural(len(c.entries), "entry", "entries")}):']
    parts = []
    for name, found in hits.items():
        label = exploration.label(name)
        if not found:
            parts.append(f"{label} finds no entry with a score above 0")
            continue
        top = found[0]
        parts.append(
            f'{label}\'s first hit is **{top.entry_id}** (score {top.score:.2f}: "{short(c.entry(top.entry_id).text, 60)}"), '
            f"{plural(len(found), 'hit', 'hits')} in all"
        )
    text.append("; ".join(parts) + ".")
    tops = [{h.entry_id for h in found} for found in hits.values()]
    if len(tops) == 2:
        shared = sorted(tops[0] & tops[1])
        text.append(
            f"They share {len(shared)} of their top {k}"
            + (f" ({', '.join(shared)})." if shared else ".")
            + " Their scores are on different scales, so compare ranks, not scores."
        )
    return Markdown(" ".join(text))


def scores_figure(exploration: Exploration, *, number: int) -> Png:
    """Figure ``number``: each retriever's top-k scores as bars, a panel per retriever (scores are on different
    scales), each bar labelled with its entry id; the side-by-side table holds the numbers."""
    hits = exploration.search()
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        fig = _figure(9, 0.9 + 0.3 * max((len(f) for f in hits.values()), default=1))
        axes = fig.subplots(1, len(hits), squeeze=False)[0]
        for i, (ax, (name, found)) in enumerate(zip(axes, hits.items())):
            ax.barh(range(len(found)), [h.score for h in found], color=f"C{i}")
            ax.set_yticks(range(len(found)), [f"{rank}. {h.entry_id}" for rank, h in enumerate(found, start=1)])
            ax.set_ylim(max(len(found), 1) - 0.5, -0.5)
            ax.set_title(f"{exploration.label(name)}: score of each hit")
            ax.grid(axis="x", color="0.9")
        data = png_bytes(fig)
    caption = _caption(
        number, f"each retriever's top {exploration.setup.k} for the query, by score (its numbers: the table below)"
    )
    return Png(data, caption)
